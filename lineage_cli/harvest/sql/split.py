"""Split a SQL script into statements and parse each on its own.

One broken statement must not cost the rest of the file, so the script is tokenized
once, cut at top-level semicolons, and every piece is parsed separately.  Each piece
keeps the line of its first token, which becomes the statement's provenance.

A routine's body is cut like any script; a piece starts at its statement, not at the routine's
header or a block's BEGIN (``_opened_block``).  Where a dialect needs no semicolons (T-SQL), `GO`
lines end batches, lines that open control flow start new pieces, and a parse that stops where a
statement begins is cut there (``_parse_unterminated``).  SQL*Plus's `/` line ends a statement too
(``_slash_lines_as_semicolons``).  What sqlglot cannot read as written but means plain SQL (T-SQL's
`SET a += b`, Hive's `MAP ... USING` and interval literals, SQL*Plus and Hive CLI commands, Teradata's
column phrases) is rewritten first, positions kept, by ``rewrites.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.dialects.hive import Hive
from sqlglot.dialects.oracle import Oracle
from sqlglot.dialects.tsql import TSQL
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from lineage_cli.harvest.sql.loops import OpenLoops
from lineage_cli.harvest.sql.messages import parse_error, parser_failure, token_error
from lineage_cli.harvest.sql.rewrites import (
    COMPOUND_ASSIGNMENT,
    KEYWORDLESS_INTERVAL,
    SCRIPT_CLAUSE,
    TABLE_FUNCTION,
    compound_assignments,
    interval_literals,
    notebook_cells,
    script_clauses,
    table_functions_as_sources,
    without_client_commands,
    without_column_phrases,
    without_delimiter_commands,
    without_partition_guard,
    without_sqlplus_commands,
    without_storage_clauses,
)


@dataclass(slots=True)
class ParsedStatement:
    """One statement: its AST, or the error that stopped its parse."""

    line: int
    expression: exp.Expression | None = None
    error: str | None = None
    error_line: int | None = None
    error_col: int | None = None
    tokens: list[Token] | None = None  # a statement whose parse failed: its tokens, to read its tables from
    # the text the statement was cut from and where in it the statement is, from its first token to its last
    source: str = ""
    span: tuple[int, int] = (0, 0)

    @property
    def text(self) -> str:
        """The statement as the splitter read it (sliced when asked: a T-SQL batch is parsed again as it is cut,
        and each try at its rest must not copy the rest)."""
        return self.source[self.span[0] : self.span[1]]

    # the names a routine whose body (a string) holds the statement gives it: its parameters; None outside
    routine_parameters: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class Limits:
    """Statements beyond these are reported and skipped: sqlglot recurses per nesting level,
    and a generated 50,000-token statement can take minutes or exhaust the stack."""

    max_tokens: int = 200_000
    max_depth: int = 200


DEFAULT_LIMITS = Limits()


def parse_script(
    sql: str,
    dialect: str,
    limits: Limits = DEFAULT_LIMITS,
    keep: Callable[[list[str]], bool] | None = None,
    optional_semicolons: bool = False,
    client_commands: tuple[str, ...] = (),
    unread_statements: tuple[tuple[str, ...], ...] = (),
) -> Iterator[ParsedStatement]:
    """Parse every statement of ``sql``; yield one ``ParsedStatement`` per statement.

    ``keep``, when given, sees each statement's upper-cased token texts and decides whether
    to parse it at all: a scan for DDL need not parse the DML around it.  With
    ``optional_semicolons`` (T-SQL), a `GO` line ends a batch and a statement ends where the
    parser finds the next one beginning.  A SQL*Plus `/` line ends the statement before it.  A line that starts a
    statement with one of ``client_commands`` (Hive's ``dfs``, ``source``) is the client's, not SQL: skipped.  A
    statement that begins with the words of one of ``unread_statements`` moves no data and sqlglot does not read
    it (Impala's ``COMPUTE STATS t``): skipped whole, where semicolons end statements.

    >>> [s.line for s in parse_script("SELECT 1;\\n\\nSELECT 2", "hive")]
    [1, 3]
    >>> broken = list(parse_script("SELECT (1;\\nSELECT 2", ""))
    >>> (broken[0].error is not None, broken[1].expression.sql())
    (True, 'SELECT 2')
    >>> list(parse_script("SELECT " + "(" * 300 + "1" + ")" * 300, ""))[0].error
    'statement nests 300 levels deep (limit 200); skipped'
    """
    engine = Dialect.get_or_raise(dialect)
    sql = without_client_commands(without_delimiter_commands(notebook_cells(sql)), client_commands)
    if isinstance(engine, Oracle):
        sql = without_sqlplus_commands(sql)
    try:
        tokens = _unswallowed(engine.tokenize(sql), sql, engine, commands_end_lines=optional_semicolons)
    except TokenError:
        yield from _parse_pieces_separately(sql, engine, limits)
        return
    if optional_semicolons:
        tokens = _go_as_semicolons(tokens)
    if isinstance(engine, TSQL) and COMPOUND_ASSIGNMENT.search(sql):
        tokens = compound_assignments(tokens)
    lowered = sql.lower() if isinstance(engine, Hive) else ""
    if isinstance(engine, Hive) and SCRIPT_CLAUSE.may_hold(lowered):  # Spark and Databricks too
        tokens = script_clauses(tokens)
    if type(engine) is Hive:  # Spark's intervals need their keyword: `SELECT 1 day` names a column day
        if KEYWORDLESS_INTERVAL.may_hold(lowered):
            tokens = interval_literals(tokens)
        if TABLE_FUNCTION.may_hold(lowered):
            tokens = table_functions_as_sources(tokens)
    tokens = without_column_phrases(_slash_lines_as_semicolons(tokens, sql, engine), engine)
    declaring = False  # in a DECLARE section (Snowflake, PL/SQL): `name TYPE;` lines up to its BEGIN
    loops = OpenLoops(engine, sql)
    for chunk in _split_tokens(tokens):
        if not (chunk := _unprefixed(chunk)):
            continue
        if optional_semicolons:
            # A batch holds many statements and blocks (`END ELSE BEGIN ...`): it is cut at its lines before
            # any piece of it is judged by its first word.
            for piece in _control_flow_pieces(chunk):
                if keep is None or keep(_words(piece)):
                    yield from _parse_unterminated(piece, sql, engine, limits)
            continue
        if _begins_with_any(chunk, unread_statements):  # (a chunk is one statement here: it ends at a semicolon)
            continue
        first = chunk[0].text.upper()
        if declaring and first not in _FLOW_OPENERS and first not in _OPENED_STARTS:
            yield from (_declared(chunk[0].line, [name]) for name in loops.see(chunk))  # CURSOR c (p INT) IS ...
            yield _declared(chunk[0].line, chunk)  # one more `name TYPE [DEFAULT x];` of a declare section
            continue
        opens_declarations = _opens_declarations(chunk)
        declaring = first == "DECLARE" or opens_declarations
        if parameters := _routine_parameters(chunk):  # MySQL's `CREATE PROCEDURE p(IN d DATE) BEGIN ...`
            yield _declared(chunk[0].line, parameters)
        if opens_declarations and (declaration := _header_declaration(chunk)):
            yield _declared(chunk[0].line, declaration)  # PL/SQL's `PROCEDURE p IS v NUMBER;`: its first local
        for variable in loops.see(chunk):  # FOR rec IN (SELECT ...) LOOP: its record, a cursor's parameters
            yield _declared(chunk[0].line, [variable])
        if (piece := _opened_block(chunk, _OPENED_STARTS)) and (keep is None or keep(_words(piece))):
            statement = _parse_chunk(piece, sql, engine, limits)
            statement.expression = loops.grafted(statement.expression)  # what `rec.id` in the loop reads
            yield statement


# A tokenizer reads a command that begins a statement with all up to the next semicolon as one string.  Some
# dialects count block words among their commands (BigQuery BEGIN, EXCEPTION and its loops, T-SQL END): the string then
# holds the statements of the block (`END ELSE BEGIN INSERT ...`).
_SWALLOWING = frozenset({"BEGIN", "EXCEPTION", "END", "LOOP", "WHILE", "REPEAT"})


def _unswallowed(tokens: list[Token], sql: str, engine: Dialect, commands_end_lines: bool = False) -> list[Token]:
    """``tokens`` with the statements a command swallowed tokenized again: all it took after a block word; with
    ``commands_end_lines`` (semicolons optional: `PRINT 'x'` or `GO` ends at its line), from the first line after
    its own that begins a statement, the text before staying the command's string.

    >>> engine, sql = Dialect.get_or_raise("tsql"), "SELECT 1;\\nEND ELSE BEGIN INSERT INTO t SELECT 2;\\n"
    >>> sql += "PRINT 'x'\\nDELETE t;"
    >>> " ".join(t.text for t in _unswallowed(engine.tokenize(sql), sql, engine, commands_end_lines=True))
    "SELECT 1 ; END ELSE BEGIN INSERT INTO t SELECT 2 ; PRINT 'x' DELETE t ;"
    """
    commands, keywords = engine.tokenizer_class.COMMANDS, engine.tokenizer_class.KEYWORDS
    if not commands_end_lines and all(keywords.get(word) not in commands for word in _SWALLOWING):
        return tokens  # (most dialects: no pass over the tokens)
    result: list[Token] = []
    pending = tokens[::-1]  # a stack: what a string held is read next, and may itself begin with a command
    while pending:
        token = pending.pop()
        result.append(token)
        if token.token_type not in commands or not (commands_end_lines or token.text.upper() in _SWALLOWING):
            continue
        end = pending[-2].start if len(pending) > 1 else len(sql)
        if pending and _swallowed(pending[-1], sql[token.end + 1 : end]):
            held = _tokenized_after(token, sql[token.end + 1 : end], engine)
            if (cut := _held_statements(token, held)) is not None:
                pending.pop()
                if cut:
                    result.append(_as_string(held[0], held[cut - 1], sql))
                pending.extend(reversed(held[cut:]))
    return result


def _held_statements(command: Token, held: list[Token]) -> int | None:
    """Where the statements in ``held``, what ``command`` swallowed, begin: all of it after a block word, else
    the first line after the command's own that begins a statement; None if it holds none."""
    if command.text.upper() in _SWALLOWING:
        return 0
    cut = _next_line_statement([command, *held])
    return cut - 1 if cut is not None else None


def _swallowed(string: Token, text: str) -> bool:
    """Whether ``string`` is ``text`` swallowed whole (a string literal's text is without its quotes)."""
    return string.token_type is TokenType.STRING and string.text == text.strip()


def _as_string(first: Token, last: Token, sql: str) -> Token:
    """The tokens from ``first`` to ``last`` as one string, as a command's argument is read."""
    return Token(TokenType.STRING, sql[first.start : last.end + 1], last.line, last.col, first.start, last.end)


def _tokenized_after(token: Token, text: str, engine: Dialect) -> list[Token]:
    """The tokens of ``text``, which follows ``token`` (a word on one line) in the script, with the script's lines,
    columns and offsets: only ``text`` is read again, however long the script before it."""
    offset = token.end + 1
    return [
        Token(
            each.token_type,
            each.text,
            each.line + token.line - 1,
            each.col + token.col if each.line == 1 else each.col,
            each.start + offset,
            each.end + offset,
            comments=each.comments,
        )
        for each in engine.tokenize(text)
    ]


# A line holding only `/`: looked for in the text first, so a script without one costs no pass over its tokens
_SLASH_LINE = re.compile(r"^[ \t]*/[ \t]*(?:--[^\n]*)?$", re.MULTILINE)


def _slash_lines_as_semicolons(tokens: list[Token], sql: str, engine: Dialect) -> list[Token]:
    """``tokens`` with each `/` that stands alone on its line and ends a statement (SQL*Plus runs the buffer
    there) as a semicolon.

    >>> def run(sql, dialect="oracle"):
    ...     tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    ...     return " ".join(t.text for t in _slash_lines_as_semicolons(tokens, sql, Dialect.get_or_raise(dialect)))
    >>> run("INSERT INTO a SELECT 1\\n/"), run("SELECT a\\n/\\nb FROM t", "postgres"), run("SELECT 1;\\n/", "postgres")
    ('INSERT INTO a SELECT 1 ;', 'SELECT a / b FROM t', 'SELECT 1 ; ;')
    """
    # Oracle's tools (SQL*Plus, SQLcl, SQL Developer) read such a line as the run command wherever it stands,
    # even inside an expression, so for Oracle it always ends the statement.  Elsewhere the same line may be a
    # division written across lines (`SELECT a` / `/` / `b`): there it ends nothing but a complete statement,
    # after a semicolon, where a division cannot stand (a script for SQL*Plus, read with another dialect).
    if not _SLASH_LINE.search(sql):
        return tokens
    always = isinstance(engine, Oracle)
    marked = list(tokens)
    for index, token in enumerate(tokens):
        after_statement = index == 0 or tokens[index - 1].token_type is TokenType.SEMICOLON
        if token.token_type is TokenType.SLASH and (always or after_statement) and _alone_on_its_line(tokens, index):
            marked[index] = _as_semicolon(token)
    return marked


def _alone_on_its_line(tokens: list[Token], index: int) -> bool:
    token = tokens[index]
    alone_before = index == 0 or tokens[index - 1].line < token.line
    return alone_before and (index + 1 == len(tokens) or tokens[index + 1].line > token.line)


def _as_semicolon(token: Token) -> Token:
    return Token(TokenType.SEMICOLON, ";", token.line, token.col, token.start, token.end)


def _over_limits(chunk: list[Token], limits: Limits) -> str | None:
    if len(chunk) > limits.max_tokens:
        return f"statement has {len(chunk)} tokens (limit {limits.max_tokens}); skipped"
    types = [token.token_type for token in chunk]
    if types.count(TokenType.L_PAREN) <= limits.max_depth:  # cheap bound: depth never exceeds the count
        return None
    depth = deepest = 0
    for kind in types:
        if kind is TokenType.L_PAREN:
            depth += 1
            deepest = max(deepest, depth)
        elif kind is TokenType.R_PAREN:
            depth -= 1
    if deepest > limits.max_depth:
        return f"statement nests {deepest} levels deep (limit {limits.max_depth}); skipped"
    return None


def _split_tokens(tokens: list[Token]) -> Iterator[list[Token]]:
    """The pieces of ``tokens`` between semicolons, empty ones left out."""
    semicolon = TokenType.SEMICOLON
    cuts = [index for index, token in enumerate(tokens) if token.token_type is semicolon]
    start = 0
    for cut in [*cuts, len(tokens)]:
        if cut > start:
            yield tokens[start:cut]
        start = cut + 1


# The body of a procedure, function or trigger is cut at its semicolons like any script, so its first
# statement shares a piece with the routine's header (`CREATE PROCEDURE p() AS BEGIN INSERT ...`), and a
# statement inside control flow with what opens it (`BEGIN TRY INSERT ...`, PL/SQL's `IF c THEN UPDATE ...`).
_ROUTINES = frozenset({"PROCEDURE", "PROC", "FUNCTION", "TRIGGER", "PACKAGE"})
# A routine declared inside an Oracle package body (or a PL/SQL declare section): a header without CREATE
_MEMBER_ROUTINES = frozenset({"PROCEDURE", "FUNCTION"})
_BLOCK_KEYWORDS = frozenset({"TRY", "CATCH", "ATOMIC"})  # BEGIN TRY / BEGIN CATCH (T-SQL), BEGIN ATOMIC
_TRANSACTIONS = frozenset({"TRAN", "TRANSACTION", "WORK", "DISTRIBUTED"})  # BEGIN TRAN is no block
_CONDITIONS = frozenset({"IF", "ELSIF", "ELSEIF", "WHEN"})  # ... THEN <statement>
_OPENERS = frozenset({"ELSE", "LOOP", "EXCEPTION", "REPEAT"})  # <opener> <statement>
# What a header or flow begins with; T-SQL writes `END ELSE BEGIN` and `END TRY BEGIN CATCH` on one line.
_LOOPS = frozenset({"FOR", "FOREACH", "WHILE"})  # ... LOOP (PL/SQL, PL/pgSQL's FOREACH v IN ARRAY a) or ... DO
_FLOW_OPENERS = _CONDITIONS | _OPENERS | _MEMBER_ROUTINES | _LOOPS | {"CREATE", "BEGIN", "END"}
# Procedural code with no statement of its own: PL/SQL, Snowflake and BigQuery scripting, MySQL routines
# (`END IF`, `EXIT WHEN ...`, `RAISE`, `v := ...`, plpgsql's `GET DIAGNOSTICS n = ROW_COUNT`).  A piece of
# it is passed over, as SET or DROP are, rather than reported as SQL that does not parse.
_PROCEDURAL = frozenset(
    {
        "END",
        "EXIT",
        "RAISE",
        "RETURN",
        "CONTINUE",
        "LEAVE",
        "ITERATE",
        "UNTIL",
        "OPEN",
        "FETCH",
        "CLOSE",
        "GET",
    }
)
# The statements worth a piece of their own once the control flow before them is gone.
_DATA_STATEMENTS = frozenset(
    {"INSERT", "UPDATE", "DELETE", "MERGE", "WITH", "SELECT", "CREATE", "REPLACE", "COPY", "LOAD", "UNLOAD"}
)
# ... and the declarations of a block, whose names are variables, not columns
_OPENED_STARTS = _DATA_STATEMENTS | {"DECLARE"}


def _opened_block(chunk: list[Token], starts: frozenset[str]) -> list[Token]:
    """The statement in ``chunk`` past the routine header or control flow before it; ``chunk`` itself when
    nothing opens it; nothing for procedural code that holds no statement (one of ``starts``).

    >>> def opened(sql, dialect="tsql"):
    ...     engine = Dialect.get_or_raise(dialect)
    ...     tokens = _unswallowed(engine.tokenize(sql), sql, engine)
    ...     return " ".join(t.text for t in _opened_block(tokens, _DATA_STATEMENTS))
    >>> opened("CREATE PROCEDURE p AS BEGIN INSERT INTO t SELECT 1"), opened("BEGIN TRAN")
    ('INSERT INTO t SELECT 1', 'BEGIN TRAN')
    >>> opened("ELSIF n > 0 THEN UPDATE t SET a = 1", "oracle"), opened("LOOP n := n + 1", "oracle"), opened("END IF")
    ('UPDATE t SET a = 1', '', '')
    >>> opened("END ELSE BEGIN DELETE FROM t"), opened("IF 1 = 1 MERGE t USING s ON a = b WHEN MATCHED THEN DELETE")
    ('DELETE FROM t', 'IF 1 = 1 MERGE t USING s ON a = b WHEN MATCHED THEN DELETE')
    >>> opened("BEGIN <<outer>> FOREACH v IN ARRAY a LOOP DELETE FROM t WHERE id = v", "postgres")
    'DELETE FROM t WHERE id = v'
    """
    piece = chunk
    while (opened := _past_control_flow(piece)) is not None:
        piece = opened
    if piece is not chunk:
        return piece if piece and piece[0].text.upper() in starts else []
    return [] if _is_procedural(chunk) else chunk


def _past_control_flow(piece: list[Token]) -> list[Token] | None:
    """``piece`` without the routine header or the control flow it begins with; None if it begins with neither."""
    if label := _label_length(piece):
        return piece[label:]
    first = piece[0].text.upper() if piece else ""
    if first not in _FLOW_OPENERS or (first == "CREATE" and not _is_routine_header(piece)):
        return None  # (the common case, decided without reading the whole piece)
    words = _words(piece)
    if first == "CREATE":
        body = words.index("BEGIN") + 1 if "BEGIN" in words else _single_statement_body(words)
        if body:
            return piece[body:]
        # without either, the body is a string (AS $$ ... $$, read by the harvester), or it comes in later
        # pieces after declarations (`CREATE PROCEDURE p AS v NUMBER;`, a package body): nothing to read here
        return [] if _opens_declarations(piece) else None
    if first in _MEMBER_ROUTINES:  # `PROCEDURE p(x DATE) IS [declarations] BEGIN ...` in a package body
        body = words.index("BEGIN") + 1 if "BEGIN" in words else _single_statement_body(words)
        return piece[body:] if body else []
    if first == "BEGIN" and (len(piece) == 1 or words[1] in _TRANSACTIONS):
        return None
    if first == "BEGIN":
        return piece[_past_block_keywords(words) :]
    if first == "END":  # what follows a block's end on its line (`END ELSE BEGIN`) or on the next opens the next
        after = _past_block_keywords(words)
        opens = after < len(piece) and (words[after] in ("ELSE", "BEGIN") or piece[after].line > piece[0].line)
        return piece[after:] if opens else None
    if first in _CONDITIONS and (then := _condition_then(piece)) is not None:
        return piece[then + 1 :]
    if first in _LOOPS and "LOOP" in words:  # PL/SQL and PL/pgSQL loops (T-SQL's WHILE is sqlglot's to read)
        return piece[words.index("LOOP") + 1 :]
    if first in _LOOPS and "DO" in words:  # BigQuery, Snowflake and MySQL loops
        return piece[words.index("DO") + 1 :]
    return piece[1:] if first in _OPENERS else None


def _label_length(piece: list[Token]) -> int:
    """How many tokens the ``<<name>>`` labels that ``piece`` begins with take (PL/SQL, PL/pgSQL: a label names
    the block or loop after it, which is read as if unlabelled); 0 without one.  The tokenizer gives `<`, `<`,
    the name (a keyword, like `outer`, too), `>`, `>`: no statement begins with a comparison."""
    length = 0
    while _is_label([token.text for token in piece[length : length + 5]]):
        length += 5
    return length


def _is_label(texts: list[str]) -> bool:
    return len(texts) == 5 and texts[:2] == ["<", "<"] and texts[3:] == [">", ">"] and texts[2].isidentifier()


# What an Oracle type body's method says before PROCEDURE / FUNCTION (`MAP MEMBER FUNCTION`, `CONSTRUCTOR FUNCTION`)
_METHOD_QUALIFIERS = frozenset({"MEMBER", "STATIC", "CONSTRUCTOR", "MAP", "ORDER", "OVERRIDING", "FINAL"})


def _unprefixed(chunk: list[Token]) -> list[Token]:
    """``chunk`` without the labels it begins with, and without the qualifiers of a type body's method, which
    is then read as a package body's member routine (``MEMBER PROCEDURE p IS`` as ``PROCEDURE p IS``).

    >>> tokens = Dialect.get_or_raise("oracle").tokenize("<<l>> OVERRIDING MEMBER FUNCTION f RETURN NUMBER IS")
    >>> " ".join(t.text for t in _unprefixed(tokens))
    'FUNCTION f RETURN NUMBER IS'
    """
    chunk = chunk[_label_length(chunk) :]
    qualifiers = 0
    while qualifiers < len(chunk) and chunk[qualifiers].text.upper() in _METHOD_QUALIFIERS:
        qualifiers += 1
    if qualifiers and qualifiers < len(chunk) and chunk[qualifiers].text.upper() in _MEMBER_ROUTINES:
        return chunk[qualifiers:]
    return chunk


def _past_block_keywords(words: list[str]) -> int:
    """Where the block that ``words`` begin or end (`BEGIN TRY`, `END CATCH`, `BEGIN`) has its next word."""
    after = 1
    while after < len(words) and words[after] in _BLOCK_KEYWORDS:
        after += 1
    return after


# Statements with a THEN of their own (`WHEN MATCHED THEN UPDATE`), and the block a T-SQL IF opens
_OWN_THEN = frozenset({"MERGE", "BEGIN"})


def _condition_then(piece: list[Token]) -> int | None:
    """The index of the THEN that ends the condition ``piece`` begins with (`IF c THEN`), if it has one: the
    first THEN outside parentheses and CASE, unless a MERGE or a block comes first (T-SQL's IF has no THEN:
    a THEN after its statement belongs to that statement)."""
    case = 0
    for index, token in _outside_parentheses(piece):
        word = token.text.upper()
        if word == "THEN" and case == 0:
            return index
        if word in _OWN_THEN:
            return None
        case += (word == "CASE") - (word == "END" and case > 0)
    return None


def _words(tokens: list[Token]) -> list[str]:
    return [token.text.upper() for token in tokens]


def _begins_with_any(tokens: list[Token], beginnings: tuple[tuple[str, ...], ...]) -> bool:
    """Whether the statement's first words are those of one of ``beginnings`` (upper-cased words).

    >>> tokens = Dialect.get_or_raise("hive").tokenize("compute  incremental\\n stats t")
    >>> _begins_with_any(tokens, (("COMPUTE", "STATS"), ("COMPUTE", "INCREMENTAL", "STATS")))
    True
    >>> _begins_with_any(tokens, (("COMPUTE", "STATS"),))
    False
    """
    return any(_words(tokens[: len(words)]) == list(words) for words in beginnings)


def _single_statement_body(words: list[str]) -> int:
    """Where a routine without BEGIN has its body, if that is a data statement (`CREATE PROC p AS INSERT ...`)."""
    return next(
        (i + 1 for i, word in enumerate(words[:-1]) if word in ("AS", "IS") and words[i + 1] in _DATA_STATEMENTS), 0
    )


def _is_procedural(piece: list[Token]) -> bool:
    return piece[0].text.upper() in _PROCEDURAL or (len(piece) > 1 and piece[1].text == ":=")


# -- statements without semicolons (T-SQL) ---------------------------------------------------------------

# Where a statement may begin: a parse that fails on one of these, outside parentheses, has found the
# end of the statement before it (T-SQL needs no semicolon there).
_STATEMENT_STARTS = frozenset(
    {
        "INSERT", "UPDATE", "DELETE", "MERGE", "SELECT", "WITH", "CREATE", "ALTER", "DROP", "TRUNCATE", "USE",
        "DECLARE", "SET", "EXEC", "EXECUTE", "IF", "WHILE", "BEGIN", "END", "PRINT", "RETURN", "GRANT", "THROW",
        "COMMIT", "ROLLBACK", "SAVE", "WAITFOR", "DEALLOCATE", "BREAK", "CONTINUE",
    }
)  # fmt: skip
# Words that begin a line only to begin a statement or a block (outside parentheses and CASE): without
# semicolons, a piece is cut before each, so that control flow never hides inside an opaque command.
# (INSERT, SELECT, SET, EXEC ... may continue the line before them: the parser finds those ends.)
_LINE_STARTS = frozenset(
    {"IF", "WHILE", "BEGIN", "END", "ELSE", "TRUNCATE", "DECLARE", "PRINT", "RETURN", "USE", "CREATE", "ALTER",
     "DROP", "THROW", "RAISERROR", "GRANT", "COMMIT", "ROLLBACK"}
)  # fmt: skip
# With semicolons optional, whatever follows a routine's BEGIN is a statement of its own (nothing else
# would end it).
_UNTERMINATED_STARTS = _STATEMENT_STARTS | _DATA_STATEMENTS
# Reserved words only a statement begins with, unless an object word comes before (DROP TABLE IF EXISTS)
_CONTROL_FLOW = frozenset({"IF", "WHILE"})
_OBJECT_WORDS = frozenset({"TABLE", "VIEW", "PROCEDURE", "PROC", "FUNCTION", "INDEX", "SCHEMA", "DATABASE", "TRIGGER"})


def _go_as_semicolons(tokens: list[Token]) -> list[Token]:
    """``tokens`` with each `GO` that stands alone on its line (T-SQL's batch separator) as a semicolon."""
    marked = list(tokens)
    for index, token in enumerate(tokens):
        if token.text.upper() == "GO" and _alone_on_its_line(tokens, index):
            marked[index] = _as_semicolon(token)
    return marked


def _control_flow_pieces(chunk: list[Token]) -> Iterator[list[Token]]:
    """``chunk`` cut before every line that begins with one of ``_LINE_STARTS``, each piece from the
    statement it holds (``_opened_block``), pieces that hold none left out."""
    case = start = 0
    for index, token in _outside_parentheses(chunk):
        word = token.text.upper()
        if index > start and case == 0 and word in _LINE_STARTS and chunk[index - 1].line < token.line:
            yield from _opened(chunk[start:index])
            start = index
        case += (word == "CASE") - (word == "END" and case > 0)
    yield from _opened(chunk[start:])


def _opened(piece: list[Token]) -> Iterator[list[Token]]:
    opened = _opened_block(piece, _UNTERMINATED_STARTS)
    if opened:
        yield opened


def _parse_unterminated(chunk: list[Token], sql: str, engine: Dialect, limits: Limits) -> Iterator[ParsedStatement]:
    """The statements of ``chunk``, which need not end with semicolons: each failed parse that stopped at
    the start of a statement is cut there, and both sides parsed again (a loop: a batch may hold thousands)."""
    rest = chunk
    while True:
        statement = _parse_chunk(rest, sql, engine, limits)
        if statement.error is not None:
            cut = _next_statement(rest, statement)
        elif isinstance(statement.expression, exp.Command):
            cut = _next_line_statement(rest)  # an opaque command runs to the end of the piece: cut it short
        else:
            cut = None
        if cut is None:
            yield statement
            return
        yield _parse_chunk(rest[:cut], sql, engine, limits)
        rest = _opened_block(rest[cut:], _UNTERMINATED_STARTS)
        if not rest:
            return


def _next_statement(chunk: list[Token], failed: ParsedStatement) -> int | None:
    """Where the statement after the first one in ``chunk`` begins, judged by where ``failed``'s parse
    stopped: at that token if a statement may begin there; else at the last token before it that begins a
    statement and a line (not one that continues the statement: `UPDATE t` / `SET ...`), or is an ``IF`` /
    ``WHILE`` the parser took for an alias (T-SQL reserves both); else, when ``chunk`` is an ``IF`` or
    ``WHILE`` whose body sqlglot cannot read, where the body begins; else at the first token after the
    failure that begins a statement and a line (the broken statement ends there, and what follows is read on
    its own)."""
    before = None
    continuations, continued = _CONTINUATIONS.get(chunk[0].text.upper(), frozenset()), False
    for index, token in _outside_parentheses(chunk):
        word = token.text.upper()
        if index and token.line == failed.error_line and _start_col(token) == failed.error_col:
            if word in _STATEMENT_STARTS:
                return index
            if before is not None:
                return before
            body = _control_body(chunk)
            return body if body is not None else _line_statement_after(chunk, index)
        if index and (
            (word in _CONTROL_FLOW and chunk[index - 1].text.upper() not in _OBJECT_WORDS)
            or (_begins_line_statement(chunk, index) and (continued or word not in continuations))
        ):
            before = index
        continued = continued or (index > 0 and word in continuations)
    return None


# Statement words that, the first time they stand in a statement beginning with the key, continue it: cut there,
# a broken `UPDATE t` / `SET t.x = ...` would become an UPDATE of the alias `t` and an opaque SET.
_CONTINUATIONS = {"UPDATE": frozenset({"SET"}), "INSERT": frozenset({"SELECT", "WITH", "EXEC", "EXECUTE"})}


def _control_body(chunk: list[Token]) -> int | None:
    """Where the statement of ``IF cond <statement>`` / ``WHILE cond <statement>`` begins (its condition's
    subqueries are in parentheses), if ``chunk`` is one."""
    if chunk[0].text.upper() not in _CONTROL_FLOW:
        return None
    starts = (i for i, token in _outside_parentheses(chunk) if i and token.text.upper() in _DATA_STATEMENTS)
    return next(starts, None)


def _next_line_statement(chunk: list[Token]) -> int | None:
    """The first token after the first line of ``chunk`` that begins a line and a statement, outside
    parentheses: where an opaque command (``SET NOCOUNT ON``, ``EXEC p``, ``PRINT 'x'``) ends."""
    return _line_statement_after(chunk, 0)


def _line_statement_after(chunk: list[Token], after: int) -> int | None:
    """The first token of ``chunk`` past index ``after`` that begins a line and a statement, outside parentheses."""
    return next(
        (index for index, _ in _outside_parentheses(chunk) if index > after and _begins_line_statement(chunk, index)),
        None,
    )


def _begins_line_statement(chunk: list[Token], index: int) -> bool:
    """Whether ``chunk[index]`` begins a line and a statement: a statement word, not one that a THEN before it
    makes a branch of the statement (a MERGE's `WHEN MATCHED THEN` / `UPDATE SET ...`)."""
    before, token = chunk[index - 1], chunk[index]
    return before.line < token.line and token.text.upper() in _STATEMENT_STARTS and before.text.upper() != "THEN"


def _outside_parentheses(chunk: list[Token]) -> Iterator[tuple[int, Token]]:
    """The tokens of ``chunk`` (with their index) that no parenthesis encloses."""
    depth = 0
    for index, token in enumerate(chunk):
        if depth == 0:
            yield index, token
        depth += (token.token_type is TokenType.L_PAREN) - (token.token_type is TokenType.R_PAREN)


def _start_col(token: Token) -> int:
    return token.col - len(token.text) + 1


# -- one piece ---------------------------------------------------------------------------------------------


def _parse_chunk(chunk: list[Token], sql: str, engine: Dialect, limits: Limits) -> ParsedStatement:
    statement = ParsedStatement(line=chunk[0].line, source=sql, span=_span(chunk))
    statement.error = _over_limits(chunk, limits)
    if statement.error is not None:
        return statement
    parser = engine.parser(error_level=ErrorLevel.RAISE)
    try:
        tokens = without_storage_clauses(without_partition_guard(chunk))
        expressions = [e for e in parser.parse(tokens, sql) if e is not None]
    except ParseError as error:
        if chunk[0].text.upper() == "DECLARE":  # MySQL's `DECLARE a, b INT`, which sqlglot does not read
            return _declared(chunk[0].line, chunk[1:])
        _record_parse_error(statement, error, chunk[0])
        statement.tokens = chunk
        return statement
    except (RecursionError, ValueError, TypeError, AttributeError) as error:
        # sqlglot has crashed on odd input before; a crash here is one bad statement, not a bad run, and one
        # it cannot read: its tables are recovered from its tokens like those of a statement that fails to parse.
        statement.error, statement.tokens = parser_failure(error), chunk
        return statement
    statement.expression = expressions[0] if expressions else None
    declaration = chunk[0].text.upper() == "DECLARE" and not isinstance(statement.expression, exp.Declare)
    cursor = "CURSOR" in _words(chunk[:4])  # DECLARE c CURSOR FOR SELECT ...: the query is the cursor's
    if declaration and (cursor or _next_line_statement(chunk) is None):  # (else T-SQL left out a `;`)
        return _declared(chunk[0].line, chunk[1:])  # plpgsql's DECLARE section, kept as a Command
    return statement


def _span(chunk: list[Token]) -> tuple[int, int]:
    """Where in its text ``chunk`` is, from its first token's first character to past its last token's last (a
    token's ``end`` is inclusive).  A token a rewrite made may stand elsewhere: then the chunk's widest span.

    >>> sql = "SELECT 1;\\n  INSERT INTO t\\n  SELECT 2 ; "
    >>> [sql[slice(*_span(chunk))] for chunk in _split_tokens(Dialect.get_or_raise("").tokenize(sql))]
    ['SELECT 1', 'INSERT INTO t\\n  SELECT 2']
    """
    start, end = chunk[0].start, chunk[-1].end
    if start > end:
        start, end = min(token.start for token in chunk), max(token.end for token in chunk)
    return start, end + 1


def _declared(line: int, declaration: list[Token]) -> ParsedStatement:
    """A declaration sqlglot does not read (``a, b INT DEFAULT 0``, ``v_a STRING``; kept whole as a command's
    string in plpgsql) as the names it declares: the leading name and each one after a comma before the type.

    >>> tokens = Dialect.get_or_raise("mysql").tokenize("a, b INT")
    >>> [i.name for i in _declared(1, tokens).expression.expressions[0].this]
    ['a', 'b']
    """
    listed = _DECLARED_NAMES.match(" ".join(token.text for token in declaration))
    names = [name.strip() for name in listed.group(1).split(",")] if listed else []
    item = exp.DeclareItem(this=[exp.to_identifier(name) for name in names])
    return ParsedStatement(line=line, expression=exp.Declare(expressions=[item]))


# The names a declaration begins with: `a`, `a , b` (tokens are joined by spaces)
_DECLARED_NAMES = re.compile(r"\s*(\w+(?:\s*,\s*\w+)*)")


def _routine_parameters(chunk: list[Token]) -> list[Token]:
    """The parameter names of the routine header ``chunk`` begins with, comma-separated as a declaration
    reads them (``p_day , n`` of ``CREATE PROCEDURE p(IN p_day DATE, OUT n INT)``); none for anything else, or
    for a body written as a string (the harvester reads its parameters from the parsed routine).

    >>> tokens = Dialect.get_or_raise("mysql").tokenize("CREATE PROCEDURE p(IN d DATE, OUT n INT) BEGIN")
    >>> [t.text for t in _routine_parameters(tokens)]
    ['d', ',', 'n']
    """
    if not _is_routine_header(chunk):
        return []
    chunk = _signature(chunk)
    opening = next((i for i, t in enumerate(chunk) if t.token_type is TokenType.L_PAREN), None)
    if opening is None or _holds_string(chunk):
        return []
    if _HEADER_WORDS.intersection(_words(chunk[:opening])):
        return []  # the parenthesis is past the signature (a trigger's body, a routine without parameters)
    names: list[Token] = []
    expect_name, depth = True, 0
    for token in chunk[opening + 1 :]:
        depth += (token.token_type is TokenType.L_PAREN) - (token.token_type is TokenType.R_PAREN)
        if depth < 0:
            break
        if depth == 0 and token.token_type is TokenType.COMMA:
            expect_name = True
        elif expect_name and token.text.upper() not in _PARAMETER_MODES:
            names += [Token(TokenType.COMMA, ","), token] if names else [token]
            expect_name = False
    return names


def _signature(header: list[Token]) -> list[Token]:
    """The routine header ``header`` ends with: from the last PROCEDURE / FUNCTION word before its first
    parenthesis, so that a package body's first member (``CREATE PACKAGE BODY k IS PROCEDURE p(x DATE) IS``)
    is the routine, not the package."""
    start = 0
    for index, token in enumerate(header):
        if token.token_type is TokenType.L_PAREN:
            break
        if index and token.text.upper() in _MEMBER_ROUTINES:
            start = index
    return header[start:]


def _header_declaration(header: list[Token]) -> list[Token]:
    """The declaration that shares its piece with the routine header ``header`` opens: ``v NUMBER := 3`` of
    PL/SQL's ``PROCEDURE p(x DATE) IS v NUMBER := 3;`` (the tokens past the IS / AS that follows the parameter
    list); none after a trigger's header, or when the header ends at its IS / AS.

    >>> tokens = Dialect.get_or_raise("oracle").tokenize("CREATE PACKAGE BODY k IS PROCEDURE p(d DATE) IS v INT := 3")
    >>> [t.text for t in _header_declaration(tokens)]
    ['v', 'INT', ':=', '3']
    """
    if "TRIGGER" in _words(header[:6]):
        return []
    signature = _signature(header)
    for index, token in _outside_parentheses(signature):
        if token.text.upper() in ("IS", "AS"):
            declaration = signature[index + 1 :]
            return declaration[1:] if declaration and declaration[0].text.upper() == "DECLARE" else declaration
    return []


_PARAMETER_MODES = frozenset({"IN", "OUT", "INOUT"})
# Words that come after a routine's parameter list, never inside its name
_HEADER_WORDS = frozenset({"ON", "BEFORE", "AFTER", "INSTEAD", "FOR", "AS", "IS", "BEGIN", "RETURNS", "RETURN"})
_STRINGS = (TokenType.STRING, TokenType.HEREDOC_STRING, TokenType.RAW_STRING)


def _opens_declarations(chunk: list[Token]) -> bool:
    """Whether ``chunk`` is a routine's header whose declarations follow, up to its BEGIN (PL/SQL's
    ``CREATE PROCEDURE p AS v NUMBER;``, a package's ``PROCEDURE p IS``); not a body written as a string."""
    return _is_routine_header(chunk) and "BEGIN" not in _words(chunk) and not _holds_string(chunk)


def _is_routine_header(chunk: list[Token]) -> bool:
    """Whether ``chunk`` begins a routine: ``CREATE [OR REPLACE] PROCEDURE|FUNCTION|TRIGGER|PACKAGE ...``, an
    Oracle ``CREATE TYPE BODY`` (its methods are read like a package body's members), or a package member's
    ``PROCEDURE|FUNCTION ...``."""
    words = _words(chunk[:6])
    return bool(words) and (
        words[0] in _MEMBER_ROUTINES
        or (words[0] == "CREATE" and (bool(_ROUTINES.intersection(words[1:])) or _is_type_body(words)))
    )


def _is_type_body(words: list[str]) -> bool:
    """Whether ``words`` (a CREATE's first) say ``TYPE BODY``: not a type's spec (``AS OBJECT (...)``)."""
    return "TYPE" in words and words[words.index("TYPE") + 1 : words.index("TYPE") + 2] == ["BODY"]


def _holds_string(chunk: list[Token]) -> bool:
    """Whether ``chunk`` holds a string: a routine's body written as one (``AS $$ ... $$``)."""
    return any(token.token_type in _STRINGS for token in chunk)


def _record_parse_error(statement: ParsedStatement, error: ParseError, first: Token) -> None:
    detail = error.errors[0] if error.errors else {}
    statement.error = parse_error(error)
    statement.error_line = detail.get("line") or first.line
    # sqlglot's col is where the offending token ends; editors and annotations want where it starts
    end, token = detail.get("col"), detail.get("highlight") or ""
    statement.error_col = max(1, end - len(token) + 1) if end else first.col


def _parse_pieces_separately(sql: str, engine: Dialect, limits: Limits) -> Iterator[ParsedStatement]:
    """Fallback when the whole script does not tokenize (an unterminated quote, say)."""
    for first_line, piece in _naive_pieces(sql):
        # Leading newlines keep the piece's token lines equal to the file's lines.
        padded = "\n" * (first_line - 1) + piece
        tokenizer = engine.tokenizer()
        try:
            tokens = tokenizer.tokenize(padded)
        except TokenError:  # its message quotes the text around the failure raw, however many lines it spans
            message, line, col = token_error(padded, tokenizer.tokens)
            yield ParsedStatement(line=first_line, error=message, error_line=line, error_col=col)
            continue
        for chunk in _split_tokens(without_column_phrases(_slash_lines_as_semicolons(tokens, padded, engine), engine)):
            if piece := _opened_block(chunk, _OPENED_STARTS):
                yield _parse_chunk(piece, padded, engine, limits)


def _naive_pieces(sql: str) -> Iterator[tuple[int, str]]:
    """Cut at semicolons that end a line: good enough to isolate a statement the tokenizer rejects."""
    start_line, buffer = 1, []
    for number, text in enumerate(sql.splitlines(keepends=True), start=1):
        if not buffer:
            start_line = number
        buffer.append(text)
        if text.rstrip().endswith(";"):
            yield start_line, "".join(buffer)
            buffer = []
    if buffer and "".join(buffer).strip():
        yield start_line, "".join(buffer)
