"""The answer of a lineage query, independent of how it is printed.

Emitters consume ``LineageResult``; the walker produces it.  Edges always point in
data-flow direction (source -> target), whatever the direction of the walk.

A result can be built from ``ResultNode``/``ResultEdge`` lists or from ``ResultColumns`` (parallel lists
of names, kinds, depths...).  The walker builds columns: a 100,000-edge answer written as JSON then never
makes its 100,000 record objects; ``nodes`` and ``edges`` build them on first access, and from then on
they are the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

# A node's place in the whole lineage graph (data nodes only): nothing flows into a source, nothing out
# of a terminal, neither into nor out of an isolated node.
from lineage_cli.store.roles import ROLES

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

__all__ = ["ROLES", "LineageResult", "ResultColumns", "ResultEdge", "ResultNode"]


# NamedTuples, not frozen dataclasses: as immutable, and a tenth of the class-creation cost (a frozen
# dataclass costs its module 1.5 ms of start-up, paid by every `lineage up`).
class ResultNode(NamedTuple):
    name: str
    kind: str  # NodeKind label: table, view, column, transformation, ...
    depth: int = 0  # hops from the nearest queried node
    file: str | None = None  # provenance of transformation nodes
    line: int | None = None
    role: str | None = None  # one of ROLES, or None
    # a column's SQL expressions: (the statement writing it, the expression it writes it with), in file order
    expressions: tuple[tuple[str, str], ...] = ()

    @property
    def expression_note(self) -> str | None:
        """The column's expression as a picture shows it (GraphML data, DOT tooltip): the one statement's, or a
        line per statement, ``statement: expression``, when several write it."""
        if len(self.expressions) < 2:
            return self.expressions[0][1] if self.expressions else None
        return "\n".join(f"{statement}: {text}" for statement, text in self.expressions)


class ResultEdge(NamedTuple):
    source: str
    target: str
    type: str  # EdgeType label; "flow" for dataset -> dataset edges folded over a transformation
    subtypes: tuple[str, ...] = ()


class ResultColumns:
    """A result's nodes and edges as parallel lists, in the result's order.

    ``files``/``lines`` are empty when no node has provenance, ``roles`` when no node has a role,
    ``expressions`` when no node has an expression.  (A
    plain class: a dataclass costs its module over a millisecond of start-up, and ``lineage up`` is a
    start-up-bound command.)
    """

    __slots__ = (
        "names", "kinds", "depths", "files", "lines", "roles", "expressions", "sources", "targets", "types", "subtypes"
    )  # fmt: skip

    def __init__(
        self,
        names: list[str] | None = None,
        kinds: list[str] | None = None,
        depths: list[int] | None = None,
        files: list[str | None] | None = None,
        lines: list[int | None] | None = None,
    ) -> None:
        self.names: list[str] = names or []
        self.kinds: list[str] = kinds or []
        self.depths: list[int] = depths or []
        self.files: list[str | None] = files or []
        self.lines: list[int | None] = lines or []
        self.roles: list[str | None] = []
        self.expressions: list[tuple[tuple[str, str], ...]] = []
        self.sources: list[str] = []
        self.targets: list[str] = []
        self.types: list[str] = []
        self.subtypes: list[tuple[str, ...]] = []

    @classmethod
    def of(cls, nodes: list[ResultNode], edges: list[ResultEdge]) -> ResultColumns:
        columns = cls()
        columns.set_nodes(nodes)
        columns.set_edges(edges)
        return columns

    def set_nodes(self, nodes: list[ResultNode]) -> None:
        self.names = [n.name for n in nodes]
        self.kinds = [n.kind for n in nodes]
        self.depths = [n.depth for n in nodes]
        has_file = any(n.file is not None for n in nodes)
        self.files = [n.file for n in nodes] if has_file else []
        self.lines = [n.line for n in nodes] if has_file else []
        self.roles = [n.role for n in nodes] if any(n.role for n in nodes) else []
        self.expressions = [n.expressions for n in nodes] if any(n.expressions for n in nodes) else []

    def set_edges(self, edges: list[ResultEdge]) -> None:
        self.sources = [e.source for e in edges]
        self.targets = [e.target for e in edges]
        self.types = [e.type for e in edges]
        self.subtypes = [e.subtypes for e in edges]

    def node_objects(self) -> list[ResultNode]:
        if not self.files and not self.roles and not self.expressions:
            return list(map(ResultNode, self.names, self.kinds, self.depths))
        absent = [None] * len(self.names)
        files, lines, roles = self.files or absent, self.lines or absent, self.roles or absent
        expressions = self.expressions or [()] * len(self.names)
        return list(map(ResultNode, self.names, self.kinds, self.depths, files, lines, roles, expressions))

    def edge_objects(self) -> list[ResultEdge]:
        return list(map(ResultEdge, self.sources, self.targets, self.types, self.subtypes))


class LineageResult:
    """The nodes and edges of one query, with the walk's direction and the queried nodes."""

    __slots__ = ("direction", "roots", "_nodes", "_edges", "_columns")

    def __init__(
        self,
        direction: str,  # "up", "down", "path" or "io"
        roots: list[str],
        nodes: list[ResultNode] | None = None,
        edges: list[ResultEdge] | None = None,
        columns: ResultColumns | None = None,
    ) -> None:
        self.direction = direction
        self.roots = roots
        self._columns = columns if columns is not None else ResultColumns()
        self._nodes = nodes if nodes is not None or columns is not None else []
        self._edges = edges if edges is not None or columns is not None else []

    @property
    def nodes(self) -> list[ResultNode]:
        if self._nodes is None:
            self._nodes = self._columns.node_objects()
        return self._nodes

    @nodes.setter
    def nodes(self, nodes: list[ResultNode]) -> None:
        self._nodes = nodes

    @property
    def edges(self) -> list[ResultEdge]:
        if self._edges is None:
            self._edges = self._columns.edge_objects()
        return self._edges

    @edges.setter
    def edges(self, edges: list[ResultEdge]) -> None:
        self._edges = edges

    @property
    def node_count(self) -> int:
        return len(self._columns.names) if self._nodes is None else len(self._nodes)

    @property
    def edge_count(self) -> int:
        return len(self._columns.sources) if self._edges is None else len(self._edges)

    def columns(self) -> ResultColumns:
        """The answer as columns; made from ``nodes``/``edges`` once those exist (they may have been edited)."""
        columns = self._columns
        if self._nodes is None and self._edges is None:
            return columns
        fresh = ResultColumns()
        if self._nodes is None:
            fresh.names, fresh.kinds, fresh.depths = columns.names, columns.kinds, columns.depths
            fresh.files, fresh.lines, fresh.roles = columns.files, columns.lines, columns.roles
            fresh.expressions = columns.expressions
        else:
            fresh.set_nodes(self._nodes)
        if self._edges is None:
            fresh.sources, fresh.targets = columns.sources, columns.targets
            fresh.types, fresh.subtypes = columns.types, columns.subtypes
        else:
            fresh.set_edges(self._edges)
        return fresh

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

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LineageResult):
            return NotImplemented
        mine = (self.direction, self.roots, self.nodes, self.edges)
        return mine == (other.direction, other.roots, other.nodes, other.edges)

    __hash__ = None  # type: ignore[assignment] - mutable, like the dataclass it was

    def __repr__(self) -> str:
        return (
            f"LineageResult(direction={self.direction!r}, roots={self.roots!r}, "
            f"{self.node_count} nodes, {self.edge_count} edges)"
        )

    # A notebook's display hooks: the interactive viewer, and the Graphviz picture where ``dot`` is present
    # (None otherwise, so that the notebook shows the viewer alone).  Both draw with the emitters, a stage above
    # this one that walk must not import, not even inside a function (tests/test_layers.py); they are looked up
    # by name instead, so that only a notebook showing a result loads them, never the query path.
    def _repr_html_(self) -> str:
        return _notebook("result_html")(self)

    def _repr_svg_(self) -> str | None:
        return _notebook("result_svg")(self)


def _notebook(function: str) -> Callable[[LineageResult], Any]:
    """A function of ``lineage_cli.emit.notebook``, imported by name (see ``LineageResult._repr_html_``)."""
    from importlib import import_module

    return getattr(import_module("lineage_cli.emit.notebook"), function)


def _node_dict(node: ResultNode) -> dict[str, object]:
    out: dict[str, object] = {"name": node.name, "kind": node.kind, "depth": node.depth}
    if node.role is not None:
        out["role"] = node.role
    if node.file is not None:
        out["file"] = node.file
        out["line"] = node.line
    if node.expressions:  # the first statement's; all of them when several write the column
        out["expression"] = node.expressions[0][1]
        if len(node.expressions) > 1:
            out["expressions"] = [{"statement": made, "expression": text} for made, text in node.expressions]
    return out


def _edge_dict(edge: ResultEdge) -> dict[str, object]:
    out: dict[str, object] = {"source": edge.source, "target": edge.target, "type": edge.type}
    if edge.subtypes:
        out["subtypes"] = list(edge.subtypes)
        if "APPROXIMATE" in edge.subtypes:  # only statements that did not parse give it: tables read from tokens
            out["approximate"] = True
    return out
