"""The graph as flat numpy arrays: what the writer serialises and what imports merge.

``Graph`` (dicts keyed by names) suits harvesting statement by statement; millions of
imported edges need arrays.  ``GraphArrays`` holds sorted node names and integer edge
arrays, and ``merge`` unions two of them, OR-ing the subtype flags of duplicate edges.
``sort_order`` is the edge sort that deduplication and the writer's adjacency share.
An import's names stay one UTF-8 blob (``NameTable``) rather than a million ``str`` objects.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np

from lineage_cli.errors import StoreError
from lineage_cli.model import EdgeKey, EdgeType, Graph, NodeKind, Provenance
from lineage_cli.store.layout import TYPE_BITS, TYPE_MASK, pack_attributes
from lineage_cli.store.reader import Store


class NameTable(Sequence[str]):
    """Names as the store's string table holds them: a UTF-8 ``blob`` and ``offsets`` (n + 1, from 0).

    A name is decoded when asked for: the table costs its bytes, not a ``str`` object per name.
    """

    __slots__ = ("blob", "offsets")

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self.blob = blob  # u1
        self.offsets = offsets  # <u8

    def __len__(self) -> int:
        return self.offsets.size - 1

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError("name index out of range")
        index %= len(self)
        return self.blob[self.offsets[index] : self.offsets[index + 1]].tobytes().decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        blob, offsets = self.blob, self.offsets.tolist()
        return (blob[start:end].tobytes().decode("utf-8") for start, end in itertools.pairwise(offsets))


@dataclass(slots=True)
class ColumnExpressions:
    """The SQL expression each statement writes a column with: rows sorted by column, then statement."""

    columns: np.ndarray  # i4 per row: the column node
    statements: np.ndarray  # i4 per row: the transformation node that writes it
    texts: Sequence[str]  # the expression's text

    @classmethod
    def of(cls, rows: Iterable[tuple[int, int, str]]) -> ColumnExpressions:
        """From (column, statement, text) rows, sorted here; the first text of a (column, statement) pair wins."""
        listed = list(rows)
        columns = np.fromiter((row[0] for row in listed), dtype="<i4", count=len(listed))
        statements = np.fromiter((row[1] for row in listed), dtype="<i4", count=len(listed))
        order = np.lexsort((statements, columns))  # (stable: of a pair's rows, the first given comes first)
        columns, statements = columns[order], statements[order]
        first = np.ones(order.size, dtype=bool)
        first[1:] = (columns[1:] != columns[:-1]) | (statements[1:] != statements[:-1])
        return cls(columns[first], statements[first], [listed[row][2] for row in order[first].tolist()])

    def rows(self) -> Iterator[tuple[int, int, str]]:
        return zip(self.columns.tolist(), self.statements.tolist(), self.texts, strict=True)

    def __len__(self) -> int:
        return int(self.columns.size)


def no_expressions() -> ColumnExpressions:
    return ColumnExpressions(np.zeros(0, dtype="<i4"), np.zeros(0, dtype="<i4"), [])


@dataclass(slots=True)
class StatementTexts:
    """The SQL text of the statement each transformation came from and its dialect: rows sorted by
    transformation, each once; a row's dialect is an index into ``names`` (a store holds few dialects)."""

    statements: np.ndarray  # i4 per row: the transformation node
    dialects: np.ndarray  # u1 per row: its dialect, an index into ``names``
    names: list[str]  # the dialects' names, sorted
    texts: Sequence[str]  # its statement's text

    @classmethod
    def of(cls, rows: Iterable[tuple[int, str, str]]) -> StatementTexts:
        """From (transformation, text, dialect) rows, sorted here; the first row of a transformation wins."""
        listed = list(rows)
        statements = np.fromiter((row[0] for row in listed), dtype="<i4", count=len(listed))
        order = np.argsort(statements, kind="stable")  # (of a transformation's rows, the first given comes first)
        statements = statements[order]
        first = np.ones(order.size, dtype=bool)
        first[1:] = statements[1:] != statements[:-1]
        kept = [listed[row] for row in order[first].tolist()]
        names = sorted({dialect for _, _, dialect in kept})
        if len(names) > MAX_DIALECTS:
            raise StoreError(f"statements of {len(names)} dialects; a store holds at most {MAX_DIALECTS}")
        index = {name: rank for rank, name in enumerate(names)}
        dialects = np.fromiter((index[dialect] for _, _, dialect in kept), dtype="u1", count=len(kept))
        return cls(statements[first], dialects, names, [text for _, text, _ in kept])

    def rows(self) -> Iterator[tuple[int, str, str]]:
        names = self.names
        dialects = (names[dialect] for dialect in self.dialects.tolist())
        return zip(self.statements.tolist(), self.texts, dialects, strict=True)

    def __len__(self) -> int:
        return int(self.statements.size)


