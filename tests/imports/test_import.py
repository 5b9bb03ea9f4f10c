"""``lineage import``: edge lists and Hive LineageLogger output merged with harvested lineage."""

from __future__ import annotations

import errno
import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.imports import edge_lists
from lineage_cli.imports.builder import MAX_NAME_CHARS, ImportError_
from lineage_cli.imports.reader import import_file
from lineage_cli.model import EdgeType, NodeKind, Subtype
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
    graph, issues, rows, _ = import_file(path, fmt)
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
    issues = import_file(path, "hive").issues
    shape = (
        'expected "vertices": [{"id", "vertexType", "vertexId"}, ...] and '
        '"edges": [{"sources": [id, ...], "targets": [id, ...], "edgeType"}, ...]'
    )
    assert [(i.line, i.message) for i in issues] == [
        (1, f"not a LineageLogger record: {shape}"),
        (2, "not a LineageLogger record: no 'vertexType'"),
        (3, f"not a LineageLogger record: {shape}"),
    ]


UNTERMINATED = "unterminated quote opened on this line; the line is skipped, the lines after it are still read"


def test_an_unterminated_quote_is_reported_where_it_opened_and_the_lines_after_it_read(tmp_path, monkeypatch) -> None:
    path = tmp_path / "e.csv"
    path.write_text('source,target\na,b\n"c,d\n' + "".join(f"e{i},f{i}\n" for i in range(300)))
    whole = graph_of(path)
    monkeypatch.setattr(edge_lists, "CHUNK_CHARS", 64)  # the quoted field runs over many chunks
    assert graph_of(path) == whole
    _, edges, problems, rows = whole
    assert problems == [(3, UNTERMINATED)]
    assert {(s, t) for s, t, _, _ in edges} == {("a", "b")} | {(f"e{i}", f"f{i}") for i in range(300)}
    assert rows == 302


def test_a_quoted_field_past_the_csv_limit_is_refused_where_it_opened(tmp_path) -> None:
    """Each runaway field is refused at its first line, and the lines it ran over are read again as rows."""
    path = tmp_path / "e.csv"
    long_field = "\n".join(["x" * 1000] * 200)  # 200 lines, 200,199 characters: over csv's 131,072
    path.write_text(f'source,target\na,b\n"{long_field}",c\nd,e\n"{long_field}\nf,g\n')
    _, edges, problems, _ = graph_of(path)
    opened = [(line, message) for line, message in problems if "field limit" in message]
    assert [line for line, _ in opened] == [3, 204]
    assert opened[0][1] == (
        "cannot read the row starting on this line: field larger than field limit (131072); "
        "the line is skipped, the lines after it are still read"
    )
    # the lines inside the fields are rows of their own: the first field's last line names an edge, the others
    # have one column and are refused, each at its line
    assert {(s, t) for s, t, _, _ in edges} == {("a", "b"), ("x" * 1000 + '"', "c"), ("d", "e"), ("f", "g")}
    assert {line for line, message in problems if message == "source and target are required"} == (
        set(range(4, 202)) | set(range(205, 404))
    )


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_line_past_the_limit_is_skipped_unread(tmp_path, monkeypatch, fmt) -> None:
    monkeypatch.setattr(edge_lists, "MAX_LINE_CHARS", 100)
    monkeypatch.setattr(edge_lists, "CHUNK_CHARS", 150)
    path = tmp_path / f"e.{fmt}"
    rows = [("a", "b"), ("x" * 450, "y"), ("c", "d")]
    if fmt == "csv":
        path.write_text("source,target\n" + "".join(f"{s},{t}\n" for s, t in rows))
    else:
        path.write_text("".join(json.dumps({"source": s, "target": t}) + "\n" for s, t in rows))
    read: list[str] = []
    monkeypatch.setattr(edge_lists, "_Lines", spied(edge_lists._Lines, read))
    _, edges, problems, count = graph_of(path, fmt)
    assert problems == [(2 + (fmt == "csv"), "line longer than 100 characters; skipped unread")]
    assert {(s, t) for s, t, _, _ in edges} == {("a", "b"), ("c", "d")} and count == 3
    assert max(map(len, read)) <= 150  # the long line (450 characters) was read in pieces of a chunk at most


def spied(lines: type, read: list[str]) -> type:
    """``edge_lists._Lines`` keeping what each read of the file gave in ``read``."""

    class Spied(lines):
        def __init__(self, handle) -> None:
            super().__init__(handle)
            read_text = self._read
            self._read = lambda size: read.append(read_text(size)) or read[-1]

    return Spied


