"""The harvest cache directory: each unit's analysis, and the memo of the last harvest as a whole.

``FileCache`` holds a pickle per unit and phase, keyed (in ``batch.py``) by everything the result
depends on, so changing one file re-parses that file.  Cached outcomes still have to be assembled
into a graph, which costs as much as reading them; so, like make with nothing to rebuild, a harvest
whose inputs are all unchanged is not assembled again: ``HarvestMemo`` reads back the last harvest
with the same inputs.  It keeps it in two entries: a small summary (counts, issues, modules,
defaults, the graph's size), read on every recall, and the graph -- pickled, and as the store's
arrays, which the writer takes as they are --, read only when asked for.  So a re-run whose store
is already up to date (``run.py``) unpickles no graph and imports no numpy.

The memo key covers every input of the assembly: each unit's name, path, content digest, options
and manifest step; the explicit schema; the plan's bare steps, dbt datasets and issues; the tool
version and the store's format version.  It does not cover the number of jobs, which changes
nothing.  The memo also lists the entries the harvest used: it is only recalled while they are all
there, so a recalled harvest counts its cache hits as a harvest from those entries would, and
pruning keeps them.  The directory holds what the last harvest used and nothing else: one memo, and
its units' entries.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lineage_cli import __version__
from lineage_cli.harvest.assemble import Harvest
from lineage_cli.harvest.plan import Plan
from lineage_cli.model import Graph, Issue
from lineage_cli.store.layout import FORMAT_VERSION

if TYPE_CHECKING:
    from lineage_cli.store.arrays import GraphArrays

# What a damaged or outdated pickle raises: it then counts as absent and is made again.
_UNREADABLE = (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError)
# A memo's two entries: its summary, and its graph.
_SUMMARY, _GRAPH = "harvest-", "graph-"


class FileCache:
    """Pickled per-file results in a directory, written atomically, pruned to what a run used."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.used: set[str] = set()
        self.hits = 0
        self._listing: set[str] | None = None

    def get(self, key: str, count: bool = True) -> object | None:
        """The cached value, or None; ``count`` says whether a hit counts as a file served from cache."""
        self.used.add(key)
        if self.directory is None:
            return None
        try:
            with open(os.path.join(self.directory, key), "rb") as stored:
                value = pickle.load(stored)
        except _UNREADABLE:
            return None
        self.hits += count
        return value

    def put(self, key: str, value: object) -> None:
        self.used.add(key)
        if self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp.")
        with os.fdopen(handle, "wb") as out:
            pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, os.path.join(self.directory, key))

    def holds(self, keys: Iterable[str]) -> bool:
        """Whether every key has an entry (one directory listing, not a file opened per key)."""
        return set(keys) <= self._entries()

    def prune(self) -> None:
        """Drop entries this run did not use: they belong to files, schemas or harvests that are gone."""
        if self.directory is None:
            return
        for name in self._entries() - self.used:
            (self.directory / name).unlink(missing_ok=True)

    def _entries(self) -> set[str]:
        if self._listing is None:
            try:
                self._listing = set(os.listdir(self.directory)) if self.directory is not None else set()
            except OSError:
                self._listing = set()
        return self._listing


# Part of the memo key: a change to the memo's records bumps it, so no memo of another shape is ever unpickled.
_MEMO_FORMAT = 2


@dataclass(slots=True)
class _Memo:
    """A harvest as ``HarvestMemo`` keeps it, but for its graph: what ``Harvest`` holds besides its timing and cache
    hits, and the size of its graph."""

    files: int
    statements: int
    lineage_statements: int
    issues: list[Issue]
    statement_types: Counter[str]
    defaults: dict[str, str]
    modules: dict[str, dict[str, object]]
    nodes: int
    edges: int
    entries: frozenset[str]  # the entries the harvest used: its units' and its graph's


@dataclass(slots=True)
class _GraphMemo:
    """A remembered harvest's graph: pickled (only a caller that asks for the graph unpickles it), and as the
    store's arrays."""

    graph: bytes
    arrays: GraphArrays


