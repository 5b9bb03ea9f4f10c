"""PIVOT and UNPIVOT: the source a pivoted relation becomes, its new columns and the ones it keeps."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lineage_cli.harvest.sql.columns.lineage import CONDITIONAL, GROUP_BY, IDENTITY, STAR, _Lineage
from lineage_cli.harvest.sql.columns.nodes import _last_identifier, _last_name, _tuple_items
from lineage_cli.harvest.sql.columns.sources import _Source

if TYPE_CHECKING:
    from lineage_cli.harvest.sql.columns.analysis import _Analysis
    from lineage_cli.harvest.sql.columns.blocks import _Block


class _PivotSource(_Source):
    """``rel PIVOT (agg FOR k IN (...))`` / ``rel UNPIVOT (v FOR k IN (cols))`` over another source.

    PIVOT: the new columns aggregate the aggregated columns, the FOR column decides which
    new column a row lands in (CONDITIONAL) and the other columns group the rows (GROUP_BY).
    UNPIVOT: the value column takes each listed column in turn; the name column has no source.
    """

    def __init__(self, scope: _Block, pivot: exp.Pivot, inner: _Source) -> None:
        """``scope`` is the block of ``inner`` alone: what the aggregations and FOR columns read."""
        self.inner, self.unpivot = inner, bool(pivot.args.get("unpivot"))
        self.lineage: dict[str, _Lineage] = {}  # the kept columns first, then the new ones
        self.kept = 0
        fields = [f for f in pivot.args.get("fields") or () if isinstance(f, exp.In)]
        if self.unpivot:
            self._unpivot(scope.analysis, scope, pivot, fields)
        else:
            self._pivot(scope.analysis, scope, pivot, fields)

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
