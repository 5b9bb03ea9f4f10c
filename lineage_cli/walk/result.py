"""The answer of a lineage query, independent of how it is printed.

Emitters consume ``LineageResult``; the walker produces it.  Edges always point in
data-flow direction (source -> target), whatever the direction of the walk.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ResultNode:
    name: str
    kind: str  # NodeKind label: table, view, column, transformation, ...
    depth: int = 0  # hops from the nearest queried node
    file: str | None = None  # provenance of transformation nodes
    line: int | None = None


@dataclass(frozen=True, slots=True)
class ResultEdge:
    source: str
    target: str
    type: str  # EdgeType label; "flow" for dataset -> dataset edges folded over a transformation
    subtypes: tuple[str, ...] = ()


@dataclass(slots=True)
class LineageResult:
    direction: str  # "up", "down" or "path"
    roots: list[str]
    nodes: list[ResultNode] = field(default_factory=list)
    edges: list[ResultEdge] = field(default_factory=list)

    def node(self, name: str) -> ResultNode | None:
        return next((n for n in self.nodes if n.name == name), None)

    def to_dict(self) -> dict[str, object]:
        """The JSON document of ``--format json``."""
        return {
            "direction": self.direction,
            "roots": list(self.roots),
            "nodes": [_node_dict(n) for n in self.nodes],
            "edges": [_edge_dict(e) for e in self.edges],
        }


def _node_dict(node: ResultNode) -> dict[str, object]:
    out: dict[str, object] = {"name": node.name, "kind": node.kind, "depth": node.depth}
    if node.file is not None:
        out["file"] = node.file
        out["line"] = node.line
    return out


def _edge_dict(edge: ResultEdge) -> dict[str, object]:
    out: dict[str, object] = {"source": edge.source, "target": edge.target, "type": edge.type}
    if edge.subtypes:
        out["subtypes"] = list(edge.subtypes)
    return out
