"""Import lineage that was not harvested here: edge lists, Hive LineageLogger output, OpenLineage events.

Everything lands in ``GraphArrays`` built row by row (millions of edges would not fit a
dict-of-tuples graph comfortably), then merges with the existing store.  A bad row is
reported with its line number and skipped; the rest is imported.  No sqlglot here.
"""

from __future__ import annotations

import csv
import json
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lineage_cli.model import EdgeType, Issue, NodeKind, Subtype
from lineage_cli.store.arrays import GraphArrays, dedupe_edges
from lineage_cli.store.layout import pack_attributes

FORMATS = ("csv", "tsv", "jsonl", "hive", "openlineage")
# edge type -> (source kind, target kind)
EDGE_KINDS = {
    EdgeType.FLOW: (NodeKind.TABLE, NodeKind.TABLE),
    EdgeType.PROJECTION: (NodeKind.COLUMN, NodeKind.COLUMN),
    EdgeType.PREDICATE: (NodeKind.COLUMN, NodeKind.TABLE),
    EdgeType.CONTAINS: (NodeKind.TABLE, NodeKind.COLUMN),
}
TYPE_NAMES = {"flow": EdgeType.FLOW, "projection": EdgeType.PROJECTION, "predicate": EdgeType.PREDICATE,
              "contains": EdgeType.CONTAINS}  # fmt: skip
_AGGREGATE = re.compile(r"\b(sum|avg|min|max|collect_set|collect_list|percentile\w*|stddev\w*|variance)\s*\(", re.I)
_COUNT = re.compile(r"\bcount\s*\(", re.I)


class ImportError_(ValueError):  # noqa: N801 - not the builtin ImportError
    """The import file cannot be read at all."""


@dataclass(slots=True)
class ArraysBuilder:
    """Accumulates named nodes and edges; ``build`` sorts names into ids."""

    ids: dict[str, int] = field(default_factory=dict)
    kinds: bytearray = field(default_factory=bytearray)
    containers: dict[int, int] = field(default_factory=dict)
    provenance: dict[int, tuple[str, int]] = field(default_factory=dict)
    sources: array = field(default_factory=lambda: array("i"))
    targets: array = field(default_factory=lambda: array("i"))
    attributes: array = field(default_factory=lambda: array("H"))
    statements: array = field(default_factory=lambda: array("i"))

    def node(self, name: str, kind: NodeKind) -> int:
        node = self.ids.get(name)
        if node is None:
            node = self.ids[name] = len(self.kinds)
            self.kinds.append(kind)
            if kind is NodeKind.COLUMN and "." in name:
                self._contain(self.node(name.rsplit(".", 1)[0], NodeKind.TABLE), node)
        return node

    def column(self, table: str, field: str) -> int:
        """Column ``field`` of ``table``, for formats that name the two apart (a table name may hold dots)."""
        name = f"{table}.{field}"
        node = self.ids.get(name)
        if node is None:
            node = self.ids[name] = len(self.kinds)
            self.kinds.append(NodeKind.COLUMN)
            self._contain(self.node(table, NodeKind.TABLE), node)
        return node

    def _contain(self, table: int, column: int) -> None:
        self.containers[column] = table
        self.edge(table, column, EdgeType.CONTAINS)

    def edge(self, source: int, target: int, edge_type: EdgeType, flags: int = 0, statement: int = -1) -> None:
        self.sources.append(source)
        self.targets.append(target)
        self.attributes.append(pack_attributes(edge_type, flags))
        self.statements.append(statement)

    def transformation(self, name: str, file: str, line: int) -> int:
        node = self.node(name, NodeKind.TRANSFORMATION)
        self.provenance[node] = (file, line)
        return node

    def build(self) -> GraphArrays:
        names = sorted(self.ids, key=self.ids.__getitem__)  # insertion order = current ids
        order = sorted(range(len(names)), key=names.__getitem__)
        rank = np.empty(len(names), dtype=np.int64)
        rank[order] = np.arange(len(names))
        count = len(names)
        containers = np.full(count, -1, dtype="<i4")
        for child, parent in self.containers.items():
            containers[rank[child]] = rank[parent]
        files = sorted({file for file, _ in self.provenance.values()})
        file_index = {file: i for i, file in enumerate(files)}
        node_file = np.full(count, -1, dtype="<i4")
        node_line = np.zeros(count, dtype="<i4")
        for node, (file, line) in self.provenance.items():
            node_file[rank[node]], node_line[rank[node]] = file_index[file], line
        statements = np.frombuffer(self.statements, dtype=np.int32).astype(np.int64)
        edges = dedupe_edges(
            rank[np.frombuffer(self.sources, dtype=np.int32)],
            rank[np.frombuffer(self.targets, dtype=np.int32)],
            np.frombuffer(self.attributes, dtype=np.uint16),
            np.where(statements >= 0, rank[np.maximum(statements, 0)], -1),
        )
        kinds = np.frombuffer(bytes(self.kinds), dtype="u1")[order]
        return GraphArrays([names[i] for i in order], kinds, containers, node_file, node_line, files, *edges)


