"""``lineage import --format openlineage``: OpenLineage run and job events into the import builder.

The file holds JSON lines (what ``lineage export`` and OpenLineage's file transport write) or one
JSON document, an event or an array of events.  Each event becomes a transformation that READs its
inputs and WRITEs its outputs; ``schema`` facets give datasets their columns, ``datasetType`` tells
views apart, the job's ``sql`` facet gives its statement's text and dialect, and an output's ``columnLineage``
facet gives column edges: DIRECT inputs of a field are projection edges into it, INDIRECT ones predicate edges
onto the output table, and an INDIRECT CONDITIONAL or WINDOW input of a field also a predicate edge into the
field (the condition or window that shapes its value).

An event ``lineage export`` wrote names its statement, file and line in the ``lineage_statement``
run facet, its module in the job name and its workflow in the ``parent`` facet, and READ / WRITE
subtypes in ``lineage_edge`` facets, so exporting what was imported gives the same events again.
Another producer's event becomes a transformation named after its place in the file, one per run
(a run's START and COMPLETE events are one transformation).

Namespaces are kept in the node name (``facets.node_name``), so that same-named datasets of two sources do
not merge: a dataset of one of the ``plain`` namespaces (``lineage import --namespace NS``, by default
``default``, what ``lineage export`` writes by default) is its name alone, a file location its location
(``s3://bucket/raw/in.csv``, a local path), any other dataset ``NAMESPACE/name`` (``hive://cluster/dwh.sales``)
or, for a namespace without an authority, ``NAMESPACE:name`` (``bigquery:proj.ds.t``).  An export of the store
gives each its namespace back.  A dataset without a namespace is its name alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lineage_cli.facets import (
    DATASET_TYPES,
    DIRECT_SUBTYPES,
    EDGE_FACET,
    INDIRECT_SUBTYPES,
    STATEMENT_FACET,
    node_name,
)
from lineage_cli.imports.builder import MAX_NAME_CHARS, ArraysBuilder, quoted
from lineage_cli.model import EdgeType, NodeFlag, NodeKind, Subtype, bounded_expression, bounded_sql

# (OpenLineage DIRECT subtype, masking) -> projection subtype, and INDIRECT subtype -> predicate subtype
_DIRECT = {pair: subtype for subtype, pair in DIRECT_SUBTYPES.items()}
_INDIRECT = {subtype.name: subtype for subtype in INDIRECT_SUBTYPES}
_KINDS = {(look["datasetType"], look.get("subType")): kind for kind, look in DATASET_TYPES.items()}
_LINES = range(1, 1 << 31)  # the line numbers a store holds (int32)
_SHAPING = Subtype.CONDITIONAL.bit | Subtype.WINDOW.bit  # the predicates that may end at a column
_DIALECT_CHARS = 100  # a longer sql facet's dialect is no dialect's name: dropped
PLAIN_NAMESPACES = frozenset({"default"})  # whose datasets are named without their namespace, unless told


class _Unusable(ValueError):
    """An event, or a part of it, this reader cannot use; the message says why."""


@dataclass(slots=True)
class _Dataset:
    name: str
    kind: NodeKind
    fields: list[str]  # from the schema facet
    flags: int  # the READ / WRITE subtypes of a lineage_edge facet
    written: list[str] = field(default_factory=list)  # output fields the columnLineage facet lists
    projections: list[tuple[str, str, str, int]] = field(default_factory=list)  # table, field -> field, flags
    predicates: list[tuple[str, str, int]] = field(default_factory=list)  # table, field gating the dataset, flags
    shaping: list[tuple[str, str, str, int]] = field(default_factory=list)  # table, field shaping a field, flags
    expressions: dict[str, str] = field(default_factory=dict)  # output field -> a DIRECT step's description


@dataclass(slots=True)
class _Event:
    statement: str
    provenance: tuple[str, int] | None
    module: str | None
    workflow: str | None
    inputs: list[_Dataset]
    outputs: list[_Dataset]
    approximate: bool = False  # the statement did not parse: its tables were read from its tokens (our facet says)
    sql: tuple[str, str] | None = None  # the job's sql facet: the statement's text and dialect ("" when not said)


def openlineage_rows(
    path: Path, builder: ArraysBuilder, plain: frozenset[str] = PLAIN_NAMESPACES
) -> Iterator[tuple[int, str | None]]:
    """(line, problem or None) per event, adding each usable event to ``builder``; datasets of the ``plain``
    namespaces are named without their namespace."""
    runs: dict[str, tuple[str, int]] = {}  # another producer's runId -> its transformation and line
    for line, label, event in _events(path):
        try:
            parsed = _parse(event, str(path), line, runs, plain)
        except _Unusable as problem:
            yield line, f"{label}{problem}"
            continue
        builder.line = line
        _add(parsed, builder)
        yield line, None


def _events(path: Path) -> Iterator[tuple[int, str, Any]]:
    """(line, label for problems, decoded event or the JSON error) for a JSON document or JSON lines."""
    text = path.read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, list):
        yield from ((1, f"event {index}: ", event) for index, event in enumerate(document, start=1))
        return
    if isinstance(document, dict):
        yield 1, "", document
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield number, "", json.loads(line)
            except ValueError as error:
                yield number, "", _Unusable(f"not JSON: {error}")


def _parse(event: Any, file: str, line: int, runs: dict[str, tuple[str, int]], plain: frozenset[str]) -> _Event:
    if isinstance(event, _Unusable):
        raise event
    if not isinstance(event, dict):
        raise _Unusable("not a JSON object")
    job = _object(event, "job")
    job_name = _text(job, "name")
    run = event.get("run") if isinstance(event.get("run"), dict) else {}
    facets = run.get("facets") if isinstance(run.get("facets"), dict) else {}
    approximate = False
    if STATEMENT_FACET in facets:
        statement, provenance = _own_statement(_object(facets, STATEMENT_FACET))
        approximate = _object(facets, STATEMENT_FACET).get("approximate") is True
        module = job_name if job_name != statement else None
        parent = facets.get("parent")
        workflow = _text(_object(parent, "job"), "name") if module and isinstance(parent, dict) else None
    else:
        statement, first = f"{file}:{line}", line
        run_id = run.get("runId")
        if isinstance(run_id, str):
            statement, first = runs.setdefault(run_id, (statement, first))
        provenance, module, workflow = (file, first), None, None
    return _Event(
        statement,
        provenance,
        module,
        workflow,
        inputs=[_dataset(item, False, plain) for item in _list(event, "inputs")],
        outputs=[_dataset(item, True, plain) for item in _list(event, "outputs")],
        approximate=approximate,
        sql=_sql(job),
    )


def _sql(job: dict) -> tuple[str, str] | None:
    """The statement text and dialect of a job's ``sql`` facet; None without one (or with no query)."""
    facets = job.get("facets") if isinstance(job.get("facets"), dict) else {}
    facet = facets.get("sql")
    if not isinstance(facet, dict) or not isinstance(facet.get("query"), str) or not facet["query"]:
        return None
    dialect = facet.get("dialect")
    return bounded_sql(facet["query"]), dialect if isinstance(dialect, str) and len(dialect) <= _DIALECT_CHARS else ""


