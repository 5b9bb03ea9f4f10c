"""The harvest cache folder: the analyses of the last harvest's units, and that harvest as a whole.

Three files, whatever the number of units, each written beside its place and renamed over it:

- ``units``: each unit's analysis in each phase, keyed (in ``batch.py``) by everything it depends on,
  so changing one file re-parses that file.  It holds what the last harvest used and nothing else.
- ``harvest``: the memo of the last harvest -- counts, issues, modules, defaults, the graph's size.
  Cached analyses still have to be assembled into a graph, which costs as much as reading them; so,
  like make with nothing to rebuild, a harvest whose inputs are all unchanged is not assembled again:
  ``HarvestMemo`` recalls the last harvest while its key is this plan's.
- ``graph``: that harvest's graph as the store's arrays, which the writer takes as they are.  It is
  read only when asked for: a re-run whose store is already up to date (``run.py``) reads no graph
  and imports no numpy.

The folder may come from anywhere (CI restores it with ``actions/cache``), so it holds data only,
and nothing read from it is trusted: each file is a header line -- format, tool version, file name,
the key of the harvest that wrote it, the length of its text -- then that text, zlib-compressed
JSON, checked field by field as it is read (``outcome.py`` for the units).  Anything unexpected
(another version, bad JSON, other types, truncation, a pickle) is a cache miss, noted at debug
level only; a file of any other name is removed.  A harvest is recalled only while all three files
name its key: the units are written first, then the graph, then the summary, so a harvest stopped
half way leaves the previous files, or files of two harvests that name different keys.  A file
that cannot be written (disk full, a read-only folder) leaves the previous one and no temporary
file; the harvest goes on, and ``FileCache.errors`` says why the cache was not written.

The memo key covers every input of the assembly: each unit's name, path, content digest, options
and manifest step; the explicit schema; the plan's bare steps, dbt datasets and issues; the tool
version and the store's format version.  It does not cover the number of jobs, which changes
nothing.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import operator
import os
import re
import tempfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from lineage_cli import __version__
from lineage_cli.harvest.assemble import Harvest
from lineage_cli.harvest.inputs.plan import Plan
from lineage_cli.harvest.outcome import (
    FileOutcome,
    expect,
    issue_data,
    issues_from_data,
    only,
    outcome_data,
    outcome_from_data,
    string_map,
)
from lineage_cli.heap import return_free_heap
from lineage_cli.model import EdgeType, Graph, Issue, NodeFlag, NodeKind
from lineage_cli.store.layout import FORMAT_VERSION, TYPE_MASK

if TYPE_CHECKING:
    from lineage_cli.store.arrays import ColumnExpressions, GraphArrays, StatementTexts

_log = logging.getLogger(__name__)

UNITS, SUMMARY, GRAPH = "units", "harvest", "graph"
_FILES = frozenset((UNITS, SUMMARY, GRAPH))
# Each file's first line: ``lineage-cache FORMAT VERSION NAME KEY LENGTH``.  A change to what a file holds bumps
# the format; the tool's version is there too, as what the units' analyses hold changes with it.
# 2: a statement read approximately; 3: a statement's target columns; 4: their expressions (units and graph);
# 5: a statement's SQL text (units and graph)
_MAGIC, _FORMAT = "lineage-cache", 5
_HEADER_LIMIT = 256  # bytes: a longer first line is no header of ours
_KEY = re.compile(r"[0-9a-f]{64}")
# What reading JSON data back raises: a CacheDataError or JSONDecodeError (ValueErrors), or nesting too deep.
_UNREADABLE = (ValueError, RecursionError)


class FileCache:
    """The cache folder: the units' analyses, read on first use, and the files of the memo.

    ``get`` and ``put`` serve and collect the analyses of one harvest; ``save_units`` writes those it used.
    The first file that cannot be written ends the writing: ``errors`` says why.
    """

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.hits = 0
        self.errors: list[str] = []
        self._stored: dict[str, str] | None = None  # unit key -> its analysis as the units file holds it (JSON text)
        # the units file's next text, compressed as each analysis this harvest reads or makes is added to it, once
        self._used, self._used_keys = _Deflated(), set[str]()

    def get(self, key: str, count: bool = True) -> FileOutcome | None:
        """The cached analysis, or None; ``count`` says whether a hit counts as a file served from cache."""
        if self.directory is None:
            return None
        text = self._units().get(key)
        if text is None:
            return None
        try:
            outcome = outcome_from_data(json.loads(text))
        except _UNREADABLE as error:
            _log.debug("harvest cache: entry %s ignored: %s", key, error)
            return None
        self._use(key, text.encode())
        self.hits += count
        return outcome

    def put(self, key: str, outcome: FileOutcome) -> None:
        if self.directory is not None:
            self._use(key, _json(outcome_data(outcome)))

    def save_units(self, harvest: str) -> None:
        """Write the analyses this harvest used, and only those, under the ``harvest``'s key."""
        self.write(UNITS, harvest, self._used)

    def _use(self, key: str, text: bytes) -> None:
        if key not in self._used_keys:  # two units of one content and options share an analysis, and an entry
            self._used_keys.add(key)
            self._used.add(b"%s %s\n" % (key.encode(), text))

    def holds(self, name: str, key: str) -> bool:
        """Whether the file ``name`` was written by the harvest of ``key``: its header alone is read."""
        if self.directory is None:
            return False
        try:
            with open(self.directory / name, "rb") as file:
                return _header(file.readline(_HEADER_LIMIT), name)[0] == key
        except (OSError, ValueError):
            return False

    def read(self, name: str, key: str) -> Any:
        """The JSON data of the file ``name`` when the harvest of ``key`` wrote it, else None."""
        loaded = _read(self.directory / name, name) if self.directory is not None else None
        if loaded is None or loaded[0] != key:
            return None
        try:
            return json.loads(loaded[1])
        except _UNREADABLE as error:
            _log.debug("harvest cache: %s ignored: %s", name, error)
            return None

    def write(self, name: str, key: str, text: bytes | _Deflated) -> None:
        """Replace the file ``name`` with ``text`` (compressed already, or not) under ``key``, unless an earlier write
        failed."""
        if self.directory is None or self.errors:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            _replace(self.directory / name, name, key, text)
        except OSError as error:
            self.errors.append(f"cannot write the harvest cache {self.directory}: {error.strerror or error}")

    def prune(self) -> None:
        """Remove every file but the cache's own: temporary files of a harvest that was killed, the entries
        of older versions, anything planted."""
        if self.directory is None:
            return
        try:
            names = set(os.listdir(self.directory))
        except OSError:
            return
        for name in names - _FILES:
            with contextlib.suppress(OSError):  # a folder, or a read-only one: nothing is read from it anyway
                (self.directory / name).unlink()

    def _units(self) -> dict[str, str]:
        if self._stored is None:
            loaded = _read(self.directory / UNITS, UNITS) if self.directory is not None else None
            self._stored = _unit_entries(loaded[1]) if loaded is not None else {}
        return self._stored


