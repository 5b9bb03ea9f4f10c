"""The SQL expression behind each target column, as its statement wrote it: what a column's value is computed by.

The analysis notes, for each target column, what its value is written as (``Written``): the projection's syntax
node (its alias is left off when the text is made), a column a star expanded to (``t.*`` gives ``t.id``: text
already), the branches of a UNION, or nothing where no one expression says it (a VALUES list of several rows).
``expression_texts`` turns them into text once per target column, once the whole statement is analysed: sqlglot's
SQL for the node in the statement's dialect, without comments, cut to ``model.MAX_EXPRESSION`` characters ending in
an ellipsis.

The harvest's CPU is a benchmarked target, so the text is made cheaply: one generator per dialect and thread,
generating from the nodes themselves (``Expression.sql`` looks the dialect up, makes a generator and copies the
node each call: seven times the cost), and a plain unquoted column reference, the commonest projection, joined
from its names without running the generator at all.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel
from sqlglot.generator import Generator

from lineage_cli.model import bounded_expression


class Branches(NamedTuple):
    """A UNION's output column: what each branch writes at its place (``a.x UNION ALL b.y``)."""

    keyword: str  # UNION, UNION ALL
    items: tuple[Written, ...]


Written = exp.Expression | str | Branches | None


def set_keyword(operation: exp.SetOperation) -> str:
    """``UNION`` or ``UNION ALL`` (INTERSECT, EXCEPT) as the operation is written.

    >>> from sqlglot import parse_one
    >>> set_keyword(parse_one("SELECT 1 UNION ALL SELECT 2")), set_keyword(parse_one("SELECT 1 UNION SELECT 2"))
    ('UNION ALL', 'UNION')
    """
    word = operation.key.upper()
    return word if operation.args.get("distinct") else f"{word} ALL"


def expression_texts(expressions: dict[str, Written], dialect: str) -> dict[str, str]:
    """The bounded text of what each column is written as (none for a column nothing says it of).

    The nodes are generated from as they are, not copied: the statement's analysis is over, and what the
    generator's preprocessing may rewrite in place (T-SQL's explicit booleans) is no part of what is read after it.

    >>> from sqlglot import parse_one
    >>> select = parse_one("SELECT CAST(o.amount AS DECIMAL(10, 2)) /* net */, o.id AS k, " + "+".join("a" * 99))
    >>> texts = expression_texts(dict(zip("xyz", select.selects)), "hive")
    >>> texts["x"], texts["y"], len(texts["z"]), texts["z"][-3:]
    ('CAST(o.amount AS DECIMAL(10, 2))', 'o.id', 200, ' +…')
    """
    if not expressions:
        return {}
    generator = _generator(dialect)
    texts = {column: _guarded_text(written, generator) for column, written in expressions.items()}
    return {column: text for column, text in texts.items() if text is not None}


def _guarded_text(written: Written, generator: Generator) -> str | None:
    """The text, or none for an expression nested too deeply to print: its column keeps its edges all the same."""
    try:
        return _text(written, generator)
    except RecursionError:
        return None


_GENERATORS = threading.local()  # a generator keeps state while it runs: one per thread (parse_sql may run in many)


def _generator(dialect: str) -> Generator:
    """The thread's generator of ``dialect``'s SQL, made on first use."""
    made = _GENERATORS.__dict__.setdefault("by_dialect", {})
    generator = made.get(dialect)
    if generator is None:
        generator = made[dialect] = Dialect.get_or_raise(dialect).generator(
            comments=False, unsupported_level=ErrorLevel.IGNORE
        )
    return generator


def _text(written: Written, generator: Generator) -> str | None:
    if written is None:
        return None
    if isinstance(written, str):
        return bounded_expression(written)
    if isinstance(written, Branches):
        texts = [text for text in (_text(item, generator) for item in written.items) if text is not None]
        distinct = list(dict.fromkeys(texts))
        return bounded_expression(f" {written.keyword} ".join(distinct)) if distinct else None
    if isinstance(written, (exp.Alias, exp.Aliases)):  # ``SUM(x) AS total`` is written ``SUM(x)``
        written = written.this
    return bounded_expression(_plain_column(written) or generator.generate(written, copy=False))


def _plain_column(node: exp.Expression) -> str | None:
    """``t.x`` written with no quoted name: its names joined, as sqlglot would print them (no generator run)."""
    if type(node) is not exp.Column:
        return None
    parts = node.parts
    if all(type(part) is exp.Identifier and not part.args.get("quoted") for part in parts):
        return ".".join(part.this for part in parts)
    return None
