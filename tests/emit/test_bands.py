"""Grouped DOT pictures: clusters on bands of ranks of their own (emit/bands.py), checked on the ranks it
computes and on the layout Graphviz draws from them: no cluster box overlaps or shares a rank with another
cluster it is linked to, and the frames cost the picture little height over the flat one."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.emit.bands import band_ranks
from tests.conftest import REPO, generate_warehouse

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed")

# s: a -> b -> c, and a -> d skips into t: d -> e; e -> x leaves every cluster; e -> a closes a cycle.
UNITS = {"a": "s", "b": "s", "c": "s", "d": "t", "e": "t"}
EDGES = [("a", "b"), ("b", "c"), ("c", "d"), ("a", "d"), ("d", "e"), ("e", "x"), ("e", "a")]


def test_each_cluster_gets_a_band_after_what_feeds_it() -> None:
    ranks = band_ranks("abcdex", UNITS, EDGES, ["a"], upstream=False)
    assert ranks == {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4, "x": 5}


def test_an_upstream_walk_ends_at_its_queried_node() -> None:
    # The same graph walked up from x: ranks mirrored, the cycle broken at the edge back into x's side.
    ranks = band_ranks("abcdex", UNITS, EDGES, ["x"], upstream=True)
    assert ranks["x"] == max(ranks.values())
    assert max(ranks[n] for n in "abc") < min(ranks[n] for n in "de") < ranks["x"]


def test_independent_clusters_share_ranks_and_a_cluster_packs_its_members() -> None:
    ranks = band_ranks("abcd", {"a": "s", "b": "s", "c": "t", "d": "t"}, [("a", "b"), ("c", "d")], [], False)
    assert ranks == {"a": 0, "b": 1, "c": 0, "d": 1}
    # Two sources feeding one member sit on the same rank, right before it, not on ranks of their own.
    packed = band_ranks("abc", {"a": "s", "b": "s", "c": "s"}, [("a", "c"), ("b", "c")], [], False)
    assert packed == {"a": 0, "b": 0, "c": 1}


def test_a_member_feeding_the_next_cluster_sits_at_the_end_of_its_band() -> None:
    # s is three ranks wide (a -> b -> c); d, in s too, only feeds t's x: last in s, next to x, not first.
    units = {"a": "s", "b": "s", "c": "s", "d": "s", "x": "t"}
    ranks = band_ranks("abcdx", units, [("a", "b"), ("b", "c"), ("c", "x"), ("d", "x")], ["a"], upstream=False)
    assert ranks == {"a": 0, "b": 1, "c": 2, "d": 2, "x": 3}


def test_a_queried_member_stays_at_the_edge_it_is_pinned_to() -> None:
    # Walked up from p and r: r is fed from outside its cluster only, and would sit beside a, early in m's
    # band, were it not queried; queried, it ends the picture with p.
    units, edges = {"a": "s", "q": "m", "p": "m", "r": "m"}, [("a", "r"), ("a", "q"), ("q", "p")]
    assert band_ranks("aqpr", units, edges, ["p", "r"], upstream=True) == {"a": 0, "q": 1, "p": 2, "r": 2}
    assert band_ranks("aqpr", units, edges, ["p"], upstream=True)["r"] == 1


def dot_layout(text: str) -> dict:
    run = subprocess.run(["dot", "-Tjson"], input=text, capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def cluster_boxes(layout: dict) -> dict[str, tuple[float, float, float, float]]:
    return {
        obj["label"]: tuple(map(float, obj["bb"].split(",")))
        for obj in layout["objects"]
        if obj["name"].startswith("cluster_") and obj["name"] != "cluster_legend"
    }


def overlapping(boxes: dict[str, tuple[float, ...]], *, axis: int | None = None) -> list[tuple[str, str]]:
    """Pairs of boxes that overlap, or with ``axis`` (0: x, 1: y) whose extents along it overlap."""
    axes = (0, 1) if axis is None else (axis,)
    return [
        (a, b)
        for (a, box_a), (b, box_b) in itertools.combinations(sorted(boxes.items()), 2)
        if all(box_a[i] < box_b[i + 2] - 1 and box_b[i] < box_a[i + 2] - 1 for i in axes)
    ]


def height(layout: dict) -> float:
    return float(layout["bb"].split(",")[3])


def dot_text(store: Path, *arguments: str) -> str:
    outcome = CliRunner().invoke(cli, [*arguments, "--store", str(store), "--format", "dot"])
    assert outcome.exit_code == 0, outcome.output
    return outcome.output


@needs_dot
def test_schemas_of_the_fixture_warehouse_sit_side_by_side(warehouse_store: Path) -> None:
    flat = dot_layout(dot_text(warehouse_store, "up", "mart.%"))
    grouped = dot_layout(dot_text(warehouse_store, "up", "mart.%", "--group-by", "schema"))
    boxes = cluster_boxes(grouped)
    assert sorted(boxes) == ["dwh", "mart", "ods", "stg"]
    assert overlapping(boxes) == []
    assert overlapping(boxes, axis=0) == []  # no two schemas share a rank: left to right, layer by layer
    assert [name for name, _ in sorted(boxes.items(), key=lambda item: item[1][0])] == ["stg", "ods", "dwh", "mart"]
    # Before the bands, the frames stacked the schemas down the page: 1.84 times the flat picture's height
    # (1.40 with them).
    assert height(grouped) < 1.6 * height(flat)


@needs_dot
def test_a_grouped_warehouse_of_300_tables_keeps_its_clusters_apart(tmp_path: Path) -> None:
    warehouse = generate_warehouse(tmp_path / "wh", "--tables", "300")
    store = tmp_path / "graph.lin"
    harvest = [
        "harvest", str(warehouse / "sql"), str(warehouse / "ddl"), "--schema", str(warehouse / "schema.json"),
        "--store", str(store), "-q",
    ]  # fmt: skip
    assert CliRunner().invoke(cli, harvest).exit_code == 0
    flat = dot_layout(dot_text(store, "down", "stg.%"))
    grouped = dot_layout(dot_text(store, "down", "stg.%", "--group-by", "schema"))
    boxes = cluster_boxes(grouped)
    assert len(boxes) == 5
    assert overlapping(boxes) == [] and overlapping(boxes, axis=0) == []
    # Before: 10,389 pt tall, 1.78 times the flat picture; the bands leave 6,078 pt, 1.04 times.
    assert height(grouped) < 1.3 * height(flat)


def test_the_readme_shows_the_grouped_picture() -> None:
    """docs/grouped-lineage.svg is what its README caption says: four schema frames, side by side."""
    svg = (REPO / "docs" / "grouped-lineage.svg").read_text(encoding="utf-8")
    outlines = re.findall(r'<g id="clust\d+" class="cluster">\s*<title>[^<]*</title>\s*<path [^>]*d="([^"]+)"', svg)
    spans = {}
    for number, outline in enumerate(outlines):
        xs = [float(x) for x, _ in re.findall(r"([\d.-]+),([\d.-]+)", outline)]
        spans[str(number)] = (min(xs), 0.0, max(xs), 1.0)
    assert len(spans) == 4
    assert overlapping(spans, axis=0) == []
    assert "](docs/grouped-lineage.svg)" in (REPO / "README.md").read_text(encoding="utf-8")
