"""Placeholders left without a value: parse-safe tokens in the SQL, the placeholder text in node names.

sqlglot reads neither ``#src_schema#.t_orders`` nor ``${hivevar:src_db}.t_orders`` nor
``{{ src }}.t`` as a table name.  Before parsing, every placeholder still in the SQL is swapped
for an identifier made from a digest of its text (``lineage_p_0123456789_``); after the analysis
the names of the lineage get the placeholder text back, so the dataset ``#src_schema#.t_orders``
keeps the name its file gives it and becomes a parameterized node.  A placeholder gets the same
token in every file, so a table one file creates under a placeholder name is the table another
file reads under it.

A placeholder that stands for a value (``WHERE amount > ${min_amount}``) parses as a column; an
edge from such a "column" is no lineage and is dropped.  When the placeholder has a default
(``defaults:`` in a vars file or a manifest), ``default_name`` says which real table it points to.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

# The placeholder styles read in every dialect, whether or not a value was given: ${x} / ${hivevar:x} /
# ${hiveconf:x} / impala-shell's ${var:x}, #x#, and any Jinja expression left in the text ({{ x }}, {{ f('a') }}),
# on one line.  VARIABLE_PREFIX: what may come before the name of a ${...} one.
VARIABLE_PREFIX = r"(?:hivevar:|hiveconf:|var:|VAR:)?"
_COMMON = r"\$\{[^{}\n]*\}|#[A-Za-z_]\w*#|\{\{[^\n]*?\}\}"
# The styles a dialect profile turns on (``placeholder_styles``), only there: `@` begins T-SQL and MySQL variables
# and Snowflake stages, `&` is an operator in Postgres and MySQL.  `at`: Postgres extension scripts' @extschema@;
# `ampersand`: SQL*Plus substitution variables, &name, &&name and &1, a `.` right after the name ending it
# (``&schema..orders`` is the value of schema, then ``.orders``).
AT_STYLE, AMPERSAND_STYLE = "at", "ampersand"
STYLE_PATTERNS = {AT_STYLE: r"@[A-Za-z_]\w*@", AMPERSAND_STYLE: r"&&?(?:[A-Za-z_]\w*|\d+)\.?"}


@functools.lru_cache(maxsize=16)
def protected(styles: frozenset[str]) -> re.Pattern[str]:
    """Every placeholder of the common styles and of ``styles``."""
    return re.compile("|".join((_COMMON, *(STYLE_PATTERNS[style] for style in sorted(styles & STYLE_PATTERNS.keys())))))


UNRESOLVED = protected(frozenset(STYLE_PATTERNS))  # a name that holds any of them is parameterized
_TOKEN = re.compile(r"lineage_p_([0-9a-f]{10})_", re.IGNORECASE)
_NAME = re.compile(
    r"^\$\{" + VARIABLE_PREFIX + r"(?P<dollar>[^{}:]+)\}$|^#(?P<hash>\w+)#$|^@(?P<at>\w+)@$|^&&?(?P<amp>\w+)\.?$"
    r"|^\{\{\s*(?P<jinja>[A-Za-z_][\w.]*)\s*\}\}$"
)


def token_of(text: str) -> str:
    """The identifier that stands for the placeholder ``text`` while the SQL is parsed.

    >>> token_of("#src#") == token_of("#src#") != token_of("${src}")
    True
    """
    return f"lineage_p_{hashlib.sha1(text.encode()).hexdigest()[:10]}_"


@dataclass(slots=True)
class Placeholders:
    """The placeholders swapped out of one text: token (lower case) -> the text as written."""

    texts: dict[str, str] = field(default_factory=dict)

    def protect(self, sql: str, styles: Collection[str] = ()) -> str:
        """``sql`` with every placeholder replaced by its token (``@x@`` too when ``styles`` has ``at``).

        >>> p = Placeholders()
        >>> p.protect("INSERT INTO #db#.t SELECT 1") == f"INSERT INTO {token_of('#db#')}.t SELECT 1"
        True
        >>> p.protect("SELECT @a@ FROM @x@.t", ["at"]) == f"SELECT {token_of('@a@')} FROM {token_of('@x@')}.t"
        True
        """

        def swap(match: re.Match[str]) -> str:
            token = token_of(match.group(0))
            self.texts[token] = match.group(0)
            return token

        return protected(frozenset(styles)).sub(swap, sql)

    def restore(self, text: str) -> str:
        """``text`` with every token of this text turned back into its placeholder.

        >>> p = Placeholders()
        >>> p.restore(p.protect("${hivevar:src_db}.t_orders").lower())
        '${hivevar:src_db}.t_orders'
        """
        if not self.texts:
            return text
        return _TOKEN.sub(lambda m: self.texts.get(m.group(0).lower(), m.group(0)), text)

    def is_value(self, column: str) -> bool:
        """Whether the column name ``column`` (``t.c`` or ``?.c``, token form) is a whole placeholder:
        a value such as ``${min_amount}`` the parser took for a column."""
        last = column.rsplit(".", 1)[-1]
        return _TOKEN.fullmatch(last) is not None and last.lower() in self.texts


def is_parameterized(name: str) -> bool:
    """Whether a node name still holds a placeholder.

    >>> is_parameterized("#src_schema#.t_orders"), is_parameterized("stg.t_orders")
    (True, False)
    """
    return UNRESOLVED.search(name) is not None


def placeholder_name(text: str) -> str | None:
    """The variable a placeholder names, None for an expression (a macro call, a filter).

    >>> [placeholder_name(t) for t in ("${hivevar:db}", "#db#", "@db@", "&&db.", "{{ db }}", "{{ f('x') }}")]
    ['db', 'db', 'db', 'db', 'db', None]
    """
    match = _NAME.match(text)
    if match is None:
        return None
    return (
        match.group("dollar") or match.group("hash") or match.group("at") or match.group("amp") or match.group("jinja")
    )


def default_name(
    name: str, placeholders: Placeholders, defaults: Mapping[str, str], fold: Callable[[str], str]
) -> str | None:
    """The real dataset a token-form ``name`` points to when every placeholder in it has a default.

    A placeholder standing for the whole table part whose default is itself qualified
    (``FROM ${src}`` with ``src: stg.orders``) names the whole table.

    >>> p = Placeholders()
    >>> name = p.protect("#src#.t_orders")
    >>> default_name(name, p, {"src": "STG"}, str.lower), default_name(name, p, {}, str.lower)
    ('stg.t_orders', None)
    """
    lowered = {key.lower(): value for key, value in defaults.items()}
    values: dict[str, str] = {}
    for token in {m.group(0).lower() for m in _TOKEN.finditer(name)}:
        variable = placeholder_name(placeholders.texts.get(token, ""))
        value = None if variable is None else defaults.get(variable, lowered.get(variable.lower()))
        if value is None:
            return None
        values[token] = fold(str(value))
    if not values:
        return None
    last = name.rsplit(".", 1)[-1].lower()
    if last in values and "." in values[last]:
        return values[last]
    return _TOKEN.sub(lambda m: values[m.group(0).lower()], name)
