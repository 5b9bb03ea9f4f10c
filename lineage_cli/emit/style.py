"""Presentation shared by the graph emitters (GraphML, DOT and Mermaid): palette, shapes, captions.

One place for the colours so that a view looks the same in yEd and in Graphviz, and for
the node numbering that TGF and GraphML both derive from the result's node order.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode


@dataclass(frozen=True, slots=True)
class KindStyle:
    fill: str
    yed_shape: str  # y:Shape type
    dot_shape: str
    dot_style: str


KIND_STYLES: dict[str, KindStyle] = {
    "table": KindStyle("#8ECAE6", "rectangle", "box", "filled"),
    "view": KindStyle("#B7E4C7", "roundrectangle", "box", "rounded,filled"),
    "column": KindStyle("#FFE8A3", "ellipse", "ellipse", "filled"),
    "transformation": KindStyle("#F4A261", "hexagon", "hexagon", "filled"),
    "module": KindStyle("#CDB4DB", "octagon", "octagon", "filled"),
    "workflow": KindStyle("#FFC8DD", "parallelogram", "parallelogram", "filled"),
    # A table named by a template placeholder: a paler table blue, dashed: where it points depends on the run.
    "parameterized": KindStyle("#D4ECF7", "rectangle", "box", "dashed,filled"),
}
# A kind this module does not know yet still gets drawn, in neutral grey.
UNKNOWN_KIND_STYLE = KindStyle("#E0E0E0", "rectangle", "box", "filled")


@dataclass(frozen=True, slots=True)
class GroupStyle:
    fill: str  # the folder's (cluster's) background, pale so that its members stand out
    label_fill: str  # the title bar
    yed_border: str  # y:BorderStyle type
    dot_style: str


GROUP_STYLES: dict[str, GroupStyle] = {
    "schema": GroupStyle("#EEF6FB", "#8ECAE6", "line", "rounded,filled"),
    "datamart": GroupStyle("#EEF8F1", "#B7E4C7", "line", "rounded,filled"),
    "workflow": GroupStyle("#FFF0F6", "#FFC8DD", "dashed", "rounded,filled,dashed"),
}
# A table framing its columns, or a container kind without its own style.
TABLE_GROUP_STYLE = GroupStyle("#FFFBEA", "#FFE8A3", "line", "filled")

FONT = "Helvetica"
TEXT_COLOR = "#1B1B1E"
BORDER_COLOR = "#4A4E69"
BORDER_WIDTH = 1.0
ROOT_BORDER_COLOR = "#C1121F"
ROOT_BORDER_WIDTH = 3.0
# A data node's role in the whole graph (walk/result.py): a coloured border, thinner than the queried
# node's red one, which wins on a queried node.
ROLE_BORDERS: dict[str, tuple[str, float]] = {
    "source": ("#2D6A4F", 2.0),  # green: data enters the lineage here
    "terminal": ("#7B2CBF", 2.0),  # purple: data leaves it here
    "isolated": ("#8D99AE", 2.0),  # neither: no lineage at all
}
EDGE_COLOR = "#4A4E69"
# Predicates influence which rows flow but carry no values, so they are drawn dashed.
DASHED_EDGE_TYPES = frozenset({"predicate"})


# Data volume and update frequency of a statement's edges (from a flow manifest's ``rows`` and
# ``frequency``): more rows draw a thicker line, one more pixel per tenfold above a thousand rows;
# a more frequent run draws shorter dashes.  Graphviz and yEd have two dash lengths, so hourly and
# faster runs are dotted, daily and slower ones dashed, and a run that happens once is solid.
MAX_EDGE_WIDTH = 6.0
FREQUENCY_DASHES: dict[str, str] = {
    "continuous": "dotted",
    "streaming": "dotted",
    "minutely": "dotted",
    "hourly": "dotted",
    "daily": "dashed",
    "weekly": "dashed",
    "monthly": "dashed",
    "quarterly": "dashed",
    "yearly": "dashed",
    "once": "solid",
}
YED_LINE_TYPES = {"dotted": "dotted", "dashed": "dashed", "solid": "line"}


def rows_width(rows: int) -> float:
    """Width of an edge moving ``rows`` rows per run.

    >>> rows_width(500), rows_width(250_000), rows_width(10**12)
    (1.0, 3.4, 6.0)
    """
    return round(min(MAX_EDGE_WIDTH, 1.0 + max(0.0, math.log10(max(rows, 1)) - 3)), 1)


def frequency_dash(frequency: str) -> str | None:
    """``dotted``, ``dashed`` or ``solid`` for a known frequency (case-insensitive), else None."""
    return FREQUENCY_DASHES.get(frequency.strip().lower())


# XML 1.0 cannot carry these characters even as references (GraphML, and DOT's HTML-like labels,
# which Graphviz parses as XML); a name holding one is shown with U+FFFD rather than breaking the file.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_safe(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def kind_style(kind: str) -> KindStyle:
    return KIND_STYLES.get(kind, UNKNOWN_KIND_STYLE)


def group_style(kind: str) -> GroupStyle:
    return GROUP_STYLES.get(kind, TABLE_GROUP_STYLE)


def border(node: ResultNode, is_root: bool) -> tuple[str, float]:
    """Colour and width of a node's border: the queried node's, its role's, or the plain one."""
    if is_root:
        return ROOT_BORDER_COLOR, ROOT_BORDER_WIDTH
    return ROLE_BORDERS.get(node.role or "", (BORDER_COLOR, BORDER_WIDTH))


def is_dashed(edge: ResultEdge) -> bool:
    return edge.type in DASHED_EDGE_TYPES


def is_declared(edge: ResultEdge) -> bool:
    """Lineage a manifest or dbt declared rather than SQL showed: drawn dotted."""
    return "DECLARED" in edge.subtypes


def is_approximate(edge: ResultEdge) -> bool:
    """Lineage read from the tokens of a statement that did not parse: drawn dotted too, captioned APPROXIMATE."""
    return "APPROXIMATE" in edge.subtypes


def subtype_caption(edge: ResultEdge) -> str:
    """The edge label drawn in GraphML, DOT and Mermaid: its subtypes, or empty.

    >>> subtype_caption(ResultEdge("a", "b", "predicate", ("FILTER", "JOIN")))
    'FILTER, JOIN'
    """
    return ", ".join(edge.subtypes)


def index_nodes(result: LineageResult) -> dict[str, int]:
    """Position of every node in ``result.nodes``, checking the result is a closed graph.

    Exporters number ids from this, so a duplicate name or an edge end that is not a node
    would produce a broken file; fail loudly instead.
    """
    index: dict[str, int] = {}
    for position, node in enumerate(result.nodes):
        if node.name in index:
            raise ValueError(f"duplicate node {node.name!r} in lineage result")
        index[node.name] = position
    for edge in result.edges:
        for end in (edge.source, edge.target):
            if end not in index:
                raise ValueError(f"edge {edge.source!r} -> {edge.target!r}: {end!r} is not a node of the result")
    return index
