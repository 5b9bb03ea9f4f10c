"""A generic query log, for any warehouse: JSON lines (or one JSON array) of objects with ``sql`` (required),
``default_database``, ``default_schema``, ``user``, ``time``, and optionally ``status`` (a query whose status
is not ``success``, ``ok`` or ``done``, any case, failed) or ``error`` (a row with one failed).  Its SQL is of
``--dialect``.
"""

from __future__ import annotations

from collections.abc import Iterator

from lineage_cli.harvest.inputs.querylog.rows import (
    LogFile,
    LogRow,
    Record,
    each_row,
    json_array,
    json_lines,
    sql_text,
    text,
)
from lineage_cli.model import Issue

DIALECT = None  # --dialect's
_COMPLETED = frozenset({"success", "succeeded", "ok", "done"})


def rows(log: LogFile) -> Iterator[LogRow | Issue]:
    return each_row(json_array(log) if log.first_character() == "[" else json_lines(log), log.display, row)


def row(display: str, line: int, record: Record) -> LogRow | Issue:
    sql = sql_text(record, "sql")
    if sql is None:
        return Issue(display, line, 'no "sql" in this row')
    status = text(record, "status")
    failed = (status is not None and status.lower() not in _COMPLETED) or text(record, "error") is not None
    return LogRow(
        line,
        sql,
        text(record, "default_database"),
        text(record, "default_schema"),
        text(record, "user"),
        record.get("time"),
        failed,
    )