def import_file(path: Path, fmt: str) -> tuple[GraphArrays, list[Issue], int]:
    """Read ``path`` in format ``fmt``; returns the graph, the skipped rows, and the rows read."""
    builder, issues = ArraysBuilder(), []
    reader = _READERS.get(fmt, _edge_rows)
    rows = 0
    try:
        for line, problem in reader(path, fmt, builder):
            rows += 1
            if problem:
                issues.append(Issue(str(path), line, problem))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise ImportError_(f"{path}: cannot read: {error}") from error
    return builder.build(), issues, rows


def _openlineage_rows(path: Path, fmt: str, builder: ArraysBuilder) -> Iterator[tuple[int, str | None]]:
    # Imported here: the OpenLineage reader builds on this module's ArraysBuilder.
    from lineage_cli.harvest.openlineage import openlineage_rows

    return openlineage_rows(path, builder)


def format_from_suffix(path: str) -> str | None:
    suffix = Path(path).suffix.lower().lstrip(".")
    return {"csv": "csv", "tsv": "tsv", "jsonl": "jsonl", "ndjson": "jsonl"}.get(suffix)


def _edge_rows(path: Path, fmt: str, builder: ArraysBuilder) -> Iterator[tuple[int, str | None]]:
    for line, row in _records(path, fmt):
        yield line, _add_edge_row(row, builder)


