"""The store a server reads: opened once, and opened again when a harvest has replaced the file.

A harvest writes a new file and renames it over the store (``store/writer.py``), so the path's identity
(device, inode, size, modification time) changes while the open map still holds the old file whole.  Each
request asks ``current()``: one ``stat`` of the path, and a new ``Store`` only when its identity changed.  The
old one is not closed: requests still walking it keep it alive, and it goes when the last of them lets go.
(While the server holds a file open, no other file can take its inode: equal identities are one file.)
A ``Store`` is safe to share between threads: it holds a read-only map and caches of values that any thread
computes alike (two threads may compute one twice; neither sees a half-made one).
"""

from __future__ import annotations

import os
import threading

from lineage_cli.store.reader import Store, open_store

Identity = tuple[int, int, int, int]


class LiveStore:
    """The store file at ``path`` as it is now."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()  # one thread opens a replaced store; the others wait for it
        self._opened: tuple[Identity, Store] | None = None

    def current(self) -> Store:
        """The store, reopened if the file changed since it was opened; a ``StoreError`` when it is unusable."""
        try:
            identity = _identity(self.path)
        except OSError:
            return open_store(self.path)  # it raises the command line's message for a missing or unreadable store
        opened = self._opened
        if opened is not None and opened[0] == identity:
            return opened[1]
        with self._lock:
            opened = self._opened
            if opened is None or opened[0] != identity:
                # The identity is read before the file is opened: a harvest renaming in between leaves an old
                # identity beside the newer store, and the next request opens it once more; the other order
                # could pair the new identity with the old store and keep it forever.
                opened = self._opened = (identity, open_store(self.path))
            return opened[1]


def _identity(path: str) -> Identity:
    status = os.stat(path)
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns
