"""Walks on the fixture warehouse: up, down, depth, cycles, patterns, names."""

from __future__ import annotations

import pytest

from lineage_cli.store.reader import open_store
from lineage_cli.walk.query import AmbiguousName, NameNotFound, lineage, resolve
from tests.conftest import WAREHOUSE


def golden_edges() -> set[tuple[str, str]]:
    lines = (WAREHOUSE / "expected_table_edges.txt").read_text().splitlines()
    return {tuple(line.split(" -> ")) for line in lines if line and not line.startswith("#")}


def ancestors(name: str, edges: set[tuple[str, str]]) -> set[str]:
    found, frontier = {name}, [name]
    while frontier:
        node = frontier.pop()
        for source, target in edges:
            if target == node and source not in found:
                found.add(source)
                frontier.append(source)
    return found


def descendants(name: str, edges: set[tuple[str, str]]) -> set[str]:
    return ancestors(name, {(t, s) for s, t in edges})


@pytest.mark.parametrize("table", ["mart.sales_daily", "rpt.v_sales_weekly", "dwh.dim_customer", "stg.pos_sales"])
def test_up_matches_the_transitive_closure_of_the_golden_edges(store, table) -> None:
    edges = golden_edges()
    result = lineage(store, table, "up")
    expected_nodes = ancestors(table, edges)
    assert {n.name for n in result.nodes} == expected_nodes
    assert {(e.source, e.target) for e in result.edges} == {(s, t) for s, t in edges if t in expected_nodes}
    assert {e.type for e in result.edges} <= {"flow"}


@pytest.mark.parametrize("table", ["stg.pos_sales", "stg.web_clickstream", "mart.sales_daily"])
def test_down_matches_the_transitive_closure_of_the_golden_edges(store, table) -> None:
    edges = golden_edges()
    result = lineage(store, table, "down")
    expected_nodes = descendants(table, edges)
    assert {n.name for n in result.nodes} == expected_nodes
    assert {(e.source, e.target) for e in result.edges} == {(s, t) for s, t in edges if s in expected_nodes}


def test_depth_bounds_the_hops(store) -> None:
    edges = golden_edges()
    result = lineage(store, "mart.sales_daily", "up", depth=1)
    direct = {s for s, t in edges if t == "mart.sales_daily"} | {"mart.sales_daily"}
    assert {n.name for n in result.nodes} == direct
    assert all(n.depth <= 1 for n in result.nodes)
    two = lineage(store, "mart.sales_daily", "up", depth=2)
    assert {n.name for n in two.nodes} > direct
    assert max(n.depth for n in two.nodes) == 2


def test_self_loop_terminates_and_is_kept(store) -> None:
    result = lineage(store, "dwh.dim_customer", "down")
    assert ("dwh.dim_customer", "dwh.dim_customer") in {(e.source, e.target) for e in result.edges}


def test_show_transformations_keeps_statement_nodes(store) -> None:
    result = lineage(store, "rpt.v_sales_weekly", "up", depth=1, show_transformations=True)
    steps = [n for n in result.nodes if n.kind == "transformation"]
    assert len(steps) == 1 and steps[0].file.endswith("sales_views.sql") and steps[0].line > 0
    assert {e.type for e in result.edges} == {"read", "write"}


def test_names_are_case_insensitive_and_patterns_merge(store) -> None:
    assert resolve(store, "MART.Sales_Daily") == [store.find("mart.sales_daily")]
    assert resolve(store, "sales_daily") == [store.find("mart.sales_daily")]  # schema omitted, unique
    starts = resolve(store, "stg.%")
    assert {store.name(n) for n in starts} == {s for s, _ in golden_edges() if s.startswith("stg.")}
    merged = lineage(store, "stg.pos_%", "down")
    assert set(merged.roots) == {"stg.pos_sales", "stg.pos_sales_line"}


def test_unknown_name_suggests_close_ones(store) -> None:
    with pytest.raises(NameNotFound) as caught:
        resolve(store, "mart.sales_dayly")
    assert "mart.sales_daily" in caught.value.suggestions


def test_ambiguous_short_name_lists_candidates(tmp_path) -> None:
    from lineage_cli.harvest.assemble import Harvest
    from lineage_cli.harvest.sql.script import harvest_text
    from lineage_cli.store.writer import write_store

    result = Harvest()
    harvest_text("INSERT INTO a.orders SELECT * FROM b.orders", "x.sql", result, "hive")
    write_store(result.graph, tmp_path / "g.lin", {})
    with pytest.raises(AmbiguousName) as caught:
        resolve(open_store(tmp_path / "g.lin"), "orders")
    assert caught.value.candidates == ["a.orders", "b.orders"]


def test_file_locations_are_datasets_found_by_their_name_as_written(tmp_path) -> None:
    from lineage_cli.harvest.assemble import Harvest
    from lineage_cli.harvest.sql.script import harvest_text
    from lineage_cli.store.writer import write_store

    result = Harvest()
    sql = """LOAD DATA INPATH 'hdfs://nn/Landing/Orders' INTO TABLE stg.orders;
    INSERT INTO dwh.orders SELECT * FROM stg.orders;
    INSERT OVERWRITE DIRECTORY 'hdfs://nn/Exports/Orders' SELECT * FROM dwh.orders"""
    harvest_text(sql, "load.sql", result, "hive")
    write_store(result.graph, tmp_path / "g.lin", {})
    store = open_store(tmp_path / "g.lin")
    down = lineage(store, "hdfs://nn/Landing/Orders", "down")
    assert {n.name: n.depth for n in down.nodes} == {
        "hdfs://nn/Landing/Orders": 0,
        "stg.orders": 1,
        "dwh.orders": 2,
        "hdfs://nn/Exports/Orders": 3,
    }
    with pytest.raises(NameNotFound) as caught:  # a location keeps its case
        resolve(store, "hdfs://nn/exports/orders")
    assert caught.value.suggestions[0] == "hdfs://nn/Exports/Orders"


