"""From a walk to the answer: fold transformations away, name nodes and edges, dedupe and sort, add roles.

Node ids are the ranks of the node names, so sorting by id sorts by name and the answer's order costs
integer sorts only.  A vectorized walk (numpy arrays, from a wide walk) is shaped in numpy, a small one in
plain Python so that a cold query that never needed numpy does not import it here either.
"""

from __future__ import annotations

from collections import defaultdict
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from lineage_cli.model import EdgeType, NodeFlag, NodeKind, Subtype, subtypes_from_flags
from lineage_cli.store.layout import TYPE_BITS, TYPE_MASK, pack_attributes
from lineage_cli.store.reader import Store, gathered
from lineage_cli.store.roles import node_roles
from lineage_cli.walk.result import ResultColumns
from lineage_cli.walk.traverse import Walk

if TYPE_CHECKING:
    import numpy as np

TRANSFORMATION = int(NodeKind.TRANSFORMATION)
COLUMN = int(NodeKind.COLUMN)
FLOW = pack_attributes(EdgeType.FLOW, 0)
DECLARED_FLOW = pack_attributes(EdgeType.FLOW, Subtype.DECLARED.bit)
DECLARED_BITS = Subtype.DECLARED.bit << TYPE_BITS  # the DECLARED flag inside packed attributes
# An answer's mark (past the stored 16 bits) on the edges only statements read approximately give
APPROXIMATE_FLOW = pack_attributes(EdgeType.FLOW, Subtype.APPROXIMATE.bit)
APPROXIMATE_BITS = Subtype.APPROXIMATE.bit << TYPE_BITS
APPROXIMATE_STEP = NodeFlag.APPROXIMATE.bit
STATEMENT_TYPES = (int(EdgeType.READ), int(EdgeType.WRITE))
LOW_32 = 0xFFFFFFFF
KNOWN_FLAGS = sum(s.bit for s in Subtype)  # other flag bits do not show in an answer, so they cannot split an edge
# An answer lists edges by source, target, then type *label*; this ranks types in label order.
LABEL_RANK = {int(t): rank for rank, t in enumerate(sorted(EdgeType, key=lambda t: t.label))}
# An edge's detail (``_detail``) holds its label rank (a type without a label ranks 16 + type) above its flags.
_FLAG_BITS = KNOWN_FLAGS.bit_length()
_DETAIL_BITS = _FLAG_BITS + (16 + TYPE_MASK).bit_length()
_RANK_KINDS = [next((k for k, r in LABEL_RANK.items() if r == rank), rank - 16) for rank in range(16 + TYPE_MASK + 1)]


# -- folding -----------------------------------------------------------------------------------------------
def fold(store: Store, walk: Walk) -> Walk:
    """Replace ``a -> t -> b`` by ``a -> b`` (type flow) for every transformation ``t`` in the walk.

    A dataset's hop count becomes the number of dataset-to-dataset hops.  Parsed lineage wins: a pair only
    declared steps give is flagged DECLARED, one only statements read approximately give APPROXIMATE.
    """
    return _fold_arrays(store, walk) if walk.vectorized else _fold_lists(store, walk)


