"""Emit stage: every format is parsed back and compared with the result it came from."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import networkx as nx
import pytest

from lineage_cli.emit import style
from lineage_cli.emit.formats import FORMATS, emit, format_from_path
from lineage_cli.emit.tree import SEE_ABOVE, tree_text
from lineage_cli.model import NodeKind
from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode
from tests.conftest import REPO, assert_valid_format

G = "{http://graphml.graphdrawing.org/xmlns}"
Y = "{http://www.yworks.com/xml/graphml}"

UPSTREAM = LineageResult(
    direction="up",
    roots=["mart.revenue"],
    nodes=[
        ResultNode("mart.revenue", "view", 0),
        ResultNode("etl/revenue.sql:3", "transformation", 1, "etl/revenue.sql", 3),
        ResultNode("raw.orders.status", "column", 1),
        ResultNode("raw.customers", "table", 2),
        ResultNode("raw.orders", "table", 2),
    ],
    edges=[
        ResultEdge("etl/revenue.sql:3", "mart.revenue", "write"),
        ResultEdge("raw.orders.status", "mart.revenue", "predicate", ("FILTER", "JOIN")),
        ResultEdge("raw.customers", "etl/revenue.sql:3", "read"),
        ResultEdge("raw.orders", "etl/revenue.sql:3", "read"),
    ],
)

CYCLIC = LineageResult(
    direction="down",
    roots=["a"],
    nodes=[ResultNode(name, "table", depth) for name, depth in (("a", 0), ("b", 1), ("c", 2), ("d", 2))],
    edges=[
        ResultEdge("a", "b", "flow"),
        ResultEdge("b", "c", "flow"),
        ResultEdge("b", "d", "flow"),
        ResultEdge("c", "a", "flow"),
    ],
)

HOSTILE_NAMES = [
    'we"ird',
    "a<b&c>",
    "spa ce",
    "ünï€ødé",
    "back\\slash",
    "trail\\",
    "new\nline",
    "[bold]markup",
]
# Column expressions as hostile as the names: quotes, markup, backslashes, a line break; one column two statements
# write, one none.
HOSTILE_EXPRESSIONS = {
    'we"ird': (("etl/a.sql:1", 'CASE WHEN x < 1 THEN "a&b" END'),),
    "a<b&c>": (("etl/a.sql:1", "'<\\n>' || y"), ("etl/b.sql:2", "COALESCE(z,\n0)")),
    "trail\\": (("etl/a.sql:1", "\\"),),
}
HOSTILE = LineageResult(
    direction="down",
    roots=['we"ird'],
    nodes=[
        ResultNode(name, "column", min(depth, 1), expressions=HOSTILE_EXPRESSIONS.get(name, ()))
        for depth, name in enumerate(HOSTILE_NAMES)
    ],
    edges=[ResultEdge('we"ird', name, "projection", ("IDENTITY",)) for name in HOSTILE_NAMES[1:]]
    + [ResultEdge("a<b&c>", "spa ce", "predicate", ("WINDOW", "SORT"))],
)

ALL_KINDS = LineageResult(
    direction="down",
    roots=["t"],
    nodes=[
        ResultNode(name, kind, depth)
        for depth, (name, kind) in enumerate(
            (
                ("t", "table"),
                ("v", "view"),
                ("c", "column"),
                ("x", "transformation"),
                ("m", "module"),
                ("w", "workflow"),
            )
        )
    ],
    edges=[ResultEdge(a, b, "flow") for a, b in ("tv", "vc", "cx", "xm", "mw")],
)

RESULTS = {"upstream": UPSTREAM, "cyclic": CYCLIC, "hostile": HOSTILE, "all_kinds": ALL_KINDS}
results = pytest.mark.parametrize("result", RESULTS.values(), ids=RESULTS.keys())


def edge_set(result: LineageResult) -> set[tuple[str, str, str]]:
    return {(edge.source, edge.target, edge.type) for edge in result.edges}


def write(tmp_path: Path, result: LineageResult, fmt: str, suffix: str) -> tuple[str, Path]:
    text = emit(result, fmt)
    path = tmp_path / f"lineage.{suffix}"
    path.write_text(text, encoding="utf-8")
    return text, path


# ----------------------------------------------------------------- registry


def test_every_format_emits_text() -> None:
    for fmt in FORMATS:
        assert emit(UPSTREAM, fmt).endswith("\n")


def test_emit_imports_only_the_chosen_emitter() -> None:
    probe = (
        "import sys; from lineage_cli.emit.formats import emit; "
        "from lineage_cli.walk.result import LineageResult; "
        "emit(LineageResult('up', []), 'json'); "
        "print(sorted(m for m in ('rich', 'xml.etree.ElementTree', 'sqlglot', 'numpy') if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO)
    assert run.stdout.strip() == "[]"


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        emit(UPSTREAM, "yaml")


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("out.json", "json"),
        ("dir.v2/out.tgf", "tgf"),
        ("out.graphml", "graphml"),
        ("out.dot", "dot"),
        ("OUT.GV", "dot"),
        ("tree.txt", "tree"),
        ("out.xml", None),
        ("out", None),
        ("out.graphml.bak", None),
    ],
)
def test_format_from_path(path: str, fmt: str | None) -> None:
    assert format_from_path(path) == fmt


@pytest.mark.parametrize("fmt", ["tgf", "graphml", "dot"])
def test_dangling_edge_is_refused(fmt: str) -> None:
    broken = LineageResult("up", ["a"], [ResultNode("a", "table")], [ResultEdge("ghost", "a", "flow")])
    with pytest.raises(ValueError, match="ghost"):
        emit(broken, fmt)


def test_palette_is_distinct_per_kind() -> None:
    fills = [kind_style.fill for kind_style in style.KIND_STYLES.values()]
    assert len(set(fills)) == len(fills) == len(NodeKind)
    assert set(style.KIND_STYLES) == {kind.label for kind in NodeKind}


# --------------------------------------------------------------------- JSON


@results
def test_json_round_trip(result: LineageResult) -> None:
    document = json.loads(emit(result, "json"))
    assert document == result.to_dict()
    assert document["nodes"][1]["name"] == result.nodes[1].name


# ---------------------------------------------------------------------- TGF


def read_tgf(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    head, tail = text.split("\n#\n")
    labels = dict((line.split(" ", 1) + [""])[:2] for line in head.split("\n"))
    edges = [tuple((line.split(" ", 2) + [""])[:3]) for line in tail.split("\n") if line]
    return labels, edges


def tgf_unescape(label: str) -> str:
    """A TGF label's text: the backslash escapes undone, as a reader of the docs would."""
    named = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}
    return re.sub(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|.)", lambda m: named.get(m[1]) or chr(int(m[1][1:], 16)), label)


