"""Frontier-at-a-time breadth-first search over the store's CSR arrays.

Each hop expands the whole frontier and keeps the edges whose type is in the mask, recording every kept
edge, so the caller gets the exact sub-graph of the walk (cycles end because a node enters the frontier
once).  Two engines share the loop and hand over to each other hop by hop:

* plain Python over memoryviews, for narrow hops: a numpy hop costs some forty calls of fixed overhead,
  and a process that has not imported numpy yet would pay ~100 ms for it, as much as a Python walk over
  most of a million adjacency entries (skipped entries cost least: a slice's types are checked by one
  ``bytes.translate``, so a table's column edges in a table-level walk never reach the Python loop);
* numpy, for wide hops: gathers over the memory-mapped arrays, the type check through a lookup table
  (skipped when every type is followed), no np.unique (new nodes come out of a bitmap or a sort of the
  candidates, in id order either way), and kept edges written into arrays that become the walk's.

Both engines visit nodes in the same order (starts, then each hop's new nodes by id) and record edges in
the same order (by origin, then adjacency order), so a walk is the same whichever engine ran a hop.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from lineage_cli.model import EdgeType
from lineage_cli.store.layout import TYPE_MASK
from lineage_cli.store.reader import Store

if TYPE_CHECKING:
    import numpy as np

# A hop over more adjacency entries than this runs in numpy when numpy is loaded: below it the ~40 µs of
# fixed cost of a numpy hop outweigh Python's ~120 ns per entry (measured on the bench graph, 2 cores).
VECTORIZE_FROM_EDGES = 320
# A process without numpy imports it (~80-150 ms) for a hop this wide, or once its Python hops have walked
# this many entries in all (over every walk of the process): a cold table-level query stays pure Python,
# an all-edges walk over millions of entries, or a session of many queries, goes vectorized.
IMPORT_NUMPY_FROM_EDGES = 100_000
IMPORT_NUMPY_AFTER_EDGES = 300_000
# With every edge type in the mask the type check is skipped: stores hold no other types.
ALL_TYPES = sum(t.bit for t in EdgeType)


class _Field:
    """A ``Walk`` column stored as a list or a numpy array and read as a list (converted once)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    def __get__(self, walk: Walk | None, owner: type | None = None) -> Any:  # noqa: ANN401 - list[int]
        if walk is None:
            return self
        value = getattr(walk, self.slot)
        if not isinstance(value, list):
            value = value.tolist()
            setattr(walk, self.slot, value)
        return value

    def __set__(self, walk: Walk, value: Any) -> None:  # noqa: ANN401 - list or numpy array
        setattr(walk, self.slot, value)


