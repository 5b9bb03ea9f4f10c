"""Walks under a walkplan: the frontier BFS for simple plans, a general walk for every other plan.

A *simple* plan — every active rule forward, followed, its edge shown, no conditions but the kinds its
edges end at, its nodes collected or not by kind, and only transformations left uncollected — is an
edge-type mask (and those end kinds) for ``traverse.bfs`` (vectorized on wide hops), then ``shape.fold``
for the statements it does not collect: ``lineage up/down TABLE`` as it always ran, and the ``columns``
plan of ``lineage up/down COLUMN``.  Predicate rules onto tables (tied to their statement where they meet
a column, ``predicates.py``) and member rules (whose hops are not data hops) need more: a plan that still
collects and shows everything it walks, with no conditions, runs vectorized in ``tied.py`` (once numpy pays
for itself); any other plan takes the general walk.

The general walk is a breadth-first search in plain Python over a double-ended queue.  Depth counts
*data hops*: a hop into a node that is not collected, or into a step (transformation, module,
workflow), costs nothing and goes to the front of the queue, so ``--depth N`` means N dataset-to-dataset
or column-to-column hops whatever was folded or shown between them; a step shows one level deeper than
the node it was reached from.  Each rule's conditions are checked on the edge and on the node it
reaches, ``follow`` says whether the walk goes on from that node, and the nodes no rule collects are
folded: the shown edges through them become one edge, of the path's type when all its edges have one
type and ``flow`` otherwise, without subtypes.  An ``exact`` walk never enters a statement read approximately
(``NodeFlag.APPROXIMATE``: one that did not parse), so on a store that has one it runs as a general walk
whatever its plan.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections import defaultdict, deque
from collections.abc import Iterator

from lineage_cli.model import EdgeType, NodeFlag, NodeKind, Subtype, schema_of
from lineage_cli.store.layout import TYPE_BITS, TYPE_MASK, pack_attributes
from lineage_cli.store.reader import Store, like_regex
from lineage_cli.walk import shape
from lineage_cli.walk.tied import tied_walk
from lineage_cli.walk.traverse import IMPORT_NUMPY_FROM_EDGES, Walk, bfs
from lineage_cli.walk.walkplan import Conditions, EdgeRule, WalkPlan, builtin_plan, resolve_plan

DATASETS = ("table", "view", "parameterized")
# The node kinds at either end of each edge type (model.py): the kinds a rule's collect_node may leave out.
ENDS = {
    EdgeType.READ: {*DATASETS, "transformation"},
    EdgeType.WRITE: {*DATASETS, "transformation"},
    EdgeType.CONTAINS: {*DATASETS, "column"},
    EdgeType.PROJECTION: {"column"},
    EdgeType.PREDICATE: {*DATASETS, "column"},
    EdgeType.FLOW: set(DATASETS),
    EdgeType.COLUMN_WRITE: {"transformation", "column"},
    EdgeType.MEMBER: {"transformation", "module", "workflow"},
    EdgeType.DEFAULT: {*DATASETS, "column"},
}
# A data hop through a statement is two bfs hops (dataset -> transformation -> dataset).
STATEMENT_EDGES = EdgeType.READ.bit | EdgeType.WRITE.bit | EdgeType.COLUMN_WRITE.bit
STEP_KINDS = frozenset(int(k) for k in (NodeKind.TRANSFORMATION, NodeKind.MODULE, NodeKind.WORKFLOW))
KIND_IDS = {k.label: int(k) for k in NodeKind}
COLUMN = int(NodeKind.COLUMN)
PREDICATE = int(EdgeType.PREDICATE)
CONTAINS = pack_attributes(EdgeType.CONTAINS, 0)
FLOW = int(EdgeType.FLOW)
APPROXIMATE = NodeFlag.APPROXIMATE.bit


# -- choosing and compiling a plan -------------------------------------------------------------------------
def default_plan(store: Store, starts: list[int], show_transformations: bool, predicates: bool) -> WalkPlan:
    """The plan of a query without ``--walkplan``: a column walk from columns, a table walk otherwise."""
    if all(store.kind(n) is NodeKind.COLUMN for n in starts):
        return builtin_plan("columns-with-predicates" if predicates else "columns")
    return builtin_plan("transformations" if show_transformations else "tables")


def as_plan(plan: WalkPlan | str) -> WalkPlan:
    """A plan, or a built-in plan's name or a plan file's path."""
    return plan if isinstance(plan, WalkPlan) else resolve_plan(plan)


class FastPlan:
    """A simple plan as ``bfs`` runs it: the edge types to follow, and whether to fold the statements away.

    (Plain classes here: a dataclass costs a module about a millisecond of start-up, on every query.)
    """

    __slots__ = ("mask", "fold", "ends")

    def __init__(self, mask: int, fold: bool, ends: dict[int, frozenset[int]] | None = None) -> None:
        self.mask, self.fold = mask, fold
        self.ends = ends or None  # edge type -> the node kinds its edges may end at (``target_kind``)


def compile_plan(rules: tuple[EdgeRule, ...]) -> FastPlan | None:
    """The frontier-BFS form of ``rules``, or None when they need the general walk."""
    if not rules or not all(map(_plain, rules)):
        return None
    folded = {kind for rule in rules for kind in ENDS[rule.edge] if not rule.collects(kind)}
    if folded - {"transformation"}:
        return None  # shape.fold folds statements only
    if folded and any(rule.collects("transformation") for rule in rules if "transformation" in ENDS[rule.edge]):
        return None  # statements shown through one rule and folded through another: per-rule collection
    mask, ends = 0, {}
    for rule in rules:
        mask |= rule.edge.bit
        if rule.conditions.target_kinds:
            ends[int(rule.edge)] = frozenset(KIND_IDS[kind] for kind in rule.conditions.target_kinds)
    if len({int(rule.edge) for rule in rules}) < len(rules) and ends:
        return None  # two rules for one type, one with a target kind: per-rule conditions
    return FastPlan(mask, bool(folded), ends)


def tied_plan(rules: tuple[EdgeRule, ...]) -> tuple[int, frozenset[int]] | None:
    """The edge-type mask and the node kinds not followed, for ``tied.tied_walk``; None when ``rules`` need the
    general walk: each rule must be forward, show its edges and collect its nodes, with no conditions, and
    whether a node is followed must depend on its kind alone (every rule reaching a kind follows it, or none)."""
    if not rules:
        return None
    for rule in rules:
        if rule.direction != "forward" or rule.collect_node is not True or not rule.collect_edge:
            return None
        if rule.conditions != Conditions():
            return None
    follows = {(kind, rule.follows(kind)) for rule in rules for kind in ENDS[rule.edge]}
    unfollowed = {kind for kind, follows_it in follows if not follows_it}
    if unfollowed & {kind for kind, follows_it in follows if follows_it}:
        return None
    return sum(rule.edge.bit for rule in rules), frozenset(KIND_IDS[kind] for kind in unfollowed)


def _plain(rule: EdgeRule) -> bool:
    """Whether ``bfs`` walks the rule as the general walk would: forward, followed, shown, no conditions but the
    kinds its edges end at; a predicate rule only onto columns (a predicate onto a table is tied to the
    statement that writes it, ``predicates.py``, which only the general walk does)."""
    conditions = rule.conditions
    if rule.edge == EdgeType.PREDICATE and conditions.target_kinds != frozenset({"column"}):
        return False
    return (
        rule.direction == "forward"
        and rule.follow is True
        and rule.collect_edge
        and conditions._replace(target_kinds=frozenset()) == Conditions()
        and rule.edge != EdgeType.MEMBER
    )


# -- walking ---------------------------------------------------------------------------------------------------
def plan_walk(
    store: Store,
    starts: list[int],
    direction: str,
    plan: WalkPlan,
    args: frozenset[str] = frozenset(),
    depth: int | None = None,
    exact: bool = False,
) -> Walk:
    """The walk ``direction`` ("up" or "down") from ``starts`` under ``plan``: collected nodes, shown edges;
    ``exact``: not through the statements read approximately."""
    rules = plan.active(args)
    # an exact walk keeps out the statements read approximately, node by node: the general walk, where there are any
    general_only = exact and store.node_flags_present & APPROXIMATE
    fast = None if general_only else compile_plan(rules)
    if fast is not None:
        return _frontier_walk(store, starts, direction, fast, depth)
    tied = None if general_only or not _numpy_pays(store) else tied_plan(rules)
    if tied is not None:
        return tied_walk(store, starts, direction, *tied, depth)
    return _GeneralWalk(store, direction, rules, depth, exact).run(starts)


def _numpy_pays(store: Store) -> bool:
    """Whether a vectorized walk is worth numpy's import: it is loaded already, or the store is large enough
    that a walk in Python would cost more (``traverse.IMPORT_NUMPY_FROM_EDGES``)."""
    return "numpy" in sys.modules or store.edge_count > IMPORT_NUMPY_FROM_EDGES


def _frontier_walk(store: Store, starts: list[int], direction: str, plan: FastPlan, depth: int | None) -> Walk:
    through_statements = bool(plan.mask & STATEMENT_EDGES)
    max_hops = None if depth is None else depth * (2 if through_statements else 1)
    walk = bfs(store, starts, direction, plan.mask, max_hops, plan.ends)
    if through_statements and plan.mask & ~STATEMENT_EDGES:
        walk = _half_hops(walk, direction, max_hops)
    if plan.fold:
        return shape.fold(store, walk)
    return _data_hops(walk) if through_statements else walk


def _half_hops(walk: Walk, direction: str, max_hops: int | None) -> Walk:
    """``walk`` with hops counted in half data hops, cut at ``max_hops`` of them.

    A walk through statements counts an edge into or out of a statement as half a data hop (two per
    ``dataset -> statement -> dataset``), and any other edge (a direct ``flow`` from imported lineage) as a
    whole one; ``bfs`` counted every edge as one hop, so where the walk crossed other edges its hops are
    counted again here, and what lies past ``max_hops`` (which the walk reached early) is cut.
    """
    types = _types(walk)
    if not types & ~STATEMENT_EDGES:
        return walk  # statement edges only: the walk's hops are half hops already
    if types & STATEMENT_EDGES:
        half = _reweighed(walk, direction)
    elif walk.vectorized:
        nodes, hops, sources, targets, attributes = walk.columns()
        half = Walk(nodes, hops * 2, sources, targets, attributes)
    else:
        half = Walk(walk.nodes, [2 * hop for hop in walk.hops], walk.sources, walk.targets, walk.attributes)
    return half if max_hops is None else _cut(half, direction, max_hops)


def _types(walk: Walk) -> int:
    """The types of the walk's edges, as a mask."""
    if walk.vectorized:
        import numpy as np

        values = np.flatnonzero(np.bincount(walk.columns()[4] & TYPE_MASK, minlength=TYPE_MASK + 1)).tolist()
    else:
        values = {attributes & TYPE_MASK for attributes in set(walk.attributes)}
    return sum(1 << value for value in values)


