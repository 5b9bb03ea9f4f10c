"""Walks under walkplans: every built-in plan's exact answer on the fixtures, the fast and the general
walk agreeing, YAML and XML plans agreeing, and each rule field and condition on graphs small enough to
check by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineage_cli.model import EdgeType, Graph, NodeKind, Subtype
from lineage_cli.store.reader import open_store
from lineage_cli.store.writer import write_store
from lineage_cli.walk import traverse
from lineage_cli.walk.answer import answer
from lineage_cli.walk.edges import TypedEdges
from lineage_cli.walk.planned import _GeneralWalk, compile_plan, plan_walk
from lineage_cli.walk.query import lineage
from lineage_cli.walk.walkplan import builtin_plan, load_plan
from tests.conftest import WAREHOUSE
from tests.store.storeview import read_store
from tests.walk.walks import (
    OOZIE,
    REVENUE_SHAPING,
    REVENUE_UPSTREAM,
    STATEMENTS,
    branchless,
    closure,
    edges,
    golden_edges,
    golden_statements,
    nodes,
)

# ------------------------------------------------------------------------------------- built-in plans


@pytest.mark.parametrize(("table", "direction"), [("mart.sales_daily", "up"), ("stg.pos_sales", "down")])
def test_tables_plan_is_the_golden_closure(store, table, direction) -> None:
    golden = golden_edges()
    reached = closure(table, golden, direction == "up")
    result = lineage(store, table, direction, plan="tables")
    assert {name for name, _ in nodes(result)} == reached
    end = 1 if direction == "up" else 0  # the end of an edge that must be in the walk for it to be walked
    assert edges(result) == {(s, t, "flow") for s, t in golden if (s, t)[end] in reached}


@pytest.mark.parametrize(("table", "direction"), [("rpt.v_sales_daily", "up"), ("ods.web_event", "down")])
def test_transformations_plan_shows_the_golden_statements(store, table, direction) -> None:
    """Upstream: the statements writing each reached dataset and all they read; downstream: the
    statements reading each reached dataset and all they write.  A walk records the edges it goes
    along, so a statement's other targets (upstream) or other sources (downstream) stay out.  The store
    has a node per branch of a multi-insert (`file:line#2`), the golden file one statement: merged here."""
    statements = golden_statements(WAREHOUSE, STATEMENTS)
    reached = closure(table, golden_edges(), direction == "up")
    used = {s: io for s, io in statements.items() if (io[0] if direction == "up" else io[1]) & reached}
    expected = {(source, s, "read") for s, (_, sources) in used.items() for source in sources}
    expected |= {(s, target, "write") for s, (targets, _) in used.items() for target in targets}
    walked_along = "write" if direction == "up" else "read"  # the edges whose dataset end must be reached
    expected = {e for e in expected if e[2] != walked_along or ({e[0], e[1]} & reached)}
    result = lineage(store, table, direction, plan="transformations")
    assert {(branchless(s), branchless(t), kind) for s, t, kind in edges(result)} == expected
    assert {branchless(name) for name, kind in nodes(result) if kind == "transformation"} == set(used)
    assert {name for name, kind in nodes(result) if kind != "transformation"} == reached


def test_transformations_plan_depth_counts_dataset_hops(store) -> None:
    result = lineage(store, "rpt.v_sales_weekly", "up", depth=2, plan="transformations")
    depths = {n.name.removeprefix(STATEMENTS): n.depth for n in result.nodes}
    # v_sales_weekly <- its view statement (line 23) <- v_sales_daily <- line 4 <- mart.sales_daily, dwh.dim_date
    assert depths == {
        "rpt.v_sales_weekly": 0,
        "hive/rpt/sales_views.sql:23": 1,
        "rpt.v_sales_daily": 1,
        "hive/rpt/sales_views.sql:4": 2,
        "mart.sales_daily": 2,
        "dwh.dim_date": 2,
    }


def test_columns_plan_is_value_lineage_with_what_shapes_the_value(store) -> None:
    result = lineage(store, "rpt.v_sales_weekly.revenue_usd", "up", plan="columns")
    assert {(e.source, e.target, e.subtypes) for e in result.edges} == REVENUE_UPSTREAM | REVENUE_SHAPING
    shaping = {(s, t) for s, t, subtypes in REVENUE_SHAPING if subtypes[0] in ("WINDOW", "CONDITIONAL")}
    assert {(e.source, e.target) for e in result.edges if e.type == "predicate"} == shaping
    assert {n.name for n in result.nodes} == {end for s, t, _ in REVENUE_UPSTREAM | REVENUE_SHAPING for end in (s, t)}
    assert lineage(store, "rpt.v_sales_weekly.revenue_usd", "up") == result  # the default for a column


def test_columns_with_predicates_ties_predicates_to_their_statement(store) -> None:
    # v_sales_weekly GROUPs BY its four keys, and its window partitions by three and orders by fiscal_week:
    # upstream of one of its columns, the four keys gate the view (shown through it), one hop like the value.
    up = lineage(store, "rpt.v_sales_weekly.revenue_usd", "up", depth=1, plan="columns-with-predicates")
    keys = ("calendar_year", "fiscal_week", "channel", "region")
    assert {(e.source, e.target, e.type, e.subtypes) for e in up.edges} == {
        ("rpt.v_sales_daily.revenue_usd", "rpt.v_sales_weekly.revenue_usd", "projection", ("AGGREGATION",)),
        ("rpt.v_sales_weekly", "rpt.v_sales_weekly.revenue_usd", "contains", ()),
    } | {(f"rpt.v_sales_daily.{key}", "rpt.v_sales_weekly", "predicate", ("GROUP_BY", "WINDOW")) for key in keys}
    # downstream of a key: its value goes on to the weekly region, and as a key it gates every column the
    # weekly view's statement writes; the walk goes on from those columns, not from the view
    down = lineage(store, "mart.sales_daily.region", "down", plan="columns-with-predicates")
    weekly = ("calendar_year", "channel", "fiscal_week", "order_cnt", "region", "revenue_usd", "revenue_ytd")
    assert edges(down) == {
        ("mart.sales_daily.region", "rpt.v_sales_daily.region", "projection"),
        ("rpt.v_sales_daily.region", "rpt.v_sales_weekly.region", "projection"),
        ("rpt.v_sales_daily.region", "rpt.v_sales_weekly", "predicate"),
        ("rpt.v_sales_daily.region", "rpt.v_sales_weekly.revenue_ytd", "predicate"),  # its window's key
    } | {("rpt.v_sales_weekly", f"rpt.v_sales_weekly.{c}", "contains") for c in weekly}
    assert {(n.name, n.depth) for n in down.nodes if n.kind != "column"} == {("rpt.v_sales_weekly", 2)}
    assert lineage(store, "mart.sales_daily.region", "down", predicates=True) == down


def test_impact_plan_reaches_every_table_and_column_downstream(store, warehouse_store) -> None:
    """Expected from the golden table edges and the store's column edges by plain set logic: the tables
    downstream, all their columns (a changed table changes its columns), and the column edges leaving
    them; statements folded to flow edges."""
    view = read_store(warehouse_store)
    tables = closure("stg.web_clickstream", golden_edges(), up=False)
    columns = {c for t, c, kind, _ in view.edges if kind is EdgeType.CONTAINS and t in tables}
    expected = {(s, t, "flow") for s, t in golden_edges() if s in tables}
    expected |= {(t, c, "contains") for t, c, kind, _ in view.edges if kind is EdgeType.CONTAINS and t in tables}
    expected |= {(s, t, kind.label) for s, t, kind, _ in view.edges if kind is EdgeType.PROJECTION and s in columns}
    expected |= {(s, t, kind.label) for s, t, kind, _ in view.edges if kind is EdgeType.PREDICATE and s in columns}
    result = lineage(store, "stg.web_clickstream", "down", plan="impact")
    assert nodes(result) == {(t, view.kinds[t].label) for t in tables} | {(c, "column") for c in columns}
    assert edges(result) == expected


def test_workflows_plan_shows_each_statement_s_module_and_workflow(flow) -> None:
    """Upstream of dwh.sales_stats: refresh_stats (declared) reads dwh.sales, which build_sales writes from
    ods.customers and ods.orders, which load_customers and load_orders write (manifest.yaml)."""
    statements = {
        f"{OOZIE}manifest.yaml:39": "wf_sales/refresh_stats",
        f"{OOZIE}sql/dwh_sales.sql:7": "wf_sales/build_sales",
        f"{OOZIE}sql/ods_customers.sql:3": "wf_ingest/load_customers",
        f"{OOZIE}sql/ods_orders.sql:5": "wf_ingest/load_orders",
    }
    result = lineage(flow, "dwh.sales_stats", "up", plan="workflows")
    members = {(s, t) for s, t, kind in edges(result) if kind == "member"}
    assert members == set(statements.items()) | {(m, m.split("/")[0]) for m in statements.values()}
    assert {n for n, k in nodes(result) if k in ("module", "workflow")} == {
        *statements.values(),
        "wf_sales",
        "wf_ingest",
    }
    table_level = lineage(flow, "dwh.sales_stats", "up", plan="transformations")
    assert edges(result) - {(s, t, k) for s, t, k in edges(result) if k == "member"} == edges(table_level)


# ------------------------------------------------------------------- the two walks, the two plan forms


@pytest.mark.parametrize("vectorize_from", [0, 10**12], ids=["numpy hops", "python hops"])
@pytest.mark.parametrize("name", ["tables", "transformations", "columns"])
def test_the_general_walk_gives_what_the_frontier_walk_gives(store, name, vectorize_from, monkeypatch) -> None:
    plan = builtin_plan(name)
    assert compile_plan(plan.rules) is not None  # these go the fast way in lineage()
    monkeypatch.setattr(traverse, "VECTORIZE_FROM_EDGES", vectorize_from)
    kinds = (NodeKind.COLUMN,) if name == "columns" else (NodeKind.TABLE, NodeKind.VIEW, NodeKind.COLUMN)
    starts = [n for n in range(store.node_count) if store.kind(n) in kinds]
    for start in starts[:: 3 if name == "columns" else 7]:
        for direction in ("up", "down"):
            for depth in (None, 1, 2):
                fast = answer(store, plan_walk(store, [start], direction, plan, depth=depth), [start], direction)
                general = _GeneralWalk(store, direction, plan.rules, depth).run([start])
                assert answer(store, general, [start], direction) == fast, (store.name(start), direction, depth)


def test_the_columns_plan_walks_column_predicates_but_not_those_onto_tables(store) -> None:
    predicates = [
        (source, target)
        for source in range(store.node_count)
        for target, attributes, _ in TypedEdges(store).out(source, EdgeType.PREDICATE)
        if store.kind(target) is NodeKind.COLUMN
    ]
    assert predicates, "the warehouse fixture has conditions and windows that shape a column"
    source, target = predicates[0]
    reached = plan_walk(store, [target], "up", builtin_plan("columns"))
    assert source in list(reached.nodes)
    assert all(store.kind(node) is NodeKind.COLUMN for node in list(reached.nodes))


def test_which_plans_take_the_frontier_walk() -> None:
    fast = {name: compile_plan(builtin_plan(name).rules) for name in ("tables", "transformations")}
    assert (fast["tables"].mask, fast["tables"].fold) == (
        EdgeType.READ.bit | EdgeType.WRITE.bit | EdgeType.FLOW.bit,
        True,
    )
    assert fast["transformations"].fold is False
    columns = compile_plan(builtin_plan("columns").rules)  # projections, and predicates onto columns only
    assert (columns.mask, columns.ends) == (EdgeType.PROJECTION.bit | EdgeType.PREDICATE.bit, {5: frozenset({3})})
    # predicates onto tables are tied to their statement, members are not data hops: the general walk
    general = ("columns-with-predicates", "impact", "workflows")
    assert all(compile_plan(builtin_plan(n).rules) is None for n in general)


YAML_PLAN = """\
name: keys
description: values, and grouping keys only when asked
edges:
  - edge: projection
    conditions:
      schema: [rpt, mart]
  - edge: predicate
    follow: [column]
    when_arg: keys
    conditions:
      subtype: [GROUP_BY]
      max_depth: 2
