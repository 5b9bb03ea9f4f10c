"""Serialise a ``Graph`` into one store file, atomically.

Node ids are the ranks of the node names in sorted order, so the name index is the
node table itself (binary search, no extra section).  Edges become CSR adjacency in
both directions, 16 bytes per edge: neighbour and packed type+subtypes each way, and the
statement that made the edge once, forward.  The file is written beside its destination, fsync-ed and renamed
over it: a crash mid-write leaves the previous store intact.
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
from lineage_cli.store.layout import Section, align, header_size, pack_attributes, pack_header


@dataclass(frozen=True, slots=True)
class WrittenStore:
    path: Path
    nodes: int
    edges: int
    bytes: int


def write_store(graph: Graph, path: str | os.PathLike[str], meta: dict[str, object]) -> WrittenStore:
    """Write ``graph`` to ``path``, replacing any previous store only once the new one is complete."""
    sections = _build_sections(graph, meta)
    destination = Path(path)
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{destination.name}.", dir=destination.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            size = _write_file(out, sections, len(graph.kinds), len(graph.edges))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, destination)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _fsync_directory(destination.parent)
    return WrittenStore(destination, len(graph.kinds), len(graph.edges), size)


def _build_sections(graph: Graph, meta: dict[str, object]) -> dict[str, np.ndarray]:
    names = sorted(graph.kinds)
    ids = {name: index for index, name in enumerate(names)}
    name_offsets, name_blob = _string_table(names)
    files = sorted({p.file for p in graph.provenance.values()})
    file_ids = {file: index for index, file in enumerate(files)}
    file_offsets, file_blob = _string_table(files)

    node_file = np.full(len(names), -1, dtype="<i4")
    node_line = np.zeros(len(names), dtype="<i4")
    for name, provenance in graph.provenance.items():
        node_file[ids[name]] = file_ids[provenance.file]
        node_line[ids[name]] = provenance.line
    container = np.full(len(names), -1, dtype="<i4")
    for name, parent in graph.containers.items():
        if parent in ids:
            container[ids[name]] = ids[parent]

    edge_count = len(graph.edges)
    src = np.fromiter((ids[s] for s, _, _, _ in graph.edges), dtype="<i4", count=edge_count)
    dst = np.fromiter((ids[t] for _, t, _, _ in graph.edges), dtype="<i4", count=edge_count)
    statement = np.fromiter(
        (ids[m] if m is not None else -1 for _, _, _, m in graph.edges), dtype="<i4", count=edge_count
    )
    attributes = np.fromiter(
        (pack_attributes(k, f) for (_, _, k, _), f in graph.edges.items()), dtype="<u2", count=edge_count
    )

    sections = {
        "node_kind": np.fromiter((int(graph.kinds[n]) for n in names), dtype="u1", count=len(names)),
        "name_offsets": name_offsets,
        "names": name_blob,
        "node_container": container,
        "node_file": node_file,
        "node_line": node_line,
        "file_offsets": file_offsets,
        "files": file_blob,
        "meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype="u1"),
    }
    forward_order = np.lexsort((dst, src))
    sections.update(_csr("fwd", src, dst, attributes, forward_order, len(names)))
    sections["fwd_statement"] = statement[forward_order]
    sections.update(_csr("bwd", dst, src, attributes, np.lexsort((src, dst)), len(names)))
    return sections


def _string_table(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype="<u8")
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return offsets, np.frombuffer(b"".join(encoded), dtype="u1")


def _csr(
    prefix: str, origin: np.ndarray, neighbour: np.ndarray, attributes: np.ndarray, order: np.ndarray, nodes: int
) -> dict[str, np.ndarray]:
    offsets = np.zeros(nodes + 1, dtype="<i8")
    np.cumsum(np.bincount(origin, minlength=nodes), out=offsets[1:])
    return {
        f"{prefix}_offsets": offsets,
        f"{prefix}_node": neighbour[order],
        f"{prefix}_attr": attributes[order],
    }


def _write_file(out: BinaryIO, arrays: dict[str, np.ndarray], nodes: int, edges: int) -> int:
    offset = header_size(len(arrays))
    out.write(b"\x00" * offset)
    sections, crc = [], 0
    for name, array in arrays.items():
        padding = b"\x00" * (align(offset) - offset)
        data = np.ascontiguousarray(array).tobytes()
        out.write(padding + data)
        crc = zlib.crc32(data, zlib.crc32(padding, crc))
        offset = align(offset)
        sections.append(Section(name, offset, len(data), array.dtype.str))
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
