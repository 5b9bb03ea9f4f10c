"""The arrays an import builds: names interned into ids, edges appended in bulk, then ``GraphArrays``.

Everything lands in an ``ArraysBuilder`` (millions of edges would not fit a dict-of-tuples graph
comfortably), whose ``GraphArrays`` then merge with the existing store.  The Hive and OpenLineage
readers add nodes and edges one by one; edge lists (``edge_lists.py``) add a chunk of rows at once.
No sqlglot here.
"""

from __future__ import annotations

import itertools
import json
import reprlib
from array import array
from dataclasses import dataclass, field

import numpy as np

from lineage_cli.errors import InputError
from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store.arrays import GraphArrays, dedupe_edges
from lineage_cli.store.layout import pack_attributes

# The longest name (table, column, field, statement, file) an import takes: beyond it a value is a runaway
# (an unclosed quote, a generated blob), and its row is refused rather than stored.
MAX_NAME_CHARS = 4096
Problem = tuple[int, str]  # a skipped row: its line and what is wrong with it


class ImportError_(InputError):  # noqa: N801 - not the builtin ImportError
    """The import file cannot be read at all."""


@dataclass(slots=True)
class ArraysBuilder:
    """Accumulates named nodes and edges; ``build`` sorts names into ids.

    A node's kind is the one it was first named with, and a column first named with a dot in its name
    gets its table (the part before the last dot, a TABLE unless named before) and a CONTAINS edge.
    Each node keeps the input line it was first named on (``line`` while a reader adds a record), for
    messages about what the import added.
    """

    ids: dict[str, int] = field(default_factory=dict)
    kinds: bytearray = field(default_factory=bytearray)
    first_lines: array = field(default_factory=lambda: array("i"))  # per node
    line: int = 0  # the input line being added
    containers: dict[int, int] = field(default_factory=dict)
    provenance: dict[int, tuple[str, int]] = field(default_factory=dict)
    flags: dict[int, int] = field(default_factory=dict)  # node -> its NodeFlag bits, for the nodes that have any
    sources: array = field(default_factory=lambda: array("i"))
    targets: array = field(default_factory=lambda: array("i"))
    attributes: array = field(default_factory=lambda: array("H"))
    statements: array = field(default_factory=lambda: array("i"))

    def node(self, name: str, kind: NodeKind) -> int:
        node = self.ids.get(name)
        if node is None:
            node = self.ids[name] = len(self.kinds)
            self.kinds.append(kind)
            self.first_lines.append(self.line)
            if kind is NodeKind.COLUMN and "." in name:
                self._contain(self.node(name.rsplit(".", 1)[0], NodeKind.TABLE), node)
        return node

    def column(self, table: str, field: str) -> int:
        """Column ``field`` of ``table``, for formats that name the two apart (a table name may hold dots)."""
        name = f"{table}.{field}"
        node = self.ids.get(name)
        if node is None:
            node = self.ids[name] = len(self.kinds)
            self.kinds.append(NodeKind.COLUMN)
            self.first_lines.append(self.line)
            self._contain(self.node(table, NodeKind.TABLE), node)
        return node

    def _contain(self, table: int, column: int) -> None:
        self.containers[column] = table
        self.edge(table, column, EdgeType.CONTAINS)

    def edge(self, source: int, target: int, edge_type: EdgeType, flags: int = 0, statement: int = -1) -> None:
        self.sources.append(source)
        self.targets.append(target)
        self.attributes.append(pack_attributes(edge_type, flags))
        self.statements.append(statement)

    def transformation(self, name: str, file: str, line: int) -> int:
        node = self.node(name, NodeKind.TRANSFORMATION)
        self.provenance[node] = (file, line)
        return node

    def named_edges(
        self,
        sources: list[str],
        source_kinds: np.ndarray,
        targets: list[str],
        target_kinds: np.ndarray,
        attributes: np.ndarray,
        lines: np.ndarray,
    ) -> None:
        """``edge(node(source, kind), node(target, kind), ...)`` for many rows at once, to the same nodes and kinds.

        ``lines`` holds each row's input line.
        """
        names: list[str] = [""] * (2 * len(sources))
        names[0::2], names[1::2] = sources, targets  # the order ``node`` would meet them in: a row's source first
        kinds = np.empty(len(names), dtype=np.uint8)
        kinds[0::2], kinds[1::2] = source_kinds, target_kinds
        nodes = self._intern(names, kinds, np.repeat(np.asarray(lines, dtype=np.int32), 2))
        self._append_edges(nodes[0::2], nodes[1::2], attributes)

    def _intern(self, names: list[str], kinds: np.ndarray, lines: np.ndarray) -> np.ndarray:
        """The node of each name, as ``node`` one name after the other would give (and make) them, on ``lines``."""
        start = len(self.kinds)
        # One C-level pass: a new name is stored with its position (offset by _PENDING), so a position holding its
        # own value is a first occurrence, and the new nodes are numbered in order of those.
        nodes = np.fromiter(map(self.ids.setdefault, names, itertools.count(_PENDING)), np.int64, len(names))
        firsts = np.flatnonzero(nodes == np.arange(_PENDING, _PENDING + len(names)))
        node_at = np.empty(len(names), dtype=np.int64)
        node_at[firsts] = np.arange(start, start + firsts.size)
        pending = nodes >= _PENDING
        nodes[pending] = node_at[nodes[pending] - _PENDING]
        new_names = list(map(names.__getitem__, firsts.tolist()))
        self.ids.update(zip(new_names, range(start, start + firsts.size), strict=True))
        new_kinds, new_lines = kinds[firsts], lines[firsts]
        columns, tables = _tables_of_new_columns(new_names, new_kinds, new_lines)
        self.kinds += new_kinds.tobytes()
        self.first_lines.frombytes(new_lines.tobytes())
        if tables:  # the tables are TABLEs where new, so their own interning finds no columns
            table_kinds = np.full(len(tables), NodeKind.TABLE, dtype=np.uint8)
            table_nodes = self._intern(tables, table_kinds, new_lines[columns])
            column_nodes = columns + start
            self.containers.update(zip(column_nodes.tolist(), table_nodes.tolist(), strict=True))
            self._append_edges(table_nodes, column_nodes, np.full(len(tables), pack_attributes(EdgeType.CONTAINS, 0)))
        return nodes

    def _append_edges(self, sources: np.ndarray, targets: np.ndarray, attributes: np.ndarray) -> None:
        self.sources.frombytes(sources.astype(np.int32).tobytes())
        self.targets.frombytes(targets.astype(np.int32).tobytes())
        self.attributes.frombytes(attributes.astype(np.uint16).tobytes())
        self.statements.frombytes(np.full(sources.size, -1, dtype=np.int32).tobytes())

    def build(self) -> tuple[GraphArrays, np.ndarray]:
        """The graph, and the input line each of its nodes was first named on."""
        names = sorted(self.ids)  # code-point order: a node's store id is its rank
        by_rank = np.fromiter(map(self.ids.__getitem__, names), np.int32, len(names))
        rank = np.empty_like(by_rank)
        rank[by_rank] = np.arange(by_rank.size, dtype=np.int32)
        count = len(names)
        containers = np.full(count, -1, dtype="<i4")
        children = np.fromiter(self.containers.keys(), np.int32, len(self.containers))
        containers[rank[children]] = rank[np.fromiter(self.containers.values(), np.int32, children.size)]
        files = sorted({file for file, _ in self.provenance.values()})
        file_index = {file: i for i, file in enumerate(files)}
        node_file = np.full(count, -1, dtype="<i4")
        node_line = np.zeros(count, dtype="<i4")
        for node, (file, line) in self.provenance.items():
            node_file[rank[node]], node_line[rank[node]] = file_index[file], line
        statements = np.frombuffer(self.statements, dtype=np.int32)
        edges = dedupe_edges(
            rank[np.frombuffer(self.sources, dtype=np.int32)],
            rank[np.frombuffer(self.targets, dtype=np.int32)],
            np.frombuffer(self.attributes, dtype=np.uint16),
            np.where(statements >= 0, rank[np.maximum(statements, 0)], -1),
        )
        kinds = np.frombuffer(bytes(self.kinds), dtype="u1")[by_rank]
        first_lines = np.frombuffer(self.first_lines, dtype=np.int32)[by_rank]
        flags = np.zeros(count, dtype="u1")
        for node, bits in self.flags.items():
            flags[rank[node]] = bits
        return GraphArrays(names, kinds, containers, node_file, node_line, files, *edges, flags), first_lines