def _unit_entries(text: bytes) -> dict[str, str]:
    """The units file's entries, a line each: ``KEY JSON``.  Any line of another shape makes it a miss as a whole."""
    try:
        lines = text.decode("ascii").split("\n")  # the JSON is ASCII, strings escaped: no newline within a line
    except UnicodeDecodeError:
        return {}
    entries = {}
    for line in lines[:-1]:
        key, _, value = line.partition(" ")
        if not _KEY.fullmatch(key):
            _log.debug("harvest cache: %s ignored: a line of another shape", UNITS)
            return {}
        entries[key] = value
    return entries if lines[-1] == "" else {}


def _read(path: Path, name: str) -> tuple[str, bytes] | None:
    """The key and the text of a cache file; None when it is missing, foreign, of another version or damaged."""
    try:
        with open(path, "rb") as file:
            key, length = _header(file.readline(_HEADER_LIMIT), name)
            inflater = zlib.decompressobj()
            text = inflater.decompress(file.read(), length + 1)  # never more than the header announced (and a byte)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, zlib.error) as error:
        _log.debug("harvest cache: %s ignored: %s", name, error)
        return None
    if len(text) != length or not inflater.eof or inflater.unused_data:
        _log.debug("harvest cache: %s ignored: not the length its header says", name)
        return None
    return key, text


