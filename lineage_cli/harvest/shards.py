"""Shards: a harvest's units analysed, each with what assembling it needs, and their merge into one graph.

A unit's shard is its analysis (``FileOutcome``: what ``batch.analyze_unit`` returns given a schema snapshot)
with its place in the harvest, the manifest step it runs for and, for a chunk of a query log, its queries'
runs.  The plan's shard holds what belongs to no unit: the planner's issues, steps without SQL, dbt's
datasets, the number of units, and the store's meta settings.  ``merge`` assembles shards in the units'
order, so a graph is the same however its units were shared out: the local harvest merges the shards its
process pool made, in memory, and ``lineage merge`` those a Spark job (``lineage_cli.spark``), or anyone's
cluster, wrote to files.

A shard file is JSON lines (``.gz``: gzip-compressed): a header object, ``{"lineage_shard": FORMAT, "tool":
VERSION}``, then one object a line, ``{"plan": ...}`` or ``{"unit": ...}``; docs/shards.md gives the fields.
Shard files may come from anywhere, so nothing in them runs: they are data, read back with ``json`` and
checked field by field (``outcome.py``'s checks for the analyses).  A unit's analysis is written by, and so
merged by, one version of the tool: a shard of another version or format is an error naming the file.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from lineage_cli import __version__
from lineage_cli.errors import InputError
from lineage_cli.harvest.assemble import Harvest, add_dataset, add_script, link_defaults
from lineage_cli.harvest.flows import Step, apply_step
from lineage_cli.harvest.inputs.plan import Plan
from lineage_cli.harvest.inputs.querylog.runs import QueryRuns, record_runs
from lineage_cli.harvest.outcome import (
    CacheDataError,
    FileOutcome,
    expect,
    issue_data,
    issues_from_data,
    only,
    outcome_data,
    outcome_from_data,
)
from lineage_cli.model import Issue, Provenance
from lineage_cli.profiles import DialectProfile

SHARD_FORMAT = 1
_FACT_TYPES = (str, int, float, bool, type(None))  # a step's facts: what a manifest entry says (rows, frequency, ...)


class ShardError(InputError):
    """A shard file that cannot be read, or shards that do not make one harvest."""


@dataclass(slots=True)
class UnitShard:
    """One analysed unit: its place among the harvest's units, its analysis, and what its assembly reads."""

    index: int
    outcome: FileOutcome
    step: Step | None = None
    runs: list[tuple[Provenance, QueryRuns]] = field(default_factory=list)  # a log chunk's queries' runs


@dataclass(slots=True)
class PlanShard:
    """What a harvest has besides its units' analyses."""

    units: int  # how many units it has: a merge checks that each is there, once
    issues: list[Issue] = field(default_factory=list)
    bare_steps: list[Step] = field(default_factory=list)
    datasets: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)  # the store's settings (dialect, default schema, ...)


@dataclass(slots=True)
class Shard:
    plan: PlanShard | None = None
    units: list[UnitShard] = field(default_factory=list)


def store_settings(profile: DialectProfile, default_schema: str | None) -> dict[str, Any]:
    """What a store's meta says of how it was harvested, as a plan's shard carries it to ``lineage merge``."""
    return {"dialect": profile.name, "default_schema": default_schema or profile.default_schema}


def shards_of(plan: Plan, outcomes: Sequence[FileOutcome], size: int | None = None) -> list[Shard]:
    """The shards of a plan whose units were analysed into ``outcomes``: ``size`` units a shard (all in one by
    default), the plan's part in the first."""
    units = [_unit_shard(plan, index, outcome) for index, outcome in enumerate(outcomes)]
    if len(units) != len(plan.units):
        raise ValueError(f"{len(units)} outcomes for a plan of {len(plan.units)} units")
    step = size or max(1, len(units))
    shards = [Shard(units=units[start : start + step]) for start in range(0, max(1, len(units)), step)]
    shards[0].plan = _plan_shard(plan)
    return shards


def merge_outcomes(plan: Plan, outcomes: Iterable[FileOutcome]) -> Harvest:
    """The harvest of a plan whose units were analysed into ``outcomes``, in unit order: each is merged as it comes
    and let go, so the graph, not the analyses too, is what a harvest holds at its end."""
    assembly = _Assembly(_plan_shard(plan))
    count = 0
    for count, outcome in enumerate(outcomes, 1):
        assembly.add(_unit_shard(plan, count - 1, outcome))
    if count != len(plan.units):
        raise ValueError(f"{count} outcomes for a plan of {len(plan.units)} units")
    return assembly.finish()


def _unit_shard(plan: Plan, index: int, outcome: FileOutcome) -> UnitShard:
    unit = plan.units[index]
    return UnitShard(index, outcome, unit.step, _runs_of(plan, unit.display, [query.line for query in unit.queries]))


