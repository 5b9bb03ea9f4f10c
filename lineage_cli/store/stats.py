"""What a store holds, counted by node kind and edge type (``lineage stats`` prints it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store.layout import TYPE_MASK
from lineage_cli.store.reader import Store


@dataclass(frozen=True)
class StoreStats:
    """A store's size and counts: nodes by kind and edges by type (labels with a count above zero)."""

    path: str
    bytes: int
    nodes: int
    edges: int
    nodes_by_kind: dict[str, int]
    edges_by_type: dict[str, int]
    meta: dict[str, Any]


def store_stats(store: Store) -> StoreStats:
    kinds = np.bincount(store.numpy_array("node_kind"), minlength=max(NodeKind) + 1)
    types = np.bincount(store.numpy_array("fwd_attr") & TYPE_MASK, minlength=max(EdgeType) + 1)
    return StoreStats(
        path=str(store.path),
        bytes=store.header.file_size,
        nodes=store.node_count,
        edges=store.edge_count,
        nodes_by_kind={k.label: int(kinds[k]) for k in NodeKind if kinds[k]},
        edges_by_type={t.label: int(types[t]) for t in EdgeType if types[t]},
        meta=store.meta,
    )
