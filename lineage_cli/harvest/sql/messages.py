"""sqlglot's errors, and the analysis's own failures, as messages about the user's SQL.

sqlglot words its errors for its developers: ``Required keyword: 'ifs' missing for <class
'sqlglot.expressions.functions.Case'>``, whole token reprs, the position in the text it was given
(which, for SQL held in a string, is not the file's), and for a tokenizer failure the raw text
around it, however many lines that is.  Here they say what is wrong in the SQL (``CASE without
WHEN``, ``nothing after WHERE``) and quote at most a short one-line excerpt of it: a file may hold
what must not end up in a CI log.  A Python error in the analysis is a bug of ours, reported as one,
never as its raw message.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.tokens import Token

EXCERPT_LIMIT = 60  # characters of SQL a message quotes at most

_TOKEN_REPR = re.compile(r"<Token token_type: [\w.]+, text: (.*?), line: \d+.*?>", re.DOTALL)
_POSITION = re.compile(r"\. Line \d+, Col: \d+\.$")
_MISSING = re.compile(r"Required keyword: '(\w+)' missing for <class '(?:[\w.]*\.)?(\w+)'>")
_CLASS = re.compile(r"<class '(?:[\w.]*\.)?(\w+)'>")

# What is missing, in words, where the general "nothing after X" would not say it: (class, argument)
_SENTENCES: Mapping[tuple[str, str], str] = {
    ("Case", "ifs"): "CASE without WHEN",
    ("If", "true"): "WHEN (or IF) without a THEN value",
    ("IfBlock", "true"): "IF without a statement to run",
    ("When", "then"): "WHEN without THEN",
    ("Whens", "expressions"): "MERGE without WHEN MATCHED or WHEN NOT MATCHED",
    ("Between", "low"): "BETWEEN without its low bound",
    ("Between", "high"): "BETWEEN without AND and its high bound",
    ("CTE", "this"): "a WITH query whose AS ( ) holds no query",
    ("Paren", "this"): "empty parentheses",
    ("Alias", "this"): "nothing before AS",
    ("Column", "this"): "a column reference without a column name",
    ("Property", "this"): "a table property without a name",
    ("Property", "value"): "a table property without a value",
}
# SQL constructs whose class name is not their keyword
_KEYWORDS: Mapping[str, str] = {
    "Order": "ORDER BY",
    "Group": "GROUP BY",
    "Cluster": "CLUSTER BY",
    "Distribute": "DISTRIBUTE BY",
    "Sort": "SORT BY",
    "PartitionedByProperty": "PARTITIONED BY",
    "OnProperty": "ON",
    "IfBlock": "IF",
    "CTE": "WITH",
    "Aliases": "AS",
    "Bracket": "[",
    "ScopeResolution": "::",
    "Whens": "WHEN",
}


def excerpt(text: str, limit: int = EXCERPT_LIMIT) -> str:
    """At most ``limit`` characters of the first line of ``text``, control characters escaped, quoted; ``…`` where
    it was cut.

    >>> print(excerpt("PASSWORD='hunter2\\nAWS_KEY=AKIA"), excerpt("a\\tb" + "x" * 10, limit=8))
    "PASSWORD='hunter2…" 'a\\tbxxxx…'
    """
    line = text.split("\n", 1)[0].rstrip("\r")
    shown = "".join(repr(c)[1:-1] if unicodedata.category(c).startswith("C") else c for c in line)
    cut = len(shown) > limit or len(line) < len(text.rstrip("\r\n"))
    quote = '"' if "'" in shown and '"' not in shown else "'"
    return quote + shown[:limit] + ("…" if cut else "") + quote


def parse_error(error: ParseError) -> str:
    """The first problem sqlglot found, in the SQL's words."""
    detail = error.errors[0] if error.errors else {}
    description = str(detail.get("description") or error).split("\n", 1)[0]
    if description.startswith("Invalid expression / Unexpected token") and detail.get("highlight"):
        return f"unexpected {excerpt(str(detail['highlight']))}"
    return readable(description)


