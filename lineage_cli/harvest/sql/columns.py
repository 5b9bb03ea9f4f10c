"""Column-level lineage of one statement: projection and predicate edges with subtypes.

A statement is cut into *blocks*, one per query scope (SELECT, set operation, CTE, derived
table, expression subquery, VALUES) plus one for the body of a MERGE / UPDATE / DELETE.  A
block knows its sources by folded alias and computes, once, the lineage of all its output
columns; blocks reference each other, so CTE chains, derived tables and UNION branches are
resolved through memoised outputs instead of one walk per column.

The lineage of a derived column is two sets of base columns (``schema.table.column``):

* ``values``: the columns on a value path, each with the highest projection subtype of
  its paths (IDENTITY < TRANSFORMATION < TRANSFORMATION_MASKING < AGGREGATION <
  AGGREGATION_MASKING);
* ``conds``: the columns its expression reads in non-value positions (CASE conditions,
  IF / NVL2 first arguments, DECODE operands, window specs, subquery filters).

Projection edges map the ``values`` of each output to its target column.  Predicate edges
(column -> target table) come from the clauses of every block: WHERE / HAVING / QUALIFY
FILTER, JOIN ON / USING JOIN, GROUP BY GROUP_BY, ORDER BY SORT, window specs WINDOW, CASE /
IF conditions CONDITIONAL; a predicate on a derived column reads all of its ``values`` and
``conds``.  docs/lineage-semantics.md states the rules with examples.

The scope model is sqlglot's (``sqlglot.optimizer.scope``) but built here, lazily and per
block: sqlglot's ``Scope`` keys sources by their case-sensitive spelling, does not model the
sources of MERGE / UPDATE / Hive multi-insert branches, and its column collection is a
second full walk we do not need.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import NamedTuple, TypeVar

from sqlglot import exp

from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.sql.functions import FunctionLevels
from lineage_cli.harvest.sql.statements import Context, StatementLineage, Write, file_location
from lineage_cli.model import Subtype
from lineage_cli.profiles import DialectProfile

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
    """One column-lineage edge: ``source`` column to ``target`` column (projection) or table (predicate).

    A tuple, not a dataclass: a harvest sends, caches and reads back tens of thousands of them.
    """

    source: str
    target: str
    kind: str  # "projection" | "predicate"
    subtype: str  # a Subtype name


def column_lineage(
    lineage: StatementLineage, ctx: Context, catalog: SchemaCatalog
) -> tuple[list[ColumnEdge], list[str]]:
    """Every projection and predicate edge of one analysed statement, and the warnings met.

    >>> import sqlglot
    >>> from lineage_cli.harvest.sql.statements import analyze_statement
    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("ansi"))
    >>> sql = "INSERT INTO t (total) SELECT SUM(s.amount) FROM s WHERE s.ok GROUP BY s.day"
    >>> edges, warnings = column_lineage(analyze_statement(sqlglot.parse_one(sql), ctx), ctx, SchemaCatalog())
    >>> [(e.source, e.target, e.subtype) for e in edges]
    [('s.amount', 't.total', 'AGGREGATION'), ('s.day', 't', 'GROUP_BY'), ('s.ok', 't', 'FILTER')]
    """
    edges: set[ColumnEdge] = set()
    warnings: list[str] = []
    for write in lineage.writes:
        analysis = _Analysis(ctx, catalog, write.target)
        try:
            analysis.run(lineage, write)
        except RecursionError:  # a few thousand nested operators; the table lineage still stands
            analysis.warn(f"{write.target}: expression nested too deeply for column lineage")
        edges.update(analysis.edges())
        warnings.extend(w for w in analysis.warnings if w not in warnings)
    return sorted(edges, key=_edge_key), warnings


def _edge_key(edge: ColumnEdge) -> tuple[str, str, str, str]:
    return (edge.source, edge.target, edge.kind, edge.subtype)


def output_columns(write: Write, ctx: Context, catalog: SchemaCatalog) -> list[str] | None:
    """The column names a CTAS / view / SELECT INTO gives its target, or None when a star hides them.

    >>> import sqlglot
    >>> from lineage_cli.harvest.sql.statements import analyze_statement
    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("ansi"))
    >>> sql = "CREATE VIEW v AS SELECT a.id, a.x + 1 AS y, COUNT(*) FROM a"
    >>> output_columns(analyze_statement(sqlglot.parse_one(sql), ctx).writes[0], ctx, SchemaCatalog())
    ['id', 'y', '_c2']
    """
    listed = _listed_columns(write, ctx)
    if listed:
        return listed
    if write.query is None:
        return None
    analysis = _Analysis(ctx, catalog, write.target)
    statement = write.target_node.root() if write.target_node is not None else None
    names = analysis.query_block(write.query, _statement_env(analysis, statement, write.query), None).names()
    return None if STAR in names else names


# --------------------------------------------------------------------------- lineage values


class _Lineage:
    """Where one column's value comes from (``values``) and what else its expression reads (``conds``)."""

    __slots__ = ("values", "conds", "_bases")

    def __init__(self, values: dict[str, int] | None = None, conds: set[str] | frozenset[str] | None = None) -> None:
        self.values: dict[str, int] = values if values is not None else {}
        self.conds: set[str] | frozenset[str] = conds if conds is not None else set()
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

    def raised(self, level: int) -> _Lineage:
        return _Lineage({c: max(s, level) for c, s in self.values.items()}, set(self.conds))


# Where a clause's bare name looks for a select-list alias: ORDER BY before the sources, GROUP BY / HAVING /
# QUALIFY after the sources known to have the column, WHERE and ON after every source, since they run before
# the select list (an alias there is a Snowflake / DuckDB extension, and a table's column wins over it).
ALIAS_FIRST, ALIAS_AFTER_KNOWN, ALIAS_LAST = range(3)
# A sequence's next and current value (Oracle, Snowflake, DB2): `seq.NEXTVAL` names no table.
_SEQUENCE_VALUES = frozenset(("nextval", "currval"))
# The pseudo-columns of a CONNECT BY query (Oracle, Snowflake) and of a grouping query (Hive's GROUPING__ID)
_HIERARCHY_COLUMNS = frozenset(("level", "connect_by_isleaf", "connect_by_iscycle"))
_GROUPING_COLUMNS = frozenset(("grouping__id",))


# --------------------------------------------------------------------------- sources


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


class _PivotSource(_Source):
    """``rel PIVOT (agg FOR k IN (...))`` / ``rel UNPIVOT (v FOR k IN (cols))`` over another source.

    PIVOT: the new columns aggregate the aggregated columns, the FOR column decides which
    new column a row lands in (CONDITIONAL) and the other columns group the rows (GROUP_BY).
    UNPIVOT: the value column takes each listed column in turn; the name column has no source.
    """

    def __init__(self, block: _Block, pivot: exp.Pivot, alias: str, inner: _Source) -> None:
        self.inner, self.unpivot = inner, bool(pivot.args.get("unpivot"))
        self.lineage: dict[str, _Lineage] = {}  # the kept columns first, then the new ones
        self.kept = 0
        scope = _RelationBlock(block.analysis, block.env, alias, inner)
        fields = [f for f in pivot.args.get("fields") or () if isinstance(f, exp.In)]
        if self.unpivot:
            self._unpivot(block.analysis, scope, pivot, fields)
        else:
            self._pivot(block.analysis, scope, pivot, fields)

    def _pivot(self, analysis: _Analysis, scope: _Block, pivot: exp.Pivot, fields: list[exp.In]) -> None:
        aggregations = []
        for aggregation in pivot.expressions:
            aggregations.append(lineage := _Lineage())
            analysis.visit(aggregation, scope, IDENTITY, lineage, ())
        decided = _Lineage()
        for field in fields:
            analysis.visit(field.this, scope, None, decided, (CONDITIONAL,))
        used = {_last_name(c, analysis) for node in (*pivot.expressions, *fields) for c in node.find_all(exp.Column)}
        for name in self.inner.names():
            if name != STAR and name not in used:
                self.lineage[name] = kept = self.inner.column(name, name)
                analysis.emit(kept.bases, GROUP_BY)
        self.kept = len(self.lineage)
        named = [analysis.fold(c) for c in pivot.args.get("columns") or ()]
        for field in fields:
            named = named or [analysis.output_name(v, i) for i, v in enumerate(field.expressions)]
        values = sum(len(field.expressions) for field in fields)
        # sqlglot names the columns value by value, aggregation by aggregation (cat_a_s, cat_a_mp, b_s, ...)
        by_position = len(aggregations) > 1 and len(named) == values * len(aggregations)
        for position, name in enumerate(named):
            chosen = [aggregations[position % len(aggregations)]] if by_position else aggregations
            self.lineage[name] = column = _Lineage(conds=set(decided.conds))
            for lineage in chosen:
                column.merge(lineage)

    def _unpivot(self, analysis: _Analysis, scope: _Block, pivot: exp.Pivot, fields: list[exp.In]) -> None:
        # BigQuery's UNPIVOT ((a, b) FOR k IN ((q1, q2), (q3, q4))): value column a takes q1 and q3, b q2 and q4
        value_names = [analysis.fold(_last_identifier(v)) for item in pivot.expressions for v in _tuple_items(item)]
        values = [_Lineage() for _ in value_names]
        listed: set[str] = set()
        for field in fields:
            for entry in field.expressions:
                entry = entry.this if isinstance(entry, exp.PivotAlias | exp.Alias) else entry
                for position, column in enumerate(_tuple_items(entry)):
                    listed.add(_last_name(column, analysis))
                    if values:
                        analysis.visit(column, scope, IDENTITY, values[position % len(values)], ())
        for name in self.inner.names():
            if name != STAR and name not in listed:
                self.lineage[name] = self.inner.column(name, name)
        self.kept = len(self.lineage)
        for field in fields:
            self.lineage[analysis.fold(_last_identifier(field.this))] = _Lineage()
        self.lineage.update(zip(value_names, values, strict=True))

    def has(self, name: str) -> bool | None:
        return True if name in self.lineage else None if STAR in self.inner.names() else False

    def names(self) -> list[str]:
        """The kept columns (a star where the source's are unknown), then the new ones."""
        names = list(self.lineage)
        star = [STAR] if STAR in self.inner.names() else []
        return names[: self.kept] + star + names[self.kept :]

    def column(self, name: str, text: str) -> _Lineage:
        return self.lineage.get(name) or self.inner.column(name, text)

    def expand(self) -> list[tuple[str, _Lineage]]:
        return [(name, self.column(name, name)) for name in self.names()]


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


