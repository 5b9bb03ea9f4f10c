"""MERGE, UPDATE, DELETE and upserts: the statement block and what each clause writes or filters.

The body of a MERGE / UPDATE / DELETE is one ``_StatementBlock`` over the target and the
tables it reads, by alias.  ``SET c = expr`` and a MERGE's ``INSERT (c) VALUES (expr)`` project
into the target's column c; ON and JOIN conditions are JOIN predicates, WHERE and WHEN
conditions FILTER ones.  An upsert (``ON CONFLICT DO UPDATE``, ``ON DUPLICATE KEY UPDATE``) reads
the row its INSERT proposed as ``EXCLUDED``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lineage_cli.harvest.sql.columns.blocks import _Block
from lineage_cli.harvest.sql.columns.lineage import FILTER, IDENTITY, JOIN, TRANSFORMATION, _Lineage
from lineage_cli.harvest.sql.columns.nodes import _alias_identifier, _column_parts, _join_tree, _last_identifier
from lineage_cli.harvest.sql.columns.sources import _DerivedSource, _RowSource, _Source, _TableSource
from lineage_cli.harvest.sql.statements import Write

if TYPE_CHECKING:
    from lineage_cli.harvest.sql.columns.analysis import _Analysis


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


def merge(analysis: _Analysis, statement: exp.Merge, write: Write, env: dict[str, _Block]) -> None:
    """``MERGE INTO t USING s ON ... WHEN [NOT] MATCHED ... THEN UPDATE SET / INSERT``."""
    block = _StatementBlock(analysis, env, write)
    block.add_relations(write.target_node)
    using_source = block.add_relations(statement.args.get("using"))
    if (on := statement.args.get("on")) is not None:
        analysis.predicate(on, block, JOIN)
    _joins(analysis, block)
    whens = statement.args.get("whens")
    for when in whens.expressions if whens is not None else ():
        scope = block if when.args.get("matched") else _unmatched_scope(analysis, statement, write, env, when)
        if (condition := when.args.get("condition")) is not None:
            analysis.predicate(condition, scope, FILTER)
        action = when.args.get("then")
        if isinstance(action, (exp.Update, exp.Insert)) and (where := action.args.get("where")) is not None:
            analysis.predicate(where.this, scope, FILTER)  # Oracle: UPDATE SET ... WHERE cond
        if isinstance(action, exp.Update):
            _assignments(analysis, action.expressions, scope, using_source)
        elif isinstance(action, exp.Insert):
            _merge_insert(analysis, action, scope, using_source)


def _unmatched_scope(
    analysis: _Analysis, statement: exp.Merge, write: Write, env: dict[str, _Block], when: exp.When
) -> _StatementBlock:
    """What a ``WHEN NOT MATCHED`` clause can read: the source row alone (no target row matched it), or,
    ``BY SOURCE``, the target row alone; so a bare ``VALUES (id, name)`` is the source's, not ambiguous."""
    scope = _StatementBlock(analysis, env, write)
    scope.add_relations(write.target_node if when.args.get("source") else statement.args.get("using"))
    return scope


def upsert(
    analysis: _Analysis, conflict: exp.OnConflict, write: Write, env: dict[str, _Block], row: dict[str, _Lineage]
) -> None:
    """``ON CONFLICT ... DO UPDATE SET c = expr`` / ``ON DUPLICATE KEY UPDATE c = expr``.

    ``EXCLUDED.c`` (and MySQL's ``VALUES(c)``) is the row the INSERT proposed for column c.
    """
    block = _StatementBlock(analysis, env, write)
    block.add_relations(write.target_node)
    # Only `EXCLUDED.c` names the proposed row: a bare `c` is the existing row's (MySQL's `b = b + VALUES(b)`).
    block.add_qualifier("excluded", _RowSource(row))
    query = write.query.unnest() if isinstance(write.query, exp.Subquery) else write.query
    if isinstance(query, exp.Select) and (from_ := query.args.get("from_")) is not None:
        # MySQL 8: INSERT ... SELECT * FROM (...) AS new ON DUPLICATE KEY UPDATE amt = new.total
        derived = _join_tree(from_.this)[0]
        if (alias := analysis.fold(_alias_identifier(derived))) and isinstance(derived, exp.Subquery):
            block.add_qualifier(alias, _DerivedSource(analysis.query_block(derived.this, env, None)))
    if (where := conflict.args.get("where")) is not None:
        analysis.predicate(where.this, block, FILTER)
    for assignment in conflict.expressions:
        if isinstance(assignment, exp.EQ) and isinstance(assignment.this, exp.Column):
            lineage = _Lineage()
            analysis.visit(assignment.expression, block, IDENTITY, lineage, ())
            for call in assignment.expression.find_all(exp.Anonymous):
                if call.name.upper() == "VALUES" and call.expressions:
                    level = IDENTITY if call is assignment.expression else TRANSFORMATION
                    proposed = row.get(analysis.fold(_last_identifier(call.expressions[0])))
                    if proposed is not None:
                        lineage.merge(proposed, level)
            analysis.project(lineage, analysis.fold(assignment.this.this), assignment.expression)


