"""What a block reads rows from: tables, derived blocks, table functions, rows, renamed and joined sources.

A ``_Source`` answers four questions: whether it has a column (None when its columns are
unknown), its column names, the ``_Lineage`` of one column, and all of them (``expand``, for a
star).  A table's column is a base column; a derived table's is the output of its block; a
table function's (LATERAL VIEW explode, UNNEST, FLATTEN, generate_series) traces to its
arguments.  PIVOT / UNPIVOT sources are in ``pivot.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lineage_cli.harvest.sql.columns.lineage import IDENTITY, STAR, TRANSFORMATION, UNRESOLVED, _fields, _Lineage
from lineage_cli.harvest.sql.columns.nodes import _children

if TYPE_CHECKING:
    from lineage_cli.harvest.sql.columns.analysis import _Analysis
    from lineage_cli.harvest.sql.columns.blocks import _Block


class _Source:
    """Something a block reads rows from: a table, a derived block, or a table function."""

    __slots__ = ()

    def has(self, name: str) -> bool | None:
        """Whether the source has column ``name``; None when its columns are unknown."""
        raise NotImplementedError

    def names(self) -> list[str]:
        raise NotImplementedError

    def column(self, name: str, text: str) -> _Lineage:
        raise NotImplementedError

    def expand(self) -> list[tuple[str, _Lineage]]:
        raise NotImplementedError


class _TableSource(_Source):
    __slots__ = ("analysis", "name")

    def __init__(self, analysis: _Analysis, name: str) -> None:
        self.analysis, self.name = analysis, name

    def has(self, name: str) -> bool | None:
        known = self.analysis.known_columns(self.name)
        return None if known is None else name in known

    def names(self) -> list[str]:
        known = self.analysis.known_columns(self.name)
        return list(known) if known is not None else [STAR]

    def column(self, name: str, text: str) -> _Lineage:
        return self.analysis.base(self.name, name)

    def expand(self) -> list[tuple[str, _Lineage]]:
        known = self.analysis.known_columns(self.name)
        if known is None:
            self.analysis.warn(f"cannot expand {self.name}.*: its columns are unknown")
            return [(STAR, self.analysis.base(self.name, STAR))]
        return [(name, self.analysis.base(self.name, name)) for name in known]


class _DerivedSource(_Source):
    __slots__ = ("block",)

    def __init__(self, block: _Block) -> None:
        self.block = block

    def has(self, name: str) -> bool | None:
        names = self.block.name_set()
        if name in names:
            return True
        return None if STAR in names else False

    def names(self) -> list[str]:
        return self.block.names()

    def column(self, name: str, text: str) -> _Lineage:
        return self.block.output(name, text)

    def expand(self) -> list[tuple[str, _Lineage]]:
        return list(self.block.outputs())


class _FunctionSource(_Source):
    """LATERAL VIEW explode / UNNEST / FLATTEN / table functions: every output traces to the arguments."""

    __slots__ = ("block", "calls", "columns", "_lineage", "_reading", "value_table", "position")

    def __init__(
        self, block: _Block, calls: list[exp.Expression], columns: list[str], value_table: bool = False
    ) -> None:
        self.block, self.calls, self.columns = block, calls, columns  # several calls: ROWS FROM (f(), g())
        self._lineage: _Lineage | None = None
        self._reading = False
        self.position = len(block._order)  # the sources before it are the ones its arguments may name
        # BigQuery's UNNEST(arr) AS item: item is the element, and a STRUCT element's fields are columns too
        self.value_table = value_table

    def has(self, name: str) -> bool | None:
        if self._reading:  # the arguments name earlier sources, never the function's own columns
            return False
        return name in self.columns if self.columns else None

    def names(self) -> list[str]:
        return list(self.columns) or [STAR]

    def column(self, name: str, text: str) -> _Lineage:
        if self._reading:
            return self.block.analysis.unresolved(name, text)
        if self._lineage is None:
            self._lineage = self._read([argument for call in self.calls for argument in _call_arguments(call)])
        zipped = self._zipped()
        if len(zipped) > 1 and name in self.columns[: len(zipped)]:  # UNNEST(a, b) AS x(i, j): i from a, j from b
            return self._read([zipped[self.columns.index(name)]])
        return self._lineage

    def _zipped(self) -> list[exp.Expression]:
        """The calls whose outputs sit side by side, one column each: UNNEST's arrays, ROWS FROM's calls."""
        if len(self.calls) == 1 and isinstance(self.calls[0], exp.Unnest):
            return self.calls[0].expressions
        return self.calls

    def _read(self, nodes: list[exp.Expression]) -> _Lineage:
        lineage = _Lineage()
        # The arguments are read in the block that holds the function: they may name its earlier sources only.
        self._reading, visible, self.block.visible = True, self.block.visible, self.position
        try:
            for node in nodes:
                self.block.analysis.visit(node, self.block, TRANSFORMATION, lineage, ())
        finally:
            self._reading, self.block.visible = False, visible
        return lineage

    def expand(self) -> list[tuple[str, _Lineage]]:
        return [(name, self.column(name, name)) for name in self.names()]


def _call_arguments(call: exp.Expression) -> list[exp.Expression]:
    """What a table function reads: the call itself, but only the value of a named parameter written
    ``name = value`` (DuckDB's ``read_csv('f.csv', header = true)``), whose name is no column."""
    arguments = list(_children(call)) if isinstance(call, exp.Func) else []
    if not any(map(_is_named_parameter, arguments)):
        return [call]
    return [argument.expression if _is_named_parameter(argument) else argument for argument in arguments]


def _is_named_parameter(argument: exp.Expression) -> bool:
    return isinstance(argument, exp.EQ) and isinstance(argument.this, exp.Column) and not argument.this.table


class _RowSource(_Source):
    """The row an INSERT proposes, by target column: what ``EXCLUDED.c`` names in an upsert."""

    __slots__ = ("row",)

    def __init__(self, row: dict[str, _Lineage]) -> None:
        self.row = row

    def has(self, name: str) -> bool | None:
        return name in self.row

    def names(self) -> list[str]:
        return list(self.row)

    def column(self, name: str, text: str) -> _Lineage:
        return self.row.get(name) or _Lineage()

    def expand(self) -> list[tuple[str, _Lineage]]:
        return list(self.row.items())


class _RenamedSource(_Source):
    """``FROM t AS a(x, y)``, ``UNPIVOT (...) AS u(x, y)``: a source whose first columns are renamed by
    position; the columns past the list keep their names."""

    __slots__ = ("inner", "columns", "_renames")

    def __init__(self, inner: _Source, columns: list[str]) -> None:
        self.inner, self.columns = inner, columns
        self._renames: dict[str, str] | None = None

    def renames(self) -> dict[str, str]:
        """New name -> the inner column it renames; STAR where a star of unknown columns hides which one.  The
        columns after such a star line up from the end (``UNPIVOT (...) AS u(a, b, name, value)`` over a table
        of unknown columns: the name and value columns come last)."""
        if self._renames is None:
            inner = self.inner.names()
            if STAR in inner:
                star, width = inner.index(STAR), max(len(self.columns), len(inner))
                inner = inner[:star] + [STAR] * (width - len(inner) + 1) + inner[star + 1 :]
            self._renames = {new: inner[i] if i < len(inner) else STAR for i, new in enumerate(self.columns)}
        return self._renames

    def has(self, name: str) -> bool | None:
        if name in self.columns:
            return True
        if name in self.renames().values():
            return False
        return self.inner.has(name)

    def names(self) -> list[str]:
        return self.columns + self.inner.names()[len(self.columns) :]

    def column(self, name: str, text: str) -> _Lineage:
        renamed = self.renames().get(name)
        if renamed is None:
            return self.inner.column(name, text)
        return self.inner.column(renamed, text)

    def expand(self) -> list[tuple[str, _Lineage]]:
        return [(name, self.column(name, name)) for name in self.columns] + self.inner.expand()[len(self.columns) :]


def _renamed(source: _Source, columns: list[str]) -> _Source:
    return _RenamedSource(source, columns) if columns else source


class _JoinedSource(_Source):
    """``(a JOIN b ON ...) AS j``: the sources of a parenthesised join, reached together under its alias."""

    __slots__ = ("sources",)

    def __init__(self, sources: list[_Source]) -> None:
        self.sources = sources

    def has(self, name: str) -> bool | None:
        found = [source.has(name) for source in self.sources]
        return True if True in found else None if None in found else False

    def names(self) -> list[str]:
        return [name for source in self.sources for name in source.names()]

    def column(self, name: str, text: str) -> _Lineage:
        having = [s for s in self.sources if s.has(name)] or [s for s in self.sources if s.has(name) is None]
        return having[0].column(name, text) if len(having) == 1 else _AMBIGUOUS.column(name, text)

    def expand(self) -> list[tuple[str, _Lineage]]:
        return [item for source in self.sources for item in source.expand()]


class _UsingKey(_Source):
    """The key of ``JOIN ... USING (k)`` named without a qualifier: COALESCE of each side's k."""

    __slots__ = ("sides",)

    def __init__(self, sides: list[_Source]) -> None:
        self.sides = sides

    def has(self, name: str) -> bool | None:
        return True

    def names(self) -> list[str]:
        return []

    def column(self, name: str, text: str) -> _Lineage:
        key = _Lineage()
        for side in self.sides:
            key.merge(side.column(name, text))
        return key

    def expand(self) -> list[tuple[str, _Lineage]]:
        return []


class _Ambiguous(_Source):
    """Stands for 'several sources could hold this column': resolves to the unresolved marker."""

    def column(self, name: str, text: str) -> _Lineage:
        return _Lineage({f"{UNRESOLVED}.{name}": IDENTITY}, frozenset())


_AMBIGUOUS = _Ambiguous()


def _single_source_read(source: _Source, parts: list[str], text: str) -> _Lineage | None:
    """``q.c`` whose qualifier names nothing in scope, over a single source: the table's own name under an
    alias (``SELECT t.id FROM s.t AS q``) or its schema (``x.a`` of ``FROM x.a``) reads the table, else ``q`` is
    a struct column of the source (``payload.user_id``, GA4's ``(SELECT value.int_value FROM
    UNNEST(event_params) ...)``); None for a trigger's row (NEW / OLD) or a column the source lacks."""
    table = source.name.split(".") if isinstance(source, _TableSource) else []
    if table and parts[0] == table[-1] and len(parts) == 2:
        return source.column(parts[1], text)
    if table and parts == table[-len(parts) :]:
        return _row_of(source)
    if parts[0] in _ROW_VARIABLES or source.has(parts[0]) is False:
        return None
    return _fields(source.column(parts[0], text), parts[1:])


def _row_of(source: _Source) -> _Lineage:
    """A source's whole row as one value (``to_json(t)``): every column of it, transformed."""
    row = _Lineage()
    for _, lineage in source.expand():
        row.merge(lineage, TRANSFORMATION)
    return row


# A trigger function's rows (plpgsql NEW / OLD): not struct columns of the one table a statement reads
_ROW_VARIABLES = frozenset(("new", "old"))