"""

XML_PLAN = """\
<?xml version="1.0"?>
<lineageServerPlan name="keys" description="values, and grouping keys only when asked">
  <useEdge name="projection">
    <condition schema="rpt,mart"/>
  </useEdge>
  <useEdge name="predicate" follow="column" conditionalOnArg="keys">
    <condition subtype="GROUP_BY" maxDepth="2"/>
  </useEdge>
</lineageServerPlan>
"""


@pytest.mark.parametrize("args", [frozenset(), frozenset({"keys"})])
def test_yaml_and_xml_plans_walk_alike(store, tmp_path, args) -> None:
    (tmp_path / "keys.yaml").write_text(YAML_PLAN)
    (tmp_path / "keys.xml").write_text(XML_PLAN)
    from_yaml, from_xml = load_plan(tmp_path / "keys.yaml"), load_plan(tmp_path / "keys.xml")
    for column in ("rpt.v_sales_weekly.revenue_usd", "mart.sales_daily.region", "dwh.fct_sales.net_amount_usd"):
        for direction in ("up", "down"):
            walked = lineage(store, column, direction, plan=from_yaml, args=args)
            assert walked == lineage(store, column, direction, plan=from_xml, args=args)
    up = lineage(store, "rpt.v_sales_weekly.revenue_usd", "up", plan=from_yaml, args=args)
    # schema rpt or mart only: the chain stops at mart.sales_daily.revenue_usd (dwh is not reached)
    assert {n.name for n in up.nodes if n.kind == "column"} >= {"mart.sales_daily.revenue_usd"}
    assert not any(n.name.startswith(("dwh.", "ods.", "stg.")) for n in up.nodes)
    # with --arg keys, the GROUP BY keys of v_sales_weekly, and of the statements below within depth 2
    keys = {(e.source, e.target) for e in up.edges if e.type == "predicate"}
    assert ("rpt.v_sales_daily.region", "rpt.v_sales_weekly") in keys if args else not keys


# ------------------------------------------------------------------------ rule fields on a small graph


def small_store(tmp_path: Path, edges: list[tuple[str, str, EdgeType, int]], kinds: dict[str, NodeKind]):
    graph = Graph()
    for name, kind in kinds.items():
        graph.add_node(name, kind, name.rsplit(".", 1)[0] if kind is NodeKind.COLUMN else None)
    for source, target, edge_type, flags in edges:
        graph.add_edge(source, target, edge_type, flags)
    write_store(graph, tmp_path / "small.lin", {})
    return open_store(tmp_path / "small.lin")


def plan_file(tmp_path: Path, rules: str) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(f"name: test\nedges:\n{rules}")
    return path


TABLE, COLUMN = NodeKind.TABLE, NodeKind.COLUMN
CHAIN = {"a.t": TABLE, "a.t.x": COLUMN, "b.u.y": COLUMN, "c.v.z": COLUMN, "b.u": TABLE, "c.v": TABLE}
# a.t.x -> b.u.y -> c.v.z (projections), a.t.x filters b.u
TABLE_COLUMNS = [("a.t", "x"), ("b.u", "y"), ("b.u", "w"), ("c.v", "z")]
CHAIN_EDGES = [
    ("a.t.x", "b.u.y", EdgeType.PROJECTION, Subtype.IDENTITY.bit),
    ("b.u.y", "c.v.z", EdgeType.PROJECTION, Subtype.AGGREGATION.bit),
    ("a.t.x", "b.u", EdgeType.PREDICATE, Subtype.FILTER.bit),
    ("a.t", "a.t.x", EdgeType.CONTAINS, 0),
    ("b.u", "b.u.y", EdgeType.CONTAINS, 0),
    ("c.v", "c.v.z", EdgeType.CONTAINS, 0),
]


@pytest.mark.parametrize(
    ("rules", "expected_nodes", "expected_edges"),
    [
        # a condition on the reached node's name, schema, kind; on the edge's subtype; on depth
        ("  - edge: projection\n    conditions: {name_like: 'b.%'}\n", {"a.t.x", "b.u.y"}, {("a.t.x", "b.u.y")}),
        ("  - edge: projection\n    conditions: {schema: [c]}\n", {"a.t.x"}, set()),
        ("  - edge: projection\n    conditions: {subtype: [AGGREGATION, FILTER]}\n", {"a.t.x"}, set()),
        ("  - edge: projection\n    conditions: {max_depth: 1}\n", {"a.t.x", "b.u.y"}, {("a.t.x", "b.u.y")}),
        ("  - edge: predicate\n    conditions: {node_kind: [column]}\n", {"a.t.x"}, set()),
        # follow: false stops at the first hop; collect_edge: false hides the edge but keeps the node
        ("  - edge: projection\n    follow: false\n", {"a.t.x", "b.u.y"}, {("a.t.x", "b.u.y")}),
        ("  - edge: projection\n    collect_edge: false\n", {"a.t.x", "b.u.y", "c.v.z"}, set()),
        # a node not collected is folded: a.t.x -> c.v.z, of the path's type (projection)
        ("  - edge: projection\n    collect_node: [table]\n", {"a.t.x"}, set()),
        (
            "  - edge: projection\n  - edge: contains\n    direction: backward\n    collect_node: false\n",
            {"a.t.x", "b.u.y", "c.v.z"},
            {("a.t.x", "b.u.y"), ("b.u.y", "c.v.z")},
        ),
    ],
)
def test_rule_fields_and_conditions(tmp_path, rules, expected_nodes, expected_edges) -> None:
    store = small_store(tmp_path, CHAIN_EDGES, CHAIN)
    result = lineage(store, "a.t.x", "down", plan=str(plan_file(tmp_path, rules)))
    assert {n.name for n in result.nodes} == expected_nodes
    assert {(e.source, e.target) for e in result.edges} == expected_edges


def test_folded_nodes_do_not_count_toward_depth(tmp_path) -> None:
    """Table lineage from column lineage, columns folded: a.t -> b.u -> c.v is two table hops, whatever
    lies between, and going down to a column and back up to its table is no path (no self-loops)."""
    kinds = {**CHAIN, "b.u.w": COLUMN}
    store = small_store(
        tmp_path,
        [
            ("a.t.x", "b.u.y", EdgeType.PROJECTION, 0),
            ("b.u.w", "c.v.z", EdgeType.PROJECTION, 0),
            *((table, f"{table}.{column}", EdgeType.CONTAINS, 0) for table, column in TABLE_COLUMNS),
        ],
        kinds,
    )
    rules = (
        "  - edge: contains\n    collect_node: [table]\n"
        "  - edge: projection\n    collect_node: [table]\n"
        "  - edge: contains\n    direction: backward\n    collect_node: [table]\n"
    )
    path = str(plan_file(tmp_path, rules))
    result = lineage(store, "a.t", "down", plan=path)
    assert {(n.name, n.depth) for n in result.nodes} == {("a.t", 0), ("b.u", 1), ("c.v", 2)}
    assert {(e.source, e.target, e.type) for e in result.edges} == {("a.t", "b.u", "flow"), ("b.u", "c.v", "flow")}
    assert {n.name for n in lineage(store, "a.t", "down", depth=1, plan=path).nodes} == {"a.t", "b.u"}


def test_backward_and_both_directions(tmp_path) -> None:
    store = small_store(tmp_path, CHAIN_EDGES, CHAIN)
    rules = "  - edge: projection\n    direction: backward\n"
    assert {n.name for n in lineage(store, "b.u.y", "down", plan=str(plan_file(tmp_path, rules))).nodes} == {
        "a.t.x",
        "b.u.y",
    }
    both = lineage(store, "b.u.y", "up", plan=str(plan_file(tmp_path, "  - edge: projection\n    direction: both\n")))
    assert {(e.source, e.target) for e in both.edges} == {("a.t.x", "b.u.y"), ("b.u.y", "c.v.z")}


def test_an_exact_walk_on_a_store_with_nothing_approximate_is_the_frontier_walk(store, monkeypatch) -> None:
    assert not store.node_flags_present  # the warehouse fixture parses whole
    table = store.find("mart.sales_daily")
    plan = builtin_plan("tables")
    expected = answer(store, plan_walk(store, [table], "up", plan), [table], "up")

    def no_general_walk(*arguments: object) -> None:
        raise AssertionError("an exact walk over a store with nothing approximate took the general walk")

    monkeypatch.setattr("lineage_cli.walk.planned._GeneralWalk", no_general_walk)
    assert answer(store, plan_walk(store, [table], "up", plan, exact=True), [table], "up") == expected
