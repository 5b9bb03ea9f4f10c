"""The base of the errors a query reports to its user (exit 1), apart from the name lookups of ``query.py``.

A module of its own so that ``lineage up`` catches them all without importing the modules that raise them.
"""

from __future__ import annotations


class QueryError(Exception):
    """A question the store cannot answer as asked; the message says why and what to do."""