def test_a_header_past_the_line_limit_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(edge_lists, "MAX_LINE_CHARS", 100)
    (tmp_path / "e.csv").write_text("source,target," + "x" * 200 + "\na,b\n")
    with pytest.raises(ImportError_, match="header row is longer than 100 characters"):
        import_file(tmp_path / "e.csv", "csv")


def test_a_name_past_the_limit_refuses_its_row_and_messages_quote_values_short(tmp_path) -> None:
    path = tmp_path / "e.csv"
    long_name, longest = "t" * (MAX_NAME_CHARS + 1), "u" * MAX_NAME_CHARS
    path.write_text(
        f"source,target,type\na,{long_name},flow\n{long_name}.c,b.c,projection\n{longest},b,\nc,d,{long_name}\n"
    )
    nodes, edges, problems, _ = graph_of(path)
    assert problems[:2] == [
        (2, "a name is longer than 4,096 characters"),
        (3, "a name is longer than 4,096 characters"),
    ]
    assert problems[2][0] == 5 and problems[2][1].startswith("unknown type 'ttt") and len(problems[2][1]) < 200
    assert {(s, t) for s, t, _, _ in edges} == {(longest, "b")}
    assert max(len(name) for name, _, _ in nodes) == MAX_NAME_CHARS


def test_a_row_longer_than_the_header_takes_no_type_from_its_extra_field(tmp_path) -> None:
    (tmp_path / "e.csv").write_text('source,target\na,b,projection\n"c",d,projection\n')
    _, edges, problems, _ = graph_of(tmp_path / "e.csv")
    assert problems == [] and {(s, t, a) for s, t, a, _ in edges} == {
        ("a", "b", EdgeType.FLOW),
        ("c", "d", EdgeType.FLOW),
    }


def hive_record(**changes: object) -> dict:
    return {**HIVE_RECORD, **changes}


VERTEX = {"id": 0, "vertexType": "COLUMN", "vertexId": "dwh.f.id"}
BAD_HIVE = [
    (
        "sources not a list",
        {"edges": [{"sources": 5, "targets": [0], "edgeType": "PROJECTION"}]},
        'expected "vertices"',
    ),
    ("no targets", {"edges": [{"sources": [1], "edgeType": "PROJECTION"}]}, "no 'targets'"),
    ("a list as id", {"vertices": [{**VERTEX, "id": [0]}]}, 'expected "vertices"'),
    ("an unknown vertex", {"edges": [{"sources": [9], "targets": [0], "edgeType": "PREDICATE"}]}, "vertex 9, which"),
    ("an unknown edge type", {"edges": [*HIVE_RECORD["edges"], {**HIVE_RECORD["edges"][0], "edgeType": "X"}]}, "'X'"),
    (
        "a name past the limit",
        {"vertices": [*HIVE_RECORD["vertices"], {**VERTEX, "id": 5, "vertexId": "v" * 5000}]},
        "vertex 5 has a name longer than 4,096 characters",
    ),  # fmt: skip
    ("vertices not a list", {"vertices": None}, 'expected "vertices"'),
]


@pytest.mark.parametrize(("case", "changes", "message"), BAD_HIVE, ids=[case for case, _, _ in BAD_HIVE])
def test_a_bad_hive_record_is_refused_whole_in_plain_words(tmp_path, case, changes, message) -> None:
    path = tmp_path / "hive.log"
    path.write_text(json.dumps(hive_record(**changes)) + "\n" + json.dumps(HIVE_RECORD) + "\n")
    nodes, _, problems, rows = graph_of(path, "hive")
    assert [line for line, _ in problems] == [1] and rows == 2
    assert problems[0][1].startswith("not a LineageLogger record: ") and message in problems[0][1]
    assert len(problems[0][1]) < 300
    assert f"{path}:1" not in {name for name, _, _ in nodes}  # nothing of the refused record is imported


def test_a_hive_expression_of_another_type_is_no_expression(tmp_path) -> None:
    edges = [{"sources": [1], "targets": [0], "edgeType": "PROJECTION", "expression": 5}]
    (tmp_path / "hive.log").write_text(json.dumps(hive_record(edges=edges)) + "\n")
    _, edges_read, problems, _ = graph_of(tmp_path / "hive.log", "hive")
    assert problems == [] and ("stg.o.id", "dwh.f.id") in {(s, t) for s, t, _, _ in edges_read}


