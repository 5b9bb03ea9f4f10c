"""The garbage collector's pace while syntax trees are analysed: set on entry, the process's own given back."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from lineage_cli.harvest.sql.script import analyze_script
from lineage_cli.heap import tree_pace


@pytest.fixture(autouse=True)
def default_pace() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


def test_the_young_generation_grows_within_and_the_pace_comes_back_after() -> None:
    with tree_pace():
        assert gc.get_threshold() == (10_000, 10, 10)
        with tree_pace():  # an analysis within a harvest
            assert gc.get_threshold() == (10_000, 10, 10)
        assert gc.get_threshold() == (10_000, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_a_process_that_collects_less_often_already_keeps_its_pace() -> None:
    gc.set_threshold(50_000, 20, 5)
    with tree_pace():
        assert gc.get_threshold() == (50_000, 20, 5)
    assert gc.get_threshold() == (50_000, 20, 5)


def test_the_pace_comes_back_when_an_analysis_fails() -> None:
    with pytest.raises(RuntimeError), tree_pace():
        raise RuntimeError("boom")
    assert gc.get_threshold() == (700, 10, 10)


def test_threads_that_leave_in_any_order_restore_the_pace_once_the_last_one_is_out() -> None:
    first_in, second_in, first_may_leave = threading.Event(), threading.Event(), threading.Event()
    seen: list[tuple[int, int, int]] = []

    def first() -> None:
        with tree_pace():
            first_in.set()
            second_in.wait(5)
        seen.append(gc.get_threshold())  # the second thread is still within
        first_may_leave.set()

    def second() -> None:
        first_in.wait(5)
        with tree_pace():
            second_in.set()
            first_may_leave.wait(5)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == [(10_000, 10, 10)]
    assert gc.get_threshold() == (700, 10, 10)


def test_a_script_analysis_runs_at_the_tree_pace_and_gives_the_process_its_own_back() -> None:
    paces: list[tuple[int, int, int]] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            paces.append(gc.get_threshold())

    sql = ";\n".join(f"INSERT INTO t{i} SELECT a, b + 1 FROM s{i} WHERE c > {i}" for i in range(300))
    gc.callbacks.append(note)
    try:
        script = analyze_script(sql, "x.sql", "hive")
    finally:
        gc.callbacks.remove(note)
    assert len(script.lineage) == 300
    assert paces and set(paces) == {(10_000, 10, 10)}  # every collection within ran at the tree pace
    assert gc.get_threshold() == (700, 10, 10)
