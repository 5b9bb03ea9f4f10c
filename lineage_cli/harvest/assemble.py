"""A harvest's result, and how analysed statements become nodes and edges of its ``Graph``.

``Harvest`` holds what a harvest found; the functions here add one analysed script, one statement,
one step's declared lineage, a dataset or the DEFAULT links to its graph.  They take statements
with or without their syntax trees (``StatementLike``), so assembling a graph from cached analyses
imports no parser.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from lineage_cli.harvest.templates.params import is_parameterized
from lineage_cli.model import EdgeType, Graph, Issue, NodeFlag, NodeKind, Provenance, Subtype

if TYPE_CHECKING:
    from lineage_cli.store.arrays import GraphArrays

_SUBTYPE_BITS = {subtype.name: subtype.bit for subtype in Subtype}  # a column edge names its subtype

# A ColumnEdge's fields: source, target, kind, subtype.  Cached records keep plain tuples.
ColumnTuple = tuple[str, str, str, str]


class WriteLike(Protocol):
    target: str
    sources: list[str]
    is_view: bool


class StatementLike(Protocol):
    """A statement's lineage, with or without its syntax tree (``StatementLineage`` or a cached record)."""

    line: int
    type: str
    approximate: bool  # read from the tokens of a statement that did not parse

    @property
    def columns(self) -> Sequence[ColumnTuple]: ...

    @property
    def target_columns(self) -> Sequence[str]: ...

    @property
    def expressions(self) -> Mapping[str, str]: ...  # target column -> the SQL expression it is written as

    @property
    def sql(self) -> str: ...  # the statement's text ("" when unknown)

    @property
    def dialect(self) -> str: ...  # the dialect profile it was read in

    @property
    def writes(self) -> Sequence[WriteLike]: ...


class StoredGraph(Protocol):
    """Where a recalled harvest's graph is kept (``cache.py``): read only when first asked for."""

    nodes: int
    edges: int

    def graph(self) -> Graph: ...

    def arrays(self) -> GraphArrays: ...


@dataclass(slots=True, eq=False)  # its graph may not be read yet: fields do not say whether two harvests agree
class Harvest:
    """What a harvest found: the graph, counts and issues."""

    files: int = 0
    statements: int = 0  # every statement parsed, lineage or not
    lineage_statements: int = 0
    approximate_statements: int = 0  # of those: statements that did not parse, their tables read from tokens
    issues: list[Issue] = field(default_factory=list)
    seconds: float = 0.0
    cache_hits: int = 0
    statement_types: Counter[str] = field(default_factory=Counter)
    defaults: dict[str, str] = field(default_factory=dict)  # parameterized dataset -> the real one it defaults to
    modules: dict[str, dict[str, object]] = field(default_factory=dict)  # module node -> manifest facts (rows, ...)
    key: str | None = None  # the digest of every input, when the harvest ran with a cache (``cache.py``)
    recalled: StoredGraph | None = field(default=None, repr=False)  # set when the cache recalled the harvest whole
    cache_errors: list[str] = field(default_factory=list)  # why the cache could not be written, when it could not
    _graph: Graph | None = field(default=None, init=False, repr=False)
    _arrays: GraphArrays | None = field(default=None, init=False, repr=False)

    @property
    def graph(self) -> Graph:
        if self._graph is None:
            self._graph = self._made_graph()
        return self._graph

    def _made_graph(self) -> Graph:
        if self._arrays is not None:
            from lineage_cli.store.arrays import to_graph  # numpy, which the arrays imported

            return to_graph(self._arrays)
        return self.recalled.graph() if self.recalled is not None else Graph()

    @property
    def arrays(self) -> GraphArrays | None:
        """The graph as the store's arrays, when a harvest with a cache made them: the writer takes them as
        they are."""
        if self._arrays is None and self.recalled is not None:
            self._arrays = self.recalled.arrays()
        return self._arrays

    @arrays.setter
    def arrays(self, arrays: GraphArrays) -> None:
        """The graph's arrays, which from now on are the harvest's graph: the graph of dicts they were made from is
        let go (a third of a large harvest's memory, when the store and the cache are still to write from them),
        and made again from them should anyone ask for it."""
        self._arrays, self._graph = arrays, None

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.level == "error"]


def add_script(
    into: Harvest, statements: int, issues: list[Issue], file: str, lineage: Iterable[StatementLike]
) -> list[str]:
    """Count one analysed script and add its statements to the harvest's graph; returns its transformations."""
    into.files += 1
    into.statements += statements
    into.issues.extend(issues)
    made: list[str] = []
    for statement in lineage:
        if not statement.writes:
            continue  # a query: it reads, but adds no lineage
        made.extend(add_statement(into.graph, file, statement.line, statement))
        into.lineage_statements += 1
        into.approximate_statements += statement.approximate
        into.statement_types[statement.type] += 1
    return made


