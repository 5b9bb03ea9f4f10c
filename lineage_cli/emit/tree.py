"""The ``--format tree`` emitter: the result as rich trees, one per queried node.

Children follow the edges in the walk's direction: sources for an upstream walk, targets
otherwise.  A node met again is printed but not re-expanded, so shared ancestry stays
short and cycles terminate.
"""

from __future__ import annotations

from io import StringIO

from rich.console import Console, Group
from rich.text import Text
from rich.tree import Tree

from lineage_cli.walk.result import LineageResult, ResultEdge

SEE_ABOVE = "(see above)"
_NO_LINEAGE = {"up": "no upstream lineage", "down": "no downstream lineage"}

Children = dict[str, list[tuple[str, ResultEdge]]]


def _children(result: LineageResult) -> Children:
    children: Children = {}
    for edge in result.edges:
        parent, child = (edge.target, edge.source) if result.direction == "up" else (edge.source, edge.target)
        children.setdefault(parent, []).append((child, edge))
    return children


class _Builder:
    """Grows the trees of one result; ``seen`` is shared so a node expands once overall."""

    def __init__(self, result: LineageResult) -> None:
        self.children = _children(result)
        self.kinds = {node.name: node.kind for node in result.nodes}
        self.roots = set(result.roots)
        self.seen: set[str] = set()

    def label(self, name: str, edge: ResultEdge | None = None) -> Text:
        # Text, not markup strings: a name like "[bold]x" must print literally.
        label = Text(name, style="bold" if name in self.roots else "")
        if name in self.kinds:
            label.append(f" {self.kinds[name]}", style="dim")
        if edge is not None and edge.subtypes:
            label.append(f" [{', '.join(edge.subtypes)}]", style="italic cyan")
        if name in self.seen and name in self.children:
            label.append(f" {SEE_ABOVE}", style="dim italic")
        return label

    def tree(self, root: str) -> Tree:
        tree = Tree(self.label(root))
        if root in self.seen:
            return tree
        self.seen.add(root)
        # An explicit stack rather than recursion: lineage chains can be thousands of hops deep.
        stack = self._pending(tree, root)
        while stack:
            parent, name, edge = stack.pop()
            branch = parent.add(self.label(name, edge))
            if name not in self.seen:
                self.seen.add(name)
                stack += self._pending(branch, name)
        return tree

    def _pending(self, branch: Tree, name: str) -> list[tuple[Tree, str, ResultEdge]]:
        # Reversed so that popping the stack visits children in result order.
        return [(branch, child, edge) for child, edge in reversed(self.children.get(name, []))]


def render_tree(result: LineageResult) -> Group:
    """A renderable for a rich console: the trees of all roots, or the roots and a note."""
    builder = _Builder(result)
    if not result.edges:
        note = Text(_NO_LINEAGE.get(result.direction, "no lineage path"), style="dim italic")
        return Group(*(builder.label(root) for root in result.roots), note)
    return Group(*(builder.tree(root) for root in result.roots))


def tree_text(result: LineageResult, width: int = 100) -> str:
    """The tree as plain text, without ANSI codes, for files and pipes."""
    buffer = StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False, highlight=False)
    console.print(render_tree(result))
    return buffer.getvalue()
