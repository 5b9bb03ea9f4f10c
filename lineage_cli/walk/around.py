"""The neighbourhood ``lineage view`` draws: the lineage up and down of the queried nodes in one answer, with what
the viewer needs to expand and collapse it.

The answer is the union of ``lineage up`` and ``lineage down`` under the same options (``merged``: direction
``both``; a node found both ways keeps its nearer depth).  To it come the containment the viewer opens and
closes (``with_containment``): each table or view of the answer with its columns (``contains`` edges; each
column with its SQL expressions, as an answer's columns have them) and the column edges between those columns
(and from them onto the answer's datasets: the predicates), and each column of the answer with its table.  The
viewer re-walks this graph when a node is clicked, so what it shows around any node is what the store holds
within the answer.  ``containers`` names the groups each node folds into.
"""

from __future__ import annotations

from collections.abc import Iterable

from lineage_cli.model import EdgeType, NodeKind, subtypes_from_flags
from lineage_cli.store.layout import TYPE_BITS
from lineage_cli.store.reader import Store
from lineage_cli.store.roles import node_roles
from lineage_cli.walk.edges import TypedEdges
from lineage_cli.walk.levels import Datamart, groups
from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode

COLUMN_EDGES = (int(EdgeType.PROJECTION), int(EdgeType.PREDICATE))
CONTAINS = int(EdgeType.CONTAINS)


def merged(direction: str, results: Iterable[LineageResult]) -> LineageResult:
    """One answer holding every node and edge of ``results``: a node's nearest depth, the roots in order."""
    nodes: dict[str, ResultNode] = {}
    edges: dict[ResultEdge, None] = {}
    roots: dict[str, None] = {}
    for result in results:
        roots.update(dict.fromkeys(result.roots))
        for node in result.nodes:
            known = nodes.get(node.name)
            if known is None or node.depth < known.depth:
                nodes[node.name] = node
        edges.update(dict.fromkeys(result.edges))
    return LineageResult(
        direction,
        list(roots),
        nodes=sorted(nodes.values()),
        edges=sorted(edges, key=lambda e: (e.source, e.target, e.type)),
    )


def with_containment(store: Store, result: LineageResult) -> LineageResult:
    """``result`` with the columns of its datasets, the tables of its columns, and the column edges among them."""
    ids = {node.name: store.find(node.name) for node in result.nodes}
    known = {name: node for name, node in ids.items() if node is not None}
    depth = {node.name: node.depth for node in result.nodes}
    typed = TypedEdges(store)
    added: dict[int, int] = {}  # store id -> depth of the node it was added for
    contains: set[tuple[int, int]] = set()
    for name, node in known.items():
        kind = store.kind(node)
        if kind.is_dataset:
            for column, _, _ in typed.out(node, CONTAINS):
                contains.add((node, column))
                added.setdefault(column, depth[name])
        elif kind is NodeKind.COLUMN and (table := store.container(node)) is not None:
            contains.add((table, node))
            added.setdefault(table, depth[name])
    members = set(known.values()) | set(added)
    new = sorted(set(added) - set(known.values()))
    expressions = store.expressions([n for n in new if store.kind(n) is NodeKind.COLUMN])
    nodes = list(result.nodes) + [
        ResultNode(store.name(n), store.kind(n).label, added[n], role=role, expressions=expressions.get(n, ()))
        for n, role in zip(new, node_roles(store, new), strict=True)
    ]
    edges = dict.fromkeys(result.edges)
    edges.update(dict.fromkeys(ResultEdge(store.name(a), store.name(b), "contains") for a, b in sorted(contains)))
    edges.update(dict.fromkeys(_column_edges(store, typed, members)))
    return LineageResult(result.direction, result.roots, nodes=sorted(nodes), edges=list(edges))


def _column_edges(store: Store, typed: TypedEdges, members: set[int]) -> list[ResultEdge]:
    """The projection and predicate edges out of the columns of ``members`` into ``members``, one per pair and type
    (the flags of every statement's edge merged)."""
    flags: dict[tuple[int, int, int], int] = {}
    for node in members:
        if store.kind(node) is not NodeKind.COLUMN:
            continue
        for edge_type in COLUMN_EDGES:
            for target, attributes, _ in typed.out(node, edge_type):
                if target in members:
                    key = (node, target, edge_type)
                    flags[key] = flags.get(key, 0) | attributes >> TYPE_BITS
    return [
        ResultEdge(store.name(a), store.name(b), EdgeType(t).label, tuple(subtypes_from_flags(f)))
        for (a, b, t), f in sorted(flags.items())
    ]


def containers(store: Store, result: LineageResult, datamarts: list[Datamart] | None) -> dict[str, dict[str, str]]:
    """Each node's groups the viewer folds it into, by kind: ``{"schema": "dwh"}`` for a table, ``{"workflow":
    "wf_sales"}`` for a statement of a flow, ``datamart`` too with a mapping.  Columns go with their table."""
    kinds = {node.name: node.kind for node in result.nodes}
    found: dict[str, dict[str, str]] = {}
    for group_by in ("schema", "workflow", *(("datamart",) if datamarts else ())):
        for name, chain in groups(store, result, group_by, datamarts).items():
            (outer, kind), *_ = chain
            if kind == group_by and kinds[name] != "column":
                found.setdefault(name, {})[group_by] = outer
    return found
