"""The records of cursor FOR loops: ``FOR r IN (SELECT id FROM src) LOOP ... r.id ... END LOOP`` (PL/SQL,
PL/pgSQL without the parentheses, BigQuery and Snowflake scripting with ``DO ... END FOR``), or a loop over a
declared cursor (PL/SQL's ``CURSOR c IS SELECT ...``, PL/pgSQL's ``c CURSOR FOR SELECT ...``).

A record's fields are its query's columns, so a statement in the loop's body that reads ``r.id`` reads the
query.  ``OpenLoops`` follows the cursors a script declares and the loops it opens and ends, piece by piece
as ``split`` cuts it, and ``grafted`` has each statement read the fields of the records from their queries:
``INSERT INTO t (id) VALUES (r.id)`` is read as ``INSERT INTO t (id) VALUES ((SELECT r.id FROM (query) r))``,
which the table and column analyses then read as any other statement.  The
variable of a loop over anything else (``FOR i IN 1..10``) is a variable, as are a cursor's parameters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from lineage_cli.harvest.sql.rewrites import TextGuard

_BODIES = frozenset({"LOOP", "DO"})  # what ends a loop's header: PL/SQL, PL/pgSQL / BigQuery, Snowflake, MySQL
_ENDS = frozenset({"LOOP", "FOR", "WHILE"})  # END LOOP, END FOR, END WHILE
_QUERIES = frozenset({"SELECT", "WITH"})
_CURSOR_OPTIONS = frozenset({"NO", "SCROLL"})  # PL/pgSQL's `c NO SCROLL CURSOR FOR ...`
_NAMES = (TokenType.VAR, TokenType.IDENTIFIER)
# What a block's first statement may follow in a piece: `BEGIN LOOP`, `THEN LOOP`, `<<l>> LOOP`, MySQL's `l: LOOP`
_BEFORE_STATEMENTS = frozenset({"BEGIN", "THEN", "ELSE", "LOOP", "DO", "EXCEPTION", ">", ":"})
_MAY_LOOP = TextGuard(("loop", "cursor", "do"), (re.compile(r"\b(?:loop|cursor|do)\b"),))


@dataclass(frozen=True, slots=True)
class _Loop:
    """One open loop: a cursor FOR loop's record and its query; neither for any other loop."""

    record: str | None = None
    query: exp.Query | None = None