MAX_DIALECTS = 256  # a row's dialect is a u1


def no_statement_texts() -> StatementTexts:
    return StatementTexts(np.zeros(0, dtype="<i4"), np.zeros(0, dtype="u1"), [], [])


@dataclass(slots=True)
class GraphArrays:
    names: Sequence[str]  # sorted: a node's id is its rank (a list, or an import's NameTable)
    kinds: np.ndarray  # u1 per node
    containers: np.ndarray  # i4 per node, -1 none
    node_file: np.ndarray  # i4 per node, index into files, -1 none
    node_line: np.ndarray  # i4 per node
    files: list[str]
    sources: np.ndarray  # i4 per edge
    targets: np.ndarray  # i4 per edge
    attributes: np.ndarray  # u2 per edge: packed type + subtype flags
    statements: np.ndarray  # i4 per edge: transformation node, -1 none
    flags: np.ndarray  # u1 per node: its ``NodeFlag`` bits
    expressions: ColumnExpressions = field(default_factory=no_expressions)
    sql: StatementTexts = field(default_factory=no_statement_texts)

    @property
    def node_count(self) -> int:
        return len(self.names)

    @property
    def edge_count(self) -> int:
        return int(self.sources.size)


def from_graph(graph: Graph) -> GraphArrays:
    names = sorted(graph.kinds)
    ids = {name: index for index, name in enumerate(names)}
    files = sorted({p.file for p in graph.provenance.values()})
    file_ids = {file: index for index, file in enumerate(files)}
    node_file = np.full(len(names), -1, dtype="<i4")
    node_line = np.zeros(len(names), dtype="<i4")
    for name, provenance in graph.provenance.items():
        node_file[ids[name]] = file_ids[provenance.file]
        node_line[ids[name]] = provenance.line
    containers = np.full(len(names), -1, dtype="<i4")
    for name, parent in graph.containers.items():
        if parent in ids:
            containers[ids[name]] = ids[parent]
    count = len(graph.edges)
    edges = graph.edges
    flags = np.zeros(len(names), dtype="u1")
    for name, bits in graph.flags.items():
        flags[ids[name]] = bits
    return GraphArrays(
        names=names,
        kinds=np.fromiter((graph.kinds[n] for n in names), dtype="u1", count=len(names)),
        containers=containers,
        node_file=node_file,
        node_line=node_line,
        files=files,
        sources=np.fromiter((ids[s] for s, _, _, _ in edges), dtype="<i4", count=count),
        targets=np.fromiter((ids[t] for _, t, _, _ in edges), dtype="<i4", count=count),
        attributes=np.fromiter((pack_attributes(k, f) for (_, _, k, _), f in edges.items()), dtype="<u2", count=count),
        statements=np.fromiter((-1 if m is None else ids[m] for _, _, _, m in edges), dtype="<i4", count=count),
        flags=flags,
        expressions=ColumnExpressions.of((ids[c], ids[m], text) for (m, c), text in graph.expressions.items()),
        sql=StatementTexts.of((ids[made], text, dialect) for made, (text, dialect) in graph.sql.items()),
    )


