"""Which SQL files a harvest of PATHs reads, in which order, and the names they are shown by.

Plain ``os`` work, no parser: planning a harvest lists every file of a warehouse, also when nothing
has changed and no file is analysed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path


def sql_files(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Every ``*.sql`` file under ``paths`` (files given by name are taken whatever their suffix)."""
    found: list[str] = []
    for raw in paths:
        path = str(Path(raw))  # "./sql/" as "sql", the spelling of the paths below it
        if os.path.isdir(path):
            found.extend(_sql_under(path))
        elif os.path.isfile(path):
            found.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")
    return list(dict.fromkeys(found))


def _sql_under(directory: str) -> Iterator[str]:
    """The ``*.sql`` files below ``directory`` in the order of their path parts, as sorted ``Path.rglob`` finds
    them (symlinked directories are not entered), at a tenth of its cost: no ``Path`` per file."""
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda entry: os.path.normcase(entry.name))
    except PermissionError:
        return
    for entry in entries:
        path = entry.name if directory == os.curdir else entry.path  # "x.sql" in ".", as Path(".") / "x.sql"
        if entry.is_dir(follow_symlinks=False):
            yield from _sql_under(path)
        elif os.path.normcase(entry.name).endswith(".sql") and entry.is_file():
            yield path


def display_path(path: str | os.PathLike[str]) -> str:
    """Paths are shown relative to the working directory when they are under it.

    String work, not ``relpath``: a plan shows every file of a warehouse, and ``relpath`` costs ten times more.
    """
    absolute, here = os.path.abspath(path), os.getcwd()
    inside = os.path.join(here, "")
    if absolute.startswith(inside):
        absolute = absolute[len(inside) :]
    elif absolute == here:
        absolute = "."
    return absolute.replace(os.sep, "/")