def test_an_import_into_a_damaged_store_says_so_and_leaves_it_alone(runner, tmp_path, monkeypatch) -> None:
    from lineage_cli.store import reader
    from tests.store.test_store import damage_offsets

    (tmp_path / "e.csv").write_text("source,target\na,b\n")
    assert runner.invoke(cli, ["import", "e.csv"]).exit_code == 0
    (tmp_path / "f.csv").write_text("source,target\nb,c\n")
    store = tmp_path / ".lineage" / "graph.lin"
    damage_offsets(store)
    damaged = store.read_bytes()
    monkeypatch.setattr(reader, "VERIFY_ON_OPEN_BYTES", 0)  # as for a big store: the checksum is not read on open
    outcome = runner.invoke(cli, ["import", "f.csv"])
    assert outcome.exit_code == 2, outcome.output  # numpy's "repeats may not contain negative values" before
    assert "graph.lin: damaged store (body checksum mismatch); re-harvest to rebuild it" in outcome.output
    assert "--replace" in outcome.output and store.read_bytes() == damaged


def test_a_node_keeps_the_line_it_was_first_named_on_in_chunks_or_not(tmp_path, monkeypatch) -> None:
    rows = "".join(
        f"s{i % 7}.t.c{i % 5},m{i}.t.c,projection\n" if i % 3 else f"s{i % 7}.t,m{i}.t,flow\n" for i in range(90)
    )
    path = tmp_path / "e.csv"
    path.write_text("source,target,type\n" + rows)
    whole = import_file(path, "csv")
    monkeypatch.setattr(edge_lists, "CHUNK_CHARS", 40)
    chunked = import_file(path, "csv")
    assert chunked.first_lines.tolist() == whole.first_lines.tolist()
    line_of = dict(zip(whole.graph.names, whole.first_lines.tolist(), strict=True))
    # s1.t.c1 is row 1 (line 3), and its table s1.t comes with it, before s1.t's own flow row (line 23)
    assert (line_of["s0.t"], line_of["s1.t.c1"], line_of["s1.t"], line_of["m89.t.c"], line_of["m89.t"]) == (
        2,
        3,
        3,
        91,
        91,
    )


NEW_COLUMN = "column {} is not in the store, though its table {} is; created"


def test_an_import_warns_of_each_column_new_to_a_table_the_store_holds(runner, tmp_path) -> None:
    assert runner.invoke(cli, ["harvest", str(WAREHOUSE), "-q"]).exit_code == 0
    (tmp_path / "feeds.csv").write_text(
        "source,target,type\n"
        "mart.sales_daily.revenue_usd,export.feed.revenue,projection\n"  # a known column into a new table
        "mart.sales_daily.revenu,export.feed.revenue,projection\n"  # a typo: new to a known table
        "mart.sales_daily.revenu,export.feed.total,projection\n"  # the same once more: warned once
        "mart.sales_daily,mart.sales_daily.units2,contains\n"
    )
    outcome = runner.invoke(cli, ["import", "feeds.csv"])
    assert outcome.exit_code == 0 and "imported 4 of 4 rows (0 skipped)" in outcome.output
    warnings = [line for line in outcome.output.splitlines() if ": warning: " in line]
    assert warnings == [
        "feeds.csv:3: warning: " + NEW_COLUMN.format("mart.sales_daily.revenu", "mart.sales_daily"),
        "feeds.csv:5: warning: " + NEW_COLUMN.format("mart.sales_daily.units2", "mart.sales_daily"),
    ]
    assert open_store(".lineage/graph.lin").find("mart.sales_daily.revenu") is not None  # created all the same
    assert ": warning: " not in runner.invoke(cli, ["import", "feeds.csv"]).output  # known by now
    assert ": warning: " not in runner.invoke(cli, ["import", "feeds.csv", "--replace"]).output  # no store to hold it


def test_many_new_columns_are_listed_up_to_a_count(runner, tmp_path) -> None:
    assert runner.invoke(cli, ["harvest", str(WAREHOUSE), "-q"]).exit_code == 0
    rows = "".join(f"mart.sales_daily.x{i},t.y{i},projection\n" for i in range(25))
    (tmp_path / "e.csv").write_text("source,target,type\n" + rows)
    outcome = runner.invoke(cli, ["import", "e.csv", "--format", "csv"])
    warnings = [line for line in outcome.output.splitlines() if ": warning: " in line]
    assert len(warnings) == 21 and warnings[0].startswith("e.csv:2: warning: column mart.sales_daily.x0 ")
    assert warnings[-1] == "e.csv: warning: 5 more columns not in the store were created in tables it holds"


