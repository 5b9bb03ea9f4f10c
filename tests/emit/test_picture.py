"""``--group-by`` and ``--rankdir``: yEd group nodes and Graphviz clusters and tables, parsed back."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.emit import style
from lineage_cli.emit.dot import to_dot
from lineage_cli.emit.graphml import to_graphml
from lineage_cli.emit.picture import Group, Picture, Volume
from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode
from tests.conftest import assert_valid_format

G = "{http://graphml.graphdrawing.org/xmlns}"
Y = "{http://www.yworks.com/xml/graphml}"
DOT = shutil.which("dot")
needs_dot = pytest.mark.skipif(DOT is None, reason="Graphviz dot is not installed")

# Hostile names in every place a name can go: schema, table, column, a loose node.
SCHEMA: Group = ('s&<x> "q"', "schema")
TABLE: Group = ('s&<x> "q".t ü', "table")
OTHER: Group = ('s&<x> "q".t\'2', "view")
ROOT = 's&<x> "q".t ü.we"ird'
COLUMNS = [ROOT, 's&<x> "q".t ü.a<b&c>\nz', 's&<x> "q".t\'2.spa ce', 's&<x> "q".t\'2.back\\slash\\']
GROUPED = LineageResult(
    direction="down",
    roots=[ROOT],
    nodes=[ResultNode(name, "column", min(depth, 1)) for depth, name in enumerate(COLUMNS)]
    + [ResultNode("loose €", "column", 2, role="terminal"), ResultNode("etl/x.sql:1", "transformation", 1)],
    edges=[ResultEdge(ROOT, name, "projection", ("IDENTITY",)) for name in COLUMNS[1:]]
    + [
        ResultEdge(COLUMNS[2], "loose €", "predicate", ("FILTER",)),
        ResultEdge(COLUMNS[3], "etl/x.sql:1", "read"),
    ],
)
GROUPS: dict[str, tuple[Group, ...]] = {
    COLUMNS[0]: (SCHEMA, TABLE),
    COLUMNS[1]: (SCHEMA, TABLE),
    COLUMNS[2]: (SCHEMA, OTHER),
    COLUMNS[3]: (SCHEMA, OTHER),
}
PICTURE = Picture(groups=GROUPS)


def graphml_file(tmp_path: Path, result: LineageResult, picture: Picture) -> Path:
    path = tmp_path / "grouped.graphml"
    path.write_text(to_graphml(result, picture), encoding="utf-8")
    return path


def node_chains(graph: ET.Element, outer: tuple[Group, ...] = ()) -> dict[str, tuple[Group, ...]]:
    """Each plain node's name -> the (name, kind) of the group nodes it is nested in, outermost first."""
    chains: dict[str, tuple[Group, ...]] = {}
    for node in graph.findall(G + "node"):
        data = {d.get("key"): d.text for d in node.findall(G + "data")}
        inner = node.find(G + "graph")
        if inner is None:
            chains[data["d2"]] = outer
            continue
        assert node.get("yfiles.foldertype") == "group"
        label = node.find(f"{G}data/{Y}ProxyAutoBoundsNode/{Y}Realizers/{Y}GroupNode/{Y}NodeLabel")
        assert label.text == data["d2"]
        chains |= node_chains(inner, (*outer, (data["d2"], data["d3"])))
    return chains


def test_graphml_groups_nest_their_members(tmp_path: Path) -> None:
    path = graphml_file(tmp_path, GROUPED, PICTURE)
    assert_valid_format("graphml", path, "--require-labels")
    root = ET.parse(path).getroot()
    ids = [node.get("id") for node in root.iter(G + "node")]
    assert len(ids) == len(set(ids)) == len(GROUPED.nodes) + 3  # the schema and its two tables
    assert node_chains(root.find(G + "graph")) == {node.name: GROUPS.get(node.name, ()) for node in GROUPED.nodes}
    for edge in root.iter(G + "edge"):
        assert edge.get("source") in ids and edge.get("target") in ids


def test_graphml_groups_read_with_networkx(tmp_path: Path) -> None:
    graph = nx.read_graphml(graphml_file(tmp_path, GROUPED, PICTURE))
    names = {node_id: data["name"] for node_id, data in graph.nodes(data=True)}
    groups = {data["name"] for data in graph.nodes.values() if data["kind"] in ("schema", "table", "view")}
    assert groups == {SCHEMA[0], TABLE[0], OTHER[0]}
    edges = {(names[source], names[target]) for source, target in graph.edges()}
    assert edges == {(edge.source, edge.target) for edge in GROUPED.edges}


