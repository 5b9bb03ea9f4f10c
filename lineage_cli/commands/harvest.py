"""``lineage harvest``: harvest with a progress bar, report issues, write the store -- unless it is up to date.

The store's meta JSON records, besides counts, what a flow manifest says about each module
(``modules``: workflow, rows, frequency, sql_file, the manifest entry), for the emitters, and
``harvest_key``: the digest of every input of the harvest (``cache.py``), when it ran with a cache.
Like make with nothing to rebuild, a re-run that recalls its harvest from the cache leaves a store
that already holds it as it is: the meta it would write, with the same key, and a graph of the
size the memo recorded (a store that ``lineage import`` merged edges into has more).  It still
reports every issue and the summary, and imports neither sqlglot nor numpy.  A harvest that finds
nothing to read (no ``*.sql`` under its PATHs, an empty manifest) exits 2 and leaves the store as it
is, unless ``--allow-empty``: an empty store in place of a full one is a mistake far more often than not.

A harvest holds the store's write lock (``store/lock.py``) from before it reads the cache until the
store is written.  A store that cannot be written is an error (exit 2) that leaves the old store;
a cache that cannot be written is a warning, and the store is written all the same.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from lineage_cli import __version__
from lineage_cli.errors import LineageError, StoreError
from lineage_cli.harvest import quiet_sqlglot
from lineage_cli.harvest.assemble import Harvest, StoredGraph
from lineage_cli.harvest.batch import FileOutcome, harvest_plan, usable_cpus
from lineage_cli.harvest.inputs.plan import HarvestOptions, Plan, pairs, plan_harvest
from lineage_cli.harvest.inputs.querylog.collect import LogCounts, add_query_logs, log_dialect
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.shards import ShardFiles, store_settings
from lineage_cli.harvest.templates.placeholders import VarsError, read_vars_file
from lineage_cli.model import Issue
from lineage_cli.profiles import DialectProfile, load_profile
from lineage_cli.store.lock import store_lock
from lineage_cli.store.reader import open_store
from lineage_cli.terminal import plain_console

if TYPE_CHECKING:
    from rich.console import Console

    from lineage_cli.harvest.inputs.dbt import DbtProject
    from lineage_cli.harvest.inputs.manifest import Manifest


class _Stored(NamedTuple):
    """The store after a harvest: written now, or found up to date."""

    path: Path
    nodes: int
    edges: int
    bytes: int
    up_to_date: bool


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
            raise VarsError(f"--var expects NAME=VALUE, got {pair!r}")
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
    manifest_root: str | None = None,
    dbt_path: str | None = None,
    query_logs: tuple[str, ...] = (),
    log_format: str | None = None,
    log_databases: bool = True,
    jobs: int | None = None,
    use_cache: bool = True,
    columns: bool = True,
    strict: bool = False,
    quiet: bool = False,
    encoding: str | None = None,
    allow_empty: bool = False,
    wait: bool = True,
    shards: str | None = None,
    engine: str = "local",
    master: str | None = None,
) -> int:
    console = plain_console(stderr=True)
    quiet_sqlglot()
    result: Harvest | None = None  # once harvested, its cache errors are told whatever becomes of the store
    try:
        schema = SchemaCatalog.from_file(schema_file) if schema_file else None
        variables, defaults = load_template_values(var_pairs, var_files)
        manifest = _load_manifest(manifest_file, manifest_root)
        dbt = _load_dbt(dbt_path, dialect, manifest_root, encoding)
        logged = log_dialect(log_format, dialect) if log_format else None
        sources = (manifest.dialect if manifest else None, dbt.dialect if dbt else None, logged)
        profile = load_profile(dialect or next((name for name in sources if name), None))
        options = HarvestOptions(dialect, default_schema, pairs(variables), columns, pairs(defaults), encoding=encoding)
        plan = plan_harvest(paths, options, schema=schema, manifest=manifest, dbt=dbt)
        cpus = usable_cpus()
        readers = min(jobs or cpus, cpus)
        progress = not (quiet or not console.is_terminal)
        read = (plan, query_logs, log_format, options, readers, log_databases)
        logs = _read_logs(*read, progress=progress) if log_format else None
        if not (plan.units or plan.bare_steps or plan.datasets or allow_empty):
            report_issues(console, plan.issues, quiet=False)  # why: an unlistable folder, a bad manifest entry
            _report_error(console, _nothing_found(paths, manifest_file, dbt_path, query_logs))
            return 2  # before the store is written: the last harvest's store stays as it is
        if jobs is not None and jobs > cpus and not quiet:
            note = f"note: --jobs {jobs} capped at {cpus}, the CPUs this process may use"
            console.print(note, markup=False, soft_wrap=True)
        described = _settings(profile, default_schema, manifest)
        settings = {
            "jobs": jobs or cpus,  # the pool caps it at cpus
            "cache_dir": Path(store).with_name(Path(store).name + ".cache") if use_cache else None,
            "shard_files": ShardFiles(Path(shards), described) if shards is not None else None,
        }
        with store_lock(store, wait):  # from before the cache is read until the store is written
            if engine == "spark":
                result = _harvest_on_spark(plan, settings, master, quiet)
            else:
                result = _harvest_with_progress(plan, settings, quiet or not console.is_terminal)
            report_issues(console, result.issues, quiet)
            stored = store_harvest(result, store, store_meta(result, described))
    except StoreError as error:  # the lock not taken, the store not written: the last store stays as it is
        if result is not None:
            _report_cache_errors(result, quiet)
        print(f"lineage: error: {error}", file=sys.stderr)
        return error.exit_code
    except LineageError as error:  # an input that cannot be used: nothing is harvested
        _report_error(console, str(error))
        return error.exit_code
    _report_cache_errors(result, quiet)
    _summary(result, stored, logs)
    if dbt is None and not quiet and (project := _dbt_project_in(paths)) is not None:
        hint = f"`lineage harvest --dbt {project}` reads its models as the tables they build"
        console.print(f"note: {project} is a dbt project: {hint}", markup=False)
    return 1 if strict and result.errors else 0


def report_issues(console: Console, issues: list[Issue], quiet: bool) -> None:
    for issue in issues:
        if issue.level == "error" or not quiet:
            style = "red" if issue.level == "error" else "yellow"
            console.print(str(issue), markup=False, style=style, soft_wrap=True)


def _report_error(console: Console, message: str) -> None:
    from rich.text import Text

    console.print(Text.assemble(("error:", "red"), f" {message}"), soft_wrap=True)  # one line, however long


def _nothing_found(paths: tuple[str, ...], manifest: str | None, dbt: str | None, logs: tuple[str, ...] = ()) -> str:
    """The error of a harvest that found nothing to read, naming where it looked."""
    searched = [f"no *.sql file under {', '.join(paths)}"] if paths else []
    if logs:
        searched.append(f"no query that completed in {', '.join(logs)}")
    if manifest is not None:
        searched.append(f"no entry to harvest in {manifest}")
    if dbt is not None:
        searched.append(f"no model, source or seed in {dbt}")
    return f"nothing to harvest: {'; '.join(searched)} (--allow-empty writes an empty store)"


def _report_cache_errors(result: Harvest, quiet: bool) -> None:
    """Why the cache could not be written: a warning, as the store does not depend on it."""
    for message in result.cache_errors if not quiet else ():
        print(f"lineage: warning: {message} (the harvest goes on without it)", file=sys.stderr)


def _dbt_project_in(paths: tuple[str, ...]) -> str | None:
    """A dbt project among ``paths`` or above one: its models are plain SELECTs, which a harvest stores no
    lineage for."""
    for path in map(Path, paths):
        for folder in (path, *path.resolve().parents[:3]):
            if (folder / "dbt_project.yml").is_file():
                return str(folder)
    return None


def _load_manifest(path: str | None, root: str | None) -> Manifest | None:
    if path is None:
        return None
    from lineage_cli.harvest.inputs.manifest import load_manifest  # yaml: only a harvest with a manifest pays for it

    return load_manifest(path, root)


def _load_dbt(path: str | None, dialect: str | None, root: str | None, encoding: str | None) -> DbtProject | None:
    if path is None:
        return None
    from lineage_cli.harvest.inputs.dbt import load_dbt  # sqlglot: only a harvest of a dbt project pays for it up front

    return load_dbt(path, dialect, root=root, encoding=encoding)


def _read_logs(
    plan: Plan,
    paths: tuple[str, ...],
    log_format: str,
    options: HarvestOptions,
    jobs: int,
    databases: bool,
    *,
    progress: bool,
) -> LogCounts:
    """The query logs' distinct queries into ``plan`` (``jobs`` processes read a log that can be read in
    stretches), with a bar of the bytes read (rows, for standard input)."""
    if not progress:
        return add_query_logs(plan, paths, log_format, options, jobs=jobs, databases=databases)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    sizes = {path: _size(path) for path in paths if path != "-"}
    columns = (
        TextColumn("read {task.fields[log]}"),
        BarColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[rows]} rows"),
    )
    with Progress(*columns, transient=True) as progress:
        task = progress.add_task("read", total=sum(sizes.values()) or None, log="", rows=0)
        done: dict[str, int] = {}

        def advance(log: str, position: int, rows: int) -> None:
            done[log] = position
            progress.update(task, completed=sum(done.values()), log=log, rows=rows)

        return add_query_logs(plan, paths, log_format, options, advance, jobs, databases)


def _size(path: str) -> int:
    """A log's size for the progress bar; 0 when it is gone (reading it then says why)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


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


