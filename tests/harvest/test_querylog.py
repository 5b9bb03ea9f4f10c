"""Query logs (``harvest/inputs/querylog/``): each format's fixture log under fixtures/querylogs/ harvested to
its exact table and column lineage, each query under its own row's database and schema, failed queries and bad
rows skipped and counted, identical statements once with their runs as ``frequency``; and the CLI end to end."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

import lineage_cli
from lineage_cli.cli import cli
from lineage_cli.commands.options import LOG_FORMATS
from lineage_cli.errors import InputError
from lineage_cli.harvest.batch import harvest, harvest_plan
from lineage_cli.harvest.inputs.plan import HarvestOptions, plan_harvest
from lineage_cli.harvest.inputs.querylog import collect
from lineage_cli.harvest.inputs.querylog.collect import FORMATS, add_query_logs
from lineage_cli.model import EdgeType, Graph, Provenance, Subtype
from lineage_cli.store.reader import open_store
from tests.conftest import REPO

LOGS = "fixtures/querylogs/"


@pytest.fixture(autouse=True)
def _at_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the logs' names in provenance are as given: relative to the root


def table_edges(graph: Graph) -> set[str]:
    """``source -> target @ row`` for each dataset a statement reads and writes (the row: its log line)."""
    reads: dict[str, set[str]] = {}
    for source, target, kind, _ in graph.edges:
        if kind is EdgeType.READ:
            reads.setdefault(target, set()).add(source)
    found = set()
    for transformation, target, kind, _ in graph.edges:
        if kind is EdgeType.WRITE:
            line = graph.provenance[transformation].line
            found |= {f"{source} -> {target} @{line}" for source in reads.get(transformation, ())}
    return found


def column_edges(graph: Graph) -> set[str]:
    found = set()
    for (source, target, kind, _), flags in graph.edges.items():
        if kind in (EdgeType.PROJECTION, EdgeType.PREDICATE):
            subtypes = "|".join(subtype.name for subtype in Subtype if flags & subtype.bit)
            found.add(f"{source} -> {target} {kind.name}/{subtypes}")
    return found


def harvested(name: str, log_format: str, **options: object):
    return harvest(query_logs=[LOGS + name], log_format=log_format, **options)


def counts(name: str, log_format: str, dialect: str | None = None):
    plan = plan_harvest((), HarvestOptions(dialect))
    return add_query_logs(plan, [LOGS + name], log_format, HarvestOptions(dialect)), plan


def test_the_formats_the_cli_offers_are_those_read():
    assert tuple(FORMATS) == LOG_FORMATS


def test_snowflake_query_history_each_query_under_its_rows_database_and_schema():
    result = harvested("snowflake_query_history.csv", "snowflake")
    assert table_edges(result.graph) == {
        "analytics.raw.orders -> analytics.staging.orders_clean @2",  # STAGING's orders_clean, RAW schema's orders
        "analytics.staging.orders_clean -> analytics.mart.daily_revenue @10",
        "raw.public.events -> raw.public.events_copy @11",  # another row's database and schema
    }
    assert column_edges(result.graph) == {
        "analytics.raw.orders.id -> analytics.staging.orders_clean.order_id PROJECTION/IDENTITY",
        "analytics.raw.orders.amount -> analytics.staging.orders_clean.amount PROJECTION/IDENTITY",
        "analytics.raw.orders.amount -> analytics.staging.orders_clean PREDICATE/FILTER",
        "analytics.staging.orders_clean.order_id -> analytics.mart.daily_revenue.order_id PROJECTION/IDENTITY",
        "analytics.staging.orders_clean.amount -> analytics.mart.daily_revenue.revenue PROJECTION/AGGREGATION",
        "analytics.staging.orders_clean.order_id -> analytics.mart.daily_revenue PREDICATE/GROUP_BY",
        "raw.public.events.event_id -> raw.public.events_copy.event_id PROJECTION/IDENTITY",
    }
    assert [str(issue) for issue in result.issues] == [
        f"{LOGS}snowflake_query_history.csv:12: error: a row of 15 fields, the header names 13"
    ]


def test_snowflake_counts_failed_queries_and_bad_rows_and_keeps_one_statement_per_fingerprint():
    found, plan = counts("snowflake_query_history.csv", "snowflake")
    assert (found.rows, found.failed, found.bad, found.distinct, found.units) == (7, 1, 1, 4, 1)
    assert [query.line for unit in plan.units for query in unit.queries] == [2, 3, 10, 11]


def test_identical_statements_run_again_become_the_frequency_of_their_edges():
    """Rows 2, 4 (the same INSERT laid out on four lines, another literal) and 8: three daily runs."""
    result = harvested("snowflake_query_history.csv", "snowflake")
    assert result.modules[f"{LOGS}snowflake_query_history.csv:2"] == {
        "frequency": "daily",
        "runs": 3,
        "first_run": "2024-05-01T08:00:03.120000Z",
        "last_run": "2024-05-03T08:00:04Z",
        "users": ["ETL_USER"],
        "query_log": f"{LOGS}snowflake_query_history.csv:2",
    }
    assert result.modules[f"{LOGS}snowflake_query_history.csv:10"]["frequency"] == "once"


def test_bigquery_jobs_default_dataset_and_project():
    result = harvested("bigquery_jobs.jsonl", "bigquery")
    assert table_edges(result.graph) == {
        "acme-prod.sales.orders -> acme-prod.sales.orders_daily @1",  # the default dataset's
        "acme-prod.crm.customers -> acme-prod.reporting.top_customers @3",  # no default dataset: the project's
    }
    assert column_edges(result.graph) == {
        "acme-prod.sales.orders.created_at -> acme-prod.sales.orders_daily.day PROJECTION/TRANSFORMATION",
        "acme-prod.sales.orders.amount -> acme-prod.sales.orders_daily.total PROJECTION/AGGREGATION",
        "acme-prod.sales.orders.created_at -> acme-prod.sales.orders_daily PREDICATE/GROUP_BY",
        "acme-prod.crm.customers.customer_id -> acme-prod.reporting.top_customers.customer_id PROJECTION/IDENTITY",
        "acme-prod.crm.customers.name -> acme-prod.reporting.top_customers.name PROJECTION/IDENTITY",
        "acme-prod.crm.customers.tier -> acme-prod.reporting.top_customers PREDICATE/FILTER",
    }
    found, _ = counts("bigquery_jobs.jsonl", "bigquery")
    # the LOAD job is no query; the job with an error_result and the RUNNING one failed; line 7 is cut short
    assert (found.rows, found.failed, found.bad, found.distinct) == (5, 2, 1, 2)
    assert result.modules[f"{LOGS}bigquery_jobs.jsonl:1"]["runs"] == 2


def test_bigquery_as_bq_writes_json_an_array(tmp_path):
    lines = (REPO / LOGS / "bigquery_jobs.jsonl").read_text().splitlines()[:5]
    array = tmp_path / "jobs.json"
    array.write_text("[" + ",\n".join(lines) + "]\n")
    result = harvest(query_logs=[str(array)], log_format="bigquery")
    assert {edge.split(" @")[0] for edge in table_edges(result.graph)} == {
        "acme-prod.sales.orders -> acme-prod.sales.orders_daily",
        "acme-prod.crm.customers -> acme-prod.reporting.top_customers",
    }
    assert sorted(t.line for t in result.graph.provenance.values()) == [1, 3]


def test_redshift_stl_query_aborted_skipped_escapes_read_database_per_row():
    result = harvested("redshift_stl_query.csv", "redshift")
    assert table_edges(result.graph) == {
        "dev.public.sales -> dev.public.sales_summary @2",
        "analytics.public.users -> analytics.public.daily_users @5",  # `\n` in querytxt is a newline
    }
    assert "analytics.public.users.likesports -> analytics.public.daily_users PREDICATE/FILTER" in column_edges(
        result.graph
    )
    found, _ = counts("redshift_stl_query.csv", "redshift")
    assert (found.rows, found.failed, found.bad, found.distinct) == (4, 1, 0, 2)  # rows 2 and 3: padding aside, one


def test_redshift_sys_query_history_only_successes():
    result = harvested("redshift_sys_query_history.csv", "redshift")
    assert table_edges(result.graph) == {"dev.public.sales -> dev.public.sales_summary @2"}
    assert column_edges(result.graph) == {
        "dev.public.sales.region -> dev.public.sales_summary.region PROJECTION/IDENTITY",
        "dev.public.sales.price -> dev.public.sales_summary.revenue PROJECTION/AGGREGATION",
        "dev.public.sales.region -> dev.public.sales_summary PREDICATE/GROUP_BY",
    }
    found, _ = counts("redshift_sys_query_history.csv", "redshift")
    assert (found.rows, found.failed) == (3, 2)  # canceled, and running


def test_redshift_query_text_in_pieces_is_joined():
    result = harvested("redshift_stl_querytext.csv", "redshift")
    assert table_edges(result.graph) == {"dev.public.sales -> dev.mart.region_revenue @2"}
    assert "dev.public.sales.price -> dev.mart.region_revenue.revenue PROJECTION/AGGREGATION" in column_edges(
        result.graph
    )


def test_postgres_csvlog_statements_plans_and_errors():
    result = harvested("postgres_csvlog.csv", "postgres")
    assert table_edges(result.graph) == {
        "shop.public.orders -> shop.public.order_totals @1",  # log_statement; its run of row 5 too
        "shop.public.orders -> shop.reporting.big_orders @6",  # auto_explain's Query Text
        "warehouse.public.customers -> warehouse.stage.customers_copy @11",  # another database
    }
    assert column_edges(result.graph) == {
        "shop.public.orders.id -> shop.public.order_totals.order_id PROJECTION/IDENTITY",
        "shop.public.orders.qty -> shop.public.order_totals.total PROJECTION/TRANSFORMATION",
        "shop.public.orders.price -> shop.public.order_totals.total PROJECTION/TRANSFORMATION",
        "shop.public.orders.status -> shop.public.order_totals PREDICATE/FILTER",
        "shop.public.orders.id -> shop.reporting.big_orders.id PROJECTION/IDENTITY",
        "shop.public.orders.customer_id -> shop.reporting.big_orders.customer_id PROJECTION/IDENTITY",
        "shop.public.orders.qty -> shop.reporting.big_orders PREDICATE/FILTER",
        "warehouse.public.customers.id -> warehouse.stage.customers_copy.id PROJECTION/IDENTITY",
    }
    found, _ = counts("postgres_csvlog.csv", "postgres")
    assert (found.rows, found.failed, found.bad, found.distinct) == (5, 1, 1, 3)  # row 3 failed at row 4
    assert [str(issue) for issue in result.issues] == [
        f"{LOGS}postgres_csvlog.csv:12: error: a csvlog row of 14 fields, fewer than 22"
    ]


def test_generic_jsonl_defaults_per_row_and_its_dialect():
    result = harvested("generic.jsonl", "jsonl", dialect="hive")
    assert table_edges(result.graph) == {
        "stg.sales -> dwh.fact_sales @1",  # the same statement under two default schemas: two statements
        "ods.sales -> dwh.fact_sales @3",
        "hive_prod.dwh.fact_sales -> hive_prod.mart.sales_by_day @4",  # a default database: three-part names
    }
    assert {issue.line for issue in result.issues} == {6, 7, 8}
    found, _ = counts("generic.jsonl", "jsonl", "hive")
    assert (found.rows, found.failed, found.bad, found.distinct) == (5, 1, 3, 3)
    assert result.modules[f"{LOGS}generic.jsonl:1"]["frequency"] == "hourly"
    assert result.modules[f"{LOGS}generic.jsonl:4"]["users"] == ["oozie"]


def test_a_query_log_beside_sql_files_and_through_the_pool_gives_the_same_graph():
    one = harvested("snowflake_query_history.csv", "snowflake", jobs=1)
    plan = plan_harvest((), HarvestOptions())
    add_query_logs(plan, [LOGS + "snowflake_query_history.csv"], "snowflake", HarvestOptions())
    assert harvest_plan(plan, jobs=2).graph == one.graph


def test_cli_harvest_of_a_log_stores_runs_and_reports_bad_rows(tmp_path):
    store = tmp_path / "graph.lin"
    command = ["harvest", "--query-log", LOGS + "snowflake_query_history.csv", "--log-format", "snowflake"]
    outcome = CliRunner().invoke(cli, [*command, "--store", str(store)])
    assert outcome.exit_code == 0, outcome.output
    assert "read 7 query log rows: 1 failed queries and 1 bad rows skipped, 4 distinct statements" in outcome.stdout
    assert "harvested 0 files, 1 log chunks, 4 statements (3 with lineage" in outcome.stdout
    assert f"{LOGS}snowflake_query_history.csv:12: error: a row of 15 fields" in outcome.stderr
    modules = open_store(store).meta["modules"]
    assert modules[f"{LOGS}snowflake_query_history.csv:2"]["runs"] == 3
    strict = CliRunner().invoke(cli, [*command, "--store", str(store), "--strict", "-q"])
    assert strict.exit_code == 1  # a bad row is an error


def test_cli_reads_a_log_from_standard_input(tmp_path):
    text = (REPO / LOGS / "generic.jsonl").read_text().splitlines()[0] + "\n"
    command = ["harvest", "--query-log", "-", "--log-format", "jsonl", "--store", str(tmp_path / "g.lin"), "-q"]
    outcome = CliRunner().invoke(cli, command, input=text)
    assert outcome.exit_code == 0, outcome.output
    assert "read 1 query log rows" in outcome.stdout
    walked = CliRunner().invoke(cli, ["up", "dwh.fact_sales", "--store", str(tmp_path / "g.lin"), "--format", "json"])
    assert '"source": "stg.sales"' in walked.stdout
    assert open_store(tmp_path / "g.lin").find("stdin:1") is not None  # the statement, named after its row


def test_cli_a_log_with_no_completed_query_harvests_nothing(tmp_path):
    log = tmp_path / "failed.jsonl"
    log.write_text(json.dumps({"sql": "INSERT INTO a SELECT * FROM b", "status": "failed"}) + "\n")
    command = ["harvest", "--query-log", str(log), "--log-format", "jsonl", "--store", str(tmp_path / "g.lin")]
    outcome = CliRunner().invoke(cli, command)
    assert outcome.exit_code == 2
    assert "no query that completed in" in outcome.output
    usage = CliRunner().invoke(cli, ["harvest", "--query-log", str(log), "--store", str(tmp_path / "g.lin")])
    assert usage.exit_code == 2 and "--query-log and --log-format go together" in usage.output


def test_the_public_api_harvests_a_log_and_refuses_an_unknown_format():
    result = lineage_cli.harvest(query_logs=[REPO / LOGS / "redshift_sys_query_history.csv"], log_format="redshift")
    assert result.lineage_statements == 1
    with pytest.raises(InputError, match="unknown query log format 'oracle'"):
        lineage_cli.harvest(query_logs=[REPO / LOGS / "generic.jsonl"], log_format="oracle")


def test_ddl_in_a_log_is_learned_under_its_rows_defaults_and_issues_point_at_the_row(tmp_path):
    rows = [
        {"sql": "CREATE TABLE orders (id INT, amount INT)", "default_database": "shop", "default_schema": "sales"},
        {
            "sql": "INSERT INTO sales.orders_copy\nSELECT * FROM orders",
            "default_database": "shop",
            "default_schema": "sales",
        },
        {"sql": "INSERT INTO x SELECT a\nFROM y WHERE", "default_schema": "s"},
    ]
    log = tmp_path / "ddl.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = harvest(query_logs=[str(log)], log_format="jsonl", dialect="ansi")
    assert {edge for edge in column_edges(result.graph) if "orders_copy" in edge} == {
        "shop.sales.orders.id -> shop.sales.orders_copy.id PROJECTION/IDENTITY",
        "shop.sales.orders.amount -> shop.sales.orders_copy.amount PROJECTION/IDENTITY",
    }
    errors = [issue for issue in result.issues if issue.level == "error"]
    assert [(issue.line, issue.col) for issue in errors] == [(3, None)]
    assert errors[0].message.endswith("(line 2 of the query)")


def test_a_querys_runs_draw_its_edges_as_a_manifests_frequency_does(tmp_path):
    store = tmp_path / "graph.lin"
    command = ["harvest", "--query-log", LOGS + "snowflake_query_history.csv", "--log-format", "snowflake", "-q"]
    assert CliRunner().invoke(cli, [*command, "--store", str(store)]).exit_code == 0
    down = ["down", "analytics.raw.orders", "--show-transformations", "--format", "dot", "--store", str(store)]
    dot = CliRunner().invoke(cli, down).stdout
    daily = f'"analytics.raw.orders" -> "{LOGS}snowflake_query_history.csv:2" [style="dashed"]'  # three daily runs
    once = f'"analytics.staging.orders_clean" -> "{LOGS}snowflake_query_history.csv:10";'  # one run: solid
    assert daily in dot and once in dot
    assert '[label="daily", style="dashed"]' in dot and '[label="once"]' in dot  # the legend


def test_a_json_lines_log_read_in_stretches_by_two_processes_is_read_as_one_reader_reads_it(tmp_path, monkeypatch):
    """Stretches of whole lines: their statements merged in the log's order, lines, runs and bad rows as one."""
    lines = (REPO / LOGS / "generic.jsonl").read_text().splitlines()
    log = tmp_path / "big.jsonl"
    log.write_text("\n".join(lines * 40) + "\n")
    options = HarvestOptions("hive")

    def read(jobs: int):
        plan = plan_harvest((), options)
        return add_query_logs(plan, [str(log)], "jsonl", options, jobs=jobs), plan

    alone, one = read(1)
    monkeypatch.setattr(collect, "STRETCH", 1000)  # ~20 stretches of the 20 KB log
    together, two = read(2)
    assert together == alone
    assert (alone.rows, alone.failed, alone.bad, alone.distinct) == (200, 40, 120, 3)
    assert two.units == one.units and two.issues == one.issues and two.runs == one.runs
    assert [issue.line for issue in two.issues][:4] == [6, 7, 8, 14]  # lines of the whole log
    assert two.runs[Provenance(str(log), 1)].count == 80