def _own_statement(facet: dict) -> tuple[str, tuple[str, int] | None]:
    name, file, line = facet.get("name"), facet.get("file"), facet.get("line")
    if not isinstance(name, str) or not name:
        raise _Unusable(f"the {STATEMENT_FACET} run facet has no name")
    name = _name(name, f"the {STATEMENT_FACET} run facet's name")
    if not isinstance(file, str) or not isinstance(line, int) or isinstance(line, bool):
        return name, None
    if line not in _LINES:
        raise _Unusable(f"the {STATEMENT_FACET} run facet's line {line} is no line number")
    return name, (_name(file, f"the {STATEMENT_FACET} run facet's file"), line)


def _dataset(item: Any, output: bool, plain: frozenset[str]) -> _Dataset:
    if not isinstance(item, dict):
        raise _Unusable("a dataset is not a JSON object")
    name = _named(item, plain)
    facets = item.get("facets") if isinstance(item.get("facets"), dict) else {}
    look = facets.get("datasetType") if isinstance(facets.get("datasetType"), dict) else {}
    schema = facets.get("schema") if isinstance(facets.get("schema"), dict) else {}
    edge_facets = item.get("outputFacets" if output else "inputFacets")
    edge = edge_facets.get(EDGE_FACET) if isinstance(edge_facets, dict) else None
    dataset = _Dataset(
        name,
        _kind(look),
        [_text(column, "name") for column in _list(schema, "fields")],
        _edge_flags(edge) if isinstance(edge, dict) else 0,
    )
    lineage = facets.get("columnLineage")
    if output and isinstance(lineage, dict):
        _column_lineage(dataset, lineage, plain)
    return dataset


