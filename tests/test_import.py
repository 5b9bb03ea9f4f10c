"""``lineage import``: edge lists and Hive LineageLogger output merged with harvested lineage."""

from __future__ import annotations

import errno
import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.harvest import edge_lists
from lineage_cli.harvest.imports import import_file
from lineage_cli.model import NodeKind
from lineage_cli.store import writer
from lineage_cli.store.arrays import sort_order
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


def test_a_store_that_cannot_be_written_is_one_line_and_the_old_store_stays(runner, tmp_path, monkeypatch) -> None:
    (tmp_path / "e.csv").write_text("source,target\nstg.a,ods.b\n")
    assert runner.invoke(cli, ["import", "e.csv"]).exit_code == 0
    before = (tmp_path / ".lineage" / "graph.lin").read_bytes()

    def full(out, *args):
        out.write(b"the first bytes")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writer, "_write_file", full)
    (tmp_path / "more.csv").write_text("source,target\nods.b,mart.c\n")
    failed = runner.invoke(cli, ["import", "more.csv"])
    assert failed.exit_code == 2
    assert failed.stderr == "lineage: error: cannot write the store .lineage/graph.lin: No space left on device\n"
    assert (tmp_path / ".lineage" / "graph.lin").read_bytes() == before
    assert sorted(path.name for path in (tmp_path / ".lineage").iterdir()) == ["graph.lin", "graph.lin.lock"]


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


def graph_of(path, fmt: str = "csv"):
    graph, issues, rows = import_file(path, fmt)
    edges = sorted(
        (graph.names[s], graph.names[t], int(a), int(m))
        for s, t, a, m in zip(graph.sources, graph.targets, graph.attributes, graph.statements, strict=True)
    )
    nodes = [
        (name, int(kind), int(container))
        for name, kind, container in zip(graph.names, graph.kinds, graph.containers, strict=True)
    ]
    return nodes, edges, [(issue.line, issue.message) for issue in issues], rows


def test_chunks_read_as_one_file_reads(tmp_path, monkeypatch) -> None:
    """Small chunks: quoted line ends run over chunk ends, and quote-free, blank and ragged lines all take turns."""
    rows = ["source,target,type,subtype"]
    for i in range(60):
        rows += [
            f"s{i}.t.c,m{i}.t.c,projection,IDENTITY",
            f"S{i}.T,m{i}.t,flow,",
            f'"q{i}.t\r\n.c",m{i}.t.c,projection,',
        ]
        rows += ["", f"s{i}.t", f"s{i}.t.c,m{i}.t.c,projection,NOPE,extra", f"x{i}.a\r"]
    path = tmp_path / "e.csv"
    path.write_bytes("\n".join(rows).encode())
    whole = graph_of(path)
    monkeypatch.setattr(edge_lists, "CHUNK_CHARS", 64)
    assert graph_of(path) == whole
    nodes, edges, problems, count = whole
    assert count == 60 * 6 and len(edges) > 60 * 3
    # the quoted line end makes each block of rows 8 lines long; a row's line is the one it ends on
    assert problems[:3] == [
        (7, "source and target are required"),
        (8, "unknown subtype 'NOPE'"),
        (9, "source and target are required"),
    ]
    names = [name for name, _, _ in nodes]
    assert ("q0.t\r\n.c", NodeKind.COLUMN, names.index("q0.t\r\n")) in nodes  # a quoted line end stays in the name


@pytest.mark.parametrize(
    ("rows", "kinds"),
    [
        # a column names its table first: the table stays a table when named as a column later, and has no table
        ("a.b.c,z.z,projection\na.b,q.q,projection\n", {"a.b.c": "column", "a.b": "table", "a": None}),
        # named as a column first, the name keeps its kind and its own table when a column of it comes later
        ("a.b,q.q,projection\na.b.c,z.z,projection\n", {"a.b.c": "column", "a.b": "column", "a": "table"}),
        # in one row too: the source's table comes before the target
        ("a.b.c,a.b,projection\n", {"a.b.c": "column", "a.b": "table", "a": None}),
        # a column made a table names no table of its own: a.b.c does not make a.b, named later, a table
        (
            "a.b.c.d,z,projection\na.b.c,z,projection\na.b,z,projection\n",
            {"a.b.c": "table", "a.b": "column", "a": "table"},
        ),
    ],
)
def test_a_name_keeps_the_kind_it_was_first_named_with(tmp_path, rows, kinds) -> None:
    (tmp_path / "e.csv").write_text("source,target,type\n" + rows)
    nodes = {name: NodeKind(kind).label for name, kind, _ in graph_of(tmp_path / "e.csv")[0]}
    assert {name: nodes.get(name) for name in kinds} == kinds


@pytest.mark.parametrize("high", [50, 1 << 30])  # packed into one int64, or too wide for it
def test_sort_order_sorts_as_lexsort(high) -> None:
    rng = np.random.default_rng(7)
    keys = tuple(rng.integers(0, bound, 5000) for bound in (3, 16, high, high))
    order = sort_order(keys)
    assert all(np.array_equal(key[order], key[np.lexsort(keys)]) for key in keys)


def test_a_hive_record_of_the_wrong_shape_says_what_is_wrong_not_pythons_message(tmp_path) -> None:
    records = [
        {"vertices": ["a"], "edges": []},
        {"vertices": [{"id": 0}], "edges": []},
        {"vertices": [], "edges": [{"sources": [[0]], "targets": [1], "edgeType": "PROJECTION"}]},
    ]
    path = tmp_path / "hive.log"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    _, issues, _ = import_file(path, "hive")
    shape = (
        'expected "vertices": [{"id", "vertexType", "vertexId"}, ...] and '
        '"edges": [{"sources": [id, ...], "targets": [id, ...], "edgeType"}, ...]'
    )
    assert [(i.line, i.message) for i in issues] == [
        (1, f"not a LineageLogger record: {shape}"),
        (2, "not a LineageLogger record: no 'vertexType'"),
        (3, f"not a LineageLogger record: {shape}"),
    ]