class Walk:
    """Nodes reached (with their hop count) and edges traversed, in data-flow orientation.

    Each field reads as a ``list[int]``; a vectorized walk keeps numpy arrays and converts a field on its
    first access, and ``columns()`` hands the arrays over without making a Python int per item.
    """

    __slots__ = ("_nodes", "_hops", "_sources", "_targets", "_attributes")
    nodes = _Field()
    hops = _Field()
    sources = _Field()
    targets = _Field()
    attributes = _Field()  # packed type + subtype flags

    def __init__(
        self,
        nodes: Any = None,  # noqa: ANN401 - list[int] or numpy array, for each field
        hops: Any = None,  # noqa: ANN401
        sources: Any = None,  # noqa: ANN401
        targets: Any = None,  # noqa: ANN401
        attributes: Any = None,  # noqa: ANN401
    ) -> None:
        self._nodes = [] if nodes is None else nodes
        self._hops = [] if hops is None else hops
        self._sources = [] if sources is None else sources
        self._targets = [] if targets is None else targets
        self._attributes = [] if attributes is None else attributes

    @property
    def vectorized(self) -> bool:
        """True when the fields are numpy arrays (and ``columns()`` is free)."""
        return not isinstance(self._sources, list) or not isinstance(self._nodes, list)

    @property
    def node_count(self) -> int:
        return len(self._nodes)

    @property
    def edge_count(self) -> int:
        return len(self._sources)

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``nodes, hops, sources, targets, attributes`` as numpy arrays (imports numpy)."""
        import numpy as np

        dtypes = (np.int32, np.int32, np.int32, np.int32, np.uint16)
        values = (self._nodes, self._hops, self._sources, self._targets, self._attributes)
        return tuple(np.asarray(v, dtype=d) for v, d in zip(values, dtypes, strict=True))  # type: ignore[return-value]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Walk):
            return NotImplemented
        fields = ("nodes", "hops", "sources", "targets", "attributes")
        return all(getattr(self, f) == getattr(other, f) for f in fields)

    __hash__ = None  # type: ignore[assignment] - mutable, like the dataclass it replaces

    def __repr__(self) -> str:
        return f"Walk({self.node_count} nodes, {self.edge_count} edges)"


class _Adjacency:
    """One direction's CSR arrays, as memoryviews (Python hops) and, once needed, numpy arrays."""

    __slots__ = ("store", "prefix", "offsets", "neighbours", "attributes", "low", "arrays")

    def __init__(self, store: Store, direction: str) -> None:
        self.store, self.prefix = store, "fwd" if direction == "down" else "bwd"
        self.offsets = store.array(f"{self.prefix}_offsets")
        self.neighbours = store.array(f"{self.prefix}_node")
        self.attributes = store.array(f"{self.prefix}_attr")
        # the attributes as bytes: an entry's low byte (type and low subtype bits) at even positions,
        # little-endian being the only byte order the reader accepts
        self.low = self.attributes.cast("B")
        self.arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def numpy(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.arrays is None:
            names = ("offsets", "node", "attr")
            self.arrays = tuple(self.store.numpy_array(f"{self.prefix}_{n}") for n in names)  # type: ignore[assignment]
        return self.arrays  # type: ignore[return-value]

    @property
    def entries(self) -> int:
        return len(self.neighbours)


class _Edges:
    """The kept edges in walk orientation (origin, neighbour, attributes), hop after hop.

    Python lists until a hop runs in numpy; then arrays sized for every adjacency entry (the most a walk can
    keep: untouched pages cost nothing) that each hop fills in place, so nothing is concatenated at the end
    and a hop's temporaries go back to the allocator for the next hop.
    """

    __slots__ = ("origins", "neighbours", "attributes", "size")

    def __init__(self) -> None:
        self.origins: Any = []
        self.neighbours: Any = []
        self.attributes: Any = []
        self.size = 0

    @property
    def vectorized(self) -> bool:
        return not isinstance(self.origins, list)

    def vectorize(self, capacity: int) -> None:
        import numpy as np

        lists = (self.origins, self.neighbours, self.attributes)
        self.origins, self.neighbours = np.empty(capacity, np.int32), np.empty(capacity, np.int32)
        self.attributes = np.empty(capacity, np.uint16)
        self.size = 0
        self.append(*lists)

    def append(self, origins: Any, neighbours: Any, attributes: Any) -> None:  # noqa: ANN401 - lists or arrays
        if not self.vectorized:
            self.origins += origins
            self.neighbours += neighbours
            self.attributes += attributes
            return
        start, end = self.size, self.size + len(origins)
        self.origins[start:end] = origins
        self.neighbours[start:end] = neighbours
        self.attributes[start:end] = attributes
        self.size = end

    def columns(self) -> tuple[Any, Any, Any]:
        if not self.vectorized:
            return self.origins, self.neighbours, self.attributes
        size = self.size
        return self.origins[:size], self.neighbours[:size], self.attributes[:size]


class _Vectorized:
    """What the numpy hops of one walk share: the arrays, the visited bitmap, the type filter, a scratch bitmap."""

    __slots__ = ("offsets", "nodes", "attrs", "visited", "filter", "mark")

    def __init__(self, adjacency: _Adjacency, seen: bytearray, mask: int) -> None:
        import numpy as np

        self.offsets, self.nodes, self.attrs = adjacency.numpy()
        self.visited = np.frombuffer(seen, dtype=np.bool_)  # shares memory with ``seen``
        self.filter = None if mask & ALL_TYPES == ALL_TYPES else _type_filter(mask)
        self.mark: np.ndarray | None = None

    def bounds(self, frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Start and length of every frontier node's adjacency slice."""
        starts = self.offsets.take(frontier)
        return starts, self.offsets[1:].take(frontier) - starts


def bfs(store: Store, starts: list[int], direction: str, mask: int, max_hops: int | None = None) -> Walk:
    """Walk ``direction`` ("down" follows data flow, "up" goes against it) from ``starts``.

    ``mask`` has bit ``1 << t`` set for every edge type ``t`` to follow.
    """
    adjacency = _Adjacency(store, direction)
    seen = bytearray(store.node_count)
    frontier: Any = sorted(set(starts))  # list[int] in Python hops, a numpy array in numpy hops
    for node in frontier:
        seen[node] = 1
    levels: list[Any] = [frontier]
    edges = _Edges()
    vectorized: _Vectorized | None = None
    followed = None if mask & ALL_TYPES == ALL_TYPES else _followed(mask)
    hop = 0
    while len(frontier) and (max_hops is None or hop < max_hops):
        hop += 1
        if isinstance(frontier, list):
            bounds = None
            width = _width(adjacency.offsets, frontier)
            vectorize = _vectorize(width)
        else:
            bounds = vectorized.bounds(frontier)  # type: ignore[union-attr] - set by the hop that made it
            width = int(bounds[1].sum())
            vectorize = width > VECTORIZE_FROM_EDGES
        if vectorize:
            if vectorized is None:
                vectorized = _Vectorized(adjacency, seen, mask)
                edges.vectorize(adjacency.entries)
            frontier = _numpy_hop(vectorized, frontier, bounds, edges)
        else:
            frontier = _python_hop(adjacency, _as_list(frontier), followed, seen, edges)
            _PythonWork.entries += width
        levels.append(frontier)
    return _assemble(levels, edges, direction)


class _PythonWork:
    """Adjacency entries this process has walked in Python hops, all walks together."""

    entries = 0


def _vectorize(width: int) -> bool:
    """Whether a hop from a Python frontier runs in numpy."""
    if width <= VECTORIZE_FROM_EDGES:
        return False
    if "numpy" in sys.modules:
        return True
    return width > IMPORT_NUMPY_FROM_EDGES or _PythonWork.entries + width > IMPORT_NUMPY_AFTER_EDGES


def _width(offsets: memoryview, frontier: list[int]) -> int:
    """Adjacency entries the frontier's nodes have, in all."""
    return sum(offsets[n + 1] - offsets[n] for n in frontier)


def _followed(mask: int) -> bytes:
    """A ``bytes.translate`` table: 1 for the low byte of packed attributes whose type ``mask`` follows."""
    return bytes((mask >> (low & TYPE_MASK)) & 1 for low in range(256))


def _as_list(frontier: Any) -> list[int]:  # noqa: ANN401
    return frontier if isinstance(frontier, list) else frontier.tolist()


def _python_hop(
    adjacency: _Adjacency, frontier: list[int], followed: bytes | None, seen: bytearray, edges: _Edges
) -> list[int]:
    """One hop in plain Python.  ``followed`` maps an attributes value's low byte to 1 for a followed type
    (None: every type is): translating a slice's low bytes through it finds the kept entries in C, so a
    slice of skipped entries (a table's column edges in a table-level walk) costs no Python loop."""
    offsets, nodes, attrs, low_bytes = adjacency.offsets, adjacency.neighbours, adjacency.attributes, adjacency.low
    origins: list[int] = []
    neighbours: list[int] = []
    attributes: list[int] = []
    fresh: list[int] = []
    for origin in frontier:
        start, end = offsets[origin], offsets[origin + 1]
        if start == end:
            continue
        if followed is not None:
            kept = low_bytes[2 * start : 2 * end : 2].tobytes().translate(followed)
            if 0 in kept:  # some entries are skipped: visit the kept ones only
                position = kept.find(1)
                while position >= 0:
                    index = start + position
                    neighbour = nodes[index]
                    origins.append(origin)
                    neighbours.append(neighbour)
                    attributes.append(attrs[index])
                    if not seen[neighbour]:
                        seen[neighbour] = 1
                        fresh.append(neighbour)
                    position = kept.find(1, position + 1)
                continue
        reached = nodes[start:end].tolist()  # every entry kept: whole slices, in C
        neighbours += reached
        attributes += attrs[start:end].tolist()
        origins += [origin] * len(reached)
        for neighbour in reached:
            if not seen[neighbour]:
                seen[neighbour] = 1
                fresh.append(neighbour)
    fresh.sort()
    edges.append(origins, neighbours, attributes)
    return fresh


def _numpy_hop(
    state: _Vectorized,
    frontier: Any,  # noqa: ANN401 - list[int] or numpy array
    bounds: tuple[np.ndarray, np.ndarray] | None,
    edges: _Edges,
) -> np.ndarray:
    import numpy as np

    frontier = np.asarray(frontier, dtype=np.int32)
    starts, counts = state.bounds(frontier) if bounds is None else bounds
    index = _slices(frontier, starts, counts)
    origin = np.repeat(frontier, counts)
    attributes = state.attrs.take(index)
    if state.filter is not None:
        # Positions, then gathers: cheaper than boolean masks when few entries are kept.
        kept = np.flatnonzero(state.filter.take(attributes))
        index, origin, attributes = index.take(kept), origin.take(kept), attributes.take(kept)
    neighbour = state.nodes.take(index)
    edges.append(origin, neighbour, attributes)
    return _fresh(state, neighbour)


def _slices(frontier: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Indices of every entry of the frontier's adjacency slices, in order.

    Nodes with consecutive ids have adjacent slices, and they often enter a frontier together (the columns
    of a table); np.repeat costs per slice, so a run of them expands as one slice.
    """
    import numpy as np

    breaks = np.flatnonzero(frontier[1:] - frontier[:-1] != 1)
    if breaks.size < frontier.size >> 1:
        first = np.empty(breaks.size + 1, dtype=np.int64)
        first[0] = 0
        np.add(breaks, 1, out=first[1:])
        starts, counts = starts.take(first), np.add.reduceat(counts, first)
    total = int(counts.sum())
    # index = position in the output + (slice start - where the slice begins in the output)
    shift = starts - (np.cumsum(counts) - counts)
    index = np.arange(total, dtype=np.int64)
    index += np.repeat(shift, counts)
    return index


_FILTERS: dict[int, Any] = {}


def _type_filter(mask: int) -> np.ndarray:
    """A lookup table over packed attributes (type in the low bits): True where the type is in ``mask``."""
    table = _FILTERS.get(mask)
    if table is None:
        import numpy as np

        table = _FILTERS[mask] = ((mask >> (np.arange(1 << 16) & TYPE_MASK)) & 1).astype(np.bool_)
    return table


def _fresh(state: _Vectorized, neighbour: np.ndarray) -> np.ndarray:
    """The not yet visited nodes among ``neighbour``, each once, ascending; marks them visited."""
    import numpy as np

    visited = state.visited
    if neighbour.size > visited.size >> 3:
        # Many candidates: a bitmap dedupes them without sorting, and reads out in id order.
        if state.mark is None:
            state.mark = np.zeros(visited.size, dtype=np.bool_)
        mark = state.mark
        mark[neighbour] = True
        np.greater(mark, visited, out=mark)
        fresh = np.flatnonzero(mark).astype(np.int32)
        visited |= mark
        mark[fresh] = False  # every set bit is a fresh node now: the bitmap is clear again
        return fresh
    # np.compress: a boolean index does the same, slower
    candidates = np.compress(np.logical_not(visited.take(neighbour)), neighbour)
    candidates.sort()
    if candidates.size > 1:
        first = np.empty(candidates.size, dtype=np.bool_)
        first[0] = True
        np.not_equal(candidates[1:], candidates[:-1], out=first[1:])
        candidates = np.compress(first, candidates)
    visited[candidates] = True
    return candidates


def _assemble(levels: list[Any], edges: _Edges, direction: str) -> Walk:
    """The walk from its levels and edges: numpy arrays if any hop ran vectorized, else lists."""
    if all(isinstance(level, list) for level in levels):
        nodes: Any = [node for level in levels for node in level]
        hops: Any = [hop for hop, level in enumerate(levels) for _ in level]
    else:
        import numpy as np

        nodes = np.concatenate([np.asarray(level, dtype=np.int32) for level in levels])
        hops = np.repeat(np.arange(len(levels), dtype=np.int32), [len(level) for level in levels])
    origins, neighbours, attributes = edges.columns()
    if direction == "down":
        return Walk(nodes, hops, origins, neighbours, attributes)
    return Walk(nodes, hops, neighbours, origins, attributes)
