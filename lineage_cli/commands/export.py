"""``lineage export``: the store, or one node's lineage, as OpenLineage events, to a file or standard output."""

from __future__ import annotations

import sys

from lineage_cli.emit.openlineage import event_time, to_events, to_json_lines
from lineage_cli.errors import LineageError
from lineage_cli.store.reader import open_store
from lineage_cli.walk.scope import Scope, scoped_statements


def run_export(
    store_path: str,
    output: str | None,
    namespace: str,
    job_namespace: str,
    time_text: str | None,
    scope: Scope | None = None,
) -> int:
    try:
        time = event_time(time_text)
        store = open_store(store_path)
        only = scoped_statements(store, scope) if scope else None
        events = to_events(store, namespace, job_namespace, time, only)
    except LineageError as error:  # a bad --event-time or store (2), an unknown or ambiguous NAME (1)
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    text = to_json_lines(events)
    if not output:
        sys.stdout.write(text)
        return 0
    with open(output, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    print(f"{len(events)} OpenLineage events -> {output}", file=sys.stderr)
    return 0
