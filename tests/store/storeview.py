"""A store file as the sorted text lines the golden files of fixtures/sql/oozie and fixtures/dbt hold.

Read from the written store (not the in-memory graph), so the tests also show that what they
check survives on disk: kinds, containers, MEMBER / DEFAULT edges, DECLARED flags.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from lineage_cli.model import EdgeType, NodeKind, Subtype, subtypes_from_flags
from lineage_cli.store.arrays import from_store
from lineage_cli.store.layout import unpack_attributes
from lineage_cli.store.reader import open_store

COLUMN_TYPES = {EdgeType.PROJECTION: "PROJECTION", EdgeType.PREDICATE: "PREDICATE"}


@dataclass
class StoreView:
    kinds: dict[str, NodeKind] = field(default_factory=dict)
    containers: dict[str, str] = field(default_factory=dict)
    edges: list[tuple[str, str, EdgeType, int]] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def strip(self, name: str, prefix: str) -> str:
        return name[len(prefix) :] if name.startswith(prefix) else name

    def _flows(self) -> tuple[dict[str, list[tuple[str, int]]], dict[str, list[tuple[str, int]]]]:
        reads, writes = defaultdict(list), defaultdict(list)
        for source, target, kind, flags in self.edges:
            if kind is EdgeType.READ:
                reads[target].append((source, flags))
            elif kind is EdgeType.WRITE:
                writes[source].append((target, flags))
        return reads, writes

    def statements(self, prefix: str = "") -> list[str]:
        """``NODE MODULE TARGET <- SOURCES [DECLARED]`` per transformation."""
        reads, writes = self._flows()
        lines = []
        for node, kind in self.kinds.items():
            if kind is not NodeKind.TRANSFORMATION:
                continue
            for target, flags in writes[node]:
                sources = ", ".join(sorted(source for source, _ in reads[node]))
                declared = " DECLARED" if flags & Subtype.DECLARED.bit else ""
                module = self.containers.get(node, "-")
                lines.append(f"{self.strip(node, prefix)} {module} {target} <- {sources}{declared}")
        return sorted(lines)

    def table_edges(self) -> list[str]:
        reads, writes = self._flows()
        lines = set()
        for node, outputs in writes.items():
            for target, flags in outputs:
                declared = " DECLARED" if flags & Subtype.DECLARED.bit else ""
                lines |= {f"{source} -> {target}{declared}" for source, _ in reads[node]}
        lines |= {
            f"{s} -> {t} DEFAULT"
            for s, t, kind, _ in self.edges
            if kind is EdgeType.DEFAULT and self.kinds[s] is not NodeKind.COLUMN
        }
        return sorted(lines)

    def column_edges(self) -> list[str]:
        lines = set()
        for source, target, kind, flags in self.edges:
            if kind in COLUMN_TYPES:
                lines |= {f"{source} -> {target} {COLUMN_TYPES[kind]}/{name}" for name in subtypes_from_flags(flags)}
            elif kind is EdgeType.DEFAULT and self.kinds[source] is NodeKind.COLUMN:
                lines.add(f"{source} -> {target} DEFAULT")
        return sorted(lines)

    def flow_edges(self) -> list[str]:
        """Workflow-level then module-level ``A -> B``: A writes a dataset that B reads, A != B."""
        reads, writes = self._flows()
        writers: dict[str, set[str]] = defaultdict(set)
        for node, outputs in writes.items():
            for target, _ in outputs:
                writers[target].add(node)
        module_pairs, workflow_pairs = set(), set()
        for reader, inputs in reads.items():
            for dataset, _ in inputs:
                for writer in writers[dataset]:
                    a, b = self.containers.get(writer), self.containers.get(reader)
                    if a and b and a != b:
                        module_pairs.add(f"{a} -> {b}")
                    wa, wb = self.containers.get(a or ""), self.containers.get(b or "")
                    if wa and wb and wa != wb:
                        workflow_pairs.add(f"{wa} -> {wb}")
        return sorted(workflow_pairs) + sorted(module_pairs)

    def datasets(self) -> list[str]:
        return sorted(f"{name} {kind.label}" for name, kind in self.kinds.items() if kind.is_dataset)


def read_store(path: Path) -> StoreView:
    store = open_store(path)
    arrays = from_store(store)
    names = arrays.names
    view = StoreView(meta=store.meta)
    view.kinds = {name: NodeKind(kind) for name, kind in zip(names, arrays.kinds.tolist(), strict=True)}
    view.containers = {
        names[node]: names[parent] for node, parent in enumerate(arrays.containers.tolist()) if parent >= 0
    }
    for source, target, attributes in zip(
        arrays.sources.tolist(), arrays.targets.tolist(), arrays.attributes.tolist(), strict=True
    ):
        kind, flags = unpack_attributes(attributes)
        view.edges.append((names[source], names[target], EdgeType(kind), flags))
    return view


def golden(path: Path) -> list[str]:
    """A golden file's lines: comment lines start with ``# `` (a name may start with ``#``, ``#src#.t``)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("# ") and line != "#"]