_PENDING = 1 << 40  # above every node id: ``_intern``'s marker for a name met for the first time


def _tables_of_new_columns(names: list[str], kinds: np.ndarray, lines: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The new columns ``node`` would give a table, meeting ``names`` one after the other: positions, table names.

    ``names`` are new names in order of first occurrence, ``kinds`` and ``lines`` the kinds they first occur with
    and the lines they first occur on.  A name that a column names as its table before the name's own first
    occurrence becomes a TABLE in ``kinds``, as in ``node``, first named on that column's line in ``lines``.
    """
    columns = np.flatnonzero(kinds == NodeKind.COLUMN)
    column_names = list(map(names.__getitem__, columns.tolist()))
    dotted = np.fromiter(map(str.__contains__, column_names, itertools.repeat(".")), bool, len(column_names))
    columns = columns[dotted]
    tables = [name.rpartition(".")[0] for name in itertools.compress(column_names, dotted.tolist())]
    position = dict(zip(names, range(len(names)), strict=True))
    table_at = np.fromiter(map(position.get, tables, itertools.repeat(-1)), np.int64, len(tables))
    named_later = table_at > columns
    # A column made a table names no table of its own, which may leave its own table a column: iterate until
    # nothing changes (as many rounds as names have dots, at most).
    keep = np.ones(columns.size, dtype=bool)
    while True:
        made_table = np.zeros(len(names), dtype=bool)
        made_table[table_at[keep & named_later]] = True
        kept = ~made_table[columns]
        if (kept == keep).all():
            break
        keep = kept
    tabled = keep & named_later
    kinds[table_at[tabled]] = NodeKind.TABLE
    np.minimum.at(lines, table_at[tabled], lines[columns[tabled]])
    return columns[keep], list(itertools.compress(tables, keep.tolist()))


def quoted(value: object) -> str:
    """``repr(value)`` cut short: a message about a row quotes its values, never reproduces a huge one.

    >>> quoted("x" * 5000)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxx'"
    """
    return _SHORT.repr(value)


def _short_repr() -> reprlib.Repr:
    short = reprlib.Repr()
    short.maxstring = short.maxother = 60
    short.maxlist = short.maxdict = 4
    return short


_SHORT = _short_repr()


def json_object(text: str) -> dict[str, object] | str:
    """The JSON object on a line, or what is wrong with the line."""
    try:
        value = json.loads(text)
    except ValueError as error:
        return f"not JSON: {error}"
    return value if isinstance(value, dict) else "not a JSON object"
