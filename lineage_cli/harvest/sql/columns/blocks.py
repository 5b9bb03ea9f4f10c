"""Query blocks: one per query scope, its sources by folded alias and the memoised lineage of its outputs.

``_Block`` is the part every scope shares: collecting sources from FROM items (tables, CTEs,
derived tables, table functions, PIVOTs), resolving a qualified or bare column name among
them, and computing its outputs once (a recursive CTE reading itself sees what is known so
far).  The scopes with more to them have modules of their own: ``select.py`` (SELECT, with
its joins and clauses), ``set_operations.py`` (UNION / INTERSECT / EXCEPT chains) and
``dml.py`` (the body of a MERGE / UPDATE / DELETE).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lineage_cli.harvest.sql.columns.expressions import Written
from lineage_cli.harvest.sql.columns.lineage import IDENTITY, STAR, _fields, _Lineage
from lineage_cli.harvest.sql.columns.nodes import _alias_columns, _alias_identifier
from lineage_cli.harvest.sql.columns.pivot import _PivotSource
from lineage_cli.harvest.sql.columns.sources import (
    _AMBIGUOUS,
    _DerivedSource,
    _FunctionSource,
    _renamed,
    _row_of,
    _RowSource,
    _Source,
    _TableSource,
)
from lineage_cli.harvest.sql.columns.stars import _star_column, _star_filled
from lineage_cli.harvest.sql.statements import file_location

if TYPE_CHECKING:
    from lineage_cli.harvest.sql.columns.analysis import _Analysis


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
            columns = {_star_column(table, name): level for table, level in star.values.items()}
            return _Lineage(columns, star.conds, star.shaped)
        return self.analysis.unresolved(name, text)

    def _renamed(self, names: list[str]) -> list[str]:
        if not self.columns:
            return names
        names = _star_filled(names, names, len(self.columns))
        return self.columns[: len(names)] + names[len(self.columns) :]

    def written_expressions(self) -> list[Written]:
        """What each output is written as, aligned with ``outputs``: None where no one expression says it (and
        for every output when a star of unknown columns stood for several)."""
        outputs = self.outputs()
        written = self._written()
        return written if len(written) == len(outputs) else [None] * len(outputs)

    def _written(self) -> list[Written]:
        return []

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
            scope = _RelationBlock(self.analysis, self.env, alias, source)
            source = _renamed(_PivotSource(scope, pivot, source), _alias_columns(pivot, self.analysis))
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
        if (
            isinstance(node, exp.Table)
            and (location := file_location(node, analysis.ctx.profile.quoted_paths_are_files)) is not None
        ):
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


class _ValuesBlock(_Block):
    """``VALUES (...), (...)``: each position merges what its rows read (usually nothing)."""

    def __init__(
        self, analysis: _Analysis, values: exp.Values, env: dict[str, _Block], outer: _Block | None, track: bool
    ) -> None:
        super().__init__(analysis, env, outer, track)
        self.rows = [row.expressions if isinstance(row, exp.Tuple) else [row] for row in values.expressions]

    def _compute_names(self) -> list[str]:
        width = max((len(row) for row in self.rows), default=0)
        return [self.analysis.ctx.profile.values_column(i) for i in range(width)]

    def _written(self) -> list[Written]:
        return list(self.rows[0]) if len(self.rows) == 1 else []  # several rows: no one expression says it

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
