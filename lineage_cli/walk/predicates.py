"""Predicate edges at column level, tied to their statement.

A predicate edge points from a column to the *table* a statement writes, and gates every
column that same statement writes (``transformation -COLUMN_WRITE-> column`` edges say
which).  (A CONDITIONAL or WINDOW predicate that shapes one column's value also points at
that column: a plain column-to-column edge, which the walk follows like a projection.)  So
upstream of ``t.c`` the predicates that count are those of the statements
writing ``t.c``; downstream of a filtered column, the columns affected are those its
statement writes.  The plan walk (``planned.py``) asks these functions whenever a
``predicate`` rule meets a column; other edges need no statement and are walked plainly.
"""

from __future__ import annotations

from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.walk.edges import TypedEdges


class PredicateTies:
    """The statement ties of one store's predicate edges, each table's worked out once: a column walk
    meets the columns of a table one by one, and each needs the same predicate edges into it."""

    def __init__(self, edges: TypedEdges) -> None:
        self.edges = edges
        self._into: dict[int, list[tuple[int, int, set[int]]]] = {}  # table -> (source, attributes, statements)
        self._written: dict[tuple[int, int], list[int]] = {}  # (table, statement) -> gated columns

    def gating(self, column: int) -> list[tuple[int, int, int]]:
        """Upstream: ``(source column, table, attributes)`` of the predicates that gate ``column``.

        Those of its table's predicate edges whose statement writes ``column`` (all of them when no
        statement is known on either side: imported lineage carries none).
        """
        table = self.edges.store.container(column)
        if table is None:
            return []
        writers = {m for m, _ in self.edges.into(column, EdgeType.COLUMN_WRITE)}
        return [
            (source, table, attributes)
            for source, attributes, statements in self._predicates_into(table)
            if not writers or statements & writers or -1 in statements
        ]

    def gated(self, column: int) -> list[tuple[int, int, list[int]]]:
        """Downstream: ``(table, attributes, gated columns)`` for each predicate edge out of ``column`` onto a table."""
        store = self.edges.store
        return [
            (table, attributes, self._gated_columns(table, statement))
            for table, attributes, statement in self.edges.out(column, EdgeType.PREDICATE)
            if store.kind(table) is not NodeKind.COLUMN
        ]

    def _predicates_into(self, table: int) -> list[tuple[int, int, set[int]]]:
        found = self._into.get(table)
        if found is None:
            edges = self.edges
            found = self._into[table] = [
                (source, attributes, edges.statements_of(source, table, EdgeType.PREDICATE))
                for source, attributes in edges.into(table, EdgeType.PREDICATE)
            ]
        return found

    def _gated_columns(self, table: int, statement: int) -> list[int]:
        """The columns of ``table`` that ``statement`` writes; all its columns when no statement is known."""
        found = self._written.get((table, statement))
        if found is None:
            edges = self.edges
            if statement < 0:
                found = [n for n, _, _ in edges.out(table, EdgeType.CONTAINS)]
            else:
                writes = edges.out(statement, EdgeType.COLUMN_WRITE)
                found = [n for n, _, _ in writes if edges.store.container(n) == table]
            self._written[table, statement] = found
        return found