# --------------------------------------------------------------------------- blocks


class _Block:
    """One query scope: its sources by folded alias and the memoised lineage of its outputs."""

    def __init__(self, analysis: _Analysis, env: dict[str, _Block], outer: _Block | None, track: bool) -> None:
        self.analysis = analysis
        self.env = env  # visible CTEs by folded name
        self.outer = outer  # the enclosing block a correlated column may name
        self.referenced: set[str] | None = set() if track else None  # every base read, for subqueries
        self.columns: list[str] = []  # names given from outside: d(a, b) / cte(a, b)
        self._sources: dict[str, _Source] | None = None
        self._order: list[_Source] = []
        self.visible: int | None = None  # while a table function's arguments are read: the sources before it
        self._star_order: list[_Source] = []
        self._tables: dict[str, _Source] = {}
        self._using: set[str] = set()
        self._names: list[str] | None = None
        self._name_set: frozenset[str] | None = None
        self._outputs: list[tuple[str, _Lineage]] | None = None
        self._by_name: dict[str, _Lineage] | None = None
        self._partial: list[tuple[str, _Lineage]] = []
        self._busy = False
        self._processed = False

    # -- outputs ------------------------------------------------------------------------

    def names(self) -> list[str]:
        if self._names is None:
            self._names = self._renamed(self._compute_names())
        return self._names

    def name_set(self) -> frozenset[str]:
        if self._name_set is None:
            self._name_set = frozenset(self.names())
        return self._name_set

    def outputs(self) -> list[tuple[str, _Lineage]]:
        if self._outputs is None:
            if self._busy:  # a recursive CTE reading itself: what is known so far
                return self._partial
            self._busy = True
            computed = self._compute_outputs()
            computed = _star_filled(computed, [name for name, _ in computed], len(self.columns))
            names = self._renamed([name for name, _ in computed])
            self._outputs = [(name, lineage) for name, (_, lineage) in zip(names, computed, strict=True)]
            self._busy = False
        return self._outputs

    def output(self, name: str, text: str) -> _Lineage:
        """The lineage of output ``name``; through an unexpandable star, the star table's column."""
        if self._by_name is None:
            outputs = self.outputs()
            by_name: dict[str, _Lineage] = {}
            for key, (_, lineage) in zip(self._renamed([key for key, _ in outputs]), outputs, strict=True):
                by_name.setdefault(key, lineage)
            if self._outputs is None:  # a recursive CTE still computing: do not cache a partial answer
                return by_name.get(name) or self.analysis.unresolved(name, text)
            self._by_name = by_name
        found = self._by_name.get(name)
        if found is not None:
            return found
        star = self._by_name.get(STAR)
        if star is not None:
            return _Lineage({_star_column(table, name): level for table, level in star.values.items()}, star.conds)
        return self.analysis.unresolved(name, text)

    def _renamed(self, names: list[str]) -> list[str]:
        if not self.columns:
            return names
        names = _star_filled(names, names, len(self.columns))
        return self.columns[: len(names)] + names[len(self.columns) :]

    def _compute_names(self) -> list[str]:
        raise NotImplementedError

    def _compute_outputs(self) -> list[tuple[str, _Lineage]]:
        raise NotImplementedError

    # -- processing ---------------------------------------------------------------------

    def process(self) -> None:
        """Read the block's outputs and clauses once, emitting their predicate edges."""
        if not self._processed:
            self._processed = True
            self.outputs()
            self._clauses()

    def _clauses(self) -> None:
        """Emit the predicate edges of the block's own clauses."""

    def referenced_bases(self) -> set[str]:
        """Every base column read by the block (a subquery in a predicate reads all of them)."""
        self.process()
        return self.referenced or set()

    # -- sources ------------------------------------------------------------------------

    def ensure_sources(self) -> None:
        if self._sources is None:
            self._sources = {}
            self._collect_sources()

    def _collect_sources(self) -> None:
        """Fill the sources; blocks without a FROM have none."""

    def add_source(self, alias: str, source: _Source, star: bool = True, table_name: str | None = None) -> None:
        assert self._sources is not None
        if alias and alias in self._sources:
            if table_name is None or table_name in self._tables:
                return  # T-SQL names the UPDATE target by the alias of a FROM table: one source
            alias = table_name  # `FROM db1.t, db2.t`: one short name for two tables, told apart by their full names
        self._sources[alias] = source
        self._order.append(source)
        if star:
            self._star_order.append(source)
        if table_name is not None:
            self._tables.setdefault(table_name, source)
            parts = table_name.split(".")
            if len(parts) > 2:
                self._tables.setdefault(".".join(parts[-2:]), source)

    def add_qualifier(self, alias: str, source: _Source) -> None:
        """A source only a qualified name reaches (``EXCLUDED.c``): no bare name or star reads it."""
        self.ensure_sources()
        self._sources.setdefault(alias, source)  # type: ignore[union-attr]

    def add_relation(self, node: exp.Expression, star: bool = True) -> None:
        """Register one FROM / JOIN / LATERAL item as a source."""
        found = self._relation_source(node)
        if found is None:
            return
        alias, source, table = found
        for pivot in node.args.get("pivots") or ():  # the pivot's output replaces the relation's
            source = _renamed(_PivotSource(self, pivot, alias, source), _alias_columns(pivot, self.analysis))
            alias = self.analysis.fold(_alias_identifier(pivot)) or alias
            table = None
        self.add_source(alias, source, star, table)

    def _relation_source(self, node: exp.Expression) -> tuple[str, _Source, str | None] | None:
        analysis = self.analysis
        alias = analysis.fold(_alias_identifier(node))
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            name = analysis.fold(node.this)
            cte = None if node.args.get("db") else self.env.get(name)
            if cte is None and not node.args.get("db") and name in analysis.ctx.profile.dummy_tables:
                return alias or name, _RowSource({}), None  # DUAL: no columns, no data
            renamed = _alias_columns(node, analysis)
            if cte is not None:
                return alias or name, _renamed(_DerivedSource(cte), renamed), None
            table = analysis.ctx.table_name(node)
            return alias or name, _renamed(_TableSource(analysis, table), renamed), table
        if isinstance(node, exp.Table) and isinstance(node.this, exp.DynamicIdentifier):
            return alias, _RowSource({}), None  # IDENTIFIER(:var): a table known only when the script runs
        if isinstance(node, exp.Table) and (location := file_location(node)) is not None:
            return alias, _TableSource(analysis, location), location  # DuckDB's read_parquet('in/*.parquet')
        if isinstance(node, exp.Table):  # a table function: TABLE(FLATTEN(...)), generate_series(...), ROWS FROM
            calls = [node.this] if node.this is not None else list(node.args.get("rows_from") or ())
            columns = _alias_columns(node, analysis) or analysis.function_columns(calls[0] if calls else None)
            return alias, _FunctionSource(self, calls, columns), None
        if isinstance(node, (exp.Subquery, exp.Lateral)) and isinstance(node.this, exp.Query):
            correlated = isinstance(node, exp.Lateral) or bool(node.args.get("lateral"))
            block = analysis.query_block(node.this, self.env, self if correlated else None)
            block.columns = _alias_columns(node, analysis) or block.columns
            return alias, _DerivedSource(block), None
        if isinstance(node, exp.Values):
            block = analysis.query_block(node, self.env, None)
            block.columns = _alias_columns(node, analysis)
            return alias, _DerivedSource(block), None
        if isinstance(node, (exp.UDTF, exp.Func)):
            call = node.this if isinstance(node, exp.Lateral) else node
            columns = _alias_columns(node, analysis) or analysis.function_columns(call)
            value_table = not alias and len(columns) == 1
            if value_table:  # BigQuery: UNNEST(arr) AS item names the column
                alias = columns[0]
            if isinstance(offset := node.args.get("offset"), exp.Identifier):  # WITH OFFSET AS pos / ORDINALITY
                columns = [*columns, analysis.fold(offset)]
            return alias, _FunctionSource(self, [node], columns, value_table), None
        return None

    # -- resolution ---------------------------------------------------------------------

    def find_qualified(self, parts: list[str], text: str) -> _Lineage | None:
        """``q.c`` (or ``db.t.c``, ``q.c.field``) where ``q`` names one of this block's sources."""
        self.ensure_sources()
        count = len(parts)
        for width in (3, 2):  # catalog.schema.table / schema.table qualifiers
            if count > width and (source := self._tables.get(".".join(parts[:width]))) is not None:
                return _fields(source.column(parts[width], text), parts[width + 1 :])
        source = self._sources.get(parts[0])  # type: ignore[union-attr]
        if source is None:
            return None
        return _fields(source.column(parts[1], text), parts[2:])

    def find_unqualified(self, parts: list[str], text: str, definite: bool) -> _Lineage | None:
        """``c`` (or ``c.field`` on a struct column ``c``) among this block's sources.

        With ``definite`` only a source known to have the column counts: ``x.f`` is read as a
        struct field only when a source surely has a column ``x``.
        """
        self.ensure_sources()
        source = self._unqualified(parts[0], text, definite)
        if source is None:
            return None
        return _fields(source.column(parts[0], text), parts[1:])

    def _unqualified(self, name: str, text: str, definite: bool) -> _Source | None:
        """The one source that has ``name``; an unknown-column source when it is the only candidate; the
        sides of a ``JOIN ... USING (name)`` together."""
        if name in self._using and (key := self._using_key(name)) is not None:
            return key
        order = self._order if self.visible is None else self._order[: self.visible]
        having = [source for source in order if source.has(name)]
        if len(having) == 1:
            return having[0]
        if having:
            self.analysis.ambiguous(text)
            return _AMBIGUOUS
        if definite:
            return None
        unknown = [source for source in order if source.has(name) is None]
        if len(unknown) == 1:
            return unknown[0]
        if unknown:
            self.analysis.ambiguous(text)
            return _AMBIGUOUS
        # no table may have it: a field of a BigQuery UNNEST's STRUCT element (UNNEST(lines) AS line)
        structs = [s for s in order if isinstance(s, _FunctionSource) and s.value_table]
        return structs[0] if len(structs) == 1 else None

    def alias(self, name: str) -> _Lineage | None:
        """The lineage of a select-list alias, for clauses that may name one."""
        return None

    def _using_key(self, name: str) -> _Source | None:
        """The key ``name`` of the block's ``JOIN ... USING`` joins (select blocks have them)."""
        return None

    def qualifier_source(self, parts: list[str]) -> _Source | None:
        """The source ``t`` / ``s.t`` names, as the qualifier of ``t.*`` or ``t.c``."""
        self.ensure_sources()
        return self._tables.get(".".join(parts)) if len(parts) > 1 else self._sources.get(parts[0])  # type: ignore[union-attr]

    def whole_row(self, name: str) -> _Lineage | None:
        """``TO_JSON(t)``, ``SELECT t FROM t``: a bare name that is no column but names a source of known
        columns stands for the source's whole row."""
        self.ensure_sources()
        source = self._sources.get(name)  # type: ignore[union-attr]
        if source is None or source.has(name) is not False:
            return None
        return _row_of(source)

    def computes(self, name: str) -> bool:
        """Whether ``name`` is a pseudo-column the block's query computes from no column: ``LEVEL`` of a
        CONNECT BY query, Hive's ``GROUPING__ID`` of a grouping one (select blocks may be either)."""
        return False

    def single_source(self) -> _Source | None:
        self.ensure_sources()
        return self._order[0] if len(self._order) == 1 else None