def test_a_pattern_over_columns_selects_columns(store) -> None:
    starts = resolve(store, "mart.sales_daily.revenue%")
    assert [store.name(n) for n in starts] == ["mart.sales_daily.revenue_usd"]


def test_column_up_follows_projections_and_predicates_of_its_statement(store) -> None:
    plain = lineage(store, "rpt.v_sales_weekly.revenue_usd", "up", depth=1)
    assert {(e.source, e.target, e.type) for e in plain.edges} == {
        ("rpt.v_sales_daily.revenue_usd", "rpt.v_sales_weekly.revenue_usd", "projection")
    }
    gated = lineage(store, "rpt.v_sales_weekly.revenue_usd", "up", depth=1, predicates=True)
    # GROUP BY calendar_year, fiscal_week, channel, region; the window partitions by three and orders by the fourth
    predicates = {(e.source, e.target, e.subtypes) for e in gated.edges if e.type == "predicate"}
    assert predicates == {
        (f"rpt.v_sales_daily.{column}", "rpt.v_sales_weekly", ("GROUP_BY", "WINDOW"))
        for column in ("calendar_year", "fiscal_week", "channel", "region")
    }
    assert ("rpt.v_sales_weekly", "rpt.v_sales_weekly.revenue_usd", "contains") in {
        (e.source, e.target, e.type) for e in gated.edges
    }


# -- statements read approximately (a statement that did not parse) ----------------------------------------------
APPROXIMATE_SQL = """INSERT INTO dw.mid SELECT a FROM stg.src;
INSERT INTO dw.out SELECT a FROM dw.mid x WITH (FANCYHINT 7) QUALIFY ~~ 3;
INSERT INTO dw.both SELECT a FROM dw.mid x WITH (FANCYHINT 7) QUALIFY ~~ 3;
INSERT INTO dw.both SELECT a FROM dw.mid;
INSERT INTO dw.out2 SELECT a FROM dw.mid;
"""


@pytest.fixture(scope="module")
def approximate_store(tmp_path_factory):
    from lineage_cli.harvest.assemble import Harvest
    from lineage_cli.harvest.sql.script import harvest_text
    from lineage_cli.store.writer import write_store

    harvest = Harvest()
    harvest_text(APPROXIMATE_SQL, "a.sql", harvest, "postgres")
    path = tmp_path_factory.mktemp("approximate") / "graph.lin"
    write_store(harvest.graph, path, {})
    return open_store(path)


@pytest.mark.parametrize("vectorize_from", [10**12, 0], ids=["lists", "arrays"])
def test_edges_only_approximate_statements_give_are_marked_and_exact_walks_leave_them_out(
    approximate_store, monkeypatch, vectorize_from
) -> None:
    from lineage_cli.walk import traverse

    monkeypatch.setattr(traverse, "VECTORIZE_FROM_EDGES", vectorize_from)
    marked = {(e.source, e.target): e.subtypes for e in lineage(approximate_store, "stg.src", "down").edges}
    # dw.both is written by an exact statement too: parsed lineage wins
    assert marked == {
        ("stg.src", "dw.mid"): (),
        ("dw.mid", "dw.out"): ("APPROXIMATE",),
        ("dw.mid", "dw.both"): (),
        ("dw.mid", "dw.out2"): (),
    }
    exact = lineage(approximate_store, "stg.src", "down", exact=True)
    assert {(e.source, e.target) for e in exact.edges} == {
        ("stg.src", "dw.mid"),
        ("dw.mid", "dw.both"),
        ("dw.mid", "dw.out2"),
    }
    assert {n.name for n in lineage(approximate_store, "dw.out", "up", exact=True).nodes} == {"dw.out"}
    assert {n.name for n in lineage(approximate_store, "dw.out", "up").nodes} == {"dw.out", "dw.mid", "stg.src"}


@pytest.mark.parametrize("vectorize_from", [10**12, 0], ids=["lists", "arrays"])
def test_shown_statements_read_approximately_mark_their_reads_and_writes(
    approximate_store, monkeypatch, vectorize_from
) -> None:
    from lineage_cli.walk import traverse

    monkeypatch.setattr(traverse, "VECTORIZE_FROM_EDGES", vectorize_from)
    result = lineage(approximate_store, "dw.out", "up", show_transformations=True)
    marked = {(e.source, e.target, e.type): e.subtypes for e in result.edges}
    assert marked == {
        ("dw.mid", "a.sql:2", "read"): ("APPROXIMATE",),
        ("a.sql:2", "dw.out", "write"): ("APPROXIMATE",),
        ("stg.src", "a.sql:1", "read"): (),
        ("a.sql:1", "dw.mid", "write"): (),
    }
    exact = lineage(approximate_store, "dw.both", "up", show_transformations=True, exact=True)
    assert "a.sql:3" not in {n.name for n in exact.nodes} and "a.sql:4" in {n.name for n in exact.nodes}
