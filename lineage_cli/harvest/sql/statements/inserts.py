"""Statements that write a query's rows: INSERT (into a table, or a directory), multi-table INSERT,
``SELECT ... INTO``, and a query alone, which writes nothing and reports what it reads.
"""

from __future__ import annotations

from sqlglot import exp

from lineage_cli.harvest.sql.statements.context import Context, StatementLineage, Write
from lineage_cli.harvest.sql.statements.creates import partition_transfer
from lineage_cli.harvest.sql.statements.datasets import into_target, read_tables, table_of, through_cte, write_into
from lineage_cli.harvest.sql.statements.locations import location_of


def insert(statement: exp.Insert, ctx: Context) -> StatementLineage | None:
    written = table_of(statement.this)
    landing = through_cte(written, statement, ctx) if ctx.profile.inserts_through_ctes else written
    if written is None or landing is None:
        return _into_location(statement, ctx)
    write = write_into(statement, written, ctx, query=statement.expression, landing=landing)
    conflict = statement.args.get("conflict")
    if isinstance(conflict, exp.OnConflict) and conflict.expressions:  # an upsert updates rows it reads
        write.sources = sorted({*write.sources, write.target})
    return StatementLineage("insert", [write], statement)


def _into_location(statement: exp.Insert, ctx: Context) -> StatementLineage | None:
    """``INSERT OVERWRITE [LOCAL] DIRECTORY 'path' SELECT ...``: the rows land in files at a location."""
    directory = statement.this
    location = location_of(directory.this) if isinstance(directory, exp.Directory) else None
    if location is None:
        return None
    return StatementLineage("insert", [Write(location, read_tables(statement, ctx, skip=()))], statement)


def multi_insert(statement: exp.MultitableInserts, ctx: Context) -> StatementLineage | None:
    # every branch reads the shared FROM, and through it the CTEs before it (`WITH q AS (...) FROM q INSERT ...`)
    shared = read_tables(statement.args.get("source"), ctx, skip=()) + read_tables(
        statement.args.get("with_"), ctx, skip=()
    )
    writes = []
    for branch in statement.expressions:
        into = branch.this if isinstance(branch, exp.ConditionalInsert) else branch  # Oracle INSERT ALL
        target = table_of(into.this)
        if target is not None:
            write = write_into(into, target, ctx, query=into.expression)
            write.sources = sorted(set(write.sources) | set(shared))
            writes.append(write)
    return StatementLineage("multi_insert", writes, statement) if writes else None


def select(statement: exp.Query, ctx: Context) -> StatementLineage | None:
    """``SELECT ... INTO t``; in a set operation, the first branch's INTO takes the whole result.  Where the
    profile says so (PL/SQL, MySQL, Snowflake scripting; plpgsql in a routine), INTO sets variables.  A call
    of one of the profile's partition functions is a swap."""
    if isinstance(statement, exp.Select) and (moved := partition_transfer(statement, ctx)) is not None:
        return moved
    target = into_target(statement)
    if target is not None and ctx.into_sets_variables():
        ctx.variables.add(ctx.fold(target.this))
        return _select_reads(statement, ctx, skip=(target,))
    if target is None:
        return _select_reads(statement, ctx, skip=())
    write = write_into(statement, target, ctx, query=statement)
    return StatementLineage("select_into", [write], statement)


def _select_reads(statement: exp.Query, ctx: Context, skip: tuple[exp.Table, ...]) -> StatementLineage | None:
    reads = read_tables(statement, ctx, skip=skip)
    return StatementLineage("select", [], statement, reads=reads) if reads else None


def parenthesized(statement: exp.Subquery, ctx: Context) -> StatementLineage | None:
    """``(SELECT ...)`` on its own: the query inside."""
    inner = statement.unnest()
    return select(inner, ctx) if isinstance(inner, (exp.Select, exp.SetOperation)) else None