def _plan_shard(plan: Plan) -> PlanShard:
    return PlanShard(len(plan.units), list(plan.issues), list(plan.bare_steps), list(plan.datasets))


def _runs_of(plan: Plan, display: str, lines: list[int]) -> list[tuple[Provenance, QueryRuns]]:
    found = ((Provenance(display, line), plan.runs.get(Provenance(display, line))) for line in lines)
    return [(where, runs) for where, runs in found if runs is not None]


def merge(shards: Iterable[Shard]) -> Harvest:
    """One harvest of shards: statements in the units' order, then what the manifest says about each step,
    declared lineage, dbt's datasets, DEFAULT links.  A ``ShardError`` unless the shards hold one plan and each
    of its units once."""
    plan, units = _one_harvest(list(shards))
    assembly = _Assembly(plan)
    for unit in units:
        assembly.add(unit)
    return assembly.finish()


class _Assembly:
    """A harvest being merged: its units' shards added one by one in their order, then what belongs to none."""

    def __init__(self, plan: PlanShard) -> None:
        self.plan, self.result = plan, Harvest(issues=list(plan.issues))

    def add(self, unit: UnitShard) -> None:
        result, outcome = self.result, unit.outcome
        made = add_script(result, outcome.statements, outcome.issues, outcome.file, outcome.lineage)
        result.defaults.update(outcome.defaults)
        if unit.step is not None:
            # a statement read approximately is not what a step's declared lineage is checked against: it gives way
            exact = [statement.writes for statement in outcome.lineage if not statement.approximate]
            apply_step(result, unit.step, made, exact)
        if unit.runs:
            record_runs(result, made, dict(unit.runs))

    def finish(self) -> Harvest:
        """The harvest, once every unit is in: the steps without SQL, dbt's datasets and the DEFAULT links added."""
        result = self.result
        for step in self.plan.bare_steps:
            apply_step(result, step, [], None)
        for name in self.plan.datasets:
            add_dataset(result.graph, name)
        link_defaults(result.graph, result.defaults)
        return result


def _one_harvest(shards: list[Shard]) -> tuple[PlanShard, list[UnitShard]]:
    plans = [shard.plan for shard in shards if shard.plan is not None]
    if len(plans) != 1:
        raise ShardError(f"the shards hold {len(plans)} harvests' plans: a merge takes the shards of one harvest")
    plan = plans[0]
    units = sorted((unit for shard in shards for unit in shard.units), key=lambda unit: unit.index)
    seen = [unit.index for unit in units]
    if seen != list(range(plan.units)):
        twice = sorted({index for index, after in zip(seen, seen[1:], strict=False) if index == after})
        missing = sorted(set(range(plan.units)) - set(seen))
        problem = f"units {twice[:5]} are in two shards" if twice else f"units {missing[:5]} are in no shard"
        raise ShardError(f"the shards do not make the harvest of {plan.units} units: {problem}")
    return plan, units


@dataclass(frozen=True, slots=True)
class ShardFiles:
    """Where a harvest writes its shards, ``size`` units a file, with the store's ``meta`` settings in the first."""

    directory: Path
    meta: dict[str, Any] = field(default_factory=dict)
    size: int = 256

    def round_trip(self, plan: Plan, outcomes: Sequence[FileOutcome]) -> list[Shard]:
        """The plan's shards written to files, and read back: what ``lineage merge`` of those files merges."""
        shards = shards_of(plan, outcomes, self.size)
        if shards[0].plan is not None:
            shards[0].plan.meta = dict(self.meta)
        return [read_shard(path) for path in self.write(shards)]

    def write(self, shards: Sequence[Shard]) -> list[Path]:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            for stale in self.directory.glob("shard-*.jsonl.gz"):  # a harvest's shards are merged as a whole
                stale.unlink()
        except OSError as error:
            raise ShardError(f"cannot write shards to {self.directory}: {error.strerror or error}") from None
        paths = [self.directory / f"shard-{number:05d}.jsonl.gz" for number in range(len(shards))]
        for shard, path in zip(shards, paths, strict=True):
            try:
                write_shard(shard, path)
            except OSError as error:
                raise ShardError(f"cannot write the shard {path}: {error.strerror or error}") from None
        return paths


def write_shard(shard: Shard, path: Path) -> None:
    """Write ``shard`` to ``path`` (gzip-compressed when its name ends in ``.gz``)."""
    with _open(path, "wt") as out:
        _line(out, {"lineage_shard": SHARD_FORMAT, "tool": __version__})
        if shard.plan is not None:
            _line(out, {"plan": _plan_data(shard.plan)})
        for unit in shard.units:
            _line(out, {"unit": _unit_data(unit)})


