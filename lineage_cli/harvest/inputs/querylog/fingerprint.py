"""Which log rows ran the same statement: a fingerprint of the SQL with its literal values and layout taken out.

A token-level normalization, not a parse: a million rows cannot each pay for sqlglot (a parse costs about a
millisecond; this, a few microseconds).  Comments go, runs of white space become one space, and every
number and quoted string becomes ``?``, so ``WHERE d = '2024-05-01'`` and ``WHERE d = '2024-05-02'`` are one
statement.  A quoted string holding a ``/`` stays as it is: it is a location (``COPY ... FROM 's3://b/x'``,
``LOAD DATA INPATH '/data/x'``), part of the lineage.  Identifiers and keywords keep their case: a quoted
``"Orders"`` may not be ``orders``.  The row's database and schema are part of the fingerprint, as they name
the tables the statement's unqualified names stand for.
"""

from __future__ import annotations

import hashlib
import re

_TOKENS = re.compile(
    r"""(?P<string>'(?:[^'\\]|\\.|'')*')"""  # a quoted string ('' and \' inside it)
    r"""|(?P<space>(?:\s|--[^\n]*|/\*.*?\*/)+)"""  # comments and white space: one space
    r"""|(?P<number>(?<![\w$])\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)""",
    re.DOTALL,
)


def normalized(sql: str) -> str:
    """The statement as its fingerprint sees it.

    >>> normalized("SELECT a  FROM t -- daily\\nWHERE d = '2024-05-01' AND n > 10 AND t_2 = 1")
    'SELECT a FROM t WHERE d = ? AND n > ? AND t_2 = ?'
    >>> normalized("COPY t FROM 's3://bucket/2024/05/01/' /* run 7 */")
    "COPY t FROM 's3://bucket/2024/05/01/'"
    """
    return _TOKENS.sub(_replacement, sql).strip()


def _replacement(match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "string":
        return match.group() if "/" in match.group() else "?"
    if kind == "number":
        return "?"
    return " "


def fingerprint(sql: str, database: str | None, schema: str | None) -> bytes:
    """16 bytes that stand for the statement under its row's defaults: what the dedupe keeps per statement."""
    material = f"{database or ''}\0{schema or ''}\0{normalized(sql)}"
    return hashlib.blake2b(material.encode(), digest_size=16).digest()