def readable(message: str) -> str:
    """One line of a sqlglot message without its internals: token reprs as the token's text (an excerpt), no
    position in the text it parsed, classes as the SQL they stand for.

    >>> readable("Expected table name but got <Token token_type: TokenType.WHERE, text: where, line: 2>"
    ...          ". Line 2, Col: 9.")
    "Expected table name but got 'where'"
    >>> readable("Required keyword: 'this' missing for <class 'sqlglot.expressions.query.Where'>")
    'nothing after WHERE'
    >>> readable("Required keyword: 'ifs' missing for <class 'sqlglot.expressions.functions.Case'>")
    'CASE without WHEN'
    """
    text = _TOKEN_REPR.sub(lambda match: excerpt(match.group(1)), message.split("\n", 1)[0])
    text = _POSITION.sub("", text).replace("'SENTINEL'", "the end of the statement")  # sqlglot's end-of-input token
    text = _MISSING.sub(lambda match: _missing(match.group(2), match.group(1)), text)
    return _CLASS.sub(lambda match: _construct(match.group(1)), text)


def _missing(name: str, argument: str) -> str:
    """What an expression of class ``name`` lacks, given the ``argument`` sqlglot found missing.

    >>> [_missing(*case) for case in (("EQ", "expression"), ("Or", "this"), ("Sum", "this"), ("Order", "expressions"))]
    ['nothing after =', 'nothing before OR', 'SUM() without an argument', 'nothing after ORDER BY']
    """
    if (name, argument) in _SENTENCES:
        return _SENTENCES[name, argument]
    cls = getattr(exp, name, None)
    construct = _construct(name)
    if isinstance(cls, type) and issubclass(cls, exp.Binary):
        return f"nothing {'before' if argument == 'this' else 'after'} {construct}"
    if isinstance(cls, type) and issubclass(cls, exp.Func):
        return f"{construct} without an argument"
    if argument in ("this", "expression", "expressions"):
        return f"nothing after {construct}"
    return f"incomplete {construct}"


def _construct(name: str) -> str:
    """The SQL an expression class stands for: an operator's symbol, a function's ``NAME()``, a clause's keyword.

    >>> [_construct(name) for name in ("JSONBContainsTopKey", "Coalesce", "Where", "Order", "DeclareItem")]
    ['?', 'COALESCE()', 'WHERE', 'ORDER BY', 'DECLARE ITEM']
    """
    if name in _KEYWORDS:
        return _KEYWORDS[name]
    cls = getattr(exp, name, None)
    if isinstance(cls, type) and issubclass(cls, exp.Binary):
        sql = _operator(cls)
        if sql is not None:
            return sql
    if isinstance(cls, type) and issubclass(cls, exp.Func):
        return f"{cls.sql_name()}()"
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).upper()


def _operator(cls: type[exp.Binary]) -> str | None:
    """A binary operator as SQL writes it: what sqlglot prints between ``a`` and ``b``."""
    try:
        sql = cls(this=exp.column("a"), expression=exp.column("b")).sql()
    except Exception:  # noqa: BLE001 - a generator that wants more than two operands: the class name will do
        return None
    return sql[1:-1].strip() or None if sql.startswith("a") and sql.endswith("b") else None


def token_error(sql: str, tokens: list[Token]) -> tuple[str, int, int]:
    """A tokenizer failure of ``sql`` after its ``tokens`` (those read before it stopped): the message, and the
    line and column where the text it could not read starts (an unclosed quote, mostly)."""
    start = tokens[-1].end + 1 if tokens else 0
    start += len(sql[start:]) - len(sql[start:].lstrip())
    line = sql.count("\n", 0, start) + 1
    col = start - sql.rfind("\n", 0, start)
    return f"cannot tokenize the SQL from here (an unclosed quote or comment?): {excerpt(sql[start:])}", line, col


def parser_failure(error: BaseException) -> str:
    """sqlglot's parser raising something else than a ParseError on a statement (``a <#> b``, pgvector's operator,
    gave a TypeError): to the user that is a statement it cannot read, not a fault of this tool's analysis."""
    return f"the parser failed on this statement ({type(error).__name__}); it is read as unparseable"


def internal_error(error: BaseException, what: str = "this statement") -> str:
    """A failure of our analysis (or of sqlglot's), which the user cannot fix: reported as a bug, by its kind."""
    return f"internal error analysing {what} (please report): {type(error).__name__}"