def test_a_query_longer_than_csvs_default_field_limit_is_read_and_the_limit_left_as_it_was(tmp_path):
    columns = ", ".join(f"s.c{i}" for i in range(12_000))  # 100,000 characters and more
    log = tmp_path / "long.csv"
    log.write_text(f'QUERY_TEXT,DATABASE_NAME,SCHEMA_NAME\n"INSERT INTO t SELECT {columns} FROM s",DB,SC\n')
    before = csv.field_size_limit()
    result = harvest(query_logs=[str(log)], log_format="snowflake", columns=False)
    assert table_edges(result.graph) == {"db.sc.s -> db.sc.t @2"}
    assert csv.field_size_limit() == before


def test_a_csv_whose_header_names_no_query_text_is_one_error_not_one_per_row(tmp_path):
    log = tmp_path / "wrong.csv"
    log.write_text("query_id,start_time\n1,2024-05-01\n2,2024-05-02\n")
    plan = plan_harvest((), HarvestOptions())
    found = add_query_logs(plan, [str(log)], "redshift", HarvestOptions())
    assert [str(issue) for issue in plan.issues] == [
        f"{log}:1: error: the header names no QUERYTXT or QUERY_TEXT or TEXT column: no row holds a query"
    ]
    assert (found.rows, found.bad) == (0, 1)


