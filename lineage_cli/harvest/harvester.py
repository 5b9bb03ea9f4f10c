"""One script's lineage, and how statements become nodes and edges of the ``Graph``.

Reads a script's dialect (``--dialect`` or a ``-- dialect: NAME`` comment at the top of
the file), parses statement by statement and analyses each at table level and, given a
schema catalog, at column level.  A statement that fails becomes an ``Issue`` with file
and line; the analysis goes on with everything else.  ``analyze_template`` renders a
template first and maps the names, lines and messages back to it.  ``batch`` runs this over
many files.
"""

from __future__ import annotations

import os
import pickle
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from sqlglot import exp

from lineage_cli.harvest.columns import ColumnEdge, column_lineage
from lineage_cli.harvest.params import default_name, is_parameterized
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.split import parse_script
from lineage_cli.harvest.statements import Context, StatementLineage, analyze_statement
from lineage_cli.harvest.templates import Rendered, render
from lineage_cli.model import EdgeType, Graph, Issue, NodeKind, Provenance, Subtype
from lineage_cli.profiles import load_profile

if TYPE_CHECKING:
    from lineage_cli.store.arrays import GraphArrays

_DIALECT_DIRECTIVE = re.compile(r"^\s*--\s*dialect\s*:\s*([A-Za-z0-9_]+)\s*$", re.MULTILINE)
_UNRESOLVED_COLUMN = re.compile(r"^cannot resolve column (\S+?)(?:: ambiguous)?$")
_SUBTYPE_BITS = {subtype.name: subtype.bit for subtype in Subtype}  # a column edge names its subtype


class WriteLike(Protocol):
    target: str
    sources: list[str]
    is_view: bool


# A ColumnEdge's fields: source, target, kind, subtype.  Cached records keep plain tuples, quicker to unpickle.
ColumnTuple = tuple[str, str, str, str]


class StatementLike(Protocol):
    """A statement's lineage, with or without its syntax tree (``StatementLineage`` or a cached record)."""

    line: int
    type: str

    @property
    def columns(self) -> Sequence[ColumnTuple]: ...

    @property
    def writes(self) -> Sequence[WriteLike]: ...


@dataclass(slots=True, eq=False)  # its graph may still be pickled: fields do not say whether two harvests agree
class Harvest:
    """What a harvest found: the graph, counts and issues."""

    files: int = 0
    statements: int = 0  # every statement parsed, lineage or not
    lineage_statements: int = 0
    issues: list[Issue] = field(default_factory=list)
    seconds: float = 0.0
    cache_hits: int = 0
    statement_types: Counter[str] = field(default_factory=Counter)
    defaults: dict[str, str] = field(default_factory=dict)  # parameterized dataset -> the real one it defaults to
    modules: dict[str, dict[str, object]] = field(default_factory=dict)  # module node -> manifest facts (rows, ...)
    # The finished graph as the store's arrays, when a harvest with a cache made them for its memo (``cache.py``):
    # the writer takes them as they are.
    arrays: GraphArrays | None = None
    # A recalled harvest's graph, pickled: unpickled only by a caller that asks for ``graph``.
    pickled_graph: bytes | None = field(default=None, repr=False)
    _graph: Graph | None = field(default=None, init=False, repr=False)

    @property
    def graph(self) -> Graph:
        if self._graph is None:
            self._graph = pickle.loads(self.pickled_graph) if self.pickled_graph is not None else Graph()
            self.pickled_graph = None
        return self._graph

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.level == "error"]