def _harvest_on_spark(plan: Plan, settings: dict, master: str | None, quiet: bool) -> Harvest:
    """The plan's units analysed by a Spark job (``lineage_cli.spark``), its shards written (to a folder of their
    own unless ``--shards`` names one) and merged."""
    import tempfile

    from lineage_cli.spark import analyser, session  # pyspark: only a harvest on Spark imports it

    with session(master, quiet) as spark, tempfile.TemporaryDirectory(prefix="lineage-shards-") as folder:
        shard_files = settings["shard_files"] or ShardFiles(Path(folder), {})
        return harvest_plan(plan, **(settings | {"shard_files": shard_files, "analyse": analyser(spark)}))


def _settings(profile: DialectProfile, default_schema: str | None, manifest: Manifest | None) -> dict[str, object]:
    """What the store's meta says of how it was harvested (and the manifest's namespaces): a harvest's shards carry
    it to ``lineage merge``."""
    settings = store_settings(profile, default_schema)
    if manifest is not None and (manifest.namespace or manifest.namespaces):  # for `lineage export`
        settings["namespaces"] = {"default": manifest.namespace, "schemas": manifest.namespaces}
    return settings


def store_meta(result: Harvest, settings: dict[str, object]) -> dict[str, object]:
    """The store's meta JSON: the tool, the harvest's ``settings``, its counts, modules and key."""
    meta: dict[str, object] = {
        "tool": f"lineage {__version__}",
        "dialect": settings["dialect"],
        "default_schema": settings["default_schema"],
        "files": result.files,
        "statements": result.statements,
    }
    if result.modules:
        meta["modules"] = result.modules
    if result.key is not None:
        meta["harvest_key"] = result.key
    if "namespaces" in settings:
        meta["namespaces"] = settings["namespaces"]
    return meta


