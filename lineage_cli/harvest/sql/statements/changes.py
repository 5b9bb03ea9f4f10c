"""MERGE, UPDATE and DELETE: statements that change a table's rows in place, deciding which by reading the
table itself; their targets may be aliases, CTEs over a table, or several tables (MySQL).
"""

from __future__ import annotations

from sqlglot import exp

from lineage_cli.harvest.sql.statements.context import Context, StatementLineage, Write
from lineage_cli.harvest.sql.statements.datasets import is_dataset, table_of, through_cte, write_into


def merge(statement: exp.Merge, ctx: Context) -> StatementLineage | None:
    # Through a CTE, the written node stays the MERGE's target: its alias is what ON and SET name.
    written = table_of(statement.this)
    landing = through_cte(written, statement, ctx)
    return _self_reading(statement, written, ctx, "merge", landing) if landing is not None else None


# UPDATE and DELETE through a CTE take the CTE's base table as their target node: the column analysis then
# reads the statement's own relation (the CTE) as any FROM item, and a WHERE on a CTE column (`rn > 1`)
# reads what that column is made of.
def update(statement: exp.Update, ctx: Context) -> StatementLineage | None:
    target = _resolve_alias(statement, table_of(statement.this))
    # MySQL's UPDATE a JOIN b SET b.z = ... writes b too (a CTE the SET names is the target's own way in)
    others = [t for t in _set_tables(statement) if t is not target and is_dataset(t, ctx)]
    lineage = _self_reading(statement, through_cte(target, statement, ctx), ctx, "update")
    return _with_more_targets(lineage, statement, others, ctx)


def delete(statement: exp.Delete, ctx: Context) -> StatementLineage | None:
    # T-SQL: DELETE alias FROM table alias ...; sqlglot reads `DELETE TOP (n) FROM t` as a delete from `TOP`
    # MySQL: DELETE o, i FROM orders o JOIN items i ... deletes from both
    named = [t for t in statement.args.get("tables") or () if not _is_top(t)] or [statement.this]
    target = _resolve_alias(statement, table_of(named[0]))
    others = [t for t in (_resolve_alias(statement, table_of(n)) for n in named[1:]) if t is not None]
    lineage = _self_reading(statement, through_cte(target, statement, ctx), ctx, "delete")
    return _with_more_targets(lineage, statement, others, ctx)


def _set_tables(statement: exp.Update) -> list[exp.Table]:
    """The tables the SET of a multi-table UPDATE writes, by the qualifiers of its columns."""
    qualifiers = {
        a.this.table.lower() for a in statement.expressions if isinstance(a, exp.EQ) and isinstance(a.this, exp.Column)
    }
    found: list[exp.Table] = []
    for table in statement.find_all(exp.Table):
        if (table.alias or table.name).lower() in qualifiers - {""}:
            named = _resolve_alias(statement, table)  # (T-SQL's UPDATE c ... FROM dbo.targets c: one table)
            if named is not None and all(named is not other for other in found):
                found.append(named)
    return found


def _with_more_targets(
    lineage: StatementLineage | None, statement: exp.Expression, targets: list[exp.Table], ctx: Context
) -> StatementLineage | None:
    """``lineage`` with a write to each of ``targets`` too, each reading itself as the first target does."""
    if lineage is None:
        return None
    for target in targets:
        write = _self_reading_write(statement, target, ctx)
        if write.target not in lineage.targets:
            lineage.writes.append(write)
    return lineage


def _is_top(table: exp.Expression) -> bool:
    return isinstance(table, exp.Table) and table.name.upper() == "TOP" and not table.args.get("db")


def _self_reading(
    statement: exp.Expression,
    target: exp.Table | None,
    ctx: Context,
    kind: str,
    landing: exp.Table | None = None,
) -> StatementLineage | None:
    """MERGE, UPDATE and DELETE decide which target rows change by reading the target itself.  ``landing``:
    the table that changes when ``target`` is a CTE over it."""
    if target is None:
        return None
    return StatementLineage(kind, [_self_reading_write(statement, target, ctx, landing)], statement)


def _self_reading_write(
    statement: exp.Expression, target: exp.Table, ctx: Context, landing: exp.Table | None = None
) -> Write:
    write = write_into(statement, target, ctx, query=None, landing=landing)
    write.sources = sorted(set(write.sources) | {write.target})
    return write


def _resolve_alias(statement: exp.Expression, target: exp.Table | None) -> exp.Table | None:
    """``UPDATE t SET ... FROM dbo.orders t``: the written name may be an alias of a read table."""
    if target is None or target.args.get("db"):
        return target
    alias = target.name.lower()
    for table in statement.find_all(exp.Table):
        if table is not target and table.alias.lower() == alias:
            return table
    return target
