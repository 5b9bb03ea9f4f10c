"""Rewrites before the parse, each keeping every other token's (or line's) position: what sqlglot cannot read
as written but means plain SQL.

Text: Databricks notebook cells, MySQL ``DELIMITER`` commands, SQL*Plus line commands, Hive CLI commands.
Tokens: T-SQL compound assignments (``SET a += b``), Teradata column phrases (``TITLE``, ``NAMED``), Hive
script clauses (``MAP`` / ``REDUCE ... USING``), interval literals without ``INTERVAL``, partitioned table
functions (``noop(ON t ...)``) and ``INSERT ... IF NOT EXISTS`` guards.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import NamedTuple

from sqlglot.dialects.dialect import Dialect
from sqlglot.dialects.teradata import Teradata
from sqlglot.tokens import Token, TokenType

# The mysql client's `DELIMITER //` (a line of its own) makes `//` end statements until `DELIMITER ;`
_DELIMITER = re.compile(r"^[ \t]*DELIMITER[ \t]+(\S+)[ \t]*$", re.IGNORECASE | re.MULTILINE)


# A Databricks notebook exported as SQL: cells end at a `-- COMMAND ----------` line, and a `%sql` magic cell
# holds its SQL in `-- MAGIC ` comment lines
_CELL_END = re.compile(r"^-- COMMAND -{5,}[ \t]*$", re.MULTILINE)


_MAGIC = "-- MAGIC "


def notebook_cells(sql: str) -> str:
    """``sql`` with each notebook cell ended by a semicolon, and the SQL of ``%sql`` magic cells uncommented (a
    cell is a statement, semicolon or not); other magic cells (``%python``, ``%md``) stay comments.  Lines are
    kept.

    >>> notebook_cells("INSERT INTO t SELECT 1\\n-- COMMAND ----------\\n-- MAGIC %sql\\n-- MAGIC USE mart")
    'INSERT INTO t SELECT 1\\n;\\n\\nUSE mart'
    """
    if _CELL_END.search(sql) is None and _MAGIC + "%sql" not in sql:
        return sql
    lines, in_sql_magic = sql.split("\n"), False
    for number, line in enumerate(lines):
        if _CELL_END.match(line):
            lines[number], in_sql_magic = ";", False
        elif line.startswith(_MAGIC):
            magic = line[len(_MAGIC) :]
            in_sql_magic = in_sql_magic or magic.strip().lower() == "%sql"
            if in_sql_magic:
                lines[number] = "" if magic.strip().lower() == "%sql" else magic
    return "\n".join(lines)


def without_delimiter_commands(sql: str) -> str:
    """``sql`` with each ``DELIMITER x`` line blanked and each ``x`` that ends a line as ``;``: the statements
    then end as everywhere else (a routine's inner semicolons are handled as in any body).  Line numbers
    are kept.

    >>> without_delimiter_commands("DELIMITER //\\nCREATE PROCEDURE p() BEGIN SELECT 1; END //\\nDELIMITER ;")
    '\\nCREATE PROCEDURE p() BEGIN SELECT 1; END ;\\n'
    """
    if _DELIMITER.search(sql) is None:
        return sql
    lines, delimiter = sql.split("\n"), ";"
    for number, line in enumerate(lines):
        if (command := _DELIMITER.match(line)) is not None:
            delimiter, lines[number] = command.group(1), ""
        elif delimiter != ";" and line.rstrip().endswith(delimiter):
            lines[number] = line.rstrip()[: -len(delimiter)] + ";"
    return "\n".join(lines)


# SQL*Plus's line commands, which end at their line (or at the last of the lines a trailing `-` continues them
# onto; a remark ends at its line), as a statement begins with them: `@x.sql`, `@@x.sql` or a command word,
# perhaps abbreviated.  `EXEC[UTE] p(1)` runs a procedure call (as `BEGIN p(1); END;`, whose call is passed
# over too); PL/SQL's own `EXECUTE IMMEDIATE '...'` is a statement, read where it stands.
_SQLPLUS_COMMAND = re.compile(
    r"^[ \t]*(?:@|(REMARK|REM)(?![\w$#])|(?:DEFINE|DEF|UNDEFINE|PROMPT|PRO|SET|SPOOL|SPO|WHENEVER|CONNECT|CONN"
    r"|EXIT|QUIT|COLUMN|COL|SHOW|SHO)(?![\w$#])|(?:EXECUTE|EXEC)(?![\w$#])(?!\s+IMMEDIATE(?![\w$#])))",
    re.IGNORECASE | re.MULTILINE,
)


_COMMENT_LINE = re.compile(r"^[ \t]*(?:--.*)?$")


def without_sqlplus_commands(sql: str) -> str:
    """``sql`` with each SQL*Plus line command that begins a statement blanked, with the lines its trailing `-`
    continues it onto: it ends at its line without a semicolon and moves no data, so it must not swallow the
    statement after it.  A statement begins after a line that ends with `;`, a `/` line or another command
    (`SET` on the line after `UPDATE t` continues the UPDATE).  Lines are kept.

    >>> without_sqlplus_commands("PROMPT load -\\n  a\\nDEFINE d = &1\\nUPDATE t\\nSET a = 1;\\nset echo off")
    '\\n\\n\\nUPDATE t\\nSET a = 1;\\n'
    >>> without_sqlplus_commands("REM ---\\nSELECT 1 FROM dual;")
    '\\nSELECT 1 FROM dual;'
    >>> without_sqlplus_commands("EXEC p(1)\\nBEGIN NULL;\\n  EXECUTE IMMEDIATE 'DELETE t';\\nEND;")
    "\\nBEGIN NULL;\\n  EXECUTE IMMEDIATE 'DELETE t';\\nEND;"
    """
    if _SQLPLUS_COMMAND.search(sql) is None:
        return sql  # (no line begins with a command word: no pass over the lines)
    lines, starts, continued = sql.split("\n"), True, False
    for number, line in enumerate(lines):
        command = _SQLPLUS_COMMAND.match(line) if starts and not continued else None
        if continued or command:
            remark = command is not None and command.group(1) is not None
            continued, lines[number] = not remark and line.rstrip().endswith("-"), ""
            starts = True
        elif not _COMMENT_LINE.match(line):
            code = line.split("--", 1)[0].rstrip()
            starts = code.endswith(";") or code.strip() == "/"
    return "\n".join(lines)


def without_client_commands(sql: str, commands: tuple[str, ...]) -> str:
    """``sql`` with each client command that starts a statement on a line blanked up to its semicolon (the Hive
    CLI's ``dfs -rmr ../x;``, ``source q.sql;``): the client runs it, the server never sees it, and its paths
    are no SQL to tokenize (``dfs -ls /in/*`` opens no comment).  Line numbers are kept.

    >>> without_client_commands("dfs -rm x;\\nSELECT a,\\n source\\nFROM t;\\nsource q; SELECT 1;", ("dfs", "source"))
    '\\nSELECT a,\\n source\\nFROM t;\\n SELECT 1;'
    """
    if not commands or not _client_line(commands).search("\n" + sql.lower()):
        return sql  # (a script with no line that may begin with one: no pass over its lines)
    words = (re.escape(c) + (r"(?=[ \t;]|$)" if c[-1].isalnum() else "") for c in commands)  # `!ls` needs no space
    head = re.compile(r"[ \t]*(?:" + "|".join(words) + ")", re.IGNORECASE)
    lines, at_start = sql.split("\n"), True  # at_start: no statement is open before this line
    for number, line in enumerate(lines):
        if at_start and head.match(line):
            line = lines[number] = line.partition(";")[2]  # what follows its semicolon is SQL again
        if code := line.split("--")[0].strip():
            at_start = code.endswith(";")
    return "\n".join(lines)


@functools.lru_cache(maxsize=8)
def _client_line(commands: tuple[str, ...]) -> re.Pattern[str]:
    """A line of lower-cased text that may begin with one of ``commands``: a literal newline first, so the search
    runs at memory speed."""
    return re.compile(r"\n[ \t]*(?:" + "|".join(re.escape(command.lower()) for command in commands) + ")")


def without_column_phrases(tokens: list[Token], engine: Dialect) -> list[Token]:
    """Teradata's column phrases sqlglot does not read, in a select list: ``DOB (TITLE 'Birthdate')`` is
    ``DOB`` (a heading for display), ``a (NAMED b)`` is ``a AS b``.  The other tokens keep their positions;
    other dialects have no such phrases.

    >>> engine = Dialect.get_or_raise("teradata")
    >>> tokens = engine.tokenize("SELECT n (TITLE 'Name'), d (NAMED b, TITLE 'x'), f(y) FROM t")
    >>> " ".join(t.text for t in without_column_phrases(tokens, engine))
    'SELECT n , d AS b , f ( y ) FROM t'
    """
    if not isinstance(engine, Teradata):
        return tokens
    kept: list[Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        phrase = _column_phrase(tokens, index) if kept and token.token_type is TokenType.L_PAREN else None
        if phrase is None:
            kept.append(token)
            index += 1
            continue
        replacement, index = phrase
        kept.extend(replacement)
    return kept


def _column_phrase(tokens: list[Token], opening: int) -> tuple[list[Token], int] | None:
    """The tokens that stand for the ``(TITLE 'x', NAMED y)`` phrase at ``opening`` (``AS y``, or none), and
    the index past it; None when the parenthesis holds anything else."""
    replacement: list[Token] = []
    index = opening + 1
    while index + 1 < len(tokens):
        word, value = tokens[index], tokens[index + 1]
        keyword = word.text.upper() if word.token_type is TokenType.VAR else ""
        if keyword == "TITLE" and value.token_type is TokenType.STRING:
            pass  # a display heading: no name, no lineage
        elif keyword == "NAMED" and value.token_type in (TokenType.VAR, TokenType.IDENTIFIER):
            alias = Token(TokenType.ALIAS, "AS", word.line, word.col, word.start, word.end)
            replacement = [alias, value]
        else:
            return None
        index += 2
        if index < len(tokens) and tokens[index].token_type is TokenType.R_PAREN:
            return replacement, index + 1
        if index >= len(tokens) or tokens[index].token_type is not TokenType.COMMA:
            return None
        index += 1
    return None


# T-SQL's compound assignment operators (`+=` ... `^=`), each read as its operator then `=`; looked for in the
# text first, so a script without one costs no pass over its tokens
COMPOUND_ASSIGNMENT = re.compile(r"[-+*/%&|^]=")


_COMPOUND_OPERATORS = frozenset(
    {TokenType.PLUS, TokenType.DASH, TokenType.STAR, TokenType.SLASH, TokenType.MOD, TokenType.AMP, TokenType.PIPE,
     TokenType.CARET}
)  # fmt: skip


# What an assigned name is made of: `@v`, `t.x`, `[dbo].[t].[x]`; and what comes before it in a list of
# assignments (`SET a += 1, b -= 2`, `SELECT @total += amount FROM t`)
_NAME_PARTS = frozenset({TokenType.VAR, TokenType.IDENTIFIER, TokenType.PARAMETER, TokenType.DOT})


_ASSIGNMENT_LISTS = frozenset({TokenType.SET, TokenType.SELECT, TokenType.COMMA})


def compound_assignments(tokens: list[Token]) -> list[Token]:
    """``tokens`` with each compound assignment of a SET or SELECT list (`SET @n += 1`, `UPDATE t SET t.x *= 2`) as
    the plain one sqlglot reads, `name = name op value`.  The name's copy and the operator take the places of
    the operator and the `=`, so every other token keeps its line and column.  (The value is not put in
    parentheses: `a *= b + c` reads as `a = a * b + c`, which has the same columns, so the same lineage.)

    >>> tokens = Dialect.get_or_raise("tsql").tokenize("UPDATE t SET t.x += 1, @n *= 2 WHERE a *= b")
    >>> " ".join(t.text for t in compound_assignments(tokens))
    'UPDATE t SET t . x = t . x + 1 , @ n = @ n * 2 WHERE a * = b'
    """
    result: list[Token] = []
    index = 0
    while index < len(tokens):
        token, after = tokens[index], tokens[index + 1] if index + 1 < len(tokens) else None
        compound = token.token_type in _COMPOUND_OPERATORS and after is not None and after.token_type is TokenType.EQ
        name = _assigned_name(result) if compound and after.start == token.end + 1 else []
        if not name:
            result.append(token)
            index += 1
            continue
        at, then = _positioned(token), _positioned(after)
        result += [at(TokenType.EQ, "="), *(at(part.token_type, part.text) for part in name)]
        result.append(then(token.token_type, token.text))
        index += 2
    return result


# A pass over the tokens costs about what the parse of a small script does: each pass below runs only on a script
# whose text may hold what it rewrites (each guard finds all the pass could change, and more).
class TextGuard(NamedTuple):
    """Whether a script's lower-cased text may hold a construct: a substring test first, which runs at memory
    speed, and the pattern (a few times slower than the parse's tokenizer over a script) only where one is found."""

    words: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]  # any of them (an alternation of them all searches several times slower)

    def may_hold(self, lowered: str) -> bool:
        return any(word in lowered for word in self.words) and any(p.search(lowered) for p in self.patterns)


_GAP = r"\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*"  # white space and comments between two tokens
_UNITS = ("year", "month", "day", "hour", "minute", "second")
# (a bare output list, USING 'script' AS k, v, is changed wherever it stands)
SCRIPT_CLAUSE = TextGuard(
    ("map", "reduce", "transform", "using"),
    (re.compile(r"(?:map|reduce|transform)\b"), re.compile("using" + _GAP + "['\"]", re.DOTALL)),
)
TABLE_FUNCTION = TextGuard(("on",), (re.compile(r"\(" + _GAP + r"on\b", re.DOTALL),))
KEYWORDLESS_INTERVAL = TextGuard(_UNITS, (re.compile(r"['\"\d]" + _GAP + f"(?:{'|'.join(_UNITS)})s?\\b", re.DOTALL),))


def script_clauses(tokens: list[Token]) -> list[Token]:
    """``tokens`` with Hive's script clauses in the one form sqlglot reads: ``MAP a, b USING 's'`` and ``REDUCE
    a, b USING 's'`` (other spellings of ``SELECT TRANSFORM``) as ``SELECT TRANSFORM (a, b) USING 's'``, and
    an output list without parentheses, ``USING 's' AS k, v``, in them (sqlglot reads ``v`` as a column of the
    FROM).  The added tokens take the places of the words they stand for or stand next to.

    >>> tokens = Dialect.get_or_raise("hive").tokenize("MAP a, b ROW FORMAT DELIMITED USING 'm' AS k, v INT FROM t")
    >>> " ".join(t.text for t in script_clauses(tokens))
    'SELECT TRANSFORM ( a , b ) ROW FORMAT DELIMITED USING m AS ( k , v INT ) FROM t'
    """
    result: list[Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if _starts_script_clause(tokens, index):
            at = _positioned(token)
            result += [at(TokenType.SELECT, "SELECT"), at(TokenType.VAR, "TRANSFORM"), at(TokenType.L_PAREN, "(")]
            end = _top_level_index(tokens, index + 1, _SCRIPT_INPUT_ENDS)
            result += [*tokens[index + 1 : end], _positioned(tokens[end])(TokenType.R_PAREN, ")")]
            index = end
            continue
        result.append(token)
        index += 1
        if _opens_bare_output_list(tokens, index):
            result += [tokens[index], _positioned(tokens[index + 1])(TokenType.L_PAREN, "(")]
            end = _top_level_index(tokens, index + 1, _SCRIPT_OUTPUT_ENDS)
            closing = tokens[end] if end < len(tokens) else tokens[-1]
            result += [*tokens[index + 1 : end], _positioned(closing)(TokenType.R_PAREN, ")")]
            index = end
    return result


def _starts_script_clause(tokens: list[Token], index: int) -> bool:
    """Whether ``tokens[index]`` is a MAP or REDUCE that opens a script clause (not ``map(k, v)``, ``MAP<K, V>``,
    a column named map): one with its input list up to a USING of the same statement."""
    if tokens[index].text.upper() not in ("MAP", "REDUCE") or index + 1 >= len(tokens):
        return False
    if tokens[index + 1].token_type in (TokenType.L_PAREN, TokenType.LT, TokenType.COMMA, TokenType.DOT):
        return False
    end = _top_level_index(tokens, index + 1, _SCRIPT_INPUT_ENDS)
    return end < len(tokens) and tokens[end].text.upper() in ("USING", "ROW")


def _opens_bare_output_list(tokens: list[Token], index: int) -> bool:
    """Whether ``tokens[index]`` is the AS of ``USING 'script' AS k, v`` with no parenthesis after it."""
    window = tokens[index - 2 : index + 2] if index >= 2 else []
    return (
        len(window) == 4
        and window[0].token_type is TokenType.USING
        and window[1].token_type is TokenType.STRING
        and window[2].token_type is TokenType.ALIAS
        and window[3].token_type is not TokenType.L_PAREN
    )


def _top_level_index(tokens: list[Token], start: int, ends: frozenset[str]) -> int:
    """The index of the first token from ``start`` on, outside parentheses opened there, that is one of ``ends``
    (by its first word, upper-cased: ``CLUSTER BY`` is one token), a semicolon or a parenthesis closing one opened
    before; ``len(tokens)`` if none."""
    depth = 0
    for index in range(start, len(tokens)):
        kind, words = tokens[index].token_type, tokens[index].text.upper().split()
        if depth == 0 and (kind in (TokenType.SEMICOLON, TokenType.R_PAREN) or (words and words[0] in ends)):
            return index
        depth += (kind is TokenType.L_PAREN) - (kind is TokenType.R_PAREN)
    return len(tokens)


# Where a script clause's input list ends (at its ROW FORMAT, or its USING), and where its output list does
_SCRIPT_INPUT_ENDS = frozenset({"USING", "ROW", "FROM", "SELECT", "INSERT", "WHERE"})


_SCRIPT_OUTPUT_ENDS = frozenset(
    {"ROW", "RECORDREADER", "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "CLUSTER", "DISTRIBUTE", "SORT", "LIMIT",
     "UNION", "INSERT", "LATERAL", "JOIN", "WINDOW"}
)  # fmt: skip


def interval_literals(tokens: list[Token]) -> list[Token]:
    """``tokens`` with the INTERVAL keyword Hive lets a constant interval go without (`ts - '1 2:3:4' DAY TO
    SECOND`, `2 MINUTE`) put before its literal, where sqlglot needs it.

    >>> tokens = Dialect.get_or_raise("hive").tokenize("SELECT ts - '1 2:3' day to minute, INTERVAL 2 HOUR, 3 x")
    >>> " ".join(t.text for t in interval_literals(tokens))
    'SELECT ts - INTERVAL 1 2:3 day to minute , INTERVAL 2 HOUR , 3 x'
    """
    result: list[Token] = []
    for index, token in enumerate(tokens):
        unit = tokens[index + 1].text.upper() if index + 1 < len(tokens) else ""
        keyword = result[-1].token_type is TokenType.INTERVAL if result else False
        if token.token_type in (TokenType.STRING, TokenType.NUMBER) and unit in _INTERVAL_UNITS and not keyword:
            result.append(_positioned(token)(TokenType.INTERVAL, "INTERVAL"))
        result.append(token)
    return result


_INTERVAL_UNITS = frozenset(
    unit + plural for unit in ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND") for plural in ("", "S")
)


def table_functions_as_sources(tokens: list[Token]) -> list[Token]:
    """``tokens`` with each of Hive's partitioned table functions, ``noop(ON t PARTITION BY k ORDER BY d)``,
    ``matchpath(ON (SELECT ...) DISTRIBUTE BY k SORT BY d arg1('A.B*'))``, as the relation it is ON, which
    sqlglot reads: the function gets its rows from it (noop hands them on as they are), its partitioning only
    deals them out.

    >>> tokens = Dialect.get_or_raise("hive").tokenize("FROM noop(ON noop(ON t PARTITION BY k) ORDER BY d) x")
    >>> " ".join(t.text for t in table_functions_as_sources(tokens))
    'FROM t x'
    >>> tokens = Dialect.get_or_raise("hive").tokenize("FROM noop(ON t; SELECT 1")
    >>> " ".join(t.text for t in table_functions_as_sources(tokens))
    'FROM noop ( ON t ; SELECT 1'
    """
    result: list[Token] = []
    index = 0
    while index < len(tokens):
        opens = _opens_table_function(tokens, index)
        close = _top_level_index(tokens, index + 2, frozenset()) if opens else index  # its closing parenthesis
        if not opens or close == len(tokens) or tokens[close].token_type is not TokenType.R_PAREN:
            result.append(tokens[index])  # (an unclosed one is left to the parser to report)
            index += 1
            continue
        relation = index + 3
        end = relation
        while end < close and (end == relation or not _ends_table_function_source(tokens, end)):
            group = tokens[end].token_type is TokenType.L_PAREN  # a subquery, or a nested function's arguments
            end = _top_level_index(tokens, end + 1, frozenset()) + 1 if group else end + 1
        result += table_functions_as_sources(tokens[relation:end])
        index = close + 1
    return result


def _opens_table_function(tokens: list[Token], index: int) -> bool:
    """Whether ``tokens[index]`` is the name of ``name(ON ...``, a partitioned table function."""
    kinds = [token.token_type for token in tokens[index : index + 3]]
    return len(kinds) == 3 and kinds[0] in _NAME_PARTS and kinds[1:] == [TokenType.L_PAREN, TokenType.ON]


def _ends_table_function_source(tokens: list[Token], index: int) -> bool:
    """Whether the source of a table function ends before ``tokens[index]``: at its partitioning
    (``PARTITION BY`` ...) or its first argument (``arg1('A.B*')``)."""
    words = tokens[index].text.upper().split()
    followed_by_parenthesis = index + 1 < len(tokens) and tokens[index + 1].token_type is TokenType.L_PAREN
    return bool(words) and words[0] in _PARTITIONING or followed_by_parenthesis


_PARTITIONING = frozenset({"PARTITION", "DISTRIBUTE", "CLUSTER", "ORDER", "SORT"})


def _assigned_name(before: list[Token]) -> list[Token]:
    """The name ``before`` ends with, if it is the target of an assignment list's item (after SET, SELECT or a
    comma)."""
    start = len(before)
    while start and before[start - 1].token_type in _NAME_PARTS:
        start -= 1
    opening = before[start - 1] if start else None
    if start == len(before) or opening is None or opening.token_type not in _ASSIGNMENT_LISTS:
        return []
    return before[start:]


def _positioned(place: Token) -> Callable[[TokenType, str], Token]:
    """A maker of tokens at ``place``'s position in the script."""
    return lambda kind, text: Token(kind, text, place.line, place.col, place.start, place.end)


_QUERY_STARTS = frozenset({"SELECT", "VALUES", "FROM", "WITH", "MAP", "REDUCE"})


def without_storage_clauses(chunk: list[Token]) -> list[Token]:
    """``chunk`` (a CREATE statement) without the clauses sqlglot does not read around a view's or a CTAS's query
    that say how rows are checked or stored, not where they come from: a view's trailing ``WITH [CASCADED |
    LOCAL] CHECK OPTION`` (MySQL, Postgres, T-SQL, Snowflake), its options before AS (Postgres' bare ``WITH
    (security_invoker)``), and Greenplum's trailing ``DISTRIBUTED RANDOMLY | REPLICATED | BY (...)``.

    >>> tokens = Dialect.get_or_raise("postgres").tokenize("CREATE VIEW v WITH (security_invoker) AS SELECT a "
    ...                                                     "FROM t WITH LOCAL CHECK OPTION")
    >>> " ".join(t.text for t in without_storage_clauses(tokens))
    'CREATE VIEW v AS SELECT a FROM t'
    >>> " ".join(t.text for t in without_storage_clauses(Dialect.get_or_raise("postgres").tokenize(
    ...     "CREATE TABLE n AS SELECT * FROM o DISTRIBUTED BY (a, b)")))
    'CREATE TABLE n AS SELECT * FROM o'
    """
    if not chunk or chunk[0].token_type is not TokenType.CREATE:
        return chunk
    words = [token.text.upper() for token in chunk[-4:]]
    if len(words) == 4 and words[-2:] == ["CHECK", "OPTION"]:
        cut = len(chunk) - (3 if words[1] == "WITH" else 4)  # WITH CHECK OPTION, WITH LOCAL CHECK OPTION
        return without_storage_clauses(chunk[:cut]) if chunk[cut].text.upper() == "WITH" else chunk
    distributed = _distribution_start(chunk)
    if distributed is not None:
        return without_storage_clauses(chunk[:distributed])
    return _without_view_options(chunk)


def _distribution_start(chunk: list[Token]) -> int | None:
    """Where a trailing ``DISTRIBUTED RANDOMLY | REPLICATED | BY (...)`` begins in ``chunk``, if it ends with one."""
    last = chunk[-1].text.upper()
    if last in ("RANDOMLY", "REPLICATED") and len(chunk) > 2 and chunk[-2].text.upper() == "DISTRIBUTED":
        return len(chunk) - 2
    if chunk[-1].token_type is not TokenType.R_PAREN:
        return None
    depth, index = 0, len(chunk) - 1
    while index > 0:  # back to the parenthesis the last one closes
        depth += (chunk[index].token_type is TokenType.R_PAREN) - (chunk[index].token_type is TokenType.L_PAREN)
        if depth == 0:
            break
        index -= 1
    words = [token.text.upper() for token in chunk[max(0, index - 2) : index]]
    return index - 2 if words == ["DISTRIBUTED", "BY"] else None


def _without_view_options(chunk: list[Token]) -> list[Token]:
    """A CREATE VIEW's ``WITH ( ... )`` between its name and the AS of its query, left out."""
    index = 1
    while index + 1 < len(chunk) and chunk[index].token_type is not TokenType.ALIAS:
        if chunk[index].token_type is TokenType.WITH and chunk[index + 1].token_type is TokenType.L_PAREN:
            close = _top_level_index(chunk, index + 2, frozenset())  # its closing parenthesis
            before_query = close + 1 < len(chunk) and chunk[close + 1].token_type is TokenType.ALIAS
            if before_query and any(token.token_type is TokenType.VIEW for token in chunk[:index]):
                return chunk[:index] + chunk[close + 1 :]
            return chunk
        index += 1
    return chunk


def without_partition_guard(chunk: list[Token]) -> list[Token]:
    """``chunk`` without Hive's ``IF NOT EXISTS`` between an INSERT and its query (``INSERT OVERWRITE TABLE t
    PARTITION (ds='1') IF NOT EXISTS SELECT ...``), which sqlglot does not read: it guards whether the rows are
    written, not where from or to.

    >>> tokens = Dialect.get_or_raise("hive").tokenize("INSERT OVERWRITE TABLE t PARTITION (d) IF NOT EXISTS SELECT 1")
    >>> " ".join(t.text for t in without_partition_guard(tokens))
    'INSERT OVERWRITE TABLE t PARTITION ( d ) SELECT 1'
    """
    if TokenType.EXISTS not in {token.token_type for token in chunk}:
        return chunk  # (nearly every statement: one attribute read per token, not the pass below)
    kept: list[Token] = []
    in_target, index = False, 0  # in_target: after INSERT, before its query
    while index < len(chunk):
        word = chunk[index].text.upper()
        in_target = word == "INSERT" or (in_target and word not in _QUERY_STARTS)
        if in_target and [t.text.upper() for t in chunk[index : index + 3]] == ["IF", "NOT", "EXISTS"]:
            index += 3
            continue
        kept.append(chunk[index])
        index += 1
    return kept