def sql_files(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Every ``*.sql`` file under ``paths`` (files given by name are taken whatever their suffix)."""
    found: list[str] = []
    for raw in paths:
        path = str(Path(raw))  # "./sql/" as "sql", the spelling of the paths below it
        if os.path.isdir(path):
            found.extend(_sql_under(path))
        elif os.path.isfile(path):
            found.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")
    return list(dict.fromkeys(found))


def _sql_under(directory: str) -> Iterator[str]:
    """The ``*.sql`` files below ``directory`` in the order of their path parts, as sorted ``Path.rglob`` finds
    them (symlinked directories are not entered), at a tenth of its cost: no ``Path`` per file."""
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda entry: os.path.normcase(entry.name))
    except PermissionError:
        return
    for entry in entries:
        path = entry.name if directory == os.curdir else entry.path  # "x.sql" in ".", as Path(".") / "x.sql"
        if entry.is_dir(follow_symlinks=False):
            yield from _sql_under(path)
        elif os.path.normcase(entry.name).endswith(".sql") and entry.is_file():
            yield path


def harvest_text(
    sql: str,
    file: str,
    into: Harvest,
    dialect: str | None = None,
    default_schema: str | None = None,
    catalog: SchemaCatalog | None = None,
) -> None:
    """Add the lineage of every statement in ``sql`` (from ``file``) to ``into``."""
    script = analyze_script(sql, file, dialect, default_schema, catalog)
    add_script(into, script.statements, script.issues, file, script.lineage)


def add_script(
    into: Harvest, statements: int, issues: list[Issue], file: str, lineage: Iterable[StatementLike]
) -> list[str]:
    """Count one analysed script and add its statements to the harvest's graph; returns its transformations."""
    into.files += 1
    into.statements += statements
    into.issues.extend(issues)
    made: list[str] = []
    for statement in lineage:
        made.extend(add_statement(into.graph, file, statement.line, statement))
        into.lineage_statements += 1
        into.statement_types[statement.type] += 1
    return made


@dataclass(slots=True)
class ScriptAnalysis:
    """The lineage of one script: what ``harvest`` stores and ``lineage parse`` prints."""

    lineage: list[StatementLineage] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    statements: int = 0
    defaults: dict[str, str] = field(default_factory=dict)  # parameterized dataset -> the real one it defaults to


def analyze_script(
    sql: str,
    file: str,
    dialect: str | None = None,
    default_schema: str | None = None,
    catalog: SchemaCatalog | None = None,
) -> ScriptAnalysis:
    """Parse and analyse every statement of ``sql``; problems become issues, never exceptions.

    With a ``catalog`` each statement also gets its column edges, and the catalog learns
    the tables the script creates (DDL, CTAS, views) for the statements after them.
    """
    profile = load_profile(file_dialect(sql) or dialect)
    ctx = Context(profile, default_schema=default_schema)
    script = ScriptAnalysis()
    for parsed in parse_script(sql, profile.sqlglot_dialect):
        script.statements += 1
        if parsed.error is not None:
            script.issues.append(Issue(file, parsed.error_line or parsed.line, parsed.error, parsed.error_col))
        elif parsed.expression is not None:
            _analyze_one(parsed.expression, parsed.line, file, ctx, script, catalog)
    return script


def analyze_template(
    sql: str,
    file: str,
    dialect: str | None = None,
    default_schema: str | None = None,
    catalog: SchemaCatalog | None = None,
    *,
    variables: Mapping[str, object] | None = None,
    defaults: Mapping[str, str] | None = None,
    relations: Mapping[str, str] | None = None,
) -> ScriptAnalysis:
    """``analyze_script`` over a template: rendered first (``templates.render``), then its names,
    lines and messages mapped back to the template.

    A placeholder without a value stays in the names it is part of; with a default (``defaults``)
    the analysis also says which real dataset each such name points to.

    >>> script = analyze_template("INSERT INTO ${db}.t SELECT s.a FROM #src#.s s WHERE s.b > ${low}",
    ...                           "x.sql", "hive", variables={"db": "dwh"}, defaults={"src": "stg"})
    >>> [(s.targets, s.sources) for s in script.lineage], script.defaults
    ([(['dwh.t'], ['#src#.s'])], {'#src#.s': 'stg.s'})
    """
    rendered = render(sql, variables, relations)
    script = analyze_script(rendered.text, file, dialect, default_schema, catalog)
    fold = load_profile(file_dialect(sql) or dialect).fold
    _map_back(script, rendered, defaults or {}, fold)
    script.issues[:0] = [Issue(file, line, message, level="warning") for line, message in rendered.warnings]
    return script


def _map_back(
    script: ScriptAnalysis, rendered: Rendered, defaults: Mapping[str, str], fold: Callable[[str], str]
) -> None:
    """Source lines for rendered ones, placeholders for their tokens; edges from value placeholders dropped."""
    placeholders, restore = rendered.placeholders, rendered.placeholders.restore
    for statement in script.lineage:
        statement.line = rendered.source_line(statement.line)
        if not placeholders.texts:
            continue
        for name in _dataset_names(statement):
            real = default_name(name, placeholders, defaults, fold) if defaults else None
            if real is not None:
                script.defaults[restore(name)] = real
        for write in statement.writes:
            write.target, write.sources = restore(write.target), [restore(source) for source in write.sources]
        statement.columns = sorted(
            ColumnEdge(restore(e.source), restore(e.target), e.kind, e.subtype)
            for e in statement.columns
            if not placeholders.is_value(e.source)
        )
    script.issues = [
        Issue(i.file, rendered.source_line(i.line), restore(i.message), i.col, i.level)
        for i in script.issues
        if not _is_value_warning(i, rendered)
    ]


def _dataset_names(statement: StatementLineage) -> set[str]:
    names = {w.target for w in statement.writes} | {s for w in statement.writes for s in w.sources}
    names |= {_table_of(e.source) for e in statement.columns} | {_table_of(e.target) for e in statement.columns}
    return {name for name in names if name != "?"}


def _is_value_warning(issue: Issue, rendered: Rendered) -> bool:
    """``cannot resolve column ${min_amount}``: a value placeholder, not a column."""
    match = _UNRESOLVED_COLUMN.match(issue.message)
    return match is not None and rendered.placeholders.is_value(match.group(1))


def _analyze_one(
    expression: exp.Expression,
    line: int,
    file: str,
    ctx: Context,
    script: ScriptAnalysis,
    catalog: SchemaCatalog | None = None,
) -> None:
    try:
        lineage = analyze_statement(expression, ctx)
    except Exception as error:  # noqa: BLE001 - one odd statement must not end the harvest
        script.issues.append(Issue(file, line, f"cannot analyse statement: {type(error).__name__}: {error}"))
        return
    if lineage is not None:
        lineage.line = line
        script.lineage.append(lineage)
    if catalog is not None:
        _analyze_columns(expression, lineage, line, file, ctx, script, catalog)


def _analyze_columns(
    expression: exp.Expression,
    lineage: StatementLineage | None,
    line: int,
    file: str,
    ctx: Context,
    script: ScriptAnalysis,
    catalog: SchemaCatalog,
) -> None:
    """Column edges of one statement; a failure here costs its column edges, never its table edges."""
    try:
        if lineage is not None:
            lineage.columns, warnings = column_lineage(lineage, ctx, catalog)
            script.issues.extend(Issue(file, line, message, level="warning") for message in warnings)
        catalog.observe(expression, lineage, ctx)
    except Exception as error:  # noqa: BLE001 - as above
        script.issues.append(Issue(file, line, f"cannot analyse columns: {type(error).__name__}: {error}"))


def add_statement(graph: Graph, file: str, line: int, lineage: StatementLike) -> list[str]:
    """One transformation node per written target: ``dataset -> transformation -> dataset``,
    and the column edges into that target, each marked with the transformation.  Returns the
    transformation nodes."""
    made = []
    for write in lineage.writes:
        transformation = graph.add_transformation(_free_name(graph, f"{file}:{line}"), Provenance(file, line))
        made.append(transformation)
        add_dataset(graph, write.target, NodeKind.VIEW if write.is_view else NodeKind.TABLE)
        graph.add_edge(transformation, write.target, EdgeType.WRITE)
        for source in write.sources:
            add_dataset(graph, source)
            graph.add_edge(source, transformation, EdgeType.READ)
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


def _add_column_edges(graph: Graph, edges: Iterable[ColumnTuple], table: str, transformation: str) -> None:
    """The column edges into ``table`` (into its columns, or into the table for a predicate), each marked with the
    ``transformation``.  A harvest's hottest loop: column nodes are mostly known already, so the test for that is
    inlined, and subtypes' bits are looked up in a dict."""
    kinds, add_edge = graph.kinds, graph.add_edge
    for source, target, kind, subtype in edges:
        if target != table and _table_of(target) != table:
            continue
        if kinds.get(source) is not NodeKind.COLUMN:
            _column_node(graph, source)
        if kind == "projection":
            if kinds.get(target) is not NodeKind.COLUMN:
                _column_node(graph, target)
            add_edge(source, target, EdgeType.PROJECTION, _SUBTYPE_BITS[subtype], transformation)
            add_edge(transformation, target, EdgeType.COLUMN_WRITE, 0, transformation)
        else:
            add_edge(source, target, EdgeType.PREDICATE, _SUBTYPE_BITS[subtype], transformation)


def _column_node(graph: Graph, name: str) -> str:
    """A column node inside its table (``?.col``, an unresolved column, has no table)."""
    if graph.kinds.get(name) is NodeKind.COLUMN:
        return name  # its table and containment edge came with it
    table = _table_of(name)
    if table == "?" or table == name:
        return graph.add_node(name, NodeKind.COLUMN)
    add_dataset(graph, table)
    graph.add_edge(table, name, EdgeType.CONTAINS)
    return graph.add_node(name, NodeKind.COLUMN, container=table)


def _table_of(column: str) -> str:
    return column.rsplit(".", 1)[0]


def _free_name(graph: Graph, name: str) -> str:
    """``file:line``, or ``file:line#n`` when the line already holds a transformation."""
    if name not in graph.kinds:
        return name
    suffix = 2
    while f"{name}#{suffix}" in graph.kinds:
        suffix += 1
    return f"{name}#{suffix}"


def file_dialect(sql: str) -> str | None:
    """The dialect named by a ``-- dialect: NAME`` comment in the file's leading comments."""
    head = []
    for text in sql.splitlines():
        if text.strip() and not text.lstrip().startswith("--"):
            break
        head.append(text)
    match = _DIALECT_DIRECTIVE.search("\n".join(head))
    return match.group(1).lower() if match else None


def display_path(path: str | os.PathLike[str]) -> str:
    """Paths are shown relative to the working directory when they are under it.

    String work, not ``relpath``: a plan shows every file of a warehouse, and ``relpath`` costs ten times more.
    """
    absolute, here = os.path.abspath(path), os.getcwd()
    inside = os.path.join(here, "")
    if absolute.startswith(inside):
        absolute = absolute[len(inside) :]
    elif absolute == here:
        absolute = "."
    return absolute.replace(os.sep, "/")
