"""Postgres' ``csvlog`` (``log_destination = 'csvlog'``): the statements that ``log_statement = all`` (or
``mod``, ``ddl``), ``log_min_duration_statement`` and ``auto_explain`` write to it.

A csvlog has no header; its columns are, in order, ``log_time, user_name, database_name, process_id,
connection_from, session_id, session_line_num, command_tag, session_start_time, virtual_transaction_id,
transaction_id, error_severity, sql_state_code, message, detail, hint, internal_query, internal_query_pos,
context, query, query_pos, location, application_name`` and, from Postgres 13 and 14, ``backend_type,
leader_pid, query_id``.  A statement is in the ``message`` of a ``LOG`` row:

* ``statement: SQL`` and ``execute NAME: SQL`` (``log_statement``), written before the statement runs;
* ``duration: 1.2 ms  statement: SQL`` (``log_min_duration_statement``) and auto_explain's
  ``duration: 1.2 ms  plan:`` with a ``Query Text: SQL`` line before the plan (or its JSON form's
  ``"Query Text"``), written after it ran.

A statement logged before it runs failed when the next row of its session is an ``ERROR`` (``FATAL``,
``PANIC``); an error row that quotes a statement not logged before (``log_min_error_statement``) counts as a
failed query too.  The same run logged twice (``log_statement`` and then its duration or plan) is one run.  The
statements of up to 10,000 sessions wait for their outcome at a time; past that the oldest is taken as done.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace

from lineage_cli.harvest.inputs.querylog.rows import LogFile, LogRow, Record, csv_rows, text
from lineage_cli.model import Issue

DIALECT = "postgres"
COLUMNS = (
    "log_time", "user_name", "database_name", "process_id", "connection_from", "session_id", "session_line_num",
    "command_tag", "session_start_time", "virtual_transaction_id", "transaction_id", "error_severity",
    "sql_state_code", "message", "detail", "hint", "internal_query", "internal_query_pos", "context", "query",
    "query_pos", "location", "application_name", "backend_type", "leader_pid", "query_id",
)  # fmt: skip
_FEWEST_COLUMNS = 22  # Postgres 12 and before: up to application_name
_WAITING_SESSIONS = 10_000
_ERRORS = frozenset({"ERROR", "FATAL", "PANIC"})
_BEFORE = re.compile(r"(?:statement|execute [^:]*): (?P<sql>.*)", re.DOTALL)
_AFTER = re.compile(
    r"duration: [\d.]+ ms\s+(?:(?:statement|execute [^:]*): (?P<sql>.*)|plan:\s*(?P<plan>.*))", re.DOTALL
)
_PLAN_NODE = re.compile(r"^\s*(?:->|\S.*\((?:cost|actual time)=[\d.]+\.\.)", re.MULTILINE)  # `(cost=0.00..1.01`


def rows(log: LogFile) -> Iterator[LogRow | Issue]:
    waiting: dict[str, LogRow] = {}  # session -> its statement logged before it ran, until its outcome is known
    for item in csv_rows(log, COLUMNS):
        if isinstance(item, Issue):
            yield item
            continue
        line, record = item
        if len(record) < _FEWEST_COLUMNS:
            yield Issue(log.display, line, f"a csvlog row of {len(record)} fields, fewer than {_FEWEST_COLUMNS}")
            continue
        yield from _outcome(line, record, waiting)
        while len(waiting) > _WAITING_SESSIONS:
            yield waiting.pop(next(iter(waiting)))
    yield from waiting.values()


def _outcome(line: int, record: Record, waiting: dict[str, LogRow]) -> Iterator[LogRow]:
    """The runs one row settles: the session's waiting statement, and the row's own."""
    session = text(record, "session_id") or ""
    message = record.get("message") or ""
    if (text(record, "error_severity") or "").upper() in _ERRORS:
        failed = waiting.pop(session, None)
        if failed is not None:
            yield _failed(failed)
        elif (quoted := text(record, "query")) is not None:
            yield _failed(_row(line, record, quoted))
        return
    if (before := _BEFORE.match(message)) is not None:
        if session in waiting:
            yield waiting.pop(session)  # a new statement: the last one ended without an error
        waiting[session] = _row(line, record, before.group("sql"))
        return
    after = _AFTER.match(message)
    sql = None if after is None else after.group("sql") or _query_text(after.group("plan") or "")
    if sql is None:
        return
    logged = waiting.pop(session, None)
    if logged is not None and logged.sql == sql.strip():
        yield logged  # the same run, logged before and after it ran
        return
    if logged is not None:
        yield logged
    yield _row(line, record, sql)


def _query_text(plan: str) -> str | None:
    """The statement auto_explain logged with its plan: the JSON form's ``Query Text``, or the text form's
    ``Query Text:`` line and the lines after it up to the plan's first node (a line with its cost or actual time).

    >>> _query_text("Query Text: SELECT a\\n  FROM t WHERE (cost = 1)\\nSeq Scan on t  (cost=0.00..1.01 rows=1)")
    'SELECT a\\n  FROM t WHERE (cost = 1)'
    """
    if plan.lstrip().startswith("{"):
        try:
            found = json.loads(plan).get("Query Text")
        except (ValueError, AttributeError):
            return None
        return found if isinstance(found, str) else None
    at = plan.find("Query Text:")
    if at < 0:
        return None
    rest = plan[at + len("Query Text:") :]
    node = _PLAN_NODE.search(rest, rest.find("\n") + 1 if "\n" in rest else len(rest))
    return (rest[: node.start()] if node else rest).strip() or None


def _row(line: int, record: Record, sql: str) -> LogRow:
    return LogRow(
        line,
        sql.strip(),
        text(record, "database_name"),
        None,
        text(record, "user_name"),
        text(record, "log_time"),
    )


def _failed(row: LogRow) -> LogRow:
    return replace(row, failed=True)
