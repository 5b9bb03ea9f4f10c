"""``lineage import`` of edge lists: csv, tsv and jsonl rows naming a source, a target, a type and subtypes.

An import of millions of rows would spend its time in per-row Python, so rows are read in chunks and each
chunk is split into columns, checked and added to the builder column by column; a type or subtype text is
parsed once per distinct value.  A chunk of delimited lines without a quote and all of one width is split
with ``str`` methods, which parse such lines exactly as ``csv`` does; any other chunk (a quoted field, which
may run over line ends, a blank line, rows of several widths) goes through ``csv.reader``.  A bad row is
reported with its line and skipped, as a row-by-row reader would.

Hostile input costs no more than a bad row: a quote that is never closed would make the rest of the file one
field, so its row is refused at the line the quote opened and reading goes on from the next line; a line
longer than ``MAX_LINE_CHARS`` is skipped in pieces, never held whole; a name longer than
``MAX_NAME_CHARS`` refuses its row.
"""

from __future__ import annotations

import csv
import itertools
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from lineage_cli.imports.builder import MAX_NAME_CHARS, EdgeListBuilder, ImportError_, Problem, json_object, quoted
from lineage_cli.model import EdgeType, NodeKind, Subtype
from lineage_cli.store.layout import TYPE_BITS

COLUMNS = ("source", "target", "type", "subtype")
TYPE_NAMES = {"flow": EdgeType.FLOW, "projection": EdgeType.PROJECTION, "predicate": EdgeType.PREDICATE,
              "contains": EdgeType.CONTAINS}  # fmt: skip
# edge type -> (source kind, target kind)
EDGE_KINDS = {
    EdgeType.FLOW: (NodeKind.TABLE, NodeKind.TABLE),
    EdgeType.PROJECTION: (NodeKind.COLUMN, NodeKind.COLUMN),
    EdgeType.PREDICATE: (NodeKind.COLUMN, NodeKind.TABLE),
    EdgeType.CONTAINS: (NodeKind.TABLE, NodeKind.COLUMN),
}
# Text read per chunk: its rows' strings, several times its size, are what an import holds at a time.
CHUNK_CHARS = 1 << 20
# A longer line is no edge row (its names could not be within MAX_NAME_CHARS but for huge extra columns):
# it is skipped unread, so that a runaway line costs no more memory than this.
MAX_LINE_CHARS = 1 << 20
_LINE_ENDS = ("\n", "\r")


@dataclass(slots=True)
class _Chunk:
    """Rows as columns, names stripped and lower-cased; a missing column is all empty strings."""

    lines: list[int] | np.ndarray  # each row's line (the last one of a row with a quoted line end)
    sources: list[str]
    targets: list[str]
    types: list[str]
    subtypes: list[str]
    refused: list[Problem] = field(default_factory=list)  # lines that are not rows at all (not a JSON object)


def read_edge_list(path: Path, fmt: str, builder: EdgeListBuilder) -> tuple[int, list[Problem]]:
    """Add the rows of ``path`` to ``builder``; returns the rows read and the skipped ones, in line order."""
    rows, problems = 0, []
    with path.open(encoding="utf-8", newline="") as handle:
        chunks = _json_chunks(_Lines(handle)) if fmt == "jsonl" else _delimited_chunks(handle, path, fmt)
        for chunk in chunks:
            rows += len(chunk.lines) + len(chunk.refused)
            problems += _add(chunk, builder)
    return rows, problems


