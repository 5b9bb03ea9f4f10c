"""Import lineage that was not harvested here: edge lists, Hive LineageLogger output, OpenLineage events.

Everything lands in an ``ArraysBuilder`` (millions of edges would not fit a dict-of-tuples graph
comfortably), whose ``GraphArrays`` then merge with the existing store.  The Hive and OpenLineage
readers add nodes and edges one by one; edge lists (``edge_lists.py``) add a chunk of rows at once.
A bad row is reported with its line number and skipped; the rest is imported.  No sqlglot here.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
import reprlib
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from lineage_cli.model import EdgeType, Issue, NodeKind, Subtype
from lineage_cli.store.arrays import GraphArrays, dedupe_edges
from lineage_cli.store.layout import pack_attributes

FORMATS = ("csv", "tsv", "jsonl", "hive", "openlineage")
# The longest name (table, column, field, statement, file) an import takes: beyond it a value is a runaway
# (an unclosed quote, a generated blob), and its row is refused rather than stored.
MAX_NAME_CHARS = 4096
Problem = tuple[int, str]  # a skipped row: its line and what is wrong with it
_AGGREGATE = re.compile(r"\b(sum|avg|min|max|collect_set|collect_list|percentile\w*|stddev\w*|variance)\s*\(", re.I)
_COUNT = re.compile(r"\bcount\s*\(", re.I)


class ImportError_(ValueError):  # noqa: N801 - not the builtin ImportError
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
        return GraphArrays(names, kinds, containers, node_file, node_line, files, *edges), first_lines


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


class Imported(NamedTuple):
    """What an import file holds."""

    graph: GraphArrays
    issues: list[Issue]  # the skipped rows
    rows: int  # the rows read
    first_lines: np.ndarray  # per node of ``graph``, the line it was first named on


def import_file(path: Path, fmt: str) -> Imported:
    """Read ``path`` in format ``fmt``."""
    builder = ArraysBuilder()
    try:
        if fmt in _ROW_READERS:
            rows, problems = _tally(_ROW_READERS[fmt](path, builder))
        else:
            # Imported here: the edge-list reader builds on this module's ArraysBuilder.
            from lineage_cli.imports.edge_lists import read_edge_list

            rows, problems = read_edge_list(path, fmt, builder)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise ImportError_(f"{path}: cannot read: {error}") from error
    graph, first_lines = builder.build()
    return Imported(graph, [Issue(str(path), line, problem) for line, problem in problems], rows, first_lines)


def _tally(rows: Iterable[tuple[int, str | None]]) -> tuple[int, list[Problem]]:
    """The rows read and the skipped ones, from a reader's (line, problem or None) per row."""
    count, problems = 0, []
    for line, problem in rows:
        count += 1
        if problem:
            problems.append((line, problem))
    return count, problems


def _openlineage_rows(path: Path, builder: ArraysBuilder) -> Iterator[tuple[int, str | None]]:
    # Imported here: the OpenLineage reader builds on this module's ArraysBuilder.
    from lineage_cli.imports.openlineage_events import openlineage_rows

    return openlineage_rows(path, builder)


def format_from_suffix(path: str) -> str | None:
    suffix = Path(path).suffix.lower().lstrip(".")
    return {"csv": "csv", "tsv": "tsv", "jsonl": "jsonl", "ndjson": "jsonl"}.get(suffix)


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


def _hive_rows(path: Path, builder: ArraysBuilder) -> Iterator[tuple[int, str | None]]:
    """Hive's LineageLogger hook: one JSON document per query, with vertices and edges."""
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                yield number, _add_hive_query(json_object(text), builder, str(path), number)


def _add_hive_query(document: dict | str, builder: ArraysBuilder, file: str, line: int) -> str | None:
    if isinstance(document, str):
        return document
    try:
        edges = _hive_edges(document)
    except _NotHive as problem:
        return f"not a LineageLogger record: {problem}"
    builder.line = line
    step = builder.transformation(f"{file}:{line}", file, line)
    for sources, targets, edge_type, expression in edges:
        for source in sources:
            for target in targets:
                _hive_pair(builder, source, target, step, edge_type, expression)
    return None


class _NotHive(ValueError):
    """A line that is no LineageLogger record; the message says what is wrong with it."""


_HiveVertex = tuple[str, str]  # vertex type (upper case), name (lower case)


