"""The arrays an import builds: names interned into ids, edges appended in bulk, then ``GraphArrays``.

Everything lands in a builder (millions of edges would not fit a dict-of-tuples graph comfortably),
whose ``GraphArrays`` then merge with the existing store.  The Hive and OpenLineage readers add nodes
and edges one by one to an ``ArraysBuilder``, which interns names with a dict; edge lists
(``edge_lists.py``) add a chunk of rows at once to an ``EdgeListBuilder``, which interns them with a
``Vocabulary`` (names as bytes, found with numpy) and keeps edges as arrays, so that a million names cost
their bytes rather than a ``str`` and a dict entry each.  No sqlglot here.
"""

from __future__ import annotations

import itertools
import json
import reprlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from lineage_cli.errors import InputError
from lineage_cli.heap import return_free_heap
from lineage_cli.imports.vocabulary import Vocabulary
from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store.arrays import ColumnExpressions, GraphArrays, NameTable, StatementTexts, dedupe_edges
from lineage_cli.store.layout import TYPE_BITS, TYPE_MASK, pack_attributes

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
    expressions: dict[tuple[int, int], str] = field(default_factory=dict)  # (column, statement) -> SQL expression
    sql: dict[int, tuple[str, str]] = field(default_factory=dict)  # statement -> its SQL text and dialect

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
        expressions = ColumnExpressions.of((rank[c], rank[s], text) for (c, s), text in self.expressions.items())
        sql = StatementTexts.of((rank[made], text, dialect) for made, (text, dialect) in self.sql.items())
        graph = GraphArrays(names, kinds, containers, node_file, node_line, files, *edges, flags, expressions, sql)
        return graph, first_lines


@dataclass(slots=True)
class EdgeListBuilder:
    """An ``ArraysBuilder`` for rows added a chunk at a time (``named_edges``): its nodes, kinds and edges.

    Nodes, containers and edges are numbers in ``_Column`` blocks until ``build`` packs the edges into one
    int64 each (``_packed``) to sort and deduplicate them.
    """

    names: Vocabulary = field(default_factory=Vocabulary)
    kinds: _Column = field(default_factory=lambda: _Column(np.uint8))  # per node
    first_lines: _Column = field(default_factory=lambda: _Column(np.int32))  # per node
    columns: _Column = field(default_factory=lambda: _Column(np.int32))  # per column with a table: the column
    tables: _Column = field(default_factory=lambda: _Column(np.int32))  # and its table
    sources: _Column = field(default_factory=lambda: _Column(np.int32))  # per edge
    targets: _Column = field(default_factory=lambda: _Column(np.int32))
    attributes: _Column = field(default_factory=lambda: _Column(np.uint16))

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
        start = self.names.count
        nodes, firsts = self.names.intern(names)
        new_names = list(map(names.__getitem__, firsts.tolist()))
        new_kinds, new_lines = kinds[firsts], lines[firsts]
        columns, tables = _tables_of_new_columns(new_names, new_kinds, new_lines)
        self.kinds.extend(new_kinds)
        self.first_lines.extend(new_lines)
        if tables:  # the tables are TABLEs where new, so their own interning finds no columns
            table_kinds = np.full(len(tables), NodeKind.TABLE, dtype=np.uint8)
            table_nodes = self._intern(tables, table_kinds, new_lines[columns])
            column_nodes = columns + start
            self.columns.extend(column_nodes)
            self.tables.extend(table_nodes)
            self._append_edges(table_nodes, column_nodes, np.full(len(tables), pack_attributes(EdgeType.CONTAINS, 0)))
        return nodes

    def _append_edges(self, sources: np.ndarray, targets: np.ndarray, attributes: np.ndarray) -> None:
        self.sources.extend(sources)
        self.targets.extend(targets)
        self.attributes.extend(attributes)

    def build(self) -> tuple[GraphArrays, np.ndarray]:
        """The graph, and the input line each of its nodes was first named on; empties the builder."""
        return_free_heap()  # the rows' strings are gone, but the heap keeps their pages (10 MB at 5M rows)
        count = self.names.count
        # The edges packed before the names are sorted, by the nodes' numbers as met and renumbered after: the
        # sort's temporaries, an import's peak, then come on top of 8 bytes an edge, not the columns' 10.
        packed = _packed(self.sources, self.targets, self.attributes, count) if _packs(count) else None
        blob, offsets, by_rank = self.names.table()
        rank = np.empty_like(by_rank)
        rank[by_rank] = np.arange(count, dtype=np.int32)
        kinds = self.kinds.joined()[by_rank]
        first_lines = self.first_lines.joined()[by_rank]
        containers = np.full(count, -1, dtype="<i4")
        for columns, tables in zip(self.columns.taken(), self.tables.taken(), strict=True):
            containers[rank[columns]] = rank[tables]
        if packed is not None:
            _renumbered(packed, rank)
            edges = _deduped(packed, _node_bits(count))
        else:
            sources, targets = (rank[part.joined()] for part in (self.sources, self.targets))
            edges = dedupe_edges(sources, targets, self.attributes.joined(), _same(-1, sources.size))
        names = NameTable(blob, offsets)
        no_flags = np.zeros(count, dtype="u1")
        return GraphArrays(
            names, kinds, containers, _same(-1, count), _same(0, count), [], *edges, no_flags
        ), first_lines


# An edge list's edge packed into an int64, from the high bits down: type, target, source, subtype flags.  Sorted,
# such edges are in ``dedupe_edges``' order, and they take 8 bytes an edge where their arrays take 10.
_FLAG_BITS = 16 - TYPE_BITS
_PACKED_BITS = TYPE_BITS + _FLAG_BITS


