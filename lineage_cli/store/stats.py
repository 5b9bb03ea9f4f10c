"""``lineage stats``: what a store holds, counted by node kind and edge type."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store.layout import TYPE_MASK, StoreError
from lineage_cli.store.reader import Store, open_store


def store_stats(store: Store) -> dict[str, object]:
    kinds = np.bincount(store.numpy_array("node_kind"), minlength=max(NodeKind) + 1)
    types = np.bincount(store.numpy_array("fwd_attr") & TYPE_MASK, minlength=max(EdgeType) + 1)
    return {
        "path": str(store.path),
        "bytes": store.header.file_size,
        "nodes": store.node_count,
        "edges": store.edge_count,
        "nodes_by_kind": {k.label: int(kinds[k]) for k in NodeKind if kinds[k]},
        "edges_by_type": {t.label: int(types[t]) for t in EdgeType if types[t]},
        "meta": store.meta,
    }


def run_stats(path: str | Path, verify: bool) -> int:
    try:
        store = open_store(path)
        if verify:
            store.verify()
        stats = store_stats(store)
    except StoreError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"store   {stats['path']} ({stats['bytes']:,} bytes)")
    print(f"nodes   {stats['nodes']:,}")
    for kind, count in stats["nodes_by_kind"].items():  # type: ignore[attr-defined]
        print(f"  {kind:<16}{count:>10,}")
    print(f"edges   {stats['edges']:,}")
    for kind, count in stats["edges_by_type"].items():  # type: ignore[attr-defined]
        print(f"  {kind:<16}{count:>10,}")
    if verify:
        print("checksum ok")
    return 0
