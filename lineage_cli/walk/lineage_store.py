"""A store opened for queries: ``Store`` with ``up`` / ``down`` / ``lineage`` methods, what
``lineage_cli.open_store`` returns.  The store stage itself knows no walks; this subclass adds them.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partialmethod
from typing import TYPE_CHECKING

from lineage_cli.store.reader import Store

if TYPE_CHECKING:
    from lineage_cli.walk.result import LineageResult
    from lineage_cli.walk.walkplan import WalkPlan


class LineageStore(Store):
    """A read-only lineage graph backed by one memory-mapped file, with its lineage queries."""

    def lineage(
        self,
        direction: str,
        name_or_pattern: str,
        depth: int | None = None,
        walkplan: WalkPlan | str | None = None,
        *,
        args: Iterable[str] = (),
        show_transformations: bool = False,
        predicates: bool = False,
        exact: bool = False,
    ) -> LineageResult:
        """Everything ``direction`` ("up" or "down") of the named nodes (a name, a name without its schema,
        or a LIKE pattern): what ``lineage up`` / ``lineage down`` print.  ``walkplan`` is a built-in plan's
        name, a plan file or a ``WalkPlan``; ``args`` turns on its rules marked ``when_arg``; ``exact`` keeps
        out the statements read approximately (``lineage up --exact``)."""
        from lineage_cli.walk.query import lineage  # the query modules load on the first query, not on open

        shown = (show_transformations, predicates)
        return lineage(self, name_or_pattern, direction, depth, *shown, walkplan, frozenset(args), exact)

    up = partialmethod(lineage, "up")  # store.up(name_or_pattern, depth=None, walkplan=None, ...)
    down = partialmethod(lineage, "down")