@results
def test_tgf_round_trip(result: LineageResult, tmp_path: Path) -> None:
    text, path = write(tmp_path, result, "tgf", "tgf")
    assert "\n\n" not in text
    labels, edges = read_tgf(text)
    assert list(labels) == [str(i) for i in range(1, len(result.nodes) + 1)]
    assert [tgf_unescape(label) for label in labels.values()] == [node.name for node in result.nodes]
    names = {tgf_id: result.nodes[int(tgf_id) - 1].name for tgf_id in labels}
    assert [(names[s], names[t], label.split(" ")[0]) for s, t, label in edges] == [
        (edge.source, edge.target, edge.type) for edge in result.edges
    ]
    assert_valid_format("tgf", path)


def test_tgf_labels_carry_subtypes_and_stay_on_one_line() -> None:
    _, edges = read_tgf(emit(UPSTREAM, "tgf"))
    assert edges[1] == ("3", "1", "predicate FILTER,JOIN")
    labels, _ = read_tgf(emit(HOSTILE, "tgf"))
    assert "new\\nline" in labels.values()


# Names a flattening to spaces (or writing control characters raw) would make read alike or break lines.
CONTROL_NAMES = ["a b", "a\tb", "a\nb", "a\r\nb", "a\\nb", "a\x1b[1mb", "a\x00b", "a\x85b", "a\u2028b", "a\x7fb"]


