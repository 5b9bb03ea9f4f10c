"""Where a statement's rows land: the target's columns, its partitions and the query of each write.

The target columns are the listed ones (``INSERT INTO t (a, b)``, ``CREATE VIEW v (a, b)``),
else the catalog's, static partitions out and dynamic ones last.  A multi-table insert's
branch (Hive ``FROM src INSERT ... SELECT``, Oracle ``INSERT ALL | FIRST WHEN ...``) becomes a
query of its own; CTEs written before the statement keyword are visible to all of it, and a
data-modifying CTE's ``RETURNING`` rows read as a SELECT.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lineage_cli.harvest.sql.columns.nodes import _last_identifier
from lineage_cli.harvest.sql.statements import Context, Write

if TYPE_CHECKING:
    from lineage_cli.harvest.sql.columns.analysis import _Analysis
    from lineage_cli.harvest.sql.columns.blocks import _Block


def _statement_env(
    analysis: _Analysis, statement: exp.Expression | None, query: exp.Expression | None
) -> dict[str, _Block]:
    """CTEs written before the statement keyword (``WITH c AS (...) INSERT ...``) are visible to all of it."""
    if statement is None or statement is query or not isinstance(statement, (exp.DML, exp.DDL, exp.MultitableInserts)):
        return {}
    return analysis.with_env(statement, {})


def _returned_rows(statement: exp.Expression) -> exp.Select | None:
    """Postgres' ``WITH gone AS (DELETE FROM q WHERE done RETURNING id) INSERT ... SELECT id FROM gone``: the rows
    a data-modifying CTE returns, read as ``SELECT id FROM q WHERE done`` (the rows it changed, their columns)."""
    returning = statement.args.get("returning")
    table = statement.this
    if (
        not isinstance(statement, exp.DML)
        or not isinstance(returning, exp.Returning)
        or not isinstance(table, exp.Table)
    ):
        return None
    rows = exp.Select(expressions=[e.copy() for e in returning.expressions]).from_(table.copy())
    where = statement.args.get("where")
    return rows.where(where.this.copy()) if isinstance(where, exp.Where) else rows


def _branch_condition(statement: exp.Expression, branch: exp.ConditionalInsert) -> exp.Expression | None:
    """The rows one branch of ``INSERT ALL | FIRST WHEN ... ELSE ...`` takes: its WHEN condition; under ELSE,
    none of the WHENs; under FIRST, its WHEN and none of the WHENs before it."""
    branches = [b for b in statement.expressions if isinstance(b, exp.ConditionalInsert)]
    position = next(i for i, b in enumerate(branches) if b is branch)
    first = str(statement.args.get("kind") or "").upper() == "FIRST"
    before = branches if branch.args.get("else_") else branches[:position] if first else []
    excluded = [b.expression.copy() for b in before if b.expression is not None and not b.args.get("else_")]
    own = [branch.expression.copy()] if branch.expression is not None and not branch.args.get("else_") else []
    conditions = own + ([exp.not_(exp.or_(*excluded))] if excluded else [])
    return exp.and_(*conditions) if conditions else None


def _graft_multi_insert_source(
    branch: exp.Expression | None, source: exp.Expression | None, condition: exp.Expression | None
) -> exp.Expression | None:
    """One branch of a multi-table insert as a query of its own.

    Hive ``FROM src INSERT ... SELECT ...``: the branch SELECT reads the shared FROM.  Oracle
    ``INSERT ALL [WHEN c THEN] INTO t VALUES (...) SELECT ...``: the VALUES (or, without them,
    the columns) of the shared SELECT, filtered by the branch's WHEN condition.
    """
    if source is None:
        return branch
    if isinstance(source, exp.Query) and not source.alias:  # Hive's `FROM (SELECT ...) s` is a FROM item
        rows = branch.expressions if isinstance(branch, exp.Values) else []
        values = rows[0].expressions if rows and isinstance(rows[0], exp.Tuple) else rows[:1]
        if not values and condition is None:
            return source
        query = exp.Select(expressions=[v.copy() for v in values] or [exp.Star()])
        query = query.from_(exp.Subquery(this=source.copy()))
        return query.where(condition.copy()) if condition is not None else query
    if not isinstance(branch, exp.Select) or branch.args.get("from_") is not None:
        return branch
    grafted = branch.copy()
    grafted.set("from_", exp.From(this=source.copy()))
    return grafted


def _listed_columns(write: Write, ctx: Context) -> list[str]:
    """``INSERT INTO t (a, b)`` / ``CREATE VIEW v (a, b)`` / ``CREATE TABLE t (a INT) AS``."""
    schema = write.target_node.parent if write.target_node is not None else None
    if not isinstance(schema, exp.Schema):
        return []
    return [
        ctx.fold(item.this if isinstance(item, exp.ColumnDef) else item)
        for item in schema.expressions
        if isinstance(item, (exp.Identifier, exp.ColumnDef))
    ]


def _target_columns(write: Write, analysis: _Analysis) -> list[str] | None:
    """Positional target columns: the listed ones, else the catalog's (static partitions out, dynamic last)."""
    listed = _listed_columns(write, analysis.ctx)
    if listed:
        return listed
    statement = write.target_node.parent if write.target_node is not None else None
    if not isinstance(statement, exp.Insert) or statement.args.get("by_name"):
        return None  # CTAS / views / SELECT INTO take the query's own names
    known = analysis.known_columns(write.target)
    if known is None:
        return None
    static, dynamic = _partition_spec(write.target_node, analysis)
    moved = set(static) | set(dynamic)
    return [c for c in known if c not in moved] + [c for c in dynamic if c not in static]


def _partition_spec(table: exp.Table | None, analysis: _Analysis) -> tuple[list[str], list[str]]:
    """``PARTITION (dt='x', hr)``: static columns (given a value, no edge) and dynamic ones (fed last)."""
    partition = table.args.get("partition") if table is not None else None
    static: list[str] = []
    dynamic: list[str] = []
    for item in partition.expressions if isinstance(partition, exp.Partition) else ():
        if isinstance(item, exp.EQ):
            static.append(analysis.fold(_last_identifier(item.this)))
        elif isinstance(item, (exp.Column, exp.Identifier)):
            dynamic.append(analysis.fold(_last_identifier(item)))
    return static, dynamic
