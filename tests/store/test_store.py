"""The store file: round trip, atomic replacement, damaged files named, never a traceback; the write lock."""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import os
import select
import struct
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_cli.cli import cli
from lineage_cli.model import EdgeType, Graph, NodeKind, Provenance, Subtype
from lineage_cli.store import writer
from lineage_cli.store.layout import FORMAT_VERSION, SECTIONS, StoreError, StoreWriteError, unpack_attributes
from lineage_cli.store.lock import lock_path
from lineage_cli.store.reader import open_store
from lineage_cli.store.writer import write_store
from tests.conftest import REPO


def small_graph() -> Graph:
    graph = Graph()
    graph.add_node("stg.orders", NodeKind.TABLE)
    graph.add_node("rpt.v_orders", NodeKind.VIEW)
    graph.add_node("stg.orders.id", NodeKind.COLUMN, container="stg.orders")
    graph.add_node("rpt.v_orders.id", NodeKind.COLUMN, container="rpt.v_orders")
    step = graph.add_transformation("etl/v.sql:4", Provenance("etl/v.sql", 4))
    graph.add_edge("stg.orders", step, EdgeType.READ)
    graph.add_edge(step, "rpt.v_orders", EdgeType.WRITE)
    graph.add_edge("stg.orders.id", "rpt.v_orders.id", EdgeType.PROJECTION, Subtype.IDENTITY.bit, step)
    graph.add_edge("stg.orders.id", "rpt.v_orders", EdgeType.PREDICATE, Subtype.FILTER.bit, step)
    graph.add_edge("stg.orders.id", "rpt.v_orders", EdgeType.PREDICATE, Subtype.JOIN.bit, step)
    graph.expressions[(step, "rpt.v_orders.id")] = "o.id"  # so that the byte-level tests cover its sections
    graph.sql[step] = (
        "CREATE VIEW rpt.v_orders AS SELECT o.id FROM stg.orders o WHERE o.id > 0",
        "hive",
    )  # (and these)
    return graph


@pytest.fixture()
def store_file(tmp_path):
    path = tmp_path / "g.lin"
    write_store(small_graph(), path, {"default_schema": "stg"})
    return path


def test_round_trip_names_kinds_containers_provenance(store_file) -> None:
    store = open_store(store_file)
    graph = small_graph()
    assert store.names() == sorted(graph.kinds)
    for name, kind in graph.kinds.items():
        node = store.find(name)
        assert node is not None and store.kind(node) is kind
    assert store.name(store.container(store.find("stg.orders.id"))) == "stg.orders"
    assert store.provenance(store.find("etl/v.sql:4")) == ("etl/v.sql", 4)
    assert store.provenance(store.find("stg.orders")) is None
    assert store.find("stg.order") is None and store.find("zzz") is None
    assert store.meta["default_schema"] == "stg"
    assert store.expressions([store.find("rpt.v_orders.id")]) == {
        store.find("rpt.v_orders.id"): (("etl/v.sql:4", "o.id"),)
    }