def test_tgf_escapes_control_characters_so_labels_stay_distinct(tmp_path: Path) -> None:
    nodes = [ResultNode(name, "column", 1) for name in CONTROL_NAMES]
    result = LineageResult("down", [CONTROL_NAMES[0]], nodes, [ResultEdge("a b", "a\tb", "projection")])
    text, path = write(tmp_path, result, "tgf", "tgf")
    labels, _ = read_tgf(text)
    assert list(labels.values())[:6] == ["a b", "a\\tb", "a\\nb", "a\\r\\nb", "a\\\\nb", "a\\x1b[1mb"]
    assert [tgf_unescape(label) for label in labels.values()] == CONTROL_NAMES
    assert all(char.isprintable() for char in text.replace("\n", ""))  # nothing raw but the line ends
    assert text.count("\n") == len(CONTROL_NAMES) + 2
    assert_valid_format("tgf", path)


# ------------------------------------------------------------------ GraphML


@results
def test_graphml_yed_graphics(result: LineageResult, tmp_path: Path) -> None:
    _, path = write(tmp_path, result, "graphml", "graphml")
    graph = ET.parse(path).getroot().find(G + "graph")
    nodes = graph.findall(G + "node")
    assert [node.get("id") for node in nodes] == [f"n{i}" for i in range(len(result.nodes))]
    fills: dict[str, str] = {}
    for node, expected in zip(nodes, result.nodes, strict=True):
        shape = node.find(f"{G}data/{Y}ShapeNode")
        assert shape.find(Y + "NodeLabel").text == expected.name
        fill = shape.find(Y + "Fill").get("color")
        assert fills.setdefault(expected.kind, fill) == fill  # one colour per kind
        border = shape.find(Y + "BorderStyle")
        is_root = expected.name in result.roots
        assert (float(border.get("width")) == style.ROOT_BORDER_WIDTH) == is_root
        assert (border.get("color") == style.ROOT_BORDER_COLOR) == is_root
        longest_line = max(len(line) for line in expected.name.splitlines())
        assert float(shape.find(Y + "Geometry").get("width")) > 7 * longest_line
    assert len(set(fills.values())) == len(fills)
    for edge, expected in zip(graph.findall(G + "edge"), result.edges, strict=True):
        line = edge.find(f"{G}data/{Y}PolyLineEdge")
        assert line.find(Y + "LineStyle").get("type") == ("dashed" if expected.type == "predicate" else "line")
        assert line.find(Y + "Arrows").get("target") == "standard"
        label = line.find(Y + "EdgeLabel")
        assert (label.text if label is not None else "") == ", ".join(expected.subtypes)
    assert_valid_format("graphml", path, "--require-labels")


@results
def test_graphml_networkx_round_trip(result: LineageResult, tmp_path: Path) -> None:
    _, path = write(tmp_path, result, "graphml", "graphml")
    graph = nx.read_graphml(path)
    names = {node_id: data["name"] for node_id, data in graph.nodes(data=True)}
    assert sorted(names.values()) == sorted(node.name for node in result.nodes)
    assert {(names[s], names[t], data["type"]) for s, t, data in graph.edges(data=True)} == edge_set(result)
    for node in result.nodes:
        data = next(data for _, data in graph.nodes(data=True) if data["name"] == node.name)
        assert (data["kind"], data["depth"], data.get("file"), data.get("line"), data.get("expression")) == (
            node.kind,
            node.depth,
            node.file,
            node.line,
            node.expression_note,
        )


def test_graphml_edge_subtypes_attribute(tmp_path: Path) -> None:
    _, path = write(tmp_path, UPSTREAM, "graphml", "graphml")
    graph = nx.read_graphml(path)
    subtypes = {data.get("subtypes") for _, _, data in graph.edges(data=True)}
    assert subtypes == {None, "FILTER,JOIN"}


# ---------------------------------------------------------------------- DOT

DOT = shutil.which("dot")
needs_dot = pytest.mark.skipif(DOT is None, reason="Graphviz dot is not installed")


