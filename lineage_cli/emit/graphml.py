"""The ``--format graphml`` emitter: GraphML with yEd's yFiles graphics.

Each node carries a ``y:ShapeNode`` (label, shape and fill by kind, a red border for the
queried nodes and a coloured one for sources and terminals) and plain ``<data>`` attributes
(role included, and a column's SQL expression) that yEd's property panel and networkx read.  Nodes are pre-placed in
columns by depth, so the file looks sensible in yEd before any layout is run.  Ids are
``n0..`` and ``e0..`` in result order.

With a ``Picture`` (emit/picture.py), ``--group-by`` containers become yEd group nodes (``g0..``,
``yfiles.foldertype="group"``, a ``y:ProxyAutoBoundsNode`` with an open and a closed
``y:GroupNode``) whose nested ``<graph>`` holds their members; edges stay in the top graph, where
yEd and networkx both expect them.  Edges of statements with manifest facts get their width and
dashes from rows and frequency, explained by a ``legend`` group (``l0..``, ``le0..``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable

from lineage_cli.emit import style
from lineage_cli.emit.picture import GroupTree, Picture, group_tree
from lineage_cli.emit.style import border, index_nodes, kind_style, subtype_caption
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
    ("d10", "node", "expression", "string"),  # a column's SQL expression (``ResultNode.expression_note``)
)
NODE_FIELDS = ("name", "kind", "depth", "file", "line", "role", "expression_note")
GROUP_FIELDS = ("name", "kind")  # a container that is no node of the answer has no depth or provenance
_KEY_IDS = {(domain, name): key_id for key_id, domain, name, _ in ATTRIBUTE_KEYS}

CHAR_WIDTH = 7.5
LINE_HEIGHT = 18.0
PADDING = 24.0
COLUMN_GAP = 80.0
ROW_GAP = 20.0
GROUP_INSET = 15.0

ET.register_namespace("", GRAPHML_NS)
ET.register_namespace("y", YED_NS)
ET.register_namespace("xsi", XSI_NS)


def _size(name: str) -> tuple[float, float]:
    """Width and height of a node whose label is ``name``."""
    lines = name.splitlines() or [""]
    return CHAR_WIDTH * max(len(line) for line in lines) + PADDING, LINE_HEIGHT * len(lines) + PADDING / 2


def _column(node: ResultNode, direction: str, deepest: int) -> int:
    # Data flows left to right: an upstream walk puts its deepest sources in column 0.
    return deepest - node.depth if direction == "up" else node.depth


def _positions(result: LineageResult, picture: Picture) -> list[tuple[float, float]]:
    """Top-left corner of every node: a column per depth, nodes stacked in result order, the members
    of a group next to each other so that its frame does not cover the nodes of another."""
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
    corners = [(0.0, 0.0)] * len(result.nodes)
    for position in sorted(range(len(result.nodes)), key=lambda p: picture.groups.get(result.nodes[p].name, ())):
        column, height = columns[position], sizes[position][1]
        top = tops.get(column, 0.0)
        corners[position] = (lefts[column], top)
        tops[column] = top + height + ROW_GAP
    return corners


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attributes)
    if text is not None:
        element.text = style.xml_safe(text)
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


def _poly_line_edge(caption: str, width: float, dash: str) -> ET.Element:
    line = ET.Element(Y + "PolyLineEdge")
    _sub(line, Y + "Path", sx="0.0", sy="0.0", tx="0.0", ty="0.0")
    _sub(line, Y + "LineStyle", color=style.EDGE_COLOR, type=style.YED_LINE_TYPES[dash], width=str(width))
    _sub(line, Y + "Arrows", source="none", target="standard")
    if caption:
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


def _nodes(graph: ET.Element, result: LineageResult, picture: Picture) -> None:
    roots = set(result.roots)
    corners = _positions(result, picture)
    shapes = {
        position: _shape_node(node, corner, node.name in roots)
        for position, (node, corner) in enumerate(zip(result.nodes, corners, strict=True))
    }
    _fill_graph(graph, group_tree(result, picture), result, shapes, _GroupIds())


class _GroupIds:
    """Hands out ``g0, g1, ...`` to group nodes: never clashing with the ``n``/``e`` ids."""

    def __init__(self) -> None:
        self.next = 0

    def __call__(self) -> str:
        self.next += 1
        return f"g{self.next - 1}"


def _fill_graph(
    graph: ET.Element, tree: GroupTree, result: LineageResult, shapes: dict[int, ET.Element], ids: _GroupIds
) -> None:
    """The members of ``tree`` as nodes of ``graph`` and its sub-containers as group nodes with nested graphs.

    A table that is itself in the answer is drawn once: as the folder of its columns, keeping its id, data
    and border, so its edges end at the folder."""
    keys = {position: (result.nodes[position].name, result.nodes[position].kind) for position in tree.members}
    folders = {key: position for position, key in keys.items() if key in tree.children}
    for position, key in keys.items():
        if key not in folders:
            element = _node_element(graph, f"n{position}", result.nodes[position], NODE_FIELDS)
            _sub(element, G + "data", key=NODE_GRAPHICS).append(shapes[position])
    roots = set(result.roots)
    for (name, kind), child in tree.children.items():
        position = folders.get((name, kind))
        node = ResultNode(name, kind) if position is None else result.nodes[position]
        if position is None:
            element = _node_element(graph, ids(), node, GROUP_FIELDS)
        else:
            element = _node_element(graph, f"n{position}", node, NODE_FIELDS)
        element.set("yfiles.foldertype", "group")
        members = [shapes[member] for member in child.descendants()]
        outline = border(node, node.name in roots)
        _sub(element, G + "data", key=NODE_GRAPHICS).append(_group_graphics(name, kind, members, outline))
        inner = _sub(element, G + "graph", id=element.get("id", "") + ":", edgedefault="directed")
        _fill_graph(inner, child, result, shapes, ids)


def _node_element(graph: ET.Element, node_id: str, node: ResultNode, fields: tuple[str, ...]) -> ET.Element:
    element = _sub(graph, G + "node", id=node_id)
    for name in fields:
        _data(element, "node", name.removesuffix("_note"), getattr(node, name))
    return element


def _bounds(shapes: list[ET.Element]) -> tuple[float, float, float, float]:
    """Left, top, right and bottom of the members' geometries."""
    boxes = [
        (float(g.get("x", 0)), float(g.get("y", 0)), float(g.get("width", 0)), float(g.get("height", 0)))
        for g in (shape.find(Y + "Geometry") for shape in shapes)
        if g is not None
    ]
    return (
        min(x for x, _, _, _ in boxes),
        min(y for _, y, _, _ in boxes),
        max(x + w for x, _, w, _ in boxes),
        max(y + h for _, y, _, h in boxes),
    )


