"""Statement lines around blocks and run commands: T-SQL `IF ... BEGIN ...; END ELSE BEGIN ...; END`, SQL*Plus's
`/` line and its line commands keep every statement at its own line.  Their lineage is golden
(fixtures/sql/columns/tsql_blocks.sql, sqlplus.sql)."""

from __future__ import annotations

import pytest

from lineage_cli import parse_sql

IF_ELSE = """\
IF 1=1
BEGIN
  INSERT INTO dbo.a SELECT x FROM dbo.s;
END
ELSE
BEGIN
  INSERT INTO dbo.b SELECT y FROM dbo.s;
END
"""


@pytest.mark.parametrize(
    ("sql", "dialect", "expected"),
    [
        (IF_ELSE, "tsql", [("insert", 3, ["dbo.a"]), ("insert", 7, ["dbo.b"])]),
        (IF_ELSE.replace(";", ""), "tsql", [("insert", 3, ["dbo.a"]), ("insert", 7, ["dbo.b"])]),
        (
            IF_ELSE.replace("END\nELSE\nBEGIN", "END ELSE BEGIN"),
            "tsql",
            [("insert", 3, ["dbo.a"]), ("insert", 5, ["dbo.b"])],
        ),
        (
            "INSERT INTO a SELECT x FROM s;\n/\nINSERT INTO b SELECT y FROM s;\n/\n",
            "oracle",
            [("insert", 1, ["a"]), ("insert", 3, ["b"])],
        ),
        (
            "INSERT INTO a SELECT x FROM s\n/\nINSERT INTO b SELECT y FROM s\n/\n",
            "oracle",
            [("insert", 1, ["a"]), ("insert", 3, ["b"])],
        ),
        (
            "BEGIN INSERT INTO a SELECT x FROM s; END;\n/\nINSERT INTO b SELECT y FROM s;\n",
            "oracle",
            [("insert", 1, ["a"]), ("insert", 3, ["b"])],
        ),
        (  # SQL*Plus line commands end at their line, a `-` continues one onto the next
            "DEFINE d = &1\nPROMPT a -\n  b\nINSERT INTO a SELECT x FROM s;\nREM x\nINSERT INTO b SELECT y FROM s;\n",
            "oracle",
            [("insert", 4, ["a"]), ("insert", 6, ["b"])],
        ),
        (  # compound assignments keep the statements after them at their lines
            "UPDATE t SET t.x += 1\nFROM dbo.tgt AS t\nSET @n *= 2\nINSERT INTO dbo.c SELECT y FROM dbo.d\n",
            "tsql",
            [("update", 1, ["dbo.tgt"]), ("insert", 4, ["dbo.c"])],
        ),
    ],
)
def test_statements_keep_their_lines(sql: str, dialect: str, expected: list[tuple[str, int, list[str]]]):
    result = parse_sql(sql, dialect=dialect)
    assert result["errors"] == []
    assert [(s["type"], s["line"], s["targets"]) for s in result["statements"]] == expected


def test_a_script_the_loop_guard_passes_over_holds_no_loop_or_cursor_its_pieces_would_show() -> None:
    # OpenLoops looks at no piece of a script whose text has no LOOP, DO or CURSOR word: over every golden case,
    # the records and variables it finds are the ones a look at every piece finds
    from sqlglot.dialects.dialect import Dialect

    from lineage_cli.harvest.sql.loops import OpenLoops
    from lineage_cli.harvest.sql.split import _split_tokens
    from lineage_cli.profiles import load_profile
    from tests.golden.golden import load_cases

    scripts = [(case.dialect, case.sql, case.id) for case in load_cases()] + [
        ("bigquery", "FOR r IN (SELECT id FROM ds.s) DO\n INSERT INTO ds.t (id) VALUES (r.id);\nEND FOR;", "for do"),
        ("postgres", "DECLARE c CURSOR FOR SELECT id FROM s;", "a cursor alone"),
    ]
    for dialect, sql, name in scripts:
        engine = Dialect.get_or_raise(load_profile(dialect).sqlglot_dialect)
        try:
            tokens = engine.tokenize(sql)
        except Exception:  # noqa: BLE001 - a case broken on purpose: nothing to split
            continue
        guarded, every = OpenLoops(engine, sql), OpenLoops(engine, sql)
        every.possible = True
        for chunk in _split_tokens(tokens):
            assert [t.text for t in guarded.see(chunk)] == [t.text for t in every.see(chunk)], name
            assert guarded.loops == every.loops and guarded.cursors == every.cursors, name
