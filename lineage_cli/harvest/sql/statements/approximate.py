"""Table-level lineage of a statement sqlglot could not parse, read from its tokens: approximate lineage.

A statement in vendor syntax sqlglot does not know, or a template it could not render, fails to parse,
but its tokens still say which tables it writes and reads, in the words every dialect shares: the target
after ``INSERT [INTO | OVERWRITE] [TABLE]``, ``CREATE ... TABLE | VIEW name ... AS <query>``, ``MERGE
[INTO]``, ``UPDATE``, ``DELETE [FROM]`` (``REPLACE INTO``), and the sources after ``FROM`` (a query's, not
``EXTRACT(x FROM y)``'s or ``IS DISTINCT FROM``'s), ``JOIN`` and ``USING``, lists after ``FROM`` included.
``recover`` reads them tolerantly and marks the result ``approximate``; the parse error is reported all
the same (``script.py``).

It never makes a table out of anything else: only a name token (a plain or quoted identifier, never a
keyword) can start a table's name; a name followed by ``(`` is a function; CTE names, aliases (those the
statement gives its tables and derived tables) and the dialect's dummy tables (DUAL) are no tables; an
``UPDATE alias`` / ``DELETE alias`` writes the table the alias stands for; and a statement with no target
it can read yields nothing, whatever it reads.  Names are qualified as a parsed statement's are
(``Context.table_name``: folding, the default schema, T-SQL's ``#temp`` marks).  What it cannot know: CTE
scopes (a CTE's name is no table anywhere in the statement), column lineage (there is none), and a
statement's parts that its syntax error made unreadable.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from lineage_cli.harvest.sql.statements.context import Context, StatementLineage, Write

APPROXIMATE_NOTE = "table lineage recovered approximately from its tokens"

_NAMES = frozenset({TokenType.VAR, TokenType.IDENTIFIER})  # what may start a table's name
# A FROM inside parentheses that begin so is a query's (a subquery, a CTE's body); elsewhere a function's
_QUERY_STARTS = frozenset({TokenType.SELECT, TokenType.WITH, TokenType.FROM, TokenType.L_PAREN})
_CREATED = {"TABLE": False, "VIEW": True}  # CREATE ... TABLE | VIEW: is it a view
_CHANGES = {"UPDATE": "update", "DELETE": "delete", "MERGE": "merge"}  # statements that read their own target
_NOT_ALIASES = frozenset(
    {"ON", "WHERE", "SET", "USING", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "OUTER", "NATURAL",
     "GROUP", "ORDER", "HAVING", "LIMIT", "UNION", "EXCEPT", "MINUS", "INTERSECT", "WINDOW", "QUALIFY",
     "PARTITION", "SELECT", "VALUES", "WHEN", "LATERAL", "PIVOT", "UNPIVOT", "SAMPLE", "TABLESAMPLE", "FOR",
     "INSERT", "UPDATE", "DELETE", "MERGE", "WITH", "RETURNING", "OUTPUT", "CLUSTER", "DISTRIBUTE", "SORT",
     "FETCH", "OFFSET", "START", "CONNECT", "INTO", "APPLY", "STRAIGHT_JOIN", "ANTI", "SEMI", "POSITIONAL"}
)  # fmt: skip


def recover(tokens: list[Token], ctx: Context) -> StatementLineage | None:
    """The approximate table lineage of the statement ``tokens`` hold, or None when they name no target.

    >>> from sqlglot.dialects.dialect import Dialect
    >>> from lineage_cli.profiles import load_profile
    >>> sql = "INSERT INTO mart.t SELECT a FROM stg.s x JOIN stg.u ON x.k = u.k QUALIFY FANCY(7) ~~ x"
    >>> lineage = recover(Dialect.get_or_raise("postgres").tokenize(sql), Context(load_profile("postgres")))
    >>> lineage.type, lineage.targets, lineage.sources, lineage.approximate
    ('insert', ['mart.t'], ['stg.s', 'stg.u'], True)
    """
    if not tokens:
        return None
    scan = _Scan(tokens, ctx)
    writes = scan.writes()
    if not writes:
        return None
    return StatementLineage(scan.kind, writes, None, approximate=True)


@dataclass(slots=True)
class _Name:
    """A table's name as written: its parts' tokens, and where it ends."""

    parts: list[Token]  # dots and T-SQL's `#` marks included
    end: int  # the index after its last token

    @property
    def qualified(self) -> bool:
        return any(token.token_type is TokenType.DOT for token in self.parts)


@dataclass(slots=True)
class _Scan:
    """One statement's tokens, with what a pass over them finds: nesting, CTE names, aliases."""

    tokens: list[Token]
    ctx: Context
    kind: str = ""
    depths: list[int] = field(default_factory=list)  # each token's parenthesis depth
    in_query: list[bool] = field(default_factory=list)  # each token: whether the parentheses around it hold a query
    closing: dict[int, int] = field(default_factory=dict)  # an opening parenthesis's index -> its closing one's
    ctes: set[str] = field(default_factory=set)
    body: int = 0  # the index of the statement's own first word, after its WITH clause
    aliases: dict[str, _Name | None] = field(default_factory=dict)  # folded alias -> its table (None: a subquery)

    def __post_init__(self) -> None:
        self._nest()
        self.body = self._cte_clause(0)

    def writes(self) -> list[Write]:
        references = list(self._sources())  # (first: they name the aliases the targets may use)
        targets = [(name, is_view) for name, is_view in self._targets() if name is not None]
        if not targets:
            return []
        taken = {name.end for name, _ in targets}
        sources = sorted({self._qualified(name) for name in references if name.end not in taken})
        writes = []
        for name, is_view in targets:
            target = self._qualified(name)
            read = sorted({*sources, target}) if self.kind in _CHANGES.values() else sources
            if all(w.target != target for w in writes):
                writes.append(Write(target, read, is_view))
        return writes

    # -- structure ---------------------------------------------------------------------------------------
    def _nest(self) -> None:
        depth, stack, opened = 0, [True], []
        for index, token in enumerate(self.tokens):
            if token.token_type is TokenType.R_PAREN and depth:
                depth -= 1
                stack.pop()
                self.closing[opened.pop()] = index
            self.depths.append(depth)
            self.in_query.append(stack[-1])
            if token.token_type is TokenType.L_PAREN:
                depth += 1
                opened.append(index)
                after = self.tokens[index + 1] if index + 1 < len(self.tokens) else None
                stack.append(after is not None and after.token_type in _QUERY_STARTS)

    def _cte_clause(self, index: int) -> int:
        """Read a ``WITH [RECURSIVE] name [(cols)] AS [[NOT] MATERIALIZED] (...), ...`` clause at ``index``, if
        one is there, into ``ctes``; the index after it.  WITH clauses inside the statement are read too."""
        for at, token in enumerate(self.tokens):
            if at != index and token.token_type is TokenType.WITH:
                self._cte_names(at)
        return self._cte_names(index)

    def _cte_names(self, index: int) -> int:
        tokens = self.tokens
        if index >= len(tokens) or tokens[index].token_type is not TokenType.WITH:
            return index
        at = index + 1 + (self._word(index + 1) == "RECURSIVE")
        while at < len(tokens) and tokens[at].token_type in _NAMES:
            name, at = self._fold(tokens[at]), self._after_parentheses(at + 1)
            if self._word(at) != "AS":
                return at
            at += 1
            while self._word(at) in ("NOT", "MATERIALIZED"):
                at += 1
            if self._type(at) is not TokenType.L_PAREN:
                return at
            self.ctes.add(name)
            at = self._after_parentheses(at)
            if self._type(at) is not TokenType.COMMA:
                return at
            at += 1
        return at

    def _after_parentheses(self, index: int) -> int:
        """The index after the parenthesized group opening at ``index``; ``index`` when none opens there."""
        if self._type(index) is not TokenType.L_PAREN:
            return index
        return self.closing.get(index, len(self.tokens) - 1) + 1  # (one never closed runs to the end)

    # -- targets ------------------------------------------------------------------------------------------
    def _targets(self) -> Iterator[tuple[_Name | None, bool]]:
        first = self._word(self.body)
        if first == "CREATE":
            yield from self._created()
        elif first in _CHANGES:
            self.kind = _CHANGES[first]
            yield self._changed(self.body + 1, first), False
        elif first == "REPLACE" and self._word(self.body + 1) == "INTO":
            self.kind = "insert"
            yield self._name(self.body + 2, target=True), False
        inserts = [self._inserted(at) for at, token in enumerate(self.tokens) if self._top_insert(at, token)]
        if inserts and not self.kind:
            self.kind = "insert" if len(inserts) == 1 else "multi_insert"
        for name in inserts:
            yield name, False

    def _top_insert(self, index: int, token: Token) -> bool:
        return token.token_type is TokenType.INSERT and self.depths[index] == 0 and self._word(index - 1) != "THEN"

    def _inserted(self, index: int) -> _Name | None:
        at = index + 1
        if self._word(at) in ("INTO", "OVERWRITE"):
            at += 1
        if self._word(at) == "TABLE":
            at += 1
        return self._name(at, target=True)  # (LOCAL DIRECTORY, a path, a column list alone: no name, no target)

    def _created(self) -> Iterator[tuple[_Name | None, bool]]:
        """``CREATE [OR REPLACE] [modifiers] TABLE | VIEW [IF NOT EXISTS] name ... AS <query>``."""
        at = self.body + 1
        while at < len(self.tokens) and self._word(at) not in _CREATED and self._type(at) in _MODIFIER_TYPES:
            at += 1
        is_view = _CREATED.get(self._word(at))
        if is_view is None:
            return
        at += 1
        if self._word(at) == "IF":
            at += 3 if self._word(at + 1) == "NOT" else 2
        name = self._name(at, target=True)
        if name is None or not self._has_query(name.end):
            return
        self.kind = "view" if is_view else "ctas"
        yield name, is_view

    def _has_query(self, index: int) -> bool:
        """Whether a top-level ``AS`` after ``index`` introduces a query (or VALUES): a CREATE that copies rows."""
        return any(
            self.depths[at] == 0
            and self._word(at) == "AS"
            and (self._type(at + 1) in _QUERY_STARTS or self._word(at + 1) == "VALUES")
            for at in range(index, len(self.tokens))
        )

    def _changed(self, index: int, word: str) -> _Name | None:
        """The table an UPDATE, DELETE or MERGE changes: an alias stands for its table; a CTE is no table."""
        if word == "DELETE" and self._word(index) == "FROM" or word == "MERGE" and self._word(index) == "INTO":
            index += 1
        name = self._name(index, target=True)
        if name is None or name.qualified:
            return name
        folded = self._fold(name.parts[-1])
        if folded in self.aliases:
            return self.aliases[folded]  # T-SQL's `UPDATE t SET ... FROM dbo.tgt AS t`
        return None if folded in self.ctes else name

    # -- sources ------------------------------------------------------------------------------------------
    def _sources(self) -> Iterator[_Name]:
        """Every table named after a query's FROM (and the list it starts), a JOIN or a USING; aliases are
        recorded as they are met."""
        for at, token in enumerate(self.tokens):
            kind = token.token_type
            if kind is TokenType.FROM and self.in_query[at] and self._word(at - 1) not in ("DISTINCT", "DELETE"):
                yield from self._listed(at + 1)
            elif kind is TokenType.JOIN or (kind is TokenType.USING and self._starts_relation(at + 1)):
                yield from self._listed(at + 1, single=True)

    def _starts_relation(self, index: int) -> bool:
        """After USING: a table or a subquery (MERGE, DELETE ... USING), not a join's column list."""
        return self._type(index) is not TokenType.L_PAREN or self._type(index + 1) in _QUERY_STARTS

    def _listed(self, index: int, single: bool = False) -> Iterator[_Name]:
        """The relations from ``index`` on: one (after JOIN, USING), or a FROM's comma list."""
        while index < len(self.tokens):
            if self._word(index) == "ONLY":  # Postgres' FROM ONLY parent
                index += 1
            name = None if self._type(index) is TokenType.L_PAREN else self._name(index)
            if name is not None:
                yield name
            end = name.end if name is not None else self._past_relation(index)
            if end == index:
                return  # neither a name, nor a subquery, nor a call: a keyword, the end
            after = self._next_in_list(self._aliased(end, name), self.depths[index])
            if single or after is None:
                return
            index = after

    def _next_in_list(self, index: int, depth: int) -> int | None:
        """Where a FROM list's next relation starts: past the comma after what may follow a relation and its alias
        (``TABLESAMPLE ...``, ``PARTITION (p)``, ``FOR SYSTEM_TIME AS OF ...``, ``FORCE INDEX (i)``); None where
        the list ends first (a clause, a join, the parenthesis around it)."""
        for at in range(index, len(self.tokens)):
            if self.depths[at] < depth:
                return None
            if self.depths[at] == depth:
                if self.tokens[at].token_type is TokenType.COMMA:
                    return at + 1
                if self._word(at) in _LIST_ENDS:
                    return None
        return None

    def _past_relation(self, index: int) -> int:
        """Past a relation that is no table's name: a subquery, a call (``TABLE(...)``, ``UNNEST(...)``, a table
        function), each perhaps ``LATERAL``; ``index`` when there is none."""
        start = index
        if self._word(index) == "LATERAL":
            index += 1
        if self._type(index) is not TokenType.L_PAREN and self._type(index + 1) is TokenType.L_PAREN:
            index += 1
        end = self._after_parentheses(index)
        return end if end != index else start

    def _aliased(self, index: int, name: _Name | None) -> int:
        """Past the alias after a relation (``[AS] alias [(cols)]``, a T-SQL ``WITH (hint)``), recording it."""
        if self._word(index) == "AS":
            index += 1
        elif self._type(index) not in _NAMES or self._word(index) in _NOT_ALIASES:
            return self._hinted(index)
        if self._type(index) in _NAMES:
            self.aliases.setdefault(self._fold(self.tokens[index]), name)
            index = self._after_parentheses(index + 1)
        return self._hinted(index)

    def _hinted(self, index: int) -> int:
        if self._word(index) == "WITH" and self._type(index + 1) is TokenType.L_PAREN:
            return self._after_parentheses(index + 1)
        return index

    # -- names --------------------------------------------------------------------------------------------
    def _name(self, index: int, target: bool = False) -> _Name | None:
        """The table name starting at ``index`` (``a``, ``s.a``, ``c.s.a``, T-SQL's ``#a``, ``##a``, ``@a``), or None: a
        keyword, a function call (a name and ``(``); unless it is a ``target``, also a CTE's, an alias's or a
        dummy table's name."""
        tokens, start = self.tokens, index
        tsql = self.ctx.profile.sqlglot_dialect == "tsql"
        while self._type(index) is TokenType.HASH and tsql:
            index += 1
        if index == start and tsql and self._word(index) == "@" and self._type(index + 1) is TokenType.VAR:
            index += 1  # a table variable, @t
        if self._type(index) not in _NAMES:
            return None
        index += 1
        while self._type(index) is TokenType.DOT and index + 1 < len(tokens) and _is_word(tokens[index + 1]):
            index += 2
        name = _Name(tokens[start:index], index)
        if target:
            return name
        if self._type(index) is TokenType.L_PAREN:
            return None  # a table function: generate_series(...), FLATTEN(...)
        if name.qualified:
            return name
        folded = self._fold(tokens[index - 1])
        hidden = folded in self.ctes or folded in self.aliases or folded in self.ctx.profile.dummy_tables
        return None if hidden else name

    def _qualified(self, name: _Name) -> str:
        """The name as ``Context.table_name`` gives a parsed one: folded, the default schema filled in."""
        hashes = sum(token.token_type is TokenType.HASH for token in name.parts)
        parts = [token for token in name.parts if token.token_type not in _MARKS][-3:]
        identifiers = [exp.Identifier(this=t.text, quoted=t.token_type is TokenType.IDENTIFIER) for t in parts]
        if name.parts[0].token_type is TokenType.PARAMETER:
            identifiers[-1].set("this", "@" + identifiers[-1].this)  # as ``datasets.survey`` names it
        if hashes:
            identifiers[-1].set("global_" if hashes > 1 else "temporary", True)
        catalog, db = ([None, None, *identifiers[:-1]])[-2:]
        return self.ctx.table_name(exp.Table(this=identifiers[-1], db=db, catalog=catalog))

    # -- tokens -------------------------------------------------------------------------------------------
    def _type(self, index: int) -> TokenType | None:
        return self.tokens[index].token_type if 0 <= index < len(self.tokens) else None

    def _word(self, index: int) -> str:
        """The keyword at ``index``, upper-cased; "" for a quoted name, a string, or outside the statement."""
        if not 0 <= index < len(self.tokens) or self.tokens[index].token_type in _NOT_WORDS:
            return ""
        return self.tokens[index].text.upper()

    def _fold(self, token: Token) -> str:
        return self.ctx.profile.fold(token.text, token.token_type is TokenType.IDENTIFIER)


