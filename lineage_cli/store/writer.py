"""Serialise a ``Graph`` into one store file, atomically.

Node ids are the ranks of the node names in sorted order, so the name index is the
node table itself (binary search, no extra section).  Edges become CSR adjacency in
both directions, 16 bytes per edge: neighbour and packed type+subtypes each way, and the
statement that made the edge once, forward (the SQL expression a statement writes a column with is no
edge's: it is a row of its own, column and statement, beside the provenance; so is a statement's text, by
transformation).  Each node's slice holds
its table-level edges (READ, WRITE, FLOW) first, then the others, each group by type, neighbour and statement; a
per-node count (``*_split``, an i4 per node and direction) says where the groups meet.
Sections are built and written one at a time, so a write holds the graph and one section, not the
whole file.  The file is written beside its destination, fsync-ed and renamed over it: a crash mid-write
leaves the previous store intact, and a failed write (``StoreWriteError``) leaves it and no
temporary file.
"""

from __future__ import annotations

import json
import os
import tempfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from lineage_cli.model import Graph
from lineage_cli.store.arrays import GraphArrays, NameTable, from_graph, sort_order
from lineage_cli.store.layout import (
    SECTIONS,
    TYPE_BITS,
    TYPE_MASK,
    Section,
    StoreWriteError,
    align,
    header_size,
    pack_header,
    slice_rank,
)
from lineage_cli.store.roles import edge_counts, role_codes


@dataclass(frozen=True, slots=True)
class WrittenStore:
    path: Path
    nodes: int
    edges: int
    bytes: int


def write_store(graph: Graph | GraphArrays, path: str | os.PathLike[str], meta: dict[str, object]) -> WrittenStore:
    """Write ``graph`` to ``path``, replacing any previous store only once the new one is complete."""
    arrays = graph if isinstance(graph, GraphArrays) else from_graph(graph)
    destination = Path(path)
    try:
        size = _write_beside(destination, _sections(arrays, meta), arrays)
    except OSError as error:
        raise StoreWriteError(f"cannot write the store {destination}: {error.strerror or error}") from error
    _fsync_directory(destination.parent)
    return WrittenStore(destination, arrays.node_count, arrays.edge_count, size)


def _write_beside(destination: Path, sections: Iterator[tuple[str, np.ndarray]], arrays: GraphArrays) -> int:
    """Write the store to a temporary file beside ``destination`` and rename it over it; the file's size."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{destination.name}.", dir=destination.parent)
    try:
        os.fchmod(handle, _new_file_mode())  # a store is shared like any file, not private like a temporary one
        with os.fdopen(handle, "wb") as out:
            size = _write_file(out, sections, arrays.node_count, arrays.edge_count)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, destination)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return size


def _new_file_mode() -> int:
    """The mode ``open()`` would give a new file under this process's umask (``mkstemp`` gives 0600 whatever)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _sections(graph: GraphArrays, meta: dict[str, object]) -> Iterator[tuple[str, np.ndarray]]:
    """The sections of ``SECTIONS`` in order, each built when the one before it is written."""
    yield "node_kind", graph.kinds.astype("u1")
    yield "node_role", role_codes(graph.kinds, graph.sources, graph.targets, graph.attributes)
    yield from zip(("name_offsets", "names"), _string_table(graph.names), strict=True)
    yield "node_container", graph.containers.astype("<i4")
    yield "node_file", graph.node_file.astype("<i4")
    yield "node_line", graph.node_line.astype("<i4")
    yield "node_flags", graph.flags.astype("u1")
    yield from zip(("file_offsets", "files"), _string_table(graph.files), strict=True)
    yield "meta", np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype="u1")
    expressions = graph.expressions
    yield "expr_column", expressions.columns.astype("<i4")
    yield "expr_statement", expressions.statements.astype("<i4")
    yield from zip(("expr_offsets", "expr_text"), _string_table(expressions.texts), strict=True)
    yield "sql_statement", graph.sql.statements.astype("<i4")
    yield "sql_dialect", graph.sql.dialects.astype("u1")
    yield "sql_dialects", np.frombuffer(json.dumps(graph.sql.names).encode(), dtype="u1")
    yield from zip(("sql_offsets", "sql_text"), _string_table(graph.sql.texts), strict=True)
    src, dst, nodes = graph.sources, graph.targets, graph.node_count
    rank = _slice_ranks(graph.attributes)
    yield from _csr("fwd", src, dst, rank, graph, nodes, with_statements=True)
    yield from _csr("bwd", dst, src, rank, graph, nodes, with_statements=False)


