"""Frontier-at-a-time breadth-first search over the store's CSR arrays.

Each hop expands the whole frontier and keeps the edges whose type is in the mask, recording every kept
edge, so the caller gets the exact sub-graph of the walk (cycles end because a node enters the frontier
once).  Two engines share the loop and hand over to each other hop by hop:

* plain Python over memoryviews, for narrow hops: a numpy hop costs some forty calls of fixed overhead,
  and a process that has not imported numpy yet would pay ~100 ms for it, as much as a Python walk over
  most of a million adjacency entries (skipped entries cost least: a range's types are checked by one
  ``bytes.translate``, so entries the mask skips never reach the Python loop);
* numpy, for wide hops: gathers over the memory-mapped arrays, the type check through a lookup table
  (skipped when every entry read is followed), no np.unique (new nodes come out of a bitmap or a sort of the
  candidates, in id order either way), and kept edges written into arrays that become the walk's.

Both engines visit nodes in the same order (starts, then each hop's new nodes by id) and record edges in
the same order (by origin, then adjacency order), so a walk is the same whichever engine ran a hop.

Every adjacency slice holds its table-level edges (READ, WRITE, FLOW) first and the store counts them per
node (``*_split``): a walk whose mask lies within one of the two groups reads that group's part of each
slice only, and skips the type check when it follows every type of the group (a table lineage walk then
keeps every entry it reads: its hops are whole-slice copies).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lineage_cli.model import EdgeType
from lineage_cli.store.layout import TABLE_LEVEL_MASK, TYPE_MASK
from lineage_cli.store.reader import Store

if TYPE_CHECKING:
    import numpy as np

# A hop over more adjacency entries than this runs in numpy when numpy is loaded: a narrow numpy hop costs
# some 20 µs (about twenty calls of ~1 µs), a Python hop about 0.5 µs per frontier node (measured on the
# bench graph, 2 cores: walk times are flat from 10 to 150 and grow past 300).
VECTORIZE_FROM_EDGES = 32
# A process without numpy imports it (~80-150 ms) for a hop this wide, or once its Python hops have walked
# this many entries in all (over every walk of the process): a cold table-level query stays pure Python,
# an all-edges walk over millions of entries, or a session of many queries, goes vectorized.
IMPORT_NUMPY_FROM_EDGES = 100_000
IMPORT_NUMPY_AFTER_EDGES = 300_000
# Kept edges go to arrays of at least this many entries at first (grown eightfold when full): under
# numpy's 4 MB huge-page threshold, and enough for most table-level walks.
INITIAL_EDGES = 1 << 16
# With every edge type in the mask the type check is skipped: stores hold no other types.
ALL_TYPES = sum(t.bit for t in EdgeType)
OTHER_TYPES = ALL_TYPES & ~TABLE_LEVEL_MASK
# The part of each adjacency slice a walk reads: all of it, the table-level head, or the tail after it.
WHOLE, HEAD, TAIL = 0, 1, 2


def slice_part(mask: int) -> tuple[int, bool]:
    """The part of every slice a walk following ``mask`` reads, and whether it keeps every entry there.

    >>> slice_part(EdgeType.READ.bit | EdgeType.WRITE.bit | EdgeType.FLOW.bit), slice_part(EdgeType.FLOW.bit)
    ((1, True), (1, False))
    >>> slice_part(EdgeType.PROJECTION.bit), slice_part(ALL_TYPES), slice_part(EdgeType.READ.bit | 1 << 4)
    ((2, False), (0, True), (0, False))
    """
    mask &= ALL_TYPES
    if not mask & OTHER_TYPES:
        return HEAD, mask == TABLE_LEVEL_MASK
    if not mask & TABLE_LEVEL_MASK:
        return TAIL, mask == OTHER_TYPES
    return WHOLE, mask == ALL_TYPES


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

    __slots__ = ("_nodes", "_hops", "_sources", "_targets", "_attributes", "ordered")
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
        ordered: bool = False,
    ) -> None:
        self._nodes = [] if nodes is None else nodes
        self._hops = [] if hops is None else hops
        self._sources = [] if sources is None else sources
        self._targets = [] if targets is None else targets
        self._attributes = [] if attributes is None else attributes
        self.ordered = ordered  # edges distinct and sorted by (source, target), as folding leaves them

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

        # attributes: the store's u16, or wider in an answer that marks approximate edges (``shape.fold``)
        attributes = self._attributes
        wide = np.uint32 if isinstance(attributes, list) and max(attributes, default=0) > 0xFFFF else np.uint16
        dtypes = (np.int32, np.int32, np.int32, np.int32, wide if isinstance(attributes, list) else None)
        values = (self._nodes, self._hops, self._sources, self._targets, attributes)
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

    __slots__ = ("store", "prefix", "part", "offsets", "split", "neighbours", "attributes", "low", "arrays")

    def __init__(self, store: Store, direction: str, part: int) -> None:
        self.store, self.prefix, self.part = store, "fwd" if direction == "down" else "bwd", part
        self.offsets = store.array(f"{self.prefix}_offsets")
        self.split = store.array(f"{self.prefix}_split")  # table-level entries at the start of each slice
        self.neighbours = store.array(f"{self.prefix}_node")
        self.attributes = store.array(f"{self.prefix}_attr")
        # the attributes as bytes: an entry's low byte (type and low subtype bits) at even positions,
        # little-endian being the only byte order the reader accepts
        self.low = self.attributes.cast("B")
        self.arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def numpy(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self.arrays is None:
            names = ("offsets", "split", "node", "attr")
            self.arrays = tuple(self.store.numpy_array(f"{self.prefix}_{n}") for n in names)  # type: ignore[assignment]
        return self.arrays  # type: ignore[return-value]

    def width(self, frontier: list[int]) -> int:
        """Adjacency entries the walk reads for the frontier's nodes, in all."""
        offsets, heads = self.offsets, sum(map(self.split.__getitem__, frontier))
        if self.part == HEAD:
            return heads
        whole = sum(offsets[n + 1] - offsets[n] for n in frontier)
        return whole - heads if self.part == TAIL else whole


