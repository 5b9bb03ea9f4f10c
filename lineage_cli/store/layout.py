"""The store file's byte layout: header, section table, checksums.

Everything here is shared by the writer and the reader; ``docs/store-format.md`` is
the prose version.  Plain ``struct`` and ``zlib``: no numpy, so the reader can decide
lazily what else to load.
"""

from __future__ import annotations

import struct
import zlib

from lineage_cli.errors import StoreError
from lineage_cli.model import EdgeType

MAGIC = b"LINEAGE\x00"
FORMAT_VERSION = 7
ALIGNMENT = 8

# magic, version, header size, node count, edge count, section count, body crc32, file size
_FIXED = struct.Struct("<8sIIQQIIQ")
# section name, offset, byte length, numpy dtype string
_SECTION = struct.Struct("<16sQQ8s")
_CRC = struct.Struct("<I")


# The sections of a store in file order: what the writer writes (``writer._sections``) and the reader requires.
SECTIONS = (
    "node_kind", "node_role", "name_offsets", "names", "node_container", "node_file", "node_line", "node_flags",
    "file_offsets", "files", "meta",
    "expr_column", "expr_statement", "expr_offsets", "expr_text",
    "sql_statement", "sql_dialect", "sql_dialects", "sql_offsets", "sql_text",
    "fwd_offsets", "fwd_split", "fwd_node", "fwd_attr", "fwd_statement",
    "bwd_offsets", "bwd_split", "bwd_node", "bwd_attr",
)  # fmt: skip


# An edge's type and subtype bits share one u16: type in the low 4 bits, subtypes above.
TYPE_BITS = 4
TYPE_MASK = (1 << TYPE_BITS) - 1


def pack_attributes(edge_type: int, flags: int) -> int:
    """
    >>> unpack_attributes(pack_attributes(5, 0b101))
    (5, 5)
    """
    return int(edge_type) | (flags << TYPE_BITS)


def unpack_attributes(attributes: int) -> tuple[int, int]:
    return attributes & TYPE_MASK, attributes >> TYPE_BITS


# Within every node's adjacency slice (both directions) the table-level edges come first: READ (1),
# WRITE (2) and FLOW (6), the types a table lineage walk follows; then every other type.  Each group is
# ordered by type, then neighbour, then statement.  ``fwd_split``/``bwd_split`` count a slice's
# table-level entries, so a walk whose mask lies within one group reads that group's entries only.
TABLE_LEVEL_TYPES = (int(EdgeType.READ), int(EdgeType.WRITE), int(EdgeType.FLOW))
TABLE_LEVEL_MASK = sum(1 << t for t in TABLE_LEVEL_TYPES)


def slice_rank(edge_type: int) -> int:
    """Where edges of ``edge_type`` go in a slice: ascending rank (table-level types first, then by type).

    >>> sorted(range(1, 10), key=slice_rank)
    [1, 2, 6, 3, 4, 5, 7, 8, 9]
    """
    return (0 if edge_type in TABLE_LEVEL_TYPES else 1 << TYPE_BITS) | edge_type


class StoreWriteError(StoreError):
    """The store could not be written (disk full, a read-only folder, the file size limit): the previous store,
    if any, is as it was, and no temporary file is left (``writer.py``)."""


class Section:
    """One entry of the section table (read-only).  Plain classes, not dataclasses: this module is imported
    by every query, and each dataclass costs start-up most of a millisecond."""

    __slots__ = ("name", "offset", "nbytes", "dtype")

    def __init__(self, name: str, offset: int, nbytes: int, dtype: str) -> None:
        self.name, self.offset, self.nbytes, self.dtype = name, offset, nbytes, dtype

    def __repr__(self) -> str:
        return f"Section({self.name!r}, offset={self.offset}, nbytes={self.nbytes}, dtype={self.dtype!r})"


class Header:
    """The decoded header (read-only): counts, checksums and the sections by name."""

    __slots__ = ("version", "header_size", "node_count", "edge_count", "body_crc", "file_size", "sections")

    def __init__(
        self,
        version: int,
        header_size: int,
        node_count: int,
        edge_count: int,
        body_crc: int,
        file_size: int,
        sections: dict[str, Section],
    ) -> None:
        self.version, self.header_size, self.node_count, self.edge_count = version, header_size, node_count, edge_count
        self.body_crc, self.file_size, self.sections = body_crc, file_size, sections


def header_size(section_count: int) -> int:
    raw = _FIXED.size + section_count * _SECTION.size + _CRC.size
    return align(raw)


def align(offset: int) -> int:
    return (offset + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def pack_header(node_count: int, edge_count: int, sections: list[Section], body_crc: int, file_size: int) -> bytes:
    size = header_size(len(sections))
    fixed = _FIXED.pack(MAGIC, FORMAT_VERSION, size, node_count, edge_count, len(sections), body_crc, file_size)
    table = b"".join(
        _SECTION.pack(s.name.encode("ascii"), s.offset, s.nbytes, s.dtype.encode("ascii")) for s in sections
    )
    # The checksum closes the header, so it covers the padding too: every header byte is checked.
    body = (fixed + table).ljust(size - _CRC.size, b"\x00")
    return body + _CRC.pack(zlib.crc32(body))


def unpack_header(data: bytes, path: str, actual_size: int) -> Header:
    """Validate and decode a header; every failure names the file and says what to do."""
    if len(data) < _FIXED.size or not data.startswith(MAGIC):
        raise StoreError(f"{path}: not a lineage store (bad magic); run `lineage harvest` to create one")
    magic, version, size, nodes, edges, count, body_crc, file_size = _FIXED.unpack_from(data)
    if version != FORMAT_VERSION:
        age = "older" if version < FORMAT_VERSION else "newer"
        raise StoreError(
            f"{path}: store format v{version} is {age} than this lineage's v{FORMAT_VERSION}; re-harvest to rebuild it"
        )
    if size != header_size(count) or len(data) < size:
        raise StoreError(f"{path}: damaged or truncated store header; re-harvest to rebuild it")
    crc_at = size - _CRC.size
    (crc,) = _CRC.unpack_from(data, crc_at)
    if crc != zlib.crc32(data[:crc_at]):
        raise StoreError(f"{path}: damaged store header (checksum mismatch); re-harvest to rebuild it")
    if actual_size != file_size:
        raise StoreError(f"{path}: store is {actual_size} bytes but its header says {file_size}: truncated or damaged")
    sections = {}
    for index in range(count):
        raw_name, offset, nbytes, dtype = _SECTION.unpack_from(data, _FIXED.size + index * _SECTION.size)
        name = raw_name.rstrip(b"\x00").decode("ascii")
        sections[name] = Section(name, offset, nbytes, dtype.rstrip(b"\x00").decode("ascii"))
    return Header(version, size, nodes, edges, body_crc, file_size, sections)


def max_header_size() -> int:
    """Enough bytes to read any header this version writes in one go."""
    return header_size(64)
