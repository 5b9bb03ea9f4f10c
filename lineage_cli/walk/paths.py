"""``lineage path A B``: how A reaches B under a walkplan.

The walk goes downstream from A under the plan (its collected nodes and shown edges, folds and
conditions included), is cut to the nodes that can still reach B, and gives either the shortest path
(breadth-first, neighbours in name order, so the same store always gives the same path) or every
simple path, depth-first in name order, up to a bound.
"""

from __future__ import annotations

import itertools
from collections import defaultdict, deque
from dataclasses import dataclass

from lineage_cli.errors import QueryError
from lineage_cli.store.reader import Store
from lineage_cli.walk.answer import answer
from lineage_cli.walk.planned import as_plan, default_plan, plan_walk
from lineage_cli.walk.query import resolve
from lineage_cli.walk.result import LineageResult
from lineage_cli.walk.traverse import Walk
from lineage_cli.walk.walkplan import WalkPlan

DEFAULT_MAX_PATHS = 100


class NoPath(QueryError):
    """A does not reach B under the plan, or A or B does not name exactly one node."""


@dataclass(frozen=True, slots=True)
class PathAnswer:
    result: LineageResult
    paths: int
    complete: bool  # False when the bound stopped the enumeration of all paths


def lineage_path(
    store: Store,
    source: str,
    target: str,
    plan: WalkPlan | str | None = None,
    args: frozenset[str] = frozenset(),
    depth: int | None = None,
    all_paths: bool = False,
    max_paths: int = DEFAULT_MAX_PATHS,
    show_transformations: bool = False,
    exact: bool = False,
) -> PathAnswer:
    """The shortest path from ``source`` to ``target`` (every simple one with ``all_paths``, at most
    ``max_paths``) under ``plan`` (by default the one ``lineage down source`` walks); ``exact``: not through
    the statements read approximately."""
    start, end = _one(store, source), _one(store, target)
    chosen = default_plan(store, [start], show_transformations, False) if plan is None else as_plan(plan)
    graph = _Graph(plan_walk(store, [start], "down", chosen, args, depth, exact), end)
    if start not in graph.reaching:
        raise NoPath(_no_path(store, start, end, chosen, args, depth, exact))
    paths, complete = graph.simple_paths(start, end, max_paths) if all_paths else ([graph.shortest(start, end)], True)
    return PathAnswer(answer(store, graph.walk_of(paths), [start, end], "path"), len(paths), complete)


def _one(store: Store, name: str) -> int:
    nodes = resolve(store, name)
    if len(nodes) != 1:
        raise NoPath(f"{name!r} names {len(nodes)} nodes; a path runs between two single nodes")
    return nodes[0]


def _no_path(
    store: Store, start: int, end: int, plan: WalkPlan, args: frozenset[str], depth: int | None, exact: bool
) -> str:
    first, second = store.name(start), store.name(end)
    message = f"no path from {first} to {second} under the {plan.name} walkplan"
    if depth is not None:
        message += f" within {depth} hops"
    if exact:
        message += " through exact statements only"
    if start in plan_walk(store, [end], "down", plan, args, depth, exact).nodes:
        message += f"; {second} is upstream of {first}: try `lineage path {second} {first}`"
    return message


class _Graph:
    """A walk's shown edges, cut to the nodes that reach ``end``; successors in id (= name) order."""

    def __init__(self, walk: Walk, end: int) -> None:
        self.attributes: dict[tuple[int, int], list[int]] = defaultdict(list)
        predecessors: dict[int, list[int]] = defaultdict(list)
        for source, target, packed in zip(walk.sources, walk.targets, walk.attributes, strict=True):
            self.attributes[source, target].append(packed)
            predecessors[target].append(source)
        self.reaching = {end}
        queue = deque([end])
        while queue:
            for source in predecessors[queue.popleft()]:
                if source not in self.reaching:
                    self.reaching.add(source)
                    queue.append(source)
        self.successors: dict[int, list[int]] = defaultdict(list)
        for source, target in sorted(self.attributes):
            if source in self.reaching and target in self.reaching:
                self.successors[source].append(target)

    def shortest(self, start: int, end: int) -> list[int]:
        parents = {start: start}
        queue = deque([start])
        while end not in parents:
            node = queue.popleft()
            for following in self.successors[node]:
                if following not in parents:
                    parents[following] = node
                    queue.append(following)
        path = [end]
        while path[-1] != start:
            path.append(parents[path[-1]])
        return path[::-1]

    def simple_paths(self, start: int, end: int, limit: int) -> tuple[list[list[int]], bool]:
        """Up to ``limit`` simple paths, depth-first in name order, and whether that was all of them."""
        if start == end:
            return [[start]], True
        paths: list[list[int]] = []
        path, on_path = [start], {start}
        pending = [iter(self.successors[start])]
        while pending:
            following = next(pending[-1], None)
            if following is None:
                pending.pop()
                on_path.discard(path.pop())
            elif following == end:
                paths.append([*path, end])
                if len(paths) > limit:
                    return paths[:limit], False
            elif following not in on_path:
                path.append(following)
                on_path.add(following)
                pending.append(iter(self.successors[following]))
        return paths, True

    def walk_of(self, paths: list[list[int]]) -> Walk:
        """The nodes and edges of ``paths``; a node's depth is its least distance from the start along them."""
        hops: dict[int, int] = {}
        for path in paths:
            for position, node in enumerate(path):
                hops[node] = min(hops.get(node, position), position)
        pairs = sorted({pair for path in paths for pair in itertools.pairwise(path)})
        edges = [(source, target, packed) for source, target in pairs for packed in self.attributes[source, target]]
        nodes = sorted(hops)
        return Walk(
            nodes=nodes,
            hops=[hops[n] for n in nodes],
            sources=[s for s, _, _ in edges],
            targets=[t for _, t, _ in edges],
            attributes=[a for _, _, a in edges],
        )
