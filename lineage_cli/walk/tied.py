"""The vectorized walk of plans that follow and show every edge of their types, predicates tied to statements.

A plan whose every rule is forward, followed, collects its nodes and shows its edges, with no conditions —
``every edge type``, or projections with all predicates — needs the general walk (``planned.py``) for two
things only: a predicate edge onto a table is tied to the statement that writes it (``predicates.py``), and
a hop into a step (transformation, module, workflow) costs no data hop.  Both are level-wide array
operations, so this walk does them a level at a time in numpy instead of an edge at a time in Python, and
gives what the general walk gives (``tests/walk/test_tied.py`` compares the two on every node):

* each level expands its nodes, then the steps they reach, then the steps those reach, within the level:
  a node's data hops count the datasets and columns on its path, so steps join the level they are met in;
* downstream, a predicate edge from a column onto a table also reaches the columns of that table its
  statement writes (every column of it when the edge has no statement), through ``contains`` edges;
* upstream, a column also reaches, through its table, the columns of the predicates that gate the
  statements writing it (every predicate into the table when nothing says who writes the column).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store.layout import TYPE_MASK, pack_attributes
from lineage_cli.store.reader import Store
from lineage_cli.walk.shape import _sorted_distinct, _within
from lineage_cli.walk.traverse import WHOLE, Walk, _Adjacency, _borrow, _fresh, _slices, _type_filter, _Vectorized

if TYPE_CHECKING:
    import numpy as np

COLUMN = int(NodeKind.COLUMN)
PREDICATE = int(EdgeType.PREDICATE)
CONTAINS = pack_attributes(EdgeType.CONTAINS, 0)
STEPS = (NodeKind.TRANSFORMATION, NodeKind.MODULE, NodeKind.WORKFLOW)
DATASETS = frozenset(int(kind) for kind in (NodeKind.TABLE, NodeKind.VIEW, NodeKind.PARAMETERIZED))
# arcs as (source, target, attributes) arrays, edges as stored
Arcs = list[tuple["np.ndarray", "np.ndarray", "np.ndarray"]]


class _Arrays:
    """The store's arrays this walk reads, as numpy views of the mapping."""

    def __init__(self, store: Store, down: bool) -> None:
        import numpy as np

        self.kinds = store.numpy_array("node_kind")
        self.container = store.numpy_array("node_container")
        self.fwd = (store.numpy_array("fwd_offsets"), store.numpy_array("fwd_node"), store.numpy_array("fwd_attr"))
        self.bwd = (store.numpy_array("bwd_offsets"), store.numpy_array("bwd_node"), store.numpy_array("bwd_attr"))
        self.walked = self.fwd if down else self.bwd  # the walk's own direction
        self.attribute_type = self.fwd[2].dtype
        self.statements = store.numpy_array("fwd_statement")
        self.step = np.zeros(256, dtype=np.bool_)  # by kind: a step (no data hop)
        self.step[[int(kind) for kind in STEPS]] = True


