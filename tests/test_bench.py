"""``make bench`` runs code no other test imports: its graph part runs here on a tiny generated graph, every
engine once, so a change to the store or the walk that breaks the bench fails the suite, not the next bench run.
No timing is asserted (timings live in ``make bench``): the engines must agree on what each query reaches."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lineage_cli.harvest.inputs.plan import HarvestOptions, plan_harvest
from lineage_cli.harvest.inputs.querylog.collect import add_query_logs
from tests.conftest import REPO, generate_warehouse, shared_tool

BENCH = REPO / "bench"


@pytest.fixture
def bench_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201 - the bench module
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("graph", None)
    import graph  # bench/graph.py, as `make bench` runs it

    monkeypatch.setattr(graph, "OUT", tmp_path)
    monkeypatch.setattr(graph, "measure", lambda run, *_, **__: (0.0, run()))  # once: nothing here is timed
    return graph


def test_the_graph_bench_engines_run_and_agree_on_a_tiny_graph(tmp_path: Path, bench_graph) -> None:  # noqa: ANN001
    out = generate_warehouse(tmp_path / "g", "--edges-only", "--nodes", "1500", "--edges", "6000", "--format", "both")
    arrays, rank = bench_graph.graph_arrays(out)
    store, _ = bench_graph.build_store(out, arrays)
    chosen = bench_graph.queries(out, arrays, rank)
    sqlite, _ = bench_graph.sqlite_db(out, arrays)
    named, _ = bench_graph.sqlite_named_db(out, arrays)
    spec = {"store": str(store), "sqlite": str(sqlite), "sqlite_names": str(named)}
    ours = bench_graph.engine_ours(spec, chosen, 1)
    ids = bench_graph.engine_sqlite(spec, chosen, 1)
    names = bench_graph.engine_sqlite(spec, chosen, 1, named=True)
    library = bench_graph.compile_cbfs()  # (None without a C compiler: the bench skips the reference too)
    compiled = bench_graph.engine_c({**spec, "cbfs": str(library)}, chosen, 1) if library else {}
    for query in chosen:
        reached = ours[query.key]["nodes"]
        assert reached == ids[query.key]["nodes"] == names[query.key]["nodes"], query.label
        assert reached == compiled.get(query.key, {"nodes": reached})["nodes"], query.label
        if query.key in bench_graph.DEEP:
            assert ours[query.key]["api_answer"][0] >= 1, query.label  # the public API call answered


def test_the_server_bench_asks_a_running_server_and_gets_the_command_lines_json(tmp_path: Path, bench_graph) -> None:  # noqa: ANN001
    import json

    sys.modules.pop("serve", None)
    import serve  # bench/serve.py (bench/ is on the path through bench_graph)

    out = generate_warehouse(tmp_path / "g", "--edges-only", "--nodes", "1500", "--edges", "6000", "--format", "both")
    arrays, _ = bench_graph.graph_arrays(out)
    store, _ = bench_graph.build_store(out, arrays)
    nodes = json.loads((out / "graph_meta.json").read_text())["query_nodes"]
    asked = serve.questions(nodes["deep_mart"]["name"], nodes["hub_source"]["name"])
    measured = serve.server_latencies(store, asked, repeat=1)  # (each walk's body checked against in-process JSON)
    assert [m.question for m in measured] == asked
    assert all(m.status == 200 and m.median > 0 for m in measured), [(m.question.label, m.status) for m in measured]
    assert all(m.in_process is not None for m in measured if m.question.route in ("/api/up", "/api/down"))
    median, rate = serve.at_once(store, asked[2], clients=4, repeat=2)
    assert median > 0 and rate > 0


def test_the_query_log_bench_generates_a_log_that_harvests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/querylog.py's log on a small warehouse: its rows, the failed ones, repeats found by fingerprint."""
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("querylog", None)
    import querylog  # bench/querylog.py, as `make bench` runs it

    monkeypatch.setattr(querylog, "OUT", tmp_path)
    monkeypatch.setattr(querylog, "GEN", shared_tool("bench/gen_warehouse.py"))
    log, rotated = querylog.generate_log(600, 12)
    plan = plan_harvest((), HarvestOptions("hive"))
    found = add_query_logs(plan, [str(log)], "jsonl", HarvestOptions("hive"))
    assert (found.rows, found.failed, found.bad) == (600, 6, 0)
    assert 0 < found.distinct < rotated < 600  # every statement ran again, on another day, and is found again
    tokens, parsed = querylog.fingerprint_rates(log, 20)
    assert tokens > 0 and parsed > 0


def test_the_push_bench_delivers_every_event_of_a_small_warehouse(tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    monkeypatch.syspath_prepend(str(BENCH))
    for name in ("push", "harvest", "processes"):
        sys.modules.pop(name, None)
    import harvest
    import push  # bench/push.py, as `make bench` runs it

    monkeypatch.setattr(harvest, "OUT", tmp_path)
    monkeypatch.setattr(push, "OUT", tmp_path)
    generate_warehouse(tmp_path / "wh_hive_30", "--tables", "30", "--dialect", "hive")
    monkeypatch.setattr(sys, "argv", ["push.py", "--tables", "30"])
    push.main()  # asserts that every event was sent, each way
    printed = capsys.readouterr().out
    assert "OpenLineage events" in printed and printed.count("events/s") == 3
