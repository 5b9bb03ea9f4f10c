"""Statements that write nothing but change how the later ones of a script read: ``USE`` (the default
schema) and ``DECLARE`` (names that are variables, not columns).
"""

from __future__ import annotations

from sqlglot import exp

from lineage_cli.harvest.sql.statements.context import Context


def apply_use(statement: exp.Use, ctx: Context) -> None:
    """``USE [KIND] name``: the schema of the unqualified tables after it, as the profile's ``use_switches`` says.

    Names leave out the database unless it is written, so that a table is one node whichever database a
    script was connected to: switching the database (T-SQL's ``USE db``, Snowflake's ``USE DATABASE db``)
    puts unqualified tables back in the script's default schema; ``USE db.s`` sets schema ``s``; a USE of
    something else (a warehouse, a role) changes nothing.

    >>> import sqlglot
    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("snowflake"))
    >>> for sql in ("USE SCHEMA raw.stg", "USE WAREHOUSE wh", "USE DATABASE raw"):
    ...     apply_use(sqlglot.parse_one(sql, read="snowflake"), ctx)
    ...     print(ctx.default_schema)
    stg
    stg
    public
    """
    named = statement.this
    switched = ctx.profile.use_switch(_use_kind(statement))
    if switched is None or not isinstance(named, exp.Table):
        return
    if switched == "schema" or named.args.get("db") is not None:  # USE db.s names the schema too
        ctx.default_schema = ctx.fold(named.args.get("this")) or ctx.default_schema
    else:
        ctx.default_schema = ctx.base_schema


def declare(statement: exp.Declare, ctx: Context) -> None:
    """``DECLARE a, b INT64 DEFAULT 0``: names the statements after it may read as values, not columns.

    >>> import sqlglot
    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("bigquery"))
    >>> declare(sqlglot.parse_one("DECLARE run_date, cutoff DATE", read="bigquery"), ctx)
    >>> sorted(ctx.variables)
    ['cutoff', 'run_date']
    """
    for item in statement.expressions:
        names = item.this if isinstance(item.this, list) else [item.this]
        ctx.variables.update(ctx.fold(name) for name in names if isinstance(name, exp.Identifier))


def _use_kind(statement: exp.Use) -> str:
    """The word between USE and the name (``DATABASE``, ``SCHEMA``, ``WAREHOUSE`` ...); "" for none."""
    kind = statement.args.get("kind")
    return kind.name if isinstance(kind, exp.Expression) else str(kind or "")
