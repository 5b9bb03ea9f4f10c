"""sqllineage's own SQL test suite, answered by our engine: a differential check against a peer tool.

The suite (tests/sql of the sqllineage sdist, fetched by ``make test``'s install step through
``tests/peer/fetch.py`` into ``.cache/peer``) runs with its
``helpers.py`` replaced by ``tests/peer/helpers.py``, which answers each case with ``parse_sql`` and
maps the two tools' naming conventions; ``tests/peer/shim`` stands in for the few sqllineage classes
the cases import, so sqllineage itself is never installed.  Every case that disagrees is listed
below with the reason: the test fails when a new case disagrees, and when a listed one stops
disagreeing (then the list is out of date).  The test never touches the network: without the cached
sdist it is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.conftest import REPO, skip_for_want_of
from tests.peer.fetch import SDIST, VERSION

PEER = REPO / "tests" / "peer"

# Why our answers differ from the suite's expectations, on purpose (docs/lineage-semantics.md) or for want
# of a parser, and the cases each reason covers ("<file>::<test>" under the suite's tests/sql).
NO_DATA = "DDL, renames and drops move no data: no lineage here"
CACHED = "Spark's CACHE TABLE t AS SELECT makes t from the query: lineage passes through it here"
SCRIPT_ENDS = "each statement of a procedure counts: its intermediate table is both read and written"
UNPARSED = "sqlglot does not read this SQL (or this dialect)"
UNNAMED = "an unaliased expression writes the engine's column name (_c0, or the cast column), not its text"
UNRESOLVED = "an unresolved column is ?.col here; without a catalog both readings of a name are kept"
POSITIONS = "set operations and qualified stars follow the SQL standard here"
KNOWN = {
    NO_DATA: [
        "table/test_create.py::test_create",
        "table/test_create.py::test_create_if_not_exist",
        "table/test_create.py::test_create_like",
        "table/test_create_dialect_specific.py::test_create_bucket_table_in_spark[databricks]",
        "table/test_create_dialect_specific.py::test_create_bucket_table_in_spark[sparksql]",
        "table/test_create_dialect_specific.py::test_create_using_serde[databricks]",
        "table/test_create_dialect_specific.py::test_create_using_serde[hive]",
        "table/test_create_dialect_specific.py::test_create_using_serde[sparksql]",
        "table/multiple_statements/test_tmp_table.py::test_alter_source_table_name",
        "table/multiple_statements/test_tmp_table.py::test_alter_target_table_name",
        "table/multiple_statements/test_tmp_table.py::test_drop_after_create",
        "table/test_other_without_lineage.py::test_delete_from_table",
    ],
    CACHED: [
        "table/test_other_without_lineage_dialect_specific.py::test_cache_table[databricks]",
        "table/test_other_without_lineage_dialect_specific.py::test_cache_table[sparksql]",
    ],
    SCRIPT_ENDS: [
        "table/test_procedure_dialect_specific.py::test_procedure_multiple_statements[bigquery]",
        "table/test_procedure_dialect_specific.py::test_procedure_multiple_statements[oracle]",
        "table/test_procedure_dialect_specific.py::test_procedure_multiple_statements[tsql]",
    ],
    UNPARSED: [
        "table/test_select_dialect_specific.py::test_select_with_schema_in_backtick[athena]",
        "table/test_select_dialect_specific.py::test_select_with_table_name_in_backtick[athena]",
    ],
    UNNAMED: [
        "column/test_column_select_case_when.py::test_select_column_using_case_when",
        "column/test_column_select_cast.py::test_select_column_using_cast",
        "column/test_column_select_column.py::test_select_columns",
        "column/test_column_select_expression.py::test_select_column_using_expression",
        "column/test_column_select_expression.py::test_select_column_using_expression_in_parenthesis",
        "column/test_column_select_expression.py::"
        "test_select_column_using_expression_with_table_qualifier_without_column_alias",
        "column/test_column_select_function.py::test_select_column_using_function",
    ],
    UNRESOLVED: [
        "column/test_column_select_column.py::test_select_unqualified_column_from_join_is_unresolved",
        "column/test_column_select_lateral_alias_ref.py::test_column_disable_lateral_ref_within_subquery",
    ],
    POSITIONS: [
        "column/test_column_select_column.py::test_select_column_wildcard_with_qualifier",
        "column/test_column_select_from_cte.py::test_nested_cte_with_partial_wildcard_expansion",
        "column/test_column_select_union.py::test_union_where_later_branch_introduces_new_output_columns",
    ],
}


@pytest.fixture(scope="module")
def peer_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sqllineage's tests/sql, with our helpers in place of theirs."""
    if not SDIST.is_file():
        skip_for_want_of(f"{SDIST} (`make test` fetches it with `python -m tests.peer.fetch`)")
    suite = tmp_path_factory.mktemp("peer") / "tests"
    with tarfile.open(SDIST) as archive:
        prefix = f"sqllineage-{VERSION}/tests/"
        members = [m for m in archive.getmembers() if m.name.startswith(prefix) and "/core/" not in m.name]
        for member in members:
            member.name = member.name.removeprefix(prefix)
        archive.extractall(suite, members=members, filter="data")
    (suite / "sql" / "table" / "multiple_statements" / "test_split.py").unlink()  # tests their splitter
    shutil.copy(PEER / "helpers.py", suite / "helpers.py")
    return suite


def test_peer_suite_disagrees_only_where_known(peer_suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(PEER / "shim"), str(REPO)))}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", "--no-header", "sql"]
    run = subprocess.run(command, cwd=peer_suite, env=env, capture_output=True, text=True)
    assert " passed" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    with capsys.disabled():  # the agreement, for the record (`pytest -s` not needed)
        print(f"\nsqllineage {VERSION} suite: {run.stdout.strip().splitlines()[-1]}")
    failed = {
        line.removeprefix("FAILED sql/").split(" - ")[0]
        for line in run.stdout.splitlines()
        if line.startswith("FAILED")
    }
    known = {case for cases in KNOWN.values() for case in cases}
    assert sorted(failed - known) == [], "new disagreements:\n" + run.stdout[-6000:]
    assert sorted(known - failed) == [], "listed cases that agree now: take them off the list"
