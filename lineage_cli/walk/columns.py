"""Column lineage walks: projection edges, and predicate edges tied to their statement.

A predicate edge points from a column to the *table* a statement writes, and gates every
column that same statement writes (``transformation -COLUMN_WRITE-> column`` edges say
which).  So upstream of ``t.c`` the predicates that count are those of the statements
writing ``t.c``; downstream of a filtered column, the columns affected are those its
statement writes.  The walk is plain Python: column answers are small, and each step
needs the statement of an edge, which the vectorized table walk does not carry.
"""

from __future__ import annotations

from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store.layout import TYPE_MASK, pack_attributes
from lineage_cli.store.reader import Store
from lineage_cli.walk.traverse import Walk

CONTAINS = pack_attributes(EdgeType.CONTAINS, 0)


class _Edges:
    """Typed access to one store's adjacency (slices of memoryviews)."""

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


def column_walk(store: Store, starts: list[int], direction: str, predicates: bool, max_hops: int | None) -> Walk:
    """Walk column lineage ``direction`` ("up" or "down") from the columns ``starts``."""
    edges = _Edges(store)
    walk = Walk(nodes=sorted(set(starts)), hops=[0] * len(set(starts)))
    seen = set(walk.nodes)
    frontier, hop = list(walk.nodes), 0
    step = _step_up if direction == "up" else _step_down
    while frontier and (max_hops is None or hop < max_hops):
        hop += 1
        reached: list[int] = []
        for column in frontier:
            for neighbour in step(edges, column, predicates, walk):
                if neighbour not in seen:
                    seen.add(neighbour)
                    reached.append(neighbour)
        reached.sort()
        walk.nodes.extend(reached)
        walk.hops.extend([hop] * len(reached))
        frontier = [n for n in reached if store.kind(n) is NodeKind.COLUMN]
    return walk


def _record(walk: Walk, source: int, target: int, attributes: int) -> None:
    walk.sources.append(source)
    walk.targets.append(target)
    walk.attributes.append(attributes)


def _step_up(edges: _Edges, column: int, predicates: bool, walk: Walk) -> list[int]:
    reached = []
    for source, attributes in edges.into(column, EdgeType.PROJECTION):
        _record(walk, source, column, attributes)
        reached.append(source)
    table = edges.store.container(column)
    if not predicates or table is None:
        return reached
    writers = {m for m, _ in edges.into(column, EdgeType.COLUMN_WRITE)}
    for source, attributes in edges.into(table, EdgeType.PREDICATE):
        statements = edges.statements_of(source, table, EdgeType.PREDICATE)
        if not writers or statements & writers or -1 in statements:
            _record(walk, source, table, attributes)
            _record(walk, table, column, CONTAINS)
            reached.extend((table, source))
    return reached


def _step_down(edges: _Edges, column: int, predicates: bool, walk: Walk) -> list[int]:
    reached = []
    for target, attributes, _ in edges.out(column, EdgeType.PROJECTION):
        _record(walk, column, target, attributes)
        reached.append(target)
    if not predicates:
        return reached
    for table, attributes, statement in edges.out(column, EdgeType.PREDICATE):
        _record(walk, column, table, attributes)
        reached.append(table)
        for gated in _gated_columns(edges, table, statement):
            _record(walk, table, gated, CONTAINS)
            reached.append(gated)
    return reached


def _gated_columns(edges: _Edges, table: int, statement: int) -> list[int]:
    """The columns of ``table`` that ``statement`` writes; all its columns when no statement is known."""
    if statement < 0:
        return [n for n, _, _ in edges.out(table, EdgeType.CONTAINS)]
    return [n for n, _, _ in edges.out(statement, EdgeType.COLUMN_WRITE) if edges.store.container(n) == table]