def _header(line: bytes, name: str) -> tuple[str, int]:
    """The key and the text's length a file's first line gives; a ValueError unless it is this version's header
    of the file ``name``."""
    parts = line.decode("ascii").split(" ")
    if len(parts) != 6 or parts[:4] != [_MAGIC, str(_FORMAT), __version__, name] or not line.endswith(b"\n"):
        raise ValueError("no header of this version")
    key, length = parts[4], parts[5].rstrip("\n")
    if not _KEY.fullmatch(key) or not length.isdigit():
        raise ValueError("a header of another shape")
    return key, int(length)


def _replace(path: Path, name: str, key: str, text: bytes | _Deflated) -> None:
    """Write the file beside ``path`` and rename it over ``path``: the old file stays until the new one is
    complete, and a failed write leaves no temporary file."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp.")
    try:
        with os.fdopen(handle, "wb") as out:
            _write_entry(out, name, key, text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _write_entry(out: IO[bytes], name: str, key: str, text: bytes | _Deflated) -> None:
    body = text if isinstance(text, _Deflated) else _Deflated.of([text])
    out.write(f"{_MAGIC} {_FORMAT} {__version__} {name} {key} {body.length}\n".encode())
    out.writelines(body.finish())


class _Deflated:
    """A cache file's text, compressed as it is added, and its length: the text of a harvest's units or graph is
    tens of MB at a few thousand tables, and never needs to be whole in memory."""

    def __init__(self) -> None:
        self._compressor = zlib.compressobj(1)  # the fastest level: JSON of names shrinks well enough at it
        self._parts: list[bytes] = []
        self.length = 0

    @classmethod
    def of(cls, parts: Iterable[bytes]) -> _Deflated:
        deflated = cls()
        for part in parts:
            deflated.add(part)
        return deflated

    def add(self, text: bytes) -> None:
        self.length += len(text)
        if compressed := self._compressor.compress(text):
            self._parts.append(compressed)

    def finish(self) -> list[bytes]:
        """The compressed text, whole: once only (what is added after is lost)."""
        return [*self._parts, self._compressor.flush()]


def _json(data: object) -> bytes:
    """Compact JSON, ASCII: non-ASCII characters and the lone surrogates of undecodable file names are escaped."""
    return json.dumps(data, separators=(",", ":")).encode()


_SLICE = 4096  # a long list's items are written this many at a time


def _json_parts(data: object) -> Iterator[bytes]:
    """``_json(data)`` in parts: objects and lists that hold containers part by part, long lists a slice at a time,
    so that no part is as long as a graph's names or statement texts together."""
    if type(data) is dict:
        yield b"{"
        for number, (key, value) in enumerate(data.items()):
            yield b"%s%s:" % (b"," if number else b"", _json(key))
            yield from _json_parts(value)
        yield b"}"
    elif type(data) is list and any(type(item) in (list, dict) for item in data):
        yield b"["
        for number, item in enumerate(data):
            if number:
                yield b","
            yield from _json_parts(item)
        yield b"]"
    elif type(data) is list and len(data) > _SLICE:
        yield b"["
        for start in range(0, len(data), _SLICE):
            yield (b"," if start else b"") + _json(data[start : start + _SLICE])[1:-1]
        yield b"]"
    else:
        yield _json(data)


@dataclass(slots=True)
class _Memo:
    """A harvest as ``HarvestMemo`` keeps it, but for its graph: what ``Harvest`` holds besides its timing and cache
    hits, and the size of its graph."""

    files: int
    statements: int
    lineage_statements: int
    approximate_statements: int
    issues: list[Issue]
    statement_types: Counter[str]
    defaults: dict[str, str]
    modules: dict[str, dict[str, object]]
    nodes: int
    edges: int