def _entries(
    adjacency: tuple[np.ndarray, np.ndarray, np.ndarray], nodes: np.ndarray, keep: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(origin, neighbour, attributes, index)`` of the adjacency entries of ``nodes`` whose attributes ``keep``
    (a lookup table over packed attributes; None: every entry) admits."""
    import numpy as np

    offsets, neighbours, attributes = adjacency
    starts = offsets.take(nodes)
    counts = offsets.take(nodes + 1) - starts
    if not counts.any():
        empty = np.empty(0, dtype=np.int64)
        return nodes[:0], nodes[:0], attributes[:0], empty
    index = _slices(starts, counts, counts.cumsum(), merge=True)
    origin = nodes.repeat(counts)
    packed = attributes.take(index)
    if keep is None:  # (a plan of every edge type: no entry to filter out, nor copies of the kept ones to make)
        return origin, neighbours.take(index), packed, index
    kept = keep.take(packed).nonzero()[0]
    index = index.take(kept)
    return origin.take(kept), neighbours.take(index), packed.take(kept), index


def tied_walk(
    store: Store, starts: list[int], direction: str, mask: int, unfollowed: frozenset[int], depth: int | None = None
) -> Walk:
    """Walk ``direction`` from ``starts`` along the edge types of ``mask`` as the general walk would under rules
    that collect and show all of them and follow every node but those of the ``unfollowed`` kinds (``planned.
    tied_plan``); ``depth`` in data hops."""
    import numpy as np

    down = direction == "down"
    arrays = _Arrays(store, down)
    keep: np.ndarray | None = _type_filter(mask)
    if keep.all():
        keep = None
    followed = np.ones(256, dtype=np.bool_)
    followed[list(unfollowed)] = False
    tied = bool(mask & EdgeType.PREDICATE.bit)
    writes_read = bool(mask & EdgeType.COLUMN_WRITE.bit)  # upstream, the level's entries hold its columns' writers
    contains_followed = bool(mask & EdgeType.CONTAINS.bit)
    tables_followed = not unfollowed & DATASETS
    gated_all = np.zeros(store.node_count, dtype=np.bool_)  # upstream: tables whose ties are made (``_gating``)
    seen = _borrow(store.node_count)
    state = _Vectorized(_Adjacency(store, direction, WHOLE), seen, mask, keep_all=False)  # the visited maps
    first = _sorted_distinct(np.asarray(starts, dtype=np.int32))
    state.visited[first] = True
    levels: list[tuple[np.ndarray, int]] = [(first, 0)]
    arcs: Arcs = []
    current, level = first, 0
    while current.size and (depth is None or level < depth):
        expand, later = current, []
        while expand.size:  # this level's nodes, then the steps they reach: a step costs no data hop
            origin, neighbour, packed, index = _entries(arrays.walked, expand, keep)
            arcs.append((origin, neighbour, packed) if down else (neighbour, origin, packed))
            reached = [neighbour]
            if tied:
                # a table met now is expanded next level unless the depth ends there, and then walks its own
                # edges: the tied arcs that are its own edges need not be recorded twice, only their ends reached
                again = tables_followed and (depth is None or level + 1 < depth)
                if down:
                    extra, ends = _gated(arrays, origin, neighbour, packed, index, again and contains_followed)
                else:
                    writes = _writes(origin, neighbour, packed) if writes_read else None
                    extra, ends = _gating(arrays, expand, writes, again, gated_all)
                arcs.extend(extra)
                reached.extend(ends)
            fresh = _fresh(state, np.concatenate(reached).astype(np.int32, copy=False))
            kinds = arrays.kinds.take(fresh)
            is_step = arrays.step.take(kinds)
            levels.append((fresh.compress(is_step), level))
            levels.append((fresh.compress(np.logical_not(is_step)), level + 1))
            expand = fresh.compress(is_step & followed.take(kinds))
            later.append(fresh.compress(np.logical_not(is_step) & followed.take(kinds)))
        level += 1
        current = np.sort(np.concatenate(later))
    walk = _walk(arrays, first, levels, arcs)
    state.release(seen, walk)
    return walk


def _gated(
    arrays: _Arrays, origin: np.ndarray, neighbour: np.ndarray, packed: np.ndarray, index: np.ndarray, again: bool
) -> tuple[Arcs, list[np.ndarray]]:
    """Downstream: the ``contains`` arcs from each table a column's predicate edge gates to the columns the
    edge's statement writes there (all its columns when the edge has no statement), and the columns reached;
    ``again``: the tables' own ``contains`` edges are walked anyway (not recorded here)."""
    import numpy as np

    kinds = arrays.kinds
    # the predicate entries first, then the kinds of their ends only: a gather of every entry's would cost more
    predicates = ((packed & TYPE_MASK) == PREDICATE).nonzero()[0]
    gated = neighbour.take(predicates)
    onto_table = (kinds.take(origin.take(predicates)) == COLUMN) & (kinds.take(gated) != COLUMN)
    if not onto_table.any():
        return [], []
    statements = arrays.statements.take(index.take(predicates.compress(onto_table)))
    pairs = _sorted_distinct(_key(statements, gated.compress(onto_table)))  # (statement, table), each once
    statements, tables = (pairs >> 32).astype(np.int32), (pairs & 0xFFFFFFFF).astype(np.int32)
    unknown = statements < 0
    table, column, _, _ = _entries(arrays.fwd, tables.compress(unknown), _type_filter(EdgeType.CONTAINS.bit))
    known = _sorted_distinct(statements.compress(np.logical_not(unknown)))
    writer, written, _, _ = _entries(arrays.fwd, known, _type_filter(EdgeType.COLUMN_WRITE.bit))
    holders = arrays.container.take(written)
    chosen = _within(pairs, _key(writer, holders))  # the columns a statement writes in a table it is tied to
    tied_tables, tied_columns = holders.compress(chosen), written.compress(chosen)
    if not again:
        tied_tables, tied_columns = np.concatenate([table, tied_tables]), np.concatenate([column, tied_columns])
    contains = np.full(tied_tables.size, CONTAINS, dtype=arrays.attribute_type)
    return [(tied_tables, tied_columns, contains)], [column, tied_columns]


def _gating(
    arrays: _Arrays,
    expand: np.ndarray,
    writes: tuple[np.ndarray, np.ndarray] | None,
    again: bool,
    gated_all: np.ndarray,
) -> tuple[Arcs, list[np.ndarray]]:
    """Upstream: for each column of ``expand``, the arc to its table and from the table to the sources of the
    predicates gating the statements that write the column (every predicate into the table when nothing is
    known to write the column; a predicate of no known statement gates every column).  ``writes``: the
    ``(column, statement)`` pairs of the level's ``column_write`` entries, when the walk read them already;
    ``again``: the tables' own predicate edges are walked anyway (not recorded here); ``gated_all``: per node,
    whether it is a table all of whose predicates gated a column of this walk before (its sources reached, its
    arcs recorded or walked by the table itself), so its ties are not made again."""
    import numpy as np

    columns = expand.compress(arrays.kinds.take(expand) == COLUMN)
    tables = arrays.container.take(columns)
    columns, tables = columns.compress(tables >= 0), tables.compress(tables >= 0)
    if writes is None:
        written, writer, _, _ = _entries(arrays.bwd, columns, _type_filter(EdgeType.COLUMN_WRITE.bit))
    else:  # (the level's other nodes have no writers, nor do columns outside tables: not gated here)
        kept = _within(columns, writes[0]).nonzero()[0]
        written, writer = writes[0].take(kept), writes[1].take(kept)
    held = _sorted_distinct(tables)
    holder_of = np.searchsorted(held, tables)  # (a sort and a search: np.unique with inverse hashes, slower)
    if not written.size:  # every predicate gates: a table gated so before has had its sources reached
        fresh = np.logical_not(gated_all.take(held))
        new, old = held.compress(fresh), held.compress(np.logical_not(fresh))
    else:
        new, old = held, held[:0]
    table, source, packed, _ = _entries(arrays.bwd, new, _type_filter(EdgeType.PREDICATE.bit))  # (sorted by table)
    if not written.size:
        gated_all[table] = True
    gated = (_within(table, held) | _within(old, held)).take(holder_of)  # the columns some predicate gates
    if not gated.any():
        return [], []
    if written.size:  # some columns have known writers: only their statements' predicates gate them
        admitted, gated = _tied_to_writers(arrays, columns, tables, table, source, written, writer, gated)
        source, table, packed = source.compress(admitted), table.compress(admitted), packed.compress(admitted)
    contains = np.full(int(gated.sum()), CONTAINS, dtype=packed.dtype)
    arcs = [(tables.compress(gated), columns.compress(gated), contains)]
    if not again:
        arcs.append((source, table, packed))
    return arcs, [source, table]


def _tied_to_writers(
    arrays: _Arrays,
    columns: np.ndarray,
    tables: np.ndarray,
    table: np.ndarray,
    source: np.ndarray,
    written: np.ndarray,
    writer: np.ndarray,
    gated: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Which predicate edges ``source -> table`` gate some column, and which ``columns`` (in ``tables``) some
    predicate gates, now that ``written`` columns have known writers: a predicate edge counts for such a column
    when one of its statements writes the column, or when one of its statements is unknown."""
    import numpy as np

    # each predicate edge's statements, as (table, statement) keys: one row per forward entry of the edge
    edge_keys = _key(source, table)
    pairs = _sorted_distinct(edge_keys)
    edge_pair = np.searchsorted(pairs, edge_keys)
    origin, target, _, index = _entries(arrays.fwd, _sorted_distinct(source), _type_filter(EdgeType.PREDICATE.bit))
    row_key = _key(origin, target)
    on_pair = _within(pairs, row_key)
    row_pair = np.searchsorted(pairs, row_key.compress(on_pair))
    row_keys = _key(target.compress(on_pair), arrays.statements.take(index.compress(on_pair)))
    holder = np.searchsorted(columns, written)
    writer_keys = _key(tables.take(holder), writer)
    unwritten = np.ones(columns.size, dtype=np.bool_)
    unwritten[holder] = False
    any_statement = row_keys & 0xFFFFFFFF == 0xFFFFFFFF
    admitted_pair = np.zeros(pairs.size, dtype=np.bool_)
    writer_set, row_set = _sorted_distinct(writer_keys), _sorted_distinct(row_keys)
    admitted_pair[row_pair.compress(any_statement | _within(writer_set, row_keys))] = True
    admitted = admitted_pair.take(edge_pair) | _within(_sorted_distinct(tables.compress(unwritten)), table)
    gated = gated & unwritten
    gated |= _within(row_set, _key(tables, -1))
    gated[holder.compress(_within(row_set, writer_keys))] = True
    return admitted, gated


def _writes(origin: np.ndarray, neighbour: np.ndarray, packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(column, statement)`` of the ``column_write`` entries among a level's upstream entries."""
    chosen = (packed & TYPE_MASK == int(EdgeType.COLUMN_WRITE)).nonzero()[0]
    return origin.take(chosen), neighbour.take(chosen)


def _key(first: np.ndarray, second: np.ndarray | int) -> np.ndarray:
    """``first << 32 | second`` as int64 (``second`` as 32 bits, so -1 is a key too)."""
    import numpy as np

    return (np.asarray(first, dtype=np.int64) << 32) | (np.asarray(second, dtype=np.int64) & 0xFFFFFFFF)


def _walk(
    arrays: _Arrays,
    first: np.ndarray,
    levels: list[tuple[np.ndarray, int]],
    arcs: Arcs,
) -> Walk:
    """The walk's nodes by id, each with its data hops (a step one deeper than the node it was met from),
    and its arcs as edges."""
    import numpy as np

    nodes = np.concatenate([nodes for nodes, _ in levels])
    hops = np.concatenate([np.full(nodes.size, level, dtype=np.int32) for nodes, level in levels])
    order = np.argsort(nodes, kind="stable")
    nodes, hops = nodes.take(order), hops.take(order)
    deeper = arrays.step.take(arrays.kinds.take(nodes)) & np.logical_not(_within(first, nodes))
    hops += deeper
    dtype = arrays.attribute_type
    # (cast as they are joined: no copy of each arc array first)
    sources = np.concatenate([source for source, _, _ in arcs] or [np.empty(0, np.int32)], dtype=np.int32)
    targets = np.concatenate([target for _, target, _ in arcs] or [np.empty(0, np.int32)], dtype=np.int32)
    attributes = np.concatenate([packed for _, _, packed in arcs] or [np.empty(0, dtype)], dtype=dtype)
    return Walk(nodes, hops, sources, targets, attributes)