def _join_tree(node: exp.Expression) -> tuple[exp.Expression, list[exp.Join], str]:
    """A relation, the joins under it (innermost first) and the alias of the whole tree, if written.

    sqlglot nests a parenthesised join tree ``((a JOIN b ON ...) JOIN c ON ...) AS j`` as Subquery wrappers
    around its first relation, each level holding the joins written at that level; a wrapper is a Subquery
    around a table, or around another Subquery that has joins or no alias of its own (``((SELECT ...)) AS s``
    is a derived table)."""
    levels: list[list[exp.Join]] = []
    alias = ""
    while isinstance(node, exp.Subquery) and (
        isinstance(node.this, exp.Table)
        or (isinstance(node.this, exp.Subquery) and (not node.alias or node.this.args.get("joins")))
    ):
        levels.append(node.args.get("joins") or [])
        alias = alias or node.alias
        node = node.this
    levels.append(node.args.get("joins") or [])
    return node, [join for level in reversed(levels) for join in level], alias


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


class _SelectBlock(_Block):
    def __init__(
        self, analysis: _Analysis, select: exp.Select, env: dict[str, _Block], outer: _Block | None, track: bool
    ) -> None:
        super().__init__(analysis, analysis.with_env(select, env), outer, track)
        self.select = select
        self._joins: list[tuple[exp.Join, int]] = []
        self._aliases: dict[str, _Lineage] = {}

    def _collect_sources(self) -> None:
        from_ = self.select.args.get("from_")
        if from_ is not None:
            self._relation_tree(from_.this, True)
        for join in self.select.args.get("joins") or ():
            self._join(join)
        for lateral in self.select.args.get("laterals") or ():
            self.add_relation(lateral)

    def _relation_tree(self, node: exp.Expression, star: bool) -> None:
        """A relation and the joins nested under it (MySQL UPDATE t JOIN s, Hive multi-insert FROM,
        parenthesised joins ``((a JOIN b ON ...))``, which sqlglot nests under the first table)."""
        relation, joins, alias = _join_tree(node)
        count = len(self._order)
        self.add_relation(relation, star)
        for join in joins:
            self._join(join)
        if alias:  # `(x JOIN y) AS j`: j.c is the c of whichever of them has it
            self.add_qualifier(self.analysis.fold(exp.to_identifier(alias)), _JoinedSource(self._order[count:]))

    def _join(self, join: exp.Join) -> None:
        left_count = len(self._order)
        self._joins.append((join, left_count))
        self._relation_tree(join.this, not _is_semi(join))  # a semi join's right side adds no output columns
        self._using.update(self._join_keys(join, left_count))

    def _join_keys(self, join: exp.Join, left_count: int) -> list[str]:
        """The columns a join matches by name: its USING list, or for a NATURAL join those both sides have."""
        keys = [self.analysis.fold(identifier) for identifier in join.args.get("using") or ()]
        if (join.args.get("method") or "").upper() == "NATURAL" and left_count < len(self._order):
            left = {name for source in self._order[:left_count] for name in source.names()}
            keys += [name for name in self._order[left_count].names() if name in left and name != STAR]
        return keys

    def _star_sources(self, projection: exp.Expression) -> list[_Source]:
        self.ensure_sources()
        if isinstance(projection, exp.Star):
            return self._star_order
        parts = _column_parts(projection, self.analysis)[:-1]  # t.* -> [t]
        source = self.qualifier_source(parts) or self._struct_star(parts)
        if source is None:
            self.analysis.warn(f"cannot expand {'.'.join(parts)}.*: unknown table or alias")
            return []
        return [source]

    def _struct_star(self, parts: list[str]) -> _Source | None:
        """BigQuery's ``col.*`` on a STRUCT column: its fields, unknown here, all come from the column."""
        text = ".".join(parts)
        found = self.find_qualified(parts, text) if len(parts) > 1 else None
        found = found or self.find_unqualified(parts, text, definite=False)
        if found is None or not found.values or set(found.values) == {f"{UNRESOLVED}.{parts[-1]}"}:
            return None
        return _RowSource({STAR: found.raised(TRANSFORMATION)})

    def _excluded(self, star: exp.Star, source: _Source) -> set[str]:
        """``* EXCEPT (a, y.b)``: the columns of ``source`` left out; a qualified name leaves out its own
        table's column only."""
        excluded = set()
        for item in star.args.get("except_") or ():
            qualifier = _column_parts(item, self.analysis)[:-1] if isinstance(item, exp.Column) else []
            if not qualifier or self.qualifier_source(qualifier) is source:
                excluded.add(_last_name(item, self.analysis))
        if isinstance(pattern := star.args.get("ilike"), exp.Literal):  # Snowflake's * ILIKE '%id%'
            matches = _like(pattern.name)
            excluded |= {name for name in source.names() if name != STAR and not matches(name)}
        return excluded

    def _compute_names(self) -> list[str]:
        names: list[str] = []
        for projection in self.select.expressions:
            if _is_star(projection):
                star = _star_node(projection)
                expanded = [
                    name
                    for source in self._star_sources(projection)
                    for name in _without(source.names(), self._excluded(star, source))
                ]
                names.extend(_star_modifiers_names(star, expanded, self.analysis))
            else:
                names.extend(self._projection_names(projection, len(names)))
        return names

    def _compute_outputs(self) -> list[tuple[str, _Lineage]]:
        outputs: list[tuple[str, _Lineage]] = []
        self._partial = outputs
        for projection in self.select.expressions:
            if _is_star(projection):
                star = _star_node(projection)
                expanded = [
                    item
                    for source in self._star_sources(projection)
                    for item in _without(source.expand(), self._excluded(star, source))
                ]
                outputs.extend(self._star_modifiers(star, expanded))
                continue
            names = self._projection_names(projection, len(outputs))
            for name, lineage in zip(names, self._projection_lineages(projection, len(names)), strict=True):
                outputs.append((name, lineage))
                self._aliases.setdefault(name, lineage)
        return outputs

    def _projection_lineages(self, projection: exp.Expression, width: int) -> list[_Lineage]:
        """The lineage of each output of one projection; Hive's ``stack(n, a, b, c, d) AS (x, y)`` deals its
        values to its columns in turn (x from a and c, y from b and d), any other gives each one the whole."""
        call = projection.this if isinstance(projection, exp.Aliases) else None
        if not isinstance(call, exp.Stack) or width < 2:
            return [self._projection(projection)] * width
        lineages = [_Lineage() for _ in range(width)]
        for position, value in enumerate(call.expressions):
            self.analysis.visit(value, self, IDENTITY, lineages[position % width], ())  # values pass unchanged
        return lineages

    def _projection_names(self, projection: exp.Expression, position: int) -> list[str]:
        """The output names of one projection: one, or several for Hive's ``explode(m) AS (k, v)`` and
        ``TRANSFORM(a, b) USING 'script' AS (x STRING, y STRING)``."""
        if isinstance(projection, exp.Aliases):
            return [self.analysis.fold(alias) for alias in projection.expressions]
        schema = projection.args.get("schema") if isinstance(projection, exp.QueryTransform) else None
        if isinstance(schema, exp.Schema) and schema.expressions:
            return [self.analysis.fold(_column_identifier(column)) for column in schema.expressions]
        return [self.analysis.output_name(projection, position)]

    def _projection(self, projection: exp.Expression) -> _Lineage:
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        if type(inner) is exp.Column and isinstance(inner.this, exp.Identifier):
            # The common ``t.c [AS x]``: its lineage is the column's own, shared read-only.
            lineage = self.analysis.resolve(inner, self)
            if self.referenced is not None:
                self.referenced.update(lineage.bases)
            return lineage
        lineage = _Lineage()
        self.analysis.visit(projection, self, IDENTITY, lineage, ())
        return lineage

    def _star_modifiers(self, star: exp.Star, expanded: list[tuple[str, _Lineage]]) -> list[tuple[str, _Lineage]]:
        """``* REPLACE (expr AS a)``, ``* RENAME (a AS b)`` (``EXCEPT`` / ``EXCLUDE`` left columns out before)."""
        analysis = self.analysis
        replaced: dict[str, _Lineage] = {}
        for item in star.args.get("replace") or ():
            lineage = _Lineage()
            analysis.visit(item, self, IDENTITY, lineage, ())
            replaced[analysis.output_name(item, 0)] = lineage
        renamed = _renames(star, analysis)
        return [(renamed.get(name, name), replaced.get(name, lineage)) for name, lineage in expanded]

    def computes(self, name: str) -> bool:
        if name in _HIERARCHY_COLUMNS:
            return self.select.args.get("connect") is not None
        return name in _GROUPING_COLUMNS and self.select.args.get("group") is not None

    def alias(self, name: str) -> _Lineage | None:
        if not self._aliases and self._outputs is None and not self._busy:
            self.outputs()
        return self._aliases.get(name)

    def _clauses(self) -> None:
        analysis, select = self.analysis, self.select
        self.ensure_sources()  # the joins are collected with the sources
        for join, left_count in self._joins:
            for key in ("on", "match_condition"):  # Snowflake's ASOF JOIN ... MATCH_CONDITION (a >= b) ON ...
                if (condition := join.args.get(key)) is not None:
                    analysis.predicate(condition, self, JOIN, ALIAS_LAST)
            for key in self._join_keys(join, left_count):
                self._using_predicate(key, left_count)
        for key, alias_order in (("where", ALIAS_LAST), ("having", ALIAS_AFTER_KNOWN), ("qualify", ALIAS_AFTER_KNOWN)):
            if (clause := select.args.get(key)) is not None:
                analysis.predicate(clause.this, self, FILTER, alias_order)
        if (connect := select.args.get("connect")) is not None:  # START WITH picks the roots, CONNECT BY the rows
            for key, subtype in (("start", FILTER), ("connect", JOIN)):
                if (condition := connect.args.get(key)) is not None:
                    analysis.predicate(condition, self, subtype, ALIAS_LAST)
        if (group := select.args.get("group")) is not None:
            self._group(group)
        for key in ("order", "sort", "cluster"):
            if (order := select.args.get(key)) is not None:
                for item in order.expressions:
                    self._by_reference(item.this if isinstance(item, exp.Ordered) else item, SORT, ALIAS_FIRST)
        for window in select.args.get("windows") or ():
            analysis.window_spec(window, self, None, ())

    def _group(self, group: exp.Group) -> None:
        if group.args.get("all"):  # GROUP BY ALL: every projection without an aggregate
            for projection, (_, lineage) in zip(self.select.expressions, self.outputs(), strict=False):
                if not projection.find(exp.AggFunc):
                    self.analysis.emit(lineage.bases, GROUP_BY)
        for key in ("expressions", "grouping_sets", "cube", "rollup"):
            for item in group.args.get(key) or ():
                self._by_reference(item, GROUP_BY, ALIAS_AFTER_KNOWN)

    def _by_reference(self, node: exp.Expression, subtype: int, alias_order: int) -> None:
        """GROUP BY / ORDER BY items: an ordinal names a projection; ORDER BY prefers select aliases."""
        outputs = self.outputs()
        if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
            index = int(node.this) - 1
            if 0 <= index < len(outputs):
                self.analysis.emit(outputs[index][1].bases, subtype)
            return
        self.analysis.predicate(node, self, subtype, alias_order)

    def _using_predicate(self, name: str, left_count: int) -> None:
        """``JOIN b USING (k)`` reads k of the joined side and of the one earlier source that has it."""
        for source in self._using_sides(name, left_count):
            self.analysis.emit(source.column(name, name).bases, JOIN)

    def _using_sides(self, name: str, left_count: int) -> list[_Source]:
        """The two sources a ``USING (name)`` join joins on ``name``: the joined one, and the one before it
        that has the column (or, columns unknown, may have it)."""
        sides = []
        for side in (self._order[:left_count], self._order[left_count : left_count + 1]):
            source = next((s for s in side if s.has(name)), None) or next(
                (s for s in side if s.has(name) is None), None
            )
            if source is not None:
                sides.append(source)
        return sides

    def _using_key(self, name: str) -> _Source | None:
        """Unqualified, the key of ``JOIN ... USING (k)`` is COALESCE of both sides' k: it reads every side."""
        sides: list[_Source] = []
        for join, left_count in self._joins:
            if name in self._join_keys(join, left_count):
                joined = self._using_sides(name, left_count)
                sides += [side for side in joined[: 1 if _is_semi(join) else 2] if side not in sides]
        return sides[0] if len(sides) == 1 else _UsingKey(sides) if sides else None


