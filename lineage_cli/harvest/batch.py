"""Harvest many units of SQL: in a process pool, with a cache of each unit's analysis, in three phases.

The units come from ``plan.py``: SQL files under PATHs, a flow manifest's entries, a dbt
project's models, and chunks of a query log's distinct queries (``inputs/querylog/``), each query
analysed with its own row's database and schema.  sqlglot is bound to one core by the GIL, so units
are analysed in worker processes.  Column lineage needs table schemas that other files may declare, so the work runs
in phases whose results do not depend on the number of workers:

0. every unit that holds ``CREATE TABLE`` DDL is scanned for it (the DDL layer);
1. every unit is analysed with the explicit schema plus that DDL;
2. units that left columns unresolved are analysed again once the outputs of every
   CTAS / view of the harvest are known.

Each phase's result for a unit is cached (``cache.py``) under a key of everything it depends on
(its text, its options -- variables, defaults, dialect --, the schema it saw, the tool version),
so changing one file re-parses that file.  A unit's analysis is a pure function of the unit and the phase's
schema snapshot (``analyze_unit``), so a phase may run anywhere: ``analyse`` runs it on a cluster
(``lineage_cli.spark``).  The graph is the merge of the units' shards (``shards.py``), in unit order, in
this process: statements, then what the manifest says about each step (``flows.py``), dbt's datasets,
DEFAULT links.  Each outcome is merged as soon as no later phase can change it (those before it are in, and it
left nothing unresolved), while the workers go on, and is let go: the parent of a large harvest holds its graph,
not every unit's analysis too.  When no input changed at all, the last harvest is recalled whole instead.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from lineage_cli.harvest.assemble import Harvest
from lineage_cli.harvest.cache import FileCache, HarvestMemo
from lineage_cli.harvest.inputs.plan import HarvestOptions, Plan, Unit, pairs, plan_harvest
from lineage_cli.harvest.inputs.sql_text import SqlText, read_sql_file
from lineage_cli.harvest.outcome import FileOutcome, StatementRecord, WriteRecord
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.shards import ShardFiles, merge, merge_outcomes
from lineage_cli.heap import tree_pace
from lineage_cli.model import Issue
from lineage_cli.profiles import ProfileError, load_profile

if TYPE_CHECKING:
    from lineage_cli.harvest.inputs.dbt import DbtProject
    from lineage_cli.harvest.inputs.manifest import Manifest
    from lineage_cli.harvest.sql.statements import StatementLineage

# CREATE TABLE with a column list or LIKE: plain DDL.  A CTAS (CREATE TABLE t AS SELECT) does not match,
# so the phase that looks for DDL skips the many files whose only CREATE TABLE selects rows.
_DDL_HINT = re.compile(
    rb"\bcreate\s+(?:or\s+replace\s+)?(?:\w+\s+){0,3}?table\s+(?:if\s+not\s+exists\s+)?[^\s(]+\s*(?:\(|like\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class _Task:
    unit: Unit
    ddl_only: bool = False


# How a phase's units are analysed elsewhere (``lineage_cli.spark``; a Dask or Ray user's own): the units, whether
# only for their DDL, and the phase's schema snapshot -> each unit's ``analyze_unit``, in the order of the units.
Analyse = Callable[[list[Unit], bool, SchemaCatalog | None], Iterable[FileOutcome]]

# The catalog of the running phase, set once per worker process: sending it with every task
# would pickle the whole schema once per file.
_PHASE_CATALOG: SchemaCatalog | None = None


def _set_phase_catalog(catalog: SchemaCatalog | None) -> None:
    global _PHASE_CATALOG
    _PHASE_CATALOG = catalog


def harvest(
    paths: Iterable[str | os.PathLike[str]] = (),
    dialect: str | None = None,
    default_schema: str | None = None,
    *,
    schema: SchemaCatalog | None = None,
    variables: Mapping[str, str] | None = None,
    defaults: Mapping[str, str] | None = None,
    columns: bool = True,
    jobs: int = 1,
    cache_dir: Path | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
    manifest: Manifest | None = None,
    dbt: DbtProject | None = None,
    encoding: str | None = None,
    query_logs: Iterable[str] = (),
    log_format: str | None = None,
    log_databases: bool = True,
) -> Harvest:
    """Harvest every SQL file under ``paths``, a flow ``manifest``'s steps, a ``dbt`` project and ``query_logs``
    (of ``log_format``: ``inputs/querylog/``; ``log_databases``: their rows' databases name the tables) into
    one graph.

    ``encoding`` is that of files with no byte-order mark or ``-- encoding:`` line (``sql_text.py``); ``jobs``
    is capped at the CPUs this process may use."""
    options = HarvestOptions(dialect, default_schema, pairs(variables), columns, pairs(defaults), encoding=encoding)
    plan = plan_harvest(paths, options, schema=schema, manifest=manifest, dbt=dbt)
    if log_format is not None:
        from lineage_cli.harvest.inputs.querylog.collect import add_query_logs

        add_query_logs(plan, query_logs, log_format, options, jobs=min(jobs, usable_cpus()), databases=log_databases)
    return harvest_plan(plan, jobs=jobs, cache_dir=cache_dir, on_file=on_file)


def harvest_plan(
    plan: Plan,
    *,
    jobs: int = 1,
    cache_dir: Path | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
    analyse: Analyse | None = None,
    shard_files: ShardFiles | None = None,
) -> Harvest:
    """Analyse a plan's units and assemble the graph, in unit order whatever the number of ``jobs``, or however
    ``analyse`` runs them: each unit's analysis is a shard, and the graph their merge (``shards.py``), of the
    ``shard_files`` written and read back when given (a harvest that writes shards is never recalled whole).

    With a ``cache_dir``, a harvest whose inputs are all unchanged is recalled whole (``cache.py``): no
    unit is analysed then, so ``on_file`` is not called.
    """
    started = time.perf_counter()
    cache = FileCache(cache_dir)
    digests = [_digest(unit) for unit in plan.units]
    memo = HarvestMemo(cache, plan, digests)

    def assemble(report: Callable[[FileOutcome], None] | None = None) -> Harvest:
        outcomes = harvest_units(plan.units, digests, plan.schema, jobs, cache, report, analyse)
        if shard_files is not None:
            return merge(shard_files.round_trip(plan, list(outcomes)))
        return merge_outcomes(plan, outcomes)  # each outcome merged as it comes, and let go

    result = memo.recall(rebuild=lambda: assemble().graph) if shard_files is None else None
    if result is None:
        with tree_pace():  # (the graph grows as the trees come and go: fewer full collections scan it)
            result = assemble(on_file)
            result.cache_hits = cache.hits
            memo.remember(result)
    cache.prune()
    result.cache_errors = cache.errors  # the same list: a recalled graph that is written again later adds to it
    result.seconds = time.perf_counter() - started
    return result


def harvest_units(
    units: list[Unit],
    digests: list[str],
    explicit: SchemaCatalog | None = None,
    jobs: int = 1,
    cache: FileCache | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
    analyse: Analyse | None = None,
) -> Iterator[FileOutcome]:
    """Analyse ``units`` (``digests``: their contents' ``_digest``) in this process, a process pool of ``jobs`` or
    by ``analyse``; outcomes come in the order of ``units``, each as soon as no later phase can change it, so a
    merge that takes them as they come holds only the outcomes a retry may replace, not the whole harvest's."""
    cache = cache or FileCache(None)
    pool = _Pool(jobs, cache, analyse)
    base = explicit or SchemaCatalog()
    columns = any(unit.options.columns for unit in units)
    declaring = [i for i, unit in enumerate(units) if _declares_tables(unit)]
    ddl = pool.run("ddl", [_Task(units[i], ddl_only=True) for i in declaring], [digests[i] for i in declaring], None)
    catalog = _with_learned(base, (o.learned for o in ddl if o.learned is not None)) if columns else None
    first = pool.each("p1", [_Task(unit) for unit in units], digests, catalog, on_file)
    if catalog is None:
        yield from _in_order(first, len(units))
        return
    order = _InOrder()
    learned: list[SchemaCatalog | None] = [None] * len(units)
    for index, outcome in first:
        order.add(index, outcome)
        learned[index] = outcome.learned
        yield from order.release(lambda waiting: not waiting.unresolved)
    # Phase 2 redoes what left columns unresolved, all of it still waiting, once every output is known.
    complete = _with_learned(catalog, (part for part in learned if part is not None))
    retry = sorted(index for index, outcome in order.waiting.items() if outcome.unresolved)
    if retry and complete.fingerprint() != catalog.fingerprint():
        redone = pool.run("p2", [_Task(units[i]) for i in retry], [digests[i] for i in retry], complete)
        for index, outcome in zip(retry, redone, strict=True):
            order.add(index, outcome)
    yield from order.release()
    order.check(len(units))


class _InOrder:
    """Numbered outcomes, added in any order, released in the order of their numbers: each as soon as those before
    it are out and ``ready`` lets it go."""

    def __init__(self) -> None:
        self.waiting: dict[int, FileOutcome] = {}
        self.released = 0  # the outcomes numbered below this are out

    def add(self, index: int, outcome: FileOutcome) -> None:
        self.waiting[index] = outcome

    def release(self, ready: Callable[[FileOutcome], bool] = lambda _: True) -> Iterator[FileOutcome]:
        while self.released in self.waiting and ready(self.waiting[self.released]):
            yield self.waiting.pop(self.released)
            self.released += 1

    def check(self, count: int) -> None:
        """Every one of ``count`` outcomes came, each once: a pool that lost one is a bug, not bad input."""
        if self.released != count:
            raise RuntimeError(f"{count - self.released} of {count} units have no outcome")


def _in_order(outcomes: Iterable[tuple[int, FileOutcome]], count: int) -> Iterator[FileOutcome]:
    """``count`` numbered outcomes, in any order, yielded in the order of their numbers as soon as each can be."""
    order = _InOrder()
    for index, outcome in outcomes:
        order.add(index, outcome)
        yield from order.release()
    order.check(count)


def _with_learned(base: SchemaCatalog, learned: Iterable[SchemaCatalog]) -> SchemaCatalog:
    combined = base.copy()
    for part in learned:
        combined.absorb(part)
    return combined


class _Pool:
    """Runs one phase's tasks through the cache: in this process for one job, else in a process pool, or by
    ``analyse``."""

    def __init__(self, jobs: int, cache: FileCache, analyse: Analyse | None = None) -> None:
        # More workers than CPUs only add memory (a parser each): the work is CPU bound.
        self.jobs, self.cache, self.analyse = max(1, min(jobs, usable_cpus())), cache, analyse

    def run(
        self, phase: str, tasks: list[_Task], digests: list[str], catalog: SchemaCatalog | None
    ) -> list[FileOutcome]:
        """The phase's outcomes, in the order of its tasks."""
        return list(_in_order(self.each(phase, tasks, digests, catalog), len(tasks)))

    def each(
        self,
        phase: str,
        tasks: list[_Task],
        digests: list[str],
        catalog: SchemaCatalog | None,
        on_file: Callable[[FileOutcome], None] | None = None,
    ) -> Iterator[tuple[int, FileOutcome]]:
        """Each task's outcome with its index, as it comes: those the cache holds first, then the others in order."""
        schema = catalog.fingerprint() if catalog is not None else ""
        keys = [_key(phase, task, digest, schema) for task, digest in zip(tasks, digests, strict=True)]
        missing = []
        for index, key in enumerate(keys):
            cached = self.cache.get(key, count=phase == "p1")
            if cached is None:
                missing.append(index)
                continue
            if on_file:
                on_file(cached)
            yield index, cached
        for index, outcome in zip(missing, self._map([tasks[i] for i in missing], catalog), strict=True):
            self.cache.put(keys[index], outcome)
            if on_file:
                on_file(outcome)
            yield index, outcome

    def _map(self, tasks: list[_Task], catalog: SchemaCatalog | None) -> Iterator[FileOutcome]:
        if self.analyse is not None and tasks:
            yield from self.analyse([task.unit for task in tasks], tasks[0].ddl_only, catalog)  # a phase's are alike
            return
        if self.jobs == 1 or len(tasks) < 2:
            _set_phase_catalog(catalog)
            yield from map(analyze_file, tasks)
            return
        from concurrent.futures import ProcessPoolExecutor

        import lineage_cli.harvest.sql.script  # noqa: F401 - before the fork: each worker inherits the parser, not imports it

        workers = min(self.jobs, len(tasks))
        chunk = max(1, min(16, len(tasks) // (workers * 4)))
        with ProcessPoolExecutor(workers, initializer=_set_phase_catalog, initargs=(catalog,)) as executor:
            outcomes = executor.map(analyze_file, tasks, chunksize=chunk)
            if self.cache.directory is not None:
                # The cache keeps the graph as the store's arrays: their numpy is imported while the workers
                # parse, not after them, when this process alone would be at work.
                import lineage_cli.store.arrays  # noqa: F401
            yield from outcomes


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask (a container's or ``taskset``'s share) where the
    system keeps one, else all of them."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _key(phase: str, task: _Task, content: str, schema: str) -> str:
    target = query_target(task.unit) or ""
    material = "\0".join((phase, task.unit.display, content, task.unit.options.fingerprint(), schema, target))
    return hashlib.sha256(material.encode()).hexdigest()


def query_target(unit: Unit) -> str | None:
    """Where the unit's query writes when it writes nowhere itself: its manifest step's target, if it declares
    exactly one (a scheduler's query job and its destination table)."""
    targets = unit.step.targets if unit.step is not None else None
    return targets[0] if targets is not None and len(targets) == 1 else None


def _digest(unit: Unit) -> str:
    """The digest of the unit's content: its part of the cache keys."""
    data = _content(unit)
    return hashlib.sha256(data).hexdigest() if data is not None else "unreadable"


def _declares_tables(unit: Unit) -> bool:
    """Whether the unit may hold DDL, by a look at its text (read again: only a harvest that analyses asks).

    Searched as bytes: a bytes pattern runs twice as fast as the same ``str`` one, which ignores case the Unicode
    way.  The file's own bytes are searched where its keywords are ASCII bytes (UTF-8, Latin-1 and the like: no NUL
    byte, no encoding given that writes ASCII otherwise), which spares decoding every file a second time; a UTF-16
    or UTF-32 file's keywords are found in its text, and so are those of a file of ``--encoding cp500``."""
    data = _content(unit) if unit.text is None and not unit.queries else None
    if data is not None and b"\0" not in data and _writes_ascii_as_ascii(unit.options.encoding):
        return _DDL_HINT.search(data) is not None
    try:
        return _DDL_HINT.search(_text(unit).text.encode()) is not None
    except OSError:
        return False  # its analysis reports why


@functools.cache
def _writes_ascii_as_ascii(encoding: str | None) -> bool:
    """Whether text in ``encoding`` (None: UTF-8 unless the file says otherwise) has SQL's keywords as ASCII bytes."""
    sample = "CREATE TABLE t (a INT) LIKE"
    try:
        return encoding is None or sample.encode(encoding) == sample.encode("ascii")
    except (LookupError, UnicodeError):
        return False  # its analysis reports an unknown encoding


def _content(unit: Unit) -> bytes | None:
    """The unit's bytes, None when its file cannot be read (its analysis reports why)."""
    if unit.queries:
        return repr(unit.queries).encode()
    if unit.text is not None:
        return unit.text.encode()
    try:
        with open(str(unit.path), "rb") as file:
            return file.read()
    except OSError:
        return None


def _text(unit: Unit) -> SqlText:
    """The unit's SQL: inline, or its file's (``sql_text.py``); ``OSError`` when the file cannot be read."""
    if unit.queries:
        return SqlText(";\n".join(query.sql for query in unit.queries))
    if unit.text is not None:
        return SqlText(unit.text)
    return read_sql_file(str(unit.path), unit.display, unit.options.encoding)


def analyze_file(task: _Task) -> FileOutcome:
    """A pool worker's task: its unit analysed with the phase's catalog."""
    return analyze_unit(task.unit, _PHASE_CATALOG, task.ddl_only)


def analyze_unit(unit: Unit, catalog: SchemaCatalog | None, ddl_only: bool = False) -> FileOutcome:
    """One unit's lineage given a schema snapshot (``catalog``; None: no column analysis), or, with ``ddl_only``,
    the tables its DDL declares: a pure function of its arguments (and, for a unit with a path, of that file).
    A failure costs that unit only."""
    try:
        return _analyze_unit(unit, catalog, ddl_only)
    except ProfileError as error:  # a `-- dialect: NAME` line naming no dialect
        return FileOutcome(unit.display, issues=[Issue(unit.display, 1, str(error))])
    except Exception as error:  # noqa: BLE001 - one odd file must not end the harvest
        from lineage_cli.harvest.sql.messages import internal_error  # sqlglot, which analysing the unit imported

        message = internal_error(error, "this file")
        return FileOutcome(unit.display, issues=[Issue(unit.display, 1, message)])


def _analyze_unit(unit: Unit, phase_catalog: SchemaCatalog | None, ddl_only: bool) -> FileOutcome:
    if unit.queries:
        return _analyze_queries(unit, phase_catalog, ddl_only)
    # The parser's modules are imported by the units that are analysed: a harvest that recalls its result needs none.
    from lineage_cli.harvest.sql.script import analyze_template

    options = unit.options
    outcome = FileOutcome(unit.display)
    try:
        read = _text(unit)
    except OSError as error:
        outcome.issues.append(Issue(unit.display, 1, f"cannot read file: {error}"))
        return outcome
    sql = read.text
    if ddl_only:
        outcome.learned = _scan_ddl(sql, options)
        return outcome
    catalog = phase_catalog.copy(journal=True) if phase_catalog is not None and options.columns else None
    script = analyze_template(
        sql,
        unit.display,
        options.dialect,
        options.default_schema,
        catalog=catalog,
        variables=dict(options.variables),
        defaults=dict(options.defaults),
        relations=dict(options.relations),
        macros=options.macros,
        default_database=options.default_database,
        query_target=query_target(unit),
    )
    outcome.statements, outcome.defaults = script.statements, script.defaults
    outcome.issues = [*read.warnings, *script.issues]
    outcome.lineage = [_record(statement) for statement in script.lineage]
    if catalog is not None:
        outcome.learned = catalog.learned()
    return outcome


def _analyze_queries(unit: Unit, catalog: SchemaCatalog | None, ddl_only: bool) -> FileOutcome:
    """A chunk of a query log: each query analysed as a unit of its own, with its row's database and schema,
    its statements and issues at its row's line (``FILE:LINE`` names the log row)."""
    merged = FileOutcome(unit.display, learned=SchemaCatalog() if unit.options.columns else None)
    for query in unit.queries:
        schema = query.schema or unit.options.default_schema
        options = replace(unit.options, default_schema=schema, default_database=query.database)
        outcome = analyze_unit(Unit(unit.display, options, text=query.sql), catalog, ddl_only)
        merged.statements += outcome.statements
        merged.issues += [_at_row(issue, query.line) for issue in outcome.issues]
        merged.lineage += [replace(statement, line=query.line) for statement in outcome.lineage]
        merged.defaults.update(outcome.defaults)
        if outcome.learned is not None and merged.learned is not None:
            merged.learned.absorb(outcome.learned)
    return merged


def _at_row(issue: Issue, row: int) -> Issue:
    """An issue of a logged query at its log row, saying where in the query it is when that is not its start."""
    inside = f" (line {issue.line} of the query)" if issue.line > 1 else ""
    return issue._replace(line=row, col=None, message=issue.message + inside)


def _record(statement: StatementLineage) -> StatementRecord:
    """A statement's lineage as the cache keeps it, column edges as plain tuples."""
    writes = [WriteRecord(w.target, w.sources, w.is_view) for w in statement.writes]
    columns = [(e.source, e.target, e.kind, e.subtype) for e in statement.columns]
    return StatementRecord(
        statement.line,
        statement.type,
        writes,
        columns,
        statement.target_columns,
        statement.approximate,
        statement.expressions,
        statement.sql,
        statement.dialect,
    )


def _scan_ddl(sql: str, options: HarvestOptions) -> SchemaCatalog:
    """The tables declared by the ``CREATE TABLE`` statements of ``sql`` (nothing else is parsed)."""
    from lineage_cli.harvest.sql.observe import observe
    from lineage_cli.harvest.sql.script import file_dialect  # the parser, as in ``_analyze_unit``
    from lineage_cli.harvest.sql.split import parse_script
    from lineage_cli.harvest.sql.statements import Context, apply_use
    from lineage_cli.harvest.templates.placeholders import render

    profile = load_profile(file_dialect(sql) or options.dialect)
    ctx = Context(profile, default_schema=options.default_schema, default_database=options.default_database)
    catalog = SchemaCatalog()
    # Rendered like the analysis renders it, so a table declared under a placeholder has the same token name.
    variables, relations = dict(options.variables), dict(options.relations)
    text = render(sql, variables, relations, options.macros, profile.placeholder_styles).text
    statements = parse_script(
        text,
        profile.sqlglot_dialect,
        keep=_is_ddl_or_use,
        optional_semicolons=profile.optional_semicolons,
        client_commands=profile.client_commands,
        unread_statements=profile.unread_statements,
    )
    for parsed in statements:
        if parsed.expression is not None:
            if parsed.expression.key == "use":
                apply_use(parsed.expression, ctx)  # type: ignore[arg-type] - a Use, by its key
            else:
                observe(catalog, parsed.expression, None, ctx)
    return catalog.learned_since(SchemaCatalog())


def _is_ddl_or_use(words: list[str]) -> bool:
    """Keep ``USE db`` and ``CREATE ... TABLE`` chunks that do not select rows."""
    if words[:1] == ["USE"]:
        return True
    return words[:1] == ["CREATE"] and "TABLE" in words[:6] and "SELECT" not in words and "AS" not in words[:12]