_COUNTS = ("files", "statements", "lineage_statements", "approximate_statements", "nodes", "edges")
_MEMO_FIELDS = frozenset((*_COUNTS, "issues", "statement_types", "defaults", "modules"))
_FACT_TYPES = (str, int, float, bool, type(None))  # a module's facts: what a manifest entry says (rows, frequency, ...)


class HarvestMemo:
    """The last harvest with this plan's inputs, if it is in the cache; ``remember`` keeps a new one there."""

    def __init__(self, cache: FileCache, plan: Plan, digests: Sequence[str]) -> None:
        self.cache, self.plan = cache, plan
        self.key = _memo_key(plan, digests) if cache.directory is not None else None

    def recall(self, rebuild: Callable[[], Graph]) -> Harvest | None:
        """The remembered harvest, or None when the inputs changed or a file of it is gone or unreadable.

        Its graph is read when first asked for; ``rebuild`` makes it again should its file be unreadable by then.
        """
        if self.key is None or not all(self.cache.holds(name, self.key) for name in (UNITS, GRAPH)):
            return None
        data = self.cache.read(SUMMARY, self.key)
        try:
            memo = _memo_from_data(data) if data is not None else None
        except _UNREADABLE as error:
            _log.debug("harvest cache: %s ignored: %s", SUMMARY, error)
            memo = None
        if memo is None:
            return None
        result = Harvest(
            files=memo.files,
            statements=memo.statements,
            lineage_statements=memo.lineage_statements,
            approximate_statements=memo.approximate_statements,
            issues=memo.issues,
            statement_types=memo.statement_types,
            defaults=memo.defaults,
            modules=memo.modules,
            key=self.key,
            recalled=_StoredGraph(self.cache, self.key, memo.nodes, memo.edges, rebuild),
        )
        # The units file is this harvest's, so a harvest that read it would have counted each unit a hit.
        result.cache_hits = len(self.plan.units)
        return result

    def remember(self, result: Harvest) -> None:
        """Keep ``result`` under this plan's key, with its graph's arrays (which ``result`` takes on too)."""
        if self.key is None:
            return
        from lineage_cli.store.arrays import from_graph  # numpy: only a harvest that writes a store pays for it

        self.cache.save_units(self.key)  # the units, the graph, then the summary: see the module's docstring
        arrays = from_graph(result.graph)
        result.arrays, result.key = arrays, self.key  # the graph of dicts let go, and its memory given back:
        return_free_heap()  # the cache and the store are written from the arrays
        self.cache.write(GRAPH, self.key, _Deflated.of(_json_parts(_arrays_data(arrays))))
        self.cache.write(SUMMARY, self.key, _json(_memo_data(result, arrays)))


class _StoredGraph:
    """A recalled harvest's graph file, read when first asked for: a store that is up to date needs none of it,
    and its arrays would import numpy."""

    def __init__(self, cache: FileCache, key: str, nodes: int, edges: int, rebuild: Callable[[], Graph]) -> None:
        self.nodes, self.edges = nodes, edges
        self._cache, self._key, self._rebuild = cache, key, rebuild
        self._arrays: GraphArrays | None = None

    def graph(self) -> Graph:
        from lineage_cli.store.arrays import to_graph

        return to_graph(self.arrays())

    def arrays(self) -> GraphArrays:
        if self._arrays is None:
            self._arrays = self._read() or self._made_again()
        return self._arrays

    def _read(self) -> GraphArrays | None:
        data = self._cache.read(GRAPH, self._key)
        try:
            return _arrays_from_data(data, self.nodes, self.edges) if data is not None else None
        except _UNREADABLE as error:
            _log.debug("harvest cache: %s ignored: %s", GRAPH, error)
            return None

    def _made_again(self) -> GraphArrays:
        """The graph made again from the units, and kept again: its file was damaged since the recall found it."""
        from lineage_cli.store.arrays import from_graph

        arrays = from_graph(self._rebuild())
        self._cache.write(GRAPH, self._key, _Deflated.of(_json_parts(_arrays_data(arrays))))
        return arrays