@dataclass(slots=True)
class OpenLoops:
    """The cursors declared so far in a script and the loops open at the piece ``split`` cuts next."""

    engine: Dialect
    sql: str
    cursors: dict[str, exp.Query] = field(default_factory=dict)
    loops: list[_Loop] = field(default_factory=list)  # the innermost last
    # Whether the script may declare a cursor or open a loop at all: every loop opens at a LOOP or a DO, every
    # cursor at CURSOR.  Most scripts have none, and then no piece is looked at (two passes over its tokens).
    possible: bool = field(init=False)

    def __post_init__(self) -> None:
        self.possible = _MAY_LOOP.may_hold(self.sql.lower())

    def see(self, piece: list[Token]) -> list[Token]:
        """Follow the cursor ``piece`` declares and the loops it opens or ends; the names it declares: its
        loops' variables and its cursor's parameters.

        >>> sql = "BEGIN FOR r IN (SELECT id FROM src) LOOP INSERT INTO t VALUES (r.id)"
        >>> loops = OpenLoops(Dialect.get_or_raise("oracle"), sql)
        >>> tokens = loops.engine.tokenize(sql)
        >>> [t.text for t in loops.see(tokens)], [loop.record for loop in loops.loops]
        (['r'], ['r'])
        >>> _ = loops.see(loops.engine.tokenize("END LOOP")); loops.loops
        []
        >>> _ = loops.see(loops.engine.tokenize("SELECT loop FROM t")); loops.loops
        []
        """
        if not self.possible:
            return []
        if len(piece) == 2 and piece[0].token_type is TokenType.COMMAND and piece[1].token_type is TokenType.STRING:
            piece = [piece[0], *self._tokenized(piece[1].text)]  # plpgsql's DECLARE, read as a command
        words = [token.text.upper() for token in piece]
        if len(words) > 1 and words[0] == "END" and words[1] in _ENDS:
            if self.loops:
                self.loops.pop()
            return []
        return [*self._declare_cursor(piece, words), *self._open_loops(piece, words)]

    def grafted(self, statement: exp.Expression | None) -> exp.Expression | None:
        """``statement`` with each field of an open loop's record that it reads (``r.id``) read from the loop's
        query instead, as the scalar subquery ``(SELECT r.id FROM (query) r)``: the statement's own names
        still mean its own tables, as they do in the loop, where a record's field is always qualified."""
        records = {loop.record: loop.query for loop in self.loops if loop.record and loop.query is not None}
        if statement is None or not records:
            return statement
        named = {alias.name.lower() for alias in statement.find_all(exp.TableAlias)}  # a relation named r is r
        for column in list(statement.find_all(exp.Column)):
            record = column.table.lower()
            if record in records and record not in named and not column.args.get("db"):
                field_of = exp.select(column.copy()).from_(records[record].copy().subquery(record, copy=False))
                column.replace(field_of.subquery(copy=False))
        return statement

    def _tokenized(self, text: str) -> list[Token]:
        try:
            return self.engine.tokenize(text)
        except TokenError:
            return []

    def _declare_cursor(self, piece: list[Token], words: list[str]) -> list[Token]:
        """Learn the query of the cursor ``piece`` declares; its parameters."""
        at = next((index for index, _ in _outside_parentheses(piece) if words[index] == "CURSOR"), None)
        if at is None:
            return []
        if at + 1 < len(piece) and piece[at + 1].token_type in _NAMES:  # PL/SQL: CURSOR c [(...)] IS
            name, parameters = piece[at + 1], piece[at + 2 :]
        else:  # PL/pgSQL: c [[NO] SCROLL] CURSOR [(...)] FOR
            before = [token for token in piece[:at] if token.text.upper() not in _CURSOR_OPTIONS]
            if not before:
                return []
            name, parameters = before[-1], piece[at + 1 :]
        body = next(
            (i for i, token in _outside_parentheses(piece) if i > at and token.text.upper() in ("IS", "FOR")), 0
        )
        if body and (query := self._query(piece[body + 1 :])) is not None:
            self.cursors[name.text.lower()] = query
        return _parameter_names(parameters) if parameters and parameters[0].token_type is TokenType.L_PAREN else []

    def _open_loops(self, piece: list[Token], words: list[str]) -> list[Token]:
        """Open the loops whose headers ``piece`` holds (its statement, after them, opens none); their variables."""
        variables: list[Token] = []
        header: int | None = None  # the FOR of a `FOR v IN ...` header
        conditional = False  # after a WHILE
        for index, _ in _outside_parentheses(piece):
            word, after_end = words[index], index > 0 and words[index - 1] == "END"
            if word == "FOR" and words[index + 2 : index + 3] == ["IN"]:
                header = index
            elif word == "WHILE" and not after_end:
                conditional = True
            elif word in _BODIES and not after_end and (header is not None or conditional or _opens_bare(words, index)):
                if header is None:
                    self.loops.append(_Loop())
                else:
                    variables.append(piece[header + 1])
                    query = self._loop_query(piece[header + 3 : index])
                    self.loops.append(_Loop(piece[header + 1].text.lower(), query))
                header, conditional = None, False
        return variables

    def _loop_query(self, tokens: list[Token]) -> exp.Query | None:
        """What a FOR loop's header iterates over, if rows: a query, or a declared cursor (with its arguments)."""
        if tokens and tokens[0].token_type in _NAMES and (len(tokens) == 1 or tokens[1].text == "("):
            return self.cursors.get(tokens[0].text.lower())
        return self._query(tokens)

    def _query(self, tokens: list[Token]) -> exp.Query | None:
        """``tokens`` parsed, if they are a query (perhaps in parentheses)."""
        while len(tokens) > 2 and len(_outside_parentheses(tokens)) == 0:  # `((SELECT ...))`, not `(...) UNION (...)`
            tokens = tokens[1:-1]
        if not tokens or (tokens[0].text.upper() not in _QUERIES and tokens[0].token_type is not TokenType.L_PAREN):
            return None
        try:
            parsed = self.engine.parser(error_level=ErrorLevel.RAISE).parse(tokens, self.sql)
        except (ParseError, TokenError, RecursionError, ValueError, TypeError, AttributeError):
            return None  # a loop over what cannot be read: its record stays a variable
        query = parsed[0] if len(parsed) == 1 else None
        return query if isinstance(query, exp.Query) else None


def _opens_bare(words: list[str], index: int) -> bool:
    """Whether the word at ``index`` is a bare ``LOOP`` that opens a block where a statement may begin (first,
    after ``BEGIN``, ``THEN``, ``ELSE``, another loop's opening or a label), not a name (``SELECT loop FROM t``)."""
    return words[index] == "LOOP" and (index == 0 or words[index - 1] in _BEFORE_STATEMENTS)


def _outside_parentheses(tokens: list[Token]) -> list[tuple[int, Token]]:
    """The tokens of ``tokens`` outside parentheses, with their indexes."""
    depth, outside = 0, []
    for index, token in enumerate(tokens):
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
        elif depth == 0:
            outside.append((index, token))
    return outside


def _parameter_names(tokens: list[Token]) -> list[Token]:
    """The names of a parameter list ``(p NUMBER, q DATE DEFAULT SYSDATE)``: the first token of each item."""
    names, depth, expecting = [], 0, False
    for token in tokens:
        if token.token_type is TokenType.L_PAREN:
            depth += 1
            expecting = depth == 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                break
        elif depth == 1 and token.token_type is TokenType.COMMA:
            expecting = True
        elif expecting:
            names.append(token)
            expecting = False
    return names
