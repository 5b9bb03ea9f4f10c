"""Statements that hold statements: control flow (IF, WHILE, ``BEGIN ... END``) and routines, whose SQL
bodies, parsed whole or written as a string (``AS $$ ... $$``, ``DO``, Snowflake's tasks, ``EXECUTE``
of a constant), are harvested like a script's statements; and a routine's parameter names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sqlglot import exp

from lineage_cli.harvest.sql.statements.opaque import command_text


def nested_statements(expression: exp.Expression, line: int) -> Iterator[tuple[exp.Expression, int]]:
    """``expression`` with its line, or, for control flow (``IF``, ``WHILE``, a ``BEGIN ... END`` block, a
    routine parsed whole), the statements it holds, each with the line of its first name.

    >>> import sqlglot
    >>> statement = sqlglot.parse_one("IF @n > 0 BEGIN INSERT INTO a.t SELECT * FROM a.s END", read="tsql")
    >>> [(inner.key, line) for inner, line in nested_statements(statement, 1)]
    [('insert', 1)]
    """
    held = _held(expression)
    if held is None:
        yield expression, line
        return
    for inner in held:
        yield from nested_statements(inner, _first_line(inner, line))


# Languages whose routine bodies are SQL: their statements are harvested like a script's.
_SQL_LANGUAGES = frozenset({"SQL", "PLPGSQL", "PLSQL", "TSQL"})


def routine_body(expression: exp.Expression) -> str | None:
    """The text of a SQL routine's body written as a string (Snowflake's ``LANGUAGE SQL AS $$ ... $$``,
    Postgres' ``AS $body$ ... $body$ LANGUAGE plpgsql``); None for anything else, or another language.

    >>> import sqlglot
    >>> routine_body(sqlglot.parse_one("CREATE FUNCTION f() RETURNS void AS $$ DELETE FROM t; $$ LANGUAGE sql",
    ...                                read="postgres"))
    ' DELETE FROM t; '
    """
    if isinstance(expression, exp.Command):
        return _command_body(expression)
    if not isinstance(expression, exp.Create) or (expression.kind or "").upper() not in _ROUTINE_KINDS:
        return None
    language = expression.find(exp.LanguageProperty)
    if language is not None and language.name.upper() not in _SQL_LANGUAGES:
        return None
    body = expression.expression
    if isinstance(body, exp.Block) and len(body.expressions) == 1:
        body = body.expressions[0]
    if isinstance(body, (exp.Heredoc, exp.RawString)) or (isinstance(body, exp.Literal) and body.is_string):
        return body.name
    return _body_in_a_setting(expression) if body is None else None


def _command_body(command: exp.Command) -> str | None:
    """The statements an opaque command holds: Postgres' anonymous ``DO [LANGUAGE plpgsql] $$ ... $$`` block,
    Snowflake's ``CREATE TASK t ... AS <statement>``, ``EXECUTE [IMMEDIATE] '<statement>'`` of a constant.

    >>> import sqlglot
    >>> _command_body(sqlglot.parse_one("DO $$ BEGIN DELETE FROM t; END $$", read="postgres"))
    ' BEGIN DELETE FROM t; END '
    """
    text = command_text(command)
    word = command.name.upper()
    if word == "DO" and (block := _DO_BLOCK.match(text)) is not None:
        language = (block.group(1) or block.group(4) or "plpgsql").upper()
        return block.group(3) if language in _SQL_LANGUAGES else None
    if word == "CREATE" and (task := _TASK.match(text)) is not None:
        return task.group(1)
    if word == "EXECUTE" and (literal := _EXECUTED.match(text)) is not None:
        return literal.group(1)  # dynamic SQL given as one constant string: it runs as written
    return None


# `EXECUTE [IMMEDIATE] 'INSERT ...'` (a string without doubled quotes: it is found again as written in the file)
_EXECUTED = re.compile(r"\s*(?:IMMEDIATE\s+)?'([^']*)'\s*$", re.I)
_DO_BLOCK = re.compile(r"\s*(?:LANGUAGE\s+(\w+)\s+)?\$(\w*)\$(.*)\$\2\$\s*(?:LANGUAGE\s+(\w+))?\s*$", re.I | re.S)
_TASK = re.compile(
    r"\s*(?:OR\s+(?:REPLACE|ALTER)\s+)?TASK\b.*?\bAS\s+((?:INSERT|MERGE|UPDATE|DELETE|COPY)\b.*)", re.I | re.S
)


def _body_in_a_setting(routine: exp.Create) -> str | None:
    """Postgres' ``SET search_path = public AS $$ ... $$``: sqlglot reads the body as the alias of the setting's
    value (a name no one writes: it holds statements)."""
    properties = routine.args.get("properties")
    for alias in properties.find_all(exp.Alias) if properties is not None else ():
        name = alias.args.get("alias")
        if isinstance(name, exp.Identifier) and ";" in name.name:
            return name.name
    return None


_ROUTINE_KINDS = frozenset({"PROCEDURE", "FUNCTION"})


def routine_parameters(routine: exp.Expression) -> frozenset[str]:
    """The parameter names of a ``CREATE FUNCTION f(p_day DATE, ...)``, as written (lower case).

    >>> import sqlglot
    >>> sql = "CREATE FUNCTION f(p_day date, n int) RETURNS int AS $$ SELECT 1 $$"
    >>> sorted(routine_parameters(sqlglot.parse_one(sql, read="postgres")))
    ['n', 'p_day']
    """
    signature = routine.this if isinstance(routine, exp.Create) else None
    definitions = signature.expressions if isinstance(signature, exp.UserDefinedFunction) else []
    return frozenset(d.name.lower() for d in definitions if isinstance(d, exp.ColumnDef) and d.name)


def _held(expression: exp.Expression) -> list[exp.Expression] | None:
    """The statements control flow holds (sqlglot parses T-SQL's IF and WHILE, and a routine whose body it
    can read, into these); None for anything else."""
    if isinstance(expression, exp.Block):
        parts = expression.expressions
    elif isinstance(expression, exp.IfBlock):
        parts = [expression.args.get("true"), expression.args.get("false")]
    elif isinstance(expression, exp.WhileBlock):
        parts = [expression.args.get("body")]
    elif isinstance(expression, exp.Create) and isinstance(expression.expression, exp.Block):
        parts = [expression.expression]
    else:
        return None
    return [part for part in parts if isinstance(part, exp.Expression)]


def _first_line(expression: exp.Expression, default: int) -> int:
    name = expression.find(exp.Identifier)
    return name.meta.get("line", default) if name is not None else default
