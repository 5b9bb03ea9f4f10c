"""``lineage import``: read external lineage and merge it into the store.

A column the import names in a table the store already knows, but that the store does not hold, is most
likely a typo or a schema drift: it is created all the same, with a warning at the input line that first
named it (the first ``LISTED_NEW_COLUMNS`` of them, then a count).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from lineage_cli import __version__
from lineage_cli.errors import LineageError, StoreError
from lineage_cli.imports.reader import Imported, format_from_suffix, import_file
from lineage_cli.model import Issue, NodeKind
from lineage_cli.store.arrays import GraphArrays, from_store, merge
from lineage_cli.store.layout import StoreWriteError
from lineage_cli.store.lock import StoreLockError, store_lock
from lineage_cli.store.reader import open_store
from lineage_cli.store.writer import WrittenStore, write_store

LISTED_NEW_COLUMNS = 20


def run_import(
    path: str,
    fmt: str | None,
    store_path: str,
    replace: bool,
    wait: bool = True,
    namespaces: tuple[str, ...] = (),
) -> int:
    chosen = fmt or format_from_suffix(path)
    if chosen is None:
        print(f"error: cannot tell the format of {path}; pass --format", file=sys.stderr)
        return 2
    if namespaces and chosen != "openlineage":
        print(f"error: --namespace is for --format openlineage, not {chosen}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        imported = import_file(Path(path), chosen, *([frozenset(namespaces)] if namespaces else []))
        for issue in imported.issues:
            print(str(issue), file=sys.stderr)
        with store_lock(store_path, wait):  # the store merged into is read under the lock too
            written = _merge_into(path, Path(store_path), imported, replace)
    except LineageError as error:
        print(_error_line(error), file=sys.stderr)
        return error.exit_code
    seconds = time.perf_counter() - started
    rows, skipped = imported.rows, len(imported.issues)
    print(
        f"imported {rows - skipped} of {rows} rows ({skipped} skipped) in {seconds:.2f}s; "
        f"store now {written.nodes} nodes, {written.edges} edges -> {written.path} ({written.bytes} bytes)"
    )
    return 0


def _error_line(error: LineageError) -> str:
    """What the import says of ``error``: a store it would merge into but cannot read may be replaced."""
    if isinstance(error, (StoreLockError, StoreWriteError)):
        return f"lineage: error: {error}"
    if isinstance(error, StoreError):
        return f"error: {error} (use --replace to overwrite it)"
    return f"error: {error}"


def _warn_of_new_columns(path: str, stored: GraphArrays, imported: Imported) -> None:
    columns = new_columns(stored, imported.graph)
    if not columns.size:
        return
    graph, lines = imported.graph, imported.first_lines
    columns = columns[np.argsort(lines[columns], kind="stable")]
    for column in columns[:LISTED_NEW_COLUMNS].tolist():
        table = graph.names[graph.containers[column]]
        message = f"column {graph.names[column]} is not in the store, though its table {table} is; created"
        print(str(Issue(path, int(lines[column]), message, level="warning")), file=sys.stderr)
    if columns.size > LISTED_NEW_COLUMNS:
        more = columns.size - LISTED_NEW_COLUMNS
        print(
            f"{path}: warning: {more:,} more columns not in the store were created in tables it holds", file=sys.stderr
        )


def new_columns(stored: GraphArrays, imported: GraphArrays) -> np.ndarray:
    """The imported columns that ``stored`` does not hold, of tables it does: their ids in ``imported``."""
    columns = np.flatnonzero((imported.kinds == NodeKind.COLUMN) & (imported.containers >= 0))
    if not columns.size:
        return columns
    held = set(stored.names)
    known = np.fromiter(map(held.__contains__, imported.names), bool, imported.node_count)
    return columns[~known[columns] & known[imported.containers[columns]]]


def _merge_into(path: str, target: Path, imported: Imported, replace: bool) -> WrittenStore:
    """Write the store at ``target``: what it holds merged with ``imported``, or ``imported`` alone."""
    meta: dict[str, object] = {"tool": f"lineage {__version__}", "default_schema": None}
    if replace or not target.exists():
        return write_store(imported.graph, target, meta)
    existing = open_store(target)
    # The merge copies all of it into a new store with a good checksum: damage must not slip through
    # (opening checks the checksum of small stores only).
    existing.verify()
    stored = from_store(existing)
    _warn_of_new_columns(path, stored, imported)
    # The store no longer holds just what a harvest made: a re-run of that harvest must write it again.
    meta = {key: value for key, value in existing.meta.items() if key != "harvest_key"}
    meta["tool"] = f"lineage {__version__}"
    return write_store(merge(stored, imported.graph), target, meta)