def _fold_lists(store: Store, walk: Walk) -> Walk:
    """``fold`` in plain Python.  Edges are ``source << 32 | target`` ints while they are sorted and deduped
    (node ids are i4): comparing ints costs a fraction of what tuples do."""
    kinds = store.kinds
    if TRANSFORMATION not in set(map(kinds.__getitem__, walk.nodes)):
        # Direct flow only (imported lineage): edge ends are walked nodes, so no edge touches a statement.
        pairs = zip(walk.sources, walk.targets, strict=True)
        keys = _sorted_distinct_keys([source << 32 | target for source, target in pairs])
        return Walk(
            nodes=list(walk.nodes),
            hops=[(hop + 1) // 2 for hop in walk.hops],
            sources=[key >> 32 for key in keys],
            targets=[key & LOW_32 for key in keys],
            attributes=[FLOW] * len(keys),
            ordered=True,
        )
    inputs: dict[int, set[int]] = defaultdict(set)
    outputs: dict[int, set[int]] = defaultdict(set)
    direct: set[int] = set()
    declared_steps: set[int] = set()
    for source, target, attribute in zip(walk.sources, walk.targets, walk.attributes, strict=True):
        if kinds[target] == TRANSFORMATION:
            inputs[target].add(source)
        elif kinds[source] == TRANSFORMATION:
            outputs[source].add(target)
        else:
            direct.add(source << 32 | target)
            continue
        if attribute & DECLARED_BITS:
            declared_steps.add(target if kinds[target] == TRANSFORMATION else source)
    declared: set[int] = set()
    approximate: set[int] = set()
    flags = store.array("node_flags")
    for step in inputs.keys() & outputs.keys():
        pairs = {a << 32 | b for a in inputs[step] for b in outputs[step]}
        if step in declared_steps:
            declared.update(pairs)
        else:
            (approximate if flags[step] & APPROXIMATE_STEP else direct).update(pairs)
    kept = [
        (node, (hop + 1) // 2) for node, hop in zip(walk.nodes, walk.hops, strict=True) if kinds[node] != TRANSFORMATION
    ]
    keys = _sorted_distinct_keys(list(direct | declared | approximate))
    return Walk(
        nodes=[node for node, _ in kept],
        hops=[hop for _, hop in kept],
        sources=[key >> 32 for key in keys],
        targets=[key & LOW_32 for key in keys],
        attributes=[FLOW if key in direct else DECLARED_FLOW if key in declared else APPROXIMATE_FLOW for key in keys],
        ordered=True,
    )


def _sorted_distinct_keys(keys: list[int]) -> list[int]:
    """``sorted(set(keys))``, sorting first: a walk records its edges in runs already in order (a hop's
    origins ascending, each origin's neighbours ascending), which the sort merges in near-linear time.

    >>> _sorted_distinct_keys([5, 1, 5, 3, 1])
    [1, 3, 5]
    """
    keys.sort()
    if len(keys) < 2:
        return keys
    distinct = [key for key, previous in zip(keys[1:], keys, strict=False) if key != previous]
    distinct.insert(0, keys[0])
    return distinct


def _fold_arrays(store: Store, walk: Walk) -> Walk:
    import numpy as np

    nodes, hops, sources, targets, attributes = walk.columns()
    kinds = store.numpy_array("node_kind")
    dataset = kinds.take(nodes) != TRANSFORMATION
    if dataset.all():  # direct flow only (imported lineage), as in ``_fold_lists``: nothing to join
        keys = _keys(sources, targets)
        flows = np.full(keys.size, FLOW, dtype=np.uint16)
        return Walk(
            nodes, (hops + 1) // 2, (keys >> 32).astype(np.int64), (keys & LOW_32).astype(np.int64), flows, True
        )
    into_step = kinds.take(targets) == TRANSFORMATION
    from_step = ~into_step & (kinds.take(sources) == TRANSFORMATION)
    direct = ~(into_step | from_step)
    # a -> t and t -> b meet on t: every input of t pairs with every output of t
    step_in, a = _distinct_pairs(targets[into_step], sources[into_step])
    step_out, b = _distinct_pairs(sources[from_step], targets[from_step])
    low = np.searchsorted(step_out, step_in, side="left")
    count = np.searchsorted(step_out, step_in, side="right") - low
    joined_a = np.repeat(a, count)
    joined_b = b.take(_expand(low, count))
    flagged = (attributes & DECLARED_BITS) != 0
    declared_steps = _sorted_distinct(np.concatenate((targets[into_step & flagged], sources[from_step & flagged])))
    joined_steps = np.repeat(step_in, count)
    by_declared = _within(declared_steps, joined_steps)
    by_approximate = ~by_declared & ((store.numpy_array("node_flags").take(joined_steps) & APPROXIMATE_STEP) != 0)
    by_parsed = ~(by_declared | by_approximate)
    parsed = _keys(np.concatenate((sources[direct], joined_a[by_parsed])),
                   np.concatenate((targets[direct], joined_b[by_parsed])))  # fmt: skip
    # parsed lineage wins: a pair only declared steps give stays declared, then approximate
    declared = _keys(joined_a[by_declared], joined_b[by_declared])
    declared = declared[~_within(parsed, declared)]
    approximate = _keys(joined_a[by_approximate], joined_b[by_approximate])
    approximate = approximate[~(_within(parsed, approximate) | _within(declared, approximate))]
    keys = _sorted_distinct(np.concatenate((parsed, declared, approximate)))
    marks = np.where(_within(declared, keys), DECLARED_FLOW, FLOW).astype(np.uint16)
    return Walk(
        nodes=nodes[dataset],
        hops=(hops[dataset] + 1) // 2,
        sources=(keys >> 32).astype(np.int64),
        targets=(keys & LOW_32).astype(np.int64),
        # (wider than the store's 16 bits only when an edge is approximate)
        attributes=np.where(_within(approximate, keys), np.uint32(APPROXIMATE_FLOW), marks.astype(np.uint32))
        if approximate.size
        else marks,
        ordered=True,
    )


def _keys(sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Distinct ``source << 32 | target`` keys, sorted (node ids are i4, so a key orders like the pair)."""
    import numpy as np

    return _sorted_distinct(sources.astype(np.int64) << 32 | targets.astype(np.int64))


def _within(sorted_values: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For each of ``values``: is it one of ``sorted_values``?  (``np.isin`` by binary search, no hashing.)"""
    import numpy as np

    if not sorted_values.size:
        return np.zeros(values.size, dtype=np.bool_)
    position = np.minimum(np.searchsorted(sorted_values, values), sorted_values.size - 1)
    return sorted_values.take(position) == values


def _distinct_pairs(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``(first, second)`` pairs, sorted."""
    import numpy as np

    key = _sorted_distinct((first.astype(np.int64) << 32) | second.astype(np.int64))
    return (key >> 32).astype(np.int32), (key & 0xFFFFFFFF).astype(np.int32)


def _sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` by sorting: numpy 2's hash-based unique is many times slower on int64 keys."""
    import numpy as np

    values = np.sort(values)
    if values.size < 2:
        return values
    first = np.empty(values.size, dtype=np.bool_)
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return values.compress(first)


def _expand(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``starts[i], starts[i] + 1, ..., starts[i] + counts[i] - 1`` for every ``i``, concatenated."""
    import numpy as np

    total = int(counts.sum())
    index = np.arange(total, dtype=np.int64)
    index += np.repeat(starts - (np.cumsum(counts) - counts), counts)
    return index


# -- naming --------------------------------------------------------------------------------------------------
def columns(store: Store, walk: Walk) -> ResultColumns:
    """The walk's nodes (by name) and distinct edges (by source, target, type, subtypes) as answer columns."""
    walk = _approximate_marked(store, walk)
    return _columns_of_arrays(store, walk) if walk.vectorized else _columns_of_lists(store, walk)


def _approximate_marked(store: Store, walk: Walk) -> Walk:
    """``walk`` with the read and write edges of the statements read approximately that it shows marked
    APPROXIMATE, as folding marks the edges only they give (the store flags their nodes, not their edges)."""
    if walk.ordered:
        return walk  # folded: no statement is left in it, and folding marked its edges
    if walk.vectorized:
        import numpy as np

        nodes, hops, sources, targets, attributes = walk.columns()
        flags = store.numpy_array("node_flags")
        if not (flags.take(nodes) & APPROXIMATE_STEP).any():
            return walk
        touched = ((flags.take(sources) | flags.take(targets)) & APPROXIMATE_STEP) != 0
        touched &= np.isin(attributes & TYPE_MASK, STATEMENT_TYPES)
        wide = attributes.astype(np.uint32)
        marked = np.where(touched, wide | np.uint32(APPROXIMATE_BITS), wide)
        return Walk(nodes, hops, sources, targets, marked, walk.ordered)
    flags = store.array("node_flags")
    if not any(flags[node] & APPROXIMATE_STEP for node in walk.nodes):
        return walk
    marked = [
        attribute | APPROXIMATE_BITS
        if attribute & TYPE_MASK in STATEMENT_TYPES and (flags[source] | flags[target]) & APPROXIMATE_STEP
        else attribute
        for source, target, attribute in _edge_rows(walk)
    ]
    return Walk(walk.nodes, walk.hops, walk.sources, walk.targets, marked, walk.ordered)


def _columns_of_lists(store: Store, walk: Walk) -> ResultColumns:
    hop_of = dict(zip(walk.nodes, walk.hops, strict=True))
    if len(hop_of) == len(walk.nodes):  # each node once, as walks have them
        ids = sorted(hop_of)  # id order is name order
        depths = list(map(hop_of.__getitem__, ids))
    else:
        visits = sorted(zip(walk.nodes, walk.hops, strict=True), key=itemgetter(0))
        ids, depths = [node for node, _ in visits], [hop for _, hop in visits]
    names = _Names(store, ids)
    answer = ResultColumns(
        names=names.listed,
        kinds=_checked(list(map(_kind_labels().__getitem__, map(store.kinds.__getitem__, ids)))),
        depths=depths,
    )
    _add_roles(store, ids, answer)
    if ids and _has_files(store) and max(map(store.array("node_file").__getitem__, ids)) >= 0:
        _add_provenance(store, ids, answer)
    _add_expressions(store, ids, answer)
    sources, targets, details = _sorted_edges(walk)
    answer.sources = list(map(names.__getitem__, sources))
    answer.targets = list(map(names.__getitem__, targets))
    shown = {detail: _shown(detail) for detail in set(details)}
    if len(shown) == 1:  # one type and subtype set (folded table lineage): no lookup per edge
        (label, subtypes), count = next(iter(shown.values())), len(details)
        answer.types, answer.subtypes = [label] * count, [subtypes] * count
    else:
        answer.types = [shown[d][0] for d in details]
        answer.subtypes = [shown[d][1] for d in details]
    return answer


def _sorted_edges(walk: Walk) -> tuple[list[int], list[int], list[int]]:
    """Sources, targets and details (``_detail``) of the distinct edges in answer order.

    A folded walk's edges are already in that order, most often all of one detail: taken as they are.
    """
    details = {a: _detail(a) for a in set(walk.attributes)}
    sources, targets = walk.sources, walk.targets
    if len(details) == 1 and walk.ordered:
        return sources, targets, [next(iter(details.values()))] * len(sources)
    edges = sorted({(s, t, details[a]) for s, t, a in _edge_rows(walk)})
    return [s for s, _, _ in edges], [t for _, t, _ in edges], [d for _, _, d in edges]


def _detail(attributes: int) -> int:
    """An edge's *detail*: its type's label rank above its shown subtype flags (answer order sorts by it)."""
    kind = attributes & TYPE_MASK
    return LABEL_RANK.get(kind, 16 + kind) << _FLAG_BITS | (attributes >> TYPE_BITS) & KNOWN_FLAGS


def _shown(detail: int) -> tuple[str, tuple[str, ...]]:
    """The type label and subtypes a ``_detail`` value stands for."""
    return _edge_label(_RANK_KINDS[detail >> _FLAG_BITS]), _subtypes(detail & KNOWN_FLAGS)


def _columns_of_arrays(store: Store, walk: Walk) -> ResultColumns:
    import numpy as np

    nodes, hops, sources, targets, attributes = walk.columns()
    if bool((nodes[1:] > nodes[:-1]).all()):  # (a tied walk's nodes are in id order already)
        ids, depths = nodes, hops
    else:
        order = np.argsort(nodes, kind="stable")  # id order is name order
        ids, depths = nodes.take(order), hops.take(order)
    names = store.names_of(ids)
    kind_values = store.numpy_array("node_kind").take(ids)
    labels, known = _kind_arrays()
    if not known.take(kind_values).all():
        _checked([None])
    answer = ResultColumns(names=names, kinds=labels.take(kind_values).tolist(), depths=depths.tolist())
    _add_roles(store, ids, answer)
    if _has_files(store) and (store.numpy_array("node_file").take(ids) >= 0).any():
        _add_provenance(store, ids.tolist(), answer)
    _add_expressions(store, ids, answer)
    edge_sources, edge_targets, kinds, flags = _distinct_edges(sources, targets, attributes)
    if store.keeps_names:  # the session keeps every name it made: the edges' ends are the nodes just named
        answer.sources, answer.targets = store.names_of(edge_sources), store.names_of(edge_targets)
    else:
        named = np.array(names, dtype=object)
        answer.sources, answer.targets = (_names_of(store, ids, named, end) for end in (edge_sources, edge_targets))
    answer.types = _lookup(kinds, _edge_label)
    answer.subtypes = _lookup(flags, _subtypes)
    return answer


def _distinct_edges(
    sources: np.ndarray, targets: np.ndarray, attributes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct edges in answer order: sources, targets (i4), types and subtype flags.

    Each edge's *detail* is its type's label rank above its shown subtype flags.  When every edge has the same
    detail, as folded table lineage has, sorting the ``source << 32 | target`` keys suffices, and a sorted one
    is not sorted again; otherwise source, target and detail are packed into one int64 where they fit (a plain
    sort, several times a two-key lexsort's speed), else lexsorted.
    """
    import numpy as np

    detail = _details(attributes)
    if detail.size == 0 or bool((detail == detail[0]).all()):
        pairs = (sources.astype(np.int64) << 32) | targets.astype(np.int64)
        if not bool((pairs[1:] > pairs[:-1]).all()):
            pairs = _sorted_distinct(pairs)
        detail = detail[: pairs.size]
        sources, targets = _ends(pairs)
    else:
        node_bits = int(max(sources.max(), targets.max())).bit_length()
        if 2 * node_bits + _DETAIL_BITS <= 63:
            sources, targets, detail = _distinct_packed(sources, targets, detail, node_bits)
        else:
            pairs = (sources.astype(np.int64) << 32) | targets.astype(np.int64)
            order = np.lexsort((detail, pairs))
            pairs, detail = pairs.take(order), detail.take(order)
            distinct = np.ones(pairs.size, dtype=np.bool_)
            np.not_equal(pairs[1:], pairs[:-1], out=distinct[1:])
            distinct[1:] |= detail[1:] != detail[:-1]
            pairs, detail = pairs.compress(distinct), detail.compress(distinct)
            sources, targets = _ends(pairs)
    kinds = np.array(_RANK_KINDS, dtype=np.int64).take(detail >> _FLAG_BITS)
    return sources, targets, kinds, detail & KNOWN_FLAGS


def _ends(pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sources and targets (i4) of ``source << 32 | target`` keys."""
    import numpy as np

    return (pairs >> 32).astype(np.int32), (pairs & LOW_32).astype(np.int32)


_DETAILS: list[np.ndarray] = []  # the detail of every u16 attributes value, made on first use


def _details(attributes: np.ndarray) -> np.ndarray:
    """The detail of each edge: a lookup for the store's u16 attributes, computed for wider ones."""
    import numpy as np

    if attributes.dtype.itemsize <= 2:
        if not _DETAILS:
            _DETAILS.append(_details(np.arange(1 << 16, dtype=np.uint32)))
        return _DETAILS[0].take(attributes)
    ranks = np.array([LABEL_RANK.get(k, 16 + k) for k in range(TYPE_MASK + 1)], dtype=np.int64)
    detail = ranks.take(attributes & TYPE_MASK) << _FLAG_BITS
    detail |= (attributes >> TYPE_BITS).astype(np.int64) & KNOWN_FLAGS
    return detail


def _distinct_packed(
    sources: np.ndarray, targets: np.ndarray, detail: np.ndarray, node_bits: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ``(source, target, detail)`` in order, each edge packed into one int64 (source, target and detail
    from the high bits down), sorted, then read apart: sources and targets (i4), details."""
    import numpy as np

    keys = sources.astype(np.int64) << node_bits
    keys |= targets
    keys <<= _DETAIL_BITS
    keys |= detail
    keys.sort()
    if keys.size > 1:
        distinct = np.empty(keys.size, dtype=np.bool_)
        distinct[0] = True
        np.not_equal(keys[1:], keys[:-1], out=distinct[1:])
        keys = keys.compress(distinct)
    detail = keys & ((1 << _DETAIL_BITS) - 1)
    keys >>= _DETAIL_BITS
    targets = (keys & ((1 << node_bits) - 1)).astype(np.int32)
    keys >>= node_bits
    return keys.astype(np.int32), targets, detail


def _names_of(store: Store, ids: np.ndarray, names: np.ndarray, nodes: np.ndarray) -> list[str]:
    """Names of ``nodes``: from the walk's named nodes (``ids`` sorted, ``names`` an object array) if all are.

    Each node's place among ``ids`` is looked up in a node-indexed map that holds the places of ``ids`` only: a
    gather instead of a binary search per edge end (an eighth of the time for the 66,000 edges of the bench's
    hub answer).  The map is not cleared first, so every place read is checked against ``ids``."""
    import numpy as np

    if not ids.size or not nodes.size:
        return [] if not nodes.size else store.names_of(nodes)
    where = np.empty(store.node_count, dtype=np.int64)  # (pages are touched only where ids are)
    where[ids] = np.arange(ids.size)
    position = where.take(nodes)
    np.clip(position, 0, ids.size - 1, out=position)  # (an entry no id set holds anything)
    if bool((ids.take(position) == nodes).all()):
        return gathered(names, position)
    return store.names_of(nodes)  # an edge end that is not a walked node: name it from the store


def _lookup(values: np.ndarray, make: Any) -> list[Any]:  # noqa: ANN401 - the values' labels
    """``[make(v) for v in values]`` for small non-negative ints, calling ``make`` once per distinct value."""
    import numpy as np

    if values.size == 0 or bool((values == values[0]).all()):
        return [make(int(values[0]))] * values.size if values.size else []
    present = np.flatnonzero(np.bincount(values))
    table = np.empty(int(present[-1]) + 1, dtype=object)
    table[present] = [make(v) for v in present.tolist()]
    return table.take(values).tolist()


class _Names(dict[int, str]):
    """Node id -> name for the walk's nodes; other ids are read from the store on first use."""

    def __init__(self, store: Store, ids: list[int]) -> None:
        self.store = store
        self.listed = store.names_of(ids)
        super().__init__(zip(ids, self.listed, strict=True))

    def __missing__(self, node: int) -> str:
        name = self[node] = self.store.name(node)
        return name


def _add_roles(store: Store, ids: Any, answer: ResultColumns) -> None:  # noqa: ANN401 - list[int] or array
    """The nodes' roles in the whole graph, if any node has one."""
    roles = node_roles(store, ids)
    if any(roles):
        answer.roles = roles


def _has_files(store: Store) -> bool:
    """Whether the store has a file table at all (an imported graph has none: no node has provenance)."""
    return len(store.array("file_offsets")) > 1


def _add_provenance(store: Store, ids: list[int], answer: ResultColumns) -> None:
    """Files and lines of the nodes that have them (transformations), if any does."""
    provenance = [store.provenance(n) for n in ids]
    if any(p is not None for p in provenance):
        answer.files = [p[0] if p else None for p in provenance]
        answer.lines = [p[1] if p else None for p in provenance]


def _add_expressions(store: Store, ids: Any, answer: ResultColumns) -> None:  # noqa: ANN401 - list[int] or array
    """The SQL expressions of the answer's column nodes, if any has one, each with the name of the statement that
    writes it with that expression."""
    if not len(store.array("expr_column")):
        return  # (a store of imported lineage, or of table lineage only)
    if hasattr(ids, "take"):  # a numpy array
        columns = ids[store.numpy_array("node_kind").take(ids) == COLUMN]
    else:
        kinds = store.kinds
        columns = [node for node in ids if kinds[node] == COLUMN]
    found = store.expressions(columns) if len(columns) else {}
    if found:
        answer.expressions = [found.get(node, ()) for node in (ids.tolist() if hasattr(ids, "tolist") else ids)]


def _edge_rows(walk: Walk) -> Any:  # noqa: ANN401 - an iterator of (source, target, attributes)
    return zip(walk.sources, walk.targets, walk.attributes, strict=True)


_LABELS: list[str | None] = []
_SUBTYPES: dict[int, tuple[str, ...]] = {}


def _kind_labels() -> list[str | None]:
    """Node kind labels indexed by the stored kind value, None for a value no kind has."""
    if not _LABELS:
        known = {int(k): k.label for k in NodeKind}
        _LABELS.extend(known.get(value) for value in range(256))
    return _LABELS


_KIND_ARRAYS: list[np.ndarray] = []


def _kind_arrays() -> tuple[np.ndarray, np.ndarray]:
    """``_kind_labels()`` as an object array, and which kind values have a label."""
    import numpy as np

    if not _KIND_ARRAYS:
        labels = np.array(_kind_labels(), dtype=object)
        _KIND_ARRAYS.extend((labels, np.not_equal(labels, None)))
    return _KIND_ARRAYS[0], _KIND_ARRAYS[1]


def _checked(labels: list[str | None]) -> list[str]:
    """``labels``, or the error ``NodeKind(value)`` gives for a kind byte no kind has (a damaged store)."""
    if None in labels:
        raise ValueError("a node of the walk has a kind this lineage does not know; the store may be damaged")
    return labels  # type: ignore[return-value]


def _edge_label(kind: int) -> str:
    """``EdgeType(kind).label``; an unknown value raises ValueError, as ``EdgeType`` does."""
    return EdgeType(kind).label


def _subtypes(flags: int) -> tuple[str, ...]:
    subtypes = _SUBTYPES.get(flags)
    if subtypes is None:
        subtypes = _SUBTYPES[flags] = tuple(subtypes_from_flags(flags))
    return subtypes
