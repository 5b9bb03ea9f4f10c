"""``lineage merge``: one store from a harvest's shard files (``harvest/shards.py``), as the harvest writes it.

The shards' plan carries the store's settings (dialect, default schema, namespaces); the counts, modules and
graph are the merge's.  Issues are reported as the harvest reported them.  Shards that cannot be read, or that
are not one harvest's (a plan twice or missing, a unit twice or missing), are an error (exit 2) that leaves
the store as it was.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from lineage_cli.commands.harvest import report_issues, store_harvest, store_meta
from lineage_cli.errors import LineageError
from lineage_cli.harvest.shards import merge, read_shard
from lineage_cli.store.lock import store_lock
from lineage_cli.terminal import plain_console


def run_merge(paths: tuple[str, ...], store: str, *, wait: bool = True) -> int:
    console = plain_console(stderr=True)
    started = time.perf_counter()
    try:
        shards = [read_shard(Path(path)) for path in paths]
        plan = next((shard.plan for shard in shards if shard.plan is not None), None)
        result = merge(shards)
        settings = plan.meta if plan is not None else {}
        if not {"dialect", "default_schema"} <= settings.keys():
            print("lineage: error: the shards' plan names no dialect: shards of a harvest's --shards", file=sys.stderr)
            return 2
        with store_lock(store, wait):
            stored = store_harvest(result, store, store_meta(result, settings))
    except LineageError as error:
        print(f"lineage: error: {error}", file=sys.stderr)
        return error.exit_code
    report_issues(console, result.issues, quiet=False)
    print(
        f"merged {len(shards)} shards: {result.files} files, {result.statements} statements "
        f"({result.lineage_statements} with lineage) in {time.perf_counter() - started:.2f}s"
    )
    print(
        f"{stored.nodes} nodes, {stored.edges} edges, {len(result.errors)} errors,"
        f" {len(result.issues) - len(result.errors)} warnings -> {stored.path} ({stored.bytes} bytes)"
    )
    return 0
