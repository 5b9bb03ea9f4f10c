"""The token rewrites before the parse run only where a script's text may need them (``harvest/sql/rewrites.py``).

Each pass has a guard that must find every script the pass would change: where the guard finds nothing, the
pass must hand the tokens back as they were, or the guard would lose what the pass is for.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import TokenError

from lineage_cli.harvest.sql.rewrites import (
    KEYWORDLESS_INTERVAL,
    SCRIPT_CLAUSE,
    TABLE_FUNCTION,
    interval_literals,
    script_clauses,
    table_functions_as_sources,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sql"
GUARDED = [
    (SCRIPT_CLAUSE, script_clauses),
    (KEYWORDLESS_INTERVAL, interval_literals),
    (TABLE_FUNCTION, table_functions_as_sources),
]
# Pieces of Hive SQL the passes look for, or look like it, with comments where a token boundary may hold one.
FRAGMENTS = [
    "SELECT", "FROM t", "map", "MAP(k, v)", "reduce", "TRANSFORM (a)", "USING 'cat'", "AS k, v", "noop(", "ON",
    "( ON", "(/* c */ ON", "(-- c\nON", "PARTITION BY k", ")", "'1 2:3'", "2", "day", "DAY TO SECOND", "hours",
    "INTERVAL", "/* x */", "-- y\n", ",", ";", "\"3\"", "minute", "x.day", "on_time", "(", "WHERE a = 1",
]  # fmt: skip


def _texts(tokens: list) -> list[tuple[str, str]]:
    return [(token.token_type.name, token.text) for token in tokens]


def _unchanged_where_unmatched(sql: str) -> None:
    try:
        tokens = Dialect.get_or_raise("hive").tokenize(sql)
    except TokenError:
        return  # (a fragment soup, or another dialect's fixture, Hive's tokenizer refuses: no script to guard)
    for guard, rewrite in GUARDED:
        if not guard.may_hold(sql.lower()):
            assert _texts(rewrite(tokens)) == _texts(tokens), (rewrite.__name__, sql)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12).map(" ".join))
def test_a_pass_changes_nothing_where_its_guard_finds_nothing(sql):
    _unchanged_where_unmatched(sql)


def test_the_fixtures_a_guard_skips_are_the_ones_its_pass_leaves_alone():
    for path in sorted(FIXTURES.rglob("*.sql")):
        _unchanged_where_unmatched(path.read_text(encoding="utf-8"))


def test_each_guard_finds_its_construct_across_comments_and_case():
    assert SCRIPT_CLAUSE.may_hold("select Transform(a) using 'x'".lower())
    assert TABLE_FUNCTION.may_hold("FROM noop( /* why */\n on t)".lower())
    assert KEYWORDLESS_INTERVAL.may_hold("ts - '1 2:3' -- hours\n Day TO minute".lower())
    assert not KEYWORDLESS_INTERVAL.may_hold("SELECT dayofweek(d), x.day FROM t".lower())