def to_graph(arrays: GraphArrays) -> Graph:
    """The ``Graph`` ``from_graph`` made these arrays of: equal to it, its nodes and edges in sorted order."""
    names, lines = arrays.names, arrays.node_line.tolist()
    kinds = {name: NodeKind(kind) for name, kind in zip(names, arrays.kinds.tolist(), strict=True)}
    containers = {names[node]: names[parent] for node, parent in enumerate(arrays.containers.tolist()) if parent >= 0}
    provenance = {
        names[node]: Provenance(arrays.files[file], lines[node])
        for node, file in enumerate(arrays.node_file.tolist())
        if file >= 0
    }
    columns = (arrays.sources.tolist(), arrays.targets.tolist(), arrays.attributes.tolist(), arrays.statements.tolist())
    types = {edge_type.value: edge_type for edge_type in EdgeType}  # a dict lookup: an enum call per edge costs more
    edges: dict[EdgeKey, int] = {}
    for source, target, packed, made in zip(*columns, strict=True):
        key = (names[source], names[target], types[packed & TYPE_MASK], names[made] if made >= 0 else None)
        edges[key] = packed >> TYPE_BITS
    flags = {names[node]: bits for node, bits in enumerate(arrays.flags.tolist()) if bits}
    expressions = {(names[made], names[column]): text for column, made, text in arrays.expressions.rows()}
    sql = {names[made]: (text, dialect) for made, text, dialect in arrays.sql.rows()}
    return Graph(kinds, containers, provenance, edges, flags, expressions, sql)


def from_store(store: Store) -> GraphArrays:
    """Every node and edge of an open store, as arrays (the forward CSR expanded)."""
    return GraphArrays(
        names=store.names(),
        kinds=store.numpy_array("node_kind").copy(),
        containers=store.numpy_array("node_container").copy(),
        node_file=store.numpy_array("node_file").copy(),
        node_line=store.numpy_array("node_line").copy(),
        files=_strings(store, "file_offsets", "files"),
        sources=edge_sources(store),
        targets=store.numpy_array("fwd_node").copy(),
        attributes=store.numpy_array("fwd_attr").copy(),
        statements=store.numpy_array("fwd_statement").copy(),
        flags=store.numpy_array("node_flags").copy(),
        expressions=stored_expressions(store),
        sql=stored_statement_texts(store),
    )


def stored_expressions(store: Store) -> ColumnExpressions:
    """Every column expression of an open store."""
    return ColumnExpressions(
        store.numpy_array("expr_column").copy(),
        store.numpy_array("expr_statement").copy(),
        _strings(store, "expr_offsets", "expr_text"),
    )


def stored_statement_texts(store: Store) -> StatementTexts:
    """Every statement text of an open store, with its dialect."""
    return StatementTexts(
        store.numpy_array("sql_statement").copy(),
        store.numpy_array("sql_dialect").copy(),
        store.sql_dialects,
        _strings(store, "sql_offsets", "sql_text"),
    )


def edge_sources(store: Store) -> np.ndarray:
    """The source node of each forward edge: the CSR offsets expanded, once they are checked to make sense.

    A store too big to be checksummed on open may hold damaged offsets; expanding them would fail in numpy.
    """
    offsets = store.numpy_array("fwd_offsets")
    counts = np.diff(offsets)
    if offsets.size != store.node_count + 1 or offsets[0] != 0 or offsets[-1] != store.edge_count or counts.min() < 0:
        raise StoreError(f"{store.path}: damaged store (its edge offsets do not add up); re-harvest to rebuild it")
    return np.repeat(np.arange(store.node_count, dtype="<i4"), counts)


