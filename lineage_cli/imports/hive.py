"""``lineage import --format hive``: Hive LineageLogger records (one JSON document a line) into the builder.

A record is checked whole before any of it is added, so a bad edge never leaves half a record imported.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from lineage_cli.imports.builder import MAX_NAME_CHARS, ArraysBuilder, json_object, quoted
from lineage_cli.model import EdgeType, NodeKind, Subtype

_AGGREGATE = re.compile(r"\b(sum|avg|min|max|collect_set|collect_list|percentile\w*|stddev\w*|variance)\s*\(", re.I)
_COUNT = re.compile(r"\bcount\s*\(", re.I)


def hive_rows(path: Path, builder: ArraysBuilder) -> Iterator[tuple[int, str | None]]:
    """Hive's LineageLogger hook: one JSON document per query, with vertices and edges."""
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                yield number, _add_hive_query(json_object(text), builder, str(path), number)


def _add_hive_query(document: dict | str, builder: ArraysBuilder, file: str, line: int) -> str | None:
    if isinstance(document, str):
        return document
    try:
        edges = _hive_edges(document)
    except _NotHive as problem:
        return f"not a LineageLogger record: {problem}"
    builder.line = line
    step = builder.transformation(f"{file}:{line}", file, line)
    for sources, targets, edge_type, expression in edges:
        for source in sources:
            for target in targets:
                _hive_pair(builder, source, target, step, edge_type, expression)
    return None


class _NotHive(ValueError):
    """A line that is no LineageLogger record; the message says what is wrong with it."""


_HiveVertex = tuple[str, str]  # vertex type (upper case), name (lower case)


def _hive_edges(document: dict) -> list[tuple[list[_HiveVertex], list[_HiveVertex], str, str]]:
    """Each edge's source and target vertices, type and expression, all checked before any is added."""
    vertices = dict(map(_hive_vertex, _hive_list(document, "vertices")))
    edges = []
    for edge in _hive_list(document, "edges"):
        sources, targets, edge_type = _required(edge, ("sources", "targets", "edgeType"))
        if not (_vertex_ids(sources) and _vertex_ids(targets) and isinstance(edge_type, str)):
            raise _NotHive(_HIVE_SHAPE)
        if edge_type.upper() not in ("PROJECTION", "PREDICATE"):
            raise _NotHive(f"edge type {quoted(edge_type)} is neither PROJECTION nor PREDICATE")
        unknown = [vertex for vertex in (*sources, *targets) if vertex not in vertices]
        if unknown:
            raise _NotHive(f"an edge names vertex {quoted(unknown[0])}, which the record does not list")
        expression = edge.get("expression")
        ends = [vertices[vertex] for vertex in sources], [vertices[vertex] for vertex in targets]
        edges.append((*ends, edge_type.upper(), expression if isinstance(expression, str) else ""))
    return edges


# What a record holds, said when a value in it is of another JSON type.
_HIVE_SHAPE = (
    'expected "vertices": [{"id", "vertexType", "vertexId"}, ...] and '
    '"edges": [{"sources": [id, ...], "targets": [id, ...], "edgeType"}, ...]'
)


def _required(parent: object, keys: tuple[str, ...]) -> list[object]:
    """The values of ``keys`` in the JSON object ``parent``."""
    if not isinstance(parent, dict):
        raise _NotHive(_HIVE_SHAPE)
    missing = [key for key in keys if key not in parent]
    if missing:
        raise _NotHive(f"no {missing[0]!r}")
    return [parent[key] for key in keys]


def _hive_list(document: dict, key: str) -> list:
    (value,) = _required(document, (key,))
    if not isinstance(value, list):
        raise _NotHive(_HIVE_SHAPE)
    return value


def _hive_vertex(vertex: object) -> tuple[int | str, _HiveVertex]:
    key, vertex_type, name = _required(vertex, ("id", "vertexType", "vertexId"))
    if not (_is_vertex_id(key) and isinstance(vertex_type, str) and isinstance(name, str)):
        raise _NotHive(_HIVE_SHAPE)
    if len(name) > MAX_NAME_CHARS:
        raise _NotHive(f"vertex {quoted(key)} has a name longer than {MAX_NAME_CHARS:,} characters")
    return key, (vertex_type.upper(), name.lower())


def _vertex_ids(value: object) -> bool:
    return isinstance(value, list) and all(map(_is_vertex_id, value))


def _is_vertex_id(value: object) -> bool:
    """A vertex id: a number in Hive's output (a string is taken too), never true or false."""
    return isinstance(value, int | str) and not isinstance(value, bool)


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
