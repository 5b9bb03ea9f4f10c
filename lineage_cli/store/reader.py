"""Open a store file and read its nodes and adjacency without loading it.

Opening reads the header only (plus a checksum pass over small files); every array is
a zero-copy view of one ``numpy.memmap``, so a query touches just the pages it walks.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lineage_cli.model import NodeKind
from lineage_cli.store.layout import Header, StoreError, max_header_size, unpack_header

if TYPE_CHECKING:
    from lineage_cli.walk.result import LineageResult

# Below this size the body checksum is verified on open; above it, `lineage stats --verify` does it,
# because a full pass would make opening cost O(size) instead of O(1).
VERIFY_ON_OPEN_BYTES = 32 * 1024 * 1024

_REQUIRED = (
    "node_kind", "name_offsets", "names", "node_container", "node_file", "node_line",
    "file_offsets", "files", "meta",
    "fwd_offsets", "fwd_node", "fwd_type", "fwd_flags",
    "bwd_offsets", "bwd_node", "bwd_type", "bwd_flags",
)  # fmt: skip


def open_store(path: str | os.PathLike[str]) -> Store:
    return Store(path)


class Store:
    """A read-only lineage graph backed by one memory-mapped file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.header = _read_header(self.path)
        self._map = np.memmap(self.path, dtype="u1", mode="r")
        missing = [name for name in _REQUIRED if name not in self.header.sections]
        if missing:
            raise StoreError(f"{self.path}: damaged store: missing sections {', '.join(missing)}")
        if self.header.file_size <= VERIFY_ON_OPEN_BYTES:
            self.verify()

    # -- raw arrays --------------------------------------------------------------------------------
    def array(self, name: str) -> np.ndarray:
        section = self.header.sections[name]
        end = section.offset + section.nbytes
        if section.offset < self.header.header_size or end > self.header.file_size:
            raise StoreError(f"{self.path}: damaged store: section {name} lies outside the file")
        return self._map[section.offset : end].view(np.dtype(section.dtype))

    def verify(self) -> None:
        """Check the body checksum: detects bit flips anywhere after the header."""
        crc = zlib.crc32(memoryview(self._map[self.header.header_size :]))
        if crc != self.header.body_crc:
            raise StoreError(f"{self.path}: damaged store (body checksum mismatch); re-harvest to rebuild it")

    @cached_property
    def meta(self) -> dict[str, Any]:
        try:
            return json.loads(self.array("meta").tobytes())
        except ValueError as error:
            raise StoreError(f"{self.path}: damaged store metadata: {error}") from error

    @property
    def node_count(self) -> int:
        return self.header.node_count

    @property
    def edge_count(self) -> int:
        return self.header.edge_count

    @cached_property
    def kinds(self) -> np.ndarray:
        return self.array("node_kind")

    @cached_property
    def _name_offsets(self) -> np.ndarray:
        return self.array("name_offsets")

    @cached_property
    def _names_blob(self) -> np.ndarray:
        return self.array("names")

    # -- nodes -------------------------------------------------------------------------------------
    def name(self, node: int) -> str:
        start, end = self._name_offsets[node], self._name_offsets[node + 1]
        return self._names_blob[start:end].tobytes().decode("utf-8")

    def kind(self, node: int) -> NodeKind:
        return NodeKind(int(self.kinds[node]))

    def provenance(self, node: int) -> tuple[str, int] | None:
        file_index = int(self.array("node_file")[node])
        if file_index < 0:
            return None
        offsets = self.array("file_offsets")
        file = self.array("files")[offsets[file_index] : offsets[file_index + 1]].tobytes().decode("utf-8")
        return file, int(self.array("node_line")[node])

    def container(self, node: int) -> int | None:
        parent = int(self.array("node_container")[node])
        return parent if parent >= 0 else None

    def find(self, name: str) -> int | None:
        """The id of the node called exactly ``name``: a binary search, ids being name ranks."""
        low, high = 0, self.node_count
        while low < high:
            middle = (low + high) // 2
            if self.name(middle) < name:
                low = middle + 1
            else:
                high = middle
        return low if low < self.node_count and self.name(low) == name else None

    def names(self) -> list[str]:
        """Every node name in id order (reads the whole string table)."""
        blob = self._names_blob.tobytes()
        offsets = self._name_offsets.tolist()
        return [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(self.node_count)]

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
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts), re.DOTALL)


def _read_header(path: Path) -> Header:
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            data = handle.read(max_header_size())
    except FileNotFoundError:
        raise StoreError(f"{path}: no lineage store here; run `lineage harvest PATH` first") from None
    except OSError as error:
        raise StoreError(f"{path}: cannot read the store: {error.strerror}") from None
    return unpack_header(data, str(path), size)
