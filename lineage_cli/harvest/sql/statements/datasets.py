"""Which Table nodes of a statement are datasets, and which of them it reads or writes: the one walk that
gathers a statement's tables and CTE names (``survey``), the write of a statement into its target
(``write_into``), CTEs told from tables where they stand, and a target written through a CTE.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import sqlglot
from sqlglot import exp

from lineage_cli.harvest.sql.statements.context import Context, Write
from lineage_cli.harvest.sql.statements.locations import file_location


def survey(expression: exp.Expression, ctx: Context) -> None:
    """One walk of the statement for what every handler needs: its CTE names and its Table nodes."""
    tables, ctes = [], set()
    for node in expression.walk():
        if isinstance(node, exp.Table):
            tables.append(node)
        elif isinstance(node, exp.CTE):
            ctes.add(ctx.profile.fold(node.alias_or_name))
    for table in tables:
        if isinstance(table.this, exp.DynamicIdentifier):
            _named_by_string(table, ctx)
        elif isinstance(table.this, exp.Parameter) and isinstance(table.this.this, exp.Var):
            table.set("this", exp.Identifier(this="@" + table.this.name))  # T-SQL's table variable: a table
    ctx.statement, ctx.statement_tables, ctx.cte_names = expression, tables, ctes


def _named_by_string(table: exp.Table, ctx: Context) -> None:
    """Snowflake's ``IDENTIFIER('db.s.t')``: the table the string names, in place (a variable names none)."""
    name = table.this.this
    if not isinstance(name, exp.Literal) or not name.is_string:
        return
    try:
        named = exp.to_table(name.name, dialect=ctx.profile.sqlglot_dialect)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        return
    for part in ("this", "db", "catalog"):
        table.set(part, named.args.get(part))


def write_into(
    statement: exp.Expression,
    target: exp.Table,
    ctx: Context,
    query: exp.Expression | None,
    is_view: bool = False,
    landing: exp.Table | None = None,
) -> Write:
    """The write of ``statement`` into ``target``, or into ``landing`` when ``target`` is a CTE over that table
    (``target`` stays the node the column analysis starts from: the column list and the alias are there)."""
    landing = target if landing is None else landing
    sources = read_tables(statement, ctx, skip=(*_target_nodes(statement), landing))
    if ctx.row_variables:
        sources = sorted({*sources, *_row_variable_reads(statement, ctx)})
    return Write(ctx.table_name(landing), sources, is_view, target, query)


def _row_variable_reads(statement: exp.Expression, ctx: Context) -> set[str]:
    """The trigger's table, where the statement reads the row it fires for (``NEW.c``, Oracle's ``:NEW.c``)."""
    named = {column.table.lower() for column in statement.find_all(exp.Column) if column.table}
    named |= {placeholder.name.lower() for placeholder in statement.find_all(exp.Placeholder)}
    return {ctx.row_variables[name] for name in named if name in ctx.row_variables}


def _target_nodes(statement: exp.Expression) -> tuple[exp.Table, ...]:
    """Every Table node of ``statement`` that is written, not read."""
    if isinstance(statement, exp.MultitableInserts):
        return tuple(t for b in statement.expressions if (t := table_of(b.this)) is not None)
    if isinstance(statement, (exp.Select, exp.SetOperation)):
        target = into_target(statement)
        return (target,) if target is not None else ()
    if isinstance(statement, exp.Delete):
        return tuple(t for t in (table_of(x) for x in statement.args.get("tables") or ()) if t) or (
            (table_of(statement.this),) if table_of(statement.this) else ()
        )
    target = table_of(statement.this)
    return (target,) if target is not None else ()


def read_tables(node: exp.Expression | None, ctx: Context, skip: Iterable[exp.Table]) -> list[str]:
    if node is None:
        return []
    skipped = {id(t) for t in skip}
    tables = ctx.statement_tables if node is ctx.statement else node.find_all(exp.Table)
    names = {ctx.table_name(table) for table in tables if id(table) not in skipped and is_dataset(table, ctx)}
    return sorted(names)


def is_dataset(table: exp.Table, ctx: Context) -> bool:
    """A Table node names a dataset unless it is a function call or a CTE reference."""
    if not isinstance(table.args.get("this"), exp.Identifier):
        # table functions: generate_series(...), TABLE(FLATTEN(...)), UNNEST ...; a stage is a location
        return file_location(table, ctx.profile.quoted_paths_are_files) is not None
    if table.args.get("db"):
        return True
    name = ctx.fold(table.args.get("this"))
    if name in ctx.profile.dummy_tables:
        return False  # Oracle's DUAL: one row of no data
    return name not in ctx.cte_names or not _names_a_cte(table, name, ctx)


