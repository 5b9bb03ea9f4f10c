"""Giving the C heap's free memory back to the system, where a large job's peak is still to come.

CPython frees what it no longer needs to the C heap, which keeps the pages for later: after a harvest lets go of
its graph of dicts, or an import of its rows' strings, the arrays built next would come on top of them.
"""

from __future__ import annotations


def return_free_heap() -> None:
    """Give the C heap's free memory back to the system (glibc's ``malloc_trim``; elsewhere nothing)."""
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):  # not glibc
        return