def _reweighed(walk: Walk, direction: str) -> Walk:
    """``walk`` with each node's hops the fewest half hops from a start along the walk's edges (Dial's
    shortest paths: weights 1 and 2, so buckets by distance replace a heap)."""
    origins, reached = (walk.sources, walk.targets) if direction == "down" else (walk.targets, walk.sources)
    arcs: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for origin, node, attributes in zip(origins, reached, walk.attributes, strict=True):
        arcs[origin].append((node, 1 if (1 << (attributes & TYPE_MASK)) & STATEMENT_EDGES else 2))
    distance = {node: 0 for node, hop in zip(walk.nodes, walk.hops, strict=True) if hop == 0}
    buckets: list[list[int]] = [list(distance)]
    for level in itertools.count():
        if level >= len(buckets):
            break
        for origin in buckets[level]:
            if distance[origin] != level:
                continue  # met again later at a greater distance: settled already
            for node, weight in arcs.get(origin, ()):
                if distance.get(node, level + weight + 1) > level + weight:
                    distance[node] = level + weight
                    buckets.extend([] for _ in range(level + weight + 1 - len(buckets)))
                    buckets[level + weight].append(node)
    hops = [distance[node] for node in walk.nodes]
    return Walk(walk.nodes, hops, walk.sources, walk.targets, walk.attributes)


