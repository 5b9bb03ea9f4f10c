"""Table-level lineage of one parsed statement: what it writes and what it reads.

One handler per statement kind, in an explicit registry (``HANDLERS``); statements
without lineage (SET, DROP, ANALYZE, plain SELECT ...) have no handler and yield
nothing.  ``USE db`` changes the default schema of the statements after it, so the
analysis carries a small mutable ``Context`` through a script.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp

from lineage_cli.profiles import DialectProfile

if TYPE_CHECKING:
    from lineage_cli.harvest.columns import ColumnEdge


@dataclass(slots=True)
class Write:
    """One target of a statement and the datasets that flow into it."""

    target: str
    sources: list[str]
    is_view: bool = False
    target_node: exp.Table | None = None  # the AST node, for column analysis
    query: exp.Expression | None = None  # the expression producing the rows, when there is one


@dataclass(slots=True)
class StatementLineage:
    type: str  # insert, ctas, view, alter_view, select_into, merge, update, delete, multi_insert, replace
    writes: list[Write]
    expression: exp.Expression
    line: int = 0  # set by the script analysis: the line of the statement's first token
    columns: list[ColumnEdge] = field(default_factory=list)  # filled when column lineage is asked for

    @property
    def targets(self) -> list[str]:
        return sorted({w.target for w in self.writes})

    @property
    def sources(self) -> list[str]:
        return sorted({s for w in self.writes for s in w.sources})


@dataclass(slots=True)
class Context:
    """What a script's earlier statements tell the later ones."""

    profile: DialectProfile
    default_schema: str | None = None
    cte_names: set[str] = field(default_factory=set)
    # the statement under analysis and its Table nodes, gathered in the same walk as its CTE names
    statement: exp.Expression | None = None
    statement_tables: list[exp.Table] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.default_schema is None:
            self.default_schema = self.profile.default_schema

    def fold(self, identifier: exp.Expression | None) -> str:
        if isinstance(identifier, exp.Identifier):
            return self.profile.fold(identifier.this, identifier.quoted)
        return self.profile.fold(identifier.name) if identifier is not None else ""

    def table_name(self, table: exp.Table) -> str:
        """``[catalog.]schema.table``, folded, the default schema filled in.

        >>> from lineage_cli.profiles import load_profile
        >>> ctx = Context(load_profile("hive"), default_schema="ods")
        >>> ctx.table_name(sqlglot.parse_one("SELECT * FROM `Customer_Clean`", read="hive").find(exp.Table))
        'ods.customer_clean'
        """
        name = self.fold(table.args.get("this"))
        schema = self.fold(table.args.get("db")) or self.default_schema
        catalog = self.fold(table.args.get("catalog"))
        return ".".join(part for part in (catalog, schema, name) if part)


def analyze_statement(expression: exp.Expression, ctx: Context) -> StatementLineage | None:
    """Table-level lineage of ``expression``, or None when it has none.

    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("postgres"))
    >>> sql = "WITH c AS (SELECT * FROM stg.a) INSERT INTO dwh.t SELECT * FROM c JOIN stg.b USING (id)"
    >>> lineage = analyze_statement(sqlglot.parse_one(sql, read="postgres"), ctx)
    >>> (lineage.type, lineage.targets, lineage.sources)
    ('insert', ['dwh.t'], ['stg.a', 'stg.b'])
    """
    _survey(expression, ctx)
    handler = HANDLERS.get(type(expression))
    return handler(expression, ctx) if handler else None


def _survey(expression: exp.Expression, ctx: Context) -> None:
    """One walk of the statement for what every handler needs: its CTE names and its Table nodes."""
    tables, ctes = [], set()
    for node in expression.walk():
        if isinstance(node, exp.Table):
            tables.append(node)
        elif isinstance(node, exp.CTE):
            ctes.add(ctx.profile.fold(node.alias_or_name))
    ctx.statement, ctx.statement_tables, ctx.cte_names = expression, tables, ctes


def _use(statement: exp.Use, ctx: Context) -> None:
    if statement.this is not None:
        ctx.default_schema = ctx.fold(statement.this.args.get("this")) or ctx.default_schema


def _insert(statement: exp.Insert, ctx: Context) -> StatementLineage | None:
    target = _table_of(statement.this)
    if target is None:  # INSERT OVERWRITE DIRECTORY and friends write no dataset
        return None
    write = _write(statement, target, ctx, query=statement.expression)
    return StatementLineage("insert", [write], statement)


def _multi_insert(statement: exp.MultitableInserts, ctx: Context) -> StatementLineage | None:
    shared = _read_tables(statement.args.get("source"), ctx, skip=())
    writes = []
    for branch in statement.expressions:
        insert = branch.this if isinstance(branch, exp.ConditionalInsert) else branch  # Oracle INSERT ALL
        target = _table_of(insert.this)
        if target is not None:
            write = _write(insert, target, ctx, query=insert.expression)
            write.sources = sorted(set(write.sources) | set(shared))
            writes.append(write)
    return StatementLineage("multi_insert", writes, statement) if writes else None


def _create(statement: exp.Create, ctx: Context) -> StatementLineage | None:
    query = statement.expression
    target = _table_of(statement.this)
    if not isinstance(query, exp.Query) or target is None:
        return None  # plain DDL: no data flows
    is_view = (statement.kind or "").upper() == "VIEW"
    write = _write(statement, target, ctx, query=query, is_view=is_view)
    return StatementLineage("view" if is_view else "ctas", [write], statement)


