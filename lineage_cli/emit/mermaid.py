"""The ``--format mermaid`` emitter: a Mermaid flowchart, which GitHub, GitLab and most documentation sites draw
from a ```` ```mermaid ```` block (pull-request comments, issues, step summaries, docs).

It draws what the DOT picture draws, in Mermaid's terms: node ids ``n0..`` in result order and every label a
quoted string, its special characters written as Mermaid's ``#code;`` entities (a name may hold quotes,
brackets, ``#``, markup or ``%%``); a shape and fill by kind; the queried nodes outlined in bold red, sources
and terminals in their role's colour (``classDef`` / ``class``, the queried class last so that it wins);
projection edges solid, predicates dashed (``-.->``), declared and approximate lineage dotted, and line width
and dashes from a flow manifest's rows and frequency (``linkStyle``).  With ``--group-by`` the containers are
``subgraph`` blocks, a table holding columns one too; a table that is itself in the answer is that block,
under its own id, so its edges end at the frame.  Mermaid has no rank constraints: the queried nodes are not
pinned to the side of the picture as in DOT.
"""

from __future__ import annotations

import re

from lineage_cli.emit import style
from lineage_cli.emit.picture import GroupTree, Picture, group_tree
from lineage_cli.emit.style import index_nodes, subtype_caption
from lineage_cli.walk.result import LineageResult, ResultNode

# kind -> the brackets of its Mermaid shape (DOT's box, rounded box, ellipse, hexagon, octagon, parallelogram)
SHAPES: dict[str, tuple[str, str]] = {
    "table": ("[", "]"),
    "view": ("(", ")"),
    "column": ("([", "])"),
    "transformation": ("{{", "}}"),
    "module": ("[[", "]]"),
    "workflow": ("[/", "/]"),
    "parameterized": ("[", "]"),
}
DEFAULT_SHAPE = ("[", "]")
# Mermaid's arrows: a solid line, its dashed one, and the dashed one drawn dotted by a linkStyle.
ARROWS = {"solid": "-->", "dashed": "-.->", "dotted": "-.->"}
DOTTED = "stroke-dasharray:2 3"
QUERIED = "queried"

# What Mermaid would read as syntax inside a quoted label: the quote, ``#`` (its entities), markup (labels are
# HTML), the Markdown-string backtick, brackets, the link separator and every control character.
_SPECIAL = re.compile(r'["#&<>`\[\]{}|\\;%\x00-\x1f\x7f]')


def label(text: str) -> str:
    """``text`` as a quoted Mermaid label, its special characters as ``#code;`` entities.

    >>> print(label('mart."we<ird>" #1'))
    "mart.#34;we#60;ird#62;#34; #35;1"
    >>> print(label(""))  # Mermaid refuses an empty label; a space shows as nothing all the same
    " "
    """
    return '"' + (_SPECIAL.sub(lambda match: f"#{ord(match.group())};", style.xml_safe(text)) or " ") + '"'


def _class_name(prefix: str, word: str) -> str:
    """A class name Mermaid accepts for a kind or a role, whatever that is called."""
    return prefix + re.sub(r"\W", "_", word, flags=re.ASCII)


def to_mermaid(result: LineageResult, picture: Picture | None = None) -> str:
    index = index_nodes(result)
    picture = picture or Picture()
    ids = {name: f"n{position}" for name, position in index.items()}
    body = _Body(result, ids)
    lines = [f"flowchart {picture.rankdir}", *body(group_tree(result, picture), "  ")]
    styles: dict[str, list[int]] = {}
    for number, edge in enumerate(result.edges):
        width, dash = picture.line(edge)
        caption = subtype_caption(edge)
        text = f"|{label(caption)}|" if caption else ""
        lines.append(f"  {ids[edge.source]} {ARROWS[dash]}{text} {ids[edge.target]}")
        if look := _link_style(width, dash):
            styles.setdefault(look, []).append(number)
    lines += _legend(picture, len(result.edges), styles)
    lines += [f"  linkStyle {','.join(map(str, numbers))} {look}" for look, numbers in styles.items()]
    lines += _classes(result, ids, body.frames)
    return "\n".join(lines) + "\n"