class _SetOperationBlock(_Block):
    """UNION / INTERSECT: outputs merge the branches position by position (or BY NAME).  EXCEPT / MINUS
    outputs the first branch's rows; the later branches only decide which (FILTER), as a
    ``NOT IN (subquery)`` would.

    A chain ``a UNION b UNION c ...`` is one block over all its branches: generated SQL unions
    hundreds of SELECTs, more than a recursion per branch would survive.
    """

    def __init__(
        self,
        analysis: _Analysis,
        operation: exp.SetOperation,
        env: dict[str, _Block],
        outer: _Block | None,
        track: bool,
    ) -> None:
        super().__init__(analysis, analysis.with_env(operation, env), outer, track)
        self.operation = operation
        self.by_name = bool(operation.args.get("by_name"))
        self._naming = False
        self.filtering = isinstance(operation, exp.Except)
        operands = _set_branches(operation)
        self.branches = [analysis.query_block(operands[0], self.env, outer, track)]
        # a filtering branch's every read is a predicate: it tracks what it reads
        self.branches += [analysis.query_block(b, self.env, outer, track or self.filtering) for b in operands[1:]]
        self.merged = self.branches[:1] if self.filtering else self.branches

    def _compute_names(self) -> list[str]:
        first = self.branches[0].names()
        if self.by_name or self._naming:  # a recursive CTE's branch reading it (SELECT * FROM c): its first names
            return first
        self._naming = True
        try:
            return _aligned(first, max(len(branch.names()) for branch in self.merged))
        finally:
            self._naming = False

    def _compute_outputs(self) -> list[tuple[str, _Lineage]]:
        first = self.branches[0].outputs()
        merged = [(name, _Lineage(dict(lineage.values), set(lineage.conds))) for name, lineage in first]
        self._partial = merged  # what a recursive CTE's own branch sees of it
        if not self.by_name:
            merged = _aligned(merged, max([len(self.names()), *(len(branch.outputs()) for branch in self.merged[1:])]))
        for branch in self.merged[1:]:
            other = branch.outputs()
            if not self.by_name:
                other = _aligned(other, len(merged))
            if self.by_name:
                index = {name: lineage for name, lineage in other}
                pairs = [(lineage, index.get(name)) for name, lineage in merged]
            else:
                pairs = [(lineage, other[i][1] if i < len(other) else None) for i, (_, lineage) in enumerate(merged)]
            for lineage, found in pairs:
                if found is not None:
                    lineage.merge(found)
        return merged

    def find_qualified(self, parts: list[str], text: str) -> _Lineage | None:
        return None

    def find_unqualified(self, parts: list[str], text: str, definite: bool) -> _Lineage | None:
        # Only the set operation's own ORDER BY resolves here, against its output names.
        if len(parts) == 1 and parts[0] in self.name_set():
            return self.output(parts[0], text)
        return None

    def _clauses(self) -> None:
        for branch in self.branches:
            branch.process()
        for branch in self.branches[len(self.merged) :]:
            self.analysis.emit(branch.referenced_bases(), FILTER)
        if (order := self.operation.args.get("order")) is not None:
            outputs = self.outputs()
            for item in order.expressions:
                node = item.this if isinstance(item, exp.Ordered) else item
                if isinstance(node, exp.Literal) and node.this.isdigit():
                    if 0 < int(node.this) <= len(outputs):
                        self.analysis.emit(outputs[int(node.this) - 1][1].bases, SORT)
                else:
                    self.analysis.predicate(node, self, SORT)

    def referenced_bases(self) -> set[str]:
        self.process()
        found = set(self.referenced or ())
        for branch in self.branches:
            found |= branch.referenced_bases()
        return found


def _set_branches(operation: exp.SetOperation) -> list[exp.Expression]:
    """The operands of a set-operation chain, left to right, without recursion.

    A nested operation with its own WITH / ORDER BY / LIMIT or another BY NAME setting is kept
    as one operand (a block of its own).
    """
    by_name = operation.args.get("by_name")
    branches: list[exp.Expression] = []
    stack: list[exp.Expression] = [operation.expression, operation.this]
    while stack:
        node = stack.pop()
        inner = node.unnest() if isinstance(node, exp.Subquery) and not node.alias else node
        if (
            type(inner) is type(operation)  # (a UNION b) EXCEPT c: the union is one operand of the EXCEPT
            and inner.args.get("by_name") == by_name
            and not any(inner.args.get(key) for key in ("with_", "order", "limit", "offset"))
        ):
            stack.extend((inner.expression, inner.this))
        else:
            branches.append(node)
    return branches


class _ValuesBlock(_Block):
    """``VALUES (...), (...)``: each position merges what its rows read (usually nothing)."""

    def __init__(
        self, analysis: _Analysis, values: exp.Values, env: dict[str, _Block], outer: _Block | None, track: bool
    ) -> None:
        super().__init__(analysis, env, outer, track)
        self.rows = [row.expressions if isinstance(row, exp.Tuple) else [row] for row in values.expressions]

    def _compute_names(self) -> list[str]:
        width = max((len(row) for row in self.rows), default=0)
        return [f"_c{i}" for i in range(width)]

    def _compute_outputs(self) -> list[tuple[str, _Lineage]]:
        outputs = [(name, _Lineage()) for name in self._compute_names()]
        for row in self.rows:
            for (_, lineage), value in zip(outputs, row, strict=False):
                if not isinstance(value, exp.Literal):
                    self.analysis.visit(value, self, IDENTITY, lineage, ())
        return outputs


class _RelationBlock(_Block):
    """A single relation seen on its own: what a PIVOT's aggregations and FOR columns read."""

    def __init__(self, analysis: _Analysis, env: dict[str, _Block], alias: str, source: _Source) -> None:
        super().__init__(analysis, env, None, False)
        self._sources = {alias: source}
        self._order = [source]

    def _compute_names(self) -> list[str]:
        return []

    def _compute_outputs(self) -> list[tuple[str, _Lineage]]:
        return []


class _StatementBlock(_Block):
    """The body of a MERGE / UPDATE / DELETE: the target and the tables it reads, by alias."""

    def __init__(self, analysis: _Analysis, env: dict[str, _Block], write: Write) -> None:
        super().__init__(analysis, env, None, False)
        self._sources = {}
        self.write = write
        self.joins: list[exp.Join] = []
        self.target_source: _Source | None = None

    def _compute_names(self) -> list[str]:
        return []

    def _compute_outputs(self) -> list[tuple[str, _Lineage]]:
        return []

    def add_relation(self, node: exp.Expression, star: bool = True) -> None:
        if node is not self.write.target_node:
            super().add_relation(node, star)
            return
        # The written table, under its alias and its name.
        analysis = self.analysis
        source = self.target_source = _TableSource(analysis, self.write.target)
        alias = analysis.fold(_alias_identifier(node))
        self.add_source(alias or analysis.fold(node.this), source, True, self.write.target)
        self._sources.setdefault(analysis.fold(node.this), source)  # type: ignore[union-attr]

    def add_relations(self, node: exp.Expression | None) -> _Source | None:
        """A FROM / USING relation and the joins nested under it; returns the relation's source."""
        if node is None:
            return None
        relation, joins, _ = _join_tree(node)
        count = len(self._order)
        self.add_relation(relation)
        source = self._order[count] if len(self._order) > count else None
        for join in joins:
            self.joins.append(join)
            self.add_relations(join.this)
        return source


