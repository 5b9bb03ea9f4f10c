"""The statement text: harvested from each statement's span in its file (after rendering), kept by the store,
exported as OpenLineage's ``sql`` job facet and imported back from it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.harvest.batch import harvest
from lineage_cli.model import MAX_SQL_BYTES, SQL_CUT_MARKER, Graph, NodeKind, Provenance
from lineage_cli.store.arrays import from_graph, from_store, merge, to_graph
from lineage_cli.store.reader import open_store
from lineage_cli.store.writer import write_store
from tests.conftest import REPO, assert_valid_format

SCRIPT = """-- dialect: hive
-- a leading comment is no part of the statement
INSERT OVERWRITE TABLE ods.orders
SELECT o.id, o.amount   -- a comment inside it is
FROM stg.orders o ;

/* between */ CREATE TABLE dwh.big AS SELECT id FROM ods.orders WHERE amount > 100;
SELECT count(*) FROM dwh.big;
INSERT INTO dwh.gone SELECT id FROM (SELECT id FROM ;
FROM ods.orders o
INSERT INTO dwh.a SELECT o.id
INSERT INTO dwh.b SELECT o.amount;
"""


def exported(store: Path, out: Path) -> dict[str, dict]:
    """The sql facet of each event, by its statement's name; the events checked against the vendored schemas."""
    outcome = CliRunner().invoke(cli, ["export", "--store", str(store), "-o", str(out)])
    assert outcome.exit_code == 0, outcome.output
    assert_valid_format("openlineage", out)
    events = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return {e["run"]["facets"]["lineage_statement"]["name"]: e["job"]["facets"].get("sql") for e in events}


def queries(facets: dict[str, dict | None]) -> dict[str, tuple[str, str] | None]:
    return {name: (f["query"], f.get("dialect", "")) if f else None for name, f in facets.items()}


def harvested(tmp_path: Path, files: dict[str, str], *options: str) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    store = tmp_path / "g.lin"
    outcome = CliRunner().invoke(cli, ["harvest", str(tmp_path), "--store", str(store), "-q", "--no-cache", *options])
    assert outcome.exit_code in (0, 1), outcome.output  # (1: the broken statement is an error)
    return store


def test_each_statement_of_a_script_exports_its_own_text_as_written(tmp_path: Path) -> None:
    store = harvested(tmp_path, {"load.sql": SCRIPT})
    found = queries(exported(store, tmp_path / "e.json"))
    at = f"{tmp_path / 'load.sql'}:"
    assert found == {
        f"{at}3": (
            "INSERT OVERWRITE TABLE ods.orders\nSELECT o.id, o.amount   -- a comment inside it is\nFROM stg.orders o",
            "hive",
        ),
        f"{at}7": ("CREATE TABLE dwh.big AS SELECT id FROM ods.orders WHERE amount > 100", "hive"),
        f"{at}9": ("INSERT INTO dwh.gone SELECT id FROM (SELECT id FROM", "hive"),  # read approximately: its text too
        # a multi-insert: a transformation per target, each with the statement's text
        f"{at}10": ("FROM ods.orders o\nINSERT INTO dwh.a SELECT o.id\nINSERT INTO dwh.b SELECT o.amount", "hive"),
        f"{at}10#2": ("FROM ods.orders o\nINSERT INTO dwh.a SELECT o.id\nINSERT INTO dwh.b SELECT o.amount", "hive"),
    }  # fmt: skip


def test_a_templated_statements_text_is_rendered_and_keeps_placeholders_without_a_value(tmp_path: Path) -> None:
    template = (
        "{% set cutoff = 7 %}\n"
        "INSERT INTO ${target_db}.daily\n"
        "SELECT s.id FROM ${src_db}.sales s WHERE s.age < {{ cutoff }} AND s.day = '${run_date}';\n"
    )
    store = harvested(tmp_path, {"daily.sql": template}, "--var", "target_db=dwh", "--dialect", "spark")
    assert queries(exported(store, tmp_path / "e.json")) == {
        f"{tmp_path / 'daily.sql'}:2": (
            "INSERT INTO dwh.daily\nSELECT s.id FROM ${src_db}.sales s WHERE s.age < 7 AND s.day = '${run_date}'",
            "spark",
        )
    }


def test_a_dbt_models_text_is_the_statement_made_of_its_compiled_sql(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    store = tmp_path / "dbt.lin"
    outcome = CliRunner().invoke(cli, ["harvest", "--dbt", "fixtures/dbt", "--store", str(store), "-q", "--no-cache"])
    assert outcome.exit_code == 0, outcome.output
    found = queries(exported(store, tmp_path / "e.json"))
    assert found["fixtures/dbt/models/staging/stg_customers.sql:1"] == (
        'CREATE VIEW "warehouse"."analytics"."stg_customers" AS select * from "warehouse"."raw"."customers"',
        "postgres",
    )
    big_spenders = found["fixtures/dbt/models/marts/rpt_big_spenders.sql:1"]
    assert big_spenders is not None and big_spenders[0].endswith(  # ref() and var() rendered
        'from "warehouse"."analytics"."fct_customer_orders"\nwhere total_amount > 1000'
    )
    assert found["fixtures/dbt/models/marts/customer_segments.py:1"] is None  # a Python model: no SQL of ours


def test_a_statement_past_the_bound_is_cut_with_a_marker(tmp_path: Path) -> None:
    columns = ", ".join(f"s.c{index} + {index} AS n{index}" for index in range(8_000))
    store = harvested(tmp_path, {"wide.sql": f"INSERT INTO t.wide SELECT {columns} FROM t.s s;\n"})
    (facet,) = exported(store, tmp_path / "e.json").values()
    assert facet is not None and facet["query"].endswith(SQL_CUT_MARKER)
    assert facet["query"].startswith("INSERT INTO t.wide SELECT s.c0 + 0 AS n0, ")
    assert len(facet["query"].encode()) <= MAX_SQL_BYTES


def test_export_import_export_keeps_the_facet_byte_for_byte(tmp_path: Path) -> None:
    store = harvested(tmp_path, {"load.sql": SCRIPT, "t.sql": "-- dialect: tsql\nINSERT INTO d.t SELECT N'é' AS x;"})
    first, second, copy = tmp_path / "first.json", tmp_path / "second.json", tmp_path / "imported.lin"
    before = exported(store, first)
    outcome = CliRunner().invoke(cli, ["import", str(first), "--format", "openlineage", "--store", str(copy)])
    assert outcome.exit_code == 0 and "(0 skipped)" in outcome.output, outcome.output
    assert exported(copy, second) == before
    assert second.read_bytes() == first.read_bytes()
    assert {query for query, _ in filter(None, queries(before).values())} >= {"INSERT INTO d.t SELECT N'é' AS x"}


def test_import_reads_another_producers_sql_facet_with_or_without_its_dialect(tmp_path: Path) -> None:
    def event(run: str, sql: dict) -> str:
        job = {"namespace": "etl", "name": f"job_{run}", "facets": {"sql": sql}}
        return json.dumps({"eventType": "COMPLETE", "run": {"runId": run}, "job": job, "inputs": [], "outputs": []})

    events = tmp_path / "events.jsonl"
    events.write_text(
        "\n".join(
            [
                event("r1", {"query": "INSERT INTO a SELECT * FROM b", "dialect": "snowflake"}),
                event("r2", {"query": "DELETE FROM c"}),
                event("r3", {"query": 42}),  # no text: no row
            ]
        )
    )
    store = tmp_path / "s.lin"
    outcome = CliRunner().invoke(cli, ["import", str(events), "--format", "openlineage", "--store", str(store)])
    assert outcome.exit_code == 0, outcome.output
    opened = open_store(store)
    texts = {name: opened.sql(node) for node, name in enumerate(opened.names())}
    assert {name: text for name, text in texts.items() if text} == {
        f"{events}:1": ("INSERT INTO a SELECT * FROM b", "snowflake"),
        f"{events}:2": ("DELETE FROM c", ""),
    }
    again = exported(store, tmp_path / "e.json")
    assert again[f"{events}:2"] is not None and "dialect" not in again[f"{events}:2"]  # none said: none made up


def test_statement_texts_survive_arrays_merge_and_a_store_round_trip(tmp_path: Path) -> None:
    def graph(name: str, text: str, dialect: str) -> Graph:
        made = Graph()
        made.add_transformation(name, Provenance("f.sql", 1))
        made.add_node("s.t", NodeKind.TABLE)
        made.sql[name] = (text, dialect)
        return made

    first, second = graph("f.sql:1", "INSERT INTO s.t SELECT 1", "hive"), graph("g.sql:1", "DELETE FROM s.t", "tsql")
    merged = merge(from_graph(first), from_graph(second))
    assert to_graph(merged).sql == {
        "f.sql:1": ("INSERT INTO s.t SELECT 1", "hive"),
        "g.sql:1": ("DELETE FROM s.t", "tsql"),
    }
    write_store(merged, tmp_path / "m.lin", {})
    assert to_graph(from_store(open_store(tmp_path / "m.lin"))).sql == to_graph(merged).sql
    opened = open_store(tmp_path / "m.lin")
    assert opened.sql(opened.names().index("s.t")) is None  # a node that is no statement


def test_the_python_harvest_keeps_each_statements_text(tmp_path: Path) -> None:
    (tmp_path / "a.sql").write_text("INSERT INTO x.t\n  SELECT 1 AS a;\n", encoding="utf-8")
    assert harvest([tmp_path]).graph.sql == {f"{tmp_path / 'a.sql'}:1": ("INSERT INTO x.t\n  SELECT 1 AS a", "ansi")}


def test_statements_without_semicolons_and_in_a_routine_have_their_own_text(tmp_path: Path) -> None:
    batch = "INSERT INTO a.t SELECT 1 AS x\nUPDATE a.t SET x = 2\nGO\nCREATE PROCEDURE p AS\nBEGIN\n"
    batch += "  INSERT INTO a.u SELECT x FROM a.t\nEND\n"
    (tmp_path / "batch.sql").write_text(batch, encoding="utf-8")
    texts = {name.rsplit(":", 1)[1]: text for name, text in harvest([tmp_path], dialect="tsql").graph.sql.items()}
    assert texts == {
        "1": ("INSERT INTO a.t SELECT 1 AS x", "tsql"),  # a T-SQL batch cut where the next statement begins
        "2": ("UPDATE a.t SET x = 2", "tsql"),
        "6": ("INSERT INTO a.u SELECT x FROM a.t", "tsql"),  # a procedure's statement, not its header
    }
