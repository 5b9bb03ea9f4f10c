"""One unit's analysis without its syntax trees, and its JSON form in the harvest cache.

``FileOutcome`` is what a worker sends back and what the cache keeps (``cache.py``).  The cache folder
may come from anywhere (CI restores it with ``actions/cache``), so it keeps plain JSON, and what it reads
back is checked field by field: ``outcome_from_data`` raises ``CacheDataError`` for any value of another
shape, type or vocabulary than this version writes, and the cache takes that as a miss.  The checks run
over whole lists at a time (``set(map(type, ...))``), as a harvest reads back tens of thousands of column
edges.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from lineage_cli.harvest.assemble import ColumnTuple
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.model import MAX_SQL_BYTES, PREDICATE_SUBTYPES, PROJECTION_SUBTYPES, Issue


class CacheDataError(ValueError):
    """Cache data of another shape than this version writes."""


@dataclass(slots=True)
class WriteRecord:
    target: str
    sources: list[str]
    is_view: bool


@dataclass(slots=True)
class StatementRecord:
    """A statement's lineage without its syntax tree: small to send between processes and to cache."""

    line: int
    type: str
    writes: list[WriteRecord]
    columns: list[ColumnTuple] = field(default_factory=list)
    target_columns: list[str] = field(default_factory=list)
    approximate: bool = False  # read from the tokens of a statement that did not parse
    expressions: dict[str, str] = field(default_factory=dict)  # target column -> its SQL expression's text
    sql: str = ""  # the statement's text (``model.bounded_sql``)
    dialect: str = ""  # the dialect profile it was read in


@dataclass(slots=True)
class FileOutcome:
    file: str
    statements: int = 0
    issues: list[Issue] = field(default_factory=list)
    lineage: list[StatementRecord] = field(default_factory=list)
    learned: SchemaCatalog | None = None  # what the file taught the catalog (DDL, CTAS/view outputs)
    defaults: dict[str, str] = field(default_factory=dict)  # parameterized dataset -> the real one it defaults to

    @property
    def unresolved(self) -> bool:
        return any(issue.level == "warning" for issue in self.issues)


_OUTCOME_FIELDS = frozenset(("file", "statements", "issues", "lineage", "learned", "defaults"))
_COLUMN_KINDS = frozenset(("projection", "predicate"))
# what assembling a column edge looks up
_SUBTYPES = frozenset(subtype.name for subtype in (*PROJECTION_SUBTYPES, *PREDICATE_SUBTYPES))
_LAST_LINE = 2**31 - 1  # the store keeps a statement's line as an i4


def outcome_data(outcome: FileOutcome) -> dict[str, object]:
    """The outcome as JSON data: records as arrays, a statement's column edges as one flat array of strings."""
    return {
        "file": outcome.file,
        "statements": outcome.statements,
        "issues": [issue_data(issue) for issue in outcome.issues],
        "lineage": [
            [
                s.line,
                s.type,
                [[w.target, w.sources, w.is_view] for w in s.writes],
                list(chain.from_iterable(s.columns)),
                s.target_columns,
                s.approximate,
                s.expressions,
                s.sql,
                s.dialect,
            ]
            for s in outcome.lineage
        ],
        "learned": outcome.learned.to_data() if outcome.learned is not None else None,
        "defaults": outcome.defaults,
    }


def outcome_from_data(data: Any) -> FileOutcome:
    """The outcome ``outcome_data`` made, from JSON data (``Any``: whatever the file held) checked field by field."""
    expect(type(data) is dict and data.keys() == _OUTCOME_FIELDS, "an outcome")
    expect(type(data["file"]) is str and type(data["statements"]) is int, "an outcome's file and count")
    expect(type(data["lineage"]) is list, "an outcome's statements")
    learned = data["learned"]
    return FileOutcome(
        data["file"],
        data["statements"],
        issues_from_data(data["issues"]),
        [_statement_from_data(statement) for statement in data["lineage"]],
        SchemaCatalog.from_data(learned) if learned is not None else None,
        string_map(data["defaults"]),
    )


def issue_data(issue: Issue) -> list[object]:
    return [issue.file, issue.line, issue.message, issue.col, issue.level]


def issues_from_data(data: Any) -> list[Issue]:
    expect(type(data) is list, "a list of issues")
    return [_issue_from_data(issue) for issue in data]


def _issue_from_data(data: Any) -> Issue:
    expect(type(data) is list and len(data) == 5, "an issue")
    file, line, message, col, level = data
    expect(type(file) is str and type(line) is int and type(message) is str, "an issue's place and message")
    expect((col is None or type(col) is int) and type(level) is str, "an issue's column and level")
    return Issue(file, line, message, col, level)


def _statement_from_data(data: Any) -> StatementRecord:
    expect(type(data) is list and len(data) == 9, "a statement")
    line, kind, writes, columns, target_columns, approximate, expressions, sql, dialect = data
    expect(type(line) is int and 0 <= line <= _LAST_LINE, "a statement's line")
    expect(type(kind) is str and type(writes) is list and type(approximate) is bool, "a statement's type and writes")
    expect(type(columns) is list and len(columns) % 4 == 0 and only(columns, str), "a statement's column edges")
    expect(set(columns[2::4]) <= _COLUMN_KINDS and set(columns[3::4]) <= _SUBTYPES, "a column edge's kind or subtype")
    expect(type(target_columns) is list and only(target_columns, str), "a statement's target columns")
    expect(type(sql) is str and len(sql) <= MAX_SQL_BYTES and type(dialect) is str, "a statement's text")
    edges = list(zip(columns[0::4], columns[1::4], columns[2::4], columns[3::4], strict=True))
    records = [_write_from_data(write) for write in writes]
    return StatementRecord(
        line, kind, records, edges, target_columns, approximate, string_map(expressions), sql, dialect
    )


def _write_from_data(data: Any) -> WriteRecord:
    expect(type(data) is list and len(data) == 3, "a write")
    target, sources, is_view = data
    expect(type(target) is str and type(sources) is list and only(sources, str) and type(is_view) is bool, "a write")
    return WriteRecord(target, sources, is_view)


def string_map(data: Any) -> dict[str, str]:
    """A JSON object of strings (its keys are strings by JSON's own rule)."""
    expect(type(data) is dict and only(data.values(), str), "a mapping of strings")
    return data


def only(values: Iterable[object], *types: type) -> bool:
    """Whether every value is of exactly one of ``types`` (``bool`` is no ``int`` here): one pass in C."""
    return set(map(type, values)) <= set(types)


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise CacheDataError(f"unexpected {what}")
