"""How a graph is drawn beyond its nodes and edges: grouping and direction, for GraphML, DOT and Mermaid.

The walk layer knows the store and fills a ``Picture`` (walk/levels.py's ``groups``); the emitters
only read it, so they stay store-free.  Each node may sit in a chain of containers, outermost first:
``(("dwh", "schema"), ("dwh.sales", "table"))`` for the column ``dwh.sales.id`` grouped by schema.
``group_tree`` turns those chains into the nesting both emitters walk.  ``volumes`` hold what a
flow manifest says about the statements behind edges (rows per run, frequency); ``legend`` lists
the line widths and dashes they are drawn with.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lineage_cli.emit.style import (
    FREQUENCY_DASHES,
    frequency_dash,
    is_approximate,
    is_dashed,
    is_declared,
    rows_width,
)
from lineage_cli.walk.result import LineageResult, ResultEdge

# Container kinds drawn as a table holding its columns (DOT: one HTML-table node with a port per column).
TABLE_KINDS = frozenset({"table", "view", "parameterized"})

Group = tuple[str, str]  # (name, kind) of a container


@dataclass(frozen=True, slots=True)
class Volume:
    """What a flow manifest says about the statement behind an edge."""

    rows: int | None = None
    frequency: str | None = None


NO_VOLUME = Volume()


@dataclass(frozen=True, slots=True)
class LegendEntry:
    """One sample line of the legend: what it stands for, and how it is drawn."""

    label: str
    width: float = 1.0
    dash: str = "solid"  # style.FREQUENCY_DASHES's values


@dataclass(frozen=True, slots=True)
class Picture:
    """What the GraphML, DOT and Mermaid emitters draw beyond the answer: direction, frames, line styles."""

    rankdir: str = "LR"
    groups: dict[str, tuple[Group, ...]] = field(default_factory=dict)  # node name -> its containers, outermost first
    volumes: dict[tuple[str, str], Volume] = field(default_factory=dict)  # (source, target) -> its statement's

    def line(self, edge: ResultEdge) -> tuple[float, str]:
        """Width and dash of ``edge``: dotted when declared or approximate, else from its statement's volume where
        known, else by its type."""
        volume = self.volumes.get((edge.source, edge.target), NO_VOLUME)
        width = 1.0 if volume.rows is None else rows_width(volume.rows)
        dash = frequency_dash(volume.frequency) if volume.frequency is not None else None
        if is_declared(edge) or is_approximate(edge):
            return width, "dotted"
        return width, dash or ("dashed" if is_dashed(edge) else "solid")

    def legend(self) -> list[LegendEntry]:
        """One entry per row count (thinnest first), then one per known frequency (most frequent first)."""
        rows = sorted({volume.rows for volume in self.volumes.values() if volume.rows is not None})
        known = {
            volume.frequency.strip().lower()
            for volume in self.volumes.values()
            if volume.frequency is not None and frequency_dash(volume.frequency)
        }
        order = list(FREQUENCY_DASHES)
        return [LegendEntry(f"{count:,} rows", rows_width(count)) for count in rows] + [
            LegendEntry(frequency, dash=FREQUENCY_DASHES[frequency]) for frequency in sorted(known, key=order.index)
        ]


@dataclass(slots=True)
class GroupTree:
    """One container (the root has none) with the result's nodes directly in it and its sub-containers."""

    group: Group | None = None
    members: list[int] = field(default_factory=list)  # positions in result.nodes
    children: dict[Group, GroupTree] = field(default_factory=dict)

    def descendants(self) -> list[int]:
        """Every node position inside this container, however deep."""
        return self.members + [position for child in self.children.values() for position in child.descendants()]

    def is_table(self) -> bool:
        """A table holding only columns: drawn as one table with a row per column."""
        return self.group is not None and self.group[1] in TABLE_KINDS and not self.children


def group_tree(result: LineageResult, picture: Picture) -> GroupTree:
    """The nesting of ``result``'s nodes into containers, in node order."""
    root = GroupTree()
    for position, node in enumerate(result.nodes):
        tree = root
        for group in picture.groups.get(node.name, ()):
            tree = tree.children.setdefault(group, GroupTree(group))
        tree.members.append(position)
    return root
