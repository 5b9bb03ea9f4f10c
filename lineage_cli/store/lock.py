"""The write lock of a store: one ``lineage harvest`` or ``lineage import`` at a time writes a store.

Two harvests of one store at once would each keep only their own units in the cache beside it, and
two imports would each merge into the store as it was before the other.  So a writer holds an
``flock`` on ``STORE.lock``, beside the store, from before it reads the cache (or the store it
merges into) until the store is written.  The second writer waits for the first, saying so, or
with ``wait=False`` fails at once.  Readers never take the lock: the store is replaced atomically,
so they see the old one or the new one.  The lock file stays once made: removing it would let a
third writer lock a new file while the second still holds the old one.  The kernel lets the lock
go when its holder exits, however it exits.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lineage_cli.errors import StoreError


class StoreLockError(StoreError):
    """The store's lock could not be taken: another writer holds it (and waiting was not wanted), or its file
    cannot be made."""


def lock_path(store: str | os.PathLike[str]) -> Path:
    path = Path(store)
    return path.with_name(path.name + ".lock")


@contextmanager
def store_lock(store: str | os.PathLike[str], wait: bool = True) -> Iterator[None]:
    """Hold the write lock of ``store`` for the ``with`` block: wait for another holder, or fail unless ``wait``."""
    descriptor = _open(lock_path(store), store)
    try:
        _acquire(descriptor, store, wait)
        yield
    finally:
        os.close(descriptor)  # lets the lock go


def _open(path: Path, store: str | os.PathLike[str]) -> int:
    """The lock file's descriptor: read-only when the file is another user's (``flock`` needs no write access)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:
            return os.open(path, os.O_RDONLY)
    except OSError as error:
        raise _cannot_lock(store, error) from error


def _acquire(descriptor: int, store: str | os.PathLike[str], wait: bool) -> None:
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        if not wait:
            raise StoreLockError(f"another harvest or import is writing {store}; leave out --no-wait to wait") from None
    except OSError as error:
        raise _cannot_lock(store, error) from error
    print(f"lineage: waiting for another harvest of {store} to finish...", file=sys.stderr, flush=True)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
    except OSError as error:
        raise _cannot_lock(store, error) from error


def _cannot_lock(store: str | os.PathLike[str], error: OSError) -> StoreLockError:
    return StoreLockError(f"cannot lock {store} for writing: {error.strerror or error}")
