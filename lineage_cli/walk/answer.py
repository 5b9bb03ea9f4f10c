"""From a walk to the answer: its named, sorted columns (``shape.columns``, roles included) as a result."""

from __future__ import annotations

from lineage_cli.store.reader import Store
from lineage_cli.walk import shape
from lineage_cli.walk.result import LineageResult
from lineage_cli.walk.traverse import Walk


def answer(store: Store, walk: Walk, roots: list[int], direction: str) -> LineageResult:
    """The result of ``walk``, with ``roots`` (in the given order) as the queried nodes."""
    return LineageResult(direction=direction, roots=store.names_of(roots), columns=shape.columns(store, walk))
