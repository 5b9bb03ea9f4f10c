"""Serialise a ``Graph`` into one store file, atomically.

Node ids are the ranks of the node names in sorted order, so the name index is the
node table itself (binary search, no extra section).  Edges become CSR adjacency in
both directions, 16 bytes per edge: neighbour and packed type+subtypes each way, and the
statement that made the edge once, forward.  Each node's slice holds its table-level edges
(READ, WRITE, FLOW) first, then the others, each group by type, neighbour and statement; a
per-node count (``*_split``, an i4 per node and direction) says where the groups meet.
The file is written beside its destination, fsync-ed and renamed over it: a crash mid-write
leaves the previous store intact, and a failed write (``StoreWriteError``) leaves it and no
temporary file.
"""

from __future__ import annotations

import json
import os
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from lineage_cli.model import Graph
from lineage_cli.store.arrays import GraphArrays, from_graph, sort_order
from lineage_cli.store.layout import (
    TYPE_BITS,
    TYPE_MASK,
    Section,
    StoreWriteError,
    align,
    header_size,
    pack_header,
    slice_rank,
)
from lineage_cli.store.roles import role_codes


@dataclass(frozen=True, slots=True)
class WrittenStore:
    path: Path
    nodes: int
    edges: int
    bytes: int


def write_store(graph: Graph | GraphArrays, path: str | os.PathLike[str], meta: dict[str, object]) -> WrittenStore:
    """Write ``graph`` to ``path``, replacing any previous store only once the new one is complete."""
    arrays = graph if isinstance(graph, GraphArrays) else from_graph(graph)
    sections = _build_sections(arrays, meta)
    destination = Path(path)
    try:
        size = _write_beside(destination, sections, arrays)
    except OSError as error:
        raise StoreWriteError(f"cannot write the store {destination}: {error.strerror or error}") from error
    _fsync_directory(destination.parent)
    return WrittenStore(destination, arrays.node_count, arrays.edge_count, size)


def _write_beside(destination: Path, sections: dict[str, np.ndarray], arrays: GraphArrays) -> int:
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


def _build_sections(graph: GraphArrays, meta: dict[str, object]) -> dict[str, np.ndarray]:
    name_offsets, name_blob = _string_table(graph.names)
    file_offsets, file_blob = _string_table(graph.files)
    sections = {
        "node_kind": graph.kinds.astype("u1"),
        "node_role": role_codes(graph.kinds, graph.sources, graph.targets, graph.attributes),
        "name_offsets": name_offsets,
        "names": name_blob,
        "node_container": graph.containers.astype("<i4"),
        "node_file": graph.node_file.astype("<i4"),
        "node_line": graph.node_line.astype("<i4"),
        "node_flags": graph.flags.astype("u1"),
        "file_offsets": file_offsets,
        "files": file_blob,
        "meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype="u1"),
    }
    src, dst, nodes = graph.sources, graph.targets, graph.node_count
    rank = _slice_ranks(graph.attributes)
    sections.update(_csr("fwd", src, dst, rank, graph, nodes, with_statements=True))
    sections.update(_csr("bwd", dst, src, rank, graph, nodes, with_statements=False))
    return sections


def _string_table(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
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
) -> dict[str, np.ndarray]:
    """One direction's CSR sections (and the edges' statements in its order, forward only).

    Edges sort by origin, slice rank, neighbour, statement: a deduplicated graph has no two edges alike.
    """
    order = sort_order((graph.statements + 1, neighbour, rank, origin))
    offsets = np.zeros(nodes + 1, dtype="<i8")
    np.cumsum(np.bincount(origin, minlength=nodes), out=offsets[1:])
    table_level = origin[rank < 1 << TYPE_BITS]
    sections = {
        f"{prefix}_offsets": offsets,
        f"{prefix}_split": np.bincount(table_level, minlength=nodes).astype("<i4"),
        f"{prefix}_node": neighbour[order].astype("<i4"),
        f"{prefix}_attr": graph.attributes[order].astype("<u2"),
    }
    if with_statements:
        sections[f"{prefix}_statement"] = graph.statements[order].astype("<i4")
    return sections


def _write_file(out: BinaryIO, arrays: dict[str, np.ndarray], nodes: int, edges: int) -> int:
    offset = header_size(len(arrays))
    out.write(b"\x00" * offset)
    sections, crc = [], 0
    for name, array in arrays.items():
        padding = b"\x00" * (align(offset) - offset)
        data = np.ascontiguousarray(array).view(np.uint8)  # written from the array itself: no copy of a section
        out.write(padding)
        out.write(data)
        crc = zlib.crc32(data, zlib.crc32(padding, crc))
        offset = align(offset)
        sections.append(Section(name, offset, data.size, array.dtype.str))
        offset += len(data)
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
