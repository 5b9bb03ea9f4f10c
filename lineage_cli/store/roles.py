"""Every data node's role in the whole graph, computed once when the store is written.

A *source* has no lineage edge (read, write, flow, projection, predicate, column write) coming in
anywhere, a *terminal* none going out, an *isolated* node neither.  A column its statement writes from
literals alone (``'k' AS k``) has only its column write coming in: written, so no source, as a table
a statement fills from VALUES is none.  Only datasets and columns have roles;
containment, statement membership and parameter defaults are structure, not lineage, and do not count.
A role is a fact about the whole store, not about an answer: the writer stores it as one byte per node
(``node_role``), so an answer's roles cost a lookup per node instead of a scan of its edges
(``node_roles``).  ``edge_counts``, the edges at each node, serves the roles and the writer's adjacency offsets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lineage_cli.errors import StoreError
from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store.layout import TYPE_MASK

if TYPE_CHECKING:
    import numpy as np

    from lineage_cli.store.reader import Store

ROLES = ("source", "terminal", "isolated")
# The stored code of a node's role: 1 * (no lineage in) + 2 * (no lineage out) for data nodes, 0 otherwise.
ROLE_BY_CODE = (None, *ROLES)
LINEAGE_TYPES = (
    EdgeType.READ,
    EdgeType.WRITE,
    EdgeType.FLOW,
    EdgeType.PROJECTION,
    EdgeType.PREDICATE,
    EdgeType.COLUMN_WRITE,
)
LINEAGE_MASK = sum(t.bit for t in LINEAGE_TYPES)
DATA_KINDS = tuple(int(k) for k in NodeKind if k.is_dataset or k is NodeKind.COLUMN)


def role_codes(kinds: np.ndarray, sources: np.ndarray, targets: np.ndarray, attributes: np.ndarray) -> np.ndarray:
    """The ``node_role`` section: each node's role code (``ROLE_BY_CODE``), from the graph's edges."""
    import numpy as np

    # a lookup by type, not a shift of every edge's type widened to int64: 5M edges would take 40 MB a temporary
    counted = np.array([(LINEAGE_MASK >> kind) & 1 for kind in range(TYPE_MASK + 1)], dtype=np.bool_)
    lineage = counted.take(attributes & TYPE_MASK)
    nodes = kinds.size
    has_in = edge_counts(targets, nodes, lineage) > 0
    has_out = edge_counts(sources, nodes, lineage) > 0
    codes = (~has_in).astype(np.uint8) + 2 * (~has_out).astype(np.uint8)
    return np.where(np.isin(kinds, DATA_KINDS), codes, 0).astype(np.uint8)


def edge_counts(ends: np.ndarray, nodes: int, chosen: np.ndarray | None = None) -> np.ndarray:
    """How many edges (of those ``chosen`` marks, when given) each of the ``nodes`` is the end of in ``ends``.

    Counted a block of edges at a time: ``np.bincount`` of all of them at once takes an int64 copy of the ends,
    which at 5M edges sets an import's peak memory.
    """
    import numpy as np

    counts = np.zeros(nodes, dtype=np.int64)
    for start in range(0, ends.size, _BLOCK):
        block = ends[start : start + _BLOCK]
        counts += np.bincount(block if chosen is None else block[chosen[start : start + _BLOCK]], minlength=nodes)
    return counts


_BLOCK = 1 << 20  # edges counted at a time


def node_roles(store: Store, ids: Any) -> list[str | None]:  # noqa: ANN401 - list[int] or a numpy array
    """The role of every node of ``ids`` (None for nodes without one), as the store records it."""
    try:
        if hasattr(ids, "take"):
            import numpy as np

            return np.array(ROLE_BY_CODE, dtype=object).take(store.numpy_array("node_role").take(ids)).tolist()
        return list(map(ROLE_BY_CODE.__getitem__, map(store.array("node_role").__getitem__, ids)))
    except IndexError:
        raise StoreError(f"{store.path}: damaged store (a node role out of range); re-harvest to rebuild it") from None
