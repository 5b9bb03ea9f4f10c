"""``lineage stats``: print what a store holds, counted by node kind and edge type."""

from __future__ import annotations

import sys
from pathlib import Path

from lineage_cli.errors import LineageError
from lineage_cli.store.reader import open_store
from lineage_cli.store.stats import store_stats


def run_stats(path: str | Path, verify: bool) -> int:
    try:
        store = open_store(path)
        if verify:
            store.verify()
        stats = store_stats(store)
    except LineageError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    print(f"store   {stats.path} ({stats.bytes:,} bytes)")
    print(f"nodes   {stats.nodes:,}")
    for kind, count in stats.nodes_by_kind.items():
        print(f"  {kind:<16}{count:>10,}")
    print(f"edges   {stats.edges:,}")
    for kind, count in stats.edges_by_type.items():
        print(f"  {kind:<16}{count:>10,}")
    if verify:
        print("checksum ok")
    return 0