def _memo_data(result: Harvest, arrays: GraphArrays) -> dict[str, object]:
    return {
        "files": result.files,
        "statements": result.statements,
        "lineage_statements": result.lineage_statements,
        "approximate_statements": result.approximate_statements,
        "issues": [issue_data(issue) for issue in result.issues],
        "statement_types": dict(result.statement_types),
        "defaults": result.defaults,
        "modules": result.modules,
        "nodes": arrays.node_count,
        "edges": arrays.edge_count,
    }


def _memo_from_data(data: Any) -> _Memo:
    expect(type(data) is dict and data.keys() == _MEMO_FIELDS, "a harvest summary")
    expect(all(type(data[count]) is int for count in _COUNTS), "a harvest's counts")
    types, modules = data["statement_types"], data["modules"]
    expect(type(types) is dict and only(types.values(), int), "a harvest's statement types")
    expect(type(modules) is dict and all(type(facts) is dict for facts in modules.values()), "a harvest's modules")
    expect(all(only(facts.values(), *_FACT_TYPES) for facts in modules.values()), "a module's facts")
    return _Memo(
        data["files"],
        data["statements"],
        data["lineage_statements"],
        data["approximate_statements"],
        issues_from_data(data["issues"]),
        Counter(types),
        string_map(data["defaults"]),
        modules,
        data["nodes"],
        data["edges"],
    )


# The graph's arrays as its file keeps them: the bytes of each, base64 in the JSON, in the dtype the reader
# expects, counted in nodes or in edges.
_NODE_ARRAYS = {"kinds": "u1", "containers": "<i4", "node_file": "<i4", "node_line": "<i4", "flags": "u1"}
_EDGE_ARRAYS = {"sources": "<i4", "targets": "<i4", "attributes": "<u2", "statements": "<i4"}
_GRAPH_FIELDS = frozenset(("names", "files", "expressions", "sql", *_NODE_ARRAYS, *_EDGE_ARRAYS))


def _arrays_data(arrays: GraphArrays) -> dict[str, object]:
    data: dict[str, object] = {"names": arrays.names, "files": arrays.files}
    for name, dtype in (_NODE_ARRAYS | _EDGE_ARRAYS).items():
        data[name] = _base64(getattr(arrays, name), dtype)
    expressions = arrays.expressions
    data["expressions"] = [_base64(expressions.columns, "<i4"), _base64(expressions.statements, "<i4")]
    data["expressions"].append(list(expressions.texts))
    sql = arrays.sql
    data["sql"] = [_base64(sql.statements, "<i4"), _base64(sql.dialects, "u1"), sql.names, list(sql.texts)]
    return data


def _base64(array: Any, dtype: str) -> str:  # noqa: ANN401 - a numpy array
    return base64.b64encode(array.astype(dtype, copy=False).tobytes()).decode()


def _arrays_from_data(data: Any, nodes: int, edges: int) -> GraphArrays:
    """The arrays ``_arrays_data`` kept, checked as the writer needs them: as many as the summary says, node
    names sorted and distinct (a node's id is its rank), every index within its table, known kinds and types."""
    import numpy as np

    from lineage_cli.store.arrays import GraphArrays

    expect(type(data) is dict and data.keys() == _GRAPH_FIELDS, "a graph")
    names, files = data["names"], data["files"]
    expect(type(names) is list and len(names) == nodes and only(names, str), "a graph's node names")
    expect(all(map(operator.lt, names, names[1:])), "a graph's node order")
    expect(type(files) is list and only(files, str), "a graph's files")
    arrays = {name: _array(data[name], dtype, nodes) for name, dtype in _NODE_ARRAYS.items()}
    arrays |= {name: _array(data[name], dtype, edges) for name, dtype in _EDGE_ARRAYS.items()}
    expect(bool(np.isin(arrays["kinds"], [kind.value for kind in NodeKind]).all()), "a node kind")
    expect(bool(np.isin(arrays["attributes"] & TYPE_MASK, [kind.value for kind in EdgeType]).all()), "an edge type")
    expect(not (arrays["flags"] & (0xFF ^ sum(flag.bit for flag in NodeFlag))).any(), "a node flag")
    for name, low, high in (
        ("containers", -1, nodes),
        ("node_file", -1, len(files)),
        ("sources", 0, nodes),
        ("targets", 0, nodes),
        ("statements", -1, nodes),
    ):
        values = arrays[name]
        expect(values.size == 0 or (int(values.min()) >= low and int(values.max()) < high), f"a graph's {name}")
    return GraphArrays(
        names=names,
        files=files,
        expressions=_expressions_from_data(data["expressions"], nodes),
        sql=_statement_texts_from_data(data["sql"], nodes),
        **arrays,
    )


