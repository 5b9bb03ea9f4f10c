"""Statements sqlglot keeps as opaque commands (``exp.Command``), read from their text by the readers in
``_COMMANDS`` (REPLACE INTO, Redshift's UNLOAD, ALTER ... EXCHANGE PARTITION or SESSION SET CURRENT_SCHEMA,
a CREATE ... AS / CLONE it cannot parse), and the warnings for data-moving statements that no reader made
sense of (``unanalysed``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import sqlglot
from sqlglot import exp

from lineage_cli.harvest.sql.statements import creates, inserts
from lineage_cli.harvest.sql.statements.context import Context, StatementLineage, Write
from lineage_cli.harvest.sql.statements.datasets import read_tables, survey
from lineage_cli.harvest.sql.statements.loads import is_client_copy


def command(statement: exp.Command, ctx: Context) -> StatementLineage | None:
    """Statements sqlglot keeps as opaque commands, read from their text: ``REPLACE INTO``, Redshift's
    ``UNLOAD``, Hive's ``ALTER TABLE ... EXCHANGE PARTITION``, a CREATE ... AS / CLONE it cannot parse."""
    reader = _COMMANDS.get(statement.name.upper())
    return reader(statement, command_text(statement), ctx) if reader else None


def command_text(statement: exp.Command) -> str:
    """What follows a command's first word."""
    body = statement.expression
    return body.name if isinstance(body, exp.Literal) else str(body)


# Statements that move data: read as an opaque command, they lose their lineage, which is worth a warning.
_DATA_COMMANDS = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "REPLACE", "COPY", "UNLOAD", "LOAD"})


def unanalysed(expression: exp.Expression) -> str | None:
    """Why a statement that moves data, and gave no lineage, gave none: the text of a warning.  None for any
    other statement, and for a COPY from or to the client (``FROM STDIN``), which moves no dataset's rows.

    >>> unanalysed(sqlglot.parse_one("COPY t FROM ? IAM_ROLE default", read="redshift"))
    'COPY not analysed: its table or its files are neither a name nor a location, so it adds no lineage'
    >>> unanalysed(sqlglot.parse_one("COPY t FROM STDIN", read="postgres"))
    """
    if isinstance(expression, exp.Copy):
        if is_client_copy(expression):
            return None
        return "COPY not analysed: its table or its files are neither a name nor a location, so it adds no lineage"
    kind = unread_data_statement(expression)
    if kind is not None:
        return f"{kind} not analysed: sqlglot reads it only as an opaque command, so it adds no lineage"
    text = _STRING.sub("''", command_text(expression)) if isinstance(expression, exp.Command) else ""
    glued = _glued_statement(expression.name.upper(), text)
    if glued and not _ROUTINE_WORDS.intersection(text.upper().split()[:6]):
        return (
            f"{expression.name.upper()} read as one opaque command running on into a later line's "
            f"{glued.upper()}: a semicolon missing? It adds no lineage"
        )
    return None


def _glued_statement(word: str, text: str) -> str | None:
    """The keyword of a data statement that starts a later line of a command's text, glued to it by a missing
    semicolon; None when there is none.  A MERGE's ``WHEN MATCHED THEN`` action on its own line is the MERGE's,
    and the statement an EXPLAIN explains may start on the line after its options.

    >>> _glued_statement("EXPLAIN", "EXTENDED\\nUPDATE t SET a = 1"), _glued_statement("GRANT", "x\\nINSERT INTO t")
    (None, 'INSERT')
    """
    starts = [m for m in _GLUED_STATEMENT.finditer(text) if not text[: m.start()].rstrip().upper().endswith("THEN")]
    if word == "EXPLAIN" and starts and set(text[: starts[0].start()].upper().split()) <= _EXPLAIN_OPTIONS:
        starts = starts[1:]
    return starts[0].group(1) if starts else None


# The words between EXPLAIN and the statement it explains (Hive, Spark, Postgres, MySQL)
_EXPLAIN_OPTIONS = frozenset(
    {
        "EXTENDED", "CBO", "COST", "JOINCOST", "AST", "DEPENDENCY", "AUTHORIZATION", "LOCKS", "VECTORIZATION",
        "ONLY", "SUMMARY", "OPERATOR", "EXPRESSION", "DETAIL", "FORMATTED", "DEBUG", "ANALYZE", "REOPTIMIZATION",
        "CODEGEN", "LOGICAL", "VERBOSE",
    }
)  # fmt: skip


# A routine's body may hold any statement on its lines (a JavaScript procedure's string, say)
_ROUTINE_WORDS = frozenset({"PROCEDURE", "PROC", "FUNCTION", "TRIGGER", "PACKAGE"})


# A string in a command's text (`EXECUTE IMMEDIATE '...'`, `SET @sql = N'...'`): statements inside it are text
_STRING = re.compile(r"'(?:[^']|'')*'|\$(\w*)\$.*?\$\1\$", re.S)
# A data statement beginning a line of a command's text: two statements glued by a missing semicolon
_GLUED_STATEMENT = re.compile(r"\n\s*(INSERT|UPDATE|DELETE|MERGE|CREATE|REPLACE)\b", re.IGNORECASE)


def unread_data_statement(expression: exp.Expression) -> str | None:
    """The keyword of a data-moving statement (an INSERT, a CREATE ... AS query) that sqlglot could only keep
    as an opaque command and no reader here made sense of; None for anything else.

    >>> unread_data_statement(exp.Command(this="INSERT", expression=exp.Literal.string("INTO t OUTPUT ...")))
    'INSERT'
    >>> unread_data_statement(exp.Command(this="GRANT", expression=exp.Literal.string("SELECT ON t TO u")))
    """
    if not isinstance(expression, exp.Command):
        return None
    word = expression.name.upper()
    if word in _DATA_COMMANDS or (word == "CREATE" and _AS_QUERY.search(command_text(expression)) is not None):
        return word
    return None


