"""``--format mermaid``: the flowchart's text, and what Mermaid's own parser reads from it.

The parser runs under Node with jsdom (``mermaid_read.mjs``), from the packages ``make test`` installs before
pytest runs (``mermaid_fetch.py``); without Node or those packages the tests that need it skip, saying why.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.emit import style
from lineage_cli.emit.formats import emit, format_from_path
from lineage_cli.emit.mermaid import DOTTED, label, to_mermaid
from lineage_cli.emit.picture import Picture, Volume
from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode
from tests.conftest import skip_for_want_of
from tests.emit import mermaid_fetch
from tests.emit.test_picture import COLUMNS, GROUPED, PICTURE, SCHEMA, TABLE

READER = Path(__file__).with_name("mermaid_read.mjs")

CHAIN = LineageResult(
    "up",
    ["mart.t"],
    nodes=[
        ResultNode("mart.t", "table", 0, role="terminal"),
        ResultNode("ods.v", "view", 1),
        ResultNode("stg.s", "table", 2, role="source"),
        ResultNode("etl/x.sql:3", "transformation", 1),
    ],
    edges=[
        ResultEdge("ods.v", "mart.t", "flow"),
        ResultEdge("stg.s", "ods.v", "predicate", ("FILTER", "JOIN")),
        ResultEdge("stg.s", "mart.t", "flow", ("DECLARED",)),
    ],
)


def test_a_chain_as_a_flowchart() -> None:
    assert to_mermaid(CHAIN) == "\n".join(
        [
            "flowchart LR",
            '  n0["mart.t"]',
            '  n1("ods.v")',
            '  n2["stg.s"]',
            '  n3{{"etl/x.sql:3"}}',
            "  n1 --> n0",
            '  n2 -.->|"FILTER, JOIN"| n1',
            '  n2 -.->|"DECLARED"| n0',
            "  linkStyle 2 stroke-dasharray:2 3",
            "  classDef k_table fill:#8ECAE6,stroke:#4A4E69,color:#1B1B1E",
            "  classDef k_view fill:#B7E4C7,stroke:#4A4E69,color:#1B1B1E",
            "  classDef k_transformation fill:#F4A261,stroke:#4A4E69,color:#1B1B1E",
            "  classDef r_source stroke:#2D6A4F,stroke-width:2px",
            "  classDef queried stroke:#C1121F,stroke-width:3px,font-weight:bold",
            "  class n0,n2 k_table",
            "  class n1 k_view",
            "  class n3 k_transformation",
            "  class n2 r_source",
            "  class n0 queried",
            "",
        ]
    )


def shown(quoted: str) -> str:
    """A label as Mermaid shows it: quotes off, ``#code;`` entities decoded."""
    return re.sub(r"#(\d+);", lambda match: chr(int(match.group(1))), quoted[1:-1])


@pytest.mark.parametrize("name", [*COLUMNS, "mart.%", "a;b", "x`y`", "[1]{2}|3|", "end", "#35;", "tab\there"])
def test_labels_hold_nothing_mermaid_reads_as_syntax(name: str) -> None:
    quoted = label(name)
    assert quoted[0] == quoted[-1] == '"'
    assert not re.search(r'["`\[\]{}|<>&;%#\\\n\t]', re.sub(r"#\d+;", "", quoted[1:-1]))
    assert shown(quoted) == name


def test_groups_are_nested_subgraphs_and_a_table_in_the_answer_is_its_frame() -> None:
    table = "dwh.sales"
    result = LineageResult(
        "down",
        [f"{table}.id"],
        nodes=[ResultNode(table, "table"), ResultNode(f"{table}.id", "column"), ResultNode("rpt.v", "view", 1)],
        edges=[ResultEdge(table, "rpt.v", "flow"), ResultEdge(f"{table}.id", "rpt.v", "projection", ("IDENTITY",))],
    )
    picture = Picture(
        rankdir="TB",
        groups={table: (("dwh", "schema"),), f"{table}.id": (("dwh", "schema"), (table, "table"))},
    )
    lines = to_mermaid(result, picture).splitlines()
    assert lines[0] == "flowchart TB"
    # The table is the frame of its column, under its own id: its edge starts at the frame.
    assert lines[1:7] == [
        '  n2("rpt.v")',
        '  subgraph g0["dwh"]',
        '    subgraph n0["dwh.sales"]',
        '      n1(["dwh.sales.id"])',
        "    end",
        "  end",
    ]
    assert "  n0 --> n2" in lines and "  class g0 g_schema" in lines and "  class n0 g_table" in lines
    assert not any(re.match(r"\s*n0\[", line) for line in lines)  # drawn once