def unescape(text: str) -> str:
    r"""Undo the DOT escapes the emitter wrote: \n newline, \X the character X."""
    return re.sub(r"\\(.)", lambda match: "\n" if match[1] == "n" else match[1], text, flags=re.DOTALL)


@needs_dot
@results
def test_dot_round_trip(result: LineageResult, tmp_path: Path) -> None:
    _, path = write(tmp_path, result, "dot", "dot")
    run = subprocess.run([DOT, "-Tjson", str(path)], capture_output=True, text=True, check=True)
    assert run.stderr == ""
    document = json.loads(run.stdout)
    objects = [obj for obj in document["objects"] if "nodes" not in obj]  # subgraphs (rank constraints) list nodes
    # Graphviz keeps ids raw apart from \" -> ", so only the label needs the full unescape.
    assert [unescape(obj["label"]) for obj in objects] == [node.name for node in result.nodes]
    assert [unescape(obj["name"].replace('"', '\\"')) for obj in objects] == [node.name for node in result.nodes]
    by_gvid = {obj["_gvid"]: unescape(obj["label"]) for obj in objects}
    edges = {(by_gvid[edge["tail"]], by_gvid[edge["head"]], edge.get("style")) for edge in document.get("edges", [])}
    assert edges == {
        (edge.source, edge.target, "dashed" if edge.type == "predicate" else None) for edge in result.edges
    }
    for obj, node in zip(objects, result.nodes, strict=True):
        assert obj["fillcolor"] == style.kind_style(node.kind).fill
        assert (obj.get("penwidth") == "3.0") == (node.name in result.roots)
        assert (unescape(obj["tooltip"]) if "tooltip" in obj else None) == node.expression_note
    assert_valid_format("dot", path)


def test_dot_edge_labels_are_subtypes() -> None:
    text = emit(UPSTREAM, "dot")
    assert '"raw.orders.status" -> "mart.revenue" [label="FILTER, JOIN", style="dashed"];' in text


# --------------------------------------------------------------------- tree


def test_tree_shows_roots_and_every_reached_node() -> None:
    text = tree_text(UPSTREAM)
    lines = text.splitlines()
    assert lines[0].startswith("mart.revenue view")
    for node in UPSTREAM.nodes:
        assert node.name in text
    assert "[FILTER, JOIN]" in text
    assert "\x1b" not in text


def test_tree_shows_a_columns_expressions_under_it_once() -> None:
    lines = tree_text(HOSTILE, width=200).splitlines()
    assert lines[:2] == ['we"ird column', '= CASE WHEN x < 1 THEN "a&b" END']
    at = next(i for i, line in enumerate(lines) if "a<b&c>" in line)
    assert lines[at + 1].endswith("= '<\\n>' || y  (etl/a.sql:1)")  # several statements: each named
    assert lines[at + 2].endswith("= COALESCE(z,")
    assert sum("COALESCE" in line for line in lines) == 1  # a column met again shows no expression again


def test_tree_follows_the_walk_direction() -> None:
    lines = tree_text(UPSTREAM).splitlines()
    depth = {name: next(line.index(name) for line in lines if name in line) for name in ("mart.revenue", "raw.orders")}
    assert depth["raw.orders"] > depth["mart.revenue"]


def test_tree_cycle_terminates() -> None:
    lines = tree_text(CYCLIC).splitlines()
    assert len(lines) == 5  # a, b, c, a again (not expanded), d
    assert sum("a" in line.split() for line in lines) == 2
    assert SEE_ABOVE in lines[3] and lines[3].split()[-4] == "a"


def test_tree_prints_names_literally() -> None:
    text = tree_text(HOSTILE, width=200)
    for name in HOSTILE_NAMES:
        for part in name.splitlines():
            assert part in text


def test_tree_without_edges_notes_the_missing_lineage() -> None:
    lonely = LineageResult("down", ["solo.table"], [ResultNode("solo.table", "table")])
    text = tree_text(lonely)
    assert "solo.table" in text
    assert "no downstream lineage" in text