def _replace_into(statement: exp.Command, body: str, ctx: Context) -> StatementLineage | None:
    """``REPLACE INTO``: an INSERT that may overwrite rows."""
    if not body.upper().startswith("INTO"):
        return None
    parsed = sqlglot.parse_one(f"INSERT {body}", read=ctx.profile.sqlglot_dialect)
    lineage = inserts.insert(parsed, ctx) if isinstance(parsed, exp.Insert) else None
    if lineage is not None:
        lineage.type = "replace"
    return lineage


_UNLOAD = re.compile(r"\s*\(\s*'((?:[^']|'')*)'\s*\)\s*TO\s+'([^']+)'", re.IGNORECASE)


def _unload(statement: exp.Command, body: str, ctx: Context) -> StatementLineage | None:
    """Redshift ``UNLOAD ('query') TO 's3://...'``: the query's rows land in files at the location."""
    match = _UNLOAD.match(body)
    if match is None:
        return None
    query = _query_in_text(match.group(1).replace("''", "'"), ctx)
    return StatementLineage("unload", [Write(match.group(2), read_tables(query, ctx, skip=()))], statement)


def _query_in_text(text: str, ctx: Context) -> exp.Expression:
    """A query a command holds as text, parsed and surveyed (its CTEs are not datasets) for ``read_tables``."""
    query = sqlglot.parse_one(text, read=ctx.profile.sqlglot_dialect)
    query = query.unnest() if isinstance(query, exp.Subquery) else query
    survey(query, ctx)
    return query


# The head of a CREATE that sqlglot could only keep as a command: modifiers, TABLE or VIEW, the name, the rest
_CREATE_HEAD = re.compile(
    r"\s*(?:OR\s+REPLACE\s+)?(?:(?:GLOBAL|LOCAL|TEMP|TEMPORARY|TRANSIENT|VOLATILE|MATERIALIZED|MULTISET|SECURE)\s+)*"
    r"(TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?([^\s(]+)(.*)",
    re.I | re.S,
)
_CLONE_OF = re.compile(r"\s*(?:SHALLOW\s+|DEEP\s+)?CLONE\s+([^\s;]+)", re.I)
_AS_QUERY = re.compile(r"\bAS\s*(\(?\s*(?:SELECT|WITH)\b.*)", re.I | re.S)
_WITH_DATA = re.compile(r"\s*WITH\s+(?:NO\s+)?DATA\b.*$", re.I | re.S)  # Teradata, Postgres: not the query


def _create_command(statement: exp.Command, body: str, ctx: Context) -> StatementLineage | None:
    """A CREATE TABLE / VIEW ... AS query or ... CLONE source that sqlglot kept as a command (Databricks'
    DEEP CLONE, ``WITH [NO] DATA``, other dialect clauses): the target and the query, read apart."""
    head = _CREATE_HEAD.match(body)
    if head is None:
        return None
    kind, name, rest = head.groups()
    target = exp.to_table(name, dialect=ctx.profile.sqlglot_dialect)
    if (clone := _CLONE_OF.match(rest)) is not None:
        return creates.clone(statement, target, exp.to_table(clone.group(1), dialect=ctx.profile.sqlglot_dialect), ctx)
    query_text = _AS_QUERY.search(rest)
    if query_text is None:
        return None
    query = _query_in_text(_WITH_DATA.sub("", query_text.group(1)), ctx)
    is_view = kind.upper() == "VIEW"
    write = Write(ctx.table_name(target), read_tables(query, ctx, skip=()), is_view, target, query)
    return StatementLineage("view" if is_view else "ctas", [write], statement)


_EXCHANGE = re.compile(r"\s*TABLE\s+(\S+)\s+EXCHANGE\s+PARTITION\s*\(.*\)\s*WITH\s+TABLE\s+(\S+)\s*$", re.I | re.S)


def _alter_command(statement: exp.Command, body: str, ctx: Context) -> StatementLineage | None:
    """The ALTER statements sqlglot keeps as commands: Hive's partition exchange, Oracle's schema switch."""
    if (session := _CURRENT_SCHEMA.match(body)) is not None:
        ctx.default_schema = ctx.profile.fold(session.group(1).strip('"'), session.group(1).startswith('"'))
        return None
    return _exchange_partition(statement, body, ctx)


# Oracle's `ALTER SESSION SET CURRENT_SCHEMA = dw`: a USE by another name
_CURRENT_SCHEMA = re.compile(r'\s*SESSION\s+SET\s+CURRENT_SCHEMA\s*=\s*("[^"]+"|\w+)\s*$', re.IGNORECASE)


def _exchange_partition(statement: exp.Command, body: str, ctx: Context) -> StatementLineage | None:
    match = _EXCHANGE.match(body)
    if match is None:
        return None
    target, source = (exp.to_table(name, dialect=ctx.profile.sqlglot_dialect) for name in match.groups())
    return creates.swapped(statement, target, source, ctx)


_COMMANDS: dict[str, Callable[[exp.Command, str, Context], StatementLineage | None]] = {
    "REPLACE": _replace_into,
    "UNLOAD": _unload,
    "ALTER": _alter_command,
    "CREATE": _create_command,
}
