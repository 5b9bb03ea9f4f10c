"""The process's heap: its free memory given back to the system, and the garbage collector's pace while syntax
trees are made and dropped.

CPython frees what it no longer needs to the C heap, which keeps the pages for later: after a harvest lets go of
its graph of dicts, or an import of its rows' strings, the arrays built next would come on top of them.

A statement's syntax tree is a cycle (each node knows its parent), so only the cyclic collector frees it.  At
CPython's default pace (a young collection every 700 new objects) a tree is still being analysed when the young
collections look at it: it is promoted, and each full collection then scans it with everything else alive, the
harvest's growing graph included.  A harvest of 2,000 tables ran 20 full collections, 12% of its CPU.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# New objects between young collections while trees are analysed: by then most trees are garbage, freed young.
# (Larger is no faster: the young generation outgrows the CPU's caches.)
_TREE_YOUNG_GENERATION = 10_000
_pace_lock = threading.Lock()
_pace_users = 0  # threads within ``tree_pace``: the first one in sets the pace, the last one out restores it
_pace_before: tuple[int, int, int] = (700, 10, 10)


def return_free_heap() -> None:
    """Give the C heap's free memory back to the system (glibc's ``malloc_trim``; elsewhere nothing)."""
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):  # not glibc
        return


@contextmanager
def tree_pace() -> Iterator[None]:
    """Within: young collections every ``_TREE_YOUNG_GENERATION`` new objects (or the process's own pace, if
    slower); the pace before is restored when the last thread within leaves, as the process may be the user's."""
    global _pace_users, _pace_before
    with _pace_lock:
        if _pace_users == 0:
            _pace_before = gc.get_threshold()
            young, *older = _pace_before
            gc.set_threshold(max(young, _TREE_YOUNG_GENERATION), *older)
        _pace_users += 1
    try:
        yield
    finally:
        with _pace_lock:
            _pace_users -= 1
            if _pace_users == 0:
                gc.set_threshold(*_pace_before)
