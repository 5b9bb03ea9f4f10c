"""Snowflake's query history, exported as CSV or JSON: ``SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY`` (or the
``INFORMATION_SCHEMA.QUERY_HISTORY`` table function), or ``ACCESS_HISTORY`` joined to it for the text.

Columns read (any case): ``QUERY_TEXT`` (required), ``DATABASE_NAME`` and ``SCHEMA_NAME`` (the session's
current database and schema: the defaults of the query's names), ``USER_NAME``, ``START_TIME`` (or
``QUERY_START_TIME``, ACCESS_HISTORY's), ``EXECUTION_STATUS`` (``SUCCESS``; ``FAIL`` and ``INCIDENT`` are
failed queries, as is a row with an ``ERROR_CODE``; a query still ``RUNNING`` or ``QUEUED`` is not finished,
and counted with them).
"""

from __future__ import annotations

from collections.abc import Iterator

from lineage_cli.harvest.inputs.querylog.rows import LogFile, LogRow, Record, each_row, records, sql_text, text
from lineage_cli.model import Issue

DIALECT = "snowflake"


def rows(log: LogFile) -> Iterator[LogRow | Issue]:
    return each_row(records(log, ("query_text",)), log.display, row)


def row(display: str, line: int, record: Record) -> LogRow | Issue:
    sql = sql_text(record, "query_text")
    if sql is None:
        return Issue(display, line, "no QUERY_TEXT in this row")
    status = (text(record, "execution_status") or "SUCCESS").upper()
    return LogRow(
        line,
        sql,
        text(record, "database_name"),
        text(record, "schema_name"),
        text(record, "user_name"),
        text(record, "start_time", "query_start_time"),
        failed=status != "SUCCESS" or text(record, "error_code") is not None,
    )
