"""Which SQL files a harvest of PATHs reads, in which order, and the names they are shown by.

A file is harvested once however many names reach it (a symlink, a path given twice): by the first
name found.  A folder that cannot be listed and a ``*.sql`` link to nothing are warnings, not silence.
Plain ``os`` work, no parser: planning a harvest lists every file of a warehouse, also when nothing
has changed and no file is analysed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from lineage_cli.errors import InputError
from lineage_cli.model import Issue


class MissingPathError(InputError, FileNotFoundError):
    """A PATH to harvest that names no file or folder; a ``FileNotFoundError`` too, as it was."""


class SqlFile(NamedTuple):
    path: str  # the name it was found by: read by it, shown by it
    real: str  # where it is: a file reached by two names (a symlink) is harvested once


@dataclass(slots=True)
class FoundFiles:
    files: list[SqlFile] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)  # folders that cannot be listed, dangling links


def sql_files(paths: Iterable[str | os.PathLike[str]]) -> FoundFiles:
    """Every ``*.sql`` file under ``paths`` (files given by name are taken whatever their suffix), each real file
    once, by the first name it is found by; what cannot be searched is a warning and the search goes on."""
    found = FoundFiles()
    names: dict[str, str] = {}  # real path -> the first name found for it
    for raw in paths:
        path = str(Path(raw))  # "./sql/" as "sql", the spelling of the paths below it
        if os.path.isdir(path):
            files = list(_sql_under(path, os.path.realpath(path), found.issues))
        elif os.path.isfile(path):
            files = [SqlFile(path, os.path.realpath(path))]
        else:
            raise MissingPathError(f"{path}: no such file or directory")
        for file in files:
            names.setdefault(file.real, file.path)
    found.files = [SqlFile(path, real) for real, path in names.items()]
    return found


def _sql_under(directory: str, real: str, issues: list[Issue]) -> Iterator[SqlFile]:
    """The ``*.sql`` files below ``directory`` (whose real path is ``real``) in the order of their path parts, as
    sorted ``Path.rglob`` finds them (symlinked directories are not entered), at a tenth of its cost: no ``Path``
    per file, and a real path per symlink only, since a folder that is not one is entered by its real name."""
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda entry: os.path.normcase(entry.name))
    except OSError as error:
        message = f"cannot read directory: {error.strerror or error}; the files in it are not harvested"
        issues.append(Issue(display_path(directory), 0, message, level="warning"))
        return
    for entry in entries:
        path = entry.name if directory == os.curdir else entry.path  # "x.sql" in ".", as Path(".") / "x.sql"
        if entry.is_dir(follow_symlinks=False):
            yield from _sql_under(path, os.path.join(real, entry.name), issues)
        elif not os.path.normcase(entry.name).endswith(".sql"):
            continue
        elif not entry.is_symlink():
            if entry.is_file():
                yield SqlFile(path, os.path.join(real, entry.name))
        elif entry.is_file():
            yield SqlFile(path, os.path.realpath(path))
        elif not os.path.exists(path):
            message = f"symbolic link to {os.readlink(path)}, which does not exist: not harvested"
            issues.append(Issue(display_path(path), 0, message, level="warning"))


def inside(path: str | os.PathLike[str], root: Path) -> bool:
    """Whether ``path``, symlinks resolved, is ``root`` or below it (a real path): a file a harvest is told to
    read by a manifest or a dbt project must not lead it elsewhere."""
    return Path(path).resolve().is_relative_to(root)


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