def test_line_widths_dashes_and_their_legend_from_the_manifest() -> None:
    volumes = {("a", "b"): Volume(rows=2_000_000, frequency="hourly"), ("b", "c"): Volume(frequency="daily")}
    result = LineageResult(
        "down",
        ["a"],
        nodes=[ResultNode("a", "table"), ResultNode("b", "transformation", 1), ResultNode("c", "table", 2)],
        edges=[ResultEdge("a", "b", "read"), ResultEdge("b", "c", "write")],
    )
    lines = to_mermaid(result, Picture(volumes=volumes)).splitlines()
    assert "  n0 -.-> n1" in lines and "  n1 -.-> n2" in lines
    assert '  subgraph legend["legend: width = rows per run, dashes = update frequency"]' in lines
    styles = [line.strip().split(" ", 2)[1:] for line in lines if line.startswith("  linkStyle")]
    # Link 0 moves 2M rows hourly: thick and dotted; 1 is daily: dashed.  The legend's samples are links 2
    # (2M rows: thick), 3 (hourly: dotted) and 4 (daily: dashed).
    assert styles == [["0", "stroke-width:4.3px,stroke-dasharray:2 3"], ["2", "stroke-width:4.3px"], ["3", DOTTED]]


@pytest.mark.parametrize(("path", "fmt"), [("impact.mmd", "mermaid"), ("docs/L.Mermaid", "mermaid")])
def test_mermaid_suffixes(path: str, fmt: str) -> None:
    assert format_from_path(path) == fmt


def invoke(store: Path, *arguments: str) -> str:
    outcome = CliRunner().invoke(cli, [*arguments, "--store", str(store)])
    assert outcome.exit_code == 0, outcome.output
    return outcome.output


def queried_ids(text: str) -> set[str]:
    found = re.search(r"^  class (\S+) queried$", text, re.M)
    return set(found.group(1).split(",")) if found else set()


def node_ids(text: str) -> dict[str, str]:
    """id -> name of every node statement."""
    return {m.group(1): shown(m.group(2)) for m in re.finditer(r'^\s+(n\d+)\W+("[^"]*")', text, re.M)}


