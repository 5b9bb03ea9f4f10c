"""Lineage queries: resolve what the user typed to start nodes, walk, shape the answer.

Table lineage walks ``dataset -> transformation -> dataset`` and, unless transformations
are asked for, folds each transformation into direct ``flow`` edges between the
datasets it reads and writes.  Column lineage walks projection edges, predicate edges
on request.
"""

from __future__ import annotations

import difflib
from collections import defaultdict

import numpy as np

from lineage_cli.model import EdgeType, NodeKind, subtypes_from_flags
from lineage_cli.store.reader import Store
from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode
from lineage_cli.walk.traverse import Walk, bfs

QUERYABLE = (NodeKind.TABLE, NodeKind.VIEW, NodeKind.COLUMN)
TABLE_FLOW = EdgeType.READ.bit | EdgeType.WRITE.bit


class NameNotFound(LookupError):
    """Nothing in the store matches a queried name; carries the closest known names."""

    def __init__(self, query: str, suggestions: list[str]) -> None:
        self.query, self.suggestions = query, suggestions
        hint = f"; closest: {', '.join(suggestions)}" if suggestions else ""
        super().__init__(f"no table, view or column named {query!r}{hint}")


class AmbiguousName(LookupError):
    def __init__(self, query: str, candidates: list[str]) -> None:
        self.query, self.candidates = query, candidates
        super().__init__(f"{query!r} is ambiguous: {', '.join(candidates[:10])}; qualify it or use a pattern")


def resolve(store: Store, query: str) -> list[int]:
    """Start node ids for ``query``: an exact name, a name without its schema, or a LIKE pattern."""
    wanted = query.strip().lower()
    if "%" in wanted:
        found = [n for n in store.like(wanted) if store.kind(n) in QUERYABLE]
        if not found:
            raise NameNotFound(query, _closest(store, wanted.replace("%", "")))
        return found
    default_schema = store.meta.get("default_schema")
    for candidate in (wanted, f"{default_schema}.{wanted}" if default_schema else None):
        node = store.find(candidate) if candidate else None
        if node is not None and store.kind(node) in QUERYABLE:
            return [node]
    suffix = [n for n in store.like(f"%.{_escape_like(wanted)}") if store.kind(n) in QUERYABLE]
    if len(suffix) == 1:
        return suffix
    if suffix:
        raise AmbiguousName(query, sorted(store.name(n) for n in suffix))
    raise NameNotFound(query, _closest(store, wanted))


def lineage(
    store: Store,
    name_or_pattern: str,
    direction: str,
    depth: int | None = None,
    show_transformations: bool = False,
    predicates: bool = False,
) -> LineageResult:
    """Everything ``direction`` ("up" or "down") of the named nodes, merged into one answer."""
    starts = resolve(store, name_or_pattern)
    column_query = all(store.kind(n) is NodeKind.COLUMN for n in starts)
    if column_query:
        mask = EdgeType.PROJECTION.bit | (EdgeType.PREDICATE.bit if predicates else 0)
        walk = bfs(store, starts, direction, mask, depth)
        return _result(store, walk, starts, direction, hop_scale=1)
    walk = bfs(store, starts, direction, TABLE_FLOW, None if depth is None else 2 * depth)
    if show_transformations:
        return _result(store, walk, starts, direction, hop_scale=1)
    return _result(store, _fold_transformations(store, walk), starts, direction, hop_scale=2)


def _fold_transformations(store: Store, walk: Walk) -> Walk:
    """Replace ``a -> t -> b`` by ``a -> b`` for every transformation ``t`` in the walk."""
    is_transformation = store.kinds[walk.nodes] == NodeKind.TRANSFORMATION
    inputs: dict[int, set[int]] = defaultdict(set)
    outputs: dict[int, set[int]] = defaultdict(set)
    for source, target in zip(walk.sources.tolist(), walk.targets.tolist(), strict=True):
        if store.kind(target) is NodeKind.TRANSFORMATION:
            inputs[target].add(source)
        else:
            outputs[source].add(target)
    pairs = sorted({(a, b) for t in inputs.keys() & outputs.keys() for a in inputs[t] for b in outputs[t]})
    sources = np.array([a for a, _ in pairs], dtype=np.int64)
    targets = np.array([b for _, b in pairs], dtype=np.int64)
    flow = np.zeros(len(pairs), dtype=np.uint8)
    return Walk(
        walk.nodes[~is_transformation],
        walk.hops[~is_transformation],
        sources,
        targets,
        flow,
        np.zeros(len(pairs), dtype=np.uint16),
    )


def _result(store: Store, walk: Walk, starts: list[int], direction: str, hop_scale: int) -> LineageResult:
    nodes = [_result_node(store, int(n), int(h) // hop_scale) for n, h in zip(walk.nodes, walk.hops, strict=True)]
    edges = {
        ResultEdge(
            store.name(int(s)),
            store.name(int(t)),
            EdgeType(int(k)).label if k else "flow",
            tuple(subtypes_from_flags(int(f))),
        )
        for s, t, k, f in zip(walk.sources, walk.targets, walk.types, walk.flags, strict=True)
    }
    return LineageResult(
        direction=direction,
        roots=sorted(store.name(n) for n in starts),
        nodes=sorted(nodes, key=lambda n: n.name),
        edges=sorted(edges, key=lambda e: (e.source, e.target, e.type)),
    )


def _result_node(store: Store, node: int, depth: int) -> ResultNode:
    provenance = store.provenance(node)
    file, line = provenance if provenance else (None, None)
    return ResultNode(store.name(node), store.kind(node).label, depth, file, line)


def _closest(store: Store, wanted: str) -> list[str]:
    names = [n for i, n in enumerate(store.names()) if store.kinds[i] in (k.value for k in QUERYABLE)]
    close = difflib.get_close_matches(wanted, names, n=5, cutoff=0.5)
    tail = [n for n in names if n.endswith(wanted.rsplit(".", 1)[-1])][:5]
    return list(dict.fromkeys(close + tail))[:5]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
