"""From a walk to the answer: named, sorted columns (``shape.columns``) and every data node's role.

Roles (source, terminal, isolated) are facts about the whole store, which the writer computes once
(``store/roles.py``): an answer reads one byte per node.
"""

from __future__ import annotations

from typing import Any

from lineage_cli.store.layout import StoreError
from lineage_cli.store.reader import Store
from lineage_cli.store.roles import ROLE_BY_CODE
from lineage_cli.walk import shape
from lineage_cli.walk.result import LineageResult
from lineage_cli.walk.traverse import Walk


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
    try:
        if hasattr(ids, "take"):
            import numpy as np

            return np.array(ROLE_BY_CODE, dtype=object).take(store.numpy_array("node_role").take(ids)).tolist()
        return list(map(ROLE_BY_CODE.__getitem__, map(store.array("node_role").__getitem__, ids)))
    except IndexError:
        raise StoreError(f"{store.path}: damaged store (a node role out of range); re-harvest to rebuild it") from None