def add_statement(graph: Graph, file: str, line: int, lineage: StatementLike) -> list[str]:
    """One transformation node per written target: ``dataset -> transformation -> dataset``,
    the target's columns it writes (a column with no source too: ``'k' AS k``) and the expression of each, the
    statement's SQL text and dialect, and the column edges into that target, each marked with the transformation
    (flagged APPROXIMATE for a statement that did not parse).  Returns the transformation nodes."""
    made = []
    flags = NodeFlag.APPROXIMATE.bit if lineage.approximate else 0
    for write in lineage.writes:
        name = _free_name(graph, f"{file}:{line}")
        transformation = graph.add_transformation(name, Provenance(file, line), flags)
        made.append(transformation)
        if lineage.sql:
            graph.sql[transformation] = (lineage.sql, lineage.dialect)
        add_dataset(graph, write.target, NodeKind.VIEW if write.is_view else NodeKind.TABLE)
        graph.add_edge(transformation, write.target, EdgeType.WRITE)
        for source in write.sources:
            add_dataset(graph, source)
            graph.add_edge(source, transformation, EdgeType.READ)
        _add_written_columns(graph, lineage.target_columns, write.target, transformation)
        _add_expressions(graph, lineage.expressions, write.target, transformation)
        _add_column_edges(graph, lineage.columns, write.target, transformation)
    return made


def add_declared(graph: Graph, provenance: Provenance, sources: Iterable[str], targets: Iterable[str]) -> list[str]:
    """Declared lineage of a step without parsed SQL: a transformation per target, edges flagged DECLARED."""
    made = []
    for target in targets:
        name = _free_name(graph, f"{provenance.file}:{provenance.line}")
        transformation = graph.add_transformation(name, provenance)
        made.append(transformation)
        graph.add_edge(transformation, add_dataset(graph, target), EdgeType.WRITE, Subtype.DECLARED.bit)
        for source in sources:
            graph.add_edge(add_dataset(graph, source), transformation, EdgeType.READ, Subtype.DECLARED.bit)
    return made


def add_dataset(graph: Graph, name: str, kind: NodeKind = NodeKind.TABLE) -> str:
    """A table or view node, or a parameterized one when its name keeps a placeholder."""
    if kind is NodeKind.TABLE and name in graph.kinds:
        return name  # known already: TABLE refines nothing, and the placeholder test is not free
    return graph.add_node(name, NodeKind.PARAMETERIZED if is_parameterized(name) else kind)


def link_defaults(graph: Graph, defaults: Mapping[str, str]) -> None:
    """DEFAULT edges from each parameterized dataset, and its columns, to the real ones its defaults name."""
    if not defaults:
        return
    for name, real in defaults.items():
        graph.add_edge(name, add_dataset(graph, real), EdgeType.DEFAULT)
    for column, table in list(graph.containers.items()):
        real = defaults.get(table)
        if real is not None and graph.kinds.get(column) is NodeKind.COLUMN:
            graph.add_edge(column, _column_node(graph, f"{real}.{column[len(table) + 1 :]}"), EdgeType.DEFAULT)


def table_of(column: str) -> str:
    """The table of a column name: all but its last part."""
    return column.rsplit(".", 1)[0]


def _add_column_edges(graph: Graph, edges: Iterable[ColumnTuple], table: str, transformation: str) -> None:
    """The column edges into ``table``'s columns (projections, and the CONDITIONAL / WINDOW predicates that shape
    a column) or into the table (every predicate), each marked with the ``transformation``.  A harvest's hottest
    loop: column nodes are mostly known already, so the test for that is inlined, and subtypes' bits are looked up
    in a dict."""
    kinds, add_edge = graph.kinds, graph.add_edge
    for source, target, kind, subtype in edges:
        if target != table and table_of(target) != table:
            continue
        if kinds.get(source) is not NodeKind.COLUMN:
            _column_node(graph, source)
        if target != table:  # into a column the transformation writes
            if kinds.get(target) is not NodeKind.COLUMN:
                _column_node(graph, target)
            add_edge(transformation, target, EdgeType.COLUMN_WRITE, 0, transformation)
        if kind == "projection":
            add_edge(source, target, EdgeType.PROJECTION, _SUBTYPE_BITS[subtype], transformation)
        else:
            add_edge(source, target, EdgeType.PREDICATE, _SUBTYPE_BITS[subtype], transformation)


def _add_written_columns(graph: Graph, columns: Iterable[str], table: str, transformation: str) -> None:
    """``table``'s columns among the statement's target columns, each in its table and written by the
    ``transformation``."""
    for column in columns:
        if table_of(column) == table:
            graph.add_edge(transformation, _column_node(graph, column), EdgeType.COLUMN_WRITE, 0, transformation)


def _add_expressions(graph: Graph, expressions: Mapping[str, str], table: str, transformation: str) -> None:
    """The expression each of ``table``'s columns is written with by the ``transformation``."""
    for column, text in expressions.items():
        if table_of(column) == table:
            graph.expressions[(transformation, column)] = text


def _column_node(graph: Graph, name: str) -> str:
    """A column node inside its table (``?.col``, an unresolved column, has no table)."""
    if graph.kinds.get(name) is NodeKind.COLUMN:
        return name  # its table and containment edge came with it
    table = table_of(name)
    if table == "?" or table == name:
        return graph.add_node(name, NodeKind.COLUMN)
    add_dataset(graph, table)
    graph.add_edge(table, name, EdgeType.CONTAINS)
    return graph.add_node(name, NodeKind.COLUMN, container=table)


def _free_name(graph: Graph, name: str) -> str:
    """``file:line``, or ``file:line#n`` when the line already holds a transformation."""
    if name not in graph.kinds:
        return name
    suffix = 2
    while f"{name}#{suffix}" in graph.kinds:
        suffix += 1
    return f"{name}#{suffix}"
