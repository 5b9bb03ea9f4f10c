"""Harvest many files: in a process pool, with a per-file cache, in three phases.

sqlglot is bound to one core by the GIL, so files are analysed in worker processes.
Column lineage needs table schemas that other files may declare, so the work runs in
phases whose results do not depend on the number of workers:

0. every file that holds ``CREATE TABLE`` DDL is scanned for it (the DDL layer);
1. every file is analysed with the explicit schema plus that DDL;
2. files that left columns unresolved are analysed again once the outputs of every
   CTAS / view of the harvest are known.

Each phase's result for a file is cached under a key of everything it depends on (file
content, options, the schema it saw, the tool version), so re-harvesting an unchanged
warehouse reads pickles instead of parsing, and changing one file re-parses that file.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from lineage_cli import __version__
from lineage_cli.harvest.columns import ColumnEdge
from lineage_cli.harvest.harvester import Harvest, add_script, analyze_script, display_path, file_dialect, sql_files
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.split import parse_script
from lineage_cli.harvest.statements import Context
from lineage_cli.harvest.templates import substitute
from lineage_cli.model import Issue
from lineage_cli.profiles import load_profile

_DDL_HINT = re.compile(rb"\bcreate\s+(?:or\s+replace\s+)?(?:\w+\s+){0,3}?table\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class HarvestOptions:
    """Everything besides the SQL text and the schema that changes a file's lineage."""

    dialect: str | None = None
    default_schema: str | None = None
    variables: tuple[tuple[str, str], ...] = ()
    columns: bool = True

    def fingerprint(self) -> str:
        return repr((self.dialect, self.default_schema, self.variables, self.columns, __version__))


@dataclass(slots=True)
class WriteRecord:
    target: str
    sources: list[str]
    is_view: bool


@dataclass(slots=True)
class StatementRecord:
    """A statement's lineage without its syntax tree: small to pickle and to cache."""

    line: int
    type: str
    writes: list[WriteRecord]
    columns: list[ColumnEdge] = field(default_factory=list)


@dataclass(slots=True)
class FileOutcome:
    file: str
    statements: int = 0
    issues: list[Issue] = field(default_factory=list)
    lineage: list[StatementRecord] = field(default_factory=list)
    learned: SchemaCatalog | None = None  # what the file taught the catalog (DDL, CTAS/view outputs)

    @property
    def unresolved(self) -> bool:
        return any(issue.level == "warning" for issue in self.issues)


@dataclass(frozen=True, slots=True)
class _Task:
    path: str
    display: str
    options: HarvestOptions
    ddl_only: bool = False


# The catalog of the running phase, set once per worker process: sending it with every task
# would pickle the whole schema once per file.
_PHASE_CATALOG: SchemaCatalog | None = None


def _set_phase_catalog(catalog: SchemaCatalog | None) -> None:
    global _PHASE_CATALOG
    _PHASE_CATALOG = catalog


