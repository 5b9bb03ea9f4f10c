"""The ``--format dot`` emitter: Graphviz DOT text, written without the graphviz package.

Node ids are the node names, always quoted, so the file stays readable and diffable;
every label is explicit because Graphviz would otherwise expand escapes in the id.  The queried
nodes are outlined in bold red, sources and terminals in their role's colour (a terminal with a
double border), and pinned to the side of the picture their walk points away from.

With a ``Picture`` (emit/picture.py), ``--group-by`` containers become ``cluster_N`` subgraphs,
and a table holding columns becomes one HTML-like table node (id: the table's name) with a row and
a numbered port per column, so column edges run port to port.  Edges of statements with manifest
facts get their width and dashes from rows and frequency, explained in ``cluster_legend``.
"""

from __future__ import annotations

import html

from lineage_cli.emit import style
from lineage_cli.emit.bands import band_ranks
from lineage_cli.emit.picture import GroupTree, Picture, group_tree
from lineage_cli.emit.style import border, index_nodes, kind_style, subtype_caption
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
    if node.expression_note is not None:  # a column's SQL expression, shown on hover in SVG
        attributes["tooltip"] = node.expression_note
    return f"{quote(node.name)} {_attributes(attributes)};"


def _edge_statement(
    edge: ResultEdge, ends: dict[str, tuple[str, str | None]], picture: Picture, ranks: dict[str, int]
) -> str:
    attributes = _line_attributes(*picture.line(edge))
    if caption := subtype_caption(edge):
        attributes = {"label": caption} | attributes
    tail, head = ends[edge.source][0], ends[edge.target][0]
    gap = ranks[head] - ranks[tail] if ranks and tail != head else 1
    if gap < 1:
        attributes["constraint"] = "false"  # it closes a cycle the bands broke: it must not pull ranks back
    elif gap > 1:
        attributes["minlen"] = str(gap)  # across the bands between its ends: they keep their width
    suffix = f" {_attributes(attributes)}" if attributes else ""
    return f"  {_end(ends[edge.source])} -> {_end(ends[edge.target])}{suffix};"


def _line_attributes(width: float, dash: str) -> dict[str, str]:
    attributes = {"penwidth": str(width)} if width != 1.0 else {}
    return attributes | ({"style": dash} if dash != "solid" else {})


def _legend(result: LineageResult, picture: Picture) -> list[str]:
    """A cluster with one sample edge per line width and dash in use, labelled with what it means."""
    entries = picture.legend()
    if not entries:
        return []
    taken = {node.name for node in result.nodes} | {group[0] for chain in picture.groups.values() for group in chain}
    lines = [
        "  subgraph cluster_legend {",
        f"    graph {_attributes({'label': 'legend: width = rows per run, dashes = update frequency'})};",
        '    node [shape=point, width=0.05, label=""];',
    ]
    for position, entry in enumerate(entries):
        tail, head = (_free_id(f"legend {position}{end}", taken) for end in ("", " end"))
        look = _line_attributes(entry.width, entry.dash)
        lines += [f"    {tail}; {head};", f"    {tail} -> {head} {_attributes({'label': entry.label} | look)};"]
    return lines + ["  }"]


def _free_id(wanted: str, taken: set[str]) -> str:
    """``wanted`` as a quoted node id, primed until no node of the answer has that name."""
    while wanted in taken:
        wanted += "'"
    taken.add(wanted)
    return quote(wanted)


def to_dot(result: LineageResult, picture: Picture | None = None) -> str:
    index_nodes(result)  # refuse dangling edges: Graphviz would invent unstyled nodes for them
    picture = picture or Picture()
    tree = group_tree(result, picture)
    ends = _endpoints(result, tree)
    font = quote(style.FONT)
    lines = [
        "digraph lineage {",
        f"  rankdir={picture.rankdir};",
        "  newrank=true;",  # rank the whole graph at once: clusters neither bend edges back nor refuse rank=min
        f'  node [shape=box, style="rounded,filled", fontname={font}, fontcolor={quote(style.TEXT_COLOR)},'
        f" color={quote(style.BORDER_COLOR)}, penwidth={style.BORDER_WIDTH}];",
        f"  edge [fontname={font}, fontsize=10, color={quote(style.EDGE_COLOR)}];",
    ]
    lines += _Body(result)(tree, "  ")
    ranks = _bands(result, tree, ends)
    if ranks:
        # The bands' long edges give dot many bend points to place; one pass of the placement per node is
        # enough for them and halves its time on 1,500 tables, and no picture measured grew.
        lines.append("  nslimit=1;")
    lines += _rank_constraints(result, ends) + _rank_lines(ranks)
    lines += [_edge_statement(edge, ends, picture, ranks) for edge in result.edges]
    lines += _legend(result, picture)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _endpoints(result: LineageResult, tree: GroupTree) -> dict[str, tuple[str, str | None]]:
    """Where each node's edges attach: its own node id, or its table's node id and its row's port."""
    ends: dict[str, tuple[str, str | None]] = {node.name: (quote(node.name), None) for node in result.nodes}
    stack = [tree]
    while stack:
        current = stack.pop()
        stack += current.children.values()
        if current.is_table() and current.group:
            table = quote(current.group[0])
            ends |= {result.nodes[position].name: (table, _port(position)) for position in current.members}
    return ends


