"""The step summary's picture of a change's impact: a small Mermaid flowchart of what lies downstream.

The targets whose lineage changed are the queried nodes, and the tables and views downstream of them in the
store (the ``tables`` walkplan) the rest, nearest first; beyond ``LIMIT`` nodes the farthest are left out and
the summary says how many, so that a change to a table the whole warehouse reads stays a picture GitHub
draws (it refuses large diagrams) rather than a wall of text.
"""

from __future__ import annotations

from lineage_cli.emit.mermaid import to_mermaid
from lineage_cli.store.reader import Store
from lineage_cli.walk.answer import answer
from lineage_cli.walk.planned import as_plan, plan_walk
from lineage_cli.walk.result import LineageResult

LIMIT = 50  # nodes drawn


def impact_section(store: Store | None, targets: list[str], limit: int = LIMIT) -> str:
    """A Markdown section with the impact flowchart of ``targets``, or nothing when the store knows none of
    them (a new table has no downstream yet) or there is no store."""
    starts = [node for node in dict.fromkeys(map(store.find, targets)) if node is not None] if store else []
    if store is None or not starts:
        return ""
    whole = answer(store, plan_walk(store, starts, "down", as_plan("tables")), sorted(starts), "down")
    shown = nearest(whole, limit)
    left_out = whole.node_count - shown.node_count
    what = "table or view is" if left_out == 1 else "tables and views are"
    note = f"\n{left_out} more downstream {what} left out; the {limit} nearest the change are drawn.\n"
    heading = "### Downstream impact\n\nThe changed targets are outlined in red.\n"
    return f"\n{heading}\n```mermaid\n{to_mermaid(shown)}```\n" + (note if left_out else "")


def nearest(result: LineageResult, limit: int) -> LineageResult:
    """``result`` cut to its ``limit`` nodes nearest the queried ones (the queried first) and their edges."""
    if result.node_count <= limit:
        return result
    roots = set(result.roots)
    ranked = sorted(result.nodes, key=lambda node: (node.name not in roots, node.depth, node.name))
    kept = {node.name for node in ranked[:limit]}
    return LineageResult(
        result.direction,
        [root for root in result.roots if root in kept],
        nodes=[node for node in result.nodes if node.name in kept],
        edges=[edge for edge in result.edges if edge.source in kept and edge.target in kept],
    )
