"""A harvest's query logs, read into units: every row streamed, failed queries counted, identical statements
kept once (``fingerprint.py``) with their runs (``runs.py``), distinct queries in chunks that the pool
analyses like files.

What stays in memory is one entry per distinct statement (its 16-byte fingerprint and its runs) and the
distinct statements' text, which their analysis needs: never the log's rows.  A bad row is an error at its
line; past the first ``REPORTED_BAD_ROWS`` of a log they are counted, and one more issue says how many more
there were.

A log of a format read one row at a time (its module has ``row``: snowflake, bigquery, jsonl) exported as JSON
lines is read by several processes at once, each a stretch of whole lines of at least ``STRETCH`` bytes; their
distinct statements are merged in the order of the log, so the result is the one a single reader gives.
Formats whose rows depend on the rows before them (Postgres' sessions, Redshift's text in pieces) and CSV
(whose quoted fields may hold line breaks) are read by one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from types import ModuleType

from lineage_cli.errors import InputError
from lineage_cli.harvest.inputs.plan import HarvestOptions, Plan, Unit
from lineage_cli.harvest.inputs.querylog import bigquery, jsonl, postgres, redshift, snowflake
from lineage_cli.harvest.inputs.querylog.fingerprint import fingerprint
from lineage_cli.harvest.inputs.querylog.rows import LogFile, LogRow, each_row, json_lines
from lineage_cli.harvest.inputs.querylog.runs import LogQuery, QueryRuns, parse_time
from lineage_cli.model import Issue, Provenance
from lineage_cli.profiles import DialectProfile, load_profile

FORMATS: dict[str, ModuleType] = {
    "snowflake": snowflake,
    "bigquery": bigquery,
    "redshift": redshift,
    "postgres": postgres,
    "jsonl": jsonl,
}
CHUNK = 64  # distinct queries a unit: enough to pay for sending it to a worker, few enough to share out
REPORTED_BAD_ROWS = 1000
PROGRESS_ROWS = 20_000  # how often the reader says how far it is
STRETCH = 32 * 1024 * 1024  # the least a worker reads of a log read in parallel
_BLOCK = 1 << 20

ReadProgress = Callable[[str, int, int], None]  # (log, bytes read, rows read)


@dataclass(slots=True)
class LogCounts:
    """What the logs held: rows read, failed queries skipped, bad rows skipped, distinct statements kept."""

    rows: int = 0
    failed: int = 0
    bad: int = 0
    distinct: int = 0
    units: int = 0


@dataclass(frozen=True, slots=True)
class _Reading:
    """How a harvest reads its logs: what a worker that reads a stretch of one is sent."""

    log_format: str
    dialect: str
    databases: bool = True  # the rows' databases name the tables; False: names leave them out, as SQL files'


@dataclass(slots=True)
class _Part:
    """What a log, or a stretch of it, held: its distinct statements in the order of their first rows, their
    runs, the first issues of its bad rows, its counts, and (a stretch) how many lines it is."""

    queries: dict[bytes, tuple[LogQuery, QueryRuns]] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)
    rows: int = 0
    failed: int = 0
    bad: int = 0
    lines: int = 0


def log_dialect(log_format: str, dialect: str | None) -> str | None:
    """The dialect of a log's SQL: its warehouse's, or ``--dialect`` for the generic JSON lines."""
    reader = FORMATS.get(log_format)
    return (reader.DIALECT if reader is not None else None) or dialect


def add_query_logs(
    plan: Plan,
    paths: Iterable[str],
    log_format: str,
    options: HarvestOptions,
    on_read: ReadProgress | None = None,
    jobs: int = 1,
    databases: bool = True,
) -> LogCounts:
    """Read the logs at ``paths`` (``-``: standard input) into ``plan``: its units, the runs of each distinct
    query, the issues of bad rows and of logs that cannot be read.  ``jobs`` processes read a log that can be
    read in stretches; without ``databases``, the rows' databases are left out of table names."""
    if log_format not in FORMATS:
        raise InputError(f"unknown query log format {log_format!r}: {', '.join(FORMATS)}")
    options = replace(options, dialect=log_dialect(log_format, options.dialect))
    profile = load_profile(options.dialect)
    reading = _Reading(log_format, profile.name, databases)
    merged = _Merged(plan, options)
    for path in paths:
        try:
            parts = _parts(path, reading, jobs, on_read, merged.counts.rows)
            merged.add(path if path != "-" else "stdin", parts)
        except OSError as error:  # cannot be opened, or a read that fails half-way (a disk error, a vanished file)
            plan.issues.append(Issue(path, 0, f"cannot read query log: {error.strerror or error}"))
    merged.finish()
    return merged.counts


def _parts(path: str, reading: _Reading, jobs: int, on_read: ReadProgress | None, before: int) -> Iterator[_Part]:
    """The parts of one log, in its order: the whole log, or its stretches read by ``jobs`` processes."""
    reader = FORMATS[reading.log_format]
    size = os.path.getsize(path) if path != "-" and jobs > 1 and hasattr(reader, "row") else 0
    if size >= 2 * STRETCH and _starts_with(path, b"{"):
        yield from _stretches(path, reading, jobs, size, on_read, before)
        return
    log = LogFile(path)
    try:
        if on_read is not None:
            on_read(log.display, 0, before)  # the log's name, before its first rows are counted

        def progress(rows: int) -> None:
            if on_read is not None:
                on_read(log.display, log.position, before + rows)

        part = _collect(reader.rows(log), reading, progress)
        progress(part.rows)
    finally:
        log.close()
    yield part


