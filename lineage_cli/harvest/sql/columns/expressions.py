"""The SQL expression behind each target column, as its statement wrote it: what a column's value is computed by.

The analysis notes, for each target column, what its value is written as (``Written``): the projection's syntax
node (its alias left off), a column a star expanded to (``t.*`` gives ``t.id``: text already), the branches of a
UNION, or nothing where no one expression says it (a VALUES list of several rows).  ``expression_text`` turns one
into text once per target column, after the analysis: sqlglot's SQL for the node in the statement's dialect,
without comments, cut to ``MAX_EXPRESSION`` characters ending in an ellipsis.  A plain unquoted column reference,
the commonest projection, is joined from its names without running sqlglot's generator.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlglot import exp

MAX_EXPRESSION = 200  # characters kept of an expression's text, the ellipsis included
ELLIPSIS = "…"


class Branches(NamedTuple):
    """A UNION's output column: what each branch writes at its place (``a.x UNION ALL b.y``)."""

    keyword: str  # UNION, UNION ALL
    items: tuple[Written, ...]


Written = exp.Expression | str | Branches | None


def unaliased(projection: exp.Expression) -> exp.Expression:
    """A projection without its alias: ``SUM(x) AS total`` is written ``SUM(x)``."""
    return projection.this if isinstance(projection, (exp.Alias, exp.Aliases)) else projection


def set_keyword(operation: exp.SetOperation) -> str:
    """``UNION`` or ``UNION ALL`` (INTERSECT, EXCEPT) as the operation is written.

    >>> from sqlglot import parse_one
    >>> set_keyword(parse_one("SELECT 1 UNION ALL SELECT 2")), set_keyword(parse_one("SELECT 1 UNION SELECT 2"))
    ('UNION ALL', 'UNION')
    """
    word = operation.key.upper()
    return word if operation.args.get("distinct") else f"{word} ALL"


def expression_text(written: Written, dialect: str) -> str | None:
    """The bounded text of what a column is written as, or None when nothing says it.

    >>> import sqlglot
    >>> expression_text(sqlglot.parse_one("SELECT CAST(o.amount AS DECIMAL(10, 2)) -- net").selects[0], "hive")
    'CAST(o.amount AS DECIMAL(10, 2))'
    >>> expression_text(sqlglot.parse_one("SELECT o.id").selects[0], "hive")
    'o.id'
    >>> text = expression_text(sqlglot.parse_one("SELECT " + " + ".join(["a"] * 150)).selects[0], "hive")
    >>> len(text), text[-3:]
    (200, '+ …')
    """
    if written is None:
        return None
    if isinstance(written, str):
        return _bounded(written)
    if isinstance(written, Branches):
        texts = [text for text in (expression_text(item, dialect) for item in written.items) if text is not None]
        distinct = list(dict.fromkeys(texts))
        return _bounded(f" {written.keyword} ".join(distinct)) if distinct else None
    return _bounded(_plain_column(written) or written.sql(dialect=dialect, comments=False))


def _plain_column(node: exp.Expression) -> str | None:
    """``t.x`` written with no quoted name: its names joined, as sqlglot would print them (no generator run)."""
    if type(node) is not exp.Column:
        return None
    parts = node.parts
    if all(type(part) is exp.Identifier and not part.args.get("quoted") for part in parts):
        return ".".join(part.this for part in parts)
    return None


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_EXPRESSION else text[: MAX_EXPRESSION - 1] + ELLIPSIS