def _bands(result: LineageResult, tree: GroupTree, ends: dict[str, tuple[str, str | None]]) -> dict[str, int]:
    """The rank of every node id when the picture has clusters (emit/bands.py), else none: a flat picture is
    ranked well by dot itself."""
    clusters = [child for child in tree.children.values() if not child.is_table()]
    if not clusters:
        return {}
    units = {
        ends[result.nodes[position].name][0]: f"cluster {number}"  # a node id is quoted: no clash
        for number, cluster in enumerate(clusters)
        for position in cluster.descendants()
    }
    boxes = [end for end, _ in ends.values()]
    links = [(ends[edge.source][0], ends[edge.target][0]) for edge in result.edges]
    starts = [ends[root][0] for root in result.roots if root in ends]
    return band_ranks(boxes, units, links, starts, upstream=result.direction == "up")


def _rank_lines(ranks: dict[str, int]) -> list[str]:
    """A ``rank=same`` statement for each rank of more than one node, in rank order (the edges' ``minlen`` keep
    the ranks apart)."""
    levels: dict[int, list[str]] = {}
    for box, rank in ranks.items():
        levels.setdefault(rank, []).append(box)
    return [f"  {{rank=same; {' '.join(levels[rank])}}}" for rank in sorted(levels) if len(levels[rank]) > 1]


def _end(end: tuple[str, str | None]) -> str:
    node, port = end
    return node if port is None else f"{node}:{port}"


def _port(position: int) -> str:
    # Ports are numbered, not named: a column name may hold anything, a port name may not.
    return f"c{position}"


class _Body:
    """The statements of a group tree: nodes, ``cluster_N`` subgraphs, and tables of columns."""

    def __init__(self, result: LineageResult) -> None:
        self.result, self.roots, self.clusters = result, set(result.roots), 0

    def __call__(self, tree: GroupTree, indent: str) -> list[str]:
        # A table that is itself in the answer is drawn once: as the head of its table of columns.
        tables = {child.group[0] for child in tree.children.values() if child.is_table() and child.group}
        lines = [
            indent + _node_statement(node, node.name in self.roots)
            for node in map(self.result.nodes.__getitem__, tree.members)
            if node.name not in tables
        ]
        for child in tree.children.values():
            lines += [indent + self._table(child)] if child.is_table() else self._cluster(child, indent)
        return lines

    def _cluster(self, tree: GroupTree, indent: str) -> list[str]:
        name, kind = tree.group or ("", "")
        look = style.group_style(kind)
        self.clusters += 1
        head = [
            f"{indent}subgraph cluster_{self.clusters - 1} {{",
            f"{indent}  graph {_attributes({'label': name, 'style': look.dot_style, 'fillcolor': look.fill})};",
        ]
        return head + self(tree, indent + "  ") + [f"{indent}}}"]

    def _table(self, tree: GroupTree) -> str:
        name, kind = tree.group or ("", "")
        table = self.result.node(name)
        head = _cell(name, style.kind_style(table.kind if table else kind).fill, table, self.roots, bold=True)
        rows = [head] + [
            _cell(_short(node.name, name), style.kind_style(node.kind).fill, node, self.roots, _port(position))
            for position, node in zip(tree.members, map(self.result.nodes.__getitem__, tree.members), strict=True)
        ]
        label = '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4">' + "".join(rows) + "</TABLE>"
        return f"{quote(name)} [shape=plain, style=solid, label=<{label}>];"


def _short(column: str, table: str) -> str:
    """A column's name within its table's box.

    >>> _short("dwh.sales.id", "dwh.sales"), _short("id", "dwh.sales")
    ('id', 'id')
    """
    return column.removeprefix(table + ".")


def _cell(
    text: str, fill: str, node: ResultNode | None, roots: set[str], port: str | None = None, bold: bool = False
) -> str:
    """One row of a table node: a column (with its port) or the table's own head."""
    attributes = f' BGCOLOR="{fill}"' + (f' PORT="{port}"' if port else "")
    if node is not None and node.expression_note is not None:
        note = html.escape(style.xml_safe(node.expression_note), quote=True).replace("\n", "&#10;")
        attributes += f' TOOLTIP="{note}"'  # a column's SQL expression
    if node is not None and (node.name in roots or node.role):
        color, width = border(node, node.name in roots)
        attributes += f' COLOR="{color}" BORDER="{round(width)}"'
    content = html_text(text)
    if bold or (node is not None and node.name in roots):
        content = f"<B>{content}</B>"
    return f"<TR><TD{attributes}>{content}</TD></TR>"


def html_text(text: str) -> str:
    """``text`` as the content of a Graphviz HTML-like label: markup escaped, lines broken with ``<BR/>``.

    >>> html_text('a<b & "c"\\nd')
    'a&lt;b &amp; &quot;c&quot;<BR/>d'
    """
    lines = html.escape(style.xml_safe(text), quote=True).replace("&#x27;", "&#39;").split("\n")
    return "<BR/>".join(lines)


def _rank_constraints(result: LineageResult, ends: dict[str, tuple[str, str | None]]) -> list[str]:
    """The queried nodes at the edge of the picture their walk points away from: an upstream walk's on
    the right of its inputs, a downstream walk's on the left of its outputs, a path's ends at both.
    A queried column pins its whole table."""
    roots = result.roots
    if not roots or result.direction == "io":
        return []
    if result.direction == "path":
        sides = [("min", roots[:1]), ("max", roots[-1:])] if len(roots) > 1 else []
    else:
        # A queried node downstream of another (upstream, for an upstream walk) must stay on its
        # far side, so only the outermost queried nodes are pinned to the edge of the picture.
        up = result.direction == "up"
        pairs = [(edge.target, edge.source) if up else (edge.source, edge.target) for edge in result.edges]
        inner = {later for earlier, later in pairs if earlier in roots}
        sides = [("max" if up else "min", [root for root in roots if root not in inner])]
    return [
        f"  {{rank={side}; {' '.join(dict.fromkeys(ends[name][0] for name in names))}}}"
        for side, names in sides
        if names
    ]