def _records(path: Path, fmt: str) -> Iterator[tuple[int, dict[str, str] | str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        if fmt == "jsonl":
            for number, text in enumerate(handle, start=1):
                if text.strip():
                    yield number, _json_object(text)
            return
        reader = csv.DictReader(handle, delimiter="\t" if fmt == "tsv" else ",")
        missing = {"source", "target"} - set(reader.fieldnames or ())
        if missing:
            raise ImportError_(f"{path}: the header row must name the columns source, target[, type, subtype]")
        for row in reader:
            yield reader.line_num, row


def _json_object(text: str) -> dict[str, str] | str:
    try:
        value = json.loads(text)
    except ValueError as error:
        return f"not JSON: {error}"
    return value if isinstance(value, dict) else "not a JSON object"


def _add_edge_row(row: dict[str, str] | str, builder: ArraysBuilder) -> str | None:
    if isinstance(row, str):
        return row
    source, target = (str(row.get(k) or "").strip().lower() for k in ("source", "target"))
    if not source or not target:
        return "source and target are required"
    type_name = str(row.get("type") or "flow").strip().lower()
    edge_type = TYPE_NAMES.get(type_name)
    if edge_type is None:
        return f"unknown type {type_name!r}; expected one of {', '.join(TYPE_NAMES)}"
    flags, problem = _subtype_flags(str(row.get("subtype") or ""))
    if problem:
        return problem
    source_kind, target_kind = EDGE_KINDS[edge_type]
    builder.edge(builder.node(source, source_kind), builder.node(target, target_kind), edge_type, flags)
    return None


def _subtype_flags(text: str) -> tuple[int, str | None]:
    flags = 0
    for name in filter(None, (part.strip().upper() for part in re.split(r"[,;|]", text))):
        if name not in Subtype.__members__:
            return 0, f"unknown subtype {name!r}"
        flags |= Subtype[name].bit
    return flags, None


def _hive_rows(path: Path, fmt: str, builder: ArraysBuilder) -> Iterator[tuple[int, str | None]]:
    """Hive's LineageLogger hook: one JSON document per query, with vertices and edges."""
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                yield number, _add_hive_query(_json_object(text), builder, str(path), number)


def _add_hive_query(document: dict | str, builder: ArraysBuilder, file: str, line: int) -> str | None:
    if isinstance(document, str):
        return document
    try:
        vertices = {v["id"]: (v["vertexType"].upper(), v["vertexId"].lower()) for v in document["vertices"]}
        edges = [(e["sources"], e["targets"], e["edgeType"].upper(), e.get("expression") or "")
                 for e in document["edges"]]  # fmt: skip
    except (KeyError, TypeError, AttributeError) as error:
        return f"not a LineageLogger record: missing or bad {error}"
    step = builder.transformation(f"{file}:{line}", file, line)
    for sources, targets, edge_type, expression in edges:
        problem = _add_hive_edge(builder, vertices, step, sources, targets, edge_type, expression)
        if problem:
            return problem
    return None


def _add_hive_edge(
    builder: ArraysBuilder,
    vertices: dict[int, tuple[str, str]],
    step: int,
    sources: list[int],
    targets: list[int],
    edge_type: str,
    expression: str,
) -> str | None:
    if edge_type not in ("PROJECTION", "PREDICATE") or any(v not in vertices for v in (*sources, *targets)):
        return f"edge of type {edge_type!r} names unknown vertices"
    for source in sources:
        for target in targets:
            _hive_pair(builder, vertices[source], vertices[target], step, edge_type, expression)
    return None


def _hive_pair(
    builder: ArraysBuilder,
    source: tuple[str, str],
    target: tuple[str, str],
    step: int,
    edge_type: str,
    expression: str,
) -> None:
    source_table = _table_of(source)
    target_table = builder.node(_table_of(target), NodeKind.TABLE)
    builder.edge(builder.node(source_table, NodeKind.TABLE), step, EdgeType.READ)
    builder.edge(step, target_table, EdgeType.WRITE)
    if target[0] == "COLUMN":
        builder.edge(step, builder.node(target[1], NodeKind.COLUMN), EdgeType.COLUMN_WRITE, 0, step)
    if source[0] != "COLUMN":
        return
    column = builder.node(source[1], NodeKind.COLUMN)
    if edge_type == "PREDICATE":
        # LineageLogger does not say which clause a predicate came from.
        builder.edge(column, target_table, EdgeType.PREDICATE, Subtype.FILTER.bit, step)
    elif target[0] == "COLUMN":
        subtype = _hive_subtype(source[1], expression)
        builder.edge(column, builder.node(target[1], NodeKind.COLUMN), EdgeType.PROJECTION, subtype, step)


def _table_of(vertex: tuple[str, str]) -> str:
    vertex_type, name = vertex
    return name.rsplit(".", 1)[0] if vertex_type == "COLUMN" and name.count(".") >= 2 else name


def _hive_subtype(column: str, expression: str) -> int:
    """LineageLogger gives the expression text only; classify it like our own projection subtypes."""
    if not expression or expression.strip().lower() == column.rsplit(".", 1)[-1]:
        return Subtype.IDENTITY.bit
    if _COUNT.search(expression):
        return Subtype.AGGREGATION_MASKING.bit
    if _AGGREGATE.search(expression):
        return Subtype.AGGREGATION.bit
    return Subtype.TRANSFORMATION.bit


_READERS = {"hive": _hive_rows, "openlineage": _openlineage_rows}
