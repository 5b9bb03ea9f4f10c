"""One script's lineage, and how statements become nodes and edges of the ``Graph``.

Reads a script's dialect (``--dialect`` or a ``-- dialect: NAME`` comment at the top of
the file), parses statement by statement and analyses each at table level and, given a
schema catalog, at column level.  A statement that fails becomes an ``Issue`` with file
and line; the analysis goes on with everything else.  ``batch`` runs this over many files.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sqlglot import exp

from lineage_cli.harvest.columns import ColumnEdge, column_lineage
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.split import parse_script
from lineage_cli.harvest.statements import Context, StatementLineage, analyze_statement
from lineage_cli.model import EdgeType, Graph, Issue, NodeKind, Provenance, Subtype
from lineage_cli.profiles import load_profile

_DIALECT_DIRECTIVE = re.compile(r"^\s*--\s*dialect\s*:\s*([A-Za-z0-9_]+)\s*$", re.MULTILINE)


class WriteLike(Protocol):
    target: str
    sources: list[str]
    is_view: bool


class StatementLike(Protocol):
    """A statement's lineage, with or without its syntax tree (``StatementLineage`` or a cached record)."""

    line: int
    type: str
    columns: list[ColumnEdge]

    @property
    def writes(self) -> Sequence[WriteLike]: ...


@dataclass(slots=True)
class Harvest:
    graph: Graph = field(default_factory=Graph)
    files: int = 0
    statements: int = 0  # every statement parsed, lineage or not
    lineage_statements: int = 0
    issues: list[Issue] = field(default_factory=list)
    seconds: float = 0.0
    cache_hits: int = 0
    statement_types: Counter[str] = field(default_factory=Counter)

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.level == "error"]


def sql_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Every ``*.sql`` file under ``paths`` (files given by name are taken whatever their suffix)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.sql") if p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")
    return list(dict.fromkeys(found))


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
) -> None:
    """Count one analysed script and add its statements to the harvest's graph."""
    into.files += 1
    into.statements += statements
    into.issues.extend(issues)
    for statement in lineage:
        add_statement(into.graph, file, statement.line, statement)
        into.lineage_statements += 1
        into.statement_types[statement.type] += 1


@dataclass(slots=True)
class ScriptAnalysis:
    """The lineage of one script: what ``harvest`` stores and ``lineage parse`` prints."""

    lineage: list[StatementLineage] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    statements: int = 0


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


def add_statement(graph: Graph, file: str, line: int, lineage: StatementLike) -> None:
    """One transformation node per written target: ``dataset -> transformation -> dataset``,
    and the column edges into that target, each marked with the transformation."""
    for write in lineage.writes:
        transformation = graph.add_transformation(_free_name(graph, f"{file}:{line}"), Provenance(file, line))
        graph.add_node(write.target, NodeKind.VIEW if write.is_view else NodeKind.TABLE)
        graph.add_edge(transformation, write.target, EdgeType.WRITE)
        for source in write.sources:
            graph.add_node(source, NodeKind.TABLE)
            graph.add_edge(source, transformation, EdgeType.READ)
        for edge in lineage.columns:
            if _table_of(edge.target) == write.target or edge.target == write.target:
                _add_column_edge(graph, edge, transformation)


def _add_column_edge(graph: Graph, edge: ColumnEdge, transformation: str) -> None:
    source = _column_node(graph, edge.source)
    if edge.kind == "projection":
        target = _column_node(graph, edge.target)
        graph.add_edge(source, target, EdgeType.PROJECTION, Subtype[edge.subtype].bit, transformation)
        graph.add_edge(transformation, target, EdgeType.COLUMN_WRITE, 0, transformation)
    else:
        graph.add_edge(source, edge.target, EdgeType.PREDICATE, Subtype[edge.subtype].bit, transformation)


def _column_node(graph: Graph, name: str) -> str:
    """A column node inside its table (``?.col``, an unresolved column, has no table)."""
    table = _table_of(name)
    if table == "?" or table == name:
        return graph.add_node(name, NodeKind.COLUMN)
    graph.add_node(table, NodeKind.TABLE)
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


def display_path(path: Path) -> str:
    """Paths are shown relative to the working directory when they are under it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()