def test_a_querys_users_are_its_first_five_and_a_sql_that_is_no_text_is_a_bad_row(tmp_path):
    rows = [{"sql": "INSERT INTO a SELECT x FROM b", "user": f"u{i % 7}", "time": i} for i in range(20)]
    log = tmp_path / "users.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in [*rows, {"sql": 5}]))
    plan = plan_harvest((), HarvestOptions())
    found = add_query_logs(plan, [str(log)], "jsonl", HarvestOptions(), jobs=1)
    (runs,) = plan.runs.values()
    assert (runs.count, runs.users, runs.first, runs.last) == (20, ["u0", "u1", "u2", "u3", "u4"], 0.0, 19.0)
    assert [str(issue) for issue in plan.issues] == [f'{log}:21: error: no "sql" in this row']
    assert found.bad == 1


def test_snowflakes_history_as_json_lines_gives_what_its_csv_gives(tmp_path):
    with (REPO / LOGS / "snowflake_query_history.csv").open(newline="") as source:
        rows = [row for row in csv.DictReader(source) if None not in row]  # the bad row aside
    log = tmp_path / "history.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in rows))  # upper-case keys, as Snowflake writes them
    as_json = harvest(query_logs=[str(log)], log_format="snowflake")
    as_csv = harvested("snowflake_query_history.csv", "snowflake")
    assert column_edges(as_json.graph) == column_edges(as_csv.graph)
    assert {edge.split(" @")[0] for edge in table_edges(as_json.graph)} == {
        edge.split(" @")[0] for edge in table_edges(as_csv.graph)
    }