class _Lines:
    """A file's lines, counted, a chunk or a line at a time, split where ``readline`` splits them (CR, LF, CRLF).

    A chunk is read whole (one ``read`` of up to ``CHUNK_CHARS`` and the rest of its last line), not line by line.
    A line of ``MAX_LINE_CHARS`` or more is skipped in pieces, never held whole, and given as a blank line,
    which is no row; its number waits in ``too_long`` until ``refusals`` reports it with the chunk that held it.
    """

    def __init__(self, handle: TextIO) -> None:
        self._read = handle.read
        # Reads of under half a line's limit: a chunk (what is left of a read, and a read) is then shorter than
        # the limit, so that no line in it can be too long, unless chunks are made longer than that.
        self._size = max(1, min(CHUNK_CHARS, MAX_LINE_CHARS // 2 - 1))
        self._rest = ""  # read from the file, not given yet
        self.read = 0  # the lines given so far
        self.too_long: list[int] = []

    def chunks(self) -> Iterator[tuple[int, str]]:
        """Per chunk of about ``CHUNK_CHARS``: the line before it and its whole lines, as one text."""
        while True:
            start, text = self.read, self._rest + self._read(self._size)
            cut = _after_last_line_end(text)
            head, self._rest = text[:cut], text[cut:]
            if len(head) >= MAX_LINE_CHARS:  # a line in it may be too long
                head = "".join(map(self._short, _split_lines(head)))
            else:
                self.read += _line_count(head)
            text = head + (self.line() if self._rest else "")  # and the line the read cut, whole
            if not text:
                return
            yield start, text

    def _short(self, line: str) -> str:
        """``line`` (one of a chunk, counted), or a blank line if it is too long."""
        self.read += 1
        if len(line.rstrip("\r\n")) < MAX_LINE_CHARS:
            return line
        self.too_long.append(self.read)
        return "\n"

    def line(self) -> str:
        """The next line; ``""`` at the end of the file."""
        while not (end := _after_first_line_end(self._rest)) and len(self._rest) < MAX_LINE_CHARS:
            more = self._read(self._size)
            if not more:  # the last line, without its line end
                line, self._rest = self._rest, ""
                self.read += bool(line)
                return line
            self._rest += more
        if end and end - len(_line_end(self._rest[:end])) < MAX_LINE_CHARS:
            line, self._rest = self._rest[:end], self._rest[end:]
            self.read += 1
            return line
        while not (end := _after_first_line_end(self._rest)):  # too long: skipped to its end, a piece at a time
            self._rest = self._rest[-1:] if self._rest.endswith("\r") else ""
            if not (more := self._read(self._size)):
                break
            self._rest += more
        self._rest = self._rest[end:]
        self.read += 1
        self.too_long.append(self.read)
        return "\n"

    def refusals(self) -> list[Problem]:
        """The over-long lines met since the last call."""
        problem = f"line longer than {MAX_LINE_CHARS:,} characters; skipped unread"
        refused = [(line, problem) for line in self.too_long]
        self.too_long.clear()
        return refused


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # a line and its end, or the last line without one


def _split_lines(text: str) -> list[str]:
    return _LINE.findall(text)


def _line_count(text: str) -> int:
    """The line ends in ``text`` (a CRLF is one)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def _line_end(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def _after_first_line_end(text: str) -> int:
    """Where the first line of ``text`` ends (after its line end), or 0 if it may not have ended yet.

    A CR at the very end may be the start of a CRLF: the line is not known to have ended.
    """
    ends = [at for at in (text.find("\n"), text.find("\r")) if at >= 0]
    if not ends:
        return 0
    at = min(ends)
    if text[at] == "\n":
        return at + 1
    if at + 1 == len(text):
        return 0
    return at + 2 if text[at + 1] == "\n" else at + 1


def _after_last_line_end(text: str) -> int:
    """Where the last whole line of ``text`` ends; a CR at the very end does not count (it may be a CRLF's)."""
    searched = text[:-1] if text.endswith("\r") else text
    return max(searched.rfind("\n"), searched.rfind("\r")) + 1


def _delimited_chunks(handle: TextIO, path: Path, fmt: str) -> Iterator[_Chunk]:
    delimiter = "\t" if fmt == "tsv" else ","
    lines = _Lines(handle)
    header = next(csv.reader([lines.line()], delimiter=delimiter), [])  # the first line, even a blank one
    if lines.too_long:
        raise ImportError_(f"{path}: the header row is longer than {MAX_LINE_CHARS:,} characters")
    index = {name: i for i, name in enumerate(header)}  # a repeated name is its last column, as in DictReader
    if not {"source", "target"} <= index.keys():
        raise ImportError_(f"{path}: the header row must name the columns source, target[, type, subtype]")
    # A missing column: past every row's end (a row longer than the header has no type in its extra field).
    wanted = [index.get(name, sys.maxsize) for name in COLUMNS]
    for start, text in lines.chunks():
        chunk = None if '"' in text else _split_chunk(text, start, delimiter, wanted)
        if chunk is None:
            chunk = _csv_chunk(_split_lines(text), lines, start, delimiter, wanted)
        chunk.refused += lines.refusals()
        yield chunk


def _split_chunk(text: str, line: int, delimiter: str, wanted: list[int]) -> _Chunk | None:
    """The rows of quote-free lines following line ``line``, or None unless every line has the same fields."""
    if "\r" in text:  # every CR ends a line here (none is inside a quoted field), as the file's line reading has it
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.removesuffix("\n")
    width = _width(text, delimiter)
    if width < 2:  # a blank line (no row) or rows of several widths
        return None
    lowered = text.isascii()
    if lowered:  # one pass instead of one per name; types are lower-cased and subtypes upper-cased anyway
        text = text.lower()
    fields = text.replace("\n", delimiter).split(delimiter)
    count = len(fields) // width
    sources, targets, types, subtypes = (fields[i::width] if i < width else [""] * count for i in wanted)
    lines = np.arange(line + 1, line + 1 + count)
    return _Chunk(lines, _names(sources, lowered), _names(targets, lowered), types, subtypes)


def _width(text: str, delimiter: str) -> int:
    """The number of fields on every line of ``text``, or 0 when lines differ."""
    data = np.frombuffer(text.encode(), dtype=np.uint8)  # in UTF-8 no other character has a newline or delimiter byte
    ends = np.append(np.flatnonzero(data == ord("\n")), data.size)
    per_line = np.diff(np.searchsorted(np.flatnonzero(data == ord(delimiter)), ends), prepend=0)
    return int(per_line[0]) + 1 if (per_line == per_line[0]).all() else 0


def _csv_chunk(lines: list[str], more: _Lines, line: int, delimiter: str, wanted: list[int]) -> _Chunk:
    """The rows of ``lines``, which follow line ``line`` (and of the file's next lines while a quoted field runs on).

    A row that runs into the end of the file inside a quoted field (its quote is never closed), or that csv cannot
    read (a field past csv's size limit), is refused at the line it starts on, and reading starts again on the
    next line.  That costs one more pass at most: a line csv read inside a quoted field holds only doubled quotes,
    and read again from its start such a line closes every quoted field it opens.
    """
    rows: list[list[str]] = []
    numbers: list[int] = []
    refused: list[Problem] = []
    while lines:
        feed = _Feed(lines, more)
        reader = csv.reader(feed, delimiter=delimiter)
        begun = 0  # the lines read before the row being read
        try:
            for row in reader:
                if feed.ended:  # csv gave what it held when the file ended inside a quoted field
                    raise _Unclosed
                if row:  # a blank line is no row, as in csv.DictReader
                    rows.append(row)
                    numbers.append(line + reader.line_num)
                begun = reader.line_num
                if begun >= len(lines):
                    break
            break  # every row that starts in ``lines`` is read
        except (_Unclosed, csv.Error) as error:
            refused.append((line + begun + 1, _unreadable(error)))
        lines, line = feed.lines[begun + 1 :], line + begun + 1
    sources, targets, types, subtypes = ([row[i] if i < len(row) else "" for row in rows] for i in wanted)
    return _Chunk(numbers, _names(sources, False), _names(targets, False), types, subtypes, refused)


class _Unclosed(Exception):
    """A row ran into the end of the file inside a quoted field."""


class _Feed:
    """What ``csv.reader`` reads: ``lines``, then, while a quoted field runs on, the file's next lines, kept."""

    def __init__(self, lines: list[str], more: _Lines) -> None:
        self.lines = list(lines)  # and the file's lines read past them
        self.ended = False  # whether csv asked for a line past the end of the file
        self._more = more

    def __iter__(self) -> Iterator[str]:
        yield from self.lines
        while line := self._more.line():
            self.lines.append(line)
            yield line
        self.ended = True


def _unreadable(error: Exception) -> str:
    if isinstance(error, _Unclosed):
        return "unterminated quote opened on this line; the line is skipped, the lines after it are still read"
    return f"cannot read the row starting on this line: {error}; the line is skipped, the lines after it are still read"


def _json_chunks(lines: _Lines) -> Iterator[_Chunk]:
    for start, chunk_text in lines.chunks():
        numbers, refused = [], lines.refusals()
        columns: tuple[list[str], ...] = ([], [], [], [])
        for number, text in enumerate(_split_lines(chunk_text), start=start + 1):
            row = json_object(text) if text.strip() else None
            if isinstance(row, str):
                refused.append((number, row))
            elif row is not None:
                numbers.append(number)
                for column, name in zip(columns, COLUMNS, strict=True):
                    column.append(str(row.get(name) or ""))
        sources, targets, types, subtypes = columns
        yield _Chunk(numbers, _names(sources, False), _names(targets, False), types, subtypes, refused)


def _names(column: list[str], lowered: bool) -> list[str]:
    stripped = map(str.strip, column)
    return list(stripped if lowered else map(str.lower, stripped))


def _add(chunk: _Chunk, builder: EdgeListBuilder) -> list[Problem]:
    """Add the chunk's good rows to ``builder``; returns the bad ones (and the refused lines), in line order."""
    types, type_problems = _parsed(chunk.types, _edge_type)
    flags, flag_problems = _parsed(chunk.subtypes, _subtype_flags)
    named = _nonempty(chunk.sources) & _nonempty(chunk.targets)
    short = _short(chunk.sources) & _short(chunk.targets)
    good = named & short & (types >= 0) & (flags >= 0)
    sources, targets = chunk.sources, chunk.targets
    problems = list(chunk.refused)
    if not good.all():
        for i in np.flatnonzero(~good).tolist():
            if not named[i]:
                problem = "source and target are required"
            elif not short[i]:
                problem = f"a name is longer than {MAX_NAME_CHARS:,} characters"
            else:
                problem = type_problems.get(chunk.types[i]) or flag_problems[chunk.subtypes[i]]
            problems.append((int(chunk.lines[i]), problem))
        keep = good.tolist()
        sources, targets = list(itertools.compress(sources, keep)), list(itertools.compress(targets, keep))
        types, flags = types[good], flags[good]
    lines = chunk.lines if good.all() else np.asarray(chunk.lines)[good]
    builder.named_edges(sources, _KINDS[types, 0], targets, _KINDS[types, 1], types | flags << TYPE_BITS, lines)
    return sorted(problems)


def _parsed(values: list[str], parse: Callable[[str], int | str]) -> tuple[np.ndarray, dict[str, str]]:
    """``parse`` of each value, called once per distinct value: the codes (-1: refused), the refusals' messages."""
    results = {value: parse(value) for value in dict.fromkeys(values)}
    refused = {value: result for value, result in results.items() if isinstance(result, str)}
    codes = {value: -1 if value in refused else result for value, result in results.items()}
    return np.fromiter(map(codes.__getitem__, values), np.int32, len(values)), refused


def _nonempty(names: list[str]) -> np.ndarray:
    if "" not in names:
        return np.ones(len(names), dtype=bool)
    return np.fromiter(map(bool, names), bool, len(names))


def _short(names: list[str]) -> np.ndarray:
    """Whether each name is within ``MAX_NAME_CHARS``: a longer one would be a runaway value, not a name."""
    if not names or max(map(len, names)) <= MAX_NAME_CHARS:
        return np.ones(len(names), dtype=bool)
    return np.fromiter(map(len, names), np.int64, len(names)) <= MAX_NAME_CHARS


def _edge_type(text: str) -> int | str:
    name = (text or "flow").strip().lower()
    edge_type = TYPE_NAMES.get(name)
    return int(edge_type) if edge_type else f"unknown type {quoted(name)}; expected one of {', '.join(TYPE_NAMES)}"


def _subtype_flags(text: str) -> int | str:
    flags = 0
    for name in filter(None, (part.strip().upper() for part in re.split(r"[,;|]", text))):
        if name not in Subtype.__members__:
            return f"unknown subtype {quoted(name)}"
        flags |= Subtype[name].bit
    return flags


def _kinds() -> np.ndarray:
    table = np.zeros((max(EdgeType) + 1, 2), dtype=np.uint8)
    for edge_type, kinds in EDGE_KINDS.items():
        table[edge_type] = kinds
    return table


_KINDS = _kinds()  # edge type -> [source kind, target kind]
