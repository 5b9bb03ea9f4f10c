"""Bad SQL never crashes a harvest: scripts of shuffled SQL words, punctuation and lines, in dialects with
and without semicolons, give statements and issues, each at a line of the script."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.sql.script import analyze_script

KEYWORDS = (
    "SELECT INSERT INTO UPDATE DELETE MERGE USING WHEN MATCHED THEN ELSE ELSIF END IF WHILE LOOP BEGIN TRY CATCH "
    "CREATE OR REPLACE PROCEDURE TABLE VIEW AS IS FROM JOIN ON WHERE GROUP BY ORDER SET EXEC GO DECLARE EXCEPTION "
    "RAISE EXIT CASE WITH UNION ALL LOAD DATA INPATH OVERWRITE DIRECTORY COPY UNLOAD TO CLONE SWAP CACHE TOP"
)
WORDS = [*KEYWORDS.split(), "a", "b", "t", "s.x", "dbo.t", "#tmp", "@v", "1", "'p'", ":=", "=", "+", ",", "(", ")"]
WORDS += [";", "*", "/", ".", "x"]
TOKENS = st.one_of(st.sampled_from(WORDS), st.sampled_from(["\n", "\nGO\n", " "]))
SCRIPTS = st.lists(TOKENS, max_size=60).map(" ".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sql=SCRIPTS, dialect=st.sampled_from(["hive", "tsql", "oracle", "snowflake"]))
def test_any_script_gives_statements_and_issues_never_an_exception(sql: str, dialect: str) -> None:
    script = analyze_script(sql, "fuzz.sql", dialect, catalog=SchemaCatalog())
    last_line = sql.count("\n") + 1
    assert all(1 <= issue.line <= last_line for issue in script.issues)
    assert all(1 <= statement.line <= last_line for statement in script.lineage)
    assert script.statements >= len(script.lineage)