# --------------------------------------------------------------------------- the analysis


(
    _LEAF,
    _COLUMN,
    _PASS,
    _CASE,
    _IF,
    _NVL2,
    _DECODE,
    _WINDOW,
    _QUERY,
    _DOT,
    _ORDER,
    _AGG_FILTER,
    _WITHIN_GROUP,
    _FUNC,
    _OTHER,
) = range(15)

_LEAF_TYPES = (exp.Literal, exp.Identifier, exp.Var, exp.DataType, exp.Star, exp.Null, exp.Boolean, exp.Placeholder)
_PASS_TYPES = (exp.Alias, exp.Paren, exp.Distinct, exp.IgnoreNulls, exp.RespectNulls)
_SPECIAL_TYPES: dict[type, int] = {
    exp.Column: _COLUMN,
    exp.Parameter: _COLUMN,  # Snowflake's positional $1
    exp.Case: _CASE,
    exp.If: _IF,
    exp.Nvl2: _NVL2,
    exp.DecodeCase: _DECODE,
    exp.Window: _WINDOW,
    exp.Dot: _DOT,
    exp.Order: _ORDER,
    exp.Filter: _AGG_FILTER,
    exp.WithinGroup: _WITHIN_GROUP,
}


@cache
def _node_kind(node_type: type) -> int:
    special = _SPECIAL_TYPES.get(node_type)
    if special is not None:
        return special
    if issubclass(node_type, exp.Column):
        return _COLUMN
    if issubclass(node_type, _LEAF_TYPES):
        return _LEAF
    if issubclass(node_type, _PASS_TYPES):
        return _PASS
    if issubclass(node_type, exp.Query):
        return _QUERY
    if issubclass(node_type, exp.Func):
        return _FUNC
    return _OTHER


