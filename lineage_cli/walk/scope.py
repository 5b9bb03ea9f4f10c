"""The transformations a node's lineage walks through: what ``lineage export NAME`` exports."""

from __future__ import annotations

from typing import NamedTuple

from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store.layout import unpack_attributes
from lineage_cli.store.reader import Store
from lineage_cli.walk.query import lineage


class Scope(NamedTuple):
    """Export only the statements that the lineage of ``name`` walks through."""

    name: str
    direction: str  # up, down or both
    walkplan: str | None
    args: frozenset[str]


def scoped_statements(store: Store, scope: Scope) -> set[int]:
    """The transformation nodes in the lineage of ``scope.name`` under its walkplan.

    A plan that folds statements away (``tables``) still picks them: the statements whose
    reads and writes both lie in the walked lineage.
    """
    directions = ("up", "down") if scope.direction == "both" else (scope.direction,)
    plan = scope.walkplan or "transformations"
    names: set[str] = set()
    for direction in directions:
        names |= {node.name for node in lineage(store, scope.name, direction, plan=plan, args=scope.args).nodes}
    ids = {store.find(name) for name in names} - {None}
    shown = {n for n in ids if store.kind(n) is NodeKind.TRANSFORMATION}
    return shown or _statements_between(store, ids)


def _statements_between(store: Store, datasets: set[int]) -> set[int]:
    offsets, nodes, attributes = store.array("fwd_offsets"), store.array("fwd_node"), store.array("fwd_attr")
    chosen = set()
    for dataset in datasets:
        for index in range(offsets[dataset], offsets[dataset + 1]):
            step = nodes[index]
            if unpack_attributes(attributes[index])[0] == EdgeType.READ and _writes_into(store, step, datasets):
                chosen.add(step)
    return chosen


def _writes_into(store: Store, step: int, datasets: set[int]) -> bool:
    offsets, nodes, attributes = store.array("fwd_offsets"), store.array("fwd_node"), store.array("fwd_attr")
    return any(
        nodes[i] in datasets and unpack_attributes(attributes[i])[0] == EdgeType.WRITE
        for i in range(offsets[step], offsets[step + 1])
    )