def _group_graphics(
    name: str, kind: str, members: list[ET.Element], outline: tuple[str, float] = (style.BORDER_COLOR, 1.0)
) -> ET.Element:
    """A yEd folder: open, framing its members (yEd recomputes the frame when it lays out), then closed."""
    left, top, right, bottom = _bounds(members)
    left, top = left - GROUP_INSET, top - GROUP_INSET - LINE_HEIGHT
    width = max(right + GROUP_INSET - left, _size(name)[0])
    height = bottom + GROUP_INSET - top
    proxy = ET.Element(Y + "ProxyAutoBoundsNode")
    realizers = _sub(proxy, Y + "Realizers", active="0")
    look = style.group_style(kind)
    for closed in (False, True):
        group = _sub(realizers, Y + "GroupNode")
        size = _size(name) if closed else (width, height)
        _sub(group, Y + "Geometry", x=str(left), y=str(top), width=str(size[0]), height=str(size[1]))
        _sub(group, Y + "Fill", color=look.fill, transparent="false")
        _sub(group, Y + "BorderStyle", color=outline[0], type=look.yed_border, width=str(outline[1]))
        _sub(
            group,
            Y + "NodeLabel",
            name,
            alignment="left",
            autoSizePolicy="node_width",
            backgroundColor=look.label_fill,
            fontFamily=style.FONT,
            fontSize="12",
            fontStyle="bold",
            modelName="internal",
            modelPosition="t",
            textColor=style.TEXT_COLOR,
            visible="true",
        )
        _sub(group, Y + "Shape", type="roundrectangle")
        _sub(group, Y + "State", closed=str(closed).lower(), closedHeight="50.0", closedWidth="80.0")
        inset = str(GROUP_INSET)
        _sub(group, Y + "Insets", bottom=inset, left=inset, right=inset, top=inset)
    return proxy


