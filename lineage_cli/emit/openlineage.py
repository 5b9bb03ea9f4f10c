"""OpenLineage export: one ``COMPLETE`` RunEvent per transformation in the store.

Each transformation (statement) becomes a run of a job: the job is named ``workflow/module`` when
a flow manifest put the statement in a module (the workflow is the ``parent`` run facet), else
after the statement itself (``file:line``).  Its READ and WRITE datasets are the event's inputs
and outputs, with the ``schema`` facet where the store knows their columns (CONTAINS edges) and
the ``datasetType`` facet.  Each output carries the ``columnLineage`` facet of the statement's
column edges (the ``fwd_statement`` of an edge names the transformation it came from):
projection edges as DIRECT ``fields`` entries (their ``description`` the SQL expression the statement
writes the column with), predicate edges, which gate the whole output table, as INDIRECT ``dataset``
entries; masking subtypes become ``masking: true``.

Datasets are named as OpenLineage's naming spec has it (``facets.address``): a file location under its
scheme and authority with the ``datasetType`` FILE, a table under the namespace ``Namespaces`` gives its
schema or catalog, else the default one (``naming.Namespaces``).  Inputs and outputs are listed by namespace
and name.  Every job carries the ``jobType`` facet (a BATCH QUERY of the ``lineage`` integration), when
the store knows where its statement is, ``sourceCodeLocation``: the file and line, in the repository when
one is known (``naming.Repository``), and when it knows the statement's text, ``sql``: the text as the
store keeps it (``query``) and the dialect it was read in (``dialect``).

Two custom facets carry what OpenLineage has no place for, so that ``lineage import --format
openlineage`` reads an export back unchanged: the run facet ``lineage_statement`` (the statement's
node name and its file and line, and ``approximate: true`` for a statement that did not parse, whose
inputs and outputs were read from its tokens: an event that claims no exactness) and the input/output
facet ``lineage_edge`` (the subtypes of a READ or WRITE edge, e.g. DECLARED for lineage a manifest
declared).

Output is reproducible: ``eventTime`` is a constant unless given, and ``runId`` is a UUIDv5 of
the job namespace, the statement and the event time.  No sqlglot here; numpy groups the edges.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lineage_cli.emit.naming import Namespaces, Repository
from lineage_cli.errors import InputError
from lineage_cli.facets import (
    DATASET_TYPES,
    DEFAULT_EVENT_TIME,
    DIRECT_SUBTYPES,
    EDGE_FACET,
    EVENT_SCHEMA,
    FACET_SCHEMAS,
    FILE_TYPE,
    INDIRECT_SUBTYPES,
    JOB_TYPE,
    PRODUCER,
    STATEMENT_FACET,
    address,
)
from lineage_cli.model import EdgeType, NodeFlag, NodeKind, subtypes_from_flags
from lineage_cli.store.layout import TYPE_BITS, TYPE_MASK
from lineage_cli.store.reader import Store


def event_time(text: str | None) -> str:
    """The ``eventTime`` to write: ``text`` checked to be ISO 8601 with a time zone, or the default.

    >>> event_time("2024-01-31T06:00:00+01:00"), event_time(None)
    ('2024-01-31T06:00:00+01:00', '1970-01-01T00:00:00Z')
    """
    if text is None:
        return DEFAULT_EVENT_TIME
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"--event-time {text!r} is not an ISO 8601 date and time") from None
    if moment.tzinfo is None:
        raise InputError(f"--event-time {text!r} needs a time zone, e.g. 2024-01-31T06:00:00Z")
    return moment.isoformat()


@dataclass(slots=True)
class _Statement:
    """The edges one transformation made, by node id."""

    reads: dict[int, int] = field(default_factory=dict)  # dataset -> READ subtype flags
    writes: dict[int, int] = field(default_factory=dict)  # dataset -> WRITE subtype flags
    columns: set[int] = field(default_factory=set)  # COLUMN_WRITE targets
    projections: list[tuple[int, int, int]] = field(default_factory=list)  # source column, target column, flags
    predicates: list[tuple[int, int, int]] = field(default_factory=list)  # source column, target dataset, flags
    expressions: dict[int, str] = field(default_factory=dict)  # target column -> the SQL expression it is written as
    sql: tuple[str, str] | None = None  # the statement's text and dialect, when the store has them


@dataclass(slots=True)
class _Graph:
    """What the events are made of, grouped from the store's forward edges by type."""

    names: list[str]
    kinds: list[int]
    containers: list[int]
    statements: dict[int, _Statement]
    columns: dict[int, list[int]]  # dataset -> its columns (CONTAINS), in name order

    def container(self, node: int) -> int | None:
        parent = self.containers[node]
        return parent if parent >= 0 else None

    def field_name(self, column: int) -> str:
        return self.names[column][len(self.names[self.containers[column]]) + 1 :]


