"""The rows of an exported log, streamed: CSV (with a header, or with the fixed columns of Postgres' csvlog),
JSON lines, or one JSON array (as ``bq --format=json`` writes it), each row a mapping of lower-cased column
names to values, with the line it starts at.

Nothing here holds more than one row (and, for a JSON array, the read-ahead of one element): a log of
millions of rows is read in constant memory.  A row that cannot be read -- a CSV row whose quotes do not
close, a line that is not JSON, a row of the wrong number of fields -- is an ``Issue`` at its line, and
reading goes on with the next one.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from lineage_cli.model import Issue

Record = Mapping[str, Any]  # a row: lower-cased column name -> value (text from CSV, any JSON value from JSON)
Records = Iterator[tuple[int, Record] | Issue]

# Query texts are long (Snowflake keeps 100,000 characters, BigQuery a megabyte): csv's default field limit
# of 131,072 characters would turn the longest into errors.  The limit is the csv module's, for the whole
# process: it is raised for each row read, and put back before the row is handed on.
_FIELD_LIMIT = 16 * 1024 * 1024
_JSON_READ = 1 << 16


@dataclass(frozen=True, slots=True)
class LogRow:
    """One logged run of a query, as its format's reader understood the row."""

    line: int
    sql: str
    database: str | None = None
    schema: str | None = None
    user: str | None = None
    time: object = None  # as logged; ``runs.parse_time`` reads it
    failed: bool = False  # the query did not complete: counted, not harvested


RowReader = Callable[[str, int, Record], LogRow | Issue | None]  # a format's reading of one row (None: no query)


class LogFile:
    """An exported log opened for reading: a file, or ``-`` for standard input, as UTF-8 text (an invalid byte
    reads as U+FFFD rather than failing the log); or the stretch of a file from byte ``start`` to ``end``, whole
    lines, that one worker reads.  ``position`` is how far into it the reading is, in bytes."""

    def __init__(self, path: str, start: int = 0, end: int | None = None) -> None:
        self.display, self._stdin = ("stdin", True) if path == "-" else (path, False)
        # closed by ``close``: a log is read as a stream of rows, across many calls
        binary = sys.stdin.buffer if self._stdin else open(path, "rb")  # noqa: SIM115
        if end is not None:
            binary = _Stretch(binary, start, end)
        self._binary: io.BufferedReader = binary if hasattr(binary, "peek") else io.BufferedReader(binary)  # type: ignore[arg-type]
        self.text: IO[str] = io.TextIOWrapper(self._binary, encoding="utf-8", errors="replace", newline="")

    def first_character(self) -> str:
        """The first character that is not white space (a byte-order mark skipped), without consuming it."""
        start = self._binary.peek(256)[:256].decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
        return start[:1]

    @property
    def position(self) -> int:
        try:
            return self._binary.tell()
        except OSError:  # a pipe
            return 0

    def close(self) -> None:
        if self._stdin:
            self.text.detach()  # standard input stays open for whoever reads it next
        else:
            self.text.close()


class _Stretch(io.RawIOBase):
    """The bytes of a file from ``start`` up to ``end``."""

    def __init__(self, file: IO[bytes], start: int, end: int) -> None:
        self._file, self._end = file, end
        file.seek(start)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        wanted = min(len(buffer), self._end - self._file.tell())
        data = self._file.read(wanted) if wanted > 0 else b""
        buffer[: len(data)] = data
        return len(data)

    def tell(self) -> int:
        return self._file.tell()

    def close(self) -> None:
        self._file.close()
        super().close()


def each_row(items: Records, display: str, row: RowReader) -> Iterator[LogRow | Issue]:
    """The runs a format reads one row at a time (``row``), and the issues of rows that cannot be read."""
    for item in items:
        if isinstance(item, Issue):
            yield item
        elif (found := row(display, *item)) is not None:
            yield found


def records(log: LogFile, texts: Sequence[str]) -> Records:
    """The log's rows: JSON when it starts with ``{`` or ``[``, else CSV, whose first row names the columns,
    one of ``texts`` (the columns a query's text may be in) among them."""
    first = log.first_character()
    if first == "{":
        return json_lines(log)
    if first == "[":
        return json_array(log)
    return csv_rows(log, texts=texts)


