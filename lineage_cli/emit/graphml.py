"""The ``--format graphml`` emitter: GraphML with yEd's yFiles graphics.

Each node carries a ``y:ShapeNode`` (label, shape and fill by kind, a red border for the
queried nodes and a coloured one for sources and terminals) and plain ``<data>`` attributes
(role included) that yEd's property panel and networkx read.  Nodes are pre-placed in
columns by depth, so the file looks sensible in yEd before any layout is run.  Ids are
``n0..`` and ``e0..`` in result order.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable

from lineage_cli.emit import style
from lineage_cli.emit.style import border, index_nodes, is_dashed, kind_style, subtype_caption
from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode

GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"
YED_NS = "http://www.yworks.com/xml/graphml"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
SCHEMA_LOCATION = f"{GRAPHML_NS} http://www.yworks.com/xml/schema/graphml/1.1/ygraphml.xsd"
G = f"{{{GRAPHML_NS}}}"
Y = f"{{{YED_NS}}}"

NODE_GRAPHICS = "d0"
EDGE_GRAPHICS = "d1"
# (key id, for, attr.name, attr.type) of the plain attributes.
ATTRIBUTE_KEYS = (
    ("d2", "node", "name", "string"),
    ("d3", "node", "kind", "string"),
    ("d4", "node", "depth", "int"),
    ("d5", "node", "file", "string"),
    ("d6", "node", "line", "int"),
    ("d7", "edge", "type", "string"),
    ("d8", "edge", "subtypes", "string"),
    ("d9", "node", "role", "string"),
)
_KEY_IDS = {(domain, name): key_id for key_id, domain, name, _ in ATTRIBUTE_KEYS}

CHAR_WIDTH = 7.5
LINE_HEIGHT = 18.0
PADDING = 24.0
COLUMN_GAP = 80.0
ROW_GAP = 20.0

# XML 1.0 cannot carry these characters even as references; a name holding one is shown
# with U+FFFD rather than producing a file no parser accepts.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

ET.register_namespace("", GRAPHML_NS)
ET.register_namespace("y", YED_NS)
ET.register_namespace("xsi", XSI_NS)


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _size(name: str) -> tuple[float, float]:
    """Width and height of a node whose label is ``name``."""
    lines = name.splitlines() or [""]
    return CHAR_WIDTH * max(len(line) for line in lines) + PADDING, LINE_HEIGHT * len(lines) + PADDING / 2


def _column(node: ResultNode, direction: str, deepest: int) -> int:
    # Data flows left to right: an upstream walk puts its deepest sources in column 0.
    return deepest - node.depth if direction == "up" else node.depth


def _positions(result: LineageResult) -> list[tuple[float, float]]:
    """Top-left corner of every node: a column per depth, nodes stacked in result order."""
    deepest = max((node.depth for node in result.nodes), default=0)
    columns = [_column(node, result.direction, deepest) for node in result.nodes]
    sizes = [_size(node.name) for node in result.nodes]
    widths: dict[int, float] = {}
    for column, (width, _) in zip(columns, sizes, strict=True):
        widths[column] = max(widths.get(column, 0.0), width)
    lefts: dict[int, float] = {}
    left = 0.0
    for column in sorted(widths):
        lefts[column] = left
        left += widths[column] + COLUMN_GAP
    tops: dict[int, float] = {}
    corners = []
    for column, (_, height) in zip(columns, sizes, strict=True):
        top = tops.get(column, 0.0)
        corners.append((lefts[column], top))
        tops[column] = top + height + ROW_GAP
    return corners


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attributes)
    if text is not None:
        element.text = _xml_text(text)
    return element


def _data(parent: ET.Element, domain: str, name: str, value: object) -> None:
    if value is not None:
        _sub(parent, G + "data", str(value), key=_KEY_IDS[(domain, name)])


def _shape_node(node: ResultNode, corner: tuple[float, float], is_root: bool) -> ET.Element:
    look = kind_style(node.kind)
    width, height = _size(node.name)
    shape = ET.Element(Y + "ShapeNode")
    _sub(shape, Y + "Geometry", x=str(corner[0]), y=str(corner[1]), width=str(width), height=str(height))
    _sub(shape, Y + "Fill", color=look.fill, transparent="false")
    color, width = border(node, is_root)
    _sub(shape, Y + "BorderStyle", color=color, type="line", width=str(width))
    _sub(
        shape,
        Y + "NodeLabel",
        node.name,
        alignment="center",
        autoSizePolicy="content",
        fontFamily=style.FONT,
        fontSize="12",
        fontStyle="bold" if is_root else "plain",
        hasBackgroundColor="false",
        hasLineColor="false",
        modelName="internal",
        modelPosition="c",
        textColor=style.TEXT_COLOR,
        visible="true",
    )
    _sub(shape, Y + "Shape", type=look.yed_shape)
    return shape


def _poly_line_edge(edge: ResultEdge) -> ET.Element:
    line = ET.Element(Y + "PolyLineEdge")
    _sub(line, Y + "Path", sx="0.0", sy="0.0", tx="0.0", ty="0.0")
    _sub(
        line,
        Y + "LineStyle",
        color=style.EDGE_COLOR,
        type="dashed" if is_dashed(edge) else "line",
        width="1.0",
    )
    _sub(line, Y + "Arrows", source="none", target="standard")
    if caption := subtype_caption(edge):
        _sub(
            line,
            Y + "EdgeLabel",
            caption,
            alignment="center",
            fontFamily=style.FONT,
            fontSize="10",
            fontStyle="plain",
            modelName="centered",
            modelPosition="center",
            textColor=style.TEXT_COLOR,
            visible="true",
        )
    _sub(line, Y + "BendStyle", smoothed="false")
    return line


def _keys(root: ET.Element) -> None:
    _sub(root, G + "key", id=NODE_GRAPHICS, **{"for": "node", "yfiles.type": "nodegraphics"})
    _sub(root, G + "key", id=EDGE_GRAPHICS, **{"for": "edge", "yfiles.type": "edgegraphics"})
    for key_id, domain, name, kind in ATTRIBUTE_KEYS:
        _sub(root, G + "key", id=key_id, **{"for": domain, "attr.name": name, "attr.type": kind})


def _nodes(graph: ET.Element, result: LineageResult) -> None:
    roots = set(result.roots)
    for position, (node, corner) in enumerate(zip(result.nodes, _positions(result), strict=True)):
        element = _sub(graph, G + "node", id=f"n{position}")
        for name in ("name", "kind", "depth", "file", "line", "role"):
            _data(element, "node", name, getattr(node, name))
        graphics = _sub(element, G + "data", key=NODE_GRAPHICS)
        graphics.append(_shape_node(node, corner, node.name in roots))


def _edges(graph: ET.Element, edges: Iterable[ResultEdge], index: dict[str, int]) -> None:
    for position, edge in enumerate(edges):
        source, target = f"n{index[edge.source]}", f"n{index[edge.target]}"
        element = _sub(graph, G + "edge", id=f"e{position}", source=source, target=target)
        _data(element, "edge", "type", edge.type)
        _data(element, "edge", "subtypes", ",".join(edge.subtypes) or None)
        graphics = _sub(element, G + "data", key=EDGE_GRAPHICS)
        graphics.append(_poly_line_edge(edge))


def to_graphml(result: LineageResult) -> str:
    index = index_nodes(result)
    root = ET.Element(G + "graphml", {f"{{{XSI_NS}}}schemaLocation": SCHEMA_LOCATION})
    _keys(root)
    graph = _sub(root, G + "graph", id="G", edgedefault="directed")
    _nodes(graph, result)
    _edges(graph, result.edges, index)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + body + "\n"
