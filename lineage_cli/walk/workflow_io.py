"""``lineage io WORKFLOW_OR_MODULE``: what a flow step reads and writes, as one picture.

The module (or every module of the workflow) stands for its statements: each dataset one of them
reads points into it (``read``), each one written points out of it (``write``), so a table both read
and written gets arrows both ways.  Inputs that are views are expanded to the real tables behind
them, through their defining statements (a view on a view goes on to the tables); a parameterized
input or output is linked to the real table its placeholder's default names.  Edges point the way
data flows: a default edge runs from the real table into a parameterized input, and from a
parameterized output to the real table.
"""

from __future__ import annotations

from lineage_cli.errors import QueryError
from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store.layout import TYPE_BITS, TYPE_MASK, pack_attributes
from lineage_cli.store.reader import Store
from lineage_cli.walk.answer import answer
from lineage_cli.walk.edges import TypedEdges
from lineage_cli.walk.result import LineageResult
from lineage_cli.walk.traverse import Walk

STEPS = frozenset((NodeKind.MODULE, NodeKind.WORKFLOW))
FLOW = pack_attributes(EdgeType.FLOW, 0)
DEFAULT = pack_attributes(EdgeType.DEFAULT, 0)


class StepNotFound(QueryError):
    """No module or workflow has the name; carries the closest ones."""

    def __init__(self, query: str, suggestions: list[str]) -> None:
        hint = f"; closest: {', '.join(suggestions)}" if suggestions else "; the store has none (harvest --manifest)"
        super().__init__(f"no module or workflow named {query!r}{hint}")


def workflow_io(store: Store, name: str) -> LineageResult:
    """The direct inputs and outputs of the module or workflow called ``name``."""
    step = _find_step(store, name)
    edges = TypedEdges(store)
    io = _Picture(store, step)
    for statement in _statements(edges, step):
        for dataset, packed in edges.into(statement, EdgeType.READ):
            io.add(dataset, step, packed, 1)
        for dataset, packed, _ in edges.out(statement, EdgeType.WRITE):
            io.add(step, dataset, packed, 1)
    inputs = [source for source, target in list(io.flags) if target == step]
    outputs = [target for source, target in list(io.flags) if source == step]
    _expand_views(edges, io, inputs)
    for dataset in inputs + outputs:
        _link_default(edges, io, dataset, as_input=dataset in inputs)
    return answer(store, io.walk(), [step], "io")


def _find_step(store: Store, name: str) -> int:
    node = store.find(name.strip().lower())
    if node is None or store.kind(node) not in STEPS:
        steps = [n for n in range(store.node_count) if store.kind(n) in STEPS]
        raise StepNotFound(name, _closest(store.names_of(steps), name))
    return node


def _closest(names: list[str], wanted: str) -> list[str]:
    import difflib

    return difflib.get_close_matches(wanted.strip().lower(), names, n=5, cutoff=0.4) or names[:5]


def _statements(edges: TypedEdges, step: int) -> list[int]:
    """The transformations that are members of ``step``, through its modules for a workflow."""
    found, pending = [], [step]
    while pending:
        for member, _ in edges.into(pending.pop(), EdgeType.MEMBER):
            (found if edges.store.kind(member) is NodeKind.TRANSFORMATION else pending).append(member)
    return sorted(found)


class _Picture:
    """The answer's edges, flags OR-ed per (source, target, type), and each node's depth."""

    def __init__(self, store: Store, step: int) -> None:
        self.store = store
        self.depths = {step: 0}
        self.flags: dict[tuple[int, int], dict[int, int]] = {}  # (source, target) -> type -> subtype bits

    def add(self, source: int, target: int, packed: int, depth: int) -> None:
        for node in (source, target):
            self.depths.setdefault(node, depth)
        types = self.flags.setdefault((source, target), {})
        kind = packed & TYPE_MASK
        types[kind] = types.get(kind, 0) | packed >> TYPE_BITS

    def walk(self) -> Walk:
        edges = sorted(
            (source, target, pack_attributes(kind, flags))
            for (source, target), types in self.flags.items()
            for kind, flags in types.items()
        )
        nodes = sorted(self.depths)
        return Walk(
            nodes=nodes,
            hops=[self.depths[n] for n in nodes],
            sources=[s for s, _, _ in edges],
            targets=[t for _, t, _ in edges],
            attributes=[a for _, _, a in edges],
        )


def _expand_views(edges: TypedEdges, io: _Picture, inputs: list[int]) -> None:
    """Each input view to the datasets its defining statements read, on through views, one level deeper each."""
    pending, seen = [(n, 1) for n in inputs if edges.store.kind(n) is NodeKind.VIEW], set(inputs)
    while pending:
        view, depth = pending.pop()
        for statement, _ in edges.into(view, EdgeType.WRITE):
            for source, _ in edges.into(statement, EdgeType.READ):
                io.add(source, view, FLOW, depth + 1)
                if edges.store.kind(source) is NodeKind.VIEW and source not in seen:
                    seen.add(source)
                    pending.append((source, depth + 1))


def _link_default(edges: TypedEdges, io: _Picture, dataset: int, as_input: bool) -> None:
    """A parameterized dataset to the real one its default names, in the direction the data flows."""
    if edges.store.kind(dataset) is not NodeKind.PARAMETERIZED:
        return
    for real, _, _ in edges.out(dataset, EdgeType.DEFAULT):
        io.add(*((real, dataset) if as_input else (dataset, real)), DEFAULT, 2)