def _expressions_from_data(data: Any, nodes: int) -> ColumnExpressions:  # noqa: ANN401 - whatever the file held
    """The column expressions ``_arrays_data`` kept: nodes of the graph, in (column, statement) order, each once."""
    from lineage_cli.store.arrays import ColumnExpressions

    expect(type(data) is list and len(data) == 3 and type(data[2]) is list and only(data[2], str), "expressions")
    columns, statements = (_array(text, "<i4", len(data[2])) for text in data[:2])
    keys = columns.astype("i8") << 32 | statements
    expect(columns.size == 0 or (int(columns.min()) >= 0 and int(columns.max()) < nodes), "an expression's column")
    expect(statements.size == 0 or (int(statements.min()) >= 0 and int(statements.max()) < nodes), "a statement")
    expect(bool((keys[1:] > keys[:-1]).all()), "the expressions' order")
    return ColumnExpressions(columns, statements, data[2])


def _statement_texts_from_data(data: Any, nodes: int) -> StatementTexts:  # noqa: ANN401 - whatever the file held
    """The statement texts ``_arrays_data`` kept: nodes of the graph, in order, each once, each of a dialect named."""
    from lineage_cli.store.arrays import StatementTexts

    expect(type(data) is list and len(data) == 4 and all(type(part) is list for part in data[2:]), "statement texts")
    names, texts = data[2], data[3]
    expect(only(names, str) and only(texts, str), "statement texts")
    statements, dialects = _array(data[0], "<i4", len(texts)), _array(data[1], "u1", len(texts))
    expect(statements.size == 0 or (int(statements.min()) >= 0 and int(statements.max()) < nodes), "a statement")
    expect(bool((statements[1:] > statements[:-1]).all()), "the statement texts' order")
    expect(dialects.size == 0 or int(dialects.max()) < len(names), "a statement's dialect")
    return StatementTexts(statements, dialects, names, texts)


def _array(text: Any, dtype: str, length: int) -> Any:
    import numpy as np

    expect(type(text) is str, "an array")
    # Not validated: a stray character is dropped, and the length is checked.  A bytearray, not the bytes: the
    # array is writable, like one the harvest made.
    array = np.frombuffer(bytearray(base64.b64decode(text)), dtype=dtype)
    expect(array.size == length, "an array's length")
    return array


def _memo_key(plan: Plan, digests: Sequence[str]) -> str:
    """A digest of every input the assembled harvest depends on (``repr`` of frozen records is stable)."""
    material = hashlib.sha256()
    schema = plan.schema.fingerprint() if plan.schema is not None else ""
    # The store's format version too: a memo keeps its graph as the arrays the writer takes as they are.
    # A query log's runs too: the same distinct queries run more often give the same graph, other facts.
    facts = (FORMAT_VERSION, __version__, schema, plan.bare_steps, plan.datasets, plan.issues, plan.runs)
    material.update(repr(facts).encode())
    for unit, digest in zip(plan.units, digests, strict=True):
        material.update(repr((unit.display, unit.path, digest, unit.options.fingerprint(), unit.step)).encode())
    return material.hexdigest()
