"""Data volume and update frequency behind an answer's edges, for the graph emitters' line styles.

A flow manifest's ``rows`` and ``frequency`` are stored per module in the store's meta JSON
(``modules``, keyed by module name), a query log's per statement (keyed by the transformation: its
runs, ``harvest/inputs/querylog/runs.py``).  An edge into or out of a statement takes its own facts or
its module's (the statement's container), an edge of a module (``--level module``) the module's own.
Edges between datasets hide the statement that moved the data, so they carry none.
"""

from __future__ import annotations

from lineage_cli.emit.picture import Volume
from lineage_cli.store.reader import Store
from lineage_cli.walk.result import LineageResult, ResultNode


def volumes(store: Store, result: LineageResult) -> dict[tuple[str, str], Volume]:
    """``(source, target)`` of each edge with manifest facts -> those facts."""
    facts = store.meta.get("modules") or {}
    if not facts:
        return {}
    modules = {
        node.name: node.name if node.name in facts else _module(store, node)
        for node in result.nodes
        if node.kind in ("transformation", "module")
    }
    found: dict[tuple[str, str], Volume] = {}
    for edge in result.edges:
        module = modules.get(edge.source) or modules.get(edge.target)
        volume = _volume(facts.get(module, {})) if module else None
        if volume is not None:
            found[(edge.source, edge.target)] = volume
    return found


def _module(store: Store, node: ResultNode) -> str | None:
    if node.kind == "module":
        return node.name
    found = store.find(node.name)
    container = None if found is None else store.container(found)
    return None if container is None else store.name(container)


def _volume(fact: dict[str, object]) -> Volume | None:
    rows, frequency = fact.get("rows"), fact.get("frequency")
    count = rows if isinstance(rows, int) and not isinstance(rows, bool) else None
    if count is None and not frequency:
        return None
    return Volume(count, str(frequency) if frequency else None)
