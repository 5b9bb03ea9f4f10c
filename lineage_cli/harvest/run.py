"""``lineage harvest``: harvest with a progress bar, report issues, write the store."""

from __future__ import annotations

import sys
from pathlib import Path

from lineage_cli import __version__
from lineage_cli.harvest.harvester import Harvest, harvest, sql_files
from lineage_cli.profiles import ProfileError, load_profile
from lineage_cli.store.writer import write_store


def run_harvest(
    paths: tuple[str, ...],
    dialect: str | None,
    default_schema: str | None,
    store: str,
    strict: bool = False,
    quiet: bool = False,
) -> int:
    from rich.console import Console

    console = Console(stderr=True, highlight=False)
    try:
        profile = load_profile(dialect)
        files = sql_files(paths)
    except (ProfileError, FileNotFoundError) as error:
        console.print(f"[red]error:[/red] {error}")
        return 2
    result = _harvest_with_progress(paths, dialect, default_schema, len(files), quiet or not console.is_terminal)
    for issue in result.issues:
        console.print(str(issue), markup=False, style="red" if issue.level == "error" else "yellow")
    meta = {
        "tool": f"lineage {__version__}",
        "dialect": profile.name,
        "default_schema": default_schema or profile.default_schema,
        "files": result.files,
        "statements": result.statements,
    }
    written = write_store(result.graph, store, meta)
    _summary(result, written.path, written.bytes)
    return 1 if strict and result.errors else 0


def _harvest_with_progress(
    paths: tuple[str, ...], dialect: str | None, default_schema: str | None, total: int, quiet: bool
) -> Harvest:
    if quiet:
        return harvest(paths, dialect, default_schema)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("harvest"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.fields[statements]} statements, {task.fields[errors]} errors"),
    )  # fmt: skip
    with Progress(*columns, transient=True, console=None) as progress:
        task = progress.add_task("harvest", total=total, statements=0, errors=0)

        def advance(_: Path, so_far: Harvest) -> None:
            progress.update(task, advance=1, statements=so_far.statements, errors=len(so_far.errors))

        return harvest(paths, dialect, default_schema, on_file=advance)


def _summary(result: Harvest, path: Path, size: int) -> None:
    rate = result.statements / result.seconds if result.seconds else 0.0
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(result.statement_types.items()))
    print(
        f"harvested {result.files} files, {result.statements} statements "
        f"({result.lineage_statements} with lineage{': ' + kinds if kinds else ''}) "
        f"in {result.seconds:.2f}s ({rate:.0f} statements/s)"
    )
    graph = result.graph
    print(f"{len(graph.kinds)} nodes, {len(graph.edges)} edges, {len(result.errors)} errors -> {path} ({size} bytes)")
    sys.stdout.flush()