def read_shard(path: Path) -> Shard:
    """The shard in the file at ``path``; a ``ShardError`` naming the file (and line) when it is not one this
    version writes."""
    shard = Shard()
    try:
        with _open(path, "rt") as lines:
            for number, record in enumerate(_records(lines), 1):
                _read_record(shard, record, number)
    except OSError as error:
        raise ShardError(f"{path}: cannot read the shard: {error.strerror or error}") from None
    except (ValueError, RecursionError, EOFError) as error:  # bad JSON, gzip or data; CacheDataError is a ValueError
        raise ShardError(f"{path}: not a lineage shard of this version: {error}") from None
    return shard


def _read_record(shard: Shard, record: Any, number: int) -> None:
    if number == 1:
        expect(type(record) is dict and record.get("lineage_shard") == SHARD_FORMAT, "header: no shard of this format")
        expect(record.get("tool") == __version__, f"header: written by lineage {record.get('tool')}, not {__version__}")
        return
    expect(type(record) is dict and len(record) == 1, f"line {number}: a record")
    if "unit" in record:
        shard.units.append(_unit_from_data(record["unit"]))
    else:
        expect("plan" in record and shard.plan is None, f"line {number}: a plan (one a shard)")
        shard.plan = _plan_from_data(record["plan"])


def _records(lines: IO[str]) -> Iterator[Any]:
    found = False
    for line in lines:
        found = True
        yield json.loads(line)
    if not found:
        raise CacheDataError("an empty file")


def _open(path: Path, mode: str) -> IO[str]:
    if path.name.endswith(".gz"):
        return gzip.open(path, mode, encoding="ascii")  # type: ignore[return-value] - text mode
    return open(path, mode, encoding="ascii")


def _line(out: IO[str], data: object) -> None:
    out.write(json.dumps(data, separators=(",", ":")) + "\n")  # ASCII: no newline inside a line


def _unit_data(unit: UnitShard) -> dict[str, object]:
    return {
        "index": unit.index,
        "outcome": outcome_data(unit.outcome),
        "step": _step_data(unit.step) if unit.step is not None else None,
        "runs": [[where.file, where.line, runs.count, runs.first, runs.last, runs.users] for where, runs in unit.runs],
    }


def _unit_from_data(data: Any) -> UnitShard:
    expect(type(data) is dict and data.keys() == {"index", "outcome", "step", "runs"}, "a unit")
    expect(type(data["index"]) is int and data["index"] >= 0 and type(data["runs"]) is list, "a unit's index and runs")
    step = _step_from_data(data["step"]) if data["step"] is not None else None
    return UnitShard(data["index"], outcome_from_data(data["outcome"]), step, [_run_from_data(r) for r in data["runs"]])


def _run_from_data(data: Any) -> tuple[Provenance, QueryRuns]:
    expect(type(data) is list and len(data) == 6, "a query's runs")
    file, line, count, first, last, users = data
    expect(type(file) is str and type(line) is int and type(count) is int, "a query's place and count")
    expect(only((first, last), int, float, type(None)) and type(users) is list and only(users, str), "a query's runs")
    return Provenance(file, line), QueryRuns(count, first, last, users)


def _plan_data(plan: PlanShard) -> dict[str, object]:
    return {
        "units": plan.units,
        "issues": [issue_data(issue) for issue in plan.issues],
        "bare_steps": [_step_data(step) for step in plan.bare_steps],
        "datasets": plan.datasets,
        "meta": plan.meta,
    }


def _plan_from_data(data: Any) -> PlanShard:
    expect(type(data) is dict and data.keys() == {"units", "issues", "bare_steps", "datasets", "meta"}, "a plan")
    expect(type(data["units"]) is int and type(data["bare_steps"]) is list, "a plan's units and steps")
    expect(type(data["datasets"]) is list and only(data["datasets"], str), "a plan's datasets")
    expect(type(data["meta"]) is dict, "a plan's meta")
    steps = [_step_from_data(step) for step in data["bare_steps"]]
    return PlanShard(data["units"], issues_from_data(data["issues"]), steps, data["datasets"], data["meta"])


def _step_data(step: Step) -> list[object]:
    return [step.where.file, step.where.line, step.workflow, step.module, step.targets, step.sources, step.facts]


def _step_from_data(data: Any) -> Step:
    expect(type(data) is list and len(data) == 7, "a step")
    file, line, workflow, module, targets, sources, facts = data
    expect(type(file) is str and type(line) is int and only((workflow, module), str, type(None)), "a step's place")
    expect(all(names is None or (type(names) is list and only(names, str)) for names in (targets, sources)), "names")
    expect(type(facts) is list and all(type(f) is list and len(f) == 2 and type(f[0]) is str for f in facts), "facts")
    expect(only((value for _, value in facts), *_FACT_TYPES), "a step's facts")
    return Step(
        Provenance(file, line),
        workflow,
        module,
        tuple(targets) if targets is not None else None,
        tuple(sources) if sources is not None else None,
        tuple((name, value) for name, value in facts),
    )
