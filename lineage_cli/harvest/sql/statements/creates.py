"""DDL that fills a table or view: CREATE TABLE / VIEW ... AS query, Spark's CACHE TABLE ... AS, clones,
ALTER VIEW ... AS and table swaps (also Vertica's partition functions, called by a SELECT).  DDL that moves no
rows (plain CREATE TABLE, DROP) yields nothing.
"""

from __future__ import annotations

from sqlglot import exp

from lineage_cli.harvest.sql.statements.context import Context, StatementLineage, Write
from lineage_cli.harvest.sql.statements.datasets import table_of, write_into


def create(statement: exp.Create, ctx: Context) -> StatementLineage | None:
    query = statement.expression
    if isinstance(query, exp.Values):  # Spark's CREATE VIEW v AS VALUES (1, 2) [AS t(a, b)]: its rows, named
        query = exp.select("*").from_(query.copy())
    target = table_of(statement.this)
    clause = statement.args.get("clone")
    if isinstance(clause, exp.Clone) and target is not None:
        return clone(statement, target, table_of(clause.this), ctx)
    if not isinstance(query, exp.Query) or target is None:
        return None  # plain DDL (CREATE TABLE ... LIKE included: it copies no rows): no data flows
    is_view = (statement.kind or "").upper() == "VIEW"
    into = statement.find(exp.ToTableProperty)
    if into is not None and (destination := table_of(into.this)) is not None:
        target, is_view = destination, False  # ClickHouse's MATERIALIZED VIEW mv TO dest: the rows land in dest
    write = write_into(statement, target, ctx, query=query, is_view=is_view)
    return StatementLineage("view" if is_view else "ctas", [write], statement)


def cache(statement: exp.Cache, ctx: Context) -> StatementLineage | None:
    """Spark's ``CACHE TABLE t AS SELECT ...``: a temporary table of the query's rows, as a CTAS."""
    query, target = statement.expression, table_of(statement.this)
    if not isinstance(query, exp.Query) or target is None:
        return None  # CACHE TABLE t: keeps an existing table in memory
    return StatementLineage("cache", [write_into(statement, target, ctx, query=query)], statement)


def clone(
    statement: exp.Expression, target: exp.Table, source: exp.Table | None, ctx: Context
) -> StatementLineage | None:
    """``CREATE TABLE t CLONE s`` (Snowflake, BigQuery, Databricks): ``t`` starts as a copy of ``s``'s rows,
    column for column, as if written by ``SELECT * FROM s``."""
    if source is None:
        return None
    query = exp.select("*").from_(source.copy())
    write = Write(ctx.table_name(target), [ctx.table_name(source)], target_node=target, query=query)
    return StatementLineage("clone", [write], statement)


def alter(statement: exp.Alter, ctx: Context) -> StatementLineage | None:
    actions = statement.args.get("actions") or ()
    target = table_of(statement.this)
    swap = next((a for a in actions if isinstance(a, exp.SwapTable)), None)
    if swap is not None and target is not None:
        return swapped(statement, target, table_of(swap.this), ctx)
    query = next((a for a in actions if isinstance(a, exp.Query)), None)
    if (statement.args.get("kind") or "").upper() != "VIEW" or query is None or target is None:
        return None
    write = write_into(statement, target, ctx, query=query, is_view=True)
    return StatementLineage("alter_view", [write], statement)


def swapped(
    statement: exp.Expression, target: exp.Table, source: exp.Table | None, ctx: Context
) -> StatementLineage | None:
    """``ALTER TABLE t SWAP WITH s`` (Snowflake), ``ALTER TABLE t EXCHANGE PARTITION (...) WITH TABLE s`` (Hive):
    ``t`` takes the rows ``s`` held.  (A swap also hands ``t``'s old rows to ``s``, but the pattern is a staging
    table swapped into place: the flow that matters is ``s -> t``.)"""
    if source is None:
        return None
    write = Write(ctx.table_name(target), [ctx.table_name(source)], target_node=target)
    return StatementLineage("swap", [write], statement)


def partition_transfer(statement: exp.Select, ctx: Context) -> StatementLineage | None:
    """Vertica's ``SELECT SWAP_PARTITIONS_BETWEEN_TABLES('stg', lo, hi, 'dw.t')``, ``MOVE_PARTITIONS_TO_TABLE``
    and ``COPY_PARTITIONS_TO_TABLE`` (the profile's ``partition_functions``): a swap, ``dw.t`` takes rows
    ``stg`` held; None for any other query."""
    functions = dict(ctx.profile.partition_functions)
    if not functions or statement.args.get("from_") is not None or len(statement.expressions) != 1:
        return None
    call = statement.expressions[0].unalias()
    positions = functions.get(call.name.lower()) if isinstance(call, exp.Anonymous) else None
    if positions is None:
        return None
    arguments = call.expressions
    source, target = (_named_table(arguments[i], ctx) if i < len(arguments) else None for i in positions)
    return swapped(statement, target, source, ctx) if target is not None else None


def _named_table(argument: exp.Expression, ctx: Context) -> exp.Table | None:
    """The table a string argument names (``'stg.orders'``); None for anything but a constant string."""
    if not isinstance(argument, exp.Literal) or not argument.is_string or not argument.this.strip():
        return None
    return exp.to_table(argument.this.strip(), dialect=ctx.profile.sqlglot_dialect)
