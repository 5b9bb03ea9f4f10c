"""lineage: a SQL-parsing data-lineage harvester.

The package is a pipeline in one direction: ``harvest`` (SQL -> graph), ``store``
(graph -> memory-mapped file), ``walk`` (queries on the file), ``emit`` (results ->
tree, JSON, TGF, GraphML, DOT).  Heavy modules (sqlglot, numpy, rich) are imported
lazily so that ``import lineage_cli`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.3.0"

if TYPE_CHECKING:  # pragma: no cover
    from lineage_cli.walk.lineage_store import LineageStore

__all__ = ["__version__", "open_store", "parse_sql"]


def parse_sql(sql: str, **options: Any) -> dict[str, Any]:
    """Analyse ``sql`` and return its lineage as the ``lineage parse`` JSON structure."""
    from lineage_cli.harvest.sql.api import parse_sql as _parse_sql

    return _parse_sql(sql, **options)


def open_store(path: str) -> LineageStore:
    """Open a store file written by ``lineage harvest``, for queries (``store.up(name)``, ``store.down(name)``)."""
    from lineage_cli.walk.lineage_store import LineageStore

    return LineageStore(path)
