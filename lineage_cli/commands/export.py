"""``lineage export``: the store, or one node's lineage, as OpenLineage events, to a file or standard output."""

from __future__ import annotations

import sys
from typing import NamedTuple

from lineage_cli.emit.openlineage import event_time, to_events, to_json_lines
from lineage_cli.model import NodeKind
from lineage_cli.store.layout import StoreError
from lineage_cli.store.reader import Store, open_store


class Scope(NamedTuple):
    """Export only the statements that the lineage of ``name`` walks through."""

    name: str
    direction: str  # up, down or both
    walkplan: str | None
    args: frozenset[str]


def run_export(
    store_path: str,
    output: str | None,
    namespace: str,
    job_namespace: str,
    time_text: str | None,
    scope: Scope | None = None,
) -> int:
    from lineage_cli.walk.errors import QueryError
    from lineage_cli.walk.walkplan import PlanError

    try:
        time = event_time(time_text)
        store = open_store(store_path)
        only = scoped_statements(store, scope) if scope else None
        events = to_events(store, namespace, job_namespace, time, only)
    except (LookupError, QueryError) as error:  # an unknown or ambiguous NAME
        print(f"error: {error}", file=sys.stderr)
        return 1
    except (ValueError, StoreError, PlanError) as error:
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


def scoped_statements(store: Store, scope: Scope) -> set[int]:
    """The transformation nodes in the lineage of ``scope.name`` under its walkplan.

    A plan that folds statements away (``tables``) still picks them: the statements whose
    reads and writes both lie in the walked lineage.
    """
    from lineage_cli.walk.query import lineage

    directions = ("up", "down") if scope.direction == "both" else (scope.direction,)
    plan = scope.walkplan or "transformations"
    names: set[str] = set()
    for direction in directions:
        names |= {node.name for node in lineage(store, scope.name, direction, plan=plan, args=scope.args).nodes}
    ids = {store.find(name) for name in names} - {None}
    shown = {n for n in ids if store.kind(n) is NodeKind.TRANSFORMATION}
    return shown or _statements_between(store, ids)


def _statements_between(store: Store, datasets: set[int]) -> set[int]:
    from lineage_cli.model import EdgeType
    from lineage_cli.store.layout import unpack_attributes

    offsets, nodes, attributes = store.array("fwd_offsets"), store.array("fwd_node"), store.array("fwd_attr")
    chosen = set()
    for dataset in datasets:
        for index in range(offsets[dataset], offsets[dataset + 1]):
            step = nodes[index]
            if unpack_attributes(attributes[index])[0] == EdgeType.READ and _writes_into(store, step, datasets):
                chosen.add(step)
    return chosen


def _writes_into(store: Store, step: int, datasets: set[int]) -> bool:
    from lineage_cli.model import EdgeType
    from lineage_cli.store.layout import unpack_attributes

    offsets, nodes, attributes = store.array("fwd_offsets"), store.array("fwd_node"), store.array("fwd_attr")
    return any(
        nodes[i] in datasets and unpack_attributes(attributes[i])[0] == EdgeType.WRITE
        for i in range(offsets[step], offsets[step + 1])
    )