def test_a_hive_record_warns_of_a_new_column_at_its_line(runner, tmp_path) -> None:
    (tmp_path / "first.log").write_text(json.dumps(HIVE_RECORD) + "\n")
    assert runner.invoke(cli, ["import", "first.log", "--format", "hive"]).exit_code == 0
    vertices = [*HIVE_RECORD["vertices"], {"id": 5, "vertexType": "COLUMN", "vertexId": "stg.o.new"}]
    edges = [{"sources": [5], "targets": [0], "edgeType": "PROJECTION"}]
    (tmp_path / "next.log").write_text("\n" + json.dumps({**HIVE_RECORD, "vertices": vertices, "edges": edges}) + "\n")
    outcome = runner.invoke(cli, ["import", "next.log", "--format", "hive"])
    assert f"next.log:2: warning: {NEW_COLUMN.format('stg.o.new', 'stg.o')}" in outcome.output


def hostile_names() -> list[str]:
    """Names that tie on long prefixes, end inside and at the ends of 8-byte words, hold NULs and non-ASCII."""
    names = ["", "a", "a\x00", "a\x00\x00", "ab", "abcdefgh", "abcdefg", "abcdefghi", "abcdefgh\x00", "é", "z" * 40]
    names += [f"dwh.d{i % 7:03d}_t{i:05d}.c{i % 13:02d}" for i in range(300)]
    names += ["x" * 17 + chr(0x100 + i) for i in range(20)] + ["\U0001f600", "\uffff", "\x7f"]
    return names


def test_the_vocabulary_numbers_names_as_met_and_orders_them_by_code_point() -> None:
    from lineage_cli.imports.vocabulary import Vocabulary

    names = hostile_names()
    vocabulary = Vocabulary()
    nodes, firsts = vocabulary.intern(names[::2] + names)
    again, none_new = vocabulary.intern(names[1::2])
    met = list(dict.fromkeys(names[::2] + names))
    assert nodes.tolist() == [met.index(name) for name in names[::2] + names] and none_new.size == 0
    assert again.tolist() == [met.index(name) for name in names[1::2]]
    blob, offsets, by_rank = vocabulary.table()
    assert [met[node] for node in by_rank.tolist()] == sorted(met)
    assert blob.tobytes().decode() == "".join(sorted(met)) and offsets[-1] == blob.size
    long = ["p" * 300 + tail for tail in ("b", "a", "", "ab", "a" * 9)]  # tied past 32 words: wider lengths
    vocabulary = Vocabulary()
    vocabulary.intern(long)
    assert [long[node] for node in vocabulary.table()[2].tolist()] == sorted(long)


def test_names_whose_hashes_collide_stay_apart(tmp_path, monkeypatch) -> None:
    """A hash is never trusted alone: with every name hashed alike, the import makes the same graph."""
    from lineage_cli.imports import vocabulary

    names = [name for name in hostile_names() if name]
    rows = [f"{source}\t{target}\tflow" for source, target in zip(names, names[7:] + names[:7], strict=True)]
    path = tmp_path / "e.tsv"
    path.write_text("source\ttarget\ttype\n" + "\n".join(rows) + "\n")
    monkeypatch.setattr(edge_lists, "CHUNK_CHARS", 300)
    whole = graph_of(path, "tsv")
    monkeypatch.setattr(vocabulary, "_hashes", lambda blob, starts, lengths: np.full(starts.size, 5, np.uint64))
    assert graph_of(path, "tsv") == whole
    monkeypatch.setattr(vocabulary, "_hashes", lambda blob, starts, lengths: (lengths % 3).astype(np.uint64))
    assert graph_of(path, "tsv") == whole