def test_postgres_extended_protocol_durations_and_a_run_logged_before_and_after(tmp_path):
    def row(session: str, line: int, message: str, severity: str = "LOG") -> list[str]:
        fields = ["2024-05-01 10:00:00 UTC", "etl", "shop", "1", "h", session, str(line), "", "", "", "0", severity]
        return [*fields, "00000", message, "", "", "", "", "", "", "", "", "psql"]

    rows = [
        row("s1", 1, "execute <unnamed>: INSERT INTO a (x) SELECT b.x FROM b WHERE b.y = $1"),
        row(
            "s1",
            2,
            "duration: 3.1 ms  plan:\nQuery Text: INSERT INTO a (x) SELECT b.x FROM b WHERE b.y = $1\n"
            "Insert on a  (cost=0.00..1.00 rows=1 width=4)",
        ),  # fmt: skip
        row("s2", 1, "duration: 10.2 ms  statement: INSERT INTO c (x) SELECT d.x FROM d"),
        row("s2", 2, "statement: INSERT INTO e (x) SELECT f.x FROM f"),
        row("s2", 3, 'relation "f" does not exist', "ERROR"),
    ]
    log = tmp_path / "postgresql.csv"
    with log.open("w", newline="") as out:
        csv.writer(out).writerows(rows)
    plan = plan_harvest((), HarvestOptions())
    found = add_query_logs(plan, [str(log)], "postgres", HarvestOptions())
    assert (found.rows, found.failed, found.distinct) == (3, 1, 2)  # one run of a, one of c; e failed
    assert [runs.count for runs in plan.runs.values()] == [1, 1]
    result = harvest(query_logs=[str(log)], log_format="postgres")
    # the plan's row spans three lines: the next row is on line 5
    assert table_edges(result.graph) == {"shop.public.b -> shop.public.a @1", "shop.public.d -> shop.public.c @5"}


def test_no_log_databases_names_tables_as_sql_files_do(tmp_path):
    store = tmp_path / "graph.lin"
    command = ["harvest", "--query-log", LOGS + "snowflake_query_history.csv", "--log-format", "snowflake", "-q"]
    assert CliRunner().invoke(cli, [*command, "--no-log-databases", "--store", str(store)]).exit_code == 0
    opened = open_store(store)
    assert opened.find("staging.orders_clean") is not None and opened.find("public.events_copy") is not None
    assert opened.find("analytics.staging.orders_clean") is None
    result = harvested("snowflake_query_history.csv", "snowflake", log_databases=False)
    assert "raw.orders -> staging.orders_clean @2" in table_edges(result.graph)
