"""Edges of one type at a time, with the statement that made each: for walks that step node by node.

The frontier walk (``traverse.py``) reads whole slices under a type mask; the column predicate ties,
the general plan walk and ``lineage io`` ask narrower questions ("the predicate edges into this table,
and their statements"), in plain Python over the store's memoryviews.
"""

from __future__ import annotations

from lineage_cli.store.layout import TYPE_MASK
from lineage_cli.store.reader import Store


class TypedEdges:
    """One store's adjacency by edge type (slices of memoryviews), with each forward edge's statement."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.fwd = (store.array("fwd_offsets"), store.array("fwd_node"), store.array("fwd_attr"))
        self.bwd = (store.array("bwd_offsets"), store.array("bwd_node"), store.array("bwd_attr"))
        self.statements = store.array("fwd_statement")

    def out(self, node: int, edge_type: int) -> list[tuple[int, int, int]]:
        """(neighbour, attributes, statement) of ``node``'s out-edges of one type."""
        offsets, nodes, attrs = self.fwd
        return [
            (nodes[i], attrs[i], self.statements[i])
            for i in range(offsets[node], offsets[node + 1])
            if attrs[i] & TYPE_MASK == edge_type
        ]

    def into(self, node: int, edge_type: int) -> list[tuple[int, int]]:
        """(neighbour, attributes) of ``node``'s in-edges of one type."""
        offsets, nodes, attrs = self.bwd
        return [
            (nodes[i], attrs[i]) for i in range(offsets[node], offsets[node + 1]) if attrs[i] & TYPE_MASK == edge_type
        ]

    def statements_of(self, source: int, target: int, edge_type: int) -> set[int]:
        return {m for n, _, m in self.out(source, edge_type) if n == target}
