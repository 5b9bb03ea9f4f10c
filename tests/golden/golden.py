"""Loader for the golden column-lineage fixtures in ``fixtures/sql/columns/*.sql``.

The format is described in ``fixtures/sql/columns/README.md``: blocks that start at
``-- title:``, header lines, the SQL, then optional ``-- tables:`` / ``-- errors:`` /
``-- warnings:`` / ``-- columns:`` / ``-- expression:`` lines and ``-- expect:`` followed by one
``-- src -> dst KIND/SUBTYPE`` line per edge.  Line 1 of a case is the first line after its headers.

>>> case = next(c for c in load_cases() if c.file == "merge.sql")
>>> (case.id.startswith("merge.sql::"), case.dialect != "", bool(case.sql))
(True, True, True)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import REPO

FOLDER = REPO / "fixtures" / "sql" / "columns"
_META = re.compile(
    r"^--\s*(title|dialect|schema|vars|default_schema|tables|columns|errors|warnings|expression|expect):\s*(.*?)\s*$"
)
HEADERS = {"dialect", "schema", "vars", "default_schema"}


@dataclass
class Case:
    file: str
    title: str
    dialect: str = ""
    schema: dict | None = None
    vars: dict | None = None
    default_schema: str | None = None
    sql_lines: list[str] = field(default_factory=list)
    tables: set[str] | None = None  # None: not asserted
    columns: set[str] | None = None  # the target columns; None: not asserted
    errors: list[int] | None = None  # None: not asserted
    warnings: list[str] = field(default_factory=list)
    expressions: dict[str, str] | None = None  # target column -> its SQL expression; None: not asserted
    expected: list[str] = field(default_factory=list)  # as written: sorted "src -> dst KIND/SUBTYPE"
    state: str = "header"  # header -> sql -> trailer -> expect (while loading)

    @property
    def id(self) -> str:
        return f"{self.file}::{self.title}"

    @property
    def sql(self) -> str:
        lines = list(self.sql_lines)
        while lines and not lines[-1].strip():
            lines.pop()
        return "\n".join(lines) + "\n"


def _feed(case: Case, line: str) -> None:
    meta = _META.match(line)
    key, value = meta.groups() if meta else (None, None)
    if case.state == "header" and key in HEADERS:
        if key in ("schema", "vars"):
            value = json.loads(value)
        setattr(case, key, value)
    elif case.state in ("header", "sql") and key is None:
        case.state = "sql"
        case.sql_lines.append(line)
    elif key == "tables":
        case.tables = {e.strip() for e in value.split(";") if e.strip()}
    elif key == "columns":
        case.columns = {c.strip() for c in value.split(";") if c.strip()}
    elif key == "errors":
        case.errors = sorted(int(n) for n in re.split(r"[,\s]+", value) if n)
    elif key == "warnings":
        case.warnings = [w for w in re.split(r"[,\s]+", value) if w]
    elif key == "expression":  # `-- expression: schema.table.column = TEXT`, one line per column
        column, equals, text = value.partition(" = ")
        if not equals:
            raise ValueError(f"{case.id}: an expression line is `column = text`: {line!r}")
        case.expressions = {**(case.expressions or {}), column: text}
    elif key == "expect":
        case.state = "expect"
    elif case.state == "expect" and line.startswith("-- "):
        case.expected.append(" ".join(line[3:].split()))
    elif line.strip():
        raise ValueError(f"{case.id}: unexpected line {line!r}")
    if key in ("tables", "columns", "errors", "warnings", "expression"):
        case.state = "trailer"


def load_cases(folder: Path = FOLDER) -> list[Case]:
    cases: list[Case] = []
    for path in sorted(folder.glob("*.sql")):
        case: Case | None = None  # text before the first title is a file comment
        for line in path.read_text(encoding="utf-8").splitlines():
            meta = _META.match(line)
            if meta and meta.group(1) == "title":
                case = Case(path.name, meta.group(2))
                cases.append(case)
            elif case is not None:
                _feed(case, line)
    return cases