def test_edges_too_wide_to_pack_are_deduplicated_as_packed_ones(tmp_path, monkeypatch) -> None:
    """An edge list's edges are packed in an int64 to be deduplicated; a graph too big for it (over 8M nodes)
    takes ``dedupe_edges``, to the same edges: repeated rows one edge, their subtypes OR-ed."""
    from lineage_cli.imports import builder

    rows = ["a.t.x,b.t.y,projection,IDENTITY", "a.t.x,b.t.y,projection,FILTER", "a.t,b.t,flow,", "a.t,b.t,flow,"]
    path = tmp_path / "e.csv"
    path.write_text("source,target,type,subtype\n" + "\n".join(rows * 3) + "\n")
    packed = graph_of(path)
    monkeypatch.setattr(builder, "_PACKED_BITS", 64)
    assert graph_of(path) == packed
    projection = [edge for edge in packed[1] if edge[:2] == ("a.t.x", "b.t.y")]
    assert len(projection) == 1 and projection[0][2] >> 4 == Subtype.IDENTITY.bit | Subtype.FILTER.bit


def test_edges_packed_by_their_nodes_as_met_are_renumbered_by_rank(tmp_path, monkeypatch) -> None:
    """The packed edges are numbered by their nodes as met, then renumbered by name rank a block at a time: whatever
    the blocks, the same distinct edges by type, target and source, and the edges ``dedupe_edges`` makes."""
    from lineage_cli.imports import builder

    names = [name for name in hostile_names() if name and "\x00" not in name]
    rows = [f"{source}\t{target}\tflow" for source, target in zip(names, names[5:] + names[:5], strict=True)]
    rows += [f"{target}\t{source}\tflow" for source, target in zip(names[::3], names[1::3], strict=False)]
    path = tmp_path / "e.tsv"
    path.write_text("source\ttarget\ttype\n" + "\n".join(rows + rows[:40]) + "\n")

    def edge_arrays() -> list[list[int]]:
        graph = import_file(path, "tsv")[0]
        return [part.tolist() for part in (graph.sources, graph.targets, graph.attributes, graph.statements)]

    packed = edge_arrays()
    monkeypatch.setattr(builder, "_STEP", 7)  # blocks of a few edges: renumbered and unpacked across their ends
    assert edge_arrays() == packed
    edges = list(zip(*packed, strict=True))
    assert len(set(edges)) == len(edges) and edges == sorted(edges, key=lambda edge: (edge[2], edge[1], edge[0]))
    monkeypatch.setattr(builder, "_PACKED_BITS", 64)  # too wide to pack: ``dedupe_edges``, in its own order
    assert sorted(zip(*edge_arrays(), strict=True)) == sorted(edges)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8, 13, 64])
def test_lines_split_as_readline_splits_them_whatever_the_chunk(tmp_path, monkeypatch, chunk) -> None:
    """CR, LF and CRLF end lines wherever a chunk's read cuts them (a CRLF too); a line too long is one line."""
    monkeypatch.setattr(edge_lists, "MAX_LINE_CHARS", 30)
    ends = ["\n", "\r", "\r\n"]
    text = "source,target\r\n"
    for i in range(40):
        text += f"s{i}.t,m{i}.t" + ends[i % 3] + ("" if i % 4 else ends[(i + 1) % 3]) + ("x" * 40 if i % 9 == 0 else "")
        text += ends[i % 2] if i % 9 == 0 else ""
    text += "last.a,last.b"  # no line end at the end of the file
    path = tmp_path / "e.csv"
    path.write_bytes(text.encode())
    with path.open(newline="") as handle:
        lines = handle.readlines()
    expected_long = [number for number, line in enumerate(lines, start=1) if line.startswith("x")]
    monkeypatch.setattr(edge_lists, "CHUNK_CHARS", chunk)
    nodes, edges, problems, count = graph_of(path)
    assert [line for line, message in problems if message.startswith("line longer")] == expected_long
    assert len(edges) == 41 and count == 41 + len(expected_long)
    assert [line for line, _ in problems if line not in expected_long] == []


def test_names_a_digit_apart_hash_apart(monkeypatch) -> None:
    """Generated names differing in a digit or two take distinct hashes: no chunk of them goes one by one
    (a hash spreading the words' low bits poorly gave 314 collisions over 4M such names)."""
    from lineage_cli.imports import vocabulary

    names = [f"dwh1.d{schema:03d}_t{table:06d}.c00" for schema in range(100) for table in range(100000, 100300)]
    blob, starts, lengths = vocabulary._packed(names)
    assert np.unique(vocabulary._hashes(blob, starts, lengths)).size == len(names)
    monkeypatch.setattr(vocabulary.Vocabulary, "_intern_one_by_one", None)  # not called
    nodes, firsts = vocabulary.Vocabulary().intern(names)
    assert nodes.tolist() == firsts.tolist() == list(range(len(names)))
