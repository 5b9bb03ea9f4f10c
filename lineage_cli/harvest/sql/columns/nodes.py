"""Reading sqlglot nodes for the column analysis: children, names, aliases, join trees, folded identifiers.

Small functions over one node each, with no blocks and no lineage: what a column's parts are
(``_column_parts``), the alias a relation is given, the operands of a long ``AND`` chain or the
relations of a parenthesised join tree, walked without recursion.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from sqlglot import exp

from lineage_cli.profiles import DialectProfile

if TYPE_CHECKING:
    from lineage_cli.harvest.sql.columns.analysis import _Analysis


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


def _column_identifier(column: exp.Expression) -> exp.Expression:
    """The name of a column of a column list: ``x`` or ``x STRING`` (a ColumnDef)."""
    return column.this if isinstance(column, exp.ColumnDef) else column


def _tuple_items(node: exp.Expression) -> list[exp.Expression]:
    return node.expressions if isinstance(node, exp.Tuple) else [node]


def _is_semi(join: exp.Join) -> bool:
    """A SEMI / ANTI join: it keeps or drops the left side's rows, and outputs none of the right side."""
    return (join.args.get("kind") or "").upper() in ("SEMI", "ANTI")


def _builds_struct(query: exp.Expression) -> bool:
    inner = query.unnest() if isinstance(query, exp.Subquery) else query
    return isinstance(inner, exp.Select) and str(inner.args.get("kind") or "").upper() == "STRUCT"


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


def _alias_columns(node: exp.Expression, analysis: _Analysis) -> list[str]:
    alias = node.args.get("alias")
    if not isinstance(alias, exp.TableAlias):
        return []
    return [analysis.fold(c if isinstance(c, exp.Identifier) else c.this) for c in alias.args.get("columns") or ()]


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
