"""What a harvest reads: SQL files under PATHs, a flow manifest's entries, a dbt project's models (and the
chunks of a query log, which ``inputs/querylog/collect.py`` adds to a plan).

A ``Unit`` is one SQL text (a file read by a worker, or inline SQL: a manifest's ``sql``, a dbt
model) with the ``HarvestOptions`` that shape its result: dialect, variables, defaults, dbt
relations.  The options are part of the unit's cache key, so an entry's own ``vars`` or dialect
re-parse its file when they change.  A unit may carry the ``Step`` its manifest declares; a step
with no SQL at all is kept apart, its declared lineage is all there is.

Precedence: variables and defaults from the command line win over a manifest entry's, which win
over the manifest's (``vars_file``, then ``vars``); they win over a dbt project's ``vars`` too.  The
dialect is a file's ``-- dialect:`` line, else the entry's, else ``--dialect``, else the manifest's; a
dbt model's is its adapter's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from lineage_cli import __version__
from lineage_cli.harvest.flows import Step, declared_name
from lineage_cli.harvest.inputs.files import display_path, sql_files
from lineage_cli.harvest.inputs.querylog.runs import LogQuery, QueryRuns
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.templates.macro_file import MacroFile
from lineage_cli.harvest.templates.placeholders import substitute
from lineage_cli.model import Issue, Provenance
from lineage_cli.profiles import DialectProfile, ProfileError, load_profile

if TYPE_CHECKING:  # a plan reads what they loaded: dbt's loader imports sqlglot, the manifest's yaml
    from lineage_cli.harvest.inputs.dbt import DbtProject
    from lineage_cli.harvest.inputs.manifest import Entry, Manifest

Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class HarvestOptions:
    """Everything besides the SQL text and the schema that changes a unit's lineage."""

    dialect: str | None = None
    default_schema: str | None = None
    variables: Pairs = ()
    columns: bool = True
    defaults: Pairs = ()
    relations: Pairs = ()  # dbt ref:/source:/this -> relation, for a model's raw SQL
    encoding: str | None = None  # --encoding: of files with no byte-order mark or `-- encoding:` line
    macros: tuple[MacroFile, ...] = ()  # a dbt project's macro files, for a model's raw SQL
    default_database: str | None = None  # a query log row's database, the first part of the names it leaves out

    def fingerprint(self) -> str:
        return repr(
            (
                self.dialect,
                self.default_schema,
                self.default_database,
                self.variables,
                self.columns,
                self.defaults,
                self.relations,
                self.encoding,
                self.macros,
                __version__,
            )
        )


@dataclass(frozen=True, slots=True)
class Unit:
    display: str  # the file name in provenance and messages
    options: HarvestOptions
    path: str | None = None  # read by the worker
    text: str | None = None  # inline SQL
    step: Step | None = None
    queries: tuple[LogQuery, ...] = ()  # a chunk of a query log: each query analysed with its own row's defaults


@dataclass(slots=True)
class Plan:
    units: list[Unit] = field(default_factory=list)
    bare_steps: list[Step] = field(default_factory=list)  # declared lineage only
    datasets: list[str] = field(default_factory=list)  # dbt sources and seeds
    schema: SchemaCatalog | None = None
    issues: list[Issue] = field(default_factory=list)
    runs: dict[Provenance, QueryRuns] = field(default_factory=dict)  # a query log's query (its first row) -> its runs


def pairs(mapping: Mapping[str, str] | None) -> Pairs:
    return tuple(sorted((mapping or {}).items()))


def plan_harvest(
    paths: Iterable[str | os.PathLike[str]],
    options: HarvestOptions,
    *,
    schema: SchemaCatalog | None = None,
    manifest: Manifest | None = None,
    dbt: DbtProject | None = None,
) -> Plan:
    """The units of a harvest: the manifest's entries, then PATH files it does not list, then dbt models."""
    plan = Plan(schema=_with_catalog(schema, dbt.catalog if dbt else None))
    seen: dict[str, int] = {}  # real path -> the manifest line that harvests it (0: none)
    if manifest is not None:
        plan.issues.extend(manifest.issues)
        for entry in manifest.entries:
            _plan_entry(plan, entry, manifest, options, seen)
        options = _with_layers(options, manifest.dialect, manifest.variables, manifest.defaults)
    found = sql_files(paths)
    plan.issues.extend(found.issues)
    for file in found.files:
        if file.real not in seen:
            seen[file.real] = 0
            plan.units.append(Unit(display_path(file.path), options, path=file.path))
    if dbt is not None:
        _plan_dbt(plan, dbt, options)
    return plan


