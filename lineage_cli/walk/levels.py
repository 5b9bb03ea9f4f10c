"""Roll an answer up a level: each node replaced by its container at that level.

Data climbs ``column -> table -> schema`` (or ``-> datamart``, from a pattern mapping), statements
climb ``transformation -> module -> workflow``; a level moves only its own ladder, so a table walk at
workflow level shows ``tables -> workflow -> tables``.  A node climbs as far as its containers go:
one without a container at the level stays as it is (a parameterized table has no schema, a statement
outside any flow no module), so the links that cross containers stay in the picture.  Only the
answer's own edges are lifted — never every edge between the containers — and duplicates merge (their
subtypes too) while the self-loops the lifting makes go.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lineage_cli.errors import QueryError
from lineage_cli.model import NodeKind, Subtype, schema_of
from lineage_cli.store.reader import Store, like_regex
from lineage_cli.store.roles import node_roles
from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode

LEVELS = ("column", "table", "schema", "datamart", "module", "workflow")
# level -> (the ladder it climbs, the rung it climbs to)
_TARGETS = {
    "column": ("data", 0),
    "table": ("data", 1),
    "schema": ("data", 2),
    "datamart": ("data", 2),
    "module": ("step", 1),
    "workflow": ("step", 2),
}
_RUNGS = {
    "column": ("data", 0),
    "table": ("data", 1),
    "view": ("data", 1),
    "parameterized": ("data", 1),
    "schema": ("data", 2),
    "datamart": ("data", 2),
    "transformation": ("step", 0),
    "module": ("step", 1),
    "workflow": ("step", 2),
}
_SUBTYPE_ORDER = {s.name: s.value for s in Subtype}


class LevelError(QueryError):
    """An unknown level, or a datamart mapping that cannot be used."""


@dataclass(frozen=True, slots=True)
class Datamart:
    pattern: re.Pattern[str]
    name: str


def load_datamarts(path: str | Path) -> list[Datamart]:
    """A YAML mapping ``LIKE pattern on table names: datamart``, first match wins."""
    from lineage_cli.yamlsafe import load

    try:
        mapping = load(Path(path).read_text(encoding="utf-8"), str(path))
    except OSError as error:
        raise LevelError(f"{path}: cannot read: {error.strerror}") from None
    except ValueError as error:
        raise LevelError(str(error)) from None
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise LevelError(f"{path}: expected a mapping of table name patterns to datamart names (`dwh.fct_%: sales`)")
    return [Datamart(like_regex(str(pattern).lower()), name) for pattern, name in mapping.items()]


def rollup(store: Store, result: LineageResult, level: str, datamarts: list[Datamart] | None = None) -> LineageResult:
    """``result`` with every node lifted to its container at ``level`` (one of ``LEVELS``)."""
    if level not in _TARGETS:
        raise LevelError(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")
    if level == "datamart" and not datamarts:
        raise LevelError("--level datamart needs --datamarts FILE.yaml (table name pattern: datamart)")
    lift = _Lift(store, level, datamarts or [])
    lifted = {node.name: lift(node.name, node.kind) for node in result.nodes}
    nodes = _lifted_nodes(store, result.nodes, lifted)
    edges: dict[tuple[str, str, str], set[str]] = {}
    for edge in result.edges:
        source, target = lifted[edge.source][0], lifted[edge.target][0]
        if source != target:
            edges.setdefault((source, target, edge.type), set()).update(edge.subtypes)
    return LineageResult(
        direction=result.direction,
        roots=list(dict.fromkeys(lifted[root][0] for root in result.roots)),
        nodes=nodes,
        edges=[
            ResultEdge(source, target, kind, tuple(sorted(subtypes, key=_SUBTYPE_ORDER.__getitem__)))
            for (source, target, kind), subtypes in sorted(edges.items())
        ],
    )


def groups(
    store: Store, result: LineageResult, group_by: str, datamarts: list[Datamart] | None = None
) -> dict[str, tuple[tuple[str, str], ...]]:
    """Every grouped node's containers, outermost first: its schema, datamart or workflow (``group_by``),
    then, for a column, its table.  A node without such a container is left out of the mapping."""
    if group_by == "datamart" and not datamarts:
        raise LevelError("--group-by datamart needs --datamarts FILE.yaml (table name pattern: datamart)")
    outer, table = _Lift(store, group_by, datamarts or []), _Lift(store, "table", [])
    chains: dict[str, tuple[tuple[str, str], ...]] = {}
    for node in result.nodes:
        chain = []
        # A lift that stops short of the level (a table without schema, a statement outside flows) groups nothing.
        container = outer(node.name, node.kind)
        if container[1] == group_by and container[0] != node.name:
            chain.append(container)
        if node.kind == "column" and (owner := table(node.name, node.kind)) != (node.name, node.kind):
            chain.append(owner)
        if chain:
            chains[node.name] = tuple(chain)
    return chains


class _Lift:
    """Where a node ends up at one level: ``(name, kind)`` of its container there, or its own."""

    def __init__(self, store: Store, level: str, datamarts: list[Datamart]) -> None:
        self.store, self.datamarts = store, datamarts
        self.ladder, self.rung = _TARGETS[level]
        self.above_table = "datamart" if level == "datamart" else "schema"

    def __call__(self, name: str, kind: str) -> tuple[str, str]:
        current = (name, kind)
        while self._below(current[1]):
            parent = self._parent(*current)
            if parent is None:
                break
            current = parent
        return current

    def _below(self, kind: str) -> bool:
        ladder, rung = _RUNGS.get(kind, ("", 0))
        return ladder == self.ladder and rung < self.rung

    def _parent(self, name: str, kind: str) -> tuple[str, str] | None:
        if kind in ("table", "view"):
            return self._above_table(name, NodeKind[kind.upper()])
        node = self.store.find(name)
        container = None if node is None else self.store.container(node)
        return None if container is None else (self.store.name(container), self.store.kind(container).label)

    def _above_table(self, name: str, kind: NodeKind) -> tuple[str, str] | None:
        if self.above_table == "schema":
            schema = schema_of(name, kind)
            return None if schema is None else (schema, "schema")
        mart = next((d.name for d in self.datamarts if d.pattern.fullmatch(name)), None)
        return None if mart is None else (mart, "datamart")


def _lifted_nodes(store: Store, nodes: list[ResultNode], lifted: dict[str, tuple[str, str]]) -> list[ResultNode]:
    """One node per container: the shallowest depth of its members; a store node's own role, else the
    members' common one (a schema is a source when all of its members in the answer are)."""
    members: dict[tuple[str, str], list[ResultNode]] = {}
    for node in nodes:
        members.setdefault(lifted[node.name], []).append(node)
    out = []
    for (name, kind), group in sorted(members.items()):
        if len(group) == 1 and group[0].name == name:
            out.append(group[0])
            continue
        depth = min(member.depth for member in group)
        out.append(ResultNode(name, kind, depth, role=_role(store, name, kind, group)))
    return out


def _role(store: Store, name: str, kind: str, members: list[ResultNode]) -> str | None:
    node = store.find(name) if kind not in ("schema", "datamart") else None
    if node is not None:
        return node_roles(store, [node])[0]
    free_up = all(m.role in ("source", "isolated") for m in members)
    free_down = all(m.role in ("terminal", "isolated") for m in members)
    return {(True, True): "isolated", (True, False): "source", (False, True): "terminal"}.get((free_up, free_down))