def _named(item: dict, plain: frozenset[str]) -> str:
    """The node name of a dataset or an input field: its name, in its namespace unless that is plain."""
    name, namespace = _text(item, "name"), item.get("namespace")
    if not isinstance(namespace, str) or not namespace:
        return name
    return _name(node_name(namespace, name, plain), "namespace and name")


def _kind(look: dict) -> NodeKind:
    """The kind a ``datasetType`` facet names; a table for any other facet."""
    key = (look.get("datasetType"), look.get("subType"))
    return _KINDS.get(key, NodeKind.TABLE) if all(isinstance(part, str | None) for part in key) else NodeKind.TABLE


def _edge_flags(facet: dict) -> int:
    flags = 0
    for name in _list(facet, "subtypes"):
        if not isinstance(name, str) or name not in Subtype.__members__:
            raise _Unusable(f"unknown subtype {quoted(name)} in a {EDGE_FACET} facet")
        flags |= Subtype[name].bit
    return flags


def _column_lineage(dataset: _Dataset, facet: dict, plain: frozenset[str]) -> None:
    fields = facet.get("fields")
    for target, spec in (fields if isinstance(fields, dict) else {}).items():
        dataset.written.append(_name(target, "a columnLineage field"))
        for reference in _list(spec, "inputFields"):
            source, column, steps = _reference(reference, plain)
            if target not in dataset.expressions and (described := _description(reference)) is not None:
                dataset.expressions[target] = described
            for kind, flag in steps:
                if kind == "DIRECT":
                    dataset.projections.append((source, column, target, flag))
                    continue
                if flag & _SHAPING:  # with its table-level twin, as a harvest gives them
                    dataset.shaping.append((source, column, target, flag))
                dataset.predicates.append((source, column, flag))
    for reference in _list(facet, "dataset"):
        source, column, steps = _reference(reference, plain)
        for kind, flag in steps:
            if kind == "DIRECT":
                raise _Unusable(f"DIRECT lineage from {quoted(f'{source}.{column}')} names no output field")
            dataset.predicates.append((source, column, flag))


def _reference(reference: Any, plain: frozenset[str]) -> tuple[str, str, list[tuple[str, int]]]:
    """An input field: its dataset, its field, and (DIRECT | INDIRECT, subtype flag) per transformation."""
    source, column = _named(reference, plain), _text(reference, "field")
    # An input field without transformations (columnLineage before 1-2-0) is a plain projection.
    steps = _list(reference, "transformations") or [{"type": "DIRECT"}]
    return source, column, [_step(step) for step in steps]


def _description(reference: dict) -> str | None:
    """The SQL expression an export puts in an input field's DIRECT transformations (their ``description``)."""
    for step in _list(reference, "transformations"):
        if isinstance(step, dict) and step.get("type") == "DIRECT" and isinstance(step.get("description"), str):
            return bounded_expression(step["description"]) if step["description"] else None
    return None


