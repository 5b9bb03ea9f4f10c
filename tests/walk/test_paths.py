"""`lineage path` on a graph with several routes, under walkplans, in every format; `lineage io` on the
flow fixture and on a graph with views."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.harvest.batch import harvest
from lineage_cli.model import EdgeType, Graph, NodeKind, Provenance, Subtype
from lineage_cli.store.reader import open_store
from lineage_cli.store.writer import write_store
from lineage_cli.walk.paths import NoPath, lineage_path
from lineage_cli.walk.workflow_io import StepNotFound, workflow_io
from tests.walk.walks import edges, nodes

#  a -> b -> d -> f       three routes from a to d: a b d (shortest), a b c e d, a c e d;
#  a -> c -> e -> d       d -> a closes a cycle that no simple path may use
#  b -> c,  d -> a
ROUTES = [("a", "b"), ("b", "d"), ("a", "c"), ("c", "e"), ("e", "d"), ("b", "c"), ("d", "f"), ("d", "a")]


def route_store(tmp_path: Path):
    graph = Graph()
    for source, target in ROUTES:
        graph.add_node(f"s.{source}", NodeKind.TABLE)
        graph.add_node(f"s.{target}", NodeKind.TABLE)
        graph.add_edge(f"s.{source}", f"s.{target}", EdgeType.FLOW)
    write_store(graph, tmp_path / "routes.lin", {})
    return tmp_path / "routes.lin"


def steps(path: str) -> list[tuple[str, str]]:
    names = [f"s.{n}" for n in path]
    return list(zip(names, names[1:], strict=False))


def test_shortest_path(tmp_path) -> None:
    found = lineage_path(open_store(route_store(tmp_path)), "s.a", "s.d")
    assert (found.paths, found.complete) == (1, True)
    assert {(e.source, e.target) for e in found.result.edges} == set(steps("abd"))
    assert [(n.name, n.depth) for n in found.result.nodes] == [("s.a", 0), ("s.b", 1), ("s.d", 2)]
    assert (found.result.direction, found.result.roots) == ("path", ["s.a", "s.d"])


def test_all_simple_paths_and_the_bound(tmp_path) -> None:
    store = open_store(route_store(tmp_path))
    found = lineage_path(store, "s.a", "s.d", all_paths=True)
    assert (found.paths, found.complete) == (3, True)
    assert {(e.source, e.target) for e in found.result.edges} == set(steps("abd") + steps("abced") + steps("aced"))
    assert "s.f" not in {n.name for n in found.result.nodes}  # past the target: on no path
    # depth-first in name order: from b, c comes before d
    first_two = lineage_path(store, "s.a", "s.d", all_paths=True, max_paths=2)
    assert (first_two.paths, first_two.complete) == (2, False)
    assert {(e.source, e.target) for e in first_two.result.edges} == set(steps("abced") + steps("abd"))


def test_no_path_says_so_and_suggests_the_other_way(tmp_path) -> None:
    store = open_store(route_store(tmp_path))
    with pytest.raises(NoPath, match=r"no path from s\.f to s\.b under the tables walkplan; s\.b is upstream"):
        lineage_path(store, "s.f", "s.b")
    with pytest.raises(NoPath, match="names 6 nodes"):
        lineage_path(store, "s.%", "s.d")


def etl_store(tmp_path: Path) -> Path:
    """Two statements in a row: s.a -> s.b -> s.c, column x passed along."""
    (tmp_path / "etl.sql").write_text(
        "INSERT INTO s.b SELECT a.x FROM s.a a;\nINSERT INTO s.c SELECT b.x FROM s.b b;\n"
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        result = harvest([Path("etl.sql")], dialect="hive")
    write_store(result.graph, tmp_path / "etl.lin", {})
    return tmp_path / "etl.lin"


def test_paths_follow_the_walkplan(tmp_path) -> None:
    store = open_store(etl_store(tmp_path))
    tables = lineage_path(store, "s.a", "s.c").result
    assert edges(tables) == {("s.a", "s.b", "flow"), ("s.b", "s.c", "flow")}
    shown = lineage_path(store, "s.a", "s.c", plan="transformations").result
    assert edges(shown) == {
        ("s.a", "etl.sql:1", "read"),
        ("etl.sql:1", "s.b", "write"),
        ("s.b", "etl.sql:2", "read"),
        ("etl.sql:2", "s.c", "write"),
    }
    with pytest.raises(NoPath, match="within 1 hops"):
        lineage_path(store, "s.a", "s.c", depth=1)
    columns = lineage_path(store, "s.a.x", "s.c.x").result
    assert edges(columns) == {("s.a.x", "s.b.x", "projection"), ("s.b.x", "s.c.x", "projection")}


@pytest.mark.parametrize("fmt", ["tree", "json", "tgf", "graphml", "dot"])
def test_path_in_every_format(tmp_path, fmt) -> None:
    store = route_store(tmp_path)
    outcome = CliRunner().invoke(cli, ["path", "s.a", "s.d", "--all", "--store", str(store), "--format", fmt])
    assert outcome.exit_code == 0, outcome.output
    text = outcome.stdout
    if fmt == "json":
        document = json.loads(text)
        assert document["roots"] == ["s.a", "s.d"] and len(document["edges"]) == 6
    elif fmt == "graphml":
        (tmp_path / "p.graphml").write_text(text)
        assert nx.read_graphml(tmp_path / "p.graphml").number_of_edges() == 6
    elif fmt == "tree":
        assert text.splitlines()[0] == "s.a table" and "s.d" in text
    else:
        assert "s.e" in text and "s.f" not in text


def test_path_cli_errors_and_the_bound_note(tmp_path) -> None:
    store = ["--store", str(route_store(tmp_path))]
    runner = CliRunner()
    outcome = runner.invoke(cli, ["path", "s.f", "s.a", *store])
    assert outcome.exit_code == 1 and outcome.stderr.startswith("error: no path from s.f to s.a")
    outcome = runner.invoke(cli, ["path", "s.a", "s.d", "--all", "--max-paths", "1", "--format", "tgf", *store])
    assert outcome.exit_code == 0 and "showing the first 1 paths" in outcome.stderr


# ------------------------------------------------------------------------------------------------- io


def test_io_of_a_workflow(flow) -> None:
    """wf_sales (manifest.yaml): build_sales reads ods.customers and ods.orders and writes dwh.sales, then
    splits it into dwh.sales_web and dwh.sales_store; archive_sales and refresh_stats (declared) read
    dwh.sales — so it is read and written — and write the archive (parameterized) and dwh.sales_stats."""
    result = workflow_io(flow, "wf_sales")
    assert {(e.source, e.target, e.type, e.subtypes) for e in result.edges} == {
        ("ods.customers", "wf_sales", "read", ()),
        ("ods.orders", "wf_sales", "read", ()),
        ("dwh.sales", "wf_sales", "read", ("DECLARED",)),
        ("wf_sales", "dwh.sales", "write", ()),
        ("wf_sales", "dwh.sales_web", "write", ()),
        ("wf_sales", "dwh.sales_store", "write", ()),
        ("wf_sales", "dwh.sales_stats", "write", ("DECLARED",)),
        ("wf_sales", "${hivevar:arch_db}.sales_history", "write", ()),
        # the parameterized output, on to the table its default names (vars.yaml: arch_db -> archive)
        ("${hivevar:arch_db}.sales_history", "archive.sales_history", "default", ()),
    }
    assert result.roots == ["wf_sales"] and result.direction == "io"
    assert {(n.name, n.depth) for n in result.nodes if n.depth != 1} == {("wf_sales", 0), ("archive.sales_history", 2)}


def test_io_of_a_module_and_a_parameterized_input(flow) -> None:
    assert edges(workflow_io(flow, "wf_ingest/load_orders")) == {
        ("#src_schema#.t_orders", "wf_ingest/load_orders", "read"),
        ("wf_ingest/load_orders", "ods.orders", "write"),
        ("stg.t_orders", "#src_schema#.t_orders", "default"),  # an input: the data comes from the default
    }


def test_io_expands_input_views_to_their_tables(tmp_path) -> None:
    """wf/m reads the view v, defined over the table a and the view w, which is defined over b."""
    graph = Graph()
    for name, kind in (
        ("s.a", NodeKind.TABLE),
        ("s.b", NodeKind.TABLE),
        ("s.v", NodeKind.VIEW),
        ("s.w", NodeKind.VIEW),
    ):
        graph.add_node(name, kind)
    graph.add_node("wf", NodeKind.WORKFLOW)
    graph.add_node("wf/m", NodeKind.MODULE, "wf")
    for line in (1, 2, 3):  # the load, v's definition, w's definition
        graph.add_transformation(f"etl.sql:{line}", Provenance("etl.sql", line))
    graph.containers["etl.sql:1"] = "wf/m"
    for source, target, kind in [
        ("etl.sql:1", "wf/m", EdgeType.MEMBER),
        ("wf/m", "wf", EdgeType.MEMBER),
        ("s.v", "etl.sql:1", EdgeType.READ),
        ("etl.sql:1", "s.a", EdgeType.WRITE),
        ("s.a", "etl.sql:2", EdgeType.READ),
        ("s.w", "etl.sql:2", EdgeType.READ),
        ("etl.sql:2", "s.v", EdgeType.WRITE),
        ("s.b", "etl.sql:3", EdgeType.READ),
        ("etl.sql:3", "s.w", EdgeType.WRITE),
    ]:
        graph.add_edge(source, target, kind, Subtype.DECLARED.bit if kind is EdgeType.READ and source == "s.b" else 0)
    write_store(graph, tmp_path / "views.lin", {})
    result = workflow_io(open_store(tmp_path / "views.lin"), "wf")
    assert edges(result) == {
        ("s.v", "wf", "read"),
        ("wf", "s.a", "write"),  # s.a is written by wf and read by v's definition: both show
        ("s.a", "s.v", "flow"),
        ("s.w", "s.v", "flow"),
        ("s.b", "s.w", "flow"),
    }
    assert {(n.name, n.depth) for n in result.nodes} == {("wf", 0), ("s.v", 1), ("s.a", 1), ("s.w", 2), ("s.b", 3)}


def test_io_of_an_unknown_step(flow) -> None:
    with pytest.raises(StepNotFound, match="no module or workflow named 'wf_sale'; closest: wf_sales"):
        workflow_io(flow, "wf_sale")
    with pytest.raises(StepNotFound):
        workflow_io(flow, "dwh.sales")  # a table is not a step


def test_io_tree_has_inputs_and_outputs(flow_store) -> None:
    outcome = CliRunner().invoke(cli, ["io", "wf_ingest/load_orders", "--store", str(flow_store), "--format", "tree"])
    assert outcome.exit_code == 0
    assert outcome.stdout.splitlines() == [
        "wf_ingest/load_orders module",
        "├── inputs",
        "│   └── #src_schema#.t_orders parameterized (source)",
        "│       └── stg.t_orders table (isolated)",
        "└── outputs",
        "    └── ods.orders table",
    ]
    assert nodes(workflow_io(open_store(flow_store), "wf_ingest/load_orders")) >= {("ods.orders", "table")}