def _cut(walk: Walk, direction: str, max_hops: int) -> Walk:
    """The part of a walk (hops in half hops) within ``max_hops``: the nodes that far, and the edges a walk
    stopping there crosses (each from a node it expanded, ending within the limit)."""
    hop_of = dict(zip(walk.nodes, walk.hops, strict=True))
    origins = walk.sources if direction == "down" else walk.targets
    kept = [
        index
        for index, (origin, attributes) in enumerate(zip(origins, walk.attributes, strict=True))
        if hop_of[origin] + (1 if (1 << (attributes & TYPE_MASK)) & STATEMENT_EDGES else 2) <= max_hops
    ]
    nodes = [(node, hop) for node, hop in zip(walk.nodes, walk.hops, strict=True) if hop <= max_hops]
    return Walk(
        nodes=[node for node, _ in nodes],
        hops=[hop for _, hop in nodes],
        sources=[walk.sources[i] for i in kept],
        targets=[walk.targets[i] for i in kept],
        attributes=[walk.attributes[i] for i in kept],
    )


def _data_hops(walk: Walk) -> Walk:
    """``walk`` with hops counted in data hops: a statement shows one level deeper than what it reads."""
    if walk.vectorized:
        nodes, hops, sources, targets, attributes = walk.columns()
        return Walk(nodes, (hops + 1) // 2, sources, targets, attributes)
    return Walk(walk.nodes, [(hop + 1) // 2 for hop in walk.hops], walk.sources, walk.targets, walk.attributes)


class _Rule:
    """An active rule compiled for the general walk: kinds as stored kind values, conditions as bits and a regex."""

    __slots__ = ("edge", "collect", "follow", "show", "kinds", "flags", "pattern", "schemas", "max_depth", "ends")

    def __init__(self, rule: EdgeRule) -> None:
        conditions = rule.conditions
        self.edge = int(rule.edge)
        self.collect = frozenset(value for label, value in KIND_IDS.items() if rule.collects(label))
        self.follow = frozenset(value for label, value in KIND_IDS.items() if rule.follows(label))
        self.show = rule.collect_edge
        self.kinds = frozenset(KIND_IDS[k] for k in conditions.node_kinds) or None  # None: any
        self.flags = sum(Subtype[name].bit for name in conditions.subtypes)  # one of them must be set; 0: any
        self.pattern: re.Pattern[str] | None = None
        if conditions.name_like is not None:
            self.pattern = like_regex(conditions.name_like)
        self.schemas = conditions.schemas
        self.max_depth = conditions.max_depth
        self.ends = frozenset(KIND_IDS[k] for k in conditions.target_kinds) or None  # None: any


def _graph_directions(rule: EdgeRule, direction: str) -> tuple[bool, ...]:
    """The ways ``rule`` walks its edges in a ``direction`` query: True along them (downstream), False against."""
    down = direction == "down"
    return {"forward": (down,), "backward": (not down,), "both": (True, False)}[rule.direction]


# A step of the general walk: the walk goes ``origin -> reached`` (in its own direction) along the edge
# ``source -> target`` (as stored) with ``attributes``, under ``rule``, ``hops`` data hops from the start
# before that edge counts.
Step = tuple[int, int, int, int, int, _Rule, int]


class _GeneralWalk:
    """One walk under a plan's rules; ``run`` returns it as a ``Walk`` of collected nodes and shown edges."""

    def __init__(
        self, store: Store, direction: str, rules: tuple[EdgeRule, ...], depth: int | None, exact: bool = False
    ) -> None:
        # only here: the frontier walk of every table query does not pay for their imports
        from lineage_cli.walk.edges import TypedEdges
        from lineage_cli.walk.predicates import PredicateTies

        self.store, self.kinds, self.depth, self.up = store, store.kinds, depth, direction == "up"
        self.flags = store.array("node_flags") if exact else None  # an exact walk: the statements to keep out
        self.edges = TypedEdges(store)
        self.ties = PredicateTies(self.edges)
        # along (True: downstream) -> edge type -> rules
        self.moves: dict[bool, dict[int, list[_Rule]]] = {True: {}, False: {}}
        for rule in rules:
            compiled = _Rule(rule)
            for along in _graph_directions(rule, direction):
                self.moves[along].setdefault(compiled.edge, []).append(compiled)
        self.data_hops: dict[int, int] = {}  # node -> data hops from the nearest start
        self.expanded: dict[int, int] = {}  # node -> its data hops when it was expanded
        self.collected: set[int] = set()
        self.followed: set[int] = set()
        # (origin, reached, source, target, attributes) -> shown: each arc of the walk, with the edge it went along
        self.arcs: dict[tuple[int, int, int, int, int], bool] = {}

    def run(self, starts: list[int]) -> Walk:
        queue: deque[tuple[int, int]] = deque()
        for start in sorted(set(starts)):
            self.data_hops[start] = 0
            queue.append((start, 0))
        first = set(self.data_hops)
        self.collected |= first
        self.followed |= first
        arcs = self.arcs
        while queue:
            node, hops = queue.popleft()
            if not self._expandable(node, hops):
                continue
            self.expanded[node] = hops
            for origin, reached, source, target, packed, rule, before in self._steps(node, hops):
                self._reach(queue, reached, before, rule)
                if rule.show:
                    arcs[origin, reached, source, target, packed] = True
                else:
                    arcs.setdefault((origin, reached, source, target, packed), False)
        return self._walk(first)

    def _expandable(self, node: int, hops: int) -> bool:
        return (
            self.data_hops[node] == hops  # not a stale queue entry
            and node in self.followed
            and self.expanded.get(node, hops + 1) > hops  # not expanded yet, or reached closer since
            and (self.depth is None or hops < self.depth)
        )

    def _reach(self, queue: deque[tuple[int, int]], node: int, hops: int, rule: _Rule) -> None:
        known = self.data_hops.get(node)
        if known is not None and known <= hops and node in self.collected and node in self.followed:
            return  # the common case, a node met again: nothing this hop can change
        kind = self.kinds[node]
        collected = kind in rule.collect
        if collected:
            self.collected.add(node)
        cost = 1 if collected and kind not in STEP_KINDS else 0
        newly_followed = kind in rule.follow and node not in self.followed
        if newly_followed:
            self.followed.add(node)
        if known is None or hops + cost < known:
            self.data_hops[node] = hops + cost
            if cost:
                queue.append((node, hops + cost))
            else:
                queue.appendleft((node, hops))  # a free hop: expanded before the next level, as 0-1 BFS does
        elif newly_followed:
            queue.append((node, known))  # reached before by a rule that did not follow it

    def _steps(self, node: int, hops: int) -> Iterator[Step]:
        kind = self.kinds[node]
        for along, by_type in self.moves.items():
            if not by_type:
                continue
            tied = kind == COLUMN and PREDICATE in by_type
            offsets, neighbours, attributes = self.edges.fwd if along else self.edges.bwd
            for index in range(offsets[node], offsets[node + 1]):
                packed = attributes[index]
                edge_type = packed & TYPE_MASK
                rules = by_type.get(edge_type)
                if rules is None:
                    continue
                neighbour = neighbours[index]
                source, target = (node, neighbour) if along else (neighbour, node)
                if tied and edge_type == PREDICATE and self.kinds[target] != COLUMN:
                    continue  # onto a table: tied to its statement below; onto a column, a plain column hop
                for rule in rules:
                    if self._admits(rule, neighbour, packed, hops, target):
                        yield node, neighbour, source, target, packed, rule, hops
            if tied:
                yield from self._predicates(node, along, by_type[PREDICATE], hops)

    def _predicates(self, column: int, along: bool, rules: list[_Rule], hops: int) -> Iterator[Step]:
        """Predicate edges where they meet a column: tied to the statement that writes it (``predicates.py``).

        Downstream, the column reaches the table a predicate gates, and through it the columns its
        statement writes there; upstream, the column reaches its table, and through it the columns gating
        the statements that write ``column``.  Either pair is one hop (both ends count from ``hops``), as a
        predicate is one step of column lineage.  The conditions are checked on the node the predicate
        edge reaches: the table downstream, the gating column upstream.
        """
        if along:
            for table, packed, columns in self.ties.gated(column):
                for rule in rules:
                    if self._admits(rule, table, packed, hops, table):
                        yield column, table, column, table, packed, rule, hops
                        yield from ((table, other, table, other, CONTAINS, rule, hops) for other in columns)
            return
        for source, table, packed in self.ties.gating(column):
            for rule in rules:
                if self._admits(rule, source, packed, hops, table):
                    yield column, table, table, column, CONTAINS, rule, hops
                    yield table, source, source, table, packed, rule, hops

    def _admits(self, rule: _Rule, node: int, packed: int, hops: int, end: int) -> bool:
        """Whether ``rule``'s conditions hold for the edge ``packed`` (stored as ending at ``end``) reaching ``node``
        from ``hops`` data hops."""
        kind = self.kinds[node]
        if rule.kinds is not None and kind not in rule.kinds:
            return False
        if self.flags is not None and self.flags[node] & APPROXIMATE:
            return False
        if rule.ends is not None and self.kinds[end] not in rule.ends:
            return False
        if rule.flags and not (packed >> TYPE_BITS) & rule.flags:
            return False
        if rule.max_depth is not None and hops + (kind in rule.collect) > rule.max_depth:
            return False
        if rule.pattern is None and not rule.schemas:
            return True
        name = self.store.name(node)
        if rule.pattern is not None and not rule.pattern.fullmatch(name):
            return False
        return not rule.schemas or schema_of(name, NodeKind(kind)) in rule.schemas

    def _walk(self, starts: set[int]) -> Walk:
        edges = sorted(edge for edge, shown in self._edges().items() if shown)
        nodes = sorted(self.collected)
        return Walk(
            nodes=nodes,
            hops=[self.data_hops[n] + (self.kinds[n] in STEP_KINDS and n not in starts) for n in nodes],
            sources=[source for source, _, _ in edges],
            targets=[target for _, target, _ in edges],
            attributes=[packed for _, _, packed in edges],
        )

    def _edges(self) -> dict[tuple[int, int, int], bool]:
        """The edges of the arcs between collected nodes as walked, and one edge per path through folded ones."""
        collected = self.collected
        edges: dict[tuple[int, int, int], bool] = {}
        through: dict[tuple[int, int], dict[Label, bool]] = {}  # the arcs that touch folded nodes
        for (origin, reached, source, target, packed), show in self.arcs.items():
            if origin in collected and reached in collected:
                edge = (source, target, packed)
                edges[edge] = edges.get(edge, False) or show
                continue
            labels = through.setdefault((origin, reached), {})
            label = (packed & TYPE_MASK, (source, target))
            labels[label] = labels.get(label, False) or show
        for (origin, reached), labels in fold_arcs(through, set(self.data_hops) - collected).items():
            source, target = (reached, origin) if self.up else (origin, reached)  # the query's flow direction
            for (edge_type, _), show in labels.items():
                key = (source, target, pack_attributes(edge_type, 0))
                edges[key] = edges.get(key, False) or show
        return edges


# An arc's label: its edge type, and the stored edge it went along (None once arcs are joined).
Label = tuple[int, tuple[int, int] | None]


def fold_arcs(
    arcs: dict[tuple[int, int], dict[Label, bool]], folded: set[int]
) -> dict[tuple[int, int], dict[Label, bool]]:
    """Contract ``folded`` nodes out of walk arcs ``(origin, reached) -> {label: shown}``, one by one.

    Each arc into a folded node joins each arc out of it, so a chain of folded nodes becomes one arc: of
    the chain's edge type when it has one, ``flow`` otherwise, shown when every part is.  A loop on a
    folded node joins nothing, nor does going back along the edge an arc came by (from a table down to
    its column and back up to it).  What is left joins unfolded nodes only.

    >>> read, write, value = int(EdgeType.READ), int(EdgeType.WRITE), int(EdgeType.PROJECTION)
    >>> arcs = {(1, 2): {(read, (1, 2)): True}, (2, 1): {(read, (1, 2)): True}, (2, 3): {(write, (2, 3)): True}}
    >>> fold_arcs(arcs | {(3, 4): {(value, (3, 4)): True}, (4, 5): {(value, (4, 5)): False}}, {2, 4})
    {(1, 3): {(6, None): True}, (3, 5): {(4, None): False}}
    """
    out: dict[int, dict[int, dict[Label, bool]]] = defaultdict(dict)  # origin -> reached -> label -> shown
    into: dict[int, set[int]] = defaultdict(set)
    for (origin, reached), types in arcs.items():
        out[origin][reached] = dict(types)
        into[reached].add(origin)
    for node in sorted(folded):
        ahead = {reached: types for reached, types in out.pop(node, {}).items() if reached != node}
        for reached in ahead:
            into[reached].discard(node)
        for origin in into.pop(node, set()) - {node}:
            behind = out[origin].pop(node)
            for reached, types in ahead.items():
                joined = out[origin].setdefault(reached, {})
                for (first, came_by), shown_first in behind.items():
                    for (second, going_by), shown_second in types.items():
                        if came_by is not None and came_by == going_by:
                            continue  # back along the same edge: a detour, not a path
                        label = (first if first == second else FLOW, None)
                        joined[label] = joined.get(label, False) or (shown_first and shown_second)
                into[reached].add(origin)
    return {(origin, reached): types for origin, ends in out.items() for reached, types in ends.items() if types}
