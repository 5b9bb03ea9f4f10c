"""``lineage view``'s page without a browser: what it embeds (the answer up and down, its containment, groups and
manifest facts), that it stands alone, and the command's outputs and errors.  (The drawing: tests/view.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.emit.view import view_document, view_html
from lineage_cli.walk.around import merged, with_containment
from lineage_cli.walk.lineage_store import LineageStore
from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode
from tests.emit.test_picture import EXPORT


def embedded(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="lineage-data">(.*?)</script>', page, re.DOTALL)
    assert found is not None
    return json.loads(found[1])


def run(*arguments: str) -> object:
    return CliRunner().invoke(cli, ["view", *arguments])


def test_the_page_embeds_the_answer_both_ways_with_the_tables_columns(warehouse_store: Path) -> None:
    outcome = run("mart.sales_daily", "--store", str(warehouse_store), "--no-open")
    assert outcome.exit_code == 0, outcome.output
    document = embedded(outcome.output)
    store = LineageStore(warehouse_store)
    up, down = store.up("mart.sales_daily"), store.down("mart.sales_daily")
    names = {node["name"] for node in document["nodes"]}
    assert document["direction"] == "both" and document["roots"] == ["mart.sales_daily"]
    assert {n.name for n in up.nodes + down.nodes} <= names
    edges = {(e["source"], e["target"], e["type"]) for e in document["edges"]}
    assert {(e.source, e.target, e.type) for e in up.edges + down.edges} <= edges
    # every column of fct_sales (a table of the answer), contained, with the column lineage between answer tables
    columns = {n for n in store.names() if n.startswith("dwh.fct_sales.") and n.count(".") == 2}
    assert columns <= names
    assert {("dwh.fct_sales", c, "contains") for c in columns} <= edges
    assert ("dwh.fct_sales.net_amount_usd", "mart.sales_daily.revenue_usd", "projection") in edges
    node = next(n for n in document["nodes"] if n["name"] == "dwh.fct_sales")
    assert node["groups"] == {"schema": "dwh"}


def around(store: LineageStore, names: list[str], ways: tuple[str, ...] = ("up", "down")) -> LineageResult:
    """``lineage view``'s answer: the lineage ``ways`` of ``names``, merged, with its containment."""
    answers = [store.lineage(way, name) for name in names for way in ways]
    return with_containment(store, merged("both" if len(ways) > 1 else ways[0], answers))


def test_a_column_brings_its_table(warehouse_store: Path) -> None:
    result = around(LineageStore(warehouse_store), ["mart.sales_daily.revenue_usd"])
    names = {n.name for n in result.nodes}
    assert {"mart.sales_daily", "dwh.fct_sales"} <= names
    assert ResultEdge("mart.sales_daily", "mart.sales_daily.revenue_usd", "contains") in result.edges


def test_one_direction_and_several_names(warehouse_store: Path) -> None:
    store = LineageStore(warehouse_store)
    result = around(store, ["mart.sales_daily", "stg.pos_sales"], ("up",))
    assert result.direction == "up" and result.roots == ["mart.sales_daily", "stg.pos_sales"]
    datasets = {n.name for n in result.nodes if n.kind == "table"}
    assert {n.name for n in store.up("mart.sales_daily").nodes} <= datasets
    assert not {n.name for n in store.down("mart.sales_daily").nodes} - {"mart.sales_daily"} & datasets


def test_rows_and_frequency_of_a_manifest_ride_on_the_edges(manifest_store: Path) -> None:
    outcome = run("dwh.sales_web", "--store", str(manifest_store), "--show-transformations", "--no-open")
    assert outcome.exit_code == 0, outcome.output
    edges = {(e["source"], e["target"]): e for e in embedded(outcome.output)["edges"]}
    assert edges[("dwh.sales_web", EXPORT)]["rows"] == 1_200_000
    assert edges[("dwh.sales_web", EXPORT)]["frequency"] == "hourly"
    statement = next(n for n in embedded(outcome.output)["nodes"] if n["name"] == EXPORT)
    assert statement["groups"] == {"workflow": "wf_export"}


