"""Roll-up levels on the fixtures: each node replaced by its container, the answer's own edges lifted,
duplicates merged, self-loops gone, nodes without a container at the level kept as they are."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from lineage_cli.cli import LEVELS as CLI_LEVELS
from lineage_cli.cli import cli
from lineage_cli.model import NodeKind, schema_of
from lineage_cli.walk.levels import LEVELS, LevelError, load_datamarts, rollup
from lineage_cli.walk.query import lineage
from tests.walk.walks import REVENUE_SHAPING, REVENUE_UPSTREAM, closure, edges, golden_edges, nodes


def test_the_cli_offers_every_level() -> None:
    assert CLI_LEVELS == LEVELS


def test_column_level_changes_nothing(store) -> None:
    result = lineage(store, "rpt.v_sales_weekly.revenue_usd", "up")
    assert rollup(store, result, "column") == result


def test_table_level_lifts_column_lineage_to_the_tables_it_runs_between(store) -> None:
    result = rollup(store, lineage(store, "rpt.v_sales_weekly.revenue_usd", "up"), "table")
    walked = REVENUE_UPSTREAM | REVENUE_SHAPING
    table = {c: c.rsplit(".", 1)[0] for s, t, _ in walked for c in (s, t)}
    kind = {"WINDOW": "predicate", "CONDITIONAL": "predicate"}
    assert edges(result) == {(table[s], table[t], kind.get(sub[0], "projection")) for s, t, sub in walked}
    assert nodes(result) == {(t, "view" if t.startswith("rpt.") else "table") for t in table.values()}
    assert result.roots == ["rpt.v_sales_weekly"]
    # two projections into ods.sales_line.net_amount... from one table merge into one edge, subtypes united
    into_sales_daily = [e for e in result.edges if e.target == "mart.sales_daily"]
    assert [(e.source, e.subtypes) for e in into_sales_daily] == [
        ("dwh.fct_sales", ("AGGREGATION",)),
        ("dwh.fct_web_session", ("AGGREGATION",)),
    ]


def test_schema_level(store) -> None:
    reached = closure("mart.sales_daily", golden_edges(), up=True)
    result = rollup(store, lineage(store, "mart.sales_daily", "up"), "schema")
    assert nodes(result) == {("stg", "schema"), ("ods", "schema"), ("dwh", "schema"), ("mart", "schema")}
    # every golden edge of the walk between two schemas; mart.sales_daily's self-loop and ods -> ods go
    assert edges(result) == {
        ("stg", "ods", "flow"),
        ("stg", "dwh", "flow"),
        ("ods", "dwh", "flow"),
        ("dwh", "mart", "flow"),
    }
    lifted = {(s.split(".")[0], t.split(".")[0]) for s, t in golden_edges() if t in reached}
    assert {(s, t) for s, t, _ in edges(result)} == {(s, t) for s, t in lifted if s != t}
    assert result.roots == ["mart"]
    # a schema is a source when all its members in the answer are: stg; the others are written
    assert {n.name: n.role for n in result.nodes} == {"stg": "source", "ods": None, "dwh": None, "mart": None}


def test_datamart_level_maps_table_patterns_and_keeps_the_rest(store, tmp_path) -> None:
    mapping = tmp_path / "marts.yaml"
    mapping.write_text("'mart.%': marts\n'rpt.%': reports\n'dwh.fct_%': facts\n")
    marts = load_datamarts(mapping)
    result = rollup(store, lineage(store, "rpt.v_sales_weekly", "up"), "datamart", marts)
    reached = closure("rpt.v_sales_weekly", golden_edges(), up=True)

    def mart(name: str) -> str:
        for prefix, datamart in (("mart.", "marts"), ("rpt.", "reports"), ("dwh.fct_", "facts")):
            if name.startswith(prefix):
                return datamart
        return name

    lifted = {(mart(s), mart(t)) for s, t in golden_edges() if t in reached}
    assert {(s, t) for s, t, _ in edges(result)} == {(s, t) for s, t in lifted if s != t}
    assert {n for n, kind in nodes(result) if kind == "datamart"} == {"marts", "reports", "facts"}
    assert ("dwh.dim_date", "table") in nodes(result) and ("stg.calendar", "table") in nodes(result)
    assert result.roots == ["reports"]


def test_datamart_level_needs_a_mapping(store, tmp_path) -> None:
    with pytest.raises(LevelError, match="--datamarts"):
        rollup(store, lineage(store, "rpt.v_sales_weekly", "up"), "datamart")
    (tmp_path / "bad.yaml").write_text("- a list\n")
    with pytest.raises(LevelError, match="expected a mapping"):
        load_datamarts(tmp_path / "bad.yaml")


def test_workflow_level_shows_tables_workflows_tables(flow) -> None:
    """Downstream of stg.crm_customers (manifest.yaml): wf_ingest loads ods.customers; wf_sales reads it
    and writes dwh.sales (which it reads again), the archive, the stats and the two split tables;
    wf_export reads those (declared), writes export.sales_feed and reads it for the public feed."""
    result = rollup(flow, lineage(flow, "stg.crm_customers", "down", show_transformations=True), "workflow")
    assert {(e.source, e.target, e.type, e.subtypes) for e in result.edges} == {
        ("stg.crm_customers", "wf_ingest", "read", ()),
        ("wf_ingest", "ods.customers", "write", ()),
        ("ods.customers", "wf_sales", "read", ()),
        ("wf_sales", "dwh.sales", "write", ()),
        ("dwh.sales", "wf_sales", "read", ("DECLARED",)),  # refresh_stats's read is declared, the others parsed
        ("wf_sales", "${hivevar:arch_db}.sales_history", "write", ()),
        ("wf_sales", "dwh.sales_stats", "write", ("DECLARED",)),
        ("wf_sales", "dwh.sales_store", "write", ()),
        ("wf_sales", "dwh.sales_web", "write", ()),
        ("dwh.sales_store", "wf_export", "read", ("DECLARED",)),
        ("dwh.sales_web", "wf_export", "read", ("DECLARED",)),
        ("wf_export", "export.sales_feed", "write", ("DECLARED",)),
        ("export.sales_feed", "wf_export", "read", ()),
        ("wf_export", "{{ export_db }}.sales_feed_public", "write", ()),
    }
    assert {n for n, kind in nodes(result) if kind == "workflow"} == {"wf_ingest", "wf_sales", "wf_export"}
    assert {(n.name, n.depth) for n in result.nodes if n.kind == "workflow"} == {
        ("wf_ingest", 1),
        ("wf_sales", 2),
        ("wf_export", 4),  # after dwh.sales_store (3), through export_sales
    }


def test_module_level(flow) -> None:
    result = rollup(flow, lineage(flow, "dwh.sales_stats", "up", show_transformations=True), "module")
    assert edges(result) == {
        ("wf_sales/refresh_stats", "dwh.sales_stats", "write"),
        ("dwh.sales", "wf_sales/refresh_stats", "read"),
        ("wf_sales/build_sales", "dwh.sales", "write"),
        ("ods.customers", "wf_sales/build_sales", "read"),
        ("ods.orders", "wf_sales/build_sales", "read"),
        ("wf_ingest/load_customers", "ods.customers", "write"),
        ("stg.crm_customers", "wf_ingest/load_customers", "read"),
        ("wf_ingest/load_orders", "ods.orders", "write"),
        ("#src_schema#.t_orders", "wf_ingest/load_orders", "read"),
    }


def test_nodes_without_a_container_at_the_level_stay(store, flow) -> None:
    # no flow manifest for the warehouse: its statements have no module, and stay statements
    shown = lineage(store, "rpt.v_sales_weekly", "up", show_transformations=True)
    assert rollup(store, shown, "workflow") == shown
    # a parameterized table has no schema: it stays, linked to the schema it feeds
    result = rollup(flow, lineage(flow, "dwh.sales", "up"), "schema")
    assert nodes(result) == {
        ("#src_schema#.t_orders", "parameterized"),
        ("stg", "schema"),
        ("ods", "schema"),
        ("dwh", "schema"),
    }
    assert edges(result) == {("#src_schema#.t_orders", "ods", "flow"), ("stg", "ods", "flow"), ("ods", "dwh", "flow")}


def test_schema_of_matches_the_level(store) -> None:
    for node in range(store.node_count):
        kind = store.kind(node)
        if kind in (NodeKind.TABLE, NodeKind.VIEW):
            assert schema_of(store.name(node), kind) == store.name(node).split(".")[0]


def test_cli_level_options(tmp_path, monkeypatch, warehouse_store) -> None:
    runner = CliRunner()
    store = ["--store", str(warehouse_store)]
    outcome = runner.invoke(cli, ["up", "mart.sales_daily", "--level", "schema", "--format", "tgf", *store])
    assert outcome.exit_code == 0 and outcome.output.splitlines()[:4] == ["1 dwh", "2 mart", "3 ods", "4 stg"]
    outcome = runner.invoke(cli, ["up", "mart.sales_daily", "--level", "datamart", *store])
    assert outcome.exit_code == 1 and "needs --datamarts" in outcome.stderr
    (tmp_path / "marts.yaml").write_text("'mart.%': marts\n")
    datamarts = ["--level", "datamart", "--datamarts", str(tmp_path / "marts.yaml"), "--format", "json"]
    outcome = runner.invoke(cli, ["down", "dwh.fct_sales", *datamarts, *store])
    assert outcome.exit_code == 0 and '"kind": "datamart"' in outcome.output
