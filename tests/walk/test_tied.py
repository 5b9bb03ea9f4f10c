"""The vectorized tied walk (``walk/tied.py``) gives what the general walk gives, on every plan it takes.

On the harvested fixtures (statements known: predicates tied through ``column_write``), the oozie flow
(modules and workflows: free hops), and random graphs that mix statements with imported edges of no
statement, columns with and without ``contains`` edges, and predicates onto tables and onto columns.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_cli.model import EdgeType, Graph, NodeKind, Provenance
from lineage_cli.store.reader import open_store
from lineage_cli.store.writer import write_store
from lineage_cli.walk.answer import answer
from lineage_cli.walk.planned import _GeneralWalk, plan_walk, tied_plan
from lineage_cli.walk.tied import tied_walk
from lineage_cli.walk.walkplan import EdgeRule, WalkPlan, builtin_plan

E = EdgeType
PLANS = {
    "every edge type": tuple(EdgeRule(t) for t in EdgeType),
    "columns-with-predicates": builtin_plan("columns-with-predicates").rules,
    "values and predicates": (EdgeRule(E.PROJECTION), EdgeRule(E.PREDICATE)),
    "predicates, containers, writers": (EdgeRule(E.PREDICATE), EdgeRule(E.CONTAINS), EdgeRule(E.COLUMN_WRITE)),
    "statements": builtin_plan("transformations").rules,
}


def assert_walks_agree(store, starts: list[int], rules: tuple[EdgeRule, ...], depths=(None, 1, 2, 3)) -> None:
    tied = tied_plan(rules)
    assert tied is not None
    for start in starts:
        for direction in ("up", "down"):
            for depth in depths:
                general = _GeneralWalk(store, direction, rules, depth).run([start])
                vectorized = tied_walk(store, [start], direction, *tied, depth)
                expected = answer(store, general, [start], direction)
                assert answer(store, vectorized, [start], direction) == expected, (store.name(start), direction, depth)


@pytest.mark.parametrize("plan", PLANS)
def test_on_the_fixture_warehouse(store, plan) -> None:
    assert_walks_agree(store, list(range(0, store.node_count, 3)), PLANS[plan])


@pytest.mark.parametrize("plan", ["every edge type", "statements"])
def test_on_the_oozie_flow_with_modules_and_workflows(flow, plan) -> None:
    assert_walks_agree(flow, list(range(flow.node_count)), PLANS[plan])


def test_which_plans_it_takes() -> None:
    assert tied_plan(builtin_plan("columns-with-predicates").rules) == (
        E.PROJECTION.bit | E.PREDICATE.bit,
        frozenset({int(NodeKind.TABLE), int(NodeKind.VIEW), int(NodeKind.PARAMETERIZED)}),
    )
    # folding (impact), conditions and kind-dependent follows (workflows) stay with the general walk
    assert tied_plan(builtin_plan("impact").rules) is None
    assert tied_plan(builtin_plan("workflows").rules) is None
    # a kind followed through one rule and not another: whether a node is followed depends on how it was reached
    mixed = (EdgeRule(E.PROJECTION), EdgeRule(E.PREDICATE, follow=frozenset({"table"})))
    assert tied_plan(mixed) is None


def test_a_query_takes_it_once_numpy_is_loaded(store, monkeypatch) -> None:
    import numpy  # noqa: F401 - loaded: the vectorized walk pays

    def no_general_walk(*arguments: object) -> None:
        raise AssertionError("a plan the tied walk takes went to the general walk")

    start = store.find("mart.sales_daily.revenue_usd")
    rules = PLANS["columns-with-predicates"]
    expected = answer(store, _GeneralWalk(store, "up", rules, None).run([start]), [start], "up")
    monkeypatch.setattr("lineage_cli.walk.planned._GeneralWalk", no_general_walk)
    plan = WalkPlan("t", "", rules)
    assert answer(store, plan_walk(store, [start], "up", plan), [start], "up") == expected


# ----------------------------------------------------------------------------------------- random graphs

TABLES = [f"s.t{i}" for i in range(3)]
COLUMNS = [f"{t}.c{j}" for t in TABLES for j in range(2)]
STATEMENTS = [f"q{i}.sql:1" for i in range(2)]
STATEMENT = st.one_of(st.none(), st.sampled_from(STATEMENTS))
EDGE = st.one_of(
    st.tuples(st.sampled_from(COLUMNS), st.sampled_from(COLUMNS), st.just(E.PROJECTION), STATEMENT),
    st.tuples(st.sampled_from(COLUMNS), st.sampled_from(TABLES + COLUMNS), st.just(E.PREDICATE), STATEMENT),
    st.tuples(st.sampled_from(TABLES), st.sampled_from(TABLES), st.just(E.FLOW), st.none()),
    st.tuples(st.sampled_from(STATEMENTS), st.sampled_from(COLUMNS), st.just(E.COLUMN_WRITE), st.none()),
    st.tuples(st.sampled_from(TABLES), st.sampled_from(STATEMENTS), st.just(E.READ), st.none()),
    st.tuples(st.sampled_from(STATEMENTS), st.sampled_from(TABLES), st.just(E.WRITE), st.none()),
)


def random_store(directory: Path, edges: list, contained: list[bool]):
    graph = Graph()
    for table in TABLES:
        graph.add_node(table, NodeKind.TABLE)
    for column, has_edge in zip(COLUMNS, contained, strict=True):
        table = column.rsplit(".", 1)[0]
        graph.add_node(column, NodeKind.COLUMN, table)
        if has_edge:  # a column of imported lineage may have a container and no contains edge
            graph.add_edge(table, column, E.CONTAINS)
    for statement in STATEMENTS:
        graph.add_transformation(statement, Provenance(statement.split(":")[0], 1))
    for source, target, edge_type, statement in edges:
        graph.add_edge(source, target, edge_type, 1 if edge_type is E.PREDICATE else 0, statement)
    write_store(graph, directory / "random.lin", {})
    return open_store(directory / "random.lin")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    edges=st.lists(EDGE, max_size=40),
    contained=st.lists(st.booleans(), min_size=len(COLUMNS), max_size=len(COLUMNS)),
    plan=st.sampled_from(sorted(PLANS)),
)
def test_on_random_graphs(edges, contained, plan) -> None:
    with tempfile.TemporaryDirectory() as directory:
        store = random_store(Path(directory), edges, contained)
        assert_walks_agree(store, list(range(store.node_count)), PLANS[plan], depths=(None, 1, 2))
