"""The ``--format tree`` emitter: the result as rich trees, one per queried node.

Children follow the edges in the walk's direction: sources for an upstream walk, targets
otherwise; a path is one tree from its first node, and ``lineage io`` one tree with an
inputs branch (upstream) and an outputs branch (downstream).  A node met again is printed
but not re-expanded, so shared ancestry stays short and cycles terminate.  Sources and
terminals carry their role after their kind; a column with a SQL expression has it on the line under
its name (``= SUM(o.amount)``), once per statement that writes it, where the column is expanded.
"""

from __future__ import annotations

from io import StringIO

from rich.console import Group
from rich.text import Text
from rich.tree import Tree

from lineage_cli.terminal import plain_console
from lineage_cli.walk.result import LineageResult, ResultEdge

SEE_ABOVE = "(see above)"
_NO_LINEAGE = {"up": "no upstream lineage", "down": "no downstream lineage", "io": "no inputs or outputs"}

Children = dict[str, list[tuple[str, ResultEdge]]]


def _children(edges: list[ResultEdge], direction: str) -> Children:
    children: Children = {}
    for edge in edges:
        parent, child = (edge.target, edge.source) if direction == "up" else (edge.source, edge.target)
        children.setdefault(parent, []).append((child, edge))
    return children


class _Builder:
    """Grows the trees of one result; ``seen`` is shared so a node expands once overall."""

    def __init__(self, result: LineageResult, direction: str, edges: list[ResultEdge]) -> None:
        self.children = _children(edges, direction)
        self.kinds = {node.name: node.kind for node in result.nodes}
        self.roles = {node.name: node.role for node in result.nodes if node.role}
        self.expressions = {node.name: node.expressions for node in result.nodes if node.expressions}
        self.roots = set(result.roots)
        self.seen: set[str] = set()

    def label(self, name: str, edge: ResultEdge | None = None) -> Text:
        # Text, not markup strings: a name like "[bold]x" must print literally.
        label = Text(name, style="bold" if name in self.roots else "")
        if name in self.kinds:
            label.append(f" {self.kinds[name]}", style="dim")
        if name in self.roles:
            label.append(f" ({self.roles[name]})", style="green")
        if edge is not None and edge.subtypes:
            label.append(f" [{', '.join(edge.subtypes)}]", style="italic cyan")
        if name in self.seen:
            if name in self.children:
                label.append(f" {SEE_ABOVE}", style="dim italic")
        elif name in self.expressions:  # (once, where the column first shows)
            self._add_expressions(label, self.expressions[name])
        return label

    @staticmethod
    def _add_expressions(label: Text, expressions: tuple[tuple[str, str], ...]) -> None:
        """The column's expression on the line under it; each with its statement when several write it."""
        for statement, text in expressions:
            label.append(f"\n= {text}", style="yellow")
            if len(expressions) > 1:
                label.append(f"  ({statement})", style="dim")

    def tree(self, root: str) -> Tree:
        tree = Tree(self.label(root))
        self.grow(tree, root)
        return tree

    def grow(self, branch: Tree, root: str) -> None:
        """Add ``root``'s descendants under ``branch`` (nothing if ``root`` was expanded already)."""
        if root in self.seen:
            return
        self.seen.add(root)
        # An explicit stack rather than recursion: lineage chains can be thousands of hops deep.
        stack = self._pending(branch, root)
        while stack:
            parent, name, edge = stack.pop()
            branch = parent.add(self.label(name, edge))
            if name not in self.seen:
                self.seen.add(name)
                stack += self._pending(branch, name)

    def _pending(self, branch: Tree, name: str) -> list[tuple[Tree, str, ResultEdge]]:
        # Reversed so that popping the stack visits children in result order.
        return [(branch, child, edge) for child, edge in reversed(self.children.get(name, []))]


def render_tree(result: LineageResult) -> Group:
    """A renderable for a rich console: the trees of all roots, or the roots and a note."""
    if result.direction == "io" and result.edges:
        return Group(_io_tree(result))
    builder = _Builder(result, "up" if result.direction == "up" else "down", result.edges)
    if not result.edges:
        note = Text(_NO_LINEAGE.get(result.direction, "no lineage path"), style="dim italic")
        return Group(*(builder.label(root) for root in result.roots), note)
    roots = result.roots[:1] if result.direction == "path" else result.roots  # a path grows from its start
    return Group(*(builder.tree(root) for root in roots))


def _io_tree(result: LineageResult) -> Tree:
    """The step, an inputs branch growing upstream and an outputs branch growing downstream."""
    step = result.roots[0]
    tree = Tree(_Builder(result, "down", []).label(step))
    for title, direction, edges in (
        ("inputs", "up", [edge for edge in result.edges if edge.source != step]),
        ("outputs", "down", [edge for edge in result.edges if edge.target != step]),
    ):
        builder = _Builder(result, direction, edges)
        if step in builder.children:
            builder.grow(tree.add(Text(title, style="dim italic")), step)
    return tree


def tree_text(result: LineageResult, width: int = 100) -> str:
    """The tree as plain text, without ANSI codes, for files and pipes."""
    buffer = StringIO()
    console = plain_console(file=buffer, width=width, color_system=None, force_terminal=False)
    console.print(render_tree(result))
    return buffer.getvalue()