def _node_bits(count: int) -> int:
    return max(count - 1, 1).bit_length()


def _packs(count: int) -> bool:
    """Whether the edges among ``count`` nodes fit an int64 packed."""
    return _PACKED_BITS + 2 * _node_bits(count) <= 63


def _packed(sources: _Column, targets: _Column, attributes: _Column, count: int) -> np.ndarray:
    """The columns' edges among ``count`` nodes packed; each block of the columns goes once packed."""
    width = _node_bits(count)
    packed = np.empty(sources.size, dtype=np.int64)  # its pages are taken as they are written
    at = 0
    for source, target, attribute in zip(sources.taken(), targets.taken(), attributes.taken(), strict=True):
        block = packed[at : at + source.size]
        block[:] = attribute & TYPE_MASK
        block <<= width
        block |= target
        block <<= width
        block |= source
        block <<= _FLAG_BITS
        block |= attribute >> TYPE_BITS
        at += source.size
    return packed


def _renumbered(packed: np.ndarray, rank: np.ndarray) -> None:
    """Renumber the packed edges' nodes by ``rank``, in place, a block at a time."""
    width = _node_bits(rank.size)
    mask = (1 << width) - 1
    for start in range(0, packed.size, _STEP):
        block = packed[start : start + _STEP]
        nodes = rank.take(block >> (_FLAG_BITS + width) & mask).astype(np.int64)  # the targets
        nodes <<= width
        nodes |= rank.take(block >> _FLAG_BITS & mask)  # and the sources
        nodes <<= _FLAG_BITS
        block &= ~(((1 << 2 * width) - 1) << _FLAG_BITS)
        block |= nodes


class _Column:
    """Numbers appended a chunk at a time, held in blocks of ``_STEP``.

    Big blocks are mapped memory, given back whole when they go; a small array per chunk would be heap
    memory, whose holes stay taken after the chunks go.
    """

    def __init__(self, dtype: type) -> None:
        self.dtype = dtype
        self.blocks: list[np.ndarray] = []
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        while values.size:
            at = self.size % _STEP
            if not at:
                self.blocks.append(np.empty(_STEP, dtype=self.dtype))
            taken = min(_STEP - at, values.size)
            self.blocks[-1][at : at + taken] = values[:taken]
            values, self.size = values[taken:], self.size + taken

    def taken(self) -> Iterator[np.ndarray]:
        """The numbers, a block at a time, each block dropped once given: the column is empty after."""
        self.blocks.reverse()
        while self.blocks:
            block = self.blocks.pop()
            yield block if self.blocks else block[: self.size - (self.size - 1) // _STEP * _STEP]
        self.size = 0

    def joined(self) -> np.ndarray:
        """The numbers as one array; the column is empty after."""
        return np.concatenate([np.zeros(0, dtype=self.dtype), *self.taken()])


def _deduped(packed: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``dedupe_edges`` of packed edges: sources, targets, attributes, statements (none).

    ``packed`` is sorted, compacted and unpacked in place, a block at a time, and shrinks as its edges are
    unpacked: no step holds an int64 temporary of every edge, nor the packed edges beside all their arrays.
    """
    packed.sort()
    flags = np.empty(packed.size, dtype=np.uint16)
    for start in range(0, packed.size, _STEP):
        block = packed[start : start + _STEP]
        flags[start : start + _STEP] = block & ((1 << _FLAG_BITS) - 1)
        block >>= _FLAG_BITS
    last = np.ones(packed.size, dtype=bool)  # the last edge of each run of equal edges
    np.not_equal(packed[1:], packed[:-1], out=last[:-1])
    if not last.all():  # an edge named twice: one edge, its subtypes OR-ed into the run's last
        _or_runs(flags, np.flatnonzero(~last) + 1)
        flags = flags[last]
        _compact(packed, last)
    del last
    count = packed.size
    sources, targets = np.empty(count, dtype="<i4"), np.empty(count, dtype="<i4")
    attributes = flags << np.uint16(TYPE_BITS)
    del flags
    mask = (1 << width) - 1
    for start in reversed(range(0, count, _STEP)):
        block, end = packed[start:], start + _STEP
        sources[start:end] = block & mask
        targets[start:end] = block >> width & mask
        attributes[start:end] |= (block >> 2 * width).astype(np.uint16)
        del block
        packed.resize(start, refcheck=False)  # the unpacked edges' memory goes back
    return sources, targets, attributes, _same(-1, count)


_STEP = 1 << 20  # edges a block of ``_deduped`` handles


def _or_runs(flags: np.ndarray, followers: np.ndarray) -> None:
    """OR into each edge the flags of the equal edges before it (``followers``: the edges equal to the one before)."""
    while True:  # a round per edge of the longest run: a run of twice the same edge takes one
        before = flags[followers]
        joined = before | flags[followers - 1]
        if (joined == before).all():
            return
        flags[followers] = joined


def _compact(packed: np.ndarray, keep: np.ndarray) -> None:
    """Keep the packed edges ``keep`` says, in order, in place."""
    kept = 0
    for start in range(0, packed.size, _STEP):
        block = packed[start : start + _STEP][keep[start : start + _STEP]]
        packed[kept : kept + block.size] = block
        kept += block.size
    packed.resize(kept, refcheck=False)


def _same(value: int, count: int) -> np.ndarray:
    """``count`` times ``value`` as a read-only i4 array that takes no memory: an edge list has no statements
    (and its nodes no files), and a full array of them would cost as much as an edge column."""
    return np.broadcast_to(np.array(value, dtype="<i4"), (count,))


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
