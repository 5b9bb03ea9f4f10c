"""Redshift's query history, exported as CSV or JSON, in any of three shapes (told apart by their columns):

* ``STL_QUERY``: ``query``, ``database``, ``querytxt`` (its first 4,000 characters), ``userid``,
  ``starttime``, ``aborted`` (``1``: stopped by the system or cancelled, a failed query);
* ``SYS_QUERY_HISTORY``: ``query_id``, ``database_name``, ``query_text``, ``user_id``, ``start_time``,
  ``status`` (a query whose status is not ``success`` failed or has not finished);
* ``STL_QUERYTEXT`` / ``SYS_QUERY_TEXT``, the whole text in pieces of 200 (4,000) characters: ``query`` (or
  ``query_id``), ``sequence``, ``text``; a query's rows follow one another (export them ``ORDER BY query,
  sequence``) and are joined in sequence order.  Joined to STL_QUERY for ``database``, ``starttime`` and
  ``aborted``, they keep the first row's.

The STL tables write a newline as ``\\n`` and a backslash as ``\\\\``, which are read back; a query's schema
is ``--default-schema`` or the dialect's (``public``): Redshift does not log the search path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lineage_cli.harvest.inputs.querylog.rows import LogFile, LogRow, Record, records, sql_text, text
from lineage_cli.model import Issue

DIALECT = "redshift"
_ESCAPE = re.compile(r"\\([n\\])")


def rows(log: LogFile) -> Iterator[LogRow | Issue]:
    pieces: list[tuple[int, str]] = []  # the text pieces of the query being joined: (sequence, text)
    first: tuple[int, Record] | None = None
    for item in records(log, ("querytxt", "query_text", "text")):
        if isinstance(item, Issue):
            yield item
            continue
        line, record = item
        if text(record, "sequence") is None:
            yield _row(log.display, line, record, sql_text(record, "querytxt", "query_text"))
            continue
        query = text(record, "query", "query_id")
        if first is not None and text(first[1], "query", "query_id") != query:
            yield _joined(log.display, first, pieces)
            pieces = []
        if not pieces:
            first = item
        sequence = text(record, "sequence") or ""
        pieces.append((int(sequence) if sequence.isdigit() else len(pieces), record.get("text") or ""))
    if first is not None and pieces:
        yield _joined(log.display, first, pieces)


def _joined(display: str, first: tuple[int, Record], pieces: list[tuple[int, str]]) -> LogRow | Issue:
    whole = "".join(piece for _, piece in sorted(pieces, key=lambda piece: piece[0]))
    return _row(display, first[0], first[1], whole or None)


def _row(display: str, line: int, record: Record, sql: str | None) -> LogRow | Issue:
    if sql is None or not sql.strip():
        return Issue(display, line, "no querytxt, query_text or text in this row")
    if "query_text" not in record:  # an STL table's escapes
        sql = _ESCAPE.sub(lambda match: "\n" if match.group(1) == "n" else "\\", sql)
    status = (text(record, "status") or "success").strip().lower()
    aborted = (text(record, "aborted") or "0").strip()
    return LogRow(
        line,
        sql.strip(),
        (text(record, "database", "database_name") or "").strip() or None,
        None,
        text(record, "userid", "user_id"),
        text(record, "starttime", "start_time"),
        failed=status != "success" or aborted not in ("0", "false", "False"),
    )