def _joins(analysis: _Analysis, block: _StatementBlock) -> None:
    """The ON conditions of the joins in a MERGE / UPDATE / DELETE's relations: JOIN predicates."""
    for join in block.joins:
        if (on := join.args.get("on")) is not None:
            analysis.predicate(on, block, JOIN)


def _assignments(
    analysis: _Analysis, assignments: list[exp.Expression], block: _Block, star_source: _Source | None
) -> None:
    """``SET c = expr``: expr flows into the target's column c (``SET *`` copies by name)."""
    for assignment in assignments:
        if isinstance(assignment, exp.Star) and star_source is not None:
            for name, lineage in star_source.expand():
                analysis.project(lineage, name, name)
        elif isinstance(assignment, exp.EQ) and isinstance(assignment.this, exp.Column):
            if not _sets_target(analysis, assignment.this, block):
                continue  # MySQL's UPDATE a JOIN b SET b.z = ...: another target's write sets it
            lineage = _Lineage()
            analysis.visit(assignment.expression, block, IDENTITY, lineage, ())
            analysis.project(lineage, analysis.fold(assignment.this.this), assignment.expression)
        elif isinstance(assignment, exp.EQ) and isinstance(assignment.this, exp.Tuple):
            _tuple_assignment(analysis, assignment.this, assignment.expression, block)


def _sets_target(analysis: _Analysis, column: exp.Column, block: _Block) -> bool:
    """Whether ``SET q.c = ...`` sets the write's own target: unqualified, or qualified by it."""
    if not column.table or not isinstance(block, _StatementBlock) or block.target_source is None:
        return True
    named = block.qualifier_source(_column_parts(column, analysis)[:-1])
    return named is None or named is block.target_source


def _tuple_assignment(analysis: _Analysis, columns: exp.Tuple, value: exp.Expression, block: _Block) -> None:
    """``SET (a, b) = (x, y)`` or ``= (SELECT x, y ...)``: position by position."""
    names = [analysis.fold(_last_identifier(column)) for column in columns.expressions]
    if isinstance(value, (exp.Subquery, exp.Query)):
        sub = analysis.query_block(value, block.env, block, track=True)
        sub.process()
        for name, (_, lineage), written in zip(names, sub.outputs(), sub.written_expressions(), strict=False):
            analysis.project(lineage, name, written)
        return
    values = value.expressions if isinstance(value, exp.Tuple) else [value]
    for name, item in zip(names, values, strict=False):
        lineage = _Lineage()
        analysis.visit(item, block, IDENTITY, lineage, ())
        analysis.project(lineage, name, item)


def _merge_insert(analysis: _Analysis, action: exp.Insert, block: _Block, star_source: _Source | None) -> None:
    if isinstance(action.this, exp.Star):  # INSERT *: every source column into its namesake
        for name, lineage in star_source.expand() if star_source is not None else ():
            analysis.project(lineage, name, name)
        return
    values = action.expression.expressions if isinstance(action.expression, exp.Tuple) else []
    if isinstance(action.this, exp.Tuple):
        columns = [analysis.fold(_last_identifier(c)) for c in action.this.expressions]
    else:
        known = analysis.known_columns(analysis.target)
        columns = list(known) if known is not None else [analysis.output_name(v, i) for i, v in enumerate(values)]
    for column, value in zip(columns, values, strict=False):
        lineage = _Lineage()
        analysis.visit(value, block, IDENTITY, lineage, ())
        analysis.project(lineage, column, value)


def update_or_delete(analysis: _Analysis, statement: exp.Expression, write: Write, env: dict[str, _Block]) -> None:
    """``UPDATE t [FROM ...] SET ... WHERE ...`` / ``DELETE FROM t [USING ...] WHERE ...``."""
    block = _StatementBlock(analysis, env, write)
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
    _joins(analysis, block)
    if (where := statement.args.get("where")) is not None:
        analysis.predicate(where.this, block, FILTER)
    if isinstance(statement, exp.Update):
        _assignments(analysis, statement.expressions, block, None)