def to_events(
    store: Store,
    namespace: str | Namespaces,
    job_namespace: str,
    time: str = DEFAULT_EVENT_TIME,
    only: set[int] | None = None,
    repository: Repository | None = None,
) -> list[dict]:
    """One RunEvent per transformation node (those in ``only`` when given), in name order; tables in
    ``namespace`` (one for all, or ``Namespaces``), statements' files in ``repository`` when given."""
    graph = _read(store)
    spaces = namespace if isinstance(namespace, Namespaces) else Namespaces(namespace)
    naming = _Naming(spaces, job_namespace, time, repository or Repository())
    events = []
    for node, kind in enumerate(graph.kinds):
        if kind == NodeKind.TRANSFORMATION and (only is None or node in only):
            statement = graph.statements.get(node) or _Statement()
            event = _event(graph, node, statement, store.provenance(node), naming)
            if store.array("node_flags")[node] & NodeFlag.APPROXIMATE.bit:
                event["run"]["facets"][STATEMENT_FACET]["approximate"] = True
            events.append(event)
    return events


def to_json_lines(events: list[dict]) -> str:
    """JSON lines, one event per line: what OpenLineage's file transport writes and consumers accept."""
    return "".join(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n" for event in events)


def _read(store: Store) -> _Graph:
    # (numpy: loaded by an export only)
    from lineage_cli.store.arrays import edge_sources, stored_expressions, stored_statement_texts

    sources = edge_sources(store)
    targets, attributes = store.numpy_array("fwd_node"), store.numpy_array("fwd_attr")
    types, flags, made_by = attributes & TYPE_MASK, attributes >> TYPE_BITS, store.numpy_array("fwd_statement")

    def edges(edge_type: EdgeType) -> zip:
        mask = types == edge_type
        return zip(*(array[mask].tolist() for array in (sources, targets, flags, made_by)), strict=True)

    statements: defaultdict[int, _Statement] = defaultdict(_Statement)
    columns: defaultdict[int, list[int]] = defaultdict(list)
    for source, target, bits, _ in edges(EdgeType.READ):
        statements[target].reads[source] = bits
    for source, target, bits, _ in edges(EdgeType.WRITE):
        statements[source].writes[target] = bits
    for source, target, _, _ in edges(EdgeType.COLUMN_WRITE):
        statements[source].columns.add(target)
    for source, target, bits, statement in edges(EdgeType.PROJECTION):
        if statement >= 0:
            statements[statement].projections.append((source, target, bits))
    for source, target, bits, statement in edges(EdgeType.PREDICATE):
        if statement >= 0:
            statements[statement].predicates.append((source, target, bits))
    for source, target, _, _ in edges(EdgeType.CONTAINS):
        columns[source].append(target)
    for column, statement, text in stored_expressions(store).rows():
        statements[statement].expressions[column] = text
    for statement, text, dialect in stored_statement_texts(store).rows():
        statements[statement].sql = (text, dialect)
    return _Graph(
        names=store.names(),
        kinds=store.numpy_array("node_kind").tolist(),
        containers=store.numpy_array("node_container").tolist(),
        statements=dict(statements),
        columns={table: sorted(members) for table, members in columns.items()},
    )


@dataclass(frozen=True, slots=True)
class _Naming:
    namespaces: Namespaces
    job_namespace: str
    time: str
    repository: Repository

    def address(self, name: str) -> tuple[str, str, bool]:
        """A dataset's namespace, its name in it, and whether it is a file."""
        namespace, local, is_file = address(name)
        return namespace or self.namespaces.of(name), local, is_file

    def run_id(self, job: str) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.job_namespace}/{job}@{self.time}"))

    def facet(self, facet: str, /, **fields: Any) -> dict[str, Any]:
        return {"_producer": PRODUCER, "_schemaURL": FACET_SCHEMAS[facet], **fields}