def _hive_edges(document: dict) -> list[tuple[list[_HiveVertex], list[_HiveVertex], str, str]]:
    """Each edge's source and target vertices, type and expression, all checked before any is added."""
    vertices = dict(map(_hive_vertex, _hive_list(document, "vertices")))
    edges = []
    for edge in _hive_list(document, "edges"):
        sources, targets, edge_type = _required(edge, ("sources", "targets", "edgeType"))
        if not (_vertex_ids(sources) and _vertex_ids(targets) and isinstance(edge_type, str)):
            raise _NotHive(_HIVE_SHAPE)
        if edge_type.upper() not in ("PROJECTION", "PREDICATE"):
            raise _NotHive(f"edge type {quoted(edge_type)} is neither PROJECTION nor PREDICATE")
        unknown = [vertex for vertex in (*sources, *targets) if vertex not in vertices]
        if unknown:
            raise _NotHive(f"an edge names vertex {quoted(unknown[0])}, which the record does not list")
        expression = edge.get("expression")
        ends = [vertices[vertex] for vertex in sources], [vertices[vertex] for vertex in targets]
        edges.append((*ends, edge_type.upper(), expression if isinstance(expression, str) else ""))
    return edges


# What a record holds, said when a value in it is of another JSON type.
_HIVE_SHAPE = (
    'expected "vertices": [{"id", "vertexType", "vertexId"}, ...] and '
    '"edges": [{"sources": [id, ...], "targets": [id, ...], "edgeType"}, ...]'
)


def _required(parent: object, keys: tuple[str, ...]) -> list[object]:
    """The values of ``keys`` in the JSON object ``parent``."""
    if not isinstance(parent, dict):
        raise _NotHive(_HIVE_SHAPE)
    missing = [key for key in keys if key not in parent]
    if missing:
        raise _NotHive(f"no {missing[0]!r}")
    return [parent[key] for key in keys]


def _hive_list(document: dict, key: str) -> list:
    (value,) = _required(document, (key,))
    if not isinstance(value, list):
        raise _NotHive(_HIVE_SHAPE)
    return value


def _hive_vertex(vertex: object) -> tuple[int | str, _HiveVertex]:
    key, vertex_type, name = _required(vertex, ("id", "vertexType", "vertexId"))
    if not (_is_vertex_id(key) and isinstance(vertex_type, str) and isinstance(name, str)):
        raise _NotHive(_HIVE_SHAPE)
    if len(name) > MAX_NAME_CHARS:
        raise _NotHive(f"vertex {quoted(key)} has a name longer than {MAX_NAME_CHARS:,} characters")
    return key, (vertex_type.upper(), name.lower())


def _vertex_ids(value: object) -> bool:
    return isinstance(value, list) and all(map(_is_vertex_id, value))


def _is_vertex_id(value: object) -> bool:
    """A vertex id: a number in Hive's output (a string is taken too), never true or false."""
    return isinstance(value, int | str) and not isinstance(value, bool)


def _hive_pair(
    builder: ArraysBuilder,
    source: tuple[str, str],
    target: tuple[str, str],
    step: int,
    edge_type: str,
    expression: str,
) -> None:
    source_table = _table_of(source)
    target_table = builder.node(_table_of(target), NodeKind.TABLE)
    builder.edge(builder.node(source_table, NodeKind.TABLE), step, EdgeType.READ)
    builder.edge(step, target_table, EdgeType.WRITE)
    if target[0] == "COLUMN":
        builder.edge(step, builder.node(target[1], NodeKind.COLUMN), EdgeType.COLUMN_WRITE, 0, step)
    if source[0] != "COLUMN":
        return
    column = builder.node(source[1], NodeKind.COLUMN)
    if edge_type == "PREDICATE":
        # LineageLogger does not say which clause a predicate came from.
        builder.edge(column, target_table, EdgeType.PREDICATE, Subtype.FILTER.bit, step)
    elif target[0] == "COLUMN":
        subtype = _hive_subtype(source[1], expression)
        builder.edge(column, builder.node(target[1], NodeKind.COLUMN), EdgeType.PROJECTION, subtype, step)


def _table_of(vertex: tuple[str, str]) -> str:
    vertex_type, name = vertex
    return name.rsplit(".", 1)[0] if vertex_type == "COLUMN" and name.count(".") >= 2 else name


def _hive_subtype(column: str, expression: str) -> int:
    """LineageLogger gives the expression text only; classify it like our own projection subtypes."""
    if not expression or expression.strip().lower() == column.rsplit(".", 1)[-1]:
        return Subtype.IDENTITY.bit
    if _COUNT.search(expression):
        return Subtype.AGGREGATION_MASKING.bit
    if _AGGREGATE.search(expression):
        return Subtype.AGGREGATION.bit
    return Subtype.TRANSFORMATION.bit


_ROW_READERS = {"hive": _hive_rows, "openlineage": _openlineage_rows}