def test_round_trip_adjacency_both_directions(store_file) -> None:
    store = open_store(store_file)
    expected = {(s, t, k.value, f, m) for (s, t, k, m), f in small_graph().edges.items()}
    forward = set()
    offsets, nodes, attributes, statements = (store.array(f"fwd_{n}") for n in ("offsets", "node", "attr", "statement"))
    for origin in range(store.node_count):
        for index in range(offsets[origin], offsets[origin + 1]):
            edge_type, flags = unpack_attributes(attributes[index])
            statement = store.name(statements[index]) if statements[index] >= 0 else None
            forward.add((store.name(origin), store.name(nodes[index]), edge_type, flags, statement))
    assert forward == expected
    offsets, nodes = store.array("bwd_offsets"), store.array("bwd_node")
    backward = {
        (store.name(nodes[i]), store.name(target))
        for target in range(store.node_count)
        for i in range(offsets[target], offsets[target + 1])
    }
    assert backward == {(s, t) for s, t, _, _, _ in expected}
    assert store.edge_count == len(expected)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    edges=st.lists(
        st.tuples(st.integers(0, 7), st.integers(0, 7), st.sampled_from(list(EdgeType)), st.integers(-1, 7)),
        max_size=60,
    )
)
def test_slices_hold_table_level_edges_first_and_count_them(tmp_path_factory, edges) -> None:
    """Each slice: READ, WRITE, FLOW first (``*_split`` of them), then the rest; by type, neighbour, statement."""
    import numpy as np

    from lineage_cli.store.arrays import GraphArrays, from_store

    arrays = GraphArrays(
        names=[f"n{i}" for i in range(8)],
        kinds=np.full(8, NodeKind.TABLE, dtype="u1"),
        containers=np.full(8, -1, dtype="<i4"),
        node_file=np.full(8, -1, dtype="<i4"),
        node_line=np.zeros(8, dtype="<i4"),
        files=[],
        sources=np.array([s for s, _, _, _ in edges], dtype="<i4"),
        targets=np.array([t for _, t, _, _ in edges], dtype="<i4"),
        attributes=np.array([int(k) for _, _, k, _ in edges], dtype="<u2"),
        statements=np.array([m for _, _, _, m in edges], dtype="<i4"),
        flags=np.zeros(8, dtype="u1"),
    )
    path = tmp_path_factory.mktemp("s") / "g.lin"
    write_store(arrays, path, {})
    store = open_store(path)
    table_level = {EdgeType.READ, EdgeType.WRITE, EdgeType.FLOW}
    statements = store.array("fwd_statement")
    for prefix in ("fwd", "bwd"):
        offsets, split, nodes, attributes = (store.array(f"{prefix}_{n}") for n in ("offsets", "split", "node", "attr"))
        for node in range(8):
            entries = range(offsets[node], offsets[node + 1])
            types = [EdgeType(attributes[i] & 15) for i in entries]
            assert split[node] == sum(t in table_level for t in types)
            assert all(t in table_level for t in types[: split[node]])
            assert not any(t in table_level for t in types[split[node] :])
            keys = [(t not in table_level, t, nodes[i]) for t, i in zip(types, entries, strict=True)]
            if prefix == "fwd":
                keys = [(*key, statements[i]) for key, i in zip(keys, entries, strict=True)]
            assert keys == sorted(keys)
    # the round trip through from_store writes the same bytes
    again = tmp_path_factory.mktemp("s") / "g.lin"
    write_store(from_store(store), again, {})
    assert again.read_bytes() == path.read_bytes()


def test_like_patterns(store_file) -> None:
    store = open_store(store_file)
    assert [store.name(n) for n in store.like("stg.%")] == ["stg.orders", "stg.orders.id"]
    assert [store.name(n) for n in store.like("%.v\\_orders")] == ["rpt.v_orders"]


def test_failed_write_leaves_the_old_store_intact(store_file, monkeypatch) -> None:
    before = store_file.read_bytes()

    def crash(out, *args, **kwargs):
        out.write(b"the first bytes")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writer, "_write_file", crash)
    with pytest.raises(StoreWriteError, match=r"^cannot write the store .*g\.lin: No space left on device$"):
        write_store(Graph(), store_file, {})
    assert store_file.read_bytes() == before
    assert [p.name for p in store_file.parent.iterdir()] == [store_file.name]


def test_missing_file_is_named(tmp_path) -> None:
    with pytest.raises(StoreError, match="no lineage store here"):
        open_store(tmp_path / "nope.lin")


@pytest.mark.parametrize("content", [b"", b"hello world", b"PK\x03\x04" + b"\x00" * 400])
def test_foreign_files_are_named(tmp_path, content) -> None:
    path = tmp_path / "foreign.lin"
    path.write_bytes(content)
    with pytest.raises(StoreError, match="not a lineage store"):
        open_store(path)


def test_truncated_file_is_detected(store_file) -> None:
    data = store_file.read_bytes()
    for size in (len(data) - 1, len(data) // 2, 40):
        store_file.write_bytes(data[:size])
        with pytest.raises(StoreError, match=str(store_file.name)):
            open_store(store_file)


@pytest.mark.parametrize(("version", "age"), [(FORMAT_VERSION - 1, "older"), (FORMAT_VERSION + 1, "newer")])
def test_other_format_version_says_reharvest(store_file, version, age) -> None:
    data = bytearray(store_file.read_bytes())
    struct.pack_into("<I", data, 8, version)
    store_file.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=f"v{version} is {age}.*re-harvest"):
        open_store(store_file)


