"""The set-operation block: a chain of UNION / INTERSECT / EXCEPT branches as one block."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lineage_cli.harvest.sql.columns.blocks import _Block
from lineage_cli.harvest.sql.columns.expressions import Branches, Written, set_keyword
from lineage_cli.harvest.sql.columns.lineage import FILTER, SORT, _Lineage
from lineage_cli.harvest.sql.columns.stars import _aligned

if TYPE_CHECKING:
    from lineage_cli.harvest.sql.columns.analysis import _Analysis


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
        merged = [(name, lineage.copy()) for name, lineage in first]
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

    def _written(self) -> list[Written]:
        """A UNION's column is what each branch writes at its place; INTERSECT / EXCEPT keep the first's."""
        width = len(self.outputs())
        branches = [branch.written_expressions() for branch in self.merged]
        if len(branches) == 1 or self.by_name:  # BY NAME: the branches' places do not line up
            return branches[0]
        keyword = set_keyword(self.operation)
        columns = [written if len(written) == width else [None] * width for written in branches]
        return [Branches(keyword, tuple(items)) for items in zip(*columns, strict=True)]

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