class FileCache:
    """Pickled per-file results in a directory, written atomically, pruned to what a run used."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.used: set[str] = set()
        self.hits = 0

    def get(self, key: str, count: bool = True) -> object | None:
        """The cached value, or None; ``count`` says whether a hit counts as a file served from cache."""
        self.used.add(key)
        if self.directory is None:
            return None
        try:
            value = pickle.loads((self.directory / key).read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
            return None
        self.hits += count
        return value

    def put(self, key: str, value: object) -> None:
        if self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp.")
        with os.fdopen(handle, "wb") as out:
            pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, self.directory / key)

    def prune(self) -> None:
        """Drop entries this run did not use: they belong to files or schemas that are gone."""
        if self.directory is None or not self.directory.is_dir():
            return
        for entry in self.directory.iterdir():
            if entry.name not in self.used:
                entry.unlink(missing_ok=True)


def harvest(
    paths: Iterable[str | os.PathLike[str]],
    dialect: str | None = None,
    default_schema: str | None = None,
    *,
    schema: SchemaCatalog | None = None,
    variables: dict[str, str] | None = None,
    columns: bool = True,
    jobs: int = 1,
    cache_dir: Path | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
) -> Harvest:
    """Harvest every SQL file under ``paths`` into one graph (files in path order)."""
    started = time.perf_counter()
    options = HarvestOptions(dialect, default_schema, tuple(sorted((variables or {}).items())), columns)
    cache = FileCache(cache_dir)
    outcomes = harvest_files(sql_files(paths), options, schema, jobs, cache, on_file)
    result = Harvest()
    for outcome in outcomes:
        add_script(result, outcome.statements, outcome.issues, outcome.file, outcome.lineage)
    cache.prune()
    result.cache_hits = cache.hits
    result.seconds = time.perf_counter() - started
    return result


def harvest_files(
    files: list[Path],
    options: HarvestOptions,
    explicit: SchemaCatalog | None = None,
    jobs: int = 1,
    cache: FileCache | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
) -> list[FileOutcome]:
    """Analyse ``files``; outcomes come back in the order of ``files``."""
    cache = cache or FileCache(None)
    scans = {str(path): _scan(path) for path in files}
    contents = {path: digest for path, (digest, _) in scans.items()}
    pool = _Pool(jobs, contents, cache)
    base = explicit or SchemaCatalog()
    ddl_files = [path for path in files if scans[str(path)][1]]
    ddl = pool.run("ddl", _tasks(ddl_files, options, ddl_only=True), None)
    catalog = _with_learned(base, (o.learned for o in ddl if o.learned is not None)) if options.columns else None
    outcomes = pool.run("p1", _tasks(files, options), catalog, on_file)
    if catalog is None:
        return outcomes
    complete = _with_learned(catalog, (o.learned for o in outcomes if o.learned is not None))
    retry = [i for i, outcome in enumerate(outcomes) if outcome.unresolved]
    if retry and complete.fingerprint() != catalog.fingerprint():
        redone = pool.run("p2", _tasks([files[i] for i in retry], options), complete)
        for index, outcome in zip(retry, redone, strict=True):
            outcomes[index] = outcome
    return outcomes


def _tasks(files: list[Path], options: HarvestOptions, ddl_only: bool = False) -> list[_Task]:
    return [_Task(str(path), display_path(path), options, ddl_only) for path in files]


def _with_learned(base: SchemaCatalog, learned: Iterable[SchemaCatalog]) -> SchemaCatalog:
    combined = base.copy()
    for part in learned:
        combined.absorb(part)
    return combined


class _Pool:
    """Runs one phase's tasks through the cache: in this process for one job, else in a process pool."""

    def __init__(self, jobs: int, contents: dict[str, str], cache: FileCache) -> None:
        self.jobs, self.contents, self.cache = max(1, jobs), contents, cache

    def run(
        self,
        phase: str,
        tasks: list[_Task],
        catalog: SchemaCatalog | None,
        on_file: Callable[[FileOutcome], None] | None = None,
    ) -> list[FileOutcome]:
        schema = catalog.fingerprint() if catalog is not None else ""
        keys = [_key(phase, task, self.contents[task.path], schema) for task in tasks]
        results: list[FileOutcome | None] = [self.cache.get(key, count=phase == "p1") for key in keys]  # type: ignore[misc]
        for result in results:
            if result is not None and on_file:
                on_file(result)
        missing = [i for i, result in enumerate(results) if result is None]
        for index, outcome in zip(missing, self._map([tasks[i] for i in missing], catalog), strict=True):
            results[index] = outcome
            self.cache.put(keys[index], outcome)
            if on_file:
                on_file(outcome)
        return results  # type: ignore[return-value]

    def _map(self, tasks: list[_Task], catalog: SchemaCatalog | None) -> Iterator[FileOutcome]:
        if self.jobs == 1 or len(tasks) < 2:
            _set_phase_catalog(catalog)
            yield from map(analyze_file, tasks)
            return
        chunk = max(1, min(16, len(tasks) // (self.jobs * 4)))
        with ProcessPoolExecutor(self.jobs, initializer=_set_phase_catalog, initargs=(catalog,)) as executor:
            yield from executor.map(analyze_file, tasks, chunksize=chunk)


def _key(phase: str, task: _Task, content: str, schema: str) -> str:
    material = "\0".join((phase, task.display, content, task.options.fingerprint(), schema))
    return hashlib.sha256(material.encode()).hexdigest()


def _scan(path: Path) -> tuple[str, bool]:
    """The file's content digest (the cache key) and whether it may declare tables, from one read."""
    try:
        data = path.read_bytes()
    except OSError:
        return "unreadable", False
    return hashlib.sha256(data).hexdigest(), _DDL_HINT.search(data) is not None


def analyze_file(task: _Task) -> FileOutcome:
    """One file's lineage (or, with ``ddl_only``, the tables its DDL declares)."""
    outcome = FileOutcome(task.display)
    try:
        sql = Path(task.path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        outcome.issues.append(Issue(task.display, 1, f"cannot read file: {error}"))
        return outcome
    sql = substitute(sql, dict(task.options.variables))
    if task.ddl_only:
        outcome.learned = _scan_ddl(sql, task.options)
        return outcome
    catalog = _PHASE_CATALOG.copy() if _PHASE_CATALOG is not None else None
    before = catalog.copy() if catalog is not None else None
    script = analyze_script(sql, task.display, task.options.dialect, task.options.default_schema, catalog=catalog)
    outcome.statements, outcome.issues = script.statements, script.issues
    outcome.lineage = [
        StatementRecord(s.line, s.type, [WriteRecord(w.target, w.sources, w.is_view) for w in s.writes], s.columns)
        for s in script.lineage
    ]
    if catalog is not None and before is not None:
        outcome.learned = catalog.learned_since(before)
    return outcome


def _scan_ddl(sql: str, options: HarvestOptions) -> SchemaCatalog:
    """The tables declared by the ``CREATE TABLE`` statements of ``sql`` (nothing else is parsed)."""
    profile = load_profile(file_dialect(sql) or options.dialect)
    ctx = Context(profile, default_schema=options.default_schema)
    catalog = SchemaCatalog()
    for parsed in parse_script(sql, profile.sqlglot_dialect, keep=_is_ddl_or_use):
        if parsed.expression is not None:
            if parsed.expression.key == "use":
                ctx.default_schema = ctx.fold(parsed.expression.this.args.get("this")) or ctx.default_schema
            else:
                catalog.observe(parsed.expression, None, ctx)
    return catalog.learned_since(SchemaCatalog())


def _is_ddl_or_use(words: list[str]) -> bool:
    """Keep ``USE db`` and ``CREATE ... TABLE`` chunks that do not select rows."""
    if words[:1] == ["USE"]:
        return True
    return words[:1] == ["CREATE"] and "TABLE" in words[:6] and "SELECT" not in words and "AS" not in words[:12]