def test_the_format_document_lists_every_section_with_its_dtype(store_file) -> None:
    import re

    text = (REPO / "docs" / "store-format.md").read_text(encoding="utf-8")
    assert f"# Store format (version {FORMAT_VERSION})" in text
    documented = dict(re.findall(r"^\| `(\w+)` \| `\\?([|<]\w+)` \|", text, flags=re.MULTILINE))
    written = {name: section.dtype for name, section in open_store(store_file).header.sections.items()}
    assert documented == written
    assert list(documented) == list(written) == list(SECTIONS)  # the table is in the order the writer writes


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(st.data())
def test_any_flipped_bit_is_detected(store_file, data) -> None:
    original = store_file.read_bytes()
    position = data.draw(st.integers(min_value=0, max_value=len(original) - 1))
    bit = data.draw(st.integers(min_value=0, max_value=7))
    damaged = bytearray(original)
    damaged[position] ^= 1 << bit
    store_file.write_bytes(bytes(damaged))
    try:
        if position < os.path.getsize(store_file):
            with pytest.raises(StoreError):
                open_store(store_file)
    finally:
        store_file.write_bytes(original)


WRITER = """
import sys
from lineage_cli.model import Graph, NodeKind
from lineage_cli.store.writer import write_store
for round in range(int(sys.argv[2])):
    graph = Graph()
    for index in range(2000 if round % 2 else 50):
        graph.add_node(f"s.t{round % 2}_{index}", NodeKind.TABLE)
    write_store(graph, sys.argv[1], {"round": round % 2})
"""


def test_a_reader_sees_the_old_or_the_new_store_never_a_torn_one(tmp_path) -> None:
    import subprocess
    import sys

    path = tmp_path / "g.lin"
    write_store(Graph(), path, {"round": -1})
    writer_process = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "60"])
    reads = 0
    try:
        while writer_process.poll() is None or reads == 0:
            store = open_store(path)  # verifies both checksums: a torn file would raise
            store.verify()
            names = store.names()
            expected = {-1: 0, 0: 50, 1: 2000}[store.meta["round"]]
            assert len(names) == expected
            reads += 1
    finally:
        writer_process.wait(timeout=60)
    assert writer_process.returncode == 0 and reads > 0


def test_merge_unions_nodes_and_ors_subtype_flags() -> None:
    from lineage_cli.store.arrays import from_graph, merge

    first, second = Graph(), Graph()
    first.add_node("a.t", NodeKind.TABLE)
    first.add_node("a.t.x", NodeKind.COLUMN, container="a.t")
    first.add_node("b.u", NodeKind.TABLE)
    first.add_edge("a.t.x", "b.u", EdgeType.PREDICATE, Subtype.FILTER.bit)
    second.add_node("a.t.x", NodeKind.COLUMN)
    second.add_node("b.u", NodeKind.VIEW)
    second.add_edge("a.t.x", "b.u", EdgeType.PREDICATE, Subtype.JOIN.bit)
    merged = merge(from_graph(first), from_graph(second))
    assert merged.names == ["a.t", "a.t.x", "b.u"]
    assert merged.kinds.tolist() == [NodeKind.TABLE, NodeKind.COLUMN, NodeKind.VIEW]
    assert merged.containers.tolist() == [-1, 0, -1]
    assert merged.edge_count == 1
    assert unpack_attributes(int(merged.attributes[0])) == (EdgeType.PREDICATE, Subtype.FILTER.bit | Subtype.JOIN.bit)


def test_a_written_store_gets_the_mode_of_any_new_file_not_a_private_temporary_one(tmp_path) -> None:
    import os

    previous = os.umask(0o022)
    try:
        write_store(Graph(), tmp_path / "g.lin", {})
    finally:
        os.umask(previous)
    assert (tmp_path / "g.lin").stat().st_mode & 0o777 == 0o644


