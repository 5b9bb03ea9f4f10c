"""Which log rows ran the same statement: a fingerprint of the SQL with its literal values and layout taken out.

A token-level normalization, not a parse: a million rows cannot each pay for sqlglot (bench/querylog.py
measures both: a parse and the SQL generated again cost about 30 times as much).  Comments go, runs of white
space become one space, and every number and quoted string becomes ``?``, so ``WHERE d = '2024-05-01'`` and
``WHERE d = '2024-05-02'`` are one statement.  A quoted string holding a ``/`` is kept: it is a location
(``COPY ... FROM 's3://b/x'``, ``LOAD DATA INPATH '/data/x'``), part of the lineage.  A digit in a name is
kept too (``sales_2023`` is not ``sales_2024``), and identifiers and keywords keep their case: a quoted
``"Orders"`` may not be ``orders``.  The row's database and schema are part of the fingerprint, as they name
the tables the statement's unqualified names stand for.

Python's regular expressions scan about 25 characters a microsecond, so the one pattern that must look at
every character (numbers) is run on words, not on the statement: the statement is split at white space by
``str.split`` and each word's normal form is remembered (a log's statements use the same few thousand words
over and over); quoted strings and comments, found by patterns that start with a fixed character, are taken
out first.
"""

from __future__ import annotations

import hashlib
import re

_STRING = re.compile(r"""'(?:[^'\\]|\\.|'')*'""")  # '' and \' inside a quoted string
_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)
_NUMBER = re.compile(r"(?<![\w$])\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
_WORDS_REMEMBERED = 100_000


class _Words(dict[str, str]):
    """Each word's normal form, computed once; forgotten all at once past ``_WORDS_REMEMBERED`` words."""

    def __missing__(self, word: str) -> str:
        if len(self) >= _WORDS_REMEMBERED:
            self.clear()
        normal = self[word] = _NUMBER.sub("?", word) if any(c.isdigit() for c in word) else word
        return normal


_WORDS = _Words()


def normalized(sql: str) -> str:
    """The statement as its fingerprint sees it (locations kept after it, ``|``-separated).

    >>> normalized("SELECT a  FROM t_2 -- daily\\nWHERE d = '2024-05-01' AND n > 10.5 AND x=1")
    'SELECT a FROM t_2 WHERE d = ? AND n > ? AND x=?'
    >>> normalized("COPY t FROM 's3://bucket/2024/05/01/' /* run 7 */")
    "COPY t FROM ? | 's3://bucket/2024/05/01/'"
    """
    kept: list[str] = []
    if "'" in sql:
        sql = _STRING.sub(lambda match: _literal(match.group(), kept), sql)
    if "--" in sql or "/*" in sql:
        sql = _COMMENT.sub(" ", sql)
    words = _WORDS
    text = " ".join([words[word] for word in sql.split()])
    return " | ".join((text, *kept)) if kept else text


def _literal(text: str, kept: list[str]) -> str:
    if "/" in text:
        kept.append(text)
    return "?"


def fingerprint(sql: str, database: str | None, schema: str | None) -> bytes:
    """16 bytes that stand for the statement under its row's defaults: what the dedupe keeps per statement."""
    material = f"{database or ''}\0{schema or ''}\0{normalized(sql)}"
    return hashlib.blake2b(material.encode(), digest_size=16).digest()