def _event(
    graph: _Graph, node: int, statement: _Statement, provenance: tuple[str, int] | None, naming: _Naming
) -> dict[str, Any]:
    name = graph.names[node]
    where = {"file": provenance[0], "line": provenance[1]} if provenance else {}
    run_facets = {STATEMENT_FACET: naming.facet(STATEMENT_FACET, name=name, **where)}
    job = name
    module = graph.container(node)  # a transformation's container is its module, if a manifest gave one
    if module is not None and graph.kinds[module] == NodeKind.MODULE:
        job = graph.names[module]
        workflow = graph.container(module)
        if workflow is not None:
            parent = graph.names[workflow]
            run_facets["parent"] = naming.facet(
                "parent",
                run={"runId": naming.run_id(parent)},
                job={"namespace": naming.job_namespace, "name": parent},
            )
    inputs, outputs = _datasets(graph, statement)
    job_facets = {"jobType": naming.facet("jobType", **JOB_TYPE)}
    if provenance:
        job_facets["sourceCodeLocation"] = naming.facet("sourceCodeLocation", **naming.repository.location(*provenance))
    if statement.sql is not None:
        text, dialect = statement.sql
        job_facets["sql"] = naming.facet("sql", query=text, **({"dialect": dialect} if dialect else {}))
    return {
        "eventType": "COMPLETE",
        "eventTime": naming.time,
        "producer": PRODUCER,
        "schemaURL": EVENT_SCHEMA,
        "run": {"runId": naming.run_id(name), "facets": run_facets},
        "job": {"namespace": naming.job_namespace, "name": job, "facets": job_facets},
        "inputs": _listed(_input(graph, dataset, statement, naming) for dataset in inputs),
        "outputs": _listed(_output(graph, dataset, statement, naming) for dataset in outputs),
    }