def _string_table(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(strings, NameTable):  # already the table
        return strings.offsets.astype("<u8", copy=False), strings.blob
    joined = "".join(strings)
    # An ASCII string's UTF-8 is its characters: its length needs no encoding of each string.
    lengths = map(len, strings if joined.isascii() else map(str.encode, strings))
    offsets = np.zeros(len(strings) + 1, dtype="<u8")
    np.cumsum(np.fromiter(lengths, np.int64, len(strings)), out=offsets[1:])
    return offsets, np.frombuffer(joined.encode(), dtype="u1")


def _slice_ranks(attributes: np.ndarray) -> np.ndarray:
    """Each edge's place in its slices: table-level types first, then by type (``layout.slice_rank``)."""
    table = np.array([slice_rank(t) for t in range(TYPE_MASK + 1)], dtype=np.uint8)
    return table.take(attributes & TYPE_MASK)


def _csr(
    prefix: str,
    origin: np.ndarray,
    neighbour: np.ndarray,
    rank: np.ndarray,
    graph: GraphArrays,
    nodes: int,
    with_statements: bool,
) -> Iterator[tuple[str, np.ndarray]]:
    """One direction's CSR sections (and the edges' statements in its order, forward only).

    Edges sort by origin, slice rank, neighbour, statement: a deduplicated graph has no two edges alike.
    """
    offsets = np.zeros(nodes + 1, dtype="<i8")
    np.cumsum(edge_counts(origin, nodes), out=offsets[1:])
    yield f"{prefix}_offsets", offsets
    del offsets
    yield f"{prefix}_split", edge_counts(origin, nodes, rank < 1 << TYPE_BITS).astype("<i4")
    widths = (_bits(origin), _bits(rank), _bits(neighbour), _bits(graph.statements + 1), _FLAG_BITS)
    if sum(widths) > 63:
        order = sort_order((graph.statements + 1, neighbour, rank, origin))
        yield f"{prefix}_node", neighbour[order].astype("<i4")
        yield f"{prefix}_attr", graph.attributes[order].astype("<u2")
        if with_statements:
            yield f"{prefix}_statement", graph.statements[order].astype("<i4")
        return
    # Each edge packed into an int64 holding all it is (origin, rank, neighbour, statement, subtype flags, from the
    # high bits down) and sorted in place: 8 bytes an edge, where an argsort's order and keys take 16.
    packed = np.empty(origin.size, dtype=np.int64)
    for start in range(0, origin.size, _STEP):
        block, end = packed[start : start + _STEP], start + _STEP
        block[:] = origin[start:end]
        fields = (
            rank[start:end],
            neighbour[start:end],
            graph.statements[start:end] + 1,
            graph.attributes[start:end] >> TYPE_BITS,
        )
        for values, width in zip(fields, widths[1:], strict=True):
            block <<= width
            block |= values
    packed.sort()
    neighbours, attributes, statements = _unpacked(packed, widths[1:], with_statements)
    yield f"{prefix}_node", neighbours
    del neighbours
    yield f"{prefix}_attr", attributes
    del attributes
    if with_statements:  # (no edge with a statement: all -1, made once the other sections are written)
        yield f"{prefix}_statement", np.full(origin.size, -1, dtype="<i4") if statements is None else statements


_FLAG_BITS = 16 - TYPE_BITS  # an attribute's subtype flags
_STEP = 1 << 20  # edges packed and unpacked a block at a time: no int64 temporary of every edge


def _bits(values: np.ndarray) -> int:
    """The bits the largest of non-negative ``values`` takes."""
    return int(values.max()).bit_length() if values.size else 0


def _unpacked(
    packed: np.ndarray, widths: tuple[int, ...], with_statements: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The neighbours, attributes and statements (None without statements, or when no edge has one) of the sorted
    ``packed`` edges, whose fields have the ``widths`` of rank, neighbour, statement and subtype flags.

    They are unpacked from the end a block at a time, ``packed`` shrinking as they are: no step holds all the
    packed edges beside their sections (which, at 5M edges, set an import's peak memory).
    """
    rank_width, neighbour_width, statement_width, flag_width = widths
    count = packed.size
    neighbours, attributes = np.empty(count, dtype="<i4"), np.empty(count, dtype="<u2")
    statements = np.empty(count, dtype="<i4") if with_statements and statement_width else None
    for start in reversed(range(0, count, _STEP)):
        block, end = packed[start:], start + _STEP
        part = attributes[start:end]
        part[:] = block & ((1 << flag_width) - 1)
        part <<= np.uint16(TYPE_BITS)
        if statements is not None:
            statements[start:end] = (block >> flag_width & ((1 << statement_width) - 1)) - 1
        block >>= flag_width + statement_width
        neighbours[start:end] = block & ((1 << neighbour_width) - 1)
        block >>= neighbour_width
        part |= (block & ((1 << rank_width) - 1) & TYPE_MASK).astype(np.uint16)  # a slice rank ends in its type
        del block, part
        packed.resize(start, refcheck=False)  # the unpacked edges' memory goes back
    return neighbours, attributes, statements


def _write_file(out: BinaryIO, arrays: Iterator[tuple[str, np.ndarray]], nodes: int, edges: int) -> int:
    offset = header_size(len(SECTIONS))
    out.write(b"\x00" * offset)
    sections, crc = [], 0
    for name, array in arrays:
        padding = b"\x00" * (align(offset) - offset)
        data = np.ascontiguousarray(array).view(np.uint8)  # written from the array itself: no copy of a section
        out.write(padding)
        out.write(data)
        crc = zlib.crc32(data, zlib.crc32(padding, crc))
        offset = align(offset)
        sections.append(Section(name, offset, data.size, array.dtype.str))
        offset += len(data)
        del array, data  # before the next section is built: a section's memory is given back once it is written
    out.seek(0)
    out.write(pack_header(nodes, edges, sections, crc, offset))
    return offset


def _fsync_directory(directory: Path) -> None:
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:  # not every platform opens directories
        return
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
