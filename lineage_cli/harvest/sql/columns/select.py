"""The SELECT block: its FROM / JOIN / LATERAL sources, its projections and stars, and its clauses.

Outputs come from the select list (a star expands over the sources in FROM order); predicate
edges from the clauses: JOIN ON / USING and NATURAL joins (JOIN), WHERE / HAVING / QUALIFY
and START WITH (FILTER), CONNECT BY (JOIN), GROUP BY (GROUP_BY), ORDER / SORT / CLUSTER BY
(SORT) and named windows (WINDOW).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lineage_cli.harvest.sql.columns.blocks import _Block
from lineage_cli.harvest.sql.columns.expressions import Written
from lineage_cli.harvest.sql.columns.lineage import (
    ALIAS_AFTER_KNOWN,
    ALIAS_FIRST,
    ALIAS_LAST,
    FILTER,
    GROUP_BY,
    IDENTITY,
    JOIN,
    SORT,
    STAR,
    TRANSFORMATION,
    UNRESOLVED,
    _Lineage,
)
from lineage_cli.harvest.sql.columns.nodes import _column_identifier, _column_parts, _is_semi, _join_tree, _last_name
from lineage_cli.harvest.sql.columns.sources import _JoinedSource, _RowSource, _Source, _UsingKey
from lineage_cli.harvest.sql.columns.stars import _is_star, _like, _renames, _star_modifiers_names, _star_node, _without

if TYPE_CHECKING:
    from lineage_cli.harvest.sql.columns.analysis import _Analysis


# The pseudo-columns of a CONNECT BY query (Oracle, Snowflake) and of a grouping query (Hive's GROUPING__ID)
_HIERARCHY_COLUMNS = frozenset(("level", "connect_by_isleaf", "connect_by_iscycle"))
_GROUPING_COLUMNS = frozenset(("grouping__id",))


class _SelectBlock(_Block):
    def __init__(
        self, analysis: _Analysis, select: exp.Select, env: dict[str, _Block], outer: _Block | None, track: bool
    ) -> None:
        super().__init__(analysis, analysis.with_env(select, env), outer, track)
        self.select = select
        self._joins: list[tuple[exp.Join, int]] = []
        self._aliases: dict[str, _Lineage] = {}
        self._written_list: list[Written] = []

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
        written = self._written_list = []
        self._partial = outputs
        for projection in self.select.expressions:
            if _is_star(projection):
                star = _star_node(projection)
                expanded = [
                    item
                    for source in self._star_sources(projection)
                    for item in _without(source.expand(), self._excluded(star, source))
                ]
                modified = self._star_modifiers(star, expanded)
                outputs.extend(modified)
                written += self._star_written(projection, star, [name for name, _ in expanded])
                continue
            names = self._projection_names(projection, len(outputs))
            for name, lineage in zip(names, self._projection_lineages(projection, len(names)), strict=True):
                outputs.append((name, lineage))
                self._aliases.setdefault(name, lineage)
            written += [projection] * len(names)
        return outputs

    def _written(self) -> list[Written]:
        return self._written_list

    def _star_written(self, projection: exp.Expression, star: exp.Star, names: list[str]) -> list[Written]:
        """What the columns a star expands to are written as: each column by its name, qualified as the star is
        (``o.*`` gives ``o.id``), and a ``* REPLACE (expr AS a)`` column its expression."""
        prefix = "" if isinstance(projection, exp.Star) else projection.sql(dialect=self.analysis.dialect)[:-1]
        replaced = {self.analysis.output_name(item, 0): item for item in star.args.get("replace") or ()}
        return [replaced.get(name, f"{prefix}{name}") for name in names]

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
        if isinstance(inner, exp.QueryTransform):
            return self._script_inputs(inner)
        if type(inner) is exp.Column and isinstance(inner.this, exp.Identifier):
            # The common ``t.c [AS x]``: its lineage is the column's own, shared read-only.
            lineage = self.analysis.resolve(inner, self)
            if self.referenced is not None:
                self.referenced.update(lineage.bases)
            return lineage
        lineage = _Lineage()
        self.analysis.visit(projection, self, IDENTITY, lineage, ())
        return lineage

    def _script_inputs(self, transform: exp.QueryTransform) -> _Lineage:
        """Hive's ``TRANSFORM(a, t.*) USING 'script.py'``: the script reads its whole input row, so every input
        column (each column of a star) feeds every output, transformed."""
        lineage = _Lineage()
        for value in transform.expressions:
            if _is_star(value):
                for source in self._star_sources(value):
                    for _, column in source.expand():
                        lineage.merge(column, TRANSFORMATION)
            else:
                self.analysis.visit(value, self, TRANSFORMATION, lineage, ())
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
        if self._busy:  # the select list is being read
            return self._lateral_alias(name)
        if not self._aliases and self._outputs is None:
            self.outputs()
        return self._aliases.get(name)

    def _lateral_alias(self, name: str) -> _Lineage | None:
        """An earlier alias of the select list being read, where the dialect lets a select list name one; not
        one whose own expression read a column of its name (``x || id AS id``): the FROM tables have that
        column, and it wins."""
        if not self.analysis.ctx.profile.lateral_column_aliases:
            return None
        aliased = self._aliases.get(name)
        if aliased is None or any(base.rsplit(".", 1)[-1] == name for base in aliased.bases):
            return None
        return aliased

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
            analysis.window_spec(window, self, None, None, ())

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
