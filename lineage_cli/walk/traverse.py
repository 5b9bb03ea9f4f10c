"""Frontier-at-a-time breadth-first search over the store's CSR arrays.

Each hop expands the whole frontier and keeps the edges whose type is in the mask,
recording every kept edge, so the caller gets the exact sub-graph of the walk (cycles
end because a node enters the frontier once).  Small frontiers are expanded in plain
Python over memoryviews — cheaper than importing numpy for a query that touches a few
hundred edges; a frontier with many edges is expanded with numpy, vectorized.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lineage_cli.store.layout import TYPE_MASK
from lineage_cli.store.reader import Store

# Above this many adjacency entries in one hop, numpy's fixed costs pay for themselves.
VECTORIZE_FROM_EDGES = 2048


@dataclass(slots=True)
class Walk:
    """Nodes reached (with their hop count) and edges traversed, in data-flow orientation."""

    nodes: list[int] = field(default_factory=list)
    hops: list[int] = field(default_factory=list)
    sources: list[int] = field(default_factory=list)
    targets: list[int] = field(default_factory=list)
    attributes: list[int] = field(default_factory=list)  # packed type + subtype flags


@dataclass(slots=True)
class _Adjacency:
    offsets: memoryview
    neighbours: memoryview
    attributes: memoryview
    store: Store
    prefix: str


def bfs(store: Store, starts: list[int], direction: str, mask: int, max_hops: int | None = None) -> Walk:
    """Walk ``direction`` ("down" follows data flow, "up" goes against it) from ``starts``.

    ``mask`` has bit ``1 << t`` set for every edge type ``t`` to follow.
    """
    prefix = "fwd" if direction == "down" else "bwd"
    adjacency = _Adjacency(
        store.array(f"{prefix}_offsets"), store.array(f"{prefix}_node"), store.array(f"{prefix}_attr"), store, prefix
    )
    seen = bytearray(store.node_count)
    frontier = sorted(set(starts))
    walk = Walk()
    for node in frontier:
        seen[node] = 1
    walk.nodes.extend(frontier)
    walk.hops.extend([0] * len(frontier))
    origins: list[int] = []
    neighbours: list[int] = []
    hop = 0
    while frontier and (max_hops is None or hop < max_hops):
        hop += 1
        width = sum(adjacency.offsets[n + 1] - adjacency.offsets[n] for n in frontier)
        expand = _expand_numpy if width > VECTORIZE_FROM_EDGES else _expand_python
        frontier = expand(adjacency, frontier, mask, seen, origins, neighbours, walk.attributes)
        walk.nodes.extend(frontier)
        walk.hops.extend([hop] * len(frontier))
    walk.sources, walk.targets = (origins, neighbours) if direction == "down" else (neighbours, origins)
    return walk


def _expand_python(
    adjacency: _Adjacency,
    frontier: list[int],
    mask: int,
    seen: bytearray,
    origins: list[int],
    neighbours: list[int],
    attributes: list[int],
) -> list[int]:
    offsets, nodes, attrs = adjacency.offsets, adjacency.neighbours, adjacency.attributes
    fresh: list[int] = []
    for origin in frontier:
        for index in range(offsets[origin], offsets[origin + 1]):
            attribute = attrs[index]
            if mask >> (attribute & TYPE_MASK) & 1:
                neighbour = nodes[index]
                origins.append(origin)
                neighbours.append(neighbour)
                attributes.append(attribute)
                if not seen[neighbour]:
                    seen[neighbour] = 1
                    fresh.append(neighbour)
    fresh.sort()
    return fresh


def _expand_numpy(
    adjacency: _Adjacency,
    frontier: list[int],
    mask: int,
    seen: bytearray,
    origins: list[int],
    neighbours: list[int],
    attributes: list[int],
) -> list[int]:
    import numpy as np

    store, prefix = adjacency.store, adjacency.prefix
    offsets = store.numpy_array(f"{prefix}_offsets")
    ids = np.asarray(frontier, dtype=np.int64)
    origin, index = gather(offsets, ids)
    attribute = store.numpy_array(f"{prefix}_attr")[index]
    keep = (np.right_shift(mask, attribute & TYPE_MASK) & 1).astype(bool)
    origin, index, attribute = origin[keep], index[keep], attribute[keep]
    neighbour = store.numpy_array(f"{prefix}_node")[index]
    origins.extend(origin.tolist())
    neighbours.extend(neighbour.tolist())
    attributes.extend(attribute.tolist())
    visited = np.frombuffer(seen, dtype=np.bool_)  # shares memory with ``seen``
    fresh = np.unique(neighbour[~visited[neighbour]])
    visited[fresh] = True
    return fresh.tolist()


def gather(offsets, frontier):  # noqa: ANN001, ANN201 - numpy arrays in, numpy arrays out
    """Edge indices of every frontier node's adjacency slice, and the node each came from."""
    import numpy as np

    starts = offsets[frontier]
    counts = offsets[frontier + 1] - starts
    total = int(counts.sum())
    if total == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    origin = np.repeat(frontier, counts)
    # index = start of the node's slice + position inside it
    run_starts = np.repeat(np.cumsum(counts) - counts, counts)
    index = np.repeat(starts, counts) + (np.arange(total) - run_starts)
    return origin, index
