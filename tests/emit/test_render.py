"""``lineage up/down -o FILE.svg|png|pdf``: the DOT output rendered by Graphviz, and the demo picture."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner
from lxml import etree

from lineage_cli.cli import cli
from lineage_cli.emit.formats import format_from_path
from tests.conftest import REPO

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-"}


@pytest.mark.parametrize(("path", "fmt"), [("a.svg", "svg"), ("out/A.PNG", "png"), ("lineage.pdf", "pdf")])
def test_picture_suffixes_choose_a_rendered_format(path: str, fmt: str) -> None:
    assert format_from_path(path) == fmt


@needs_dot
def test_svg_is_rendered_with_every_node(warehouse_store, tmp_path) -> None:
    out = tmp_path / "lineage.svg"
    outcome = CliRunner().invoke(cli, ["up", "mart.sales_daily", "--store", str(warehouse_store), "-o", str(out)])
    assert outcome.exit_code == 0, outcome.output
    svg = etree.parse(str(out)).getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    titles = {title.text for title in svg.iter("{http://www.w3.org/2000/svg}title")}
    assert {"mart.sales_daily", "dwh.fct_sales", "stg.pos_sales"} <= titles


@needs_dot
@pytest.mark.parametrize("fmt", ["png", "pdf"])
def test_png_and_pdf_are_rendered(warehouse_store, tmp_path, fmt) -> None:
    out = tmp_path / f"lineage.{fmt}"
    outcome = CliRunner().invoke(cli, ["down", "stg.pos_sales", "--store", str(warehouse_store), "-o", str(out)])
    assert outcome.exit_code == 0, outcome.output
    assert out.read_bytes().startswith(MAGIC[fmt])


def test_missing_dot_is_a_clear_error_without_traceback(warehouse_store, tmp_path, monkeypatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    out = tmp_path / "lineage.svg"
    outcome = CliRunner().invoke(cli, ["up", "mart.sales_daily", "--store", str(warehouse_store), "-o", str(out)])
    assert outcome.exit_code == 2
    assert "Graphviz's `dot` program is not on PATH" in outcome.output
    assert isinstance(outcome.exception, SystemExit) and "Traceback" not in outcome.output
    assert not out.exists()


def test_the_readme_shows_the_rendered_demo_lineage() -> None:
    picture = REPO / "docs" / "demo-lineage.svg"
    svg = etree.parse(str(picture)).getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    assert "](docs/demo-lineage.svg)" in (REPO / "README.md").read_text(encoding="utf-8")