class _Analysis:
    """The column lineage of one written target: all blocks of its statement, edges and warnings."""

    def __init__(self, ctx: Context, catalog: SchemaCatalog, target: str) -> None:
        self.ctx, self.catalog, self.target = ctx, catalog, target
        self.levels = FunctionLevels.of(ctx.profile)
        self.fold = _folder(ctx.profile)
        self.blocks: dict[int, _Block] = {}
        self.pending: list[_Block] = []
        self.projection: dict[tuple[str, str], int] = {}
        self.predicates: set[tuple[str, int]] = set()
        self.warnings: list[str] = []
        self.alias_order = ALIAS_AFTER_KNOWN
        self._bases: dict[str, _Lineage] = {}
        self._known: dict[str, dict[str, str | None] | None] = {}

    # -- entry --------------------------------------------------------------------------

    def run(self, lineage: StatementLineage, write: Write) -> None:
        statement = lineage.expression
        env = _statement_env(self, statement, write.query)
        query = write.query
        if lineage.type == "multi_insert":
            branch = write.target_node.find_ancestor(exp.ConditionalInsert) if write.target_node else None
            condition = _branch_condition(statement, branch) if branch is not None else None
            query = _graft_multi_insert_source(query, statement.args.get("source"), condition)
        if query is not None:
            written = self.map_outputs(self.query_block(query, env, None), _target_columns(write, self))
            if isinstance(conflict := statement.args.get("conflict"), exp.OnConflict):
                self.upsert(conflict, write, env, written)
        elif isinstance(statement, exp.Merge):
            self.merge(statement, write, env)
        elif isinstance(statement, (exp.Update, exp.Delete)):
            self.update_or_delete(statement, write, env)
        while self.pending:
            self.pending.pop().process()

    def edges(self) -> Iterator[ColumnEdge]:
        for (source, target), level in self.projection.items():
            yield ColumnEdge(source, target, PROJECTION, _SUBTYPE_NAMES[level])
        for source, subtype in self.predicates:
            yield ColumnEdge(source, self.target, PREDICATE, _SUBTYPE_NAMES[subtype])

    # -- blocks -------------------------------------------------------------------------

    def query_block(
        self, query: exp.Expression, env: dict[str, _Block], outer: _Block | None, track: bool = False
    ) -> _Block:
        while isinstance(query, exp.Subquery):  # `WITH c AS (...) (SELECT ... FROM c) LIMIT 10`: WITH is outside
            env = self.with_env(query, env)
            query = query.this
        block = self.blocks.get(id(query))
        if block is None:
            block = self._new_block(query, env, outer, track)
            self.blocks[id(query)] = block
            self.pending.append(block)
        return block

    def _new_block(self, query: exp.Expression, env: dict[str, _Block], outer: _Block | None, track: bool) -> _Block:
        if isinstance(query, exp.Select):
            return _SelectBlock(self, query, env, outer, track)
        if isinstance(query, exp.SetOperation):
            return _SetOperationBlock(self, query, env, outer, track)
        if isinstance(query, exp.Values):
            return _ValuesBlock(self, query, env, outer, track)
        if isinstance(returned := _returned_rows(query), exp.Select):
            return _SelectBlock(self, returned, env, outer, track)
        self.warn(f"no column lineage through {type(query).__name__.upper()}")
        return _ValuesBlock(self, exp.Values(expressions=[]), env, outer, track)

    def with_env(self, query: exp.Expression, env: dict[str, _Block]) -> dict[str, _Block]:
        """The CTEs visible inside ``query``: the enclosing ones plus its own WITH, in order."""
        with_ = query.args.get("with_")
        if not isinstance(with_, exp.With):
            return env
        env = dict(env)
        recursive = bool(with_.args.get("recursive"))
        for cte in with_.expressions:
            name = self.fold(_alias_identifier(cte))
            inner = dict(env)
            block = self.query_block(cte.this, inner, None)
            if recursive:
                inner[name] = block  # the recursive branch reads the CTE itself
            block.columns = _alias_columns(cte, self) or block.columns
            env[name] = block
        return env

    # -- names --------------------------------------------------------------------------

    def function_columns(self, call: exp.Expression | None) -> list[str]:
        """The output columns the profile knows for a table function sqlglot gives none."""
        if not isinstance(call, exp.Func):
            return []
        name = (call.name if isinstance(call, exp.Anonymous) else call.sql_name()).lower()
        return list(dict(self.ctx.profile.table_function_columns).get(name, ()))

    def known_columns(self, table: str) -> dict[str, str | None] | None:
        if table not in self._known:
            self._known[table] = self.catalog.types(table)
        return self._known[table]

    def base(self, table: str, column: str) -> _Lineage:
        key = f"{table}.{column}"
        lineage = self._bases.get(key)
        if lineage is None:
            lineage = self._bases[key] = _Lineage({key: IDENTITY}, frozenset())
        return lineage

    def output_name(self, projection: exp.Expression, position: int) -> str:
        if isinstance(projection, exp.Alias):
            return self.fold(projection.args.get("alias"))
        named = projection
        while isinstance(named, exp.Cast | exp.Paren):  # CAST(c AS INT) keeps the name of c
            named = named.this
        parameter = named.this if isinstance(named, exp.Column) else named
        if isinstance(parameter, exp.Parameter) and parameter.name.isdigit():
            return f"${parameter.name}"  # Snowflake names a positional column as written
        if isinstance(named, exp.Column | exp.Dot):
            return self.fold(_last_identifier(named))
        # Any other expression is the engine's own invention; sqlglot's output_name would name
        # get_json_object(j, '$.a.id') and get_json_object(j, '$.b.id') both `id`, one column.
        return f"_c{position}"

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def unresolved(self, name: str, text: str) -> _Lineage:
        self.warn(f"cannot resolve column {text}")
        return _Lineage({f"{UNRESOLVED}.{name}": IDENTITY}, frozenset())

    def ambiguous(self, text: str) -> None:
        self.warn(f"cannot resolve column {text}: ambiguous")

    # -- emission -----------------------------------------------------------------------

    def emit(self, bases: Iterable[str], subtype: int) -> None:
        self.predicates.update((base, subtype) for base in bases)

    def predicate(
        self, node: exp.Expression, block: _Block, subtype: int, alias_order: int = ALIAS_AFTER_KNOWN
    ) -> None:
        """Every column read by ``node`` is a ``subtype`` predicate of the target; its bare names look for a
        select-list alias in ``alias_order``."""
        previous, self.alias_order = self.alias_order, alias_order
        try:
            self.visit(node, block, None, None, (subtype,))
        finally:
            self.alias_order = previous

    def map_outputs(self, block: _Block, columns: list[str] | None) -> dict[str, _Lineage]:
        """Project the query's outputs into the target columns; returns target column -> lineage."""
        outputs = block.outputs()
        names = [name for name, _ in outputs]
        if columns is not None and STAR not in names and len(columns) != len(names):
            self.warn(f"{self.target}: the query gives {len(names)} columns for {len(columns)} target columns")
            if len(columns) < len(names):
                columns = None
        if columns is None or STAR in names:
            columns = names
        written = {}
        for column, (_, lineage) in zip(columns, outputs, strict=False):
            self.project(lineage, column)
            written.setdefault(column, lineage)
        return written

    def project(self, lineage: _Lineage, column: str) -> None:
        target = f"{self.target}.{column}"
        projection = self.projection
        for source, level in lineage.values.items():
            key = (source, target)
            if projection.get(key, -1) < level:
                projection[key] = level

    # -- the expression walk ------------------------------------------------------------

    def visit(
        self,
        node: exp.Expression,
        block: _Block,
        level: int | None,
        acc: _Lineage | None,
        clauses: tuple[int, ...],
    ) -> None:
        """Walk ``node``: value paths (``level`` set) feed ``acc.values``; conditions feed ``acc.conds``;
        every column read inside a predicate construct is emitted with the ``clauses`` subtypes."""
        kind = _node_kind(type(node))
        if kind == _LEAF:
            return
        if kind == _COLUMN:
            self._column(node, block, level, acc, clauses)  # type: ignore[arg-type]
        elif kind in (_PASS, _OTHER, _FUNC):
            if kind == _FUNC and level is not None:
                level = max(level, self.levels.level(node))
            elif kind == _OTHER and level is not None and level < TRANSFORMATION:
                level = TRANSFORMATION
            children = _chain(node) if isinstance(node, exp.Binary) else _children(node)
            for child in children:
                self.visit(child, block, level, acc, clauses)
        elif kind in (_CASE, _IF) and _is_desugared(node):  # DIV0(a, b) parsed as IF(b = 0, 0, a / b)
            raised = _raise(level, TRANSFORMATION)
            for child in _children(node):
                self.visit(child, block, raised, acc, clauses)
        elif kind == _CASE:
            self._case(node, block, level, acc, clauses)  # type: ignore[arg-type]
        elif kind in (_IF, _NVL2):
            self.condition(node.this, block, acc, clauses)
            raised = _raise(level, TRANSFORMATION)
            for key in ("true", "false"):
                if (branch := node.args.get(key)) is not None:
                    self.visit(branch, block, raised, acc, clauses)
        elif kind == _DECODE:
            self._decode(node, block, level, acc, clauses)
        elif kind == _WINDOW:
            self.visit(node.this, block, level, acc, clauses)
            self.window_spec(node, block, acc, clauses)
        elif kind == _QUERY:
            self._subquery(node, block, level, acc, clauses)
        elif kind == _DOT and (row := self._row_variable(node)) is not None:
            self._absorb(row, block, level, acc, clauses)
        elif kind == _DOT:  # struct field access on an expression: a.b.c beyond what a Column holds
            raised = _raise(level, TRANSFORMATION)
            self.visit(node.this, block, raised, acc, clauses)
            if not isinstance(node.expression, exp.Identifier):  # schema.function(args)
                self.visit(node.expression, block, raised, acc, clauses)
        elif kind == _ORDER:  # ARRAY_AGG(x ORDER BY y): y orders the value, it is not one
            if node.this is not None:
                self.visit(node.this, block, level, acc, clauses)
            for item in node.expressions:
                self.visit(item, block, None, acc, clauses + (SORT,) if level is not None else clauses)
        elif kind == _WITHIN_GROUP and level is not None and node.this.find(exp.Column) is None:
            # PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY x): an ordered-set aggregate picks its value from x
            order = node.expression
            for item in order.expressions if isinstance(order, exp.Order) else ():
                self.visit(item, block, max(level, self.levels.level(node.this)), acc, clauses)
        elif kind == _WITHIN_GROUP:  # LISTAGG(x) WITHIN GROUP (ORDER BY y): the generic walk makes y SORT
            self.visit(node.this, block, _raise(level, TRANSFORMATION), acc, clauses)
            self.visit(node.expression, block, _raise(level, TRANSFORMATION), acc, clauses)
        elif kind == _AGG_FILTER:  # SUM(x) FILTER (WHERE c): c decides like a CASE condition
            self.visit(node.this, block, level, acc, clauses)
            self.condition(node.expression, block, acc, clauses)

    def condition(
        self, node: exp.Expression | None, block: _Block, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """A CASE / IF / NVL2 / DECODE condition: CONDITIONAL, and part of the column's definition."""
        if node is not None:
            self.visit(node, block, None, acc, clauses + (CONDITIONAL,) if CONDITIONAL not in clauses else clauses)

    def window_spec(self, window: exp.Window, block: _Block, acc: _Lineage | None, clauses: tuple[int, ...]) -> None:
        spec_clauses = clauses if WINDOW in clauses else clauses + (WINDOW,)
        for item in window.args.get("partition_by") or ():
            self.visit(item, block, None, acc, spec_clauses)
        if (order := window.args.get("order")) is not None:
            self.visit(order, block, None, acc, spec_clauses)
        named = window.args.get("alias")
        if isinstance(named, exp.Identifier) and isinstance(block, _SelectBlock):  # OVER w ... WINDOW w AS (...)
            for definition in block.select.args.get("windows") or ():
                if definition is not window and self.fold(definition.args.get("this")) == self.fold(named):
                    self.window_spec(definition, block, acc, clauses)

    def _case(
        self, node: exp.Case, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        self.condition(node.this, block, acc, clauses)  # the simple-CASE operand is compared, not returned
        raised = _raise(level, TRANSFORMATION)
        for branch in node.args.get("ifs") or ():
            self.condition(branch.this, block, acc, clauses)
            if (value := branch.args.get("true")) is not None:
                self.visit(value, block, raised, acc, clauses)
        if (default := node.args.get("default")) is not None:
            self.visit(default, block, raised, acc, clauses)

    def _decode(
        self, node: exp.Expression, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """DECODE(operand, search, result, ..., default): operand and searches decide, results are values."""
        items = node.expressions
        raised = _raise(level, TRANSFORMATION)
        for index, item in enumerate(items):
            is_default = index == len(items) - 1 and index % 2 == 1
            if index == 0 or (index % 2 == 1 and not is_default):
                self.condition(item, block, acc, clauses)
            else:
                self.visit(item, block, raised, acc, clauses)

    def _subquery(
        self, node: exp.Expression, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """A scalar / IN / EXISTS subquery: its first output is a value, everything it reads is a condition."""
        sub = self.query_block(node, block.env, block, track=True)
        read = sub.referenced_bases()
        outputs = sub.outputs()
        if acc is not None:
            if level is not None and _builds_struct(node):  # BigQuery (SELECT AS STRUCT a, b): one value of all
                for _, output in outputs:
                    acc.merge(output, max(level, TRANSFORMATION))
            elif level is not None and outputs:
                acc.merge(outputs[0][1], level)
            acc.conds.update(read)  # type: ignore[union-attr]
        for subtype in clauses:
            self.emit(read, subtype)
        if block.referenced is not None:
            block.referenced.update(read)

    def _column(
        self, node: exp.Column, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        if isinstance(node.this, exp.Star):  # COUNT(t.*) reads rows, not a column
            return
        self._absorb(self.resolve(node, block), block, level, acc, clauses)

    def _absorb(
        self, lineage: _Lineage, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """A column read where ``visit`` is: into the value or the conditions, and the predicate clauses."""
        if acc is not None:
            if level is None:
                acc.conds.update(lineage.bases)  # type: ignore[union-attr]
            else:
                acc.merge(lineage, level)
        if clauses:
            bases = lineage.bases
            for subtype in clauses:
                self.emit(bases, subtype)
        if block.referenced is not None:
            block.referenced.update(lineage.bases)

    def resolve(self, column: exp.Column | exp.Parameter, block: _Block) -> _Lineage:
        """The lineage of a column reference.

        A qualified name looks for its qualifier in this block, then in the enclosing ones
        (correlation), before it is read as a struct field access.  A bare name looks in this
        block's sources, then its select aliases, then the enclosing blocks.
        """
        if isinstance(column, exp.Parameter) or isinstance(column.this, exp.Parameter):
            return self._positional(column, block)
        parts = _column_parts(column, self)
        text = ".".join(parts)
        current: _Block | None = block
        if len(parts) > 1:
            while current is not None:
                if (found := current.find_qualified(parts, text)) is not None:
                    return found
                current = current.outer
            current = block
            while current is not None:
                if (found := current.find_unqualified(parts, text, definite=True)) is not None:
                    return found
                current = current.outer
            if parts[-1] in _SEQUENCE_VALUES:
                return _Lineage()  # my_seq.NEXTVAL: a number the sequence gives, from no column
            if len(parts) == 2 and (table := self.ctx.row_variables.get(parts[0])) is not None:
                return self.base(table, parts[1])  # NEW.c in a trigger on t: the column c of t's row
            if parts[0] in self.ctx.variables or parts[0] in (self.ctx.routine_parameters or ()):
                return _Lineage()  # rec.id of a loop's record (FOR rec IN ...), a variable's field: a value
            if (only := block.single_source()) is not None and (found := _single_source_read(only, parts, text)):
                return found
            return self.unresolved(parts[-1], text)
        name = parts[0]
        if self.alias_order == ALIAS_FIRST and (aliased := block.alias(name)) is not None:
            return aliased
        # A source that surely has the column, a computed pseudo-column or a script variable, a select
        # alias (QUALIFY rn = 1) unless the clause runs before the select list, a source whose columns are
        # unknown (here, then in the enclosing blocks), the alias after all, a source's whole row.
        if (found := block.find_unqualified(parts, text, definite=True)) is not None:
            return found
        if block.computes(name):
            return _Lineage()  # LEVEL of a CONNECT BY query: the depth the query computes, from no column
        if name in self.ctx.variables or name in (self.ctx.routine_parameters or ()):
            return _Lineage()  # a variable (DECLARE run_date DATE) or a routine's parameter: a value, not a column
        if self.alias_order != ALIAS_LAST and (aliased := block.alias(name)) is not None:
            return aliased
        current = block
        while current is not None:
            if (found := current.find_unqualified(parts, text, definite=False)) is not None:
                return found
            current = current.outer
        if (aliased := block.alias(name)) is not None:
            return aliased
        if (row := block.whole_row(name)) is not None:
            return row
        # The schema says the only table here lacks the column; valid SQL says it has it.
        only = block.single_source()
        return only.column(name, text) if only is not None else self.unresolved(name, text)

    def _row_variable(self, node: exp.Expression) -> _Lineage | None:
        """Oracle's ``:NEW.c`` in a trigger on t (a bind-like row variable): the column c of t."""
        row = node.this
        if not isinstance(row, exp.Placeholder) or not isinstance(node.expression, exp.Identifier):
            return None
        table = self.ctx.row_variables.get(row.name.lower())
        return self.base(table, self.fold(node.expression)) if table is not None else None

    def _positional(self, column: exp.Column | exp.Parameter, block: _Block) -> _Lineage:
        """Snowflake's ``$2`` / ``t.$2``: the source's second column, or, its columns unknown, ``t.$2``.
        Any other parameter (T-SQL's ``@var``) is a value, not a column."""
        parameter = column.this if isinstance(column, exp.Column) else column
        number = parameter.this if isinstance(parameter.this, exp.Literal) else None
        if number is None or not number.name.isdigit():
            return _Lineage()
        qualifier = _column_parts(column, self)[:-1] if isinstance(column, exp.Column) else []
        source = block.qualifier_source(qualifier) if qualifier else block.single_source()
        text = ".".join([*qualifier, f"${number.name}"])
        if source is None:
            return self.unresolved(f"${number.name}", text)
        names, position = source.names(), int(number.name) - 1
        known = names[: names.index(STAR)] if STAR in names else names
        return source.column(known[position] if position < len(known) else f"${number.name}", text)

    # -- MERGE / UPDATE / DELETE --------------------------------------------------------

    def merge(self, statement: exp.Merge, write: Write, env: dict[str, _Block]) -> None:
        block = _StatementBlock(self, env, write)
        block.add_relations(write.target_node)
        using_source = block.add_relations(statement.args.get("using"))
        if (on := statement.args.get("on")) is not None:
            self.predicate(on, block, JOIN)
        self._joins(block)
        whens = statement.args.get("whens")
        for when in whens.expressions if whens is not None else ():
            scope = block if when.args.get("matched") else self._unmatched_scope(statement, write, env, when)
            if (condition := when.args.get("condition")) is not None:
                self.predicate(condition, scope, FILTER)
            action = when.args.get("then")
            if isinstance(action, (exp.Update, exp.Insert)) and (where := action.args.get("where")) is not None:
                self.predicate(where.this, scope, FILTER)  # Oracle: UPDATE SET ... WHERE cond
            if isinstance(action, exp.Update):
                self._assignments(action.expressions, scope, using_source)
            elif isinstance(action, exp.Insert):
                self._merge_insert(action, scope, using_source)

    def _unmatched_scope(
        self, statement: exp.Merge, write: Write, env: dict[str, _Block], when: exp.When
    ) -> _StatementBlock:
        """What a ``WHEN NOT MATCHED`` clause can read: the source row alone (no target row matched it), or,
        ``BY SOURCE``, the target row alone; so a bare ``VALUES (id, name)`` is the source's, not ambiguous."""
        scope = _StatementBlock(self, env, write)
        scope.add_relations(write.target_node if when.args.get("source") else statement.args.get("using"))
        return scope

    def upsert(self, conflict: exp.OnConflict, write: Write, env: dict[str, _Block], row: dict[str, _Lineage]) -> None:
        """``ON CONFLICT ... DO UPDATE SET c = expr`` / ``ON DUPLICATE KEY UPDATE c = expr``.

        ``EXCLUDED.c`` (and MySQL's ``VALUES(c)``) is the row the INSERT proposed for column c.
        """
        block = _StatementBlock(self, env, write)
        block.add_relations(write.target_node)
        # Only `EXCLUDED.c` names the proposed row: a bare `c` is the existing row's (MySQL's `b = b + VALUES(b)`).
        block.add_qualifier("excluded", _RowSource(row))
        query = write.query.unnest() if isinstance(write.query, exp.Subquery) else write.query
        if isinstance(query, exp.Select) and (from_ := query.args.get("from_")) is not None:
            # MySQL 8: INSERT ... SELECT * FROM (...) AS new ON DUPLICATE KEY UPDATE amt = new.total
            derived = _join_tree(from_.this)[0]
            if (alias := self.fold(_alias_identifier(derived))) and isinstance(derived, exp.Subquery):
                block.add_qualifier(alias, _DerivedSource(self.query_block(derived.this, env, None)))
        if (where := conflict.args.get("where")) is not None:
            self.predicate(where.this, block, FILTER)
        for assignment in conflict.expressions:
            if isinstance(assignment, exp.EQ) and isinstance(assignment.this, exp.Column):
                lineage = _Lineage()
                self.visit(assignment.expression, block, IDENTITY, lineage, ())
                for call in assignment.expression.find_all(exp.Anonymous):
                    if call.name.upper() == "VALUES" and call.expressions:
                        level = IDENTITY if call is assignment.expression else TRANSFORMATION
                        proposed = row.get(self.fold(_last_identifier(call.expressions[0])))
                        if proposed is not None:
                            lineage.merge(proposed, level)
                self.project(lineage, self.fold(assignment.this.this))

    def _joins(self, block: _StatementBlock) -> None:
        for join in block.joins:
            if (on := join.args.get("on")) is not None:
                self.predicate(on, block, JOIN)

    def _assignments(self, assignments: list[exp.Expression], block: _Block, star_source: _Source | None) -> None:
        """``SET c = expr``: expr flows into the target's column c (``SET *`` copies by name)."""
        for assignment in assignments:
            if isinstance(assignment, exp.Star) and star_source is not None:
                for name, lineage in star_source.expand():
                    self.project(lineage, name)
            elif isinstance(assignment, exp.EQ) and isinstance(assignment.this, exp.Column):
                if not self._sets_target(assignment.this, block):
                    continue  # MySQL's UPDATE a JOIN b SET b.z = ...: another target's write sets it
                lineage = _Lineage()
                self.visit(assignment.expression, block, IDENTITY, lineage, ())
                self.project(lineage, self.fold(assignment.this.this))
            elif isinstance(assignment, exp.EQ) and isinstance(assignment.this, exp.Tuple):
                self._tuple_assignment(assignment.this, assignment.expression, block)

    def _sets_target(self, column: exp.Column, block: _Block) -> bool:
        """Whether ``SET q.c = ...`` sets the write's own target: unqualified, or qualified by it."""
        if not column.table or not isinstance(block, _StatementBlock) or block.target_source is None:
            return True
        named = block.qualifier_source(_column_parts(column, self)[:-1])
        return named is None or named is block.target_source

    def _tuple_assignment(self, columns: exp.Tuple, value: exp.Expression, block: _Block) -> None:
        """``SET (a, b) = (x, y)`` or ``= (SELECT x, y ...)``: position by position."""
        names = [self.fold(_last_identifier(column)) for column in columns.expressions]
        if isinstance(value, (exp.Subquery, exp.Query)):
            sub = self.query_block(value, block.env, block, track=True)
            sub.process()
            for name, (_, lineage) in zip(names, sub.outputs(), strict=False):
                self.project(lineage, name)
            return
        values = value.expressions if isinstance(value, exp.Tuple) else [value]
        for name, item in zip(names, values, strict=False):
            lineage = _Lineage()
            self.visit(item, block, IDENTITY, lineage, ())
            self.project(lineage, name)

    def _merge_insert(self, action: exp.Insert, block: _Block, star_source: _Source | None) -> None:
        if isinstance(action.this, exp.Star):  # INSERT *: every source column into its namesake
            for name, lineage in star_source.expand() if star_source is not None else ():
                self.project(lineage, name)
            return
        values = action.expression.expressions if isinstance(action.expression, exp.Tuple) else []
        if isinstance(action.this, exp.Tuple):
            columns = [self.fold(_last_identifier(c)) for c in action.this.expressions]
        else:
            known = self.known_columns(self.target)
            columns = list(known) if known is not None else [self.output_name(v, i) for i, v in enumerate(values)]
        for column, value in zip(columns, values, strict=False):
            lineage = _Lineage()
            self.visit(value, block, IDENTITY, lineage, ())
            self.project(lineage, column)

    def update_or_delete(self, statement: exp.Expression, write: Write, env: dict[str, _Block]) -> None:
        block = _StatementBlock(self, env, write)
        from_ = statement.args.get("from_")
        using = statement.args.get("using")
        # The FROM comes first: T-SQL's UPDATE x ... FROM t AS x names the target by a FROM alias.
        # T-SQL's `DELETE t WHERE ...` (no FROM) names its table in `tables` only.
        named = [statement.this] if isinstance(statement.this, exp.Expression) else statement.args.get("tables") or []
        relations = [
            from_.this if isinstance(from_, exp.From) else None,
            *(using if isinstance(using, list) else [using]),
        ]
        relations += named
        for relation in relations:
            if isinstance(relation, exp.Expression):
                block.add_relations(relation)
        self._joins(block)
        if (where := statement.args.get("where")) is not None:
            self.predicate(where.this, block, FILTER)
        if isinstance(statement, exp.Update):
            self._assignments(statement.expressions, block, None)


# --------------------------------------------------------------------------- helpers


def _folder(profile: DialectProfile):  # type: ignore[no-untyped-def]
    """A fast identifier folder for ``profile`` (the common all-lower case skips the rule lookup)."""
    if profile.case_folding == "lower" and profile.quoted_case_folding == "lower":

        def fold_lower(identifier: exp.Expression | None) -> str:
            return identifier.name.lower() if identifier is not None else ""

        return fold_lower

    def fold(identifier: exp.Expression | None) -> str:
        if isinstance(identifier, exp.Identifier):
            return profile.fold(identifier.this, identifier.quoted)
        return profile.fold(identifier.name) if identifier is not None else ""

    return fold


def _children(node: exp.Expression) -> Iterator[exp.Expression]:
    for value in node.args.values():
        if isinstance(value, exp.Expr):
            yield value  # type: ignore[misc]
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, exp.Expr):
                    yield item  # type: ignore[misc]


def _is_desugared(node: exp.Expression) -> bool:
    """Whether a CASE / IF was built by the parser from a plain function (Snowflake DIV0, ZEROIFNULL).

    Such builders copy the arguments into the condition and into a branch, so a column of the
    condition and a column of a branch come from the same token (same start offset).  A written
    condition never shares a token with a branch.
    """
    if isinstance(node, exp.If):
        conditions, branches = [node.this], [node.args.get("true"), node.args.get("false")]
    else:
        ifs = node.args.get("ifs") or []
        conditions = [node.this, *(i.this for i in ifs)]
        branches = [node.args.get("default"), *(i.args.get("true") for i in ifs)]
    tokens = {start for part in conditions if part is not None for start in _token_starts(part)}
    shared = (start in tokens for part in branches if part is not None for start in _token_starts(part))
    return bool(tokens) and any(shared)


def _token_starts(node: exp.Expression) -> Iterator[int]:
    for column in node.find_all(exp.Column):
        start = column.this.meta.get("start") if isinstance(column.this, exp.Identifier) else None
        if start is not None:
            yield start


def _chain(node: exp.Binary) -> list[exp.Expression]:
    """The operands of ``a AND b AND c ...`` (any one operator repeated), without recursion.

    Parsers nest such chains one level per operator; a generated WHERE with thousands of
    conditions would otherwise exhaust the stack.
    """
    operator = type(node)
    operands: list[exp.Expression] = []
    stack: list[exp.Expression] = [node]
    while stack:
        current = stack.pop()
        if type(current) is operator:
            stack.extend(child for child in (current.expression, current.this) if child is not None)
        else:
            operands.append(current)
    return operands


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


def _column_identifier(column: exp.Expression) -> exp.Expression:
    """The name of a column of a column list: ``x`` or ``x STRING`` (a ColumnDef)."""
    return column.this if isinstance(column, exp.ColumnDef) else column


def _tuple_items(node: exp.Expression) -> list[exp.Expression]:
    return node.expressions if isinstance(node, exp.Tuple) else [node]


def _like(pattern: str) -> Callable[[str], bool]:
    """A case-insensitive LIKE test: ``%`` any run of characters, ``_`` any one."""
    expression = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    compiled = re.compile(expression, re.IGNORECASE | re.DOTALL)
    return lambda text: compiled.fullmatch(text) is not None


def _is_semi(join: exp.Join) -> bool:
    """A SEMI / ANTI join: it keeps or drops the left side's rows, and outputs none of the right side."""
    return (join.args.get("kind") or "").upper() in ("SEMI", "ANTI")


def _builds_struct(query: exp.Expression) -> bool:
    inner = query.unnest() if isinstance(query, exp.Subquery) else query
    return isinstance(inner, exp.Select) and str(inner.args.get("kind") or "").upper() == "STRUCT"


def _raise(level: int | None, to: int) -> int | None:
    return None if level is None else max(level, to)


def _column_parts(column: exp.Expression, analysis: _Analysis) -> list[str]:
    """``[catalog, db, table, column]`` of a Column, folded, the absent ones left out."""
    args = column.args
    fold = analysis.fold
    table = args.get("table")
    if table is None:
        return [fold(args["this"])]
    if args.get("db") is None:  # the usual alias.column, spelled out: this runs for every column
        return [fold(table), fold(args["this"])]
    return [fold(args[key]) for key in ("catalog", "db", "table", "this") if args.get(key) is not None]


def _fields(lineage: _Lineage, fields: list[str]) -> _Lineage:
    """``a.s.f``: reading a field of a struct column is a transformation of the column."""
    return lineage.raised(TRANSFORMATION) if fields else lineage


def _star_column(star: str, name: str) -> str:
    """``schema.t.*`` seen through a derived table that was asked for column ``name``."""
    return f"{star[:-1]}{name}" if star.endswith(".*") else star


def _is_star(projection: exp.Expression) -> bool:
    return isinstance(projection, exp.Star) or (
        isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
    )


def _star_node(projection: exp.Expression) -> exp.Star:
    return projection if isinstance(projection, exp.Star) else projection.this


def _star_modifiers_names(star: exp.Star, names: list[str], analysis: _Analysis) -> list[str]:
    renamed = _renames(star, analysis)
    return [renamed.get(name, name) for name in names]


def _without(items: list[_Item], excluded: set[str]) -> list[_Item]:
    """``items`` (names, or (name, lineage) pairs) but those named in ``excluded``."""
    if not excluded:
        return items
    return [item for item in items if (item if isinstance(item, str) else item[0]) not in excluded]


def _renames(star: exp.Star, analysis: _Analysis) -> dict[str, str]:
    return {
        analysis.fold(_last_identifier(item.this)): analysis.fold(item.args.get("alias"))
        for item in star.args.get("rename") or ()
        if isinstance(item, exp.Alias)
    }


def _last_identifier(node: exp.Expression) -> exp.Expression | None:
    if isinstance(node, exp.Column):
        return node.this
    if isinstance(node, exp.Dot):
        return node.expression
    return node if isinstance(node, exp.Identifier) else exp.to_identifier(node.name)


def _last_name(node: exp.Expression, analysis: _Analysis) -> str:
    return analysis.fold(_last_identifier(node))


def _alias_identifier(node: exp.Expression) -> exp.Identifier | None:
    alias = node.args.get("alias")
    if isinstance(alias, exp.TableAlias):
        alias = alias.this
    return alias if isinstance(alias, exp.Identifier) else None


_Item = TypeVar("_Item")


def _star_filled(items: list[_Item], names: list[str], width: int) -> list[_Item]:
    """``(SELECT * FROM t) AS s(a, b)``: a column list names the columns a star of unknown columns stands
    for, so the star's item is repeated once for each name of the list it takes."""
    if names.count(STAR) != 1:
        return items
    at, copies = names.index(STAR), width - len(names) + 1
    if at >= width or copies < 2:
        return items
    return items[:at] + [items[at]] * copies + items[at + 1 :]


def _aligned(items: list[_Item], width: int) -> list[_Item]:
    """A set operation's branch, its star of unknown columns standing for as many columns as the widest
    branch has: the columns after it line up from the end (``SELECT * FROM t UNION SELECT x, y FROM s``)."""
    names = [item if isinstance(item, str) else item[0] for item in items]  # type: ignore[index]
    return _star_filled(items, names, width)


def _renamed(source: _Source, columns: list[str]) -> _Source:
    return _RenamedSource(source, columns) if columns else source


def _alias_columns(node: exp.Expression, analysis: _Analysis) -> list[str]:
    alias = node.args.get("alias")
    if not isinstance(alias, exp.TableAlias):
        return []
    return [analysis.fold(c if isinstance(c, exp.Identifier) else c.this) for c in alias.args.get("columns") or ()]


def _statement_env(
    analysis: _Analysis, statement: exp.Expression | None, query: exp.Expression | None
) -> dict[str, _Block]:
    """CTEs written before the statement keyword (``WITH c AS (...) INSERT ...``) are visible to all of it."""
    if statement is None or statement is query or not isinstance(statement, (exp.DML, exp.DDL)):
        return {}
    return analysis.with_env(statement, {})


def _returned_rows(statement: exp.Expression) -> exp.Select | None:
    """Postgres' ``WITH gone AS (DELETE FROM q WHERE done RETURNING id) INSERT ... SELECT id FROM gone``: the rows
    a data-modifying CTE returns, read as ``SELECT id FROM q WHERE done`` (the rows it changed, their columns)."""
    returning = statement.args.get("returning")
    table = statement.this
    if (
        not isinstance(statement, exp.DML)
        or not isinstance(returning, exp.Returning)
        or not isinstance(table, exp.Table)
    ):
        return None
    rows = exp.Select(expressions=[e.copy() for e in returning.expressions]).from_(table.copy())
    where = statement.args.get("where")
    return rows.where(where.this.copy()) if isinstance(where, exp.Where) else rows


def _branch_condition(statement: exp.Expression, branch: exp.ConditionalInsert) -> exp.Expression | None:
    """The rows one branch of ``INSERT ALL | FIRST WHEN ... ELSE ...`` takes: its WHEN condition; under ELSE,
    none of the WHENs; under FIRST, its WHEN and none of the WHENs before it."""
    branches = [b for b in statement.expressions if isinstance(b, exp.ConditionalInsert)]
    position = next(i for i, b in enumerate(branches) if b is branch)
    first = str(statement.args.get("kind") or "").upper() == "FIRST"
    before = branches if branch.args.get("else_") else branches[:position] if first else []
    excluded = [b.expression.copy() for b in before if b.expression is not None and not b.args.get("else_")]
    own = [branch.expression.copy()] if branch.expression is not None and not branch.args.get("else_") else []
    conditions = own + ([exp.not_(exp.or_(*excluded))] if excluded else [])
    return exp.and_(*conditions) if conditions else None


def _graft_multi_insert_source(
    branch: exp.Expression | None, source: exp.Expression | None, condition: exp.Expression | None
) -> exp.Expression | None:
    """One branch of a multi-table insert as a query of its own.

    Hive ``FROM src INSERT ... SELECT ...``: the branch SELECT reads the shared FROM.  Oracle
    ``INSERT ALL [WHEN c THEN] INTO t VALUES (...) SELECT ...``: the VALUES (or, without them,
    the columns) of the shared SELECT, filtered by the branch's WHEN condition.
    """
    if source is None:
        return branch
    if isinstance(source, exp.Query):
        rows = branch.expressions if isinstance(branch, exp.Values) else []
        values = rows[0].expressions if rows and isinstance(rows[0], exp.Tuple) else rows[:1]
        if not values and condition is None:
            return source
        query = exp.Select(expressions=[v.copy() for v in values] or [exp.Star()])
        query = query.from_(exp.Subquery(this=source.copy()))
        return query.where(condition.copy()) if condition is not None else query
    if not isinstance(branch, exp.Select) or branch.args.get("from_") is not None:
        return branch
    grafted = branch.copy()
    grafted.set("from_", exp.From(this=source.copy()))
    return grafted


def _listed_columns(write: Write, ctx: Context) -> list[str]:
    """``INSERT INTO t (a, b)`` / ``CREATE VIEW v (a, b)`` / ``CREATE TABLE t (a INT) AS``."""
    schema = write.target_node.parent if write.target_node is not None else None
    if not isinstance(schema, exp.Schema):
        return []
    return [
        ctx.fold(item.this if isinstance(item, exp.ColumnDef) else item)
        for item in schema.expressions
        if isinstance(item, (exp.Identifier, exp.ColumnDef))
    ]


def _target_columns(write: Write, analysis: _Analysis) -> list[str] | None:
    """Positional target columns: the listed ones, else the catalog's (static partitions out, dynamic last)."""
    listed = _listed_columns(write, analysis.ctx)
    if listed:
        return listed
    statement = write.target_node.parent if write.target_node is not None else None
    if not isinstance(statement, exp.Insert) or statement.args.get("by_name"):
        return None  # CTAS / views / SELECT INTO take the query's own names
    known = analysis.known_columns(write.target)
    if known is None:
        return None
    static, dynamic = _partition_spec(write.target_node, analysis)
    moved = set(static) | set(dynamic)
    return [c for c in known if c not in moved] + [c for c in dynamic if c not in static]


def _partition_spec(table: exp.Table | None, analysis: _Analysis) -> tuple[list[str], list[str]]:
    """``PARTITION (dt='x', hr)``: static columns (given a value, no edge) and dynamic ones (fed last)."""
    partition = table.args.get("partition") if table is not None else None
    static: list[str] = []
    dynamic: list[str] = []
    for item in partition.expressions if isinstance(partition, exp.Partition) else ():
        if isinstance(item, exp.EQ):
            static.append(analysis.fold(_last_identifier(item.this)))
        elif isinstance(item, (exp.Column, exp.Identifier)):
            dynamic.append(analysis.fold(_last_identifier(item)))
    return static, dynamic