def _with_layers(
    options: HarvestOptions, dialect: str | None, variables: Mapping[str, str], defaults: Mapping[str, str]
) -> HarvestOptions:
    """``options`` (the command line's) over a manifest's (or an entry's) dialect, variables and defaults."""
    return replace(
        options,
        dialect=options.dialect or dialect,
        variables=pairs({**variables, **dict(options.variables)}),
        defaults=pairs({**defaults, **dict(options.defaults)}),
    )


def _plan_entry(plan: Plan, entry: Entry, manifest: Manifest, cli: HarvestOptions, seen: dict[str, int]) -> None:
    where = Provenance(manifest.display, entry.line)
    options = _with_layers(
        cli,
        manifest.dialect,
        {**manifest.variables, **dict(entry.variables)},
        {**manifest.defaults, **dict(entry.defaults)},
    )
    # The entry's dialect names its file's SQL: it wins over --dialect, like a file's `-- dialect:` line.
    options = replace(options, dialect=entry.dialect or options.dialect)
    try:
        profile = load_profile(options.dialect)
    except ProfileError as error:
        plan.issues.append(Issue(where.file, where.line, f"manifest entry: {error}"))
        return
    step = Step(
        where,
        entry.workflow,
        entry.module,
        _declared(entry.targets, profile, options),
        _declared(entry.sources, profile, options),
        facts=(
            ("rows", entry.rows),
            ("frequency", entry.frequency),
            ("sql_file", display_path(entry.sql_file) if entry.sql_file else None),
            ("entry", f"{where.file}:{where.line}"),
        ),
    )
    if entry.sql_file is not None:
        key = os.path.realpath(entry.sql_file)
        if key in seen:
            message = f"manifest entry: sql_file {display_path(entry.sql_file)} is also the entry at line {seen[key]}"
            plan.issues.append(
                Issue(where.file, where.line, message + "; harvested once, for that entry", level="warning")
            )
            return
        seen[key] = entry.line
        plan.units.append(Unit(display_path(entry.sql_file), options, path=str(entry.sql_file), step=step))
    elif entry.sql is not None:
        plan.units.append(Unit(manifest.display, options, text=entry.sql, step=step))
    else:
        plan.bare_steps.append(step)


def _declared(
    names: tuple[str, ...] | None, profile: DialectProfile, options: HarvestOptions
) -> tuple[str, ...] | None:
    """Declared names as the SQL's would be: placeholders with values substituted, folded, schema filled in."""
    if names is None:
        return None
    variables = dict(options.variables)
    found = (declared_name(substitute(name, variables), profile, options.default_schema) for name in names)
    return tuple(dict.fromkeys(found))


def _plan_dbt(plan: Plan, dbt: DbtProject, base: HarvestOptions) -> None:
    plan.issues.extend(dbt.issues)
    plan.datasets.extend(dbt.datasets)
    for model in dbt.models:
        step = Step(Provenance(model.display, 1), targets=(model.relation,), sources=model.sources)
        if model.sql is None:
            plan.bare_steps.append(step)
            continue
        options = replace(
            _with_layers(base, None, dbt.variables, {}),
            dialect=dbt.dialect,
            relations=model.relations,
            macros=dbt.macros,
        )
        plan.units.append(Unit(model.display, options, text=model.sql, step=step))


def _with_catalog(explicit: SchemaCatalog | None, catalog: SchemaCatalog | None) -> SchemaCatalog | None:
    """The explicit schema over a dbt catalog: a table both list keeps the explicit columns."""
    if catalog is None:
        return explicit
    combined = catalog.copy()
    for table in explicit.tables() if explicit is not None else ():
        combined.add(table, explicit.types(table) or {})
    return combined
