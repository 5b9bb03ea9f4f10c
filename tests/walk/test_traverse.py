"""The walk engines: Python hops, numpy hops and any mix of them give the same walk, the right one.

Random graphs go through the real store writer; each walk is run three ways (every hop in Python, every
hop in numpy, and switching engines hop by hop at a random width) and checked against a plain BFS.
"""

from __future__ import annotations

import subprocess
import sys
from collections import deque
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store.layout import TABLE_LEVEL_MASK, TYPE_MASK, pack_attributes
from lineage_cli.store.reader import Store
from lineage_cli.walk import traverse
from lineage_cli.walk.traverse import ALL_TYPES, OTHER_TYPES, Walk, bfs
from tests.conftest import REPO
from tests.walk.walks import write_graph

TYPES = [int(t) for t in EdgeType]
EDGE = st.tuples(st.integers(0, 10**6), st.integers(0, 10**6), st.sampled_from(TYPES), st.integers(0, 7))


def reference(store: Store, starts: list[int], direction: str, mask: int, max_hops: int | None) -> tuple:
    """A queue BFS: every node with its hop count, and the multiset of edges it follows."""
    prefix = "fwd" if direction == "down" else "bwd"
    offsets, nodes, attrs = (store.array(f"{prefix}_{n}") for n in ("offsets", "node", "attr"))
    hops = {n: 0 for n in starts}
    queue, edges = deque(sorted(hops)), []
    while queue:
        node = queue.popleft()
        if max_hops is not None and hops[node] >= max_hops:
            continue
        for index in range(offsets[node], offsets[node + 1]):
            if mask >> (attrs[index] & TYPE_MASK) & 1:
                neighbour = nodes[index]
                edges.append(
                    (node, neighbour, attrs[index]) if direction == "down" else (neighbour, node, attrs[index])
                )
                if neighbour not in hops:
                    hops[neighbour] = hops[node] + 1
                    queue.append(neighbour)
    return hops, sorted(edges)


def walk_with(monkeypatch: pytest.MonkeyPatch, width: int, *args: object) -> Walk:
    monkeypatch.setattr(traverse, "VECTORIZE_FROM_EDGES", width)
    return bfs(*args)  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    nodes=st.integers(1, 40),
    edges=st.lists(EDGE, max_size=160),
    starts=st.lists(st.integers(0, 10**6), min_size=1, max_size=3),
    direction=st.sampled_from(["up", "down"]),
    # every type, the table-level group, the others (each read without a type check), any mix
    mask=st.one_of(st.sampled_from([ALL_TYPES, TABLE_LEVEL_MASK, OTHER_TYPES]), st.integers(0, 1023)),
    max_hops=st.one_of(st.none(), st.integers(0, 4)),
    switch=st.integers(0, 12),
)
def test_python_numpy_and_mixed_walks_are_the_same_walk_and_the_right_one(
    tmp_path_factory, monkeypatch, nodes, edges, starts, direction, mask, max_hops, switch
) -> None:
    store = write_graph(tmp_path_factory.mktemp("g") / "g.lin", [NodeKind.TABLE] * nodes, edges)
    starts = [s % nodes for s in starts]
    python = walk_with(monkeypatch, 10**12, store, starts, direction, mask, max_hops)
    vectorized = walk_with(monkeypatch, 0, store, starts, direction, mask, max_hops)
    mixed = walk_with(monkeypatch, switch, store, starts, direction, mask, max_hops)
    assert not python.vectorized
    assert python == vectorized == mixed
    hops, reference_edges = reference(store, starts, direction, mask, max_hops)
    assert dict(zip(python.nodes, python.hops, strict=True)) == hops
    assert len(python.nodes) == len(hops)  # each node once
    assert sorted(zip(python.sources, python.targets, python.attributes, strict=True)) == reference_edges


def test_walk_order_is_starts_then_each_hop_by_id(tmp_path, monkeypatch) -> None:
    edges = [(0, 5, EdgeType.FLOW, 0), (0, 3, EdgeType.FLOW, 0), (5, 1, EdgeType.FLOW, 0), (3, 1, EdgeType.FLOW, 0)]
    store = write_graph(tmp_path / "g.lin", [NodeKind.TABLE] * 6, edges)
    for width in (10**12, 0):
        walk = walk_with(monkeypatch, width, store, [0], "down", EdgeType.FLOW.bit, None)
        assert walk.nodes == [0, 3, 5, 1] and walk.hops == [0, 1, 1, 2]
        assert list(zip(walk.sources, walk.targets, strict=True)) == [(0, 3), (0, 5), (3, 1), (5, 1)]


