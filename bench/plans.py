"""``make bench``, walkplan part: a table lineage answer with a walkplan against the same answer without one.

``lineage up/down TABLE`` walks the ``tables`` plan: resolving it (a cached JSON file) and compiling it to
the frontier walk's edge-type mask are all a plan adds, so ``plan / none`` should stay near 1.0.  Timed
in one warm process (numpy loaded, as in ``bench/graph.py``'s ``ours`` engine), medians of runs taking turns:

* ``none``: ``bfs`` with the table-flow mask, ``shape.fold``, ``shape.columns``: the answer as ``lineage()``
  built it before walkplans;
* ``plan``: the same answer through ``plan_walk`` under ``--walkplan tables``;
* ``lineage()``: what ``lineage up/down`` now runs: the default plan, and every node's role (source,
  terminal) on top.

``bench/graph.py`` can call ``plan_timings`` for each table-level query and print ``plan_line``'s text;
run alone (``python bench/plans.py [--small]``) it times the deep-mart and hub queries of the graph that
``bench/graph.py`` built in ``bench-out/``.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from processes import REPO, graph_bench_store  # bench/ is the script's folder, so on sys.path

if str(REPO) not in sys.path:  # run as a script: import the working tree's package
    sys.path.insert(0, str(REPO))

from lineage_cli.store.reader import Store  # noqa: E402
from lineage_cli.walk import shape  # noqa: E402
from lineage_cli.walk.planned import plan_walk  # noqa: E402
from lineage_cli.walk.query import TABLE_FLOW, lineage, resolve  # noqa: E402
from lineage_cli.walk.result import LineageResult  # noqa: E402
from lineage_cli.walk.traverse import bfs  # noqa: E402
from lineage_cli.walk.walkplan import builtin_plan  # noqa: E402


def interleaved_medians(runs: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Median seconds of each run, the runs taking turns so that a noisy moment hits them alike."""
    for run in runs.values():
        run()  # warm-up: page cache, numpy's first calls
    times: dict[str, list[float]] = {key: [] for key in runs}
    for _ in range(repeat):
        for key, run in runs.items():
            started = time.perf_counter()
            run()
            times[key].append(time.perf_counter() - started)
    return {key: statistics.median(values) for key, values in times.items()}


def plan_timings(store: Store, name: str, direction: str, repeat: int = 21) -> dict[str, float]:
    """Median seconds of one table-level answer without a plan, under the ``tables`` plan, and by ``lineage()``."""
    starts = resolve(store, name)

    def answer(walk: Any) -> LineageResult:  # noqa: ANN401 - a Walk
        return LineageResult(direction, [name], columns=shape.columns(store, walk))

    def without_plan() -> LineageResult:
        return answer(shape.fold(store, bfs(store, starts, direction, TABLE_FLOW)))

    def with_plan() -> LineageResult:
        return answer(plan_walk(store, starts, direction, builtin_plan("tables")))

    if with_plan().edges != without_plan().edges:
        raise AssertionError(f"{name}: the tables plan changed the answer")
    runs = {"none": without_plan, "plan": with_plan, "lineage": lambda: lineage(store, name, direction)}
    return interleaved_medians(runs, repeat)


def plan_line(label: str, timings: dict[str, float]) -> str:
    none, plan, full = timings["none"], timings["plan"], timings["lineage"]
    return (
        f"{label:<33}{none * 1000:>10.2f}{plan * 1000:>10.2f}{plan / none:>12.2f}x"
        f"{full * 1000:>13.2f}{full / none:>16.2f}x"
    )


def header() -> str:
    columns = f"{'none':>10}{'plan':>10}{'plan/none':>13}{'lineage()':>13}{'lineage()/none':>17}"
    return f"{'walkplan, warm, ms (median)':<33}{columns}"


def main(argv: list[str] | None = None) -> None:
    args, path, query_nodes = graph_bench_store(__doc__, argv)
    import numpy  # noqa: F401 - a warm session, as bench/graph.py's engine has

    store = Store(path)
    print(header())
    for label, node, direction in (
        ("down hub, tables", "hub_source", "down"),
        ("up deep mart, tables", "deep_mart", "up"),
    ):
        print(plan_line(label, plan_timings(store, query_nodes[node]["name"], direction, args.repeat)))


if __name__ == "__main__":
    main()
