"""Node roles: sources and terminals of the whole store, in JSON and styled in the tree, GraphML and DOT."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np

from lineage_cli.emit import style
from lineage_cli.emit.formats import emit
from lineage_cli.model import NodeKind
from lineage_cli.store.reader import open_store
from lineage_cli.store.roles import node_roles
from lineage_cli.walk.query import lineage
from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode
from tests.walk.walks import golden_edges

G = "{http://graphml.graphdrawing.org/xmlns}"
Y = "{http://www.yworks.com/xml/graphml}"


def test_table_roles_follow_the_golden_lineage(warehouse_store) -> None:
    """A table nothing writes is a source, one nothing reads a terminal (every fixture table has lineage)."""
    store = open_store(warehouse_store)
    golden = golden_edges()
    sources, targets = {s for s, _ in golden}, {t for _, t in golden}
    for table in sources | targets:
        expected = "source" if table not in targets else "terminal" if table not in sources else None
        assert node_roles(store, [store.find(table)]) == [expected], table


def test_roles_of_columns_and_statements(warehouse_store) -> None:
    store = open_store(warehouse_store)
    roles = dict(zip(store.names(), node_roles(store, list(range(store.node_count))), strict=True))
    assert roles["stg.pos_sales_line.unit_price"] == "source"  # read, never written
    assert roles["rpt.v_sales_weekly.revenue_ytd"] == "terminal"  # written, never read
    # statements, like modules and workflows, are not data: no role
    assert all(roles[n] is None for n in roles if store.kind(store.find(n)) is NodeKind.TRANSFORMATION)
    assert "isolated" not in roles.values()  # every fixture dataset and column is read or written


def test_numpy_and_python_roles_agree(warehouse_store) -> None:
    store = open_store(warehouse_store)
    ids = list(range(store.node_count))
    assert node_roles(store, np.array(ids, dtype=np.int32)) == node_roles(store, ids)


def test_roles_in_a_query_s_json(warehouse_store) -> None:
    result = lineage(open_store(warehouse_store), "rpt.v_sales_weekly", "up", depth=2)
    document = json.loads(emit(result, "json"))
    assert {n["name"]: n.get("role") for n in document["nodes"]} == {
        "rpt.v_sales_weekly": "terminal",
        "rpt.v_sales_daily": None,
        "mart.sales_daily": None,
        "dwh.dim_date": None,
    }


ROLES = LineageResult(
    direction="down",
    roots=["raw.orders"],
    nodes=[
        ResultNode("raw.orders", "table", 0, role="source"),
        ResultNode("raw.customers", "table", 1, role="source"),
        ResultNode("mart.revenue", "view", 1, role="terminal"),
        ResultNode("raw.unused", "table", 1, role="isolated"),
        ResultNode("dwh.orders", "table", 1),
    ],
    edges=[ResultEdge("raw.orders", "mart.revenue", "flow"), ResultEdge("raw.customers", "mart.revenue", "flow")],
)


def test_tree_marks_roles() -> None:
    assert emit(ROLES, "tree").splitlines() == ["raw.orders table (source)", "└── mart.revenue view (terminal)"]


def test_graphml_borders_and_role_attribute() -> None:
    graph = ET.fromstring(emit(ROLES, "graphml")).find(G + "graph")
    keys = {key.get("attr.name"): key.get("id") for key in ET.fromstring(emit(ROLES, "graphml")).findall(G + "key")}
    for element, node in zip(graph.findall(G + "node"), ROLES.nodes, strict=True):
        border = element.find(f"{G}data/{Y}ShapeNode/{Y}BorderStyle")
        expected = (
            (style.ROOT_BORDER_COLOR, style.ROOT_BORDER_WIDTH)
            if node.name in ROLES.roots
            else style.ROLE_BORDERS.get(node.role or "", (style.BORDER_COLOR, style.BORDER_WIDTH))
        )
        assert (border.get("color"), float(border.get("width"))) == expected  # the queried node's red wins
        role = element.find(f"{G}data[@key='{keys['role']}']")
        assert (role.text if role is not None else None) == node.role


def test_dot_colours_roles_and_doubles_terminal_borders() -> None:
    lines = {line.split(" [")[0].strip(): line for line in emit(ROLES, "dot").splitlines() if " [" in line}
    assert 'color="#C1121F"' in lines['"raw.orders"']  # queried: red, whatever its role
    assert f'color="{style.ROLE_BORDERS["source"][0]}"' in lines['"raw.customers"']
    assert 'peripheries="2"' in lines['"mart.revenue"']
    assert " color=" not in lines['"dwh.orders"'] and "peripheries" not in lines['"dwh.orders"']