def test_graphml_without_groups_is_unchanged() -> None:
    assert to_graphml(GROUPED, Picture()) == to_graphml(GROUPED)


def dot_json(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "grouped.dot"
    path.write_text(text, encoding="utf-8")
    assert_valid_format("dot", path)
    run = subprocess.run([DOT, "-Tjson", str(path)], capture_output=True, text=True, check=True)
    assert run.stderr == ""
    return json.loads(run.stdout)


def table_rows(label: str) -> tuple[str, dict[str, str]]:
    """A table node's HTML label read back: the table's name and each port's column name."""
    cells = re.findall(r"<TD([^>]*)>(.*?)</TD>", label)

    def text(cell: str) -> str:
        return html.unescape(re.sub(r"</?B>", "", cell).replace("<BR/>", "\n"))

    head = text(cells[0][1])
    ports = {re.search(r'PORT="(\w+)"', attributes)[1]: text(cell) for attributes, cell in cells[1:]}
    return head, ports


@needs_dot
def test_dot_clusters_and_tables_with_ports(tmp_path: Path) -> None:
    document = dot_json(tmp_path, to_dot(GROUPED, PICTURE))
    objects = {obj["_gvid"]: obj for obj in document["objects"]}
    clusters = [obj for obj in objects.values() if obj["name"].startswith("cluster_")]
    assert [html.unescape(obj["label"]) for obj in clusters] == [SCHEMA[0]]
    tables = {obj["name"]: table_rows(obj["label"]) for obj in objects.values() if "<TABLE" in obj.get("label", "")}
    assert {name: head for name, (head, _) in tables.items()} == {TABLE[0]: TABLE[0], OTHER[0]: OTHER[0]}
    assert {gvid for obj in clusters for gvid in obj["nodes"]} == {
        gvid for gvid, obj in objects.items() if obj["name"] in tables
    }

    def end(gvid: int, port: str | None) -> str:
        name = objects[gvid]["name"]
        return f"{name}.{tables[name][1][port]}" if port else name

    edges = {(end(e["tail"], e.get("tailport")), end(e["head"], e.get("headport"))) for e in document["edges"]}
    assert edges == {(edge.source, edge.target) for edge in GROUPED.edges}


@needs_dot
def test_dot_rankdir_and_the_queried_node_first(tmp_path: Path) -> None:
    text = to_dot(GROUPED, Picture(rankdir="TB", groups=GROUPS))
    assert "rankdir=TB;" in text
    document = dot_json(tmp_path, text)
    pinned = [obj for obj in document["objects"] if obj.get("rank") == "min"]
    assert [obj["nodes"] for obj in pinned] == [
        [next(obj["_gvid"] for obj in document["objects"] if obj["name"] == TABLE[0])]
    ]


def test_rank_constraints_keep_queried_nodes_in_order() -> None:
    # b is queried too but fed by a: only a is pinned to the left edge.
    chain = LineageResult(
        "down",
        ["a", "b"],
        nodes=[ResultNode("a", "table"), ResultNode("b", "table"), ResultNode("c", "table", 1)],
        edges=[ResultEdge("a", "b", "flow"), ResultEdge("b", "c", "flow")],
    )
    assert re.findall(r"\{rank=.*\}", to_dot(chain)) == ['{rank=min; "a"}']
    upstream = LineageResult("up", ["c"], chain.nodes, chain.edges)
    assert re.findall(r"\{rank=.*\}", to_dot(upstream)) == ['{rank=max; "c"}']
    path = LineageResult("path", ["a", "c"], chain.nodes, chain.edges)
    assert re.findall(r"\{rank=.*\}", to_dot(path)) == ['{rank=min; "a"}', '{rank=max; "c"}']


# ------------------------------------------------------------------ through the CLI, from a store


def invoke(store: Path, *arguments: str) -> str:
    outcome = CliRunner().invoke(cli, [*arguments, "--store", str(store)])
    assert outcome.exit_code == 0, outcome.output
    return outcome.output


def test_group_by_workflow_puts_statements_in_their_workflows(flow_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "flow.graphml"
    invoke(flow_store, "down", "ods.orders", "--show-transformations", "--group-by", "workflow", "-o", str(path))
    assert_valid_format("graphml", path, "--require-labels")
    chains = node_chains(ET.parse(path).getroot().find(G + "graph"))
    assert chains["fixtures/sql/oozie/manifest.yaml:45"] == (("wf_export", "workflow"),)
    assert chains["fixtures/sql/oozie/sql/dwh_sales.sql:7"] == (("wf_sales", "workflow"),)
    assert chains["dwh.sales"] == ()  # data belongs to no workflow


def test_group_by_schema_nests_columns_in_tables(flow_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "columns.graphml"
    invoke(flow_store, "down", "ods.orders.order_id", "--group-by", "schema", "-o", str(path))
    assert_valid_format("graphml", path, "--require-labels")
    chains = node_chains(ET.parse(path).getroot().find(G + "graph"))
    assert chains["ods.orders.order_id"] == (("ods", "schema"), ("ods.orders", "table"))
    assert chains["dwh.sales_web.order_id"] == (("dwh", "schema"), ("dwh.sales_web", "table"))


@needs_dot
def test_group_by_schema_in_dot_from_a_store(flow_store: Path, tmp_path: Path) -> None:
    text = invoke(
        flow_store, "down", "ods.orders.order_id", "--group-by", "schema", "--rankdir", "TB", "--format", "dot"
    )
    document = dot_json(tmp_path, text)
    assert {obj["label"] for obj in document["objects"] if obj["name"].startswith("cluster_")} == {"ods", "dwh"}
    assert all(edge.get("tailport") and edge.get("headport") for edge in document["edges"])


def test_group_by_needs_a_graph_format(flow_store: Path) -> None:
    outcome = CliRunner().invoke(
        cli, ["down", "ods.orders", "--group-by", "schema", "--format", "json", "--store", str(flow_store)]
    )
    assert outcome.exit_code == 1
    assert "graphml, dot, mermaid and pictures" in outcome.output


def test_group_by_datamart_needs_the_mapping(flow_store: Path) -> None:
    outcome = CliRunner().invoke(
        cli, ["down", "ods.orders", "--group-by", "datamart", "--format", "dot", "--store", str(flow_store)]
    )
    assert outcome.exit_code == 1
    assert "--datamarts" in outcome.output


def test_group_by_datamart(flow_store: Path, tmp_path: Path) -> None:
    marts = tmp_path / "marts.yaml"
    marts.write_text("'dwh.%': sales\n", encoding="utf-8")
    path = tmp_path / "marts.graphml"
    invoke(flow_store, "down", "ods.orders", "--group-by", "datamart", "--datamarts", str(marts), "-o", str(path))
    chains = node_chains(ET.parse(path).getroot().find(G + "graph"))
    assert chains["dwh.sales"] == (("sales", "datamart"),)
    assert chains["ods.orders"] == ()


# ------------------------------------------------------------------ volume and frequency


def test_edges_are_drawn_by_volume_and_frequency() -> None:
    edge = ResultEdge("a", "b", "write")
    picture = Picture(volumes={("a", "b"): Volume(1_200_000, "Hourly")})
    assert picture.line(edge) == (4.1, "dotted")
    assert picture.line(ResultEdge("b", "c", "predicate")) == (1.0, "dashed")  # no volume: by its type
    assert Picture(volumes={("a", "b"): Volume(None, "once")}).line(edge) == (1.0, "solid")
    assert Picture(volumes={("a", "b"): Volume(10, "0 3 * * *")}).line(edge) == (1.0, "solid")  # unknown: no dashes


def test_legend_lists_widths_thinnest_first_and_frequencies_most_frequent_first() -> None:
    volumes = {("a", "b"): Volume(5_000, "daily"), ("c", "d"): Volume(18, "once"), ("e", "f"): Volume(None, "hourly")}
    legend = Picture(volumes=volumes).legend()
    assert [(entry.label, entry.width, entry.dash) for entry in legend] == [
        ("18 rows", 1.0, "solid"),
        ("5,000 rows", 1.7, "solid"),
        ("hourly", 1.0, "dotted"),
        ("daily", 1.0, "dashed"),
        ("once", 1.0, "solid"),
    ]


EXPORT = "fixtures/sql/oozie/manifest.yaml:45"  # wf_export/export_sales: 1,200,000 rows, hourly


@needs_dot
def test_dot_edges_and_legend_from_the_manifest(manifest_store: Path, tmp_path: Path) -> None:
    text = invoke(manifest_store, "down", "dwh.sales_web", "--show-transformations", "--format", "dot")
    document = dot_json(tmp_path, text)
    names = {obj["_gvid"]: obj["name"] for obj in document["objects"]}
    looks = {(names[e["tail"]], names[e["head"]]): (e.get("penwidth"), e.get("style")) for e in document["edges"]}
    assert looks[("dwh.sales_web", EXPORT)] == ("4.1", "dotted")
    assert looks[(EXPORT, "export.sales_feed")] == ("4.1", "dotted")
    legend = next(obj for obj in document["objects"] if obj["name"] == "cluster_legend")
    labels = [e["label"] for e in document["edges"] if e["tail"] in legend["nodes"]]
    assert labels == ["1,200,000 rows", "hourly"]


def test_graphml_edges_and_legend_from_the_manifest(manifest_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "volume.graphml"
    invoke(manifest_store, "down", "dwh.sales_web", "--show-transformations", "-o", str(path))
    assert_valid_format("graphml", path, "--require-labels")
    graph = nx.read_graphml(path)
    legend = [data["name"] for data in graph.nodes.values() if data["kind"] == "legend"]
    assert legend[2:] == ["1,200,000 rows", "hourly"]
    root = ET.parse(path).getroot()
    names = {node.get("id"): node.findtext(f"{G}data[@key='d2']") for node in root.iter(G + "node")}
    for edge in root.find(G + "graph").findall(G + "edge"):
        line = edge.find(f"{G}data/{Y}PolyLineEdge/{Y}LineStyle")
        touches_export = EXPORT in (names[edge.get("source")], names[edge.get("target")])
        # Downstream of dwh.sales_web all runs hourly; only export_sales says how many rows it moves.
        assert (line.get("width"), line.get("type")) == ("4.1" if touches_export else "1.0", "dotted")


def test_dataset_edges_carry_no_volume(manifest_store: Path) -> None:
    text = invoke(manifest_store, "down", "dwh.sales_web", "--format", "dot")
    assert "legend" not in text and 'penwidth="4.1"' not in text


# ------------------------------------------------------------------ a table drawn with its columns

VIEW = ResultNode("rpt.weekly", "view", 0, role="terminal")
WITH_TABLE = LineageResult(
    direction="up",
    roots=["rpt.weekly.revenue"],
    nodes=[ResultNode("rpt.daily.region", "column", 1), VIEW, ResultNode("rpt.weekly.revenue", "column", 0)],
    edges=[ResultEdge("rpt.daily.region", "rpt.weekly", "predicate", ("GROUP_BY",))],
)
RPT: Group = ("rpt", "schema")
WITH_TABLE_PICTURE = Picture(
    groups={
        "rpt.daily.region": (RPT, ("rpt.daily", "table")),
        "rpt.weekly": (RPT,),
        "rpt.weekly.revenue": (RPT, ("rpt.weekly", "view")),
    }
)


def test_graphml_table_in_the_answer_is_the_folder_of_its_columns(tmp_path: Path) -> None:
    path = graphml_file(tmp_path, WITH_TABLE, WITH_TABLE_PICTURE)
    assert_valid_format("graphml", path, "--require-labels")
    root = ET.parse(path).getroot()
    folder = next(node for node in root.iter(G + "node") if node.get("id") == "n1")
    assert folder.get("yfiles.foldertype") == "group"
    assert [node.get("id") for node in folder.find(G + "graph").findall(G + "node")] == ["n2"]
    assert folder.find(f".//{Y}BorderStyle").get("color") == style.ROLE_BORDERS["terminal"][0]
    graph = nx.read_graphml(path)
    assert [data["name"] for data in graph.nodes.values()].count("rpt.weekly") == 1
    assert graph.nodes["n1"]["role"] == "terminal"
    assert list(graph.edges()) == [("n0", "n1")]


@needs_dot
def test_dot_table_in_the_answer_is_drawn_once(tmp_path: Path) -> None:
    document = dot_json(tmp_path, to_dot(WITH_TABLE, WITH_TABLE_PICTURE))
    named = [obj for obj in document["objects"] if obj["name"] == "rpt.weekly"]
    assert len(named) == 1
    head, ports = table_rows(named[0]["label"])
    assert (head, ports) == ("rpt.weekly", {"c2": "revenue"})
    assert style.ROLE_BORDERS["terminal"][0] in named[0]["label"]