class _Edges:
    """The kept edges in walk orientation (origin, neighbour, attributes), hop after hop.

    Python lists until a hop runs in numpy; then arrays that each hop fills in place (a hop's temporaries go
    back to the allocator for the next hop), grown eightfold when full.  They start small: numpy asks for huge
    pages for arrays of 4 MB and more, and a huge page is zeroed whole on its first touch, which would cost
    a narrow walk more than its hops.
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

    def vectorize(self, width: int) -> None:
        """Switch to arrays, sized for the lists so far and ``width`` more entries several times over."""
        import numpy as np

        lists = (self.origins, self.neighbours, self.attributes)
        capacity = max(INITIAL_EDGES, len(self.origins) + 8 * width)
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
        if end > self.origins.size:
            self._grow(max(end, 8 * self.origins.size))
        self.origins[start:end] = origins
        self.neighbours[start:end] = neighbours
        self.attributes[start:end] = attributes
        self.size = end

    def _grow(self, capacity: int) -> None:
        import numpy as np

        size = self.size
        for name in self.__slots__[:3]:
            old = getattr(self, name)
            new = np.empty(capacity, old.dtype)
            new[:size] = old[:size]
            setattr(self, name, new)

    def columns(self) -> tuple[Any, Any, Any]:
        if not self.vectorized:
            return self.origins, self.neighbours, self.attributes
        size = self.size
        return self.origins[:size], self.neighbours[:size], self.attributes[:size]


class _Vectorized:
    """What the numpy hops of one walk share: the arrays, the visited bitmap, the type filter, a scratch bitmap."""

    __slots__ = (
        "part", "offsets", "ends", "split", "nodes", "attrs", "visited", "filter", "mark", "mark_bytes", "end_kinds"
    )  # fmt: skip

    def __init__(
        self, adjacency: _Adjacency, seen: bytearray, mask: int, keep_all: bool, end_kinds: _EndKinds | None = None
    ) -> None:
        import numpy as np

        self.part = adjacency.part
        self.offsets, self.split, self.nodes, self.attrs = adjacency.numpy()
        self.ends = self.offsets[1:]
        self.visited = np.frombuffer(seen, dtype=np.bool_)  # shares memory with ``seen``
        self.filter = None if keep_all else _type_filter(mask)
        self.mark: np.ndarray | None = None
        self.mark_bytes: bytearray | None = None  # the borrowed map ``mark`` views
        self.end_kinds = end_kinds

    def release(self, seen: bytearray, walk: Walk) -> None:
        """Give the maps back to the pool, clear: ``seen`` (which ``visited`` views) marks ``walk``'s nodes."""
        if walk.node_count > self.visited.size >> 6:
            self.visited.fill(False)  # a memset beats scattered stores past a few percent of the nodes
        else:
            self.visited[walk.columns()[0]] = False
        if self.mark_bytes is not None:
            _give_back(self.mark_bytes)
        _give_back(seen)

    def bounds(self, frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start and length of the part of every frontier node's adjacency slice that the walk reads, and
        where each part ends in the hop's output (the running total of the lengths: the last is the width).

        All int64: a hop's arrays are small, so numpy's fixed cost per call dominates, and mixed dtypes add
        to it (as do the ``np.`` function wrappers of array methods: the hops call methods and ufuncs).
        """
        starts = self.offsets.take(frontier)
        if self.part == HEAD:
            counts = self.split.take(frontier).astype(starts.dtype)
        else:
            if self.part == TAIL:
                starts += self.split.take(frontier)
            counts = self.ends.take(frontier)
            counts -= starts
        return starts, counts, counts.cumsum()


def bfs(
    store: Store,
    starts: list[int],
    direction: str,
    mask: int,
    max_hops: int | None = None,
    ends: Mapping[int, frozenset[int]] | None = None,
) -> Walk:
    """Walk ``direction`` ("down" follows data flow, "up" goes against it) from ``starts``.

    ``mask`` has bit ``1 << t`` set for every edge type ``t`` to follow; ``ends`` maps an edge type to the node
    kinds its edges may end at (as stored: their target), the others of that type are not followed (the
    ``columns`` plan: predicate edges onto columns, not onto tables).
    """
    part, keep_all = slice_part(mask)
    if ends:
        keep_all = False  # (the entries are checked one by one anyway)
    adjacency = _Adjacency(store, direction, part)
    targets_kinds = _EndKinds(store, direction, ends) if ends else None
    seen = _borrow(store.node_count)
    frontier: Any = sorted(set(starts))  # list[int] in Python hops, a numpy array in numpy hops
    for node in frontier:
        seen[node] = 1
    levels: list[Any] = [frontier]
    edges = _Edges()
    vectorized: _Vectorized | None = None
    followed = None if keep_all and not ends else _followed(mask)
    hop = 0
    while len(frontier) and (max_hops is None or hop < max_hops):
        hop += 1
        if isinstance(frontier, list):
            bounds, width = None, adjacency.width(frontier)
            vectorize = _vectorize(width)
        else:
            bounds = vectorized.bounds(frontier)  # type: ignore[union-attr] - set by the hop that made it
            width = int(bounds[2][-1])
            vectorize = width > VECTORIZE_FROM_EDGES
        if vectorize:
            if vectorized is None:
                vectorized = _Vectorized(adjacency, seen, mask, keep_all, targets_kinds)
                edges.vectorize(width)
            frontier = _numpy_hop(vectorized, frontier, bounds, edges)
        elif targets_kinds is not None:
            frontier = _checked_python_hop(adjacency, _as_list(frontier), followed, seen, edges, targets_kinds)
            _PythonWork.entries += width
        else:
            frontier = _python_hop(adjacency, _as_list(frontier), followed, seen, edges)
            _PythonWork.entries += width
        levels.append(frontier)
    walk = _assemble(levels, edges, direction)
    if vectorized is not None:  # (a walk in plain Python drops its map: no numpy, so no session of walks)
        vectorized.release(seen, walk)
    return walk


_SCRATCH: list[bytearray] = []


def _borrow(size: int) -> bytearray:
    """A zeroed byte per node: from the pool if it holds one of this size.

    A fresh megabyte costs its page faults (hundreds of µs on the bench machine, more than a narrow walk);
    a walk gives its maps back cleared, which costs only the entries it set."""
    while True:
        try:
            scratch = _SCRATCH.pop()
        except IndexError:  # (pop, not a length check: another thread may take the last one first)
            return bytearray(size)
        if len(scratch) == size:
            return scratch


def _give_back(scratch: bytearray) -> None:
    """Return a map, all zero again, to the pool (which keeps the last few)."""
    _SCRATCH.append(scratch)
    del _SCRATCH[:-4]


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


def _followed(mask: int) -> bytes:
    """A ``bytes.translate`` table: 1 for the low byte of packed attributes whose type ``mask`` follows."""
    return bytes((mask >> (low & TYPE_MASK)) & 1 for low in range(256))


def _as_list(frontier: Any) -> list[int]:  # noqa: ANN401
    return frontier if isinstance(frontier, list) else frontier.tolist()


def _python_hop(
    adjacency: _Adjacency, frontier: list[int], followed: bytes | None, seen: bytearray, edges: _Edges
) -> list[int]:
    """One hop in plain Python over the part of each frontier node's slice the walk reads.

    ``followed`` maps an attributes value's low byte to 1 for a followed type (None: every entry read is
    kept): translating a range's low bytes through it finds the kept entries in C, so a range of skipped
    entries costs no Python loop.  Kept ranges are copied whole (``tolist``), a single entry by index."""
    head, tail = adjacency.part == HEAD, adjacency.part == TAIL
    offsets, split, nodes, attrs = adjacency.offsets, adjacency.split, adjacency.neighbours, adjacency.attributes
    low_bytes = adjacency.low
    origins: list[int] = []
    neighbours: list[int] = []
    attributes: list[int] = []
    fresh: list[int] = []
    for origin in frontier:
        if head:
            count = split[origin]
            if not count:
                continue
            start = offsets[origin]
            end = start + count
        else:
            start, end = offsets[origin], offsets[origin + 1]
            if tail:
                start += split[origin]
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
        if end - start == 1:
            neighbour = nodes[start]
            origins.append(origin)
            neighbours.append(neighbour)
            attributes.append(attrs[start])
            if not seen[neighbour]:
                seen[neighbour] = 1
                fresh.append(neighbour)
            continue
        reached = nodes[start:end].tolist()
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


class _EndKinds:
    """Which node kinds the edges of each type may end at (as stored: their target), for a walk given ``ends``.

    Per type a bitmask over node kind values (all of them for a type ``ends`` does not name; kinds are below
    16), so an entry's check is a shift of its type's mask by the kind of its target."""

    __slots__ = ("down", "masks", "store", "_array")

    def __init__(self, store: Store, direction: str, ends: Mapping[int, frozenset[int]]) -> None:
        self.down, self.store = direction == "down", store
        self.masks = [sum(1 << kind for kind in ends[t]) if t in ends else 0xFFFF for t in range(TYPE_MASK + 1)]
        self._array: Any = None

    def admits(self, attributes: int, target: int) -> bool:
        return bool((self.masks[attributes & TYPE_MASK] >> self.store.kinds[target]) & 1)

    def kept(self, attributes: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Per entry: whether its edge may end at its target."""
        import numpy as np

        if self._array is None:
            self._array = np.array(self.masks, dtype=np.int64)
        kinds = self.store.numpy_array("node_kind").take(targets).astype(np.int64)
        return (self._array.take(attributes & TYPE_MASK) >> kinds) & 1


