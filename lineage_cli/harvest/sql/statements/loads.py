"""Statements that move rows between files and tables: Hive's LOAD DATA and COPY (loading files into a
table, or unloading rows into files); a COPY from or to the client moves no dataset's rows.
"""

from __future__ import annotations

from sqlglot import exp

from lineage_cli.harvest.sql.statements.context import Context, StatementLineage, Write
from lineage_cli.harvest.sql.statements.datasets import read_tables, table_of
from lineage_cli.harvest.sql.statements.locations import location_of


def load(statement: exp.LoadData, ctx: Context) -> StatementLineage | None:
    """Hive ``LOAD DATA [LOCAL] INPATH 'path' INTO TABLE t``: the files at the path become rows of ``t``."""
    target, location = table_of(statement.this), location_of(statement.args.get("inpath"))
    if target is None or location is None:
        return None
    return StatementLineage("load", [Write(ctx.table_name(target), [location], target_node=target)], statement)


def copy(statement: exp.Copy, ctx: Context) -> StatementLineage | None:
    """``COPY t FROM 'path'`` / ``COPY INTO t FROM @stage`` load files; ``COPY t TO 'path'`` and Snowflake's
    ``COPY INTO 'path' FROM (SELECT ...)`` unload rows into files.  Bind placeholders stay as written.

    >>> import sqlglot
    >>> from lineage_cli.profiles import load_profile
    >>> sql = "copy :schema_name.supplier_stage from :emr_file_path iam_role 'arn:x' delimiter '|' gzip"
    >>> lineage = copy(sqlglot.parse_one(sql, read="redshift"), Context(load_profile("redshift")))
    >>> lineage.targets, lineage.sources
    ([':schema_name.supplier_stage'], [':emr_file_path'])
    """
    files = statement.args.get("files") or []
    written, read = ([statement.this], files) if statement.args.get("kind") else (files, [statement.this])
    sources = sorted({name for node in read for name in _read_datasets(node, ctx)})
    targets = sorted({name for node in written if (name := _dataset_or_location(node, ctx)) is not None})
    writes = [Write(target, sources) for target in targets]
    return StatementLineage("copy", writes, statement) if writes and sources else None


def _read_datasets(node: exp.Expression, ctx: Context) -> list[str]:
    """What a COPY reads from ``node``: a location, a table, or the tables a query reads."""
    named = _dataset_or_location(node, ctx)
    return [named] if named is not None else read_tables(node, ctx, skip=())


def _dataset_or_location(node: exp.Expression, ctx: Context) -> str | None:
    table = table_of(node)
    return ctx.table_name(table) if table is not None else location_of(node)


# `COPY t FROM STDIN` (pg_dump), `COPY t TO STDOUT`, `COPY t FROM PROGRAM 'cmd'`: the rows come from or go to
# the client, not a dataset
_CLIENT_STREAMS = frozenset({"STDIN", "STDOUT", "PROGRAM"})


def is_client_copy(statement: exp.Copy) -> bool:
    files = statement.args.get("files") or ()
    return any(isinstance(f, exp.Identifier) and not f.quoted and f.name.upper() in _CLIENT_STREAMS for f in files)
