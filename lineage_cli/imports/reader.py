"""Import lineage that was not harvested here: pick the reader for a format and build the file's arrays.

A bad row is reported with its line number and skipped; the rest is imported.
"""

from __future__ import annotations

import csv
import ctypes
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np

from lineage_cli.imports.builder import ArraysBuilder, EdgeListBuilder, ImportError_, Problem
from lineage_cli.imports.edge_lists import read_edge_list
from lineage_cli.imports.hive import hive_rows
from lineage_cli.imports.openlineage_events import PLAIN_NAMESPACES, openlineage_rows
from lineage_cli.model import Issue
from lineage_cli.store.arrays import GraphArrays

FORMATS = ("csv", "tsv", "jsonl", "hive", "openlineage")


class Imported(NamedTuple):
    """What an import file holds."""

    graph: GraphArrays
    issues: list[Issue]  # the skipped rows
    rows: int  # the rows read
    first_lines: np.ndarray  # per node of ``graph``, the line it was first named on


def import_file(path: Path, fmt: str, namespaces: frozenset[str] = PLAIN_NAMESPACES) -> Imported:
    """Read ``path`` in format ``fmt``; OpenLineage datasets of ``namespaces`` are named without their namespace."""
    if fmt in _ROW_READERS:
        builder: ArraysBuilder | EdgeListBuilder = ArraysBuilder()
    else:
        _map_big_blocks()
        builder = EdgeListBuilder()
    try:
        if isinstance(builder, ArraysBuilder):
            read = partial(openlineage_rows, plain=namespaces) if fmt == "openlineage" else _ROW_READERS[fmt]
            rows, problems = _tally(read(path, builder))
        else:
            rows, problems = read_edge_list(path, fmt, builder)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise ImportError_(f"{path}: cannot read: {error}") from error
    graph, first_lines = builder.build()
    return Imported(graph, [Issue(str(path), line, problem) for line, problem in problems], rows, first_lines)


def _map_big_blocks() -> None:
    """Have glibc's malloc map every block of 2 MiB or more, so that an edge list's big arrays give their memory
    back when they go.  By default the bar rises (up to 32 MiB) as big blocks are freed, the next ones come from
    the heap, and the heap keeps the pages of the ones freed in its middle: an import of millions of edges would
    hold twice what it uses.  A chunk's temporaries (about 1 MB) stay on the heap, reusing its pages: mapped,
    they would be faulted in afresh every chunk.  Elsewhere (no ``mallopt``) nothing changes."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 1 << 21)


_M_MMAP_THRESHOLD = -3  # glibc's malloc.h


def _tally(rows: Iterable[tuple[int, str | None]]) -> tuple[int, list[Problem]]:
    """The rows read and the skipped ones, from a reader's (line, problem or None) per row."""
    count, problems = 0, []
    for line, problem in rows:
        count += 1
        if problem:
            problems.append((line, problem))
    return count, problems


def format_from_suffix(path: str) -> str | None:
    suffix = Path(path).suffix.lower().lstrip(".")
    return {"csv": "csv", "tsv": "tsv", "jsonl": "jsonl", "ndjson": "jsonl"}.get(suffix)


_ROW_READERS = {"hive": hive_rows, "openlineage": openlineage_rows}
