"""The public API of ``lineage_cli/__init__.py``: its names resolve, cost ``import lineage_cli`` nothing
heavy, answer as the commands do, and report errors as ``LineageError``s."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import lineage_cli
from lineage_cli.cli import cli
from tests.conftest import REPO, WAREHOUSE

PUBLIC = ["harvest", "parse_sql", "open_store", "up", "down", "path", "rollup", "Store", "LineageResult", "WalkPlan"]


def cli_json(store: Path, *command: str) -> dict:
    outcome = CliRunner().invoke(cli, [*command, "--store", str(store), "--format", "json"])
    assert outcome.exit_code == 0, outcome.output
    return json.loads(outcome.output)


def test_every_public_name_resolves_is_listed_and_documented() -> None:
    assert set(lineage_cli.__all__) == {"__version__", "LineageError", *PUBLIC}
    assert set(lineage_cli.__all__) <= set(dir(lineage_cli))
    for name in [*PUBLIC, "LineageError"]:
        value = getattr(lineage_cli, name)
        assert value.__doc__, name
        if callable(value) and not isinstance(value, type):
            assert "Args:" in value.__doc__ and "Returns:" in value.__doc__, name
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        lineage_cli.nothing  # noqa: B018


def test_the_classes_are_the_stages_own() -> None:
    from lineage_cli.errors import LineageError
    from lineage_cli.walk.lineage_store import LineageStore
    from lineage_cli.walk.result import LineageResult
    from lineage_cli.walk.walkplan import WalkPlan

    assert (lineage_cli.Store, lineage_cli.LineageResult, lineage_cli.WalkPlan, lineage_cli.LineageError) == (
        LineageStore,
        LineageResult,
        WalkPlan,
        LineageError,
    )


def test_importing_the_api_imports_nothing_heavy() -> None:
    probe = (
        "import sys, lineage_cli\n"
        "heavy = ('sqlglot', 'numpy', 'rich', 'click', 'yaml', 'logging', 'pyspark')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO)
    assert run.stdout.strip() == "[]"


def test_harvest_stays_the_function_once_the_harvest_stage_is_imported() -> None:
    import lineage_cli.harvest.batch  # noqa: F401 - the stage of the same name

    assert callable(lineage_cli.harvest) and lineage_cli.harvest.__module__ == "lineage_cli"


def test_up_down_path_and_rollup_answer_what_the_commands_print(warehouse_store: Path) -> None:
    store = lineage_cli.open_store(warehouse_store)
    assert isinstance(store, lineage_cli.Store)
    upstream = lineage_cli.up(store, "mart.sales_daily", depth=2)
    assert isinstance(upstream, lineage_cli.LineageResult)
    assert upstream.to_dict() == cli_json(warehouse_store, "up", "mart.sales_daily", "--depth", "2")
    impact = lineage_cli.down(store, "stg.pos_sales", walkplan="impact")
    assert impact.to_dict() == cli_json(warehouse_store, "down", "stg.pos_sales", "--walkplan", "impact")
    route = lineage_cli.path(store, "stg.pos_sales", "mart.sales_daily")
    assert route.to_dict() == cli_json(warehouse_store, "path", "stg.pos_sales", "mart.sales_daily")
    by_schema = lineage_cli.rollup(store, upstream, "schema")
    command = ("up", "mart.sales_daily", "--depth", "2", "--level", "schema")
    assert by_schema.to_dict() == cli_json(warehouse_store, *command)
    assert {node.kind for node in by_schema.nodes} == {"schema"}


def test_a_rollup_to_workflows_answers_what_the_level_option_prints(flow_store: Path) -> None:
    # --level workflow walks with the statements, to lift them: through the API, the walk asks for them
    store = lineage_cli.open_store(flow_store)
    steps = lineage_cli.up(store, "dwh.sales_stats", show_transformations=True)
    by_workflow = lineage_cli.rollup(store, steps, "workflow")
    assert by_workflow.to_dict() == cli_json(flow_store, "up", "dwh.sales_stats", "--level", "workflow")
    assert {"wf_sales", "wf_ingest"} <= {node.name for node in by_workflow.nodes}
    route = lineage_cli.rollup(
        store, lineage_cli.path(store, "ods.orders", "dwh.sales_stats", show_transformations=True), "module"
    )
    assert route.to_dict() == cli_json(flow_store, "path", "ods.orders", "dwh.sales_stats", "--level", "module")


def test_a_path_search_cut_short_says_so(warehouse_store: Path) -> None:
    store = lineage_cli.open_store(warehouse_store)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cut = lineage_cli.path(store, "stg.pos_sales", "mart.sales_daily", all_paths=True, max_paths=1)
        whole = lineage_cli.path(store, "stg.pos_sales", "mart.sales_daily", all_paths=True)
    assert [str(warning.message) for warning in caught] == ["showing the first 1 paths; raise max_paths for more"]
    assert caught[0].filename == __file__ and len(cut.edges) < len(whole.edges)


def test_errors_are_lineage_errors_with_the_commands_exit_codes(warehouse_store: Path, tmp_path: Path) -> None:
    store = lineage_cli.open_store(warehouse_store)
    with pytest.raises(lineage_cli.LineageError, match="no table, view or column named 'mart.sales_dayly'") as unknown:
        lineage_cli.up(store, "mart.sales_dayly")
    assert unknown.value.exit_code == 1
    with pytest.raises(lineage_cli.LineageError, match="no path from") as no_path:
        lineage_cli.path(store, "mart.sales_daily", "stg.pos_sales")
    assert no_path.value.exit_code == 1
    with pytest.raises(lineage_cli.LineageError, match="unknown level 'galaxy'") as level:
        lineage_cli.rollup(store, lineage_cli.up(store, "mart.sales_daily"), "galaxy")
    assert level.value.exit_code == 1
    damaged = tmp_path / "damaged.lin"
    damaged.write_bytes(warehouse_store.read_bytes()[:200])
    with pytest.raises(lineage_cli.LineageError, match="damaged.lin") as bad_store:
        lineage_cli.open_store(damaged)
    assert bad_store.value.exit_code == 2
    with pytest.raises(lineage_cli.LineageError, match="unknown dialect 'klingon'") as bad_input:
        lineage_cli.parse_sql("SELECT 1", dialect="klingon")
    assert bad_input.value.exit_code == 2


def test_harvest_takes_what_lineage_harvest_takes(tmp_path: Path) -> None:
    harvested = lineage_cli.harvest([WAREHOUSE], schema={"stg.pos_sales": ["sale_id"]}, cache_dir=tmp_path / "cache")
    assert (harvested.files, harvested.statements, harvested.errors) == (16, 47, [])
    again = lineage_cli.harvest([WAREHOUSE], schema={"stg.pos_sales": ["sale_id"]}, cache_dir=tmp_path / "cache")
    assert again.recalled is not None and again.statements == 47
    with pytest.raises(lineage_cli.LineageError, match="missing: no such file or directory") as missing:
        lineage_cli.harvest([tmp_path / "missing"])
    assert missing.value.exit_code == 2


def test_parse_sql_reads_a_schema_mapping_once_and_each_call_learns_alone() -> None:
    # the catalog of a mapping is prepared once (``schema._prepared``), and copied per call: what one call's
    # CTAS teaches stays in that call, and a mapping given tables between calls is read again
    schema = {"s": {"t": {"a": "INT"}}}
    created = lineage_cli.parse_sql("CREATE TABLE s.new AS SELECT a FROM s.t", dialect="hive", schema=schema)
    assert [c["target"] for c in created["statements"][0]["columns"]] == ["s.new.a"]
    star = lineage_cli.parse_sql("INSERT INTO s.x SELECT * FROM s.new", dialect="hive", schema=schema)
    assert [c["source"] for c in star["statements"][0]["columns"]] == ["s.new.*"]  # columns unknown here
    schema["s"]["u"] = {"b": "INT", "c": "INT"}  # a table added between calls
    added = lineage_cli.parse_sql("INSERT INTO s.y SELECT * FROM s.u", dialect="hive", schema=schema)
    assert [c["target"] for c in added["statements"][0]["columns"]] == ["s.y.b", "s.y.c"]


def test_exact_answers_leave_out_the_statements_read_approximately(tmp_path: Path) -> None:
    sql = tmp_path / "etl.sql"
    sql.write_text("INSERT INTO a.m SELECT x FROM a.s;\nINSERT INTO a.t SELECT x FROM a.m WITH (HINT 7) QUALIFY ~~;\n")
    harvested = lineage_cli.harvest([sql], dialect="postgres")
    assert [issue.line for issue in harvested.errors] == [2]
    from lineage_cli.store.writer import write_store

    write_store(harvested.graph, tmp_path / "g.lin", {})
    store = lineage_cli.open_store(tmp_path / "g.lin")
    assert [e.subtypes for e in lineage_cli.up(store, "a.t").edges if e.target == "a.t"] == [("APPROXIMATE",)]
    assert lineage_cli.up(store, "a.t", exact=True).edges == []
    assert lineage_cli.down(store, "a.s", exact=True).to_dict()["edges"] == [
        {"source": "a.s", "target": "a.m", "type": "flow"}
    ]
    assert len(lineage_cli.path(store, "a.s", "a.t").edges) == 2
    with pytest.raises(lineage_cli.LineageError, match="through exact statements only"):
        lineage_cli.path(store, "a.s", "a.t", exact=True)
