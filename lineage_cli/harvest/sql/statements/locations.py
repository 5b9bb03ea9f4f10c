"""Locations read and written in place, named as written: Spark's ``format.`path` ``, a Snowflake stage,
DuckDB's file names and ``read_*`` table functions, path literals (``LOAD DATA INPATH 'hdfs://...'``) and bind
placeholders (``COPY t FROM :path``).  A location is a dataset node whose name is the location itself, its case
kept as file systems keep it.
"""

from __future__ import annotations

import re

from sqlglot import exp

# Spark and Databricks read and write files in place: ``SELECT * FROM parquet.`s3://bucket/dir/` ``.
_FILE_FORMATS = frozenset({"parquet", "orc", "json", "csv", "avro", "text", "delta", "binaryfile", "iceberg"})


def file_location(table: exp.Table, quoted_paths: bool = True) -> str | None:
    """The location a table reference reads in place, as written; None for a table.  Spark's ``format.`path` ``,
    a Snowflake stage (``SELECT $1 FROM @stage/dir/``), DuckDB's ``'data/in.parquet'`` (unless not
    ``quoted_paths``: the dialect reads a quoted name alone as a table's) and ``read_parquet(path)`` (any
    ``read_*`` table function given a path).

    >>> import sqlglot
    >>> def location(sql, dialect):
    ...     return file_location(sqlglot.parse_one(sql, read=dialect).find(exp.Table))
    >>> location("SELECT * FROM delta.`/mnt/Raw/events`", "spark"), location("SELECT $1 FROM @st/ev/", "snowflake")
    ('/mnt/Raw/events', '@st/ev/')
    >>> location("SELECT * FROM 'in/x.parquet'", "duckdb"), location("SELECT * FROM read_csv_auto('a.csv')", "duckdb")
    ('in/x.parquet', 'a.csv')
    """
    name, schema = table.args.get("this"), table.args.get("db")
    if isinstance(name, exp.Var) and name.name.startswith("@") and schema is None:
        return name.name
    if isinstance(name, exp.Func):
        return _read_function_path(name)
    if not isinstance(name, exp.Identifier) or not name.quoted or table.args.get("catalog"):
        return None
    if schema is None:
        return name.this if quoted_paths and _FILE_NAME.search(name.this) else None
    return name.this if "/" in name.this and schema.name.lower() in _FILE_FORMATS else None


# A quoted name that is a file: a path, or a name with a data file's extension (DuckDB's FROM 'x.parquet')
_FILE_NAME = re.compile(r"/|\.(?:parquet|csv|tsv|json|jsonl|ndjson|txt|avro|orc)(?:\.gz|\.zst)?$", re.IGNORECASE)


def _read_function_path(call: exp.Func) -> str | None:
    """The path a ``read_*`` table function reads (DuckDB's read_parquet, read_csv_auto, read_json ...)."""
    name = call.name if isinstance(call, exp.Anonymous) else call.sql_name()
    if not name.lower().startswith("read_"):
        return None
    first = call.this if isinstance(call.this, exp.Expression) else (call.expressions or [None])[0]
    return first.name if isinstance(first, exp.Literal) and first.is_string else None


def placeholder_text(placeholder: exp.Placeholder) -> str:
    """A bind placeholder as written: ``:name`` (psql, Redshift scripts), or ``?``.

    >>> import sqlglot
    >>> placeholder_text(sqlglot.parse_one("COPY t FROM :emr_file_path", read="redshift").args["files"][0])
    ':emr_file_path'
    """
    return f":{placeholder.name}" if placeholder.args.get("this") else "?"


def location_of(node: exp.Expression | None) -> str | None:
    """A file location as written: a path or URI literal (``'s3://bucket/dir/'``) or a stage (``@stage/dir/``).

    Locations are dataset nodes named by the location itself; their case is kept, as file systems keep it.

    >>> import sqlglot
    >>> location_of(sqlglot.parse_one("LOAD DATA INPATH 'hdfs://nn/In/' INTO TABLE t", read="hive").args["inpath"])
    'hdfs://nn/In/'
    """
    if isinstance(node, exp.Table):
        node = node.this
    if isinstance(node, exp.Literal) and node.is_string or isinstance(node, exp.Var):
        return node.name.strip() or None
    if isinstance(node, exp.Placeholder) and node.args.get("this"):  # `COPY t FROM :path`: known at run time
        return placeholder_text(node)
    return None