def test_written_to_a_file_by_its_suffix(warehouse_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "lineage.mmd"
    invoke(warehouse_store, "up", "mart.sales_daily", "-o", str(out))
    assert out.read_text(encoding="utf-8") == invoke(warehouse_store, "up", "mart.sales_daily", "--format", "mermaid")


def test_a_pattern_query_marks_its_matches_as_queried(warehouse_store: Path) -> None:
    """``lineage up 'mart.%'``: the four mart tables are the queried ones, their upstream is not, in every
    picture format."""
    marts = {"mart.customer_360", "mart.product_performance", "mart.sales_daily", "mart.store_kpi"}
    text = invoke(warehouse_store, "up", "mart.%", "--format", "mermaid")
    names = node_ids(text)
    assert len(names) > 20
    assert {names[node] for node in queried_ids(text)} == marts
    dot = invoke(warehouse_store, "up", "mart.%", "--format", "dot")
    outlined = re.findall(rf'^  "([^"]+)" \[.*color="{style.ROOT_BORDER_COLOR}"', dot, re.M)
    assert set(outlined) == marts
    graphml = invoke(warehouse_store, "up", "mart.%", "--format", "graphml")
    assert graphml.count(f'color="{style.ROOT_BORDER_COLOR}"') == len(marts)


# ------------------------------------------------------------------ read back by Mermaid's own parser


def read_with_mermaid(text: str) -> dict:
    """What Mermaid's parser reads from ``text``; a skip when Node or the packages are absent."""
    node = shutil.which("node")
    if node is None or not mermaid_fetch.installed():
        skip_for_want_of("Mermaid's parser (Node and the packages `python -m tests.emit.mermaid_fetch` installs)")
    script = READER.read_text(encoding="utf-8")
    run = subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=text,
        capture_output=True,
        text=True,
        cwd=mermaid_fetch.CACHE,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_mermaid_reads_every_hostile_name_back() -> None:
    read = read_with_mermaid(to_mermaid(GROUPED, PICTURE))
    assert read["type"] == "flowchart-v2" and read["direction"] == "LR"
    ids = {node.name: f"n{position}" for position, node in enumerate(GROUPED.nodes)}
    assert {node["id"]: node["label"] for node in read["nodes"]} == {ids[name]: name for name in ids}
    assert {(edge["source"], edge["target"]) for edge in read["edges"]} == {
        (ids[edge.source], ids[edge.target]) for edge in GROUPED.edges
    }
    assert [edge["stroke"] for edge in read["edges"]] == ["normal", "normal", "normal", "dotted", "normal"]
    frames = {frame["label"]: frame for frame in read["subgraphs"]}
    assert set(frames) == {SCHEMA[0], TABLE[0], 's&<x> "q".t\'2'}
    assert set(frames[TABLE[0]]["nodes"]) == {ids[COLUMNS[0]], ids[COLUMNS[1]]}
    classes = {node["id"]: node["classes"] for node in read["nodes"]}
    assert classes[ids[COLUMNS[0]]] == ["k_column", "queried"]
    assert classes[ids["loose €"]] == ["k_column", "r_terminal"]


def test_mermaid_reads_an_empty_name() -> None:
    empty = LineageResult("up", [""], nodes=[ResultNode("", "table"), ResultNode("a", "table", 1)])
    empty.edges = [ResultEdge("a", "", "flow")]
    read = read_with_mermaid(to_mermaid(empty, Picture(groups={"a": (("", "schema"),)})))
    assert [(node["id"], node["label"].strip()) for node in read["nodes"]] == [("n0", ""), ("n1", "a")]
    assert [frame["label"].strip() for frame in read["subgraphs"]] == [""]


@pytest.mark.parametrize(
    "query",
    [
        ["up", "mart.sales_daily"],
        ["up", "mart.%", "--group-by", "schema"],
        ["up", "mart.sales_daily.revenue_usd", "--group-by", "schema", "--rankdir", "TB"],
        ["down", "stg.pos_sales", "--show-transformations", "--predicates"],
        ["path", "stg.pos_sales", "mart.sales_daily"],
    ],
)
def test_mermaid_reads_the_fixture_warehouse(warehouse_store: Path, query: list[str]) -> None:
    unframed = [word for word in query if word not in ("--group-by", "schema", "--rankdir", "TB")]
    result = json.loads(invoke(warehouse_store, *unframed, "--format", "json"))
    read = read_with_mermaid(invoke(warehouse_store, *query, "--format", "mermaid"))
    # Every node of the answer is a node of the flowchart, or the frame of its columns (ids n0..).
    drawn = [item["label"] for item in read["nodes"] + read["subgraphs"] if item["id"].startswith("n")]
    assert sorted(drawn) == sorted(node["name"] for node in result["nodes"])
    assert len(read["edges"]) == len(result["edges"])
    queried = {node["label"] for node in read["nodes"] if "queried" in node["classes"]}
    queried |= {frame["label"] for frame in read["subgraphs"] if "queried" in (frame["classes"] or [])}
    assert queried == set(result["roots"])


def test_mermaid_reads_the_legend_and_line_styles(manifest_store: Path) -> None:
    text = invoke(manifest_store, "down", "dwh.sales_web", "--show-transformations", "--format", "mermaid")
    read = read_with_mermaid(text)
    assert any(frame["id"] == "legend" for frame in read["subgraphs"])
    assert any("stroke-width" in ";".join(edge["style"]) for edge in read["edges"])


def test_emit_knows_mermaid() -> None:
    assert emit(CHAIN, "mermaid") == to_mermaid(CHAIN)
