"""A ``LineageResult`` in a notebook: ``_repr_html_`` frames the viewer of ``lineage view``, ``_repr_svg_`` is
the Graphviz picture where ``dot`` is present, and neither loads on the query path."""

from __future__ import annotations

import html
import importlib.util
import re
import shutil
import subprocess
import sys

import pytest

from lineage_cli.emit import notebook
from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode
from tests.conftest import REPO, skip_for_want_of

RESULT = LineageResult(
    "up",
    ["mart.t"],
    nodes=[ResultNode("stg.s", "table", 1, role="source"), ResultNode("mart.t", "table", 0, role="terminal")],
    edges=[ResultEdge("stg.s", "mart.t", "flow")],
)
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed")


def test_the_html_is_the_viewer_of_the_answer_in_a_frame_of_its_own() -> None:
    if importlib.util.find_spec("lineage_cli.emit.view") is None:
        skip_for_want_of("lineage_cli.emit.view (the viewer of `lineage view`)")
    from lineage_cli.emit.view import view_html

    shown = RESULT._repr_html_()
    frame = re.fullmatch(r'<iframe srcdoc="([^"]*)" title="([^"]*)" style="[^"]*"></iframe>', shown)
    assert frame is not None, shown[:200]
    assert html.unescape(frame.group(1)) == view_html(RESULT.to_dict(), title="lineage up mart.t")
    assert html.unescape(frame.group(2)) == "lineage up mart.t"


@needs_dot
def test_the_svg_is_the_dot_picture() -> None:
    svg = RESULT._repr_svg_()
    assert svg is not None and "<svg" in svg
    assert set(re.findall(r"<title>([^<]*)</title>", svg)) >= {"stg.s", "mart.t"}


def test_no_svg_without_dot(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert RESULT._repr_svg_() is None


def test_no_svg_for_an_answer_too_large_to_draw_on_every_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notebook, "SVG_LIMIT", 1)
    assert RESULT._repr_svg_() is None


@pytest.mark.parametrize(
    ("result", "title"),
    [
        (LineageResult("down", ["a", "b", "c", "d"]), "lineage down a, b, c and 1 more"),
        (LineageResult("path", ["a", "b"]), "lineage path a -> b"),
        (LineageResult("io", []), "lineage io"),
    ],
)
def test_titles(result: LineageResult, title: str) -> None:
    assert notebook.result_title(result) == title


def test_the_query_path_does_not_load_the_notebook_hooks() -> None:
    code = "import sys, lineage_cli.walk.result; print(sorted(m for m in sys.modules if 'emit' in m))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert run.stdout.strip() == "[]"