def _edges(graph: ET.Element, edges: Iterable[ResultEdge], index: dict[str, int], picture: Picture) -> None:
    for position, edge in enumerate(edges):
        source, target = f"n{index[edge.source]}", f"n{index[edge.target]}"
        element = _sub(graph, G + "edge", id=f"e{position}", source=source, target=target)
        _data(element, "edge", "type", edge.type)
        _data(element, "edge", "subtypes", ",".join(edge.subtypes) or None)
        graphics = _sub(element, G + "data", key=EDGE_GRAPHICS)
        graphics.append(_poly_line_edge(subtype_caption(edge), *picture.line(edge)))


def _legend(graph: ET.Element, result: LineageResult, picture: Picture) -> None:
    """Below the graph, a ``legend`` group: a caption node, and one node per line width and dash in use
    with a sample edge to the caption.  Ids ``legend``, ``l0..`` and ``le0..`` keep clear of the answer's."""
    entries = picture.legend()
    if not entries:
        return
    corners = zip(result.nodes, _positions(result, picture), strict=True)
    top = max((corner[1] + _size(node.name)[1] for node, corner in corners), default=0.0)
    labels = ["legend: width = rows per run, dashes = update frequency", *(entry.label for entry in entries)]
    places = [(0.0, top + 3 * ROW_GAP)] + [(i * (COLUMN_GAP + 120.0), top + 9 * ROW_GAP) for i in range(len(entries))]
    nodes = [ResultNode(label, "legend") for label in labels]
    shapes = [_shape_node(node, place, is_root=False) for node, place in zip(nodes, places, strict=True)]
    group = _node_element(graph, "legend", ResultNode("legend", "legend"), GROUP_FIELDS)
    group.set("yfiles.foldertype", "group")
    _sub(group, G + "data", key=NODE_GRAPHICS).append(_group_graphics("legend", "legend", shapes))
    inner = _sub(group, G + "graph", id="legend:", edgedefault="directed")
    for position, (node, shape) in enumerate(zip(nodes, shapes, strict=True)):
        _sub(_node_element(inner, f"l{position}", node, GROUP_FIELDS), G + "data", key=NODE_GRAPHICS).append(shape)
    for position, entry in enumerate(entries):
        edge = _sub(inner, G + "edge", id=f"le{position}", source=f"l{position + 1}", target="l0")
        _sub(edge, G + "data", key=EDGE_GRAPHICS).append(_poly_line_edge("", entry.width, entry.dash))


def to_graphml(result: LineageResult, picture: Picture | None = None) -> str:
    index = index_nodes(result)
    root = ET.Element(G + "graphml", {f"{{{XSI_NS}}}schemaLocation": SCHEMA_LOCATION})
    _keys(root)
    graph = _sub(root, G + "graph", id="G", edgedefault="directed")
    picture = picture or Picture()
    _nodes(graph, result, picture)
    _edges(graph, result.edges, index, picture)
    _legend(graph, result, picture)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + body + "\n"
