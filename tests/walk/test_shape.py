"""Shaping a walk into the answer, in numpy and in Python alike; the JSON text; the reader's name paths.

The vectorized paths (numpy arrays from a wide walk) and the list paths (a narrow walk, a cold process
without numpy) must give the same answer: random graphs with transformations go through both.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_cli.emit.jsonfmt import to_json
from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store import reader
from lineage_cli.store.arrays import GraphArrays
from lineage_cli.store.reader import Store, longest_literal, open_store
from lineage_cli.store.writer import write_store
from lineage_cli.walk import planned, shape, traverse
from lineage_cli.walk.query import TABLE_FLOW
from lineage_cli.walk.result import ROLES, LineageResult, ResultEdge, ResultNode
from lineage_cli.walk.traverse import Walk, bfs
from tests.walk.walks import write_graph

KINDS = [NodeKind.TABLE, NodeKind.VIEW, NodeKind.TRANSFORMATION, NodeKind.COLUMN]
EDGE = st.tuples(
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.sampled_from([EdgeType.READ, EdgeType.WRITE, EdgeType.FLOW, EdgeType.PROJECTION, EdgeType.PREDICATE]),
    st.integers(0, 0xFFF),  # every subtype flag, DECLARED (bit 11) included
)
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def both_ways(
    monkeypatch: pytest.MonkeyPatch, store: Store, start: int, direction: str, mask: int
) -> tuple[Walk, Walk]:
    monkeypatch.setattr(traverse, "VECTORIZE_FROM_EDGES", 10**12)
    listed = bfs(store, [start], direction, mask)
    monkeypatch.setattr(traverse, "VECTORIZE_FROM_EDGES", 0)
    vectorized = bfs(store, [start], direction, mask)
    assert not listed.vectorized
    return listed, vectorized


def answer(store: Store, walk: Walk) -> LineageResult:
    return LineageResult("down", [], columns=shape.columns(store, walk))


@SETTINGS
@given(
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=30),
    edges=st.lists(EDGE, max_size=90),
    start=st.integers(0, 10**6),
    direction=st.sampled_from(["up", "down"]),
    mask=st.sampled_from([TABLE_FLOW, traverse.ALL_TYPES, EdgeType.PROJECTION.bit | EdgeType.PREDICATE.bit]),
)
def test_numpy_and_python_shaping_give_the_same_answer(
    tmp_path_factory, monkeypatch, kinds, edges, start, direction, mask
) -> None:
    store = write_graph(tmp_path_factory.mktemp("g") / "g.lin", kinds, edges)
    listed, vectorized = both_ways(monkeypatch, store, start % len(kinds), direction, mask)
    folded_listed, folded_vectorized = shape.fold(store, listed), shape.fold(store, vectorized)
    assert folded_listed == folded_vectorized
    for python, numpy in ((listed, vectorized), (folded_listed, folded_vectorized)):
        mine, theirs = answer(store, python), answer(store, numpy)
        assert mine.nodes == theirs.nodes and mine.edges == theirs.edges
        assert to_json(mine) == to_json(theirs)
        with monkeypatch.context() as wide:  # nodes too many to pack an edge in an int64: the two-key sort
            wide.setattr(shape, "_DETAIL_BITS", 64)
            assert answer(store, numpy).edges == mine.edges
        with monkeypatch.context() as scattered:  # names gathered in blocks of a few, as for a wide answer
            scattered.setattr(reader, "_SCATTERED", 1)
            scattered.setattr(reader, "_GATHERED", 3)
            blocks = answer(store, numpy)
            assert blocks.nodes == mine.nodes and blocks.edges == mine.edges


@SETTINGS
@given(kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=30), edges=st.lists(EDGE, max_size=90))
def test_fold_joins_each_statement_s_inputs_to_its_outputs(tmp_path_factory, monkeypatch, kinds, edges) -> None:
    store = write_graph(tmp_path_factory.mktemp("g") / "g.lin", kinds, edges)
    listed, _ = both_ways(monkeypatch, store, 0, "down", TABLE_FLOW)
    step = int(NodeKind.TRANSFORMATION)
    pairs = list(zip(listed.sources, listed.targets, strict=True))
    into = {(a, t) for a, t in pairs if kinds[t] == step}
    out = {(t, b) for t, b in pairs if kinds[t] == step and kinds[b] != step}
    direct = {(a, b) for a, b in pairs if kinds[a] != step and kinds[b] != step}
    expected = direct | {(a, b) for a, t in into for u, b in out if t == u}
    folded = shape.fold(store, listed)
    assert list(zip(folded.sources, folded.targets, strict=True)) == sorted(expected)
    assert {store.kind(n) for n in folded.nodes} <= {NodeKind.TABLE, NodeKind.VIEW, NodeKind.COLUMN}


def test_answer_matches_the_objects_built_one_by_one(tmp_path, monkeypatch) -> None:
    kinds = [NodeKind.TABLE, NodeKind.TRANSFORMATION, NodeKind.TABLE, NodeKind.COLUMN]
    edges = [
        (0, 1, EdgeType.READ, 0),
        (1, 2, EdgeType.WRITE, 0),
        (3, 2, EdgeType.PREDICATE, 0b1100000),
        (3, 2, EdgeType.PREDICATE, 0b0100000),
    ]
    store = write_graph(tmp_path / "g.lin", kinds, edges)
    for walk in both_ways(monkeypatch, store, 2, "up", traverse.ALL_TYPES):
        result = answer(store, walk)
        assert result.nodes == [
            ResultNode("n0000", "table", 2, role="source"),
            ResultNode("n0001", "transformation", 1, "etl/x.sql", 1),
            ResultNode("n0002", "table", 0, role="terminal"),
            ResultNode("n0003", "column", 1, role="source"),
        ]
        assert result.edges == [
            ResultEdge("n0000", "n0001", "read"),
            ResultEdge("n0001", "n0002", "write"),
            ResultEdge("n0003", "n0002", "predicate", ("FILTER",)),
            ResultEdge("n0003", "n0002", "predicate", ("FILTER", "JOIN")),
        ]


NAME = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    names=st.lists(NAME, max_size=8),
    kinds=st.lists(st.sampled_from(["table", "column", "transformation"]), min_size=8, max_size=8),
    depths=st.lists(st.integers(0, 5000), min_size=8, max_size=8),
    lines=st.lists(st.one_of(st.none(), st.integers(0, 10**6)), min_size=8, max_size=8),
    roles=st.lists(st.sampled_from([None, *ROLES]), min_size=8, max_size=8),
    edges=st.lists(st.tuples(NAME, NAME, NAME, st.lists(NAME, max_size=3)), max_size=8),
    roots=st.lists(NAME, max_size=3),
)
def test_json_is_exactly_what_json_dumps_writes(names, kinds, depths, lines, roles, edges, roots) -> None:
    nodes = [
        ResultNode(name, kind, depth, None if line is None else f"{name}.sql", line, role)
        for name, kind, depth, line, role in zip(names, kinds, depths, lines, roles, strict=False)
    ]
    links = [ResultEdge(s, t, k, tuple(sub)) for s, t, k, sub in edges]
    result = LineageResult("up", roots, nodes, links)
    assert to_json(result) == json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"


def test_a_result_built_from_columns_reads_as_objects_and_edits_show_in_its_json() -> None:
    columns = LineageResult("down", ["a"], [ResultNode("a", "table")], [ResultEdge("a", "b", "flow")]).columns()
    lazy = LineageResult("down", ["a"], columns=columns)
    assert lazy.node_count == 1 and lazy.edge_count == 1
    assert lazy.edges == [ResultEdge("a", "b", "flow")]
    lazy.nodes.append(ResultNode("b", "table", 1))
    assert json.loads(to_json(lazy))["nodes"][1] == {"name": "b", "kind": "table", "depth": 1}
    assert lazy == LineageResult("down", ["a"], lazy.nodes, lazy.edges)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.sets(st.text("ab._%\\é\n", max_size=6), min_size=1, max_size=30),
    pattern=st.text("ab._%\\é", max_size=6),
)
def test_names_of_names_and_like_agree_with_the_plain_definitions(tmp_path_factory, names, pattern) -> None:
    ordered = sorted(names)
    count = len(ordered)
    arrays = GraphArrays(
        ordered, np.ones(count, "u1"), np.full(count, -1, "<i4"), np.full(count, -1, "<i4"), np.zeros(count, "<i4"),
        [], *(np.zeros(0, "<i4"),) * 2, np.zeros(0, "<u2"), np.zeros(0, "<i4"), np.zeros(count, "u1"),
    )  # fmt: skip
    path = tmp_path_factory.mktemp("names") / "g.lin"
    write_store(arrays, path, {})
    store = open_store(path)
    ids = list(range(count))[::-1]
    assert store.names() == ordered
    assert store.names_of(ids) == [ordered[i] for i in ids] == store.names_of(np.array(ids))
    for asked in (ids[::2] * 2, ids, ids[1::3]):  # repeated, then overlapping: names a session made and kept
        assert store.names_of(np.array(asked, dtype=np.int32)) == [ordered[i] for i in asked]
    assert [store.find(n) for n in ordered] == list(range(count))
    regex = re.compile(_like_to_regex(pattern), re.DOTALL)
    assert store.like(pattern) == [i for i, n in enumerate(ordered) if regex.fullmatch(n)]


def _like_to_regex(pattern: str) -> str:
    """An independent LIKE translation: ``%`` any run, ``_`` one character, backslash escapes."""
    out, escaped = [], False
    for char in pattern:
        if escaped:
            out.append(re.escape(char))
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append({"%": "[^\n]*", "_": "[^\n]"}.get(char, re.escape(char)))
    return "".join(out)


def test_longest_literal_resolves_escapes() -> None:
    assert longest_literal("%.v\\_orders") == ".v_orders"
    assert longest_literal("%") == ""


def half_hop_distances(kinds, edges, start: int, direction: str) -> dict[int, int]:
    """The oracle: fewest half hops from ``start`` (a statement edge is half a data hop, a flow edge a whole one)."""
    import heapq

    arcs: dict[int, list[tuple[int, int]]] = {}
    for source, target, kind, _ in edges:
        if kind in (EdgeType.READ, EdgeType.WRITE, EdgeType.FLOW):
            origin, reached = (source, target) if direction == "down" else (target, source)
            weight = 2 if kind == EdgeType.FLOW else 1
            arcs.setdefault(origin % len(kinds), []).append((reached % len(kinds), weight))
    distance, queue = {start: 0}, [(0, start)]
    while queue:
        at, node = heapq.heappop(queue)
        if at > distance[node]:
            continue
        for reached, weight in arcs.get(node, ()):
            if at + weight < distance.get(reached, at + weight + 1):
                distance[reached] = at + weight
                heapq.heappush(queue, (at + weight, reached))
    return distance


@SETTINGS
@given(
    kinds=st.lists(st.sampled_from([NodeKind.TABLE, NodeKind.TRANSFORMATION]), min_size=1, max_size=30),
    edges=st.lists(EDGE, max_size=90),
    start=st.integers(0, 10**6),
    direction=st.sampled_from(["up", "down"]),
    depth=st.sampled_from([None, 1, 2, 3]),
)
def test_table_walks_count_statement_and_flow_hops_alike_in_both_engines(
    tmp_path_factory, monkeypatch, kinds, edges, start, direction, depth
) -> None:
    store = write_graph(tmp_path_factory.mktemp("g") / "g.lin", kinds, edges)
    start %= len(kinds)
    walks = []
    for width in (10**12, 0):  # plain Python hops, then numpy hops
        monkeypatch.setattr(traverse, "VECTORIZE_FROM_EDGES", width)
        walks.append(planned._frontier_walk(store, [start], direction, planned.FastPlan(TABLE_FLOW, True), depth))
    listed, vectorized = walks
    assert listed == vectorized
    distance = half_hop_distances(kinds, edges, start, direction)
    within = {n for n, d in distance.items() if depth is None or d <= 2 * depth}
    assert set(listed.nodes) == {n for n in within if kinds[n] != NodeKind.TRANSFORMATION}
    assert all(hop == (distance[node] + 1) // 2 for node, hop in zip(listed.nodes, listed.hops, strict=True))