def _link_style(width: float, dash: str) -> str:
    parts = ([f"stroke-width:{width}px"] if width != 1.0 else []) + ([DOTTED] if dash == "dotted" else [])
    return ",".join(parts)


def _legend(picture: Picture, edges: int, styles: dict[str, list[int]]) -> list[str]:
    """A ``legend`` block with one sample edge per line width and dash in use, as DOT's ``cluster_legend``."""
    entries = picture.legend()
    if not entries:
        return []
    lines = ['  subgraph legend["legend: width = rows per run, dashes = update frequency"]']
    for number, entry in enumerate(entries):
        lines.append(f'    l{number}a[" "] {ARROWS[entry.dash]}|{label(entry.label)}| l{number}b[" "]')
        if look := _link_style(entry.width, entry.dash):
            styles.setdefault(look, []).append(edges + number)
    return [*lines, "  end"]


class _Body:
    """The node statements and ``subgraph`` blocks of a group tree; ``frames`` the blocks' ids and kinds."""

    def __init__(self, result: LineageResult, ids: dict[str, str]) -> None:
        self.result, self.ids = result, ids
        self.frames: list[tuple[str, str]] = []

    def __call__(self, tree: GroupTree, indent: str) -> list[str]:
        framed = set(tree.children)  # (name, kind): a node of the answer that is a container is drawn as its frame
        lines = [
            indent + self.ids[node.name] + _shape(node)
            for node in map(self.result.nodes.__getitem__, tree.members)
            if (node.name, node.kind) not in framed
        ]
        for child in tree.children.values():
            lines += self._frame(child, indent)
        return lines

    def _frame(self, tree: GroupTree, indent: str) -> list[str]:
        name, kind = tree.group or ("", "")
        node = self.result.node(name) if name in self.ids else None
        frame = self.ids[name] if node is not None and node.kind == kind else f"g{len(self.frames)}"
        self.frames.append((frame, kind))
        return [f"{indent}subgraph {frame}[{label(name)}]", *self(tree, indent + "  "), f"{indent}end"]


def _shape(node: ResultNode) -> str:
    opening, closing = SHAPES.get(node.kind, DEFAULT_SHAPE)
    return f"{opening}{label(node.name)}{closing}"


def _classes(result: LineageResult, ids: dict[str, str], frames: list[tuple[str, str]]) -> list[str]:
    """``classDef`` and ``class`` statements: kinds first, then frames, roles and the queried nodes, so that
    a later class's stroke wins over an earlier one's."""
    framed = {frame for frame, _ in frames}
    members: dict[str, list[str]] = {}
    looks: dict[str, str] = {}
    for node in result.nodes:
        if ids[node.name] in framed:
            continue  # the frame's class is its container kind's, below
        look = style.kind_style(node.kind)
        name = _class_name("k_", node.kind)
        dashed = ",stroke-dasharray:4 3" if "dashed" in look.dot_style else ""
        looks[name] = f"fill:{look.fill},stroke:{style.BORDER_COLOR},color:{style.TEXT_COLOR}{dashed}"
        members.setdefault(name, []).append(ids[node.name])
    for frame, kind in frames:
        look = style.group_style(kind)
        name = _class_name("g_", kind)
        dashed = ",stroke-dasharray:4 3" if "dashed" in look.dot_style else ""
        looks[name] = f"fill:{look.fill},stroke:{style.BORDER_COLOR},color:{style.TEXT_COLOR}{dashed}"
        members.setdefault(name, []).append(frame)
    roots = set(result.roots)
    for node in result.nodes:
        if node.role in style.ROLE_BORDERS and node.name not in roots:
            color, width = style.ROLE_BORDERS[node.role]
            name = _class_name("r_", node.role)
            looks[name] = f"stroke:{color},stroke-width:{width:g}px"
            members.setdefault(name, []).append(ids[node.name])
    queried = [ids[name] for name in result.roots if name in ids]
    if queried:
        looks[QUERIED] = f"stroke:{style.ROOT_BORDER_COLOR},stroke-width:{style.ROOT_BORDER_WIDTH:g}px,font-weight:bold"
        members[QUERIED] = queried
    return [f"  classDef {name} {look}" for name, look in looks.items()] + [
        f"  class {','.join(members[name])} {name}" for name in looks
    ]
