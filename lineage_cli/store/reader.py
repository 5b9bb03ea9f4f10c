"""Open a store file and read its nodes and adjacency without loading it.

Opening reads the header only (plus a checksum pass over small files).  Arrays are
zero-copy ``memoryview`` casts of one read-only ``mmap``, so a query touches just the
pages it walks and a small query never imports numpy; ``numpy_array`` gives the same
bytes as a numpy array for the vectorized walks.
"""

from __future__ import annotations

import mmap
import os
import re
import sys
import zlib
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import TYPE_CHECKING, Any, BinaryIO

from lineage_cli.errors import StoreError
from lineage_cli.model import NodeKind
from lineage_cli.store.layout import SECTIONS, Header, max_header_size, unpack_header

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np

# Below this size the body checksum is verified on open; above it, `lineage stats --verify` does it,
# because a full pass would make opening cost O(size) instead of O(1).
VERIFY_ON_OPEN_BYTES = 32 * 1024 * 1024

# numpy dtype string -> memoryview format; the file is little-endian like every host we run on
_FORMATS = {"|u1": "B", "<u2": "H", "<i4": "i", "<u4": "I", "<i8": "q", "<u8": "Q"}


def open_store(path: str | os.PathLike[str]) -> Store:
    return Store(path)


class Store:
    """A read-only lineage graph backed by one memory-mapped file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        # (a str, and ``path`` a Path made on demand: pathlib costs a cold query 3 ms of imports)
        self._path = os.fspath(path)
        # One open file for header and map: a harvest renaming a new store over this path
        # in between must not pair the old header with the new body.
        with _open(self._path) as handle:
            self.header = _read_header(handle, self._path)
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self._bytes = memoryview(self._map)
        # views made once per section: a session of walks asks for the same arrays again and again
        self._views: dict[str, memoryview] = {}
        self._numpy: dict[str, np.ndarray] = {}
        self._names_asked = 0  # names read through ``names_of`` so far: when to decode the string table whole
        self._names_text: str | None = None  # the whole string table, decoded, once a session has read enough of it
        self._names_kept: tuple[np.ndarray, np.ndarray] | None = None  # names made so far, by node (``_kept_names``)
        missing = [name for name in SECTIONS if name not in self.header.sections]
        if missing:
            raise StoreError(f"{self._path}: damaged store: missing sections {', '.join(missing)}")
        if self.header.file_size <= VERIFY_ON_OPEN_BYTES:
            self.verify()

    # -- raw arrays --------------------------------------------------------------------------------
    def array(self, name: str) -> memoryview:
        """Section ``name`` as a typed memoryview (indexable, no numpy)."""
        view = self._views.get(name)
        if view is None:
            section = self._section(name)
            raw = self._bytes[section.offset : section.offset + section.nbytes]
            if sys.byteorder != "little" or section.dtype not in _FORMATS:
                raise StoreError(f"{self._path}: section {name} has dtype {section.dtype}, unreadable on this host")
            view = self._views[name] = raw.cast(_FORMATS[section.dtype])
        return view

    def numpy_array(self, name: str) -> np.ndarray:
        """Section ``name`` as a zero-copy, read-only numpy array (imports numpy)."""
        array = self._numpy.get(name)
        if array is None:
            import numpy as np

            section = self._section(name)
            dtype = np.dtype(section.dtype)
            count, offset = section.nbytes // dtype.itemsize, section.offset
            array = self._numpy[name] = np.frombuffer(self._map, dtype=dtype, count=count, offset=offset)
        return array

    def _section(self, name: str):  # noqa: ANN202 - Section
        section = self.header.sections[name]
        if section.offset < self.header.header_size or section.offset + section.nbytes > self.header.file_size:
            raise StoreError(f"{self._path}: damaged store: section {name} lies outside the file")
        return section

    def verify(self) -> None:
        """Check the body checksum: detects bit flips anywhere after the header."""
        if zlib.crc32(self._bytes[self.header.header_size :]) != self.header.body_crc:
            raise StoreError(f"{self._path}: damaged store (body checksum mismatch); re-harvest to rebuild it")

    @cached_property
    def path(self) -> Path:
        from pathlib import Path

        return Path(self._path)

    @cached_property
    def meta(self) -> dict[str, Any]:
        import json

        try:
            return json.loads(bytes(self.array("meta")))
        except ValueError as error:
            raise StoreError(f"{self._path}: damaged store metadata: {error}") from error

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
    def node_flags_present(self) -> int:
        """Every ``NodeFlag`` bit some node has, or-ed together: the distinct flag bytes are found in C."""
        flags = 0
        for value in set(self.array("node_flags").tobytes()):
            flags |= value
        return flags

    @cached_property
    def _name_offsets(self) -> memoryview:
        return self.array("name_offsets")

    @cached_property
    def _names_blob(self) -> memoryview:
        return self.array("names")

    # -- nodes -------------------------------------------------------------------------------------
    @cached_property
    def _names_at(self) -> int:
        """Where the string table starts in the file: names are sliced straight from the map (bytes)."""
        return self._section("names").offset

    def name(self, node: int) -> str:
        offsets, at = self._name_offsets, self._names_at
        return self._map[at + offsets[node] : at + offsets[node + 1]].decode("utf-8")

    def names_of(self, nodes: Iterable[int]) -> list[str]:
        """The names of ``nodes``, in order: one call for the many names of an answer.

        A numpy array of ids gets its offsets gathered by numpy; anything else is read entry by entry.
        """
        at, mapped = self._names_at, self._map
        if not hasattr(nodes, "take"):  # not a numpy array
            offsets = self._name_offsets
            return [mapped[at + offsets[n] : at + offsets[n + 1]].decode() for n in nodes]  # (UTF-8)
        text = self._decoded_names(len(nodes))
        if text is not None:
            return self._kept_names(nodes, text)
        offsets = self.numpy_array("name_offsets")
        starts, ends = offsets.take(nodes), offsets[1:].take(nodes)
        return [
            mapped[start:end].decode() for start, end in zip((starts + at).tolist(), (ends + at).tolist(), strict=True)
        ]

    @property
    def keeps_names(self) -> bool:
        """Whether ``names_of`` keeps the names it makes (``_kept_names``): a session that has named many."""
        return self._names_kept is not None

    def _kept_names(self, nodes: np.ndarray, text: str) -> list[str]:
        """Names of ``nodes`` (a numpy array) in a session that reads many: each made once, as a slice of the
        decoded table (byte offsets are character offsets in an ASCII table), and kept by node, so an answer
        that meets names named before gathers them (a few ns a name, where a slice costs over 100).  What it
        keeps grows with the nodes the session has named, at most a ``str`` and 9 bytes a node of the store."""
        import numpy as np

        if self._names_kept is None:
            self._names_kept = np.empty(self.node_count, dtype=object), np.zeros(self.node_count, dtype=np.bool_)
        kept, named = self._names_kept
        new = nodes.compress(np.logical_not(named.take(nodes)))
        if new.size:
            new = np.unique(new)
            offsets = self.numpy_array("name_offsets")
            starts, ends = offsets.take(new).tolist(), offsets.take(new + 1).tolist()
            made = np.empty(new.size, dtype=object)
            made[:] = [text[start:end] for start, end in zip(starts, ends, strict=True)]
            kept[new] = made
            named[new] = True
        return gathered(kept, nodes)

    def _decoded_names(self, asked: int) -> str | None:
        """The whole string table as one ``str``, once this session has asked for more names than an eighth of
        the store's: decoding it costs about as much as naming a tenth of the nodes one by one, and from then
        on a name is a slice of it, at twice the speed (a long session, a server, pays it once).  None while
        it does not pay, and for a table that is not ASCII (a character offset is then not a byte offset)."""
        if self._names_text is None and self._names_asked >= 0:
            self._names_asked += asked
            if self._names_asked > self.node_count // 8:
                section = self._section("names")
                text = self._map[section.offset : section.offset + section.nbytes].decode("utf-8")
                self._names_asked = -1  # decided: decoded, or not ASCII and never tried again
                if text.isascii():
                    self._names_text = text
        return self._names_text

    def kind(self, node: int) -> NodeKind:
        return NodeKind(self.kinds[node])

    @cached_property
    def _provenance_arrays(self) -> tuple[memoryview, memoryview, memoryview, memoryview]:
        return self.array("node_file"), self.array("node_line"), self.array("file_offsets"), self.array("files")

    def provenance(self, node: int) -> tuple[str, int] | None:
        node_file, node_line, file_offsets, files = self._provenance_arrays
        file_index = node_file[node]
        if file_index < 0:
            return None
        file = str(files[file_offsets[file_index] : file_offsets[file_index + 1]], "utf-8")
        return file, node_line[node]

    def sql(self, node: int) -> tuple[str, str] | None:
        """The SQL text of the statement the transformation ``node`` came from and its dialect; None for a node
        without one (another producer's import, or any other kind).  The rows are sorted by transformation."""
        rows = self.array("sql_statement")
        row = bisect_left(rows, node)
        if row == len(rows) or rows[row] != node:
            return None
        offsets, at = self.array("sql_offsets"), self._section("sql_text").offset
        text = self._map[at + offsets[row] : at + offsets[row + 1]].decode("utf-8")
        dialects = self.sql_dialects
        dialect = self.array("sql_dialect")[row]
        if dialect >= len(dialects):
            raise StoreError(
                f"{self._path}: damaged store (a statement's dialect is unknown); re-harvest to rebuild it"
            )
        return text, dialects[dialect]

    @cached_property
    def sql_dialects(self) -> list[str]:
        """The names the statement texts' dialect indexes point to (a JSON list)."""
        import json

        try:
            names = json.loads(bytes(self.array("sql_dialects")))
        except ValueError:
            names = None
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise StoreError(f"{self._path}: damaged store (its statements' dialects); re-harvest to rebuild it")
        return names

    def expressions(self, columns: Iterable[int]) -> dict[int, tuple[tuple[str, str], ...]]:
        """The SQL expressions ``columns`` are written with: for each column that has any, (the name of the statement
        writing it, the text) pairs in the order of the statements' files and lines.  The rows are sorted by column:
        a numpy array of ids is looked up by ``searchsorted``, anything else by a binary search per id."""
        rows = self.array("expr_column")
        if not len(rows):
            return {}
        if hasattr(columns, "take"):  # a numpy array
            import numpy as np

            numbered = self.numpy_array("expr_column")
            starts, ends = np.searchsorted(numbered, columns), np.searchsorted(numbered, columns, side="right")
            found = np.flatnonzero(ends > starts)
            spans = list(
                zip(columns.take(found).tolist(), starts.take(found).tolist(), ends.take(found).tolist(), strict=True)
            )
        else:
            columns = list(columns)
            starts = [bisect_left(rows, column) for column in columns]
            ends = [bisect_right(rows, column, start) for column, start in zip(columns, starts, strict=True)]
            spans = [span for span in zip(columns, starts, ends, strict=True) if span[2] > span[1]]
        statements, offsets = self.array("expr_statement"), self.array("expr_offsets")
        text = self._whole_expression_text if len(spans) > len(rows) // 8 else self._mapped_expression_text
        made_by = {statements[row] for _, start, end in spans for row in range(start, end)}  # a statement, many columns
        names = dict(zip(made_by, self.names_of(made_by), strict=True))
        found_rows: dict[int, tuple[tuple[str, str], ...]] = {}
        for column, start, end in spans:
            if end == start + 1:  # (most columns: one statement writes them)
                found_rows[column] = ((names[statements[start]], text(offsets[start], offsets[end])),)
                continue
            pairs = sorted(  # several statements write the column: in the order of their files and lines
                ((statements[row], text(offsets[row], offsets[row + 1])) for row in range(start, end)),
                key=lambda pair: self.provenance(pair[0]) or ("", 0),
            )
            found_rows[column] = tuple((names[made], expression) for made, expression in pairs)
        return found_rows

    @cached_property
    def _mapped_expression_text(self) -> Callable[[int, int], str]:
        """The expression text between two byte offsets, decoded from the map: what a small answer reads."""
        at, mapped = self._section("expr_text").offset, self._map
        return lambda start, end: mapped[at + start : at + end].decode("utf-8")

    @cached_property
    def _whole_expression_text(self) -> Callable[[int, int], str]:
        """The same, sliced from the whole section decoded once, when it is ASCII (a byte offset is then a character
        offset): for an answer asking for more than an eighth of the rows, where decoding all costs less."""
        section = self._section("expr_text")
        whole = self._map[section.offset : section.offset + section.nbytes].decode("utf-8")
        if len(whole) != section.nbytes:
            return self._mapped_expression_text
        return lambda start, end: whole[start:end]

    def container(self, node: int) -> int | None:
        parent = self.array("node_container")[node]
        return parent if parent >= 0 else None

    def find(self, name: str) -> int | None:
        """The id of the node called exactly ``name``: a binary search, ids being name ranks."""
        wanted = name.encode("utf-8")
        offsets, at, mapped = self._name_offsets, self._names_at, self._map
        low, high = 0, self.node_count
        while low < high:
            middle = (low + high) // 2
            if mapped[at + offsets[middle] : at + offsets[middle + 1]] < wanted:
                low = middle + 1
            else:
                high = middle
        if low < self.node_count and mapped[at + offsets[low] : at + offsets[low + 1]] == wanted:
            return low
        return None

    def names(self) -> list[str]:
        """Every node name in id order (reads the whole string table)."""
        if not self.node_count:
            return []
        blob, offsets = self._names_blob, self._name_offsets.tolist()
        bounds = zip(offsets[:-1], offsets[1:], strict=True)
        text = str(blob, "utf-8")
        if len(text) == len(blob):  # ASCII: character offsets are the byte offsets, slice the decoded text
            return [text[start:end] for start, end in bounds]
        return [str(blob[start:end], "utf-8") for start, end in bounds]

    def like(self, pattern: str) -> list[int]:
        """Ids of the nodes whose name matches a SQL LIKE ``pattern`` (``%`` any run, ``_`` one character).

        The mapped string table is searched for the pattern's longest literal part first (``mmap.find``, C
        speed, nothing decoded) and only the names holding it are matched; a pattern without a literal, or
        with one found in more than a quarter of the names, is matched against every name.
        """
        matcher = like_regex(pattern)
        literal = longest_literal(pattern).encode("utf-8")
        holding = self._holding(literal) if literal else None
        if holding is None:
            return [index for index, name in enumerate(self.names()) if matcher.fullmatch(name)]
        return [node for node in holding if matcher.fullmatch(self.name(node))]

    def _holding(self, literal: bytes) -> list[int] | None:
        """Ids of the names that contain ``literal``, ascending; None past a quarter of all names."""
        offsets, at, mapped = self._name_offsets, self._names_at, self._map
        end, limit = at + offsets[self.node_count], self.node_count // 4
        found: list[int] = []
        position = mapped.find(literal, at, end)
        while position >= 0:
            node = bisect_right(offsets, position - at) - 1
            found.append(node)
            if len(found) > limit:
                return None
            # Later hits in this name add nothing; a hit running past its end is not in it (nor are later ones).
            position = mapped.find(literal, at + offsets[node + 1], end)
        return [node for node in found if mapped.find(literal, at + offsets[node], at + offsets[node + 1]) >= 0]


def gathered(objects: np.ndarray, picks: np.ndarray) -> list[Any]:
    """``objects.take(picks).tolist()`` (an object array), a block of picks at a time when they are many.

    Each object is touched three times, by the take's reference, the list's and the taken block's release; a
    block's objects are still in the cache for the second and third, so a wide answer's edge ends, scattered
    over more names than the cache holds, cost a cache miss a name, not three (40% of the time of 2.3M edge
    targets).  Fewer picks touch fewer objects, which stay in the cache anyway: blocks would only cost a copy.
    """
    if picks.size <= _SCATTERED:
        return objects.take(picks).tolist()
    listed: list[Any] = [None] * picks.size
    for start in range(0, picks.size, _GATHERED):
        listed[start : start + _GATHERED] = objects.take(picks[start : start + _GATHERED]).tolist()
    return listed


_GATHERED = 1 << 13  # objects gathered a block at a time: a block's fit in the cache
_SCATTERED = 1 << 19  # picks from which blocks pay: names of some 80 bytes, tens of MB of them


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


def longest_literal(pattern: str) -> str:
    """The longest run of a LIKE pattern without wildcards (escapes resolved).

    >>> longest_literal("%.t\\\\_sales%"), longest_literal("stg._x%")
    ('.t_sales', 'stg.')
    """
    runs, current, escaped = [], [], False
    for char in pattern:
        if escaped or char not in "%_\\":
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            runs.append("".join(current))
            current = []
    runs.append("".join(current))
    return max(runs, key=len)


def _open(path: str) -> BinaryIO:
    try:
        return open(path, "rb")  # noqa: SIM115 - the caller closes it
    except FileNotFoundError:
        raise StoreError(f"{path}: no lineage store here; run `lineage harvest PATH` first") from None
    except OSError as error:
        raise StoreError(f"{path}: cannot read the store: {error.strerror}") from None


def _read_header(handle: BinaryIO, path: str) -> Header:
    try:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(max_header_size())
    except OSError as error:
        raise StoreError(f"{path}: cannot read the store: {error.strerror}") from None
    return unpack_header(data, path, size)