_MARKS = frozenset({TokenType.HASH, TokenType.DOT, TokenType.PARAMETER})  # of a name's tokens, no part of it
# What ends a FROM list where a comma would go on with it: a clause, a join, a statement of a multi-insert
_LIST_ENDS = frozenset(
    {"WHERE", "GROUP", "ORDER", "HAVING", "LIMIT", "UNION", "EXCEPT", "MINUS", "INTERSECT", "WINDOW", "QUALIFY",
     "SELECT", "VALUES", "INSERT", "UPDATE", "DELETE", "MERGE", "RETURNING", "OUTPUT", "CLUSTER", "DISTRIBUTE",
     "SORT", "FETCH", "OFFSET", "START", "CONNECT", "INTO", "ON", "USING", "SET", "WHEN", "JOIN", "INNER", "LEFT",
     "RIGHT", "FULL", "CROSS", "OUTER", "NATURAL", "APPLY", "STRAIGHT_JOIN", "ANTI", "SEMI", "POSITIONAL"}
)  # fmt: skip
_NOT_WORDS = frozenset({TokenType.IDENTIFIER, TokenType.STRING, TokenType.NATIONAL_STRING})
# What may stand between CREATE and TABLE / VIEW: OR REPLACE, TEMP, GLOBAL, VOLATILE, MULTISET, TRANSIENT ...
_MODIFIER_TYPES = frozenset(
    t for t in TokenType
    if t.name in ("VAR", "OR", "REPLACE", "TEMPORARY", "VOLATILE", "GLOBAL", "LOCAL", "MATERIALIZED", "RECURSIVE",
                  "SET", "EXTERNAL", "UNIQUE", "TRANSIENT", "MULTISET", "SECURE", "UNLOGGED")
)  # fmt: skip


def _is_word(token: Token) -> bool:
    """A name part after a dot: any identifier or word (``x.order`` names a table ``order``)."""
    return token.token_type in _NAMES or token.text.replace("_", "").isalnum()
