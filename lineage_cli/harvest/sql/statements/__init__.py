"""Table-level lineage of one parsed statement: what it writes and what it reads.

One handler per statement kind, in an explicit registry (``HANDLERS``); statements
without lineage (SET, DROP, ANALYZE ...) have no handler and yield nothing.  A plain query
yields what it reads and no writes: ``lineage parse`` reports it, a harvest adds nothing.
``USE db`` changes the default schema of the statements after it (or, where the profile says it
switches the database, puts it back to the default), and a trigger's body reads its table through
pseudo-tables (T-SQL's INSERTED), so the analysis carries a small mutable ``Context`` through a script.

The handlers live by statement family:

- ``inserts``: INSERT, multi-table INSERT, ``SELECT ... INTO``, a query alone;
- ``creates``: CREATE ... AS, views, CACHE TABLE, clones, ALTER VIEW and swaps;
- ``changes``: MERGE, UPDATE, DELETE;
- ``loads``: LOAD DATA and COPY, between files and tables;
- ``session``: USE and DECLARE, which change how the later statements read;
- ``opaque``: what sqlglot keeps as a command, read from its text, and the warnings for it;
- ``routines``: control flow and routine bodies, whose statements are analysed one by one;
- ``approximate``: the tables a statement that did not parse names, read from its tokens;

over the shared ``context`` (the results and the ``Context``), ``datasets`` (which Table nodes are
datasets, read or written) and ``locations`` (files named in place).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

from sqlglot import exp

from lineage_cli.harvest.sql.statements import changes, creates, inserts, loads, opaque, session
from lineage_cli.harvest.sql.statements.approximate import APPROXIMATE_NOTE, recover
from lineage_cli.harvest.sql.statements.context import Context, StatementLineage, Write, relation_name
from lineage_cli.harvest.sql.statements.datasets import survey
from lineage_cli.harvest.sql.statements.locations import file_location, placeholder_text
from lineage_cli.harvest.sql.statements.opaque import unanalysed, unread_data_statement
from lineage_cli.harvest.sql.statements.routines import nested_statements, routine_body, routine_parameters
from lineage_cli.harvest.sql.statements.session import apply_use

__all__ = [
    "APPROXIMATE_NOTE",
    "HANDLERS",
    "Context",
    "Handler",
    "StatementLineage",
    "Write",
    "analyze_statement",
    "apply_use",
    "file_location",
    "nested_statements",
    "placeholder_text",
    "recover",
    "relation_name",
    "routine_body",
    "routine_parameters",
    "unanalysed",
    "unread_data_statement",
]


def analyze_statement(expression: exp.Expression, ctx: Context) -> StatementLineage | None:
    """Table-level lineage of ``expression``, or None when it has none.

    >>> import sqlglot
    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("postgres"))
    >>> sql = "WITH c AS (SELECT * FROM stg.a) INSERT INTO dwh.t SELECT * FROM c JOIN stg.b USING (id)"
    >>> lineage = analyze_statement(sqlglot.parse_one(sql, read="postgres"), ctx)
    >>> (lineage.type, lineage.targets, lineage.sources)
    ('insert', ['dwh.t'], ['stg.a', 'stg.b'])
    """
    survey(expression, ctx)
    handler = HANDLERS.get(type(expression))
    return handler(expression, ctx) if handler else None


Handler = Callable[[exp.Expression, Context], StatementLineage | None]
_Kind = TypeVar("_Kind", bound=exp.Expression)


def _handles(
    kind: type[_Kind], handler: Callable[[_Kind, Context], StatementLineage | None]
) -> tuple[type[exp.Expression], Handler]:
    """An entry of ``HANDLERS``: a type checker holds ``handler`` to accept ``kind``.  The cast then widens its
    parameter to any expression, which is safe because ``analyze_statement`` looks a handler up by
    ``type(expression)``: it is only ever given its own kind."""
    return kind, cast(Handler, handler)


HANDLERS: dict[type[exp.Expression], Handler] = dict(
    [
        _handles(exp.Use, session.apply_use),
        _handles(exp.Declare, session.declare),
        _handles(exp.Insert, inserts.insert),
        _handles(exp.MultitableInserts, inserts.multi_insert),
        _handles(exp.Create, creates.create),
        _handles(exp.Alter, creates.alter),
        _handles(exp.Select, inserts.select),
        _handles(exp.Subquery, inserts.parenthesized),
        _handles(exp.Union, inserts.select),
        _handles(exp.Intersect, inserts.select),
        _handles(exp.Except, inserts.select),
        _handles(exp.LoadData, loads.load),
        _handles(exp.Cache, creates.cache),
        _handles(exp.Copy, loads.copy),
        _handles(exp.Merge, changes.merge),
        _handles(exp.Update, changes.update),
        _handles(exp.Delete, changes.delete),
        _handles(exp.Command, opaque.command),
    ]
)