def _names_a_cte(table: exp.Table, name: str, ctx: Context) -> bool:
    """Whether ``table``, named like one of the statement's CTEs, is that CTE where it stands: a CTE is seen by
    the query of its WITH and by the CTEs after it, not by its own body unless recursive, so ``WITH orders AS
    (SELECT * FROM orders)`` reads the table ``orders``.

    >>> from lineage_cli.harvest.sql.statements import analyze_statement
    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("ansi"))
    >>> analyze_statement(sqlglot.parse_one("INSERT INTO o WITH y AS (SELECT b FROM y) SELECT b FROM y"), ctx).sources
    ['y']
    """
    through: exp.CTE | None = None  # the CTE whose body the walk up has come out of
    for node in _ancestors(table):
        with_ = node.args.get("with_")
        if isinstance(with_, exp.With):
            ctes = with_.expressions
            names = [ctx.profile.fold(cte.alias_or_name) for cte in ctes]
            inside = next((i for i, cte in enumerate(ctes) if cte is through), None)
            visible = names if inside is None else names[: inside + bool(with_.args.get("recursive"))]
            if name in visible:
                return True
        if isinstance(node, exp.CTE):
            through = node
    return False


def _ancestors(node: exp.Expression) -> Iterator[exp.Expression]:
    """The nodes above ``node``, nearest first; a CTE's parent is its WITH, whose parent holds it."""
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def table_of(node: exp.Expression | None) -> exp.Table | None:
    if isinstance(node, exp.Schema):  # INSERT INTO t (a, b) / CREATE VIEW v (a, b)
        node = node.this
    return node if isinstance(node, exp.Table) and isinstance(node.args.get("this"), exp.Identifier) else None


def into_target(statement: exp.Query) -> exp.Table | None:
    first = statement
    while isinstance(first, exp.SetOperation):
        first = first.this
    into = first.args.get("into") if isinstance(first, exp.Select) else None
    return table_of(into.this) if isinstance(into, exp.Into) else None


def through_cte(target: exp.Table | None, statement: exp.Expression, ctx: Context) -> exp.Table | None:
    """The table a DML statement changes when its target is a CTE of its own (T-SQL writes through a CTE over
    one base table: ``WITH d AS (SELECT ... FROM dbo.t) DELETE FROM d WHERE rn > 1`` deletes rows of
    ``dbo.t``): the first table of the CTE's FROM, through CTEs over CTEs.  A CTE is never a dataset, so one
    over no table (VALUES, a set operation) leaves no target.

    >>> from lineage_cli.harvest.sql.statements import analyze_statement
    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("tsql"))
    >>> sql = "WITH a AS (SELECT * FROM dbo.t), b AS (SELECT * FROM a) UPDATE b SET x = 1"
    >>> analyze_statement(sqlglot.parse_one(sql, read="tsql"), ctx).targets
    ['dbo.t']
    """
    if target is None or target.args.get("db") or ctx.fold(target.this) not in ctx.cte_names:
        return target  # (the common case: no CTE, or not the target)
    ctes = _own_ctes(statement, ctx)
    seen: set[str] = set()
    while target is not None and not target.args.get("db") and (name := ctx.fold(target.this)) in ctes:
        if not _names_a_cte(target, name, ctx):
            return target  # `WITH t AS (SELECT ... FROM t)`: the CTE's own body reads the table t
        if name in seen:
            return None  # a recursive CTE: no base table of its own
        seen.add(name)
        target = _first_from_table(ctes[name].this)
    return target


def _own_ctes(statement: exp.Expression, ctx: Context) -> dict[str, exp.CTE]:
    """The CTEs written before the statement's keyword, by folded name."""
    with_ = statement.args.get("with_")
    ctes = with_.expressions if isinstance(with_, exp.With) else []
    return {ctx.profile.fold(cte.alias_or_name): cte for cte in ctes}


def _first_from_table(query: exp.Expression | None) -> exp.Table | None:
    """The table a query reads first: its FROM's table, or the FROM table of a derived table there."""
    while isinstance(query, exp.Subquery):
        query = query.this
    from_ = query.args.get("from_") if isinstance(query, exp.Select) else None
    relation = from_.this if isinstance(from_, exp.From) else None
    if isinstance(relation, exp.Subquery):
        return _first_from_table(relation.this)
    return table_of(relation)