def _checked_python_hop(
    adjacency: _Adjacency,
    frontier: list[int],
    followed: bytes | None,
    seen: bytearray,
    edges: _Edges,
    end_kinds: _EndKinds,
) -> list[int]:
    """``_python_hop`` with each kept entry's target kind checked too, entry by entry (a walk with ``ends``)."""
    head, tail = adjacency.part == HEAD, adjacency.part == TAIL
    offsets, split, nodes, attrs = adjacency.offsets, adjacency.split, adjacency.neighbours, adjacency.attributes
    origins: list[int] = []
    neighbours: list[int] = []
    attributes: list[int] = []
    fresh: list[int] = []
    for origin in frontier:
        start, end = offsets[origin], offsets[origin + 1]
        if head:
            end = start + split[origin]
        elif tail:
            start += split[origin]
        for index in range(start, end):
            packed, neighbour = attrs[index], nodes[index]
            if followed is not None and not followed[packed & 0xFF]:
                continue
            if not end_kinds.admits(packed, neighbour if end_kinds.down else origin):
                continue
            origins.append(origin)
            neighbours.append(neighbour)
            attributes.append(packed)
            if not seen[neighbour]:
                seen[neighbour] = 1
                fresh.append(neighbour)
    fresh.sort()
    edges.append(origins, neighbours, attributes)
    return fresh