def _collect(items: Iterable[LogRow | Issue], reading: _Reading, progress: Callable[[int], None]) -> _Part:
    part, profile = _Part(), load_profile(reading.dialect)
    for item in items:
        if isinstance(item, Issue):
            part.bad += 1
            if part.bad <= REPORTED_BAD_ROWS:
                part.issues.append(item)
            continue
        part.rows += 1
        if part.rows % PROGRESS_ROWS == 0:
            progress(part.rows)
        if item.failed:
            part.failed += 1
            continue
        database = _folded(profile, item.database) if reading.databases else None
        schema = _folded(profile, item.schema)
        key = fingerprint(item.sql, database, schema)
        entry = part.queries.get(key)
        if entry is None:
            entry = part.queries[key] = (LogQuery(item.sql, item.line, database, schema), QueryRuns())
        entry[1].add(parse_time(item.time), item.user)
    return part


class _Merged:
    """The parts of every log merged into the plan: a statement is the first part's that holds it."""

    def __init__(self, plan: Plan, options: HarvestOptions) -> None:
        self.plan, self.options = plan, options
        self.counts = LogCounts()
        self.seen: dict[bytes, QueryRuns] = {}

    def add(self, display: str, parts: Iterator[_Part]) -> None:
        chunk: list[LogQuery] = []
        offset, bad = 0, 0  # lines before the part, bad rows of the log before it
        try:
            for part in parts:
                for key, (query, runs) in part.queries.items():
                    known = self.seen.get(key)
                    if known is not None:
                        known.absorb(runs)
                        continue
                    query = replace(query, line=query.line + offset) if offset else query
                    self.seen[key] = self.plan.runs[Provenance(display, query.line)] = runs
                    chunk.append(query)
                    if len(chunk) == CHUNK:
                        self._add_unit(display, chunk)
                        chunk = []
                reported = part.issues[: max(0, REPORTED_BAD_ROWS - bad)]
                self.plan.issues += [issue._replace(line=issue.line + offset) for issue in reported]
                bad += part.bad
                offset += part.lines
                self.counts.rows += part.rows
                self.counts.failed += part.failed
                self.counts.bad += part.bad
        finally:
            if chunk:
                self._add_unit(display, chunk)
            if bad > REPORTED_BAD_ROWS:
                message = f"{bad - REPORTED_BAD_ROWS} more bad rows, not reported one by one"
                self.plan.issues.append(Issue(display, 0, message))

    def _add_unit(self, display: str, chunk: list[LogQuery]) -> None:
        self.plan.units.append(Unit(display, self.options, queries=tuple(chunk)))
        self.counts.units += 1

    def finish(self) -> None:
        self.counts.distinct = len(self.seen)


def _stretches(
    path: str, reading: _Reading, jobs: int, size: int, on_read: ReadProgress | None, before: int
) -> Iterator[_Part]:
    """The parts of a JSON lines log read in stretches of whole lines by ``jobs`` processes, in order."""
    from concurrent.futures import ProcessPoolExecutor

    bounds = _line_bounds(path, size, max(jobs * 2, size // STRETCH))
    tasks = [(reading, path, start, end) for start, end in zip(bounds, bounds[1:], strict=False)]
    rows = before
    with ProcessPoolExecutor(min(jobs, len(tasks))) as pool:
        for (_, _, _, end), part in zip(tasks, pool.map(_read_stretch, tasks), strict=True):
            rows += part.rows
            if on_read is not None:
                on_read(path, end, rows)
            yield part


def _read_stretch(task: tuple[_Reading, str, int, int]) -> _Part:
    """One stretch of a JSON lines log, read in a worker process: its lines numbered from 1."""
    reading, path, start, end = task
    log = LogFile(path, start, end)
    try:
        rows = each_row(json_lines(log), log.display, FORMATS[reading.log_format].row)
        part = _collect(rows, reading, _unreported)
    finally:
        log.close()
    part.lines = _newlines(path, start, end)
    return part


def _unreported(rows: int) -> None:
    """A worker's progress: its part says how many rows it read when it is done."""


def _line_bounds(path: str, size: int, pieces: int) -> list[int]:
    """Where ``pieces`` stretches of about equal size start, each at the start of a line, and the end."""
    bounds = [0]
    with open(path, "rb") as file:
        for piece in range(1, pieces):
            file.seek(max(bounds[-1], size * piece // pieces))
            file.readline()  # to the end of the line this lands in
            if file.tell() < size and file.tell() > bounds[-1]:
                bounds.append(file.tell())
    return [*bounds, size]


def _newlines(path: str, start: int, end: int) -> int:
    count = 0
    with open(path, "rb") as file:
        file.seek(start)
        while start < end:
            block = file.read(min(_BLOCK, end - start))
            if not block:
                break
            count += block.count(b"\n")
            start += len(block)
    return count


def _starts_with(path: str, character: bytes) -> bool:
    """Whether the file's first byte that is not white space (or a byte-order mark) is ``character``."""
    with open(path, "rb") as file:
        return file.read(256).lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == character


def _folded(profile: DialectProfile, name: str | None) -> str | None:
    """A row's database or schema as the dialect folds names written without quotes (as the SQL's are)."""
    return profile.fold(name.strip()) if name is not None and name.strip() else None