def test_the_page_stands_alone_and_keeps_any_name_intact() -> None:
    awkward = 'x.</script><script>alert(1)</script>{{SCRIPT}}&"'
    result = LineageResult("up", [awkward], nodes=[ResultNode(awkward, "table")], edges=[])
    page = view_html(view_document(result, level="schema"), title="a <b>")
    assert embedded(page)["nodes"][0]["name"] == awkward
    assert embedded(page)["level"] == "schema"
    assert page.count("<script") == 3  # the config, the data, the viewer: nothing the name brought
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing fetched from anywhere
    assert "<title>a &lt;b&gt;</title>" in page


def test_a_server_page_embeds_no_answer() -> None:
    page = view_html(None, api="/api")
    assert embedded(page) is None
    config = re.search(r'id="lineage-config">(.*?)</script>', page)
    assert config is not None and json.loads(config[1])["api"] == "/api"


def test_output_file_and_browser(warehouse_store: Path, tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "view.html"
    outcome = run("mart.sales_daily", "--store", str(warehouse_store), "-o", str(target))
    assert outcome.exit_code == 0
    assert embedded(target.read_text(encoding="utf-8"))["roots"] == ["mart.sales_daily"]
    assert f"-> {target}" in outcome.output
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or True)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    outcome = run("mart.sales_daily", "--store", str(warehouse_store))
    assert outcome.exit_code == 0
    assert len(opened) == 1 and opened[0].startswith("file://")
    written = Path(opened[0].removeprefix("file://"))
    assert written.parent == tmp_path and embedded(written.read_text(encoding="utf-8"))["roots"] == ["mart.sales_daily"]


def test_bad_input_is_a_clear_error(warehouse_store: Path, tmp_path: Path) -> None:
    missing = run("mart.sales_dayly", "--store", str(warehouse_store), "--no-open")
    assert missing.exit_code == 1 and "no table, view or column named 'mart.sales_dayly'" in missing.output
    no_store = run("mart.sales_daily", "--store", str(tmp_path / "none.lin"), "--no-open")
    assert no_store.exit_code == 2 and no_store.output.startswith("error:")
    both = run("mart.sales_daily", "--store", str(warehouse_store), "--no-open", "-o", str(tmp_path / "v.html"))
    assert both.exit_code == 2 and "give one of them" in both.output
    marts = run("mart.sales_daily", "--store", str(warehouse_store), "--no-open", "--level", "datamart")
    assert marts.exit_code == 1 and "--datamarts" in marts.output
    unwritable = run("mart.sales_daily", "--store", str(warehouse_store), "-o", str(tmp_path / "no" / "v.html"))
    assert unwritable.exit_code == 2 and "cannot write" in unwritable.output


def test_direction_walks_one_way_only(warehouse_store: Path) -> None:
    outcome = run("dwh.fct_sales", "--store", str(warehouse_store), "--direction", "down", "--depth", "1", "--no-open")
    assert outcome.exit_code == 0, outcome.output
    document = embedded(outcome.output)
    store = LineageStore(warehouse_store)
    tables = {n["name"] for n in document["nodes"] if n["kind"] == "table"}
    assert document["direction"] == "down"
    assert tables == {n.name for n in store.down("dwh.fct_sales", 1).nodes}


def test_the_columns_a_table_brings_carry_their_expressions_as_an_answers_columns_do(warehouse_store: Path) -> None:
    store = LineageStore(warehouse_store)
    answered = {n.name for n in store.up("mart.sales_daily").nodes + store.down("mart.sales_daily").nodes}
    result = around(store, ["mart.sales_daily"])
    added = [n for n in result.nodes if n.kind == "column" and n.name not in answered]
    ids = [store.find(n.name) for n in added]
    expected = store.expressions(ids)
    assert [n.expressions for n in added] == [expected.get(node, ()) for node in ids]
    assert sum(bool(n.expressions) for n in added) >= 5  # (the warehouse's marts compute most of their columns)
    revenue = next(n for n in added if n.name == "mart.sales_daily.revenue_usd")
    ((statement, text),) = revenue.expressions
    assert statement.endswith("mart/sales_daily.sql:4") and text == "SUM(u.revenue_usd)"
    page = embedded(run("mart.sales_daily", "--store", str(warehouse_store), "--no-open").output)
    shown = {node["name"]: node for node in page["nodes"]}
    assert shown["mart.sales_daily.revenue_usd"]["expression"] == text  # what the page shows on hover
    several = [n for n in added if len(n.expressions) > 1]
    for node in several:  # a column several statements write: the first's, and all of them, as the JSON has it
        assert shown[node.name]["expressions"] == [{"statement": s, "expression": e} for s, e in node.expressions]