def damage_offsets(path) -> None:
    """Make the first node's edge count negative, as a bit flip in a store too big to be checked on open would."""
    section = open_store(path).header.sections["fwd_offsets"]
    damaged = bytearray(path.read_bytes())
    damaged[section.offset + 8 : section.offset + 16] = struct.pack("<q", 1 << 40)
    path.write_bytes(bytes(damaged))


def test_edges_of_a_store_with_damaged_offsets_are_a_store_error(store_file, monkeypatch) -> None:
    from lineage_cli.store import reader
    from lineage_cli.store.arrays import edge_sources, from_store

    assert edge_sources(open_store(store_file)).tolist() == [0, 3, 4, 4]  # each edge's source, in id order
    monkeypatch.setattr(reader, "VERIFY_ON_OPEN_BYTES", 0)  # as for a big store: the checksum is not read on open
    damage_offsets(store_file)
    with pytest.raises(StoreError, match=r"g\.lin: damaged store \(its edge offsets do not add up\)"):
        from_store(open_store(store_file))


# -- the write lock: one harvest or import at a time writes a store; readers never wait ------------------------


@contextmanager
def held(store: Path) -> Iterator[None]:
    """The store's lock, held the way another harvest holds it."""
    with open(lock_path(store), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def sql_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "sql"
    folder.mkdir()
    (folder / "load.sql").write_text("INSERT INTO dwh.t SELECT s.x FROM stg.s s;\n")
    return folder


def test_with_no_wait_a_second_writer_fails_at_once_and_readers_do_not_wait(tmp_path) -> None:
    store, runner = tmp_path / "graph.lin", CliRunner()
    assert runner.invoke(cli, ["harvest", str(sql_folder(tmp_path)), "--store", str(store), "-q"]).exit_code == 0
    before = store.read_bytes()
    (tmp_path / "edges.csv").write_text("source,target\ndwh.t,mart.u\n")
    busy = f"lineage: error: another harvest or import is writing {store}; leave out --no-wait to wait\n"
    with held(store):
        harvest = runner.invoke(
            cli, ["harvest", str(tmp_path / "sql"), "--store", str(store), "--no-wait", "--no-cache"]
        )
        imported = runner.invoke(cli, ["import", str(tmp_path / "edges.csv"), "--store", str(store), "--no-wait"])
        read = runner.invoke(cli, ["stats", "--store", str(store)])
    assert (harvest.exit_code, harvest.stderr) == (2, busy)
    assert (imported.exit_code, imported.stderr) == (2, busy)
    assert read.exit_code == 0 and store.read_bytes() == before


def test_a_second_harvest_waits_for_the_first_and_says_so(tmp_path) -> None:
    store = tmp_path / "graph.lin"
    command = [sys.executable, "-m", "lineage_cli", "harvest", str(sql_folder(tmp_path)), "--store", str(store), "-q"]
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    with held(store):
        waiting = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            said, _, _ = select.select([waiting.stderr], [], [], 60)
            assert said, "the second harvest said nothing in a minute"
            assert waiting.stderr.readline() == f"lineage: waiting for another harvest of {store} to finish...\n"
            assert waiting.poll() is None and not store.exists()
        except BaseException:
            waiting.kill()
            raise
    out, err = waiting.communicate(timeout=120)
    assert waiting.returncode == 0 and f" -> {store} (" in out, err


def test_a_statement_read_approximately_keeps_its_flag_through_the_store_and_a_merge(tmp_path) -> None:
    """``node_flags``: the store keeps which statements were read approximately; reading, merging and rewriting
    the store keep them."""
    from lineage_cli.model import NodeFlag
    from lineage_cli.store.arrays import from_graph, from_store, merge, to_graph

    graph = Graph()
    graph.add_node("a.s", NodeKind.TABLE)
    graph.add_node("a.t", NodeKind.TABLE)
    graph.add_transformation("x.sql:2", Provenance("x.sql", 2), NodeFlag.APPROXIMATE.bit)
    graph.add_edge("a.s", "x.sql:2", EdgeType.READ)
    graph.add_edge("x.sql:2", "a.t", EdgeType.WRITE)
    writer.write_store(graph, tmp_path / "g.lin", {})
    store = open_store(tmp_path / "g.lin")
    assert list(store.array("node_flags")) == [0, 0, NodeFlag.APPROXIMATE.bit]  # a.s, a.t, x.sql:2
    assert to_graph(from_store(store)) == graph
    other = Graph()
    other.add_transformation("y.sql:1", Provenance("y.sql", 1))
    merged = to_graph(merge(from_store(store), from_graph(other)))
    assert merged.flags == {"x.sql:2": NodeFlag.APPROXIMATE.bit}


def test_the_packed_csr_sort_writes_what_the_argsort_writes(tmp_path, warehouse_store, monkeypatch) -> None:
    """Edges sorted packed in one int64 each (origin, rank, neighbour, statement, flags) make the same file
    as the argsort of their keys, which a graph too wide to pack takes: every edge type, statements, subtypes."""
    from lineage_cli.store import roles
    from lineage_cli.store.arrays import dedupe_edges, from_store

    graph = from_store(open_store(warehouse_store))
    assert len(set((graph.attributes & 15).tolist())) >= 5 and (graph.statements >= 0).any()
    no_statements = np.full(graph.edge_count, -1, dtype="<i4")  # as an import's edges have none
    edges = dedupe_edges(graph.sources, graph.targets, graph.attributes, no_statements)
    sources, targets, attributes, statements = edges
    unstated = dataclasses.replace(
        graph, sources=sources, targets=targets, attributes=attributes, statements=statements
    )
    for name, written in (("packed", graph), ("unstated", unstated)):
        write_store(written, tmp_path / f"{name}.lin", {})
    with monkeypatch.context() as small:  # blocks of a few edges: unpacked and counted across their ends
        small.setattr(writer, "_STEP", 7)
        small.setattr(roles, "_BLOCK", 5)
        write_store(graph, tmp_path / "blocks.lin", {})
    monkeypatch.setattr(writer, "_FLAG_BITS", 64)  # too wide: the argsort
    for name, written in (("sorted", graph), ("unstated-sorted", unstated)):
        write_store(written, tmp_path / f"{name}.lin", {})
    packed = (tmp_path / "packed.lin").read_bytes()
    assert packed == (tmp_path / "sorted.lin").read_bytes() == (tmp_path / "blocks.lin").read_bytes()
    assert (tmp_path / "unstated.lin").read_bytes() == (tmp_path / "unstated-sorted.lin").read_bytes()


def test_a_statements_text_and_dialect_round_trip_and_a_damaged_dialect_list_is_a_store_error(
    store_file, tmp_path, monkeypatch
) -> None:
    from lineage_cli.store import reader

    store = open_store(store_file)
    step = store.find("etl/v.sql:4")
    assert store.sql(step) == small_graph().sql["etl/v.sql:4"]
    assert store.sql(store.find("rpt.v_orders")) is None
    section = store.header.sections["sql_dialects"]
    data = bytearray(store_file.read_bytes())
    data[section.offset : section.offset + section.nbytes] = b"{" + b" " * (section.nbytes - 1)  # no JSON list
    damaged = tmp_path / "damaged.lin"
    damaged.write_bytes(bytes(data))
    monkeypatch.setattr(reader, "VERIFY_ON_OPEN_BYTES", 0)  # as for a big store: the checksum is not read on open
    with pytest.raises(StoreError, match=r"damaged\.lin: damaged store \(its statements' dialects\)"):
        open_store(damaged).sql(step)


def test_a_name_table_reads_as_the_list_of_its_names() -> None:
    from lineage_cli.store.arrays import NameTable

    names = ["", "a.b", "é.ü", "z"]
    data = "".join(names).encode()
    offsets = np.cumsum([0, *(len(name.encode()) for name in names)]).astype("<u8")
    table = NameTable(np.frombuffer(data, dtype=np.uint8), offsets)
    assert list(table) == names and len(table) == 4
    assert [table[i] for i in range(-4, 4)] == names + names and table[1:3] == names[1:3]
    assert "é.ü" in table and table.index("z") == 3
    with pytest.raises(IndexError):
        table[4]