def _alter(statement: exp.Alter, ctx: Context) -> StatementLineage | None:
    query = next((a for a in statement.args.get("actions") or () if isinstance(a, exp.Query)), None)
    target = _table_of(statement.this)
    if (statement.args.get("kind") or "").upper() != "VIEW" or query is None or target is None:
        return None
    write = _write(statement, target, ctx, query=query, is_view=True)
    return StatementLineage("alter_view", [write], statement)


def _select(statement: exp.Select, ctx: Context) -> StatementLineage | None:
    into = statement.args.get("into")
    target = _table_of(into.this) if isinstance(into, exp.Into) else None
    if target is None:
        return None  # a plain query reads but writes nothing
    write = _write(statement, target, ctx, query=statement)
    return StatementLineage("select_into", [write], statement)


def _merge(statement: exp.Merge, ctx: Context) -> StatementLineage | None:
    return _self_reading(statement, _table_of(statement.this), ctx, "merge")


def _update(statement: exp.Update, ctx: Context) -> StatementLineage | None:
    return _self_reading(statement, _resolve_alias(statement, _table_of(statement.this)), ctx, "update")


def _delete(statement: exp.Delete, ctx: Context) -> StatementLineage | None:
    named = statement.args.get("tables") or [statement.this]  # T-SQL: DELETE alias FROM table alias ...
    return _self_reading(statement, _resolve_alias(statement, _table_of(named[0])), ctx, "delete")


def _self_reading(
    statement: exp.Expression, target: exp.Table | None, ctx: Context, kind: str
) -> StatementLineage | None:
    """MERGE, UPDATE and DELETE decide which target rows change by reading the target itself."""
    if target is None:
        return None
    write = _write(statement, target, ctx, query=None)
    write.sources = sorted(set(write.sources) | {write.target})
    return StatementLineage(kind, [write], statement)


def _command(statement: exp.Command, ctx: Context) -> StatementLineage | None:
    """sqlglot keeps ``REPLACE INTO`` as an opaque command; it is an INSERT that may overwrite rows."""
    body = statement.expression.name if isinstance(statement.expression, exp.Literal) else ""
    if statement.name.upper() != "REPLACE" or not body.upper().startswith("INTO"):
        return None
    insert = sqlglot.parse_one(f"INSERT {body}", read=ctx.profile.sqlglot_dialect)
    lineage = _insert(insert, ctx) if isinstance(insert, exp.Insert) else None
    if lineage is not None:
        lineage.type = "replace"
    return lineage


def _write(
    statement: exp.Expression,
    target: exp.Table,
    ctx: Context,
    query: exp.Expression | None,
    is_view: bool = False,
) -> Write:
    sources = _read_tables(statement, ctx, skip=_target_nodes(statement))
    return Write(ctx.table_name(target), sources, is_view, target, query)


def _target_nodes(statement: exp.Expression) -> tuple[exp.Table, ...]:
    """Every Table node of ``statement`` that is written, not read."""
    if isinstance(statement, exp.MultitableInserts):
        return tuple(t for b in statement.expressions if (t := _table_of(b.this)) is not None)
    if isinstance(statement, exp.Select):
        into = statement.args.get("into")
        return (_table_of(into.this),) if isinstance(into, exp.Into) else ()
    if isinstance(statement, exp.Delete):
        return tuple(t for t in (_table_of(x) for x in statement.args.get("tables") or ()) if t) or (
            (_table_of(statement.this),) if _table_of(statement.this) else ()
        )
    target = _table_of(statement.this)
    return (target,) if target is not None else ()


def _read_tables(node: exp.Expression | None, ctx: Context, skip: Iterable[exp.Table]) -> list[str]:
    if node is None:
        return []
    skipped = {id(t) for t in skip}
    tables = ctx.statement_tables if node is ctx.statement else node.find_all(exp.Table)
    names = {ctx.table_name(table) for table in tables if id(table) not in skipped and _is_dataset(table, ctx)}
    return sorted(names)


def _is_dataset(table: exp.Table, ctx: Context) -> bool:
    """A Table node names a dataset unless it is a function call or a CTE reference."""
    if not isinstance(table.args.get("this"), exp.Identifier):
        return False  # table functions: generate_series(...), TABLE(FLATTEN(...)), UNNEST ...
    return bool(table.args.get("db")) or ctx.fold(table.args.get("this")) not in ctx.cte_names


def _table_of(node: exp.Expression | None) -> exp.Table | None:
    if isinstance(node, exp.Schema):  # INSERT INTO t (a, b) / CREATE VIEW v (a, b)
        node = node.this
    return node if isinstance(node, exp.Table) and isinstance(node.args.get("this"), exp.Identifier) else None


def _resolve_alias(statement: exp.Expression, target: exp.Table | None) -> exp.Table | None:
    """``UPDATE t SET ... FROM dbo.orders t``: the written name may be an alias of a read table."""
    if target is None or target.args.get("db"):
        return target
    alias = target.name.lower()
    for table in statement.find_all(exp.Table):
        if table is not target and table.alias.lower() == alias:
            return table
    return target


Handler = Callable[[exp.Expression, Context], StatementLineage | None]

HANDLERS: dict[type[exp.Expression], Handler] = {
    exp.Use: _use,  # type: ignore[dict-item]
    exp.Insert: _insert,  # type: ignore[dict-item]
    exp.MultitableInserts: _multi_insert,  # type: ignore[dict-item]
    exp.Create: _create,  # type: ignore[dict-item]
    exp.Alter: _alter,  # type: ignore[dict-item]
    exp.Select: _select,  # type: ignore[dict-item]
    exp.Merge: _merge,  # type: ignore[dict-item]
    exp.Update: _update,  # type: ignore[dict-item]
    exp.Delete: _delete,  # type: ignore[dict-item]
    exp.Command: _command,  # type: ignore[dict-item]
}