def test_a_walk_reads_as_lists_and_hands_over_arrays(tmp_path, monkeypatch) -> None:
    store = write_graph(tmp_path / "g.lin", [NodeKind.TABLE] * 4, [(0, 1, EdgeType.FLOW, 0), (1, 2, EdgeType.FLOW, 0)])
    walk = walk_with(monkeypatch, 0, store, [0], "down", ALL_TYPES, None)
    assert walk.vectorized
    nodes, hops, sources, targets, attributes = walk.columns()
    assert nodes.tolist() == [0, 1, 2] and hops.tolist() == [0, 1, 2]
    assert (sources.tolist(), targets.tolist()) == ([0, 1], [1, 2])
    assert attributes.tolist() == [pack_attributes(EdgeType.FLOW, 0)] * 2
    assert walk.nodes == [0, 1, 2] and isinstance(walk.nodes, list)
    walk.nodes.append(3)  # the list a field reads as is the walk's own, as with the dataclass it replaces
    assert walk.nodes[-1] == 3 and walk.node_count == 4


def test_a_narrow_walk_does_not_import_numpy(store_path_of_fixture_warehouse) -> None:
    probe = (
        "import sys; from lineage_cli.store.reader import open_store; from lineage_cli.walk.query import lineage; "
        f"lineage(open_store({str(store_path_of_fixture_warehouse)!r}), 'mart.sales_daily', 'up'); "
        "print('numpy' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO)
    assert run.stdout.strip() == "False"


def test_a_session_of_walks_imports_numpy_once_python_hops_have_done_enough(warehouse_store: Path) -> None:
    probe = (
        "import sys; from lineage_cli.store.reader import open_store; from lineage_cli.walk import traverse; "
        "traverse.VECTORIZE_FROM_EDGES = 1; traverse.IMPORT_NUMPY_AFTER_EDGES = 10**9; "
        f"store = open_store({str(warehouse_store)!r}); start = [store.find('stg.pos_sales')]; "
        "first = traverse.bfs(store, start, 'down', traverse.ALL_TYPES); "
        "traverse.IMPORT_NUMPY_AFTER_EDGES = traverse._PythonWork.entries + 1; "  # one walk's worth
        "walks = [traverse.bfs(store, start, 'down', traverse.ALL_TYPES) for _ in range(2)]; "
        "print(first.vectorized, walks[-1].vectorized, first == walks[-1])"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO)
    assert run.stdout.split() == ["False", "True", "True"]


@pytest.fixture()
def store_path_of_fixture_warehouse(warehouse_store: Path) -> Path:
    return warehouse_store


def test_walks_give_their_scratch_maps_back_clear(tmp_path, monkeypatch) -> None:
    """Vectorized walks borrow their visited (and candidate) byte maps from a pool and return them all zero:
    a map left dirty would hide nodes from the next walk."""
    import random

    rng = random.Random(7)
    edges = [(rng.randrange(60), rng.randrange(60), rng.choice(TYPES), 0) for _ in range(400)]
    store = write_graph(tmp_path / "g.lin", [NodeKind.TABLE] * 60, edges)
    monkeypatch.setattr(traverse, "_SCRATCH", [])
    masks = [ALL_TYPES, TABLE_LEVEL_MASK, OTHER_TYPES, EdgeType.FLOW.bit, EdgeType.PROJECTION.bit]
    for _ in range(3):
        for start in (0, 17, 42):
            for mask in masks:
                for direction in ("up", "down"):
                    walk = walk_with(monkeypatch, 0, store, [start], direction, mask, None)
                    hops, reference_edges = reference(store, [start], direction, mask, None)
                    assert dict(zip(walk.nodes, walk.hops, strict=True)) == hops
                    assert sorted(zip(walk.sources, walk.targets, walk.attributes, strict=True)) == reference_edges
    assert traverse._SCRATCH and all(type(m) is bytearray and not any(m) for m in traverse._SCRATCH)