def merge(first: GraphArrays, second: GraphArrays) -> GraphArrays:
    """Union of two graphs: nodes by name (a known kind wins over TABLE), edges OR-ed by key."""
    names = sorted(set(first.names) | set(second.names))
    index = {name: rank for rank, name in enumerate(names)}
    files = sorted(set(first.files) | set(second.files))
    file_index = {file: rank for rank, file in enumerate(files)}
    kinds = np.zeros(len(names), dtype="u1")
    containers = np.full(len(names), -1, dtype="<i4")
    node_file = np.full(len(names), -1, dtype="<i4")
    node_line = np.zeros(len(names), dtype="<i4")
    flags = np.zeros(len(names), dtype="u1")
    remapped = []
    expressions: list[tuple[int, int, str]] = []
    texts: list[tuple[int, str, str]] = []
    for part in (first, second):
        ids = np.fromiter((index[n] for n in part.names), dtype=np.int64, count=part.node_count)
        kinds[ids] = np.maximum(kinds[ids], part.kinds)  # VIEW (2) beats TABLE (1)
        _fill(containers, ids, part.containers, lambda c, ids=ids: ids[c])
        file_map = np.fromiter((file_index[f] for f in part.files), dtype=np.int64, count=len(part.files))
        has_file = part.node_file >= 0
        node_file[ids[has_file]] = file_map[part.node_file[has_file]]
        node_line[ids[has_file]] = part.node_line[has_file]
        flags[ids] |= part.flags
        statements = np.where(part.statements >= 0, ids[np.maximum(part.statements, 0)], -1)
        remapped.append((ids[part.sources], ids[part.targets], part.attributes, statements))
        expressions += ((int(ids[c]), int(ids[m]), text) for c, m, text in part.expressions.rows())
        texts += ((int(ids[made]), text, dialect) for made, text, dialect in part.sql.rows())
    sources, targets, attributes, statements = (np.concatenate(parts) for parts in zip(*remapped, strict=True))
    sources, targets, attributes, statements = dedupe_edges(sources, targets, attributes, statements)
    return GraphArrays(
        names,
        kinds,
        containers,
        node_file,
        node_line,
        files,
        sources,
        targets,
        attributes,
        statements,
        flags,
        ColumnExpressions.of(expressions),
        StatementTexts.of(texts),
    )


def _fill(out: np.ndarray, ids: np.ndarray, values: np.ndarray, translate) -> None:  # noqa: ANN001
    present = values >= 0
    out[ids[present]] = translate(values[present])


def dedupe_edges(
    sources: np.ndarray, targets: np.ndarray, attributes: np.ndarray, statements: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One edge per (source, target, type, statement), subtype flags OR-ed."""
    edges, flags = _runs((statements + 1, attributes & TYPE_MASK, targets, sources), attributes)
    kept_sources, kept_targets, kept_statements = (part[edges].astype("<i4") for part in (sources, targets, statements))
    return kept_sources, kept_targets, flags.astype("<u2"), kept_statements


def _runs(keys: tuple[np.ndarray, ...], attributes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first edge of each run of equal ``keys`` in sorted order, and the OR of each run's ``attributes``."""
    order = sort_order(keys)
    starts = np.zeros(order.size, dtype=bool)
    starts[:1] = True
    for key in keys:  # one sorted key at a time holds less memory than all four
        ordered = key[order]
        starts[1:] |= ordered[1:] != ordered[:-1]
    first = np.flatnonzero(starts)
    flags = np.bitwise_or.reduceat(attributes[order], first) if first.size else attributes[:0]
    return order[first], flags


def sort_order(keys: tuple[np.ndarray, ...]) -> np.ndarray:
    """An order sorting rows by non-negative integer ``keys``, the last one first, as ``np.lexsort(keys)`` does.

    Rows with equal keys come in no particular order.  When the keys fit 63 bits together they are packed
    into one int64 and argsorted: several times faster than a lexsort, which sorts once per key.
    """
    widths = [int(key.max()).bit_length() if key.size else 0 for key in keys]
    if sum(widths) > 63:
        return np.lexsort(keys)
    packed = np.zeros(keys[0].size, dtype=np.int64)
    for key, width in zip(reversed(keys), reversed(widths), strict=True):
        packed <<= width
        packed |= key
    return np.argsort(packed)


def _strings(store: Store, offsets_name: str, blob_name: str) -> list[str]:
    offsets = store.array(offsets_name)
    blob = store.array(blob_name).tobytes()
    return [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(len(offsets) - 1)]
