"""Steps of a flow in the graph: module and workflow nodes, declared lineage, disagreements.

A ``Step`` is what a flow manifest (or a dbt manifest) says about one unit of SQL, or about a
step that has no SQL at all: where it is declared, its workflow and module, its declared sources
and targets, and facts such as ``rows`` and ``frequency``.  ``apply_step`` puts it in the graph
once the unit's SQL has been analysed:

* its transformations become members of the module, the module a member of the workflow:
  ``transformation -MEMBER-> module -MEMBER-> workflow``, also the nodes' containers, so lineage
  can be rolled up to workflow level;
* with parsed lineage, the parsed lineage wins and every difference from the declared sources
  and targets is a warning at the step's line;
* without it (no SQL, a missing file, SQL that does not parse or writes nothing), the declared
  sources and targets become READ / WRITE edges flagged ``DECLARED``; lineage read approximately from a
  statement that does not parse stays beside them, and is not compared with them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from lineage_cli.harvest.assemble import Harvest, WriteLike, add_declared
from lineage_cli.model import EdgeType, Issue, NodeKind, Provenance
from lineage_cli.profiles import DialectProfile


@dataclass(frozen=True, slots=True)
class Step:
    where: Provenance  # the manifest entry (file and line): declared transformations are named after it
    workflow: str | None = None
    module: str | None = None
    targets: tuple[str, ...] | None = None  # declared, normalised; None when not declared
    sources: tuple[str, ...] | None = None
    facts: tuple[tuple[str, object], ...] = field(default=())  # rows, frequency, sql_file ... for the store's meta

    @property
    def module_node(self) -> str | None:
        """``workflow/module`` (module names repeat across workflows), the module alone without a workflow."""
        if self.module is None:
            return None
        return f"{self.workflow}/{self.module}" if self.workflow else self.module


def declared_name(name: str, profile: DialectProfile, default_schema: str | None) -> str:
    """A declared table name as the parser would name it: folded, the default schema filled in.

    >>> from lineage_cli.profiles import load_profile
    >>> declared_name("ODS.Orders", load_profile("hive"), None), declared_name("Orders", load_profile("hive"), None)
    ('ods.orders', 'default.orders')
    """
    folded = ".".join(profile.fold(part.strip().strip('`"[]')) for part in name.split("."))
    schema = default_schema or profile.default_schema
    return folded if "." in folded or not schema else f"{schema}.{folded}"


def apply_step(result: Harvest, step: Step, made: list[str], writes: Sequence[Sequence[WriteLike]] | None) -> None:
    """Put ``step`` in the graph: ``made`` are the transformations of its SQL, ``writes`` its parsed writes
    per statement (None when it had no SQL to parse)."""
    parsed = [write for statement in writes or () for write in statement]
    if parsed:
        _compare(result, step, parsed)
    elif step.targets:
        made = made + add_declared(result.graph, step.where, step.sources or (), step.targets)
    elif step.sources:
        _warn(result, step, "declares sources but no target, and its SQL gives no lineage: nothing to link")
    _membership(result, step, made)


def _membership(result: Harvest, step: Step, transformations: Iterable[str]) -> None:
    graph, module = result.graph, step.module_node
    container = module or step.workflow
    if container is None:
        return
    graph.add_node(container, NodeKind.MODULE if module else NodeKind.WORKFLOW)
    if module and step.workflow:
        graph.add_node(step.workflow, NodeKind.WORKFLOW)
        graph.containers.setdefault(module, step.workflow)
        graph.add_edge(module, step.workflow, EdgeType.MEMBER)
    for transformation in transformations:
        graph.containers.setdefault(transformation, container)
        graph.add_edge(transformation, container, EdgeType.MEMBER)
    if module:
        facts = result.modules.setdefault(module, {"workflow": step.workflow, "module": step.module})
        facts.update((key, value) for key, value in step.facts if value is not None)


def _compare(result: Harvest, step: Step, parsed: Sequence[WriteLike]) -> None:
    """Parsed lineage wins; each difference from what the step declares is a warning."""
    written = {write.target for write in parsed}
    read = {source for write in parsed for source in write.sources} - written
    if step.targets is not None:
        for name in sorted(set(step.targets) - written):
            _warn(result, step, f"declared target {name} is not written by its SQL")
        for name in sorted(written - set(step.targets)):
            _warn(result, step, f"its SQL writes {name}, which is not a declared target")
    if step.sources is not None:
        everything_read = {source for write in parsed for source in write.sources}
        for name in sorted(set(step.sources) - everything_read):
            _warn(result, step, f"declared source {name} is not read by its SQL")
        for name in sorted(read - set(step.sources)):
            _warn(result, step, f"its SQL reads {name}, which is not a declared source")


def _warn(result: Harvest, step: Step, message: str) -> None:
    result.issues.append(Issue(step.where.file, step.where.line, message, level="warning"))
