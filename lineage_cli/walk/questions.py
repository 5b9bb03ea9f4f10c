"""The questions ``lineage up`` / ``down`` / ``path`` ask of a store, and their answers: one code path for the
command line (``commands/walk.py``) and the lineage server (``serve/``), so that both answer alike.

``Shaping`` holds what those commands share beyond the walk's start and reach: the walkplan and its arguments,
``--exact``, the roll-up (``--level``, ``--datamarts``) and how pictures are drawn (``--group-by``,
``--rankdir``, which the emit stage reads).  ``walk_answer`` and ``path_answer`` run a question on an open store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from lineage_cli.store.reader import Store
    from lineage_cli.walk.paths import PathAnswer
    from lineage_cli.walk.result import LineageResult

# Levels that lift statements: a walk without --walkplan then shows the statements to lift.
STEP_LEVELS = ("module", "workflow")


class Shaping:
    """What the option groups ``up``, ``down`` and ``path`` share ask of an answer: the walkplan and its
    arguments (``--walkplan``, ``--arg``), whether to keep out the statements read approximately (``--exact``),
    the roll-up (``--level``, ``--datamarts``) and how pictures are drawn (``--group-by``, ``--rankdir``).  A
    plain class: start-up."""

    __slots__ = ("plan", "args", "level", "datamarts", "group_by", "rankdir", "exact")

    def __init__(
        self,
        plan: str | None = None,
        args: tuple[str, ...] = (),
        level: str | None = None,
        datamarts: str | None = None,
        group_by: str | None = None,
        rankdir: str | None = None,
        exact: bool = False,
    ) -> None:
        self.plan, self.args, self.level, self.datamarts = plan, args, level, datamarts
        self.group_by, self.rankdir, self.exact = group_by, rankdir, exact

    @property
    def lifts_steps(self) -> bool:
        """Whether the roll-up lifts statements (to modules or workflows): a walk must show them then."""
        return self.level in STEP_LEVELS

    def rolled_up(self, store: Store, result: LineageResult) -> LineageResult:
        if self.level is None:
            return result
        from lineage_cli.walk.levels import load_datamarts, rollup

        return rollup(store, result, self.level, load_datamarts(self.datamarts) if self.datamarts else None)


def walk_answer(
    store: Store,
    direction: str,
    name: str,
    depth: int | None,
    show_transformations: bool,
    predicates: bool,
    shaping: Shaping,
) -> LineageResult:
    """What ``lineage up`` / ``down`` (``direction``) answer for ``name`` with these options."""
    from lineage_cli.walk.query import lineage

    shown = show_transformations or shaping.lifts_steps
    plan, args = shaping.plan, frozenset(shaping.args)
    found = lineage(store, name, direction, depth, shown, predicates, plan, args, shaping.exact)
    return shaping.rolled_up(store, found)


def path_answer(
    store: Store,
    source: str,
    target: str,
    all_paths: bool,
    max_paths: int,
    depth: int | None,
    shaping: Shaping,
) -> PathAnswer:
    """What ``lineage path`` answers from ``source`` to ``target``: the rolled-up result, and how many paths it
    holds and whether ``max_paths`` cut them short."""
    from lineage_cli.walk.paths import PathAnswer, lineage_path

    plan, args, steps = shaping.plan, frozenset(shaping.args), shaping.lifts_steps
    found = lineage_path(store, source, target, plan, args, depth, all_paths, max_paths, steps, shaping.exact)
    return PathAnswer(shaping.rolled_up(store, found.result), found.paths, found.complete)
