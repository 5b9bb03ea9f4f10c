"""A query log's queries and their runs: what the planner sends to the analysis, and what becomes ``frequency``.

``LogQuery`` is one distinct query of a log: its SQL, the row it was first logged at, and that row's
database and schema (folded, as the dialect folds names).  ``QueryRuns`` counts the rows that ran it
(identical statements by fingerprint, ``fingerprint.py``) and keeps the first and last time.
``record_runs`` puts them in the harvest's per-statement facts, which the store keeps in its meta
``modules`` and the emitters read as an edge's ``frequency`` (``emit/volumes.py``), like a flow manifest's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from lineage_cli.model import Provenance

if TYPE_CHECKING:
    from lineage_cli.harvest.assemble import Harvest

# The mean time between runs (seconds) up to which a query is said to run so often: the names the
# emitters draw (emit/style.py's FREQUENCY_DASHES), the largest first that the mean interval stays below.
_EVERY = (
    (5 * 60, "minutely"),
    (2 * 3600, "hourly"),
    (2 * 86400, "daily"),
    (10 * 86400, "weekly"),
    (45 * 86400, "monthly"),
    (120 * 86400, "quarterly"),
)
_SPACED_OFFSET = re.compile(r"\s+([+-]\d\d:?\d\d)$")
_EPOCH_MILLISECONDS = 10**11  # a number above it is an epoch in milliseconds (year 5138 in seconds)
USERS = 5  # the users of a query that are kept: who runs it, not an audit log


@dataclass(frozen=True, slots=True)
class LogQuery:
    """One distinct query of a log, as its first row logged it."""

    sql: str
    line: int  # the log row's first line: the query's FILE:LINE
    database: str | None = None
    schema: str | None = None


@dataclass(slots=True)
class QueryRuns:
    """How often one distinct query ran: rows counted, first and last time (epoch seconds, None: not known),
    and the first ``USERS`` users that ran it."""

    count: int = 0
    first: float | None = None
    last: float | None = None
    users: list[str] = field(default_factory=list)

    def add(self, when: float | None, user: str | None = None) -> None:
        self.count += 1
        self._at(when)
        if user is not None and len(self.users) < USERS and user not in self.users:
            self.users.append(user)

    def absorb(self, other: QueryRuns) -> None:
        """Count ``other``'s runs too: those of the same statement in another stretch of the log."""
        self.count += other.count
        self._at(other.first)
        self._at(other.last)
        self.users += [user for user in other.users if user not in self.users][: USERS - len(self.users)]

    def _at(self, when: float | None) -> None:
        if when is not None:
            self.first = when if self.first is None else min(self.first, when)
            self.last = when if self.last is None else max(self.last, when)

    def facts(self, where: Provenance) -> dict[str, object]:
        """What the store keeps for the query's statements: ``frequency`` (a name the emitters draw) and
        ``runs``, ``first_run``, ``last_run``, ``users``, ``query_log`` (its first row)."""
        found: dict[str, object] = {"frequency": self.frequency(), "runs": self.count}
        if self.first is not None and self.last is not None:
            found["first_run"], found["last_run"] = _iso(self.first), _iso(self.last)
        if self.users:
            found["users"] = list(self.users)
        found["query_log"] = f"{where.file}:{where.line}"
        return found

    def frequency(self) -> str:
        """``once``, or the period its mean interval between runs stays below, or ``N runs`` without times.

        >>> QueryRuns(1).frequency(), QueryRuns(25, 0.0, 86400.0).frequency(), QueryRuns(3).frequency()
        ('once', 'hourly', '3 runs')
        """
        if self.count <= 1:
            return "once"
        if self.first is None or self.last is None:
            return f"{self.count} runs"
        interval = (self.last - self.first) / (self.count - 1)
        return next((name for limit, name in _EVERY if interval < limit), "yearly")


def parse_time(value: object) -> float | None:
    """A log's timestamp as epoch seconds: ISO 8601 (``T`` or a space, ``Z``, an offset or a trailing ``UTC``
    zone name as Postgres and BigQuery write it) or an epoch number (seconds or milliseconds).  A zone-less
    time is taken as UTC; None for anything else (a row keeps its query when its time cannot be read).

    >>> parse_time("2024-05-01 10:00:00.5 UTC"), parse_time("2024-05-01T10:00:00Z"), parse_time(1714557600000)
    (1714557600.5, 1714557600.0, 1714557600.0)
    >>> parse_time("2024-05-01 03:00:00.000 -0700"), parse_time("yesterday")
    (1714557600.0, None)
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return value / 1000 if value > _EPOCH_MILLISECONDS else float(value)
    text = str(value).strip()
    for zone in (" UTC", " GMT", " Z"):
        text = text.removesuffix(zone)
    text = _SPACED_OFFSET.sub(r"\1", text)  # Snowflake's `2024-05-01 01:00:03.120 -0700`
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        try:
            return parse_time(float(text))
        except ValueError:
            return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat().replace("+00:00", "Z")


def record_runs(result: Harvest, transformations: list[str], runs: Mapping[Provenance, QueryRuns]) -> None:
    """Each transformation of a log's query gets its query's runs as facts, under its own name."""
    for transformation in transformations:
        where = result.graph.provenance.get(transformation)
        found = runs.get(where) if where is not None else None
        if found is not None and where is not None:
            result.modules[transformation] = found.facts(where)
