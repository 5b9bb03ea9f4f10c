"""``lineage import``: edge lists and Hive LineageLogger output merged with harvested lineage."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.store.reader import open_store
from lineage_cli.walk.query import lineage
from tests.conftest import WAREHOUSE

HIVE_RECORD = {
    "version": "1.0",
    "engine": "tez",
    "hash": "4f2a",
    "queryText": "INSERT OVERWRITE TABLE dwh.f SELECT o.id, sum(o.amt) FROM stg.o o WHERE o.ok GROUP BY o.id",
    "edges": [
        {"sources": [1], "targets": [0], "edgeType": "PROJECTION"},
        {"sources": [3], "targets": [2], "expression": "sum(o.amt)", "edgeType": "PROJECTION"},
        {"sources": [4], "targets": [0, 2], "expression": "o.ok", "edgeType": "PREDICATE"},
    ],
    "vertices": [
        {"id": 0, "vertexType": "COLUMN", "vertexId": "dwh.f.id"},
        {"id": 1, "vertexType": "COLUMN", "vertexId": "stg.o.id"},
        {"id": 2, "vertexType": "COLUMN", "vertexId": "dwh.f.total"},
        {"id": 3, "vertexType": "COLUMN", "vertexId": "stg.o.amt"},
        {"id": 4, "vertexType": "COLUMN", "vertexId": "stg.o.ok"},
    ],
}


@pytest.fixture()
def runner(tmp_path, monkeypatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LINEAGE_STORE", raising=False)
    return CliRunner()


def edges_of(result) -> set[tuple[str, str, str, tuple[str, ...]]]:
    return {(e.source, e.target, e.type, e.subtypes) for e in result.edges}


def test_csv_rows_become_typed_edges_and_bad_rows_are_skipped_with_their_line(runner, tmp_path) -> None:
    (tmp_path / "e.csv").write_text(
        "source,target,type,subtype\n"
        "stg.a,ods.b,flow,\n"
        "stg.a.x,ods.b.y,projection,IDENTITY\n"
        "stg.a.z,ods.b,predicate,FILTER|JOIN\n"
        ",ods.b,flow,\n"
        "ods.b,mart.c,sideways,\n"
        "ods.b.y,mart.c.y,projection,NOPE\n"
    )
    outcome = runner.invoke(cli, ["import", "e.csv"])
    assert outcome.exit_code == 0
    assert "imported 3 of 6 rows (3 skipped)" in outcome.output
    assert all(f"e.csv:{line}:" in outcome.output for line in (5, 6, 7))
    store = open_store(".lineage/graph.lin")
    assert edges_of(lineage(store, "ods.b.y", "up")) == {("stg.a.x", "ods.b.y", "projection", ("IDENTITY",))}
    # an imported predicate names no statement, so it gates every known column of its table
    assert edges_of(lineage(store, "stg.a.z", "down", predicates=True)) == {
        ("stg.a.z", "ods.b", "predicate", ("FILTER", "JOIN")),
        ("ods.b", "ods.b.y", "contains", ()),
    }
    assert store.kind(store.find("ods.b.y")).label == "column"
    assert store.name(store.container(store.find("ods.b.y"))) == "ods.b"


def test_tsv_and_jsonl(runner, tmp_path) -> None:
    (tmp_path / "e.tsv").write_text("source\ttarget\nstg.a\tods.b\n")
    (tmp_path / "e.jsonl").write_text('{"source": "ods.b", "target": "mart.c"}\nnot json\n')
    assert runner.invoke(cli, ["import", "e.tsv"]).exit_code == 0
    outcome = runner.invoke(cli, ["import", "e.jsonl"])
    assert "e.jsonl:2:" in outcome.output
    result = lineage(open_store(".lineage/graph.lin"), "mart.c", "up")
    assert {(e.source, e.target) for e in result.edges} == {("stg.a", "ods.b"), ("ods.b", "mart.c")}


def test_import_merges_with_harvested_lineage(runner, tmp_path) -> None:
    assert runner.invoke(cli, ["harvest", str(WAREHOUSE), "-q"]).exit_code == 0
    (tmp_path / "downstream.csv").write_text("source,target\nrpt.v_sales_weekly,export.sales_feed\n")
    assert runner.invoke(cli, ["import", "downstream.csv"]).exit_code == 0
    result = lineage(open_store(".lineage/graph.lin"), "export.sales_feed", "up")
    names = {n.name for n in result.nodes}
    assert {"rpt.v_sales_weekly", "mart.sales_daily", "stg.pos_sales"} <= names


def test_hive_lineage_logger(runner, tmp_path) -> None:
    (tmp_path / "hive.log").write_text(json.dumps(HIVE_RECORD) + '\n{"vertices": 3}\n')
    outcome = runner.invoke(cli, ["import", "hive.log", "--format", "hive"])
    assert outcome.exit_code == 0 and "hive.log:2:" in outcome.output
    store = open_store(".lineage/graph.lin")
    assert edges_of(lineage(store, "dwh.f.total", "up")) == {
        ("stg.o.amt", "dwh.f.total", "projection", ("AGGREGATION",))
    }
    assert edges_of(lineage(store, "dwh.f.id", "up")) == {("stg.o.id", "dwh.f.id", "projection", ("IDENTITY",))}
    assert {(e.source, e.target) for e in lineage(store, "dwh.f", "up").edges} == {("stg.o", "dwh.f")}
    assert edges_of(lineage(store, "stg.o.ok", "down", predicates=True)) == {
        ("stg.o.ok", "dwh.f", "predicate", ("FILTER",)),
        ("dwh.f", "dwh.f.id", "contains", ()),
        ("dwh.f", "dwh.f.total", "contains", ()),
    }
    assert edges_of(lineage(store, "dwh.f.total", "up", predicates=True)) == {
        ("stg.o.amt", "dwh.f.total", "projection", ("AGGREGATION",)),
        ("stg.o.ok", "dwh.f", "predicate", ("FILTER",)),
        ("dwh.f", "dwh.f.total", "contains", ()),
    }


def test_unknown_extension_and_missing_header_are_usage_errors(runner, tmp_path) -> None:
    (tmp_path / "e.txt").write_text("a b\n")
    assert runner.invoke(cli, ["import", "e.txt"]).exit_code == 2
    (tmp_path / "e.csv").write_text("from,to\na,b\n")
    outcome = runner.invoke(cli, ["import", "e.csv"])
    assert outcome.exit_code == 2 and "header row" in outcome.output


def test_a_flow_edge_is_one_data_hop_for_depth_and_for_its_limit(runner, tmp_path) -> None:
    (tmp_path / "chain.csv").write_text("source,target\nstg.a,ods.b\nods.b,dwh.c\ndwh.c,mart.d\n")
    assert runner.invoke(cli, ["import", "chain.csv"]).exit_code == 0
    store = open_store(".lineage/graph.lin")
    depths = {n.name: n.depth for n in lineage(store, "stg.a", "down").nodes}
    assert depths == {"stg.a": 0, "ods.b": 1, "dwh.c": 2, "mart.d": 3}
    near = lineage(store, "stg.a", "down", depth=1)
    assert {n.name for n in near.nodes} == {"stg.a", "ods.b"}
    assert {(e.source, e.target) for e in near.edges} == {("stg.a", "ods.b")}
    shown = lineage(store, "mart.d", "up", depth=2, show_transformations=True)
    assert {n.name: n.depth for n in shown.nodes} == {"mart.d": 0, "dwh.c": 1, "ods.b": 2}


def test_hops_through_statements_and_flow_edges_count_alike(runner, tmp_path) -> None:
    assert runner.invoke(cli, ["harvest", str(WAREHOUSE), "-q"]).exit_code == 0
    (tmp_path / "feed.csv").write_text("source,target\nrpt.v_sales_weekly,export.feed\nexport.feed,partner.feed\n")
    assert runner.invoke(cli, ["import", "feed.csv"]).exit_code == 0
    store = open_store(".lineage/graph.lin")
    up = {n.name: n.depth for n in lineage(store, "partner.feed", "up").nodes}
    assert (up["export.feed"], up["rpt.v_sales_weekly"], up["rpt.v_sales_daily"], up["mart.sales_daily"]) == (
        1,
        2,
        3,
        4,
    )
    near = lineage(store, "partner.feed", "up", depth=2)
    assert {n.name for n in near.nodes} == {"partner.feed", "export.feed", "rpt.v_sales_weekly"}
    assert all(e.target in {"partner.feed", "export.feed"} for e in near.edges)
    down = {n.name: n.depth for n in lineage(store, "rpt.v_sales_daily", "down").nodes}
    assert (down["rpt.v_sales_weekly"], down["export.feed"], down["partner.feed"]) == (1, 2, 3)
    shown = lineage(store, "rpt.v_sales_daily", "down", depth=2, show_transformations=True)
    assert {n.name for n in shown.nodes if n.kind != "transformation"} == {
        "rpt.v_sales_daily",
        "rpt.v_sales_weekly",
        "export.feed",
    }
