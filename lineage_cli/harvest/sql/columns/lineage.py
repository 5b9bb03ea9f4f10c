"""The vocabulary the column analysis shares: subtype levels, ``ColumnEdge`` and a column's ``_Lineage``.

A ``_Lineage`` is what the blocks compute for each output column and what the expression walk
accumulates: the base columns on its value paths (``values``, each with its highest projection
subtype), those its expression reads elsewhere (``conds``), and those read by a CASE / IF condition
or a window spec that sits on one of its value paths (``shaped``, with CONDITIONAL or WINDOW): they
become predicate edges to the column itself.  The alias orders say where a
clause's bare name looks for a select-list alias.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from lineage_cli.model import Subtype

PROJECTION = "projection"
PREDICATE = "predicate"

IDENTITY = int(Subtype.IDENTITY)
TRANSFORMATION = int(Subtype.TRANSFORMATION)
TRANSFORMATION_MASKING = int(Subtype.TRANSFORMATION_MASKING)
AGGREGATION = int(Subtype.AGGREGATION)
AGGREGATION_MASKING = int(Subtype.AGGREGATION_MASKING)
FILTER = int(Subtype.FILTER)
JOIN = int(Subtype.JOIN)
GROUP_BY = int(Subtype.GROUP_BY)
SORT = int(Subtype.SORT)
WINDOW = int(Subtype.WINDOW)
CONDITIONAL = int(Subtype.CONDITIONAL)

UNRESOLVED = "?"  # the table part of a column that could not be resolved: ``?.column``
STAR = "*"

_SUBTYPE_NAMES = {int(s): s.name for s in Subtype}


class ColumnEdge(NamedTuple):
    """One column-lineage edge: ``source`` column to ``target`` column (projection, and a CONDITIONAL / WINDOW
    predicate that shapes the column's value) or table (any predicate).

    A tuple, not a dataclass: a harvest sends, caches and reads back tens of thousands of them.
    """

    source: str
    target: str
    kind: str  # "projection" | "predicate"
    subtype: str  # a Subtype name


_NOTHING_SHAPED: frozenset[tuple[str, int]] = frozenset()  # shared until a column is shaped: most never are


class _Lineage:
    """Where one column's value comes from (``values``), what else its expression reads (``conds``), and which
    of those a condition or window on a value path reads (``shaped``: (base column, CONDITIONAL | WINDOW))."""

    __slots__ = ("values", "conds", "shaped", "_bases")

    def __init__(
        self,
        values: dict[str, int] | None = None,
        conds: set[str] | frozenset[str] | None = None,
        shaped: set[tuple[str, int]] | frozenset[tuple[str, int]] = _NOTHING_SHAPED,
    ) -> None:
        self.values: dict[str, int] = values if values is not None else {}
        self.conds: set[str] | frozenset[str] = conds if conds is not None else set()
        self.shaped: set[tuple[str, int]] | frozenset[tuple[str, int]] = shaped
        self._bases: frozenset[str] | None = None

    @property
    def bases(self) -> frozenset[str]:
        """Every base column of the defining expression: what a predicate on this column reads."""
        if self._bases is None:
            self._bases = frozenset(self.values).union(self.conds)
        return self._bases

    def merge(self, other: _Lineage, level: int = IDENTITY) -> None:
        """Add ``other``'s paths, each raised to at least ``level`` (the step that joins them here)."""
        values = self.values
        for column, subtype in other.values.items():
            if subtype < level:
                subtype = level
            if values.get(column, -1) < subtype:
                values[column] = subtype
        if other.conds:
            self.conds.update(other.conds)  # type: ignore[union-attr]
        if other.shaped:  # a condition on a value path of ``other`` shapes this value too
            self.shape(other.shaped)

    def shape(self, shaped: Iterable[tuple[str, int]]) -> None:
        """Add (base column, CONDITIONAL | WINDOW) pairs read by a condition or window on a value path."""
        if type(self.shaped) is set:
            self.shaped.update(shaped)
        else:
            self.shaped = set(self.shaped).union(shaped)

    def raised(self, level: int) -> _Lineage:
        return _Lineage({c: max(s, level) for c, s in self.values.items()}, set(self.conds), self._shaped_copy())

    def copy(self) -> _Lineage:
        """A lineage of its own to merge into (``merge`` changes its sets in place)."""
        return _Lineage(dict(self.values), set(self.conds), self._shaped_copy())

    def _shaped_copy(self) -> set[tuple[str, int]] | frozenset[tuple[str, int]]:
        return set(self.shaped) if self.shaped else _NOTHING_SHAPED


def _raise(level: int | None, to: int) -> int | None:
    return None if level is None else max(level, to)


def _fields(lineage: _Lineage, fields: list[str]) -> _Lineage:
    """``a.s.f``: reading a field of a struct column is a transformation of the column."""
    return lineage.raised(TRANSFORMATION) if fields else lineage


# Where a clause's bare name looks for a select-list alias: ORDER BY before the sources, GROUP BY / HAVING /
# QUALIFY after the sources known to have the column, WHERE and ON after every source, since they run before
# the select list (an alias there is a Snowflake / DuckDB extension, and a table's column wins over it).
ALIAS_FIRST, ALIAS_AFTER_KNOWN, ALIAS_LAST = range(3)
