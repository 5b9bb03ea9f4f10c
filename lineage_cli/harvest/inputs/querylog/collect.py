"""A harvest's query logs, read into units: every row streamed, failed queries counted, identical statements
kept once (``fingerprint.py``) with their runs (``runs.py``), distinct queries in chunks that the pool
analyses like files.

What stays in memory is one entry per distinct statement (its 16-byte fingerprint and its runs) and the
distinct statements' text, which their analysis needs: never the log's rows.  A bad row is an error at its
line; past the first ``REPORTED_BAD_ROWS`` of a log they are counted, and one more issue says how many more
there were.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from types import ModuleType

from lineage_cli.errors import InputError
from lineage_cli.harvest.inputs.plan import HarvestOptions, Plan, Unit
from lineage_cli.harvest.inputs.querylog import bigquery, jsonl, postgres, redshift, snowflake
from lineage_cli.harvest.inputs.querylog.fingerprint import fingerprint
from lineage_cli.harvest.inputs.querylog.rows import LogFile
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

ReadProgress = Callable[[str, int, int], None]  # (log, bytes read, rows read)


@dataclass(slots=True)
class LogCounts:
    """What the logs held: rows read, failed queries skipped, bad rows skipped, distinct statements kept."""

    rows: int = 0
    failed: int = 0
    bad: int = 0
    distinct: int = 0
    units: int = 0


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
) -> LogCounts:
    """Read the logs at ``paths`` (``-``: standard input) into ``plan``: its units, the runs of each distinct
    query, the issues of bad rows and of logs that cannot be read."""
    if log_format not in FORMATS:
        raise InputError(f"unknown query log format {log_format!r}: {', '.join(FORMATS)}")
    reader = FORMATS[log_format]
    options = replace(options, dialect=log_dialect(log_format, options.dialect))
    profile = load_profile(options.dialect)
    counts, seen = LogCounts(), {}
    for path in paths:
        try:
            log = LogFile(path)
        except OSError as error:
            plan.issues.append(Issue(path, 0, f"cannot read query log: {error.strerror or error}"))
            continue
        try:
            _read(plan, log, reader, profile, options, counts, seen, on_read)
        except OSError as error:  # a read that fails half-way (a disk error, a file removed on a network share)
            plan.issues.append(Issue(log.display, 0, f"cannot read query log: {error.strerror or error}"))
        finally:
            log.close()
    counts.distinct = len(seen)
    return counts


def _read(
    plan: Plan,
    log: LogFile,
    reader: ModuleType,
    profile: DialectProfile,
    options: HarvestOptions,
    counts: LogCounts,
    seen: dict[bytes, QueryRuns],
    on_read: ReadProgress | None,
) -> None:
    chunk: list[LogQuery] = []
    bad_before = counts.bad
    if on_read is not None:
        on_read(log.display, 0, counts.rows)  # the log's name, before its first rows are counted
    for item in reader.rows(log):
        if isinstance(item, Issue):
            counts.bad += 1
            if counts.bad - bad_before <= REPORTED_BAD_ROWS:
                plan.issues.append(item)
            continue
        counts.rows += 1
        if on_read is not None and counts.rows % PROGRESS_ROWS == 0:
            on_read(log.display, log.position, counts.rows)
        if item.failed:
            counts.failed += 1
            continue
        database, schema = _folded(profile, item.database), _folded(profile, item.schema)
        key = fingerprint(item.sql, database, schema)
        runs = seen.get(key)
        if runs is None:
            runs = seen[key] = QueryRuns()
            plan.runs[Provenance(log.display, item.line)] = runs
            chunk.append(LogQuery(item.sql, item.line, database, schema))
            if len(chunk) == CHUNK:
                _add_unit(plan, log.display, options, chunk, counts)
                chunk = []
        runs.add(parse_time(item.time))
    if chunk:
        _add_unit(plan, log.display, options, chunk, counts)
    unreported = counts.bad - bad_before - REPORTED_BAD_ROWS
    if unreported > 0:
        plan.issues.append(Issue(log.display, 0, f"{unreported} more bad rows, not reported one by one"))
    if on_read is not None:
        on_read(log.display, log.position, counts.rows)


def _add_unit(plan: Plan, display: str, options: HarvestOptions, chunk: list[LogQuery], counts: LogCounts) -> None:
    plan.units.append(Unit(display, options, queries=tuple(chunk)))
    counts.units += 1


def _folded(profile: DialectProfile, name: str | None) -> str | None:
    """A row's database or schema as the dialect folds names written without quotes (as the SQL's are)."""
    return profile.fold(name.strip()) if name is not None and name.strip() else None