def csv_rows(log: LogFile, columns: Sequence[str] | None = None, texts: Sequence[str] = ()) -> Records:
    """The rows of a CSV log: named by ``columns``, else by its header, which must name one of ``texts``
    (else that is the one issue, at line 1: a header that names no query text is no export of this kind)."""
    reader = csv.reader(log.text, strict=True)
    names = [name.strip().lower() for name in columns] if columns is not None else None
    end = 0
    while True:
        start = end + 1
        limit = csv.field_size_limit(_FIELD_LIMIT)
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            end = reader.line_num
            yield Issue(log.display, start, f"malformed CSV row: {error}")
            continue
        finally:
            csv.field_size_limit(limit)
        end = reader.line_num
        if not row:
            continue  # a blank line
        if names is None:
            names = [name.strip().lstrip("\ufeff").lower() for name in row]
            if texts and not set(texts) & set(names):
                wanted = " or ".join(name.upper() for name in texts)
                yield Issue(log.display, start, f"the header names no {wanted} column: no row holds a query")
                return
            continue
        if len(row) > len(names):
            yield Issue(log.display, start, f"a row of {len(row)} fields, the header names {len(names)}")
            continue
        yield start, dict(zip(names, row, strict=False))  # a shorter row: the columns it lacks are missing


def json_lines(log: LogFile) -> Records:
    for number, line in enumerate(log.text, 1):
        if line.strip():
            yield _json_record(log.display, number, line)


def _json_record(display: str, line: int, text: str) -> tuple[int, Record] | Issue:
    try:
        value = json.loads(text)
    except ValueError as error:
        return Issue(display, line, f"malformed JSON: {getattr(error, 'msg', error)}")
    return _object(display, line, value)


def _object(display: str, line: int, value: object) -> tuple[int, Record] | Issue:
    if not isinstance(value, dict):
        return Issue(display, line, f"a row must be a JSON object, not {type(value).__name__}")
    return line, {str(key).lower(): item for key, item in value.items()}


def json_array(log: LogFile) -> Records:
    """The objects of one JSON array, decoded one at a time from a read-ahead buffer.  A malformed element
    ends the array (where the next one starts cannot be known): an issue at its line."""
    decoder = json.JSONDecoder()
    buffer, ended = log.text.read(_JSON_READ), False
    at, line = _skip(buffer, 0, 1, "\ufeff")
    at += 1  # the "["
    while True:
        at, line = _skip(buffer, at, line, ",")
        if at < len(buffer) and buffer[at] == "]":
            return
        try:
            value, end = decoder.raw_decode(buffer, at)
        except ValueError as error:
            if ended:
                if at < len(buffer):
                    yield Issue(log.display, line, f"malformed JSON: {getattr(error, 'msg', error)}")
                return
            more = log.text.read(_JSON_READ)  # the element may go on past the read-ahead
            buffer, at, ended = buffer[at:] + more, 0, not more
            continue
        yield _object(log.display, line, value)
        line += buffer.count("\n", at, end)
        at = end


def _skip(buffer: str, at: int, line: int, separators: str) -> tuple[int, int]:
    """Past white space and ``separators`` from ``at``, counting the lines passed."""
    while at < len(buffer) and (buffer[at].isspace() or buffer[at] in separators):
        line += buffer[at] == "\n"
        at += 1
    return at, line


def sql_text(record: Record, *names: str) -> str | None:
    """The first of the named columns that holds a query's text: a string with more than white space (a JSON
    number or record in its place is no query)."""
    for name in names:
        value = record.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return None


def text(record: Record, *names: str) -> str | None:
    """The first of the named columns that holds a value, as text (None: none does; JSON null and an empty
    CSV field hold none)."""
    for name in names:
        value = record.get(name)
        if value is not None and value != "":
            if isinstance(value, dict | list):
                return json.dumps(value)  # a record in a column of text
            return value if isinstance(value, str) else str(value)
    return None