def _numpy_hop(
    state: _Vectorized,
    frontier: Any,  # noqa: ANN401 - list[int] or numpy array
    bounds: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    edges: _Edges,
) -> np.ndarray:
    import numpy as np

    frontier = np.asarray(frontier, dtype=np.int32)
    starts, counts, ends = state.bounds(frontier) if bounds is None else bounds
    # Table-level heads of consecutive nodes are not adjacent (a tail lies between): no runs to merge.
    index = _slices(starts, counts, ends, merge=state.part != HEAD)
    origin = frontier.repeat(counts)
    attributes = state.attrs.take(index)
    if state.filter is not None:
        # Positions, then gathers: cheaper than boolean masks when few entries are kept.
        kept = state.filter.take(attributes).nonzero()[0]
        index, origin, attributes = index.take(kept), origin.take(kept), attributes.take(kept)
    neighbour = state.nodes.take(index)
    if state.end_kinds is not None:
        kept = state.end_kinds.kept(attributes, neighbour if state.end_kinds.down else origin).nonzero()[0]
        origin, neighbour, attributes = origin.take(kept), neighbour.take(kept), attributes.take(kept)
    edges.append(origin, neighbour, attributes)
    return _fresh(state, neighbour)


def _slices(starts: np.ndarray, counts: np.ndarray, ends: np.ndarray, merge: bool) -> np.ndarray:
    """Indices of every entry of the ranges ``starts[i] .. starts[i] + counts[i]``, in order (``ends``: the
    running total of ``counts``).

    Nodes with consecutive ids have adjacent slices, and they often enter a frontier together (the columns
    of a table); np.repeat costs per range, so with ``merge`` a run of ranges that follow each other in the
    adjacency arrays expands as one range.
    """
    import numpy as np

    total = int(ends[-1])
    if merge:
        breaks = (starts[1:] != starts[:-1] + counts[:-1]).nonzero()[0]
        if breaks.size < starts.size >> 1:
            first = np.empty(breaks.size + 1, dtype=np.int64)
            first[0] = 0
            np.add(breaks, 1, out=first[1:])
            starts, counts = starts.take(first), np.add.reduceat(counts, first)
            ends = counts.cumsum()
    # index = position in the output + (range start - where the range begins in the output)
    shift = starts - ends
    shift += counts
    index = shift.repeat(counts)
    index += np.arange(total, dtype=np.int64)
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
            state.mark_bytes = _borrow(visited.size)
            state.mark = np.frombuffer(state.mark_bytes, dtype=np.bool_)
        mark = state.mark
        mark[neighbour] = True
        np.greater(mark, visited, out=mark)
        fresh = mark.nonzero()[0].astype(np.int32)
        visited |= mark
        mark[fresh] = False  # every set bit is a fresh node now: the bitmap is clear again
        return fresh
    # compress: a boolean index does the same, slower
    candidates = neighbour.compress(np.logical_not(visited.take(neighbour)))
    candidates.sort()
    if candidates.size > 1:
        first = np.empty(candidates.size, dtype=np.bool_)
        first[0] = True
        np.not_equal(candidates[1:], candidates[:-1], out=first[1:])
        candidates = candidates.compress(first)
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
