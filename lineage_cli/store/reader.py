"""Open a store file and read its nodes and adjacency without loading it.

Opening reads the header only (plus a checksum pass over small files).  Arrays are
zero-copy ``memoryview`` casts of one read-only ``mmap``, so a query touches just the
pages it walks and a small query never imports numpy; ``numpy_array`` gives the same
bytes as a numpy array for the vectorized walks.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import sys
import zlib
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from lineage_cli.model import NodeKind
from lineage_cli.store.layout import Header, StoreError, max_header_size, unpack_header

if TYPE_CHECKING:
    import numpy as np

    from lineage_cli.walk.result import LineageResult

# Below this size the body checksum is verified on open; above it, `lineage stats --verify` does it,
# because a full pass would make opening cost O(size) instead of O(1).
VERIFY_ON_OPEN_BYTES = 32 * 1024 * 1024

_REQUIRED = (
    "node_kind", "name_offsets", "names", "node_container", "node_file", "node_line",
    "file_offsets", "files", "meta",
    "fwd_offsets", "fwd_node", "fwd_attr", "fwd_statement", "bwd_offsets", "bwd_node", "bwd_attr",
)  # fmt: skip
# numpy dtype string -> memoryview format; the file is little-endian like every host we run on
_FORMATS = {"|u1": "B", "<u2": "H", "<i4": "i", "<i8": "q", "<u8": "Q"}


def open_store(path: str | os.PathLike[str]) -> Store:
    return Store(path)


class Store:
    """A read-only lineage graph backed by one memory-mapped file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        # One open file for header and map: a harvest renaming a new store over this path
        # in between must not pair the old header with the new body.
        with _open(self.path) as handle:
            self.header = _read_header(handle, self.path)
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self._bytes = memoryview(self._map)
        missing = [name for name in _REQUIRED if name not in self.header.sections]
        if missing:
            raise StoreError(f"{self.path}: damaged store: missing sections {', '.join(missing)}")
        if self.header.file_size <= VERIFY_ON_OPEN_BYTES:
            self.verify()

    # -- raw arrays --------------------------------------------------------------------------------
    def array(self, name: str) -> memoryview:
        """Section ``name`` as a typed memoryview (indexable, no numpy)."""
        section = self._section(name)
        raw = self._bytes[section.offset : section.offset + section.nbytes]
        if sys.byteorder != "little" or section.dtype not in _FORMATS:
            raise StoreError(f"{self.path}: section {name} has dtype {section.dtype}, unreadable on this host")
        return raw.cast(_FORMATS[section.dtype])

    def numpy_array(self, name: str) -> np.ndarray:
        """Section ``name`` as a zero-copy numpy array (imports numpy)."""
        import numpy as np

        section = self._section(name)
        dtype = np.dtype(section.dtype)
        return np.frombuffer(self._map, dtype=dtype, count=section.nbytes // dtype.itemsize, offset=section.offset)

    def _section(self, name: str):  # noqa: ANN202 - Section
        section = self.header.sections[name]
        if section.offset < self.header.header_size or section.offset + section.nbytes > self.header.file_size:
            raise StoreError(f"{self.path}: damaged store: section {name} lies outside the file")
        return section

    def verify(self) -> None:
        """Check the body checksum: detects bit flips anywhere after the header."""
        if zlib.crc32(self._bytes[self.header.header_size :]) != self.header.body_crc:
            raise StoreError(f"{self.path}: damaged store (body checksum mismatch); re-harvest to rebuild it")

    @cached_property
    def meta(self) -> dict[str, Any]:
        try:
            return json.loads(bytes(self.array("meta")))
        except ValueError as error:
            raise StoreError(f"{self.path}: damaged store metadata: {error}") from error

    @property
    def node_count(self) -> int:
        return self.header.node_count

    @property
    def edge_count(self) -> int:
        return self.header.edge_count

    @cached_property
    def kinds(self) -> memoryview:
        return self.array("node_kind")

    @cached_property
    def _name_offsets(self) -> memoryview:
        return self.array("name_offsets")

    @cached_property
    def _names_blob(self) -> memoryview:
        return self.array("names")

    # -- nodes -------------------------------------------------------------------------------------
    def name(self, node: int) -> str:
        offsets = self._name_offsets
        return str(self._names_blob[offsets[node] : offsets[node + 1]], "utf-8")

    def kind(self, node: int) -> NodeKind:
        return NodeKind(self.kinds[node])

    def provenance(self, node: int) -> tuple[str, int] | None:
        file_index = self.array("node_file")[node]
        if file_index < 0:
            return None
        offsets = self.array("file_offsets")
        file = str(self.array("files")[offsets[file_index] : offsets[file_index + 1]], "utf-8")
        return file, self.array("node_line")[node]

    def container(self, node: int) -> int | None:
        parent = self.array("node_container")[node]
        return parent if parent >= 0 else None

    def find(self, name: str) -> int | None:
        """The id of the node called exactly ``name``: a binary search, ids being name ranks."""
        wanted = name.encode("utf-8")
        offsets, blob = self._name_offsets, self._names_blob
        low, high = 0, self.node_count
        while low < high:
            middle = (low + high) // 2
            if blob[offsets[middle] : offsets[middle + 1]].tobytes() < wanted:
                low = middle + 1
            else:
                high = middle
        if low < self.node_count and blob[offsets[low] : offsets[low + 1]].tobytes() == wanted:
            return low
        return None

    def names(self) -> list[str]:
        """Every node name in id order (reads the whole string table)."""
        return self._names_text.split("\n") if self.node_count else []

    @cached_property
    def _names_text(self) -> str:
        """The string table as one newline-joined text, for pattern scans."""
        blob = self._names_blob.tobytes()
        offsets = self._name_offsets
        return "\n".join(str(blob[offsets[i] : offsets[i + 1]], "utf-8") for i in range(self.node_count))

    def like(self, pattern: str) -> list[int]:
        """Ids of the nodes whose name matches a SQL LIKE ``pattern`` (``%`` any run, ``_`` one character)."""
        matcher = like_regex(pattern)
        return [index for index, name in enumerate(self.names()) if matcher.fullmatch(name)]

    # -- queries -------------------------------------------------------------------------------------
    def up(self, name_or_pattern: str, depth: int | None = None, **options: Any) -> LineageResult:
        from lineage_cli.walk.query import lineage

        return lineage(self, name_or_pattern, "up", depth=depth, **options)

    def down(self, name_or_pattern: str, depth: int | None = None, **options: Any) -> LineageResult:
        from lineage_cli.walk.query import lineage

        return lineage(self, name_or_pattern, "down", depth=depth, **options)


def like_regex(pattern: str) -> re.Pattern[str]:
    """Translate SQL LIKE into a regex; backslash escapes a wildcard.

    >>> bool(like_regex("stg.%").fullmatch("stg.orders")), bool(like_regex("%.t\\\\_s%").fullmatch("a.txs"))
    (True, False)
    """
    parts, escaped = [], False
    for char in pattern:
        if escaped:
            parts.append(re.escape(char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "%":
            parts.append("[^\\n]*")
        elif char == "_":
            parts.append("[^\\n]")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts))


def _open(path: Path) -> BinaryIO:
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise StoreError(f"{path}: no lineage store here; run `lineage harvest PATH` first") from None
    except OSError as error:
        raise StoreError(f"{path}: cannot read the store: {error.strerror}") from None


def _read_header(handle: BinaryIO, path: Path) -> Header:
    try:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(max_header_size())
    except OSError as error:
        raise StoreError(f"{path}: cannot read the store: {error.strerror}") from None
    return unpack_header(data, str(path), size)
