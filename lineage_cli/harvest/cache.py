"""The harvest cache directory: each unit's analysis, and the memo of the last harvest as a whole.

``FileCache`` holds a pickle per unit and phase, keyed (in ``batch.py``) by everything the result
depends on, so changing one file re-parses that file.  Cached outcomes still have to be assembled
into a graph, which costs as much as reading them; so, like make with nothing to rebuild, a harvest
whose inputs are all unchanged is not assembled again: ``HarvestMemo`` reads back the last harvest
with the same inputs -- its counts and issues, its graph pickled, and the graph as the store's
arrays, which the writer takes as they are.

The memo key covers every input of the assembly: each unit's name, path, content digest, options
and manifest step; the explicit schema; the plan's bare steps, dbt datasets and issues; the tool
version.  It does not cover the number of jobs, which changes nothing.  The memo also lists the unit
entries the harvest used: it is only recalled while they are all there, so a recalled harvest counts
its cache hits as a harvest from those entries would, and pruning keeps them.  The directory holds
what the last harvest used and nothing else: one memo, and its units' entries.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lineage_cli import __version__
from lineage_cli.harvest.harvester import Harvest
from lineage_cli.harvest.plan import Plan
from lineage_cli.model import Issue
from lineage_cli.store.arrays import GraphArrays, from_graph

# What a damaged or outdated pickle raises: it then counts as absent and is made again.
_UNREADABLE = (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError)


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


# Part of the memo key: a change to ``_Memo``'s fields bumps it, so no memo of another shape is ever unpickled.
_MEMO_FORMAT = 1


@dataclass(slots=True)
class _Memo:
    """A harvest as ``HarvestMemo`` keeps it: what ``Harvest`` holds besides its timing and cache hits."""

    files: int
    statements: int
    lineage_statements: int
    issues: list[Issue]
    statement_types: Counter[str]
    defaults: dict[str, str]
    modules: dict[str, dict[str, object]]
    graph: bytes  # pickled apart: the store needs only the arrays, so only a caller that asks unpickles it
    arrays: GraphArrays
    entries: frozenset[str]  # the unit entries the harvest used


class HarvestMemo:
    """The last harvest with this plan's inputs, if it is in the cache; ``remember`` keeps a new one there."""

    def __init__(self, cache: FileCache, plan: Plan, digests: Sequence[str]) -> None:
        self.cache, self.plan = cache, plan
        self.key = "harvest-" + _memo_key(plan, digests) if cache.directory is not None else None

    def recall(self) -> Harvest | None:
        """The remembered harvest, or None when the inputs changed or a unit entry it used is gone."""
        if self.key is None:
            return None
        memo = self.cache.get(self.key, count=False)
        if not isinstance(memo, _Memo) or not self.cache.holds(memo.entries):
            return None
        self.cache.used |= memo.entries
        result = Harvest(
            files=memo.files,
            statements=memo.statements,
            lineage_statements=memo.lineage_statements,
            issues=list(memo.issues),
            statement_types=memo.statement_types,
            defaults=memo.defaults,
            modules=memo.modules,
            arrays=memo.arrays,
            pickled_graph=memo.graph,
        )
        # Every unit's entry is there, so a harvest that read them would have counted each unit a hit.
        result.cache_hits = len(self.plan.units)
        return result

    def remember(self, result: Harvest) -> None:
        """Keep ``result`` under this plan's key, with its graph's arrays (which ``result`` takes on too)."""
        if self.key is None:
            return
        entries = frozenset(self.cache.used - {self.key})
        result.arrays = from_graph(result.graph)
        memo = _Memo(
            result.files,
            result.statements,
            result.lineage_statements,
            result.issues,
            result.statement_types,
            result.defaults,
            result.modules,
            pickle.dumps(result.graph, protocol=pickle.HIGHEST_PROTOCOL),
            result.arrays,
            entries,
        )
        self.cache.put(self.key, memo)


def _memo_key(plan: Plan, digests: Sequence[str]) -> str:
    """A digest of every input the assembled harvest depends on (``repr`` of frozen records is stable)."""
    material = hashlib.sha256()
    schema = plan.schema.fingerprint() if plan.schema is not None else ""
    material.update(repr((_MEMO_FORMAT, __version__, schema, plan.bare_steps, plan.datasets, plan.issues)).encode())
    for unit, digest in zip(plan.units, digests, strict=True):
        material.update(repr((unit.display, unit.path, digest, unit.options.fingerprint(), unit.step)).encode())
    return material.hexdigest()
