"""Frontier-at-a-time breadth-first search over the store's CSR arrays.

Each step gathers the adjacency slices of the whole frontier with numpy, keeps the
edges whose type is in the mask, and records every kept edge, so the caller gets the
exact sub-graph of the walk (cycles end because a node enters the frontier once).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lineage_cli.store.reader import Store


@dataclass(slots=True)
class Walk:
    """Nodes reached (with their hop count) and edges traversed, in data-flow orientation."""

    nodes: np.ndarray  # node ids, in the order reached
    hops: np.ndarray  # hops from the nearest start, same order
    sources: np.ndarray  # edge endpoints, data-flow orientation (source -> target)
    targets: np.ndarray
    types: np.ndarray
    flags: np.ndarray


def type_bits(mask: int) -> np.ndarray:
    """A lookup table: edge type byte -> whether the mask follows it."""
    table = np.zeros(256, dtype=bool)
    for value in range(256):
        table[value] = bool(mask & (1 << value)) if value < 64 else False
    return table


def bfs(store: Store, starts: list[int], direction: str, mask: int, max_hops: int | None = None) -> Walk:
    """Walk ``direction`` ("down" follows data flow, "up" goes against it) from ``starts``."""
    prefix = "fwd" if direction == "down" else "bwd"
    offsets = store.array(f"{prefix}_offsets")
    neighbours = store.array(f"{prefix}_node")
    edge_types = store.array(f"{prefix}_type")
    edge_flags = store.array(f"{prefix}_flags")
    follow = type_bits(mask)

    seen = np.zeros(store.node_count, dtype=bool)
    frontier = np.unique(np.asarray(starts, dtype=np.int64))
    seen[frontier] = True
    reached, hops, collected = [frontier], [np.zeros(frontier.size, dtype=np.int32)], []
    hop = 0
    while frontier.size and (max_hops is None or hop < max_hops):
        hop += 1
        origin, index = _gather(offsets, frontier)
        keep = follow[edge_types[index]]
        origin, index = origin[keep], index[keep]
        neighbour = neighbours[index].astype(np.int64)
        collected.append((origin, neighbour, edge_types[index], edge_flags[index]))
        fresh = np.unique(neighbour[~seen[neighbour]])
        seen[fresh] = True
        reached.append(fresh)
        hops.append(np.full(fresh.size, hop, dtype=np.int32))
        frontier = fresh
    return _as_walk(reached, hops, collected, direction)


def _gather(offsets: np.ndarray, frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edge indices of every frontier node's adjacency slice, and the node each came from."""
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


def _as_walk(
    reached: list[np.ndarray],
    hops: list[np.ndarray],
    collected: list[tuple[np.ndarray, ...]],
    direction: str,
) -> Walk:
    if collected:
        origin, neighbour, types, flags = (np.concatenate(parts) for parts in zip(*collected, strict=True))
    else:
        origin = neighbour = np.empty(0, dtype=np.int64)
        types, flags = np.empty(0, dtype=np.uint8), np.empty(0, dtype=np.uint16)
    sources, targets = (origin, neighbour) if direction == "down" else (neighbour, origin)
    return Walk(np.concatenate(reached), np.concatenate(hops), sources, targets, types, flags)
