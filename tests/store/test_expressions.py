"""The SQL expression behind a column through the store: written beside the provenance, found per column by the
reader in file order, kept by a rewrite and a merge, and absent (empty sections) from a graph that has none."""

from __future__ import annotations

import numpy as np

from lineage_cli.model import EdgeType, Graph, NodeKind, Provenance, Subtype
from lineage_cli.store.arrays import from_graph, from_store, merge, stored_expressions, to_graph
from lineage_cli.store.reader import open_store
from lineage_cli.store.writer import write_store


def two_writers() -> Graph:
    """``rpt.t.total`` written by two statements, the later file's name sorting first."""
    graph = Graph()
    graph.add_node("stg.s", NodeKind.TABLE)
    graph.add_node("stg.s.amount", NodeKind.COLUMN, container="stg.s")
    graph.add_node("rpt.t", NodeKind.TABLE)
    graph.add_node("rpt.t.total", NodeKind.COLUMN, container="rpt.t")
    graph.add_node("rpt.t.id", NodeKind.COLUMN, container="rpt.t")
    for name, file, line, text in (("b.sql:9", "b.sql", 9, "SUM(s.amount)"), ("a.sql:30", "a.sql", 30, "0")):
        step = graph.add_transformation(name, Provenance(file, line))
        graph.add_edge(step, "rpt.t", EdgeType.WRITE)
        graph.add_edge(step, "rpt.t.total", EdgeType.COLUMN_WRITE, 0, step)
        graph.expressions[(step, "rpt.t.total")] = text
    graph.add_edge("stg.s.amount", "rpt.t.total", EdgeType.PROJECTION, Subtype.AGGREGATION.bit, "b.sql:9")
    graph.expressions[("b.sql:9", "rpt.t.id")] = "s.id ∥ 'é'"  # not ASCII: offsets count bytes
    return graph


def test_the_reader_finds_a_columns_expressions_in_the_order_of_their_files(tmp_path) -> None:
    write_store(two_writers(), tmp_path / "g.lin", {})
    store = open_store(tmp_path / "g.lin")
    total, column_id = store.find("rpt.t.total"), store.find("rpt.t.id")
    found = store.expressions([total, column_id, store.find("stg.s.amount")])
    assert found == {total: (("a.sql:30", "0"), ("b.sql:9", "SUM(s.amount)")), column_id: (("b.sql:9", "s.id ∥ 'é'"),)}
    assert store.expressions(np.array([column_id, total], dtype=np.int32)) == found  # a walk's array of ids
    assert len(store.array("expr_column")) == 3 and len(store.array("expr_offsets")) == 4


def test_rewriting_and_merging_a_store_keep_its_expressions(tmp_path) -> None:
    graph = two_writers()
    write_store(graph, tmp_path / "g.lin", {})
    arrays = from_store(open_store(tmp_path / "g.lin"))
    assert to_graph(arrays) == graph
    other = Graph()
    other.add_node("rpt.t.total", NodeKind.COLUMN)
    other.add_transformation("b.sql:9", Provenance("b.sql", 9))
    other.add_transformation("c.sql:1", Provenance("c.sql", 1))
    other.expressions[("b.sql:9", "rpt.t.total")] = "another text"  # the first graph's stays
    other.expressions[("c.sql:1", "rpt.t.total")] = "1"
    merged = to_graph(merge(arrays, from_graph(other)))
    assert merged.expressions == {**graph.expressions, ("c.sql:1", "rpt.t.total"): "1"}


def test_a_graph_without_expressions_writes_empty_sections(tmp_path) -> None:
    graph = two_writers()
    graph.expressions.clear()
    write_store(graph, tmp_path / "g.lin", {})
    store = open_store(tmp_path / "g.lin")
    assert len(stored_expressions(store)) == 0 and list(store.array("expr_offsets")) == [0]
    assert store.expressions([store.find("rpt.t.total")]) == {}
    assert store.header.edge_count * 16 == sum(
        store.header.sections[name].nbytes for name in ("fwd_node", "fwd_attr", "fwd_statement", "bwd_node", "bwd_attr")
    )  # the per-edge arrays: 16 bytes an edge, expressions or not


def test_an_answer_carries_each_columns_expressions_and_json_lists_them_when_several(tmp_path) -> None:
    import json

    import lineage_cli
    from lineage_cli.emit.jsonfmt import to_json

    write_store(two_writers(), tmp_path / "g.lin", {})
    result = lineage_cli.open_store(tmp_path / "g.lin").up("rpt.t.total")
    node = result.node("rpt.t.total")
    assert node.expressions == (("a.sql:30", "0"), ("b.sql:9", "SUM(s.amount)"))
    assert result.node("stg.s.amount").expressions == ()  # a source column: no statement writes it
    document = result.to_dict()
    (total,) = [n for n in document["nodes"] if n["name"] == "rpt.t.total"]
    assert total["expression"] == "0"
    assert total["expressions"] == [
        {"statement": "a.sql:30", "expression": "0"},
        {"statement": "b.sql:9", "expression": "SUM(s.amount)"},
    ]
    assert to_json(result) == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
