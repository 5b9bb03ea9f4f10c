"""``lineage harvest``: harvest with a progress bar, report issues, write the store.

The store's meta JSON records, besides counts, what a flow manifest says about each module
(``modules``: workflow, rows, frequency, sql_file, the manifest entry), for the emitters.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import yaml

from lineage_cli import __version__
from lineage_cli.harvest.batch import FileOutcome, harvest_plan
from lineage_cli.harvest.dbt import DbtError, load_dbt
from lineage_cli.harvest.harvester import Harvest
from lineage_cli.harvest.manifest import ManifestError, load_manifest
from lineage_cli.harvest.plan import HarvestOptions, Plan, pairs, plan_harvest
from lineage_cli.harvest.schema import SchemaCatalog, SchemaError
from lineage_cli.harvest.templates import read_vars_file
from lineage_cli.profiles import ProfileError, load_profile
from lineage_cli.store.writer import WrittenStore, write_store


def load_variables(pairs: tuple[str, ...], files: tuple[str, ...]) -> dict[str, str]:
    """Variables from ``--vars FILE.yaml`` files, then ``--var NAME=VALUE`` pairs (which win).

    >>> load_variables(("etl_date=2024-01-31", "x=a=b"), ())
    {'etl_date': '2024-01-31', 'x': 'a=b'}
    """
    return load_template_values(pairs, files)[0]


def load_template_values(pairs: tuple[str, ...], files: tuple[str, ...]) -> tuple[dict[str, str], dict[str, str]]:
    """Values (``--vars`` files, then ``--var`` pairs) and defaults (the files' ``defaults:`` mappings)."""
    variables: dict[str, str] = {}
    defaults: dict[str, str] = {}
    for file in files:
        values, more = read_vars_file(file)
        variables.update(values)
        defaults.update(more)
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--var expects NAME=VALUE, got {pair!r}")
        variables[name.strip()] = value
    return variables, defaults


def run_harvest(
    paths: tuple[str, ...],
    dialect: str | None,
    default_schema: str | None,
    store: str,
    *,
    schema_file: str | None = None,
    var_pairs: tuple[str, ...] = (),
    var_files: tuple[str, ...] = (),
    manifest_file: str | None = None,
    dbt_path: str | None = None,
    jobs: int | None = None,
    use_cache: bool = True,
    columns: bool = True,
    strict: bool = False,
    quiet: bool = False,
) -> int:
    from rich.console import Console

    console = Console(stderr=True, highlight=False)
    # sqlglot logs a warning when it reads a statement it does not support (a CALL, say) as an opaque
    # command: such a statement has no lineage, which the summary and a manifest's declared lineage
    # already account for, and the message is not in the file:line form of every other problem.
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    try:
        schema = SchemaCatalog.from_file(schema_file) if schema_file else None
        variables, defaults = load_template_values(var_pairs, var_files)
        manifest = load_manifest(manifest_file) if manifest_file else None
        dbt = load_dbt(dbt_path) if dbt_path else None
        profile = load_profile(dialect or (manifest.dialect if manifest else None) or (dbt.dialect if dbt else None))
        options = HarvestOptions(dialect, default_schema, pairs(variables), columns, pairs(defaults))
        plan = plan_harvest(paths, options, schema=schema, manifest=manifest, dbt=dbt)
    except (ProfileError, SchemaError, ManifestError, DbtError, ValueError, OSError, yaml.YAMLError) as error:
        console.print(f"[red]error:[/red] {error}", markup=True)
        return 2
    settings = {
        "jobs": jobs or os.cpu_count() or 1,
        "cache_dir": Path(store).with_name(Path(store).name + ".cache") if use_cache else None,
    }
    result = _harvest_with_progress(plan, settings, quiet or not console.is_terminal)
    for issue in result.issues:
        if issue.level == "error" or not quiet:
            style = "red" if issue.level == "error" else "yellow"
            console.print(str(issue), markup=False, style=style, soft_wrap=True)
    meta = {
        "tool": f"lineage {__version__}",
        "dialect": profile.name,
        "default_schema": default_schema or profile.default_schema,
        "files": result.files,
        "statements": result.statements,
    }
    if result.modules:
        meta["modules"] = result.modules
    written = write_store(result.arrays if result.arrays is not None else result.graph, store, meta)
    _summary(result, written)
    return 1 if strict and result.errors else 0


def _harvest_with_progress(plan: Plan, settings: dict, quiet: bool) -> Harvest:
    if quiet:
        return harvest_plan(plan, **settings)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("harvest"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.fields[statements]} statements ({task.fields[rate]}/s), {task.fields[errors]} errors"),
    )  # fmt: skip
    with Progress(*columns, transient=True) as progress:
        task = progress.add_task("harvest", total=len(plan.units), statements=0, rate=0, errors=0)
        counts = {"statements": 0, "errors": 0}

        def advance(outcome: FileOutcome) -> None:
            counts["statements"] += outcome.statements
            counts["errors"] += sum(1 for issue in outcome.issues if issue.level == "error")
            elapsed = progress.tasks[task].elapsed or 0.0
            rate = int(counts["statements"] / elapsed) if elapsed > 0 else 0
            progress.update(task, advance=1, rate=rate, **counts)

        return harvest_plan(plan, on_file=advance, **settings)


def _summary(result: Harvest, written: WrittenStore) -> None:
    rate = result.statements / result.seconds if result.seconds else 0.0
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(result.statement_types.items()))
    cached = f", {result.cache_hits} of {result.files} files from cache" if result.cache_hits else ""
    print(
        f"harvested {result.files} files, {result.statements} statements "
        f"({result.lineage_statements} with lineage{': ' + kinds if kinds else ''}) "
        f"in {result.seconds:.2f}s ({rate:.0f} statements/s{cached})"
    )
    warnings = len(result.issues) - len(result.errors)
    print(
        f"{written.nodes} nodes, {written.edges} edges, {len(result.errors)} errors, {warnings} warnings"
        f" -> {written.path} ({written.bytes} bytes)"
    )
    sys.stdout.flush()