def store_harvest(result: Harvest, path: str, meta: dict[str, object]) -> _Stored:
    """Write the store, unless the harvest was recalled and the store already holds it."""
    if result.recalled is not None:
        current = _up_to_date(path, meta, result.recalled)
        if current is not None:
            return current
    from lineage_cli.store.writer import write_store  # numpy: only a harvest that writes a store pays for it

    written = write_store(result.arrays if result.arrays is not None else result.graph, path, meta)
    return _Stored(written.path, written.nodes, written.edges, written.bytes, up_to_date=False)


def _up_to_date(path: str, meta: dict[str, object], graph: StoredGraph) -> _Stored | None:
    """The store at ``path`` when it holds the recalled harvest: its meta (with the harvest's key) as this run
    would write it, its graph of the recalled size.  None when it does not, or is missing or unreadable."""
    try:
        existing = open_store(path)
        same = existing.meta == json.loads(json.dumps(meta))  # as the store keeps it: JSON
        size = existing.header.file_size
    except (StoreError, OSError, ValueError):
        return None
    if not same or (existing.node_count, existing.edge_count) != (graph.nodes, graph.edges):
        return None
    return _Stored(Path(path), graph.nodes, graph.edges, size, up_to_date=True)


def _summary(result: Harvest, stored: _Stored, logs: LogCounts | None) -> None:
    rate = result.statements / result.seconds if result.seconds else 0.0
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(result.statement_types.items()))
    if result.approximate_statements:
        kinds += f"; {result.approximate_statements} read approximately"
    cached = f", {result.cache_hits} of {result.files} files from cache" if result.cache_hits else ""
    files = f"{result.files} files" if logs is None else f"{result.files - logs.units} files, {logs.units} log chunks"
    if logs is not None:
        print(
            f"read {logs.rows} query log rows: {logs.failed} failed queries and {logs.bad} bad rows skipped, "
            f"{logs.distinct} distinct statements"
        )
    print(
        f"harvested {files}, {result.statements} statements "
        f"({result.lineage_statements} with lineage{': ' + kinds if kinds else ''}) "
        f"in {result.seconds:.2f}s ({rate:.0f} statements/s{cached})"
    )
    warnings = len(result.issues) - len(result.errors)
    state = ", up to date" if stored.up_to_date else ""
    print(
        f"{stored.nodes} nodes, {stored.edges} edges, {len(result.errors)} errors, {warnings} warnings"
        f" -> {stored.path} ({stored.bytes} bytes{state})"
    )
    sys.stdout.flush()
