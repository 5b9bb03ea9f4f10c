"""The analysis of one statement: ``column_lineage`` and ``output_columns``, and the ``_Analysis`` under them.

An ``_Analysis`` covers one written target: it owns the statement's blocks (one per query
scope, made on first use and memoised by node), the projection and predicate edges they
emit, the warnings, and the expression walk (``visit``) that carries a column's lineage
through operators, functions, CASE / IF conditions, windows and subqueries, and resolves
each column reference (``resolve``) in its block, the select aliases and the enclosing blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from sqlglot import exp

from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.sql.columns.blocks import _Block, _ValuesBlock
from lineage_cli.harvest.sql.columns.dml import merge, update_or_delete, upsert
from lineage_cli.harvest.sql.columns.expressions import Written, expression_texts
from lineage_cli.harvest.sql.columns.lineage import (
    _SUBTYPE_NAMES,
    ALIAS_AFTER_KNOWN,
    ALIAS_FIRST,
    ALIAS_LAST,
    CONDITIONAL,
    IDENTITY,
    PREDICATE,
    PROJECTION,
    SORT,
    STAR,
    TRANSFORMATION,
    UNRESOLVED,
    WINDOW,
    ColumnEdge,
    _Lineage,
    _raise,
)
from lineage_cli.harvest.sql.columns.nodes import (
    _alias_columns,
    _alias_identifier,
    _builds_struct,
    _chain,
    _children,
    _column_parts,
    _folder,
    _is_desugared,
    _last_identifier,
)
from lineage_cli.harvest.sql.columns.select import _SelectBlock
from lineage_cli.harvest.sql.columns.set_operations import _SetOperationBlock
from lineage_cli.harvest.sql.columns.sources import _single_source_read
from lineage_cli.harvest.sql.columns.targets import (
    _branch_condition,
    _graft_multi_insert_source,
    _listed_columns,
    _returned_rows,
    _statement_env,
    _target_columns,
)
from lineage_cli.harvest.sql.functions import FunctionLevels
from lineage_cli.harvest.sql.statements import Context, StatementLineage, Write


def column_lineage(
    lineage: StatementLineage, ctx: Context, catalog: SchemaCatalog
) -> tuple[list[ColumnEdge], list[str], dict[str, str], list[str]]:
    """Every projection and predicate edge of one analysed statement, its target columns (each written column
    once, in the order the statement writes them, those with no source too), the SQL expression each target
    column is written as (``expressions.py``; the first, where a statement writes a column twice) and the
    warnings met.

    >>> import sqlglot
    >>> from lineage_cli.harvest.sql.statements import analyze_statement
    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("ansi"))
    >>> sql = "INSERT INTO t (total) SELECT SUM(s.amount) FROM s WHERE s.ok GROUP BY s.day"
    >>> edges, columns, expressions, warnings = column_lineage(
    ...     analyze_statement(sqlglot.parse_one(sql), ctx), ctx, SchemaCatalog()
    ... )
    >>> [(e.source, e.target, e.subtype) for e in edges]
    [('s.amount', 't.total', 'AGGREGATION'), ('s.day', 't', 'GROUP_BY'), ('s.ok', 't', 'FILTER')]
    >>> columns, expressions
    (['t.total'], {'t.total': 'SUM(s.amount)'})
    """
    edges: set[ColumnEdge] = set()
    warnings: list[str] = []
    written: dict[str, None] = {}
    expressions: dict[str, Written] = {}
    for write in lineage.writes:
        analysis = _Analysis(ctx, catalog, write.target)
        try:
            analysis.run(lineage, write)
        except RecursionError:  # a few thousand nested operators; the table lineage still stands
            analysis.warn(f"{write.target}: expression nested too deeply for column lineage")
        edges.update(analysis.edges())
        written.update(analysis.written)
        expressions.update(analysis.expressions)
        warnings.extend(w for w in analysis.warnings if w not in warnings)
    texts = expression_texts(expressions, ctx.profile.sqlglot_dialect)  # once per target column, not per edge
    return sorted(edges, key=_edge_key), list(written), texts, warnings


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


# A sequence's next and current value (Oracle, Snowflake, DB2): `seq.NEXTVAL` names no table.
_SEQUENCE_VALUES = frozenset(("nextval", "currval"))


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
        self.shaping: set[tuple[str, str, int]] = set()  # (source, target column, CONDITIONAL | WINDOW)
        self.written: dict[str, None] = {}  # the target columns, in the order written: a literal's too
        self.dialect = ctx.profile.sqlglot_dialect
        self.expressions: dict[str, Written] = {}  # target column -> what its value is written as, first wins
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
                upsert(self, conflict, write, env, written)
        elif isinstance(statement, exp.Merge):
            merge(self, statement, write, env)
        elif isinstance(statement, (exp.Update, exp.Delete)):
            update_or_delete(self, statement, write, env)
        while self.pending:
            self.pending.pop().process()

    def edges(self) -> Iterator[ColumnEdge]:
        for (source, target), level in self.projection.items():
            yield ColumnEdge(source, target, PROJECTION, _SUBTYPE_NAMES[level])
        for source, subtype in self.predicates:
            yield ColumnEdge(source, self.target, PREDICATE, _SUBTYPE_NAMES[subtype])
        for source, target, subtype in self.shaping:
            yield ColumnEdge(source, target, PREDICATE, _SUBTYPE_NAMES[subtype])

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
        for column, (_, lineage), expression in zip(columns, outputs, block.written_expressions(), strict=False):
            self.project(lineage, column, expression)
            written.setdefault(column, lineage)
        return written

    def project(self, lineage: _Lineage, column: str, expression: Written = None) -> None:
        """``lineage`` flows into the target's ``column``, whose value is written as ``expression``."""
        target = f"{self.target}.{column}"
        if column != STAR:  # (a star no schema expands is no column of the target)
            self.written[target] = None
            if expression is not None:
                self.expressions.setdefault(target, expression)
        projection = self.projection
        for source, level in lineage.values.items():
            key = (source, target)
            if projection.get(key, -1) < level:
                projection[key] = level
        if lineage.shaped:
            self.shaping.update((source, target, subtype) for source, subtype in lineage.shaped)

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
        every column read inside a predicate construct is emitted with the ``clauses`` subtypes.

        Each kind of expression has its visitor in ``_VISITORS``, below the class."""
        visitor = _VISITOR_OF.get(type(node)) or _visitor(type(node))
        visitor(self, node, block, level, acc, clauses)

    def _leaf(
        self, node: exp.Expression, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """A literal, identifier, type, star, NULL or placeholder: no column under it."""

    def _pass(
        self, node: exp.Expression, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """An alias, parentheses, DISTINCT, IGNORE / RESPECT NULLS: what is under it passes unchanged."""
        self._walk_children(node, block, level, acc, clauses)

    def _function(
        self, node: exp.Expression, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """A function call: at least the level the profile gives it (SUM aggregates, SHA2 masks)."""
        if level is not None:
            level = max(level, self.levels.level(node))
        self._walk_children(node, block, level, acc, clauses)

    def _operator(
        self, node: exp.Expression, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """Any other expression (an operator, a comparison, CAST ...): a transformation of what it reads."""
        if level is not None and level < TRANSFORMATION:
            level = TRANSFORMATION
        self._walk_children(node, block, level, acc, clauses)

    def _walk_children(
        self, node: exp.Expression, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        children = _chain(node) if isinstance(node, exp.Binary) else _children(node)
        for child in children:
            self.visit(child, block, level, acc, clauses)

    def _desugared(
        self, node: exp.Expression, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """DIV0(a, b) parsed as IF(b = 0, 0, a / b): a transformation of its arguments, with no condition."""
        raised = _raise(level, TRANSFORMATION)
        for child in _children(node):
            self.visit(child, block, raised, acc, clauses)

    def _if(
        self, node: exp.If, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        if _is_desugared(node):  # DIV0(a, b), ZEROIFNULL(x)
            self._desugared(node, block, level, acc, clauses)
        else:
            self._if_else(node, block, level, acc, clauses)

    def _if_else(
        self, node: exp.Expression, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """IF(c, a, b) / NVL2(x, a, b): the first argument decides, the branches are values."""
        self.condition(node.this, block, level, acc, clauses)
        raised = _raise(level, TRANSFORMATION)
        for key in ("true", "false"):
            if (branch := node.args.get(key)) is not None:
                self.visit(branch, block, raised, acc, clauses)

    def _window(
        self, node: exp.Window, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        self.visit(node.this, block, level, acc, clauses)
        self.window_spec(node, block, level, acc, clauses)

    def _dot(
        self, node: exp.Dot, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """Struct field access on an expression (a.b.c beyond what a Column holds), or a trigger's ``:NEW.c``."""
        if (row := self._row_variable(node)) is not None:
            self._absorb(row, block, level, acc, clauses)
            return
        raised = _raise(level, TRANSFORMATION)
        self.visit(node.this, block, raised, acc, clauses)
        if not isinstance(node.expression, exp.Identifier):  # schema.function(args)
            self.visit(node.expression, block, raised, acc, clauses)

    def _order(
        self, node: exp.Order, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """ARRAY_AGG(x ORDER BY y): y orders the value, it is not one."""
        if node.this is not None:
            self.visit(node.this, block, level, acc, clauses)
        for item in node.expressions:
            self.visit(item, block, None, acc, clauses + (SORT,) if level is not None else clauses)

    def _within_group(
        self, node: exp.WithinGroup, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        if level is not None and node.this.find(exp.Column) is None:
            # PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY x): an ordered-set aggregate picks its value from x
            order = node.expression
            for item in order.expressions if isinstance(order, exp.Order) else ():
                self.visit(item, block, max(level, self.levels.level(node.this)), acc, clauses)
            return
        # LISTAGG(x) WITHIN GROUP (ORDER BY y): the generic walk makes y SORT
        self.visit(node.this, block, _raise(level, TRANSFORMATION), acc, clauses)
        self.visit(node.expression, block, _raise(level, TRANSFORMATION), acc, clauses)

    def _aggregate_filter(
        self, node: exp.Filter, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """SUM(x) FILTER (WHERE c): c decides like a CASE condition."""
        self.visit(node.this, block, level, acc, clauses)
        self.condition(node.expression, block, level, acc, clauses)

    def condition(
        self,
        node: exp.Expression | None,
        block: _Block,
        level: int | None,
        acc: _Lineage | None,
        clauses: tuple[int, ...],
    ) -> None:
        """A CASE / IF / NVL2 / DECODE condition: CONDITIONAL, part of the column's definition, and on a value
        path (``level`` set) a shaper of the value."""
        if node is not None:
            read = _shaper(level, acc)
            self.visit(node, block, None, read, clauses + (CONDITIONAL,) if CONDITIONAL not in clauses else clauses)
            _shaped_by(acc, read, CONDITIONAL)

    def window_spec(
        self, window: exp.Window, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        """PARTITION BY / ORDER BY of a window: WINDOW, part of the column's definition, and on a value path a
        shaper of the value (ROW_NUMBER() OVER (PARTITION BY k ORDER BY t) is made of k and t alone)."""
        spec_clauses = clauses if WINDOW in clauses else clauses + (WINDOW,)
        read = _shaper(level, acc)
        for item in window.args.get("partition_by") or ():
            self.visit(item, block, None, read, spec_clauses)
        if (order := window.args.get("order")) is not None:
            self.visit(order, block, None, read, spec_clauses)
        _shaped_by(acc, read, WINDOW)
        named = window.args.get("alias")
        if isinstance(named, exp.Identifier) and isinstance(block, _SelectBlock):  # OVER w ... WINDOW w AS (...)
            for definition in block.select.args.get("windows") or ():
                if definition is not window and self.fold(definition.args.get("this")) == self.fold(named):
                    self.window_spec(definition, block, level, acc, clauses)

    def _case(
        self, node: exp.Case, block: _Block, level: int | None, acc: _Lineage | None, clauses: tuple[int, ...]
    ) -> None:
        if _is_desugared(node):  # a CASE the parser built from a plain function
            self._desugared(node, block, level, acc, clauses)
            return
        self.condition(node.this, block, level, acc, clauses)  # the simple-CASE operand is compared, not returned
        raised = _raise(level, TRANSFORMATION)
        for branch in node.args.get("ifs") or ():
            self.condition(branch.this, block, level, acc, clauses)
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
                self.condition(item, block, level, acc, clauses)
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


def _shaper(level: int | None, acc: _Lineage | None) -> _Lineage | None:
    """Where a condition or window spec is read: on a value path, a lineage of its own, to tell what it shapes."""
    return _Lineage() if level is not None and acc is not None else acc


def _shaped_by(acc: _Lineage | None, read: _Lineage | None, subtype: int) -> None:
    """What a condition or window spec on a value path read (``read``, from ``_shaper``) shapes ``acc``."""
    if read is not acc and acc is not None and read is not None and read.conds:
        acc.conds.update(read.conds)  # type: ignore[union-attr]
        acc.shape([(base, subtype) for base in read.conds])


# How ``_Analysis.visit`` walks each kind of expression: a new SQL construct is one entry here and one visitor.
# A class not listed takes the visitor of its nearest listed ancestor (``exp.Func`` covers every function), and
# a node that has none (an operator, a comparison, CAST ...) is a transformation of what it reads (``_operator``).
_VISITORS: dict[type[exp.Expression], Callable[..., None]] = {
    exp.Literal: _Analysis._leaf,
    exp.Identifier: _Analysis._leaf,
    exp.Var: _Analysis._leaf,
    exp.DataType: _Analysis._leaf,
    exp.Star: _Analysis._leaf,
    exp.Null: _Analysis._leaf,
    exp.Boolean: _Analysis._leaf,
    exp.Placeholder: _Analysis._leaf,
    exp.Column: _Analysis._column,
    exp.Parameter: _Analysis._column,  # Snowflake's positional $1
    exp.Alias: _Analysis._pass,
    exp.Paren: _Analysis._pass,
    exp.Distinct: _Analysis._pass,
    exp.IgnoreNulls: _Analysis._pass,
    exp.RespectNulls: _Analysis._pass,
    exp.Case: _Analysis._case,
    exp.If: _Analysis._if,
    exp.Nvl2: _Analysis._if_else,
    exp.DecodeCase: _Analysis._decode,
    exp.Window: _Analysis._window,
    exp.Dot: _Analysis._dot,
    exp.Order: _Analysis._order,
    exp.Sort: _Analysis._operator,  # Hive's SORT BY / DISTRIBUTE BY: Orders to sqlglot, not an aggregate's ORDER BY
    exp.Distribute: _Analysis._operator,
    exp.WithinGroup: _Analysis._within_group,
    exp.Filter: _Analysis._aggregate_filter,
    exp.Query: _Analysis._subquery,
    exp.Func: _Analysis._function,
}


# The visitor of every class met so far: one dictionary lookup per node once a class has been seen.
_VISITOR_OF: dict[type, Callable[..., None]] = {}


def _visitor(node_type: type) -> Callable[..., None]:
    """The visitor of ``node_type``: its own entry in ``_VISITORS``, else its nearest listed ancestor's (in
    method resolution order), else ``_operator``'s; remembered in ``_VISITOR_OF``."""
    visitor = next((_VISITORS[base] for base in node_type.__mro__ if base in _VISITORS), _Analysis._operator)
    _VISITOR_OF[node_type] = visitor
    return visitor
