"""From a walk to the answer: named, sorted columns (``shape.columns``) and every data node's role.

A node's role is a fact about the whole store, not about the picture: a *source* has no lineage edge
(read, write, flow, projection, predicate) coming in anywhere, a *terminal* none going out, an
*isolated* node neither.  Only datasets and columns have roles; containment, statement membership and
parameter defaults are structure, not lineage, and do not count.  A vectorized walk gets its roles in
numpy (a slice's first entry settles most nodes, the others' slices are gathered), a small one in
Python, slice by slice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store.layout import TYPE_MASK
from lineage_cli.store.reader import Store
from lineage_cli.walk import shape
from lineage_cli.walk.result import ROLES, LineageResult
from lineage_cli.walk.traverse import Walk

if TYPE_CHECKING:
    import numpy as np

LINEAGE_TYPES = (EdgeType.READ, EdgeType.WRITE, EdgeType.FLOW, EdgeType.PROJECTION, EdgeType.PREDICATE)
LINEAGE_MASK = sum(t.bit for t in LINEAGE_TYPES)
DATA_KINDS = frozenset(int(k) for k in NodeKind if k.is_dataset or k is NodeKind.COLUMN)
# role by (no lineage in, no lineage out): index 1 * upstream-free + 2 * downstream-free
_ROLE_BY_CODE = (None, *ROLES)
# a bytes.translate table: 1 for the low byte of packed attributes whose type is a lineage type
_LINEAGE_BYTES = bytes((LINEAGE_MASK >> (low & TYPE_MASK)) & 1 for low in range(256))


def answer(store: Store, walk: Walk, roots: list[int], direction: str) -> LineageResult:
    """The result of ``walk``, with ``roots`` (in the given order) as the queried nodes."""
    columns = shape.columns(store, walk)
    ids: Any = _sorted_ids(walk)
    roles = node_roles(store, ids)
    if any(roles):
        columns.roles = roles
    return LineageResult(direction=direction, roots=store.names_of(roots), columns=columns)


def _sorted_ids(walk: Walk) -> Any:  # noqa: ANN401 - list[int] or a numpy array, as the walk holds them
    """The walk's node ids in answer order (id order is name order): a numpy array for a vectorized walk."""
    if not walk.vectorized:
        return sorted(walk.nodes)
    import numpy as np

    return np.sort(walk.columns()[0])


def node_roles(store: Store, ids: Any) -> list[str | None]:  # noqa: ANN401 - list[int] or a numpy array
    """The role of every node of ``ids`` (None for nodes without one)."""
    if hasattr(ids, "take"):
        return _numpy_roles(store, ids)
    kinds = store.kinds
    upstream, downstream = _Lineage(store, "bwd"), _Lineage(store, "fwd")
    return [
        _ROLE_BY_CODE[(not upstream.has(node)) + 2 * (not downstream.has(node))] if kinds[node] in DATA_KINDS else None
        for node in ids
    ]


class _Lineage:
    """Whether a node has a lineage edge in one direction: its slice's types translated in C, then searched."""

    def __init__(self, store: Store, prefix: str) -> None:
        self.offsets = store.array(f"{prefix}_offsets")
        self.split = store.array(f"{prefix}_split")
        self.low = store.array(f"{prefix}_attr").cast("B")  # low byte of each attribute at even positions

    def has(self, node: int) -> bool:
        # table-level edges (all lineage) lead each slice: a dataset with any of them needs no scan
        if self.split[node]:
            return True
        start, end = self.offsets[node], self.offsets[node + 1]
        return 1 in self.low[2 * start : 2 * end : 2].tobytes().translate(_LINEAGE_BYTES)


def _numpy_roles(store: Store, ids: np.ndarray) -> list[str | None]:
    import numpy as np

    data = np.isin(store.numpy_array("node_kind").take(ids), list(DATA_KINDS))
    free_up = ~_has_lineage(store, "bwd", ids)
    free_down = ~_has_lineage(store, "fwd", ids)
    codes = np.where(data, free_up.astype(np.int8) + 2 * free_down.astype(np.int8), 0)
    return np.array(_ROLE_BY_CODE, dtype=object).take(codes).tolist()


def _has_lineage(store: Store, prefix: str, ids: np.ndarray) -> np.ndarray:
    """For each node of ``ids``: does its ``prefix`` adjacency slice hold a lineage edge?

    A slice's first entry settles most nodes (the store puts table-level edges first); only the rest of
    the slices that did not start with one are scanned.
    """
    import numpy as np

    offsets, attributes = store.numpy_array(f"{prefix}_offsets"), store.numpy_array(f"{prefix}_attr")
    starts = offsets.take(ids)
    counts = offsets.take(ids + 1) - starts
    lineage = _lineage_table()
    found = np.zeros(ids.size, dtype=np.bool_)
    filled = counts > 0
    found[filled] = lineage.take(attributes.take(starts[filled]))
    open_ = np.flatnonzero(filled & ~found)
    if open_.size:
        found[open_] = _any_in_slices(lineage, attributes, starts[open_] + 1, counts[open_] - 1)
    return found


def _any_in_slices(table: np.ndarray, attributes: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Whether ``table`` holds for any of ``attributes[start : start + count]``, for each slice."""
    import numpy as np

    begins = np.cumsum(counts) - counts  # where each slice begins among the gathered entries
    entries = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(starts - begins, counts)
    gathered = table.take(attributes.take(entries))
    found = np.zeros(starts.size, dtype=np.bool_)
    filled = counts > 0
    if gathered.size:
        found[filled] = np.logical_or.reduceat(gathered, begins[filled])
    return found


_LINEAGE_TABLE: list[np.ndarray] = []


def _lineage_table() -> np.ndarray:
    """True for every packed attributes value (type in the low bits) whose type is a lineage type."""
    if not _LINEAGE_TABLE:
        import numpy as np

        _LINEAGE_TABLE.append(((LINEAGE_MASK >> (np.arange(1 << 16) & TYPE_MASK)) & 1).astype(np.bool_))
    return _LINEAGE_TABLE[0]