def _listed(datasets: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Datasets by namespace and name: the order does not depend on how an import named them."""
    return sorted(datasets, key=lambda dataset: (dataset["namespace"], dataset["name"]))


def _datasets(graph: _Graph, statement: _Statement) -> tuple[list[int], list[int]]:
    """Input and output datasets: the READ and WRITE ends, plus any table a column edge names.

    The column edges' tables are READ and WRITE ends in harvested lineage; adding them anyway keeps
    every ``columnLineage`` reference among the event's inputs, as consumers require.
    """
    inputs, outputs = set(statement.reads), set(statement.writes)
    for source, target, _ in statement.projections:
        if (table := graph.container(source)) is not None and (written := graph.container(target)) is not None:
            inputs.add(table)
            outputs.add(written)
    for source, target, _ in statement.predicates:
        if (table := graph.container(source)) is not None:
            inputs.add(table)
            outputs.add(target if graph.kinds[target] != NodeKind.COLUMN else graph.container(target))
    outputs.update(table for column in statement.columns if (table := graph.container(column)) is not None)
    return sorted(inputs), sorted(outputs)


def _dataset(graph: _Graph, dataset: int, naming: _Naming) -> dict[str, Any]:
    namespace, name, is_file = naming.address(graph.names[dataset])
    kind = FILE_TYPE if is_file else DATASET_TYPES.get(graph.kinds[dataset], {"datasetType": "TABLE"})
    facets = {"datasetType": naming.facet("datasetType", **kind)}
    if columns := graph.columns.get(dataset):
        fields = [{"name": graph.field_name(column)} for column in columns]
        facets["schema"] = naming.facet("schema", fields=fields)
    return {"namespace": namespace, "name": name, "facets": facets}


def _input(graph: _Graph, dataset: int, statement: _Statement, naming: _Naming) -> dict[str, Any]:
    described = _dataset(graph, dataset, naming)
    if flags := statement.reads.get(dataset):
        described["inputFacets"] = {EDGE_FACET: naming.facet(EDGE_FACET, subtypes=subtypes_from_flags(flags))}
    return described


def _output(graph: _Graph, dataset: int, statement: _Statement, naming: _Naming) -> dict[str, Any]:
    described = _dataset(graph, dataset, naming)
    if lineage := _column_lineage(graph, dataset, statement, naming):
        described["facets"]["columnLineage"] = lineage
    if flags := statement.writes.get(dataset):
        described["outputFacets"] = {EDGE_FACET: naming.facet(EDGE_FACET, subtypes=subtypes_from_flags(flags))}
    return described


def _column_lineage(graph: _Graph, dataset: int, statement: _Statement, naming: _Naming) -> dict[str, Any] | None:
    """The statement's column edges into ``dataset``; every column it writes is a field, even one with no inputs.

    A field's inputs are its projections (DIRECT) and the conditions and windows that shape it (INDIRECT
    CONDITIONAL / WINDOW), one input field per source column with all its transformations; the predicates onto
    the table are the dataset-wide ``dataset`` inputs."""
    steps: dict[int, dict[int, list[dict[str, Any]]]] = {
        c: {} for c in statement.columns if graph.container(c) == dataset
    }
    for source, target, bits in sorted(statement.projections):
        if graph.container(target) == dataset and graph.container(source) is not None:
            steps.setdefault(target, {}).setdefault(source, []).extend(_direct(bits, statement.expressions.get(target)))
    for source, target, bits in sorted(statement.predicates):
        if graph.container(target) == dataset and graph.container(source) is not None:
            steps.setdefault(target, {}).setdefault(source, []).extend(_indirect(bits))
    fields = {
        column: _by_address(
            _input_field(graph, source, graph.container(source), found[source], naming) for source in found
        )
        for column, found in steps.items()
    }
    gates = _by_address(
        _input_field(graph, source, table, _indirect(bits), naming)
        for source, target, bits in statement.predicates
        if target == dataset and (table := graph.container(source)) is not None
    )
    if not fields and not gates:
        return None
    lineage = naming.facet(
        "columnLineage",
        fields={graph.field_name(column): {"inputFields": fields[column]} for column in sorted(fields)},
    )
    if gates:
        lineage["dataset"] = gates
    return lineage


def _by_address(references: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Input fields by namespace, name and field (a field gating a dataset in several ways: in subtype order)."""
    return sorted(references, key=lambda r: (r["namespace"], r["name"], r["field"], str(r["transformations"])))


def _input_field(
    graph: _Graph, column: int, table: int, transformations: list[dict[str, Any]], naming: _Naming
) -> dict[str, Any]:
    namespace, name, _ = naming.address(graph.names[table])
    return {
        "namespace": namespace,
        "name": name,
        "field": graph.field_name(column),
        "transformations": transformations,
    }


def _direct(flags: int, expression: str | None) -> list[dict[str, Any]]:
    """A projection's DIRECT transformations, each described by the SQL expression of the column it writes."""
    steps = [
        {"type": "DIRECT", "subtype": subtype, "masking": masking}
        for flag, (subtype, masking) in DIRECT_SUBTYPES.items()
        if flags & flag.bit
    ] or [{"type": "DIRECT"}]
    if expression is not None:
        for step in steps:
            step["description"] = expression
    return steps


def _indirect(flags: int) -> list[dict[str, Any]]:
    steps = [{"type": "INDIRECT", "subtype": flag.name} for flag in INDIRECT_SUBTYPES if flags & flag.bit]
    return steps or [{"type": "INDIRECT"}]