def _step(step: Any) -> tuple[str, int]:
    if not isinstance(step, dict) or step.get("type") not in ("DIRECT", "INDIRECT"):
        raise _Unusable(f"transformation {quoted(step)} is neither DIRECT nor INDIRECT")
    subtype = step.get("subtype")
    if subtype is None:
        return step["type"], 0
    if not isinstance(subtype, str):
        raise _Unusable(f"{step['type']} subtype {quoted(subtype)} is not a string")
    if step["type"] == "INDIRECT":
        flag = _INDIRECT.get(subtype)
    else:  # masking, where a producer sets it on a subtype that cannot mask, is dropped
        flag = _DIRECT.get((subtype, step.get("masking") is True)) or _DIRECT.get((subtype, False))
    if flag is None:
        raise _Unusable(f"unknown {step['type']} subtype {quoted(subtype)}")
    return step["type"], flag.bit


def _add(event: _Event, builder: ArraysBuilder) -> None:
    if event.provenance:
        step = builder.transformation(event.statement, *event.provenance)
    else:
        step = builder.node(event.statement, NodeKind.TRANSFORMATION)
    if event.sql is not None:
        builder.sql.setdefault(step, event.sql)  # (a run's START and COMPLETE events are one transformation)
    if event.approximate:
        builder.flags[step] = builder.flags.get(step, 0) | NodeFlag.APPROXIMATE.bit
    if event.module:
        _member(builder, step, builder.node(event.module, NodeKind.MODULE))
        if event.workflow:
            _member(builder, builder.ids[event.module], builder.node(event.workflow, NodeKind.WORKFLOW))
    # Every dataset first, with its kind: a column reference would create its table as a plain TABLE.
    for dataset in (*event.inputs, *event.outputs):
        builder.node(dataset.name, dataset.kind)
        for column in dataset.fields:
            builder.column(dataset.name, column)
    for dataset in event.inputs:
        builder.edge(builder.ids[dataset.name], step, EdgeType.READ, dataset.flags)
    for dataset in event.outputs:
        table = builder.ids[dataset.name]
        builder.edge(step, table, EdgeType.WRITE, dataset.flags)
        for column in dataset.written:
            builder.edge(step, builder.column(dataset.name, column), EdgeType.COLUMN_WRITE, 0, step)
        for source, column, target, flag in dataset.projections:
            target_column = builder.column(dataset.name, target)
            builder.edge(builder.column(source, column), target_column, EdgeType.PROJECTION, flag, step)
        for source, column, flag in dataset.predicates:
            builder.edge(builder.column(source, column), table, EdgeType.PREDICATE, flag, step)
        for source, column, target, flag in dataset.shaping:
            target_column = builder.column(dataset.name, target)
            builder.edge(builder.column(source, column), target_column, EdgeType.PREDICATE, flag, step)
        for target, text in dataset.expressions.items():
            builder.expressions.setdefault((builder.column(dataset.name, target), step), text)


def _member(builder: ArraysBuilder, member: int, group: int) -> None:
    builder.containers[member] = group
    builder.edge(member, group, EdgeType.MEMBER)


def _object(parent: Any, key: str) -> dict:
    value = parent.get(key) if isinstance(parent, dict) else None
    if not isinstance(value, dict):
        raise _Unusable(f"{key} is missing or not an object")
    return value


def _text(parent: Any, key: str) -> str:
    """The name under ``key``: a string, and not a runaway one."""
    value = parent.get(key) if isinstance(parent, dict) else None
    if not isinstance(value, str) or not value:
        raise _Unusable(f"{key} is missing or not a string")
    return _name(value, key)


def _name(value: str, what: str) -> str:
    if len(value) > MAX_NAME_CHARS:
        raise _Unusable(f"{what} is longer than {MAX_NAME_CHARS:,} characters")
    return value


def _list(parent: Any, key: str) -> list:
    value = parent.get(key) if isinstance(parent, dict) else None
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Unusable(f"{key} is not an array")
    return value