class HarvestMemo:
    """The last harvest with this plan's inputs, if it is in the cache; ``remember`` keeps a new one there."""

    def __init__(self, cache: FileCache, plan: Plan, digests: Sequence[str]) -> None:
        self.cache, self.plan = cache, plan
        self.key = _memo_key(plan, digests) if cache.directory is not None else None

    def recall(self, rebuild: Callable[[], Graph]) -> Harvest | None:
        """The remembered harvest, or None when the inputs changed or an entry it used is gone.

        Its graph is read when first asked for; ``rebuild`` makes it again should its entry be unreadable by then.
        """
        if self.key is None:
            return None
        memo = self.cache.get(_SUMMARY + self.key, count=False)
        if not isinstance(memo, _Memo) or not self.cache.holds(memo.entries):
            return None
        self.cache.used |= memo.entries
        graph = _StoredGraph(self.cache, _GRAPH + self.key, memo.nodes, memo.edges, rebuild)
        result = Harvest(
            files=memo.files,
            statements=memo.statements,
            lineage_statements=memo.lineage_statements,
            issues=list(memo.issues),
            statement_types=memo.statement_types,
            defaults=memo.defaults,
            modules=memo.modules,
            key=self.key,
            recalled=graph,
        )
        # Every unit's entry is there, so a harvest that read them would have counted each unit a hit.
        result.cache_hits = len(self.plan.units)
        return result

    def remember(self, result: Harvest) -> None:
        """Keep ``result`` under this plan's key, with its graph's arrays (which ``result`` takes on too)."""
        if self.key is None:
            return
        entries = frozenset((self.cache.used - {_SUMMARY + self.key}) | {_GRAPH + self.key})
        stored = _graph_memo(result.graph)
        result.arrays, result.key = stored.arrays, self.key
        self.cache.put(_GRAPH + self.key, stored)  # first: a summary is only ever found with its graph
        memo = _Memo(
            result.files,
            result.statements,
            result.lineage_statements,
            result.issues,
            result.statement_types,
            result.defaults,
            result.modules,
            stored.arrays.node_count,
            stored.arrays.edge_count,
            entries,
        )
        self.cache.put(_SUMMARY + self.key, memo)


class _StoredGraph:
    """A recalled harvest's graph entry, unpickled when first asked for: a store that is up to date needs none of
    it, and its arrays would import numpy."""

    def __init__(self, cache: FileCache, key: str, nodes: int, edges: int, rebuild: Callable[[], Graph]) -> None:
        self.nodes, self.edges = nodes, edges
        self._cache, self._key, self._rebuild = cache, key, rebuild
        self._entry: _GraphMemo | None = None

    def graph(self) -> Graph:
        return pickle.loads(self._load().graph)

    def arrays(self) -> GraphArrays:
        return self._load().arrays

    def _load(self) -> _GraphMemo:
        if self._entry is None:
            entry = self._cache.get(self._key, count=False)
            if not isinstance(entry, _GraphMemo):  # damaged since the recall found it
                entry = _graph_memo(self._rebuild())
                self._cache.put(self._key, entry)
            self._entry = entry
        return self._entry


def _graph_memo(graph: Graph) -> _GraphMemo:
    from lineage_cli.store.arrays import from_graph  # numpy: only a harvest that writes a store pays for it

    return _GraphMemo(pickle.dumps(graph, protocol=pickle.HIGHEST_PROTOCOL), from_graph(graph))


def _memo_key(plan: Plan, digests: Sequence[str]) -> str:
    """A digest of every input the assembled harvest depends on (``repr`` of frozen records is stable)."""
    material = hashlib.sha256()
    schema = plan.schema.fingerprint() if plan.schema is not None else ""
    # The store's format version too: a memo keeps its graph as the arrays the writer takes as they are.
    facts = (_MEMO_FORMAT, FORMAT_VERSION, __version__, schema, plan.bare_steps, plan.datasets, plan.issues)
    material.update(repr(facts).encode())
    for unit, digest in zip(plan.units, digests, strict=True):
        material.update(repr((unit.display, unit.path, digest, unit.options.fingerprint(), unit.step)).encode())
    return material.hexdigest()
