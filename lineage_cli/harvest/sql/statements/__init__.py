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

over the shared ``context`` (the results and the ``Context``), ``datasets`` (which Table nodes are
datasets, read or written) and ``locations`` (files named in place).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from lineage_cli.harvest.sql.statements import changes, creates, inserts, loads, opaque, session
from lineage_cli.harvest.sql.statements.context import Context, StatementLineage, Write
from lineage_cli.harvest.sql.statements.datasets import survey
from lineage_cli.harvest.sql.statements.locations import file_location, placeholder_text
from lineage_cli.harvest.sql.statements.opaque import unanalysed, unread_data_statement
from lineage_cli.harvest.sql.statements.routines import nested_statements, routine_body, routine_parameters
from lineage_cli.harvest.sql.statements.session import apply_use

__all__ = [
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

HANDLERS: dict[type[exp.Expression], Handler] = {
    exp.Use: session.apply_use,  # type: ignore[dict-item]
    exp.Declare: session.declare,  # type: ignore[dict-item]
    exp.Insert: inserts.insert,  # type: ignore[dict-item]
    exp.MultitableInserts: inserts.multi_insert,  # type: ignore[dict-item]
    exp.Create: creates.create,  # type: ignore[dict-item]
    exp.Alter: creates.alter,  # type: ignore[dict-item]
    exp.Select: inserts.select,  # type: ignore[dict-item]
    exp.Subquery: inserts.parenthesized,  # type: ignore[dict-item]
    exp.Union: inserts.select,  # type: ignore[dict-item]
    exp.Intersect: inserts.select,  # type: ignore[dict-item]
    exp.Except: inserts.select,  # type: ignore[dict-item]
    exp.LoadData: loads.load,  # type: ignore[dict-item]
    exp.Cache: creates.cache,  # type: ignore[dict-item]
    exp.Copy: loads.copy,  # type: ignore[dict-item]
    exp.Merge: changes.merge,  # type: ignore[dict-item]
    exp.Update: changes.update,  # type: ignore[dict-item]
    exp.Delete: changes.delete,  # type: ignore[dict-item]
    exp.Command: opaque.command,  # type: ignore[dict-item]
}
