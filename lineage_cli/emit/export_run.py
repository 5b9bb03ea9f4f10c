"""``lineage export``: the whole store as OpenLineage events, to a file or standard output."""

from __future__ import annotations

import sys

from lineage_cli.emit.openlineage import event_time, to_events, to_json_lines
from lineage_cli.store.layout import StoreError
from lineage_cli.store.reader import open_store


def run_export(store_path: str, output: str | None, namespace: str, job_namespace: str, time_text: str | None) -> int:
    try:
        time = event_time(time_text)
        events = to_events(open_store(store_path), namespace, job_namespace, time)
    except (ValueError, StoreError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    text = to_json_lines(events)
    if not output:
        sys.stdout.write(text)
        return 0
    with open(output, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    print(f"{len(events)} OpenLineage events -> {output}", file=sys.stderr)
    return 0
