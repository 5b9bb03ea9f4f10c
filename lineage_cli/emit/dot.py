"""The ``--format dot`` emitter: Graphviz DOT text, written without the graphviz package.

Node ids are the node names, always quoted, so the file stays readable and diffable;
every label is explicit because Graphviz would otherwise expand escapes in the id.  The queried
nodes are outlined in bold red, sources and terminals in their role's colour (a terminal with a
double border).
"""

from __future__ import annotations

from lineage_cli.emit import style
from lineage_cli.emit.style import border, index_nodes, is_dashed, kind_style, subtype_caption
from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode

# In labels a bare backslash starts an escape (\N, \l, ...); doubling it in ids too keeps a
# trailing backslash from escaping the closing quote.  Newlines become the \n escape.
_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})


def quote(text: str) -> str:
    """``text`` as a DOT double-quoted string.

    >>> print(quote('we"ird\\\\'))
    "we\\"ird\\\\"
    """
    return '"' + text.translate(_ESCAPES) + '"'


def _attributes(pairs: dict[str, str]) -> str:
    return "[" + ", ".join(f"{key}={quote(value)}" for key, value in pairs.items()) + "]"


def _node_statement(node: ResultNode, is_root: bool) -> str:
    look = kind_style(node.kind)
    attributes = {
        "label": node.name,
        "shape": look.dot_shape,
        "style": look.dot_style,
        "fillcolor": look.fill,
    }
    if is_root or node.role:
        color, width = border(node, is_root)
        attributes |= {"penwidth": str(width), "color": color}
    if is_root:
        attributes["style"] = look.dot_style + ",bold"
    elif node.role == "terminal":
        attributes["peripheries"] = "2"  # a double border: the end of the line even without colour
    return f"  {quote(node.name)} {_attributes(attributes)};"


def _edge_statement(edge: ResultEdge) -> str:
    attributes: dict[str, str] = {}
    if caption := subtype_caption(edge):
        attributes["label"] = caption
    if is_dashed(edge):
        attributes["style"] = "dashed"
    suffix = f" {_attributes(attributes)}" if attributes else ""
    return f"  {quote(edge.source)} -> {quote(edge.target)}{suffix};"


def to_dot(result: LineageResult) -> str:
    index_nodes(result)  # refuse dangling edges: Graphviz would invent unstyled nodes for them
    roots = set(result.roots)
    font = quote(style.FONT)
    lines = [
        "digraph lineage {",
        "  rankdir=LR;",
        f'  node [shape=box, style="rounded,filled", fontname={font}, fontcolor={quote(style.TEXT_COLOR)},'
        f" color={quote(style.BORDER_COLOR)}, penwidth={style.BORDER_WIDTH}];",
        f"  edge [fontname={font}, fontsize=10, color={quote(style.EDGE_COLOR)}];",
    ]
    lines += [_node_statement(node, node.name in roots) for node in result.nodes]
    lines += [_edge_statement(edge) for edge in result.edges]
    lines.append("}")
    return "\n".join(lines) + "\n"
