"""Golden column lineage: every case of fixtures/sql/columns/*.sql through ``lineage_cli.parse_sql``.

The expected edges were written by reasoning about the SQL against the rules in
fixtures/sql/columns/README.md, never by pasting what an engine printed.  A case
passes only on an exact match: the set of column edges over all statements, the
table edges when ``-- tables:`` is given, the target columns when ``-- columns:`` is, the error
lines when ``-- errors:`` is, every target column's SQL expression when ``-- expression:`` lines are.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
import sqlglot

from lineage_cli.harvest.sql.split import parse_script  # noqa: E402
from lineage_cli.profiles import load_profile  # noqa: E402
from tests.golden.golden import FOLDER, load_cases

CASES = load_cases()
EDGE = re.compile(r"^(\?\.\S+|\S+) -> (\S+) (PROJECTION|PREDICATE)/([A-Z_]+)$")
PROJECTION = {"IDENTITY", "TRANSFORMATION", "TRANSFORMATION_MASKING", "AGGREGATION", "AGGREGATION_MASKING"}
PREDICATE = {"FILTER", "JOIN", "GROUP_BY", "SORT", "WINDOW", "CONDITIONAL"}
PLACEHOLDERS = [r"\$\{(?:hivevar:|hiveconf:)?(\w+)\}", r"#(\w+)#", r"\{\{\s*(\w+)\s*\}\}", r"@(\w+)@", r"&&?(\w+)\.?"]


def substitute(sql: str, variables: dict | None) -> str:
    """The placeholder styles of ``--var``, for the parse check only (the engine does its own)."""
    for pattern in PLACEHOLDERS if variables else ():
        sql = re.sub(pattern, lambda m: str(variables.get(m.group(1), m.group(0))), sql)
    return sql


def edge_line(column: dict) -> str:
    return f"{column['source']} -> {column['target']} {column['kind'].upper()}/{column['subtype'].upper()}"


# ----------------------------------------------------------------------------- the corpus itself


def test_loader_reads_well_formed_cases():
    assert CASES, f"no cases under {FOLDER}"
    ids = Counter(case.id for case in CASES)
    assert not [i for i, n in ids.items() if n > 1], "duplicate file::title ids"
    for case in CASES:
        # `pytest -k "count or loader"` selects the corpus checks: keep those words out of titles.
        assert not re.search(r"count|loader", case.title), f"{case.id}: rename (clashes with -k selection)"
        assert case.dialect, f"{case.id}: no -- dialect:"
        assert case.sql.strip() and case.sql_lines[0].strip(), f"{case.id}: SQL must start right after the headers"
        assert case.expected == sorted(set(case.expected)), f"{case.id}: expected edges must be sorted and unique"
        for line in case.expected:
            match = EDGE.match(line)
            assert match, f"{case.id}: malformed edge {line!r}"
            kind, subtype = match.group(3), match.group(4)
            assert subtype in (PROJECTION if kind == "PROJECTION" else PREDICATE), f"{case.id}: {line!r}"
        for marker in case.warnings:
            assert marker.startswith("?."), f"{case.id}: warnings lists unresolved markers ?.col"
            assert any(line.startswith(marker + " ") for line in case.expected), f"{case.id}: {marker} not in edges"


# sqlglot cannot parse these whole: errors on purpose; PL/SQL and T-SQL routines, T-SQL without semicolons,
# Teradata's column phrases, Hive CLI scripts, view and CTAS storage clauses, statements sqlglot does not read
BROKEN = ("errors.sql", "approximate.sql")  # statements that do not parse, on purpose
WHOLE = (
    *BROKEN,
    "procedures.sql",
    "tsql_batches.sql",
    "sqlplus.sql",
    "notebooks.sql",
    "column_phrases.sql",
    "hive_scripts.sql",
    "storage_clauses.sql",
    "unread_statements.sql",
)


@pytest.mark.parametrize("case", [c for c in CASES if c.file not in WHOLE], ids=lambda c: c.id)
def test_loader_sql_parses_with_sqlglot(case):
    sqlglot.parse(substitute(case.sql, case.vars), read=load_profile(case.dialect).sqlglot_dialect)


@pytest.mark.parametrize("case", [c for c in CASES if c.file in WHOLE and c.file not in BROKEN], ids=lambda c: c.id)
def test_loader_routines_and_batches_parse_statement_by_statement(case):
    """Each statement, as the splitter cuts them, parses with sqlglot on its own."""
    profile = load_profile(case.dialect)
    statements = list(
        parse_script(
            case.sql,
            profile.sqlglot_dialect,
            optional_semicolons=profile.optional_semicolons,
            client_commands=profile.client_commands,
            unread_statements=profile.unread_statements,
        )
    )
    assert [s.error for s in statements if s.error] == []
    assert any(s.expression is not None for s in statements)


def test_loader_error_cases_point_at_broken_lines():
    for case in (c for c in CASES if c.file in BROKEN):
        assert case.errors, f"{case.id}: a {case.file} case needs -- errors:"
        lines = case.sql.splitlines()
        for number in case.errors:
            try:
                sqlglot.parse(lines[number - 1], read=load_profile(case.dialect).sqlglot_dialect)
            except (sqlglot.ParseError, sqlglot.TokenError, TypeError):  # (TypeError: its parser crashed on it)
                continue
            pytest.fail(f"{case.id}: line {number} is not broken for sqlglot")


def test_corpus_count_and_dialects():
    dialects = Counter(case.dialect for case in CASES)
    assert len(CASES) >= 150, f"{len(CASES)} cases"
    assert len(dialects) >= 10, dict(dialects)


# ----------------------------------------------------------------------------- the engine against it


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_golden_columns(case):
    from lineage_cli import parse_sql

    result = parse_sql(
        case.sql,
        dialect=case.dialect,
        schema=case.schema,
        variables=case.vars,
        default_schema=case.default_schema,
        file=case.file,
    )
    statements = result["statements"]
    got = {edge_line(column) for statement in statements for column in statement["columns"]}
    expected = set(case.expected)
    assert sorted(got) == sorted(expected), (
        f"\nmissing: {sorted(expected - got)}\nunexpected: {sorted(got - expected)}\nerrors: {result['errors']}"
    )
    if case.tables is not None:
        # `~>`: an edge of a statement that did not parse, read approximately from its tokens
        arrows = {True: "~>", False: "->"}
        tables = {
            f"{s} {arrows[st.get('approximate', False)]} {t}"
            for st in statements
            for s in st["sources"]
            for t in st["targets"]
        }
        assert sorted(tables) == sorted(case.tables)
    if case.columns is not None:
        assert sorted({c for st in statements for c in st["target_columns"]}) == sorted(case.columns)
    if case.errors is not None:
        assert sorted({error["line"] for error in result["errors"]}) == case.errors, result["errors"]
    if case.expressions is not None:  # every target column's expression, over all statements (the first wins)
        found: dict[str, str] = {}
        for statement in statements:
            for column, text in statement["expressions"].items():
                found.setdefault(column, text)
        assert found == case.expressions
    for marker in case.warnings:
        column = marker[2:]
        notes = list(result.get("warnings", [])) + list(result["errors"])
        assert any(column in str(note) for note in notes), f"no warning names {column}: {notes}"
