"""``lineage import``: read external lineage and merge it into the store."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from lineage_cli import __version__
from lineage_cli.harvest.imports import ImportError_, format_from_suffix, import_file
from lineage_cli.store.arrays import GraphArrays, from_store, merge
from lineage_cli.store.layout import StoreError, StoreWriteError
from lineage_cli.store.lock import StoreLockError, store_lock
from lineage_cli.store.reader import open_store
from lineage_cli.store.writer import WrittenStore, write_store


def run_import(path: str, fmt: str | None, store_path: str, replace: bool, wait: bool = True) -> int:
    chosen = fmt or format_from_suffix(path)
    if chosen is None:
        print(f"error: cannot tell the format of {path}; pass --format", file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        imported, issues, rows = import_file(Path(path), chosen)
    except ImportError_ as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for issue in issues:
        print(str(issue), file=sys.stderr)
    try:
        with store_lock(store_path, wait):  # the store merged into is read under the lock too
            written = _merge_into(Path(store_path), imported, replace)
    except StoreError as error:
        print(f"error: {error} (use --replace to overwrite it)", file=sys.stderr)
        return 2
    except (StoreLockError, StoreWriteError) as error:
        print(f"lineage: error: {error}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - started
    print(
        f"imported {rows - len(issues)} of {rows} rows ({len(issues)} skipped) in {seconds:.2f}s; "
        f"store now {written.nodes} nodes, {written.edges} edges -> {written.path} ({written.bytes} bytes)"
    )
    return 0


def _merge_into(target: Path, imported: GraphArrays, replace: bool) -> WrittenStore:
    """Write the store at ``target``: what it holds merged with ``imported``, or ``imported`` alone."""
    meta: dict[str, object] = {"tool": f"lineage {__version__}", "default_schema": None}
    if replace or not target.exists():
        return write_store(imported, target, meta)
    existing = open_store(target)
    # The store no longer holds just what a harvest made: a re-run of that harvest must write it again.
    meta = {key: value for key, value in existing.meta.items() if key != "harvest_key"}
    meta["tool"] = f"lineage {__version__}"
    return write_store(merge(from_store(existing), imported), target, meta)
