"""``lineage export --format openlineage`` and ``lineage import --format openlineage``.

Every export is checked by the shared checker against the vendored OpenLineage JSON schema and
its facet schemas; export -> import -> export must give the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.harvest.batch import harvest
from lineage_cli.model import EdgeType, NodeKind, Subtype
from lineage_cli.store.arrays import from_store, to_graph
from lineage_cli.store.reader import open_store
from lineage_cli.store.writer import write_store
from tests.conftest import REPO, assert_valid_format
from tests.store.storeview import read_store

COLUMNS = REPO / "fixtures" / "sql" / "columns"
HIVE = ("--namespace", "hive")  # the namespace of the foreign events below, whose datasets are named without it


def assert_valid_openlineage(path: Path) -> None:
    assert_valid_format("openlineage", path)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory, warehouse_store: Path) -> dict[str, Path]:
    """The warehouse, the oozie flow (modules, workflows, declared and parameterized lineage), the column
    fixtures (masking, struct fields, multi-part names) and the dbt project, each harvested into a store."""
    folder = tmp_path_factory.mktemp("openlineage")
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        for name, source in (
            ("oozie", ["--manifest", "fixtures/sql/oozie/manifest.yaml"]),
            ("dbt", ["--dbt", "fixtures/dbt"]),
        ):
            outcome = runner.invoke(
                cli, ["harvest", *source, "--store", str(folder / f"{name}.lin"), "-q", "--no-cache"]
            )
            assert outcome.exit_code == 0, outcome.output
    columns = folder / "columns.lin"
    write_store(harvest([COLUMNS]).graph, columns, {"default_schema": None})
    return {"warehouse": warehouse_store, "oozie": folder / "oozie.lin", "columns": columns, "dbt": folder / "dbt.lin"}


def export(store: Path, out: Path, *options: str) -> list[dict]:
    outcome = CliRunner().invoke(cli, ["export", "--store", str(store), "-o", str(out), *options])
    assert outcome.exit_code == 0, outcome.output
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def event_of(events: list[dict], statement_suffix: str) -> dict:
    (event,) = [e for e in events if e["run"]["facets"]["lineage_statement"]["name"].endswith(statement_suffix)]
    return event


def output_named(event: dict, name: str) -> dict:
    (dataset,) = [d for d in event["outputs"] if d["name"] == name]
    return dataset


@pytest.mark.parametrize("name", ["warehouse", "oozie", "columns", "dbt"])
def test_export_is_valid_openlineage(stores, tmp_path, name) -> None:
    out = tmp_path / "events.json"
    events = export(stores[name], out, "--namespace", "hive://cluster")
    assert_valid_openlineage(out)
    view = read_store(stores[name])
    transformations = sorted(n for n, kind in view.kinds.items() if kind is NodeKind.TRANSFORMATION)
    assert [e["run"]["facets"]["lineage_statement"]["name"] for e in events] == transformations
    assert {e["eventType"] for e in events} == {"COMPLETE"}
    assert len({e["run"]["runId"] for e in events}) == len(events)


def test_output_is_reproducible_and_event_time_sets_time_and_run_ids(stores, tmp_path) -> None:
    first = export(stores["warehouse"], tmp_path / "a.json")
    export(stores["warehouse"], tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert {e["eventTime"] for e in first} == {"1970-01-01T00:00:00Z"}
    later = export(stores["warehouse"], tmp_path / "c.json", "--event-time", "2024-01-31T06:00:00Z")
    assert {e["eventTime"] for e in later} == {"2024-01-31T06:00:00+00:00"}
    assert not {e["run"]["runId"] for e in first} & {e["run"]["runId"] for e in later}


@pytest.mark.parametrize("value", ["yesterday", "2024-01-31T06:00:00"])
def test_bad_event_time_exits_2_with_a_message(stores, value) -> None:
    outcome = CliRunner().invoke(cli, ["export", "--store", str(stores["warehouse"]), "--event-time", value])
    assert outcome.exit_code == 2 and "--event-time" in outcome.output and "Traceback" not in outcome.output


def test_jobs_are_named_after_module_with_the_workflow_as_parent_else_file_line(stores, tmp_path) -> None:
    events = export(stores["oozie"], tmp_path / "e.json", "--job-namespace", "oozie")
    event = event_of(events, "sql/dwh_sales.sql:17#2")
    assert (event["job"]["namespace"], event["job"]["name"]) == ("oozie", "wf_sales/build_sales")
    parent = event["run"]["facets"]["parent"]
    assert parent["job"] == {"namespace": "oozie", "name": "wf_sales"}
    assert parent["run"]["runId"] == event_of(events, "sql/dwh_sales.sql:7")["run"]["facets"]["parent"]["run"]["runId"]
    warehouse = export(stores["warehouse"], tmp_path / "w.json")
    plain = event_of(warehouse, "mart/sales_daily.sql:4")
    assert plain["job"]["name"].endswith("mart/sales_daily.sql:4") and "parent" not in plain["run"]["facets"]


def test_column_lineage_is_direct_for_projections_and_indirect_for_predicates(stores, tmp_path) -> None:
    event = event_of(export(stores["warehouse"], tmp_path / "e.json"), "mart/sales_daily.sql:4")
    assert [d["name"] for d in event["inputs"]] == [
        "dwh.dim_date",
        "dwh.dim_store",
        "dwh.fct_sales",
        "dwh.fct_web_session",
    ]
    daily = output_named(event, "mart.sales_daily")
    lineage = daily["facets"]["columnLineage"]
    # the description is the SQL expression the statement writes the column with
    aggregation = [{"type": "DIRECT", "subtype": "AGGREGATION", "masking": False, "description": "SUM(u.revenue_usd)"}]
    assert lineage["fields"]["revenue_usd"]["inputFields"][0] == {
        "namespace": "default",
        "name": "dwh.fct_sales",
        "field": "net_amount_usd",
        "transformations": aggregation,
    }
    gates = {(d["name"], d["field"]): [t["subtype"] for t in d["transformations"]] for d in lineage["dataset"]}
    assert gates[("dwh.fct_sales", "dt")] == ["FILTER"]
    assert gates[("dwh.fct_sales", "store_sk")] == ["JOIN", "GROUP_BY"]
    assert {t["type"] for d in lineage["dataset"] for t in d["transformations"]} == {"INDIRECT"}
    schema = [f["name"] for f in daily["facets"]["schema"]["fields"]]
    assert "revenue_usd" in schema and schema == sorted(schema)


def test_conditions_and_windows_that_shape_a_field_are_its_indirect_inputs(stores, tmp_path) -> None:
    events = export(stores["columns"], tmp_path / "e.json")
    assert_valid_openlineage(tmp_path / "e.json")

    def inputs(table: str, column: str) -> dict[str, list[dict]]:
        (found,) = [
            d["facets"]["columnLineage"]["fields"][column]["inputFields"]
            for e in events
            for d in e["outputs"]
            if d["name"] == table and column in d["facets"].get("columnLineage", {}).get("fields", {})
        ]
        return {reference["field"]: reference["transformations"] for reference in found}

    # IF(o.total >= 50, 0, o.shipping_fee) AS shipping
    assert inputs("shop.order_summary", "shipping") == {
        "shipping_fee": [
            {
                "type": "DIRECT",
                "subtype": "TRANSFORMATION",
                "masking": False,
                "description": "IF(o.total >= 50, 0, o.shipping_fee)",
            }
        ],
        "total": [{"type": "INDIRECT", "subtype": "CONDITIONAL"}],
    }
    # SUM(t.amount) OVER (PARTITION BY t.account_id ORDER BY t.txn_date) AS running_balance
    window = [{"type": "INDIRECT", "subtype": "WINDOW"}]
    assert inputs("mart.balance_history", "running_balance") == {
        "account_id": window,
        "amount": [
            {
                "type": "DIRECT",
                "subtype": "AGGREGATION",
                "masking": False,
                "description": "SUM(t.amount) OVER (PARTITION BY t.account_id ORDER BY t.txn_date)",
            }
        ],
        "txn_date": window,
    }


def test_masking_subtypes_are_the_base_subtype_with_masking(stores, tmp_path) -> None:
    events = export(stores["columns"], tmp_path / "e.json")
    steps = [
        step
        for event in events
        for dataset in event["outputs"]
        for field in dataset["facets"].get("columnLineage", {}).get("fields", {}).values()
        for reference in field["inputFields"]
        for step in reference["transformations"]
    ]
    masked = {step["subtype"] for step in steps if step.get("masking")}
    assert masked == {"TRANSFORMATION", "AGGREGATION"}


def test_declared_edges_views_and_parameterized_datasets_are_marked(stores, tmp_path) -> None:
    events = export(stores["oozie"], tmp_path / "e.json")
    declared = event_of(events, "manifest.yaml:45")  # a step without SQL: its declared lineage
    assert declared["outputs"][0]["outputFacets"]["lineage_edge"]["subtypes"] == ["DECLARED"]
    orders = event_of(events, "sql/ods_orders.sql:5")
    parameterized = [d for d in orders["inputs"] if d["name"] == "#src_schema#.t_orders"]
    assert parameterized[0]["facets"]["datasetType"] == {
        **parameterized[0]["facets"]["datasetType"],
        "datasetType": "TABLE",
        "subType": "PARAMETERIZED",
    }
    views = {
        d["name"]
        for e in export(stores["warehouse"], tmp_path / "w.json")
        for d in e["outputs"]
        if d["facets"]["datasetType"]["datasetType"] == "VIEW"
    }
    assert "rpt.v_sales_daily" in views


@pytest.mark.parametrize("name", ["warehouse", "oozie", "columns", "dbt"])
def test_export_import_export_is_a_fixed_point(stores, tmp_path, name) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    export(stores[name], first, "--namespace", "hive://cluster")
    copy = tmp_path / "imported.lin"
    outcome = CliRunner().invoke(cli, ["import", str(first), "--format", "openlineage", "--store", str(copy)])
    assert outcome.exit_code == 0 and "(0 skipped)" in outcome.output, outcome.output
    export(copy, second, "--namespace", "hive://cluster")
    assert second.read_bytes() == first.read_bytes()


def test_import_rebuilds_the_harvested_graph(stores, tmp_path) -> None:
    """The warehouse has no edge OpenLineage cannot carry: its import is the harvested graph itself."""
    export(stores["warehouse"], tmp_path / "e.json")
    copy = tmp_path / "imported.lin"
    CliRunner().invoke(cli, ["import", str(tmp_path / "e.json"), "--format", "openlineage", "--store", str(copy)])
    original, imported = read_store(stores["warehouse"]), read_store(copy)
    assert imported.kinds == original.kinds
    assert imported.containers == original.containers
    assert sorted(imported.edges) == sorted(original.edges)
    # a column's expression travels as its projections' description: a column with none (a literal) loses it
    harvested, back = (to_graph(from_store(open_store(path))) for path in (stores["warehouse"], copy))
    projected = {(statement, target) for _, target, kind, statement in harvested.edges if kind is EdgeType.PROJECTION}
    assert back.expressions == {key: text for key, text in harvested.expressions.items() if key in projected}
    assert len(back.expressions) > 100


FOREIGN = [
    {
        "eventType": "START",
        "eventTime": "2024-01-31T06:00:00Z",
        "producer": "https://example.com/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "0190c2a4-6b5e-7d4b-9a33-3f0b8a1d2e01"},
        "job": {"namespace": "spark", "name": "nightly.load_orders"},
        "inputs": [{"namespace": "hive", "name": "stg.orders"}],
        "outputs": [{"namespace": "hive", "name": "ods.orders"}],
    },
    {
        "eventType": "COMPLETE",
        "eventTime": "2024-01-31T06:05:00Z",
        "producer": "https://example.com/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "0190c2a4-6b5e-7d4b-9a33-3f0b8a1d2e01"},
        "job": {"namespace": "spark", "name": "nightly.load_orders"},
        "inputs": [{"namespace": "hive", "name": "stg.orders", "facets": {"schema": {"fields": [{"name": "id"}]}}}],
        "outputs": [
            {
                "namespace": "hive",
                "name": "ods.orders",
                "facets": {
                    "columnLineage": {
                        "fields": {
                            "order_id": {"inputFields": [{"namespace": "hive", "name": "stg.orders", "field": "id"}]},
                            "total": {
                                "inputFields": [
                                    {
                                        "namespace": "hive",
                                        "name": "stg.orders",
                                        "field": "amount",
                                        "transformations": [
                                            {"type": "DIRECT", "subtype": "AGGREGATION", "masking": True},
                                            {"type": "INDIRECT", "subtype": "FILTER"},
                                        ],
                                    }
                                ]
                            },
                        }
                    }
                },
            }
        ],
    },
]


def test_import_reads_another_producers_events_one_transformation_per_run(tmp_path) -> None:
    events = tmp_path / "spark.jsonl"
    bad = ['{"eventType": "COMPLETE"}', "not json", json.dumps({**FOREIGN[0], "outputs": {"name": "x"}})]
    events.write_text("\n".join([*map(json.dumps, FOREIGN), *bad]) + "\n")
    store = tmp_path / "g.lin"
    outcome = CliRunner().invoke(cli, ["import", str(events), "--format", "openlineage", *HIVE, "--store", str(store)])
    assert outcome.exit_code == 0
    assert "imported 2 of 5 rows (3 skipped)" in outcome.output
    assert f"{events}:3: error: job is missing" in outcome.output
    assert f"{events}:4: error: not JSON" in outcome.output
    assert f"{events}:5: error: outputs is not an array" in outcome.output
    view = read_store(store)
    step = f"{events}:1"  # the run's first event names it; its COMPLETE event adds to it
    assert [n for n, kind in view.kinds.items() if kind is NodeKind.TRANSFORMATION] == [step]
    edges = {(s, t, kind.name, flags) for s, t, kind, flags in view.edges}
    assert ("stg.orders.id", "ods.orders.order_id", "PROJECTION", 0) in edges
    assert ("stg.orders.amount", "ods.orders.total", "PROJECTION", Subtype.AGGREGATION_MASKING.bit) in edges
    assert ("stg.orders.amount", "ods.orders", "PREDICATE", Subtype.FILTER.bit) in edges
    assert ("stg.orders", step, "READ", 0) in edges and (step, "ods.orders", "WRITE", 0) in edges


def test_import_reads_a_json_array_document_and_names_the_bad_event(tmp_path) -> None:
    events = tmp_path / "events.json"
    events.write_text(json.dumps([*FOREIGN, {"job": {"name": "x"}, "inputs": [{"name": "a"}, 3]}], indent=2))
    store = tmp_path / "g.lin"
    outcome = CliRunner().invoke(cli, ["import", str(events), "--format", "openlineage", *HIVE, "--store", str(store)])
    assert outcome.exit_code == 0, outcome.output
    assert "imported 2 of 3 rows (1 skipped)" in outcome.output
    assert f"{events}:1: error: event 3: a dataset is not a JSON object" in outcome.output
    assert read_store(store).kinds[f"{events}:1"] is NodeKind.TRANSFORMATION


def test_export_of_one_lineage_keeps_exactly_the_statements_it_walks_through(stores, tmp_path) -> None:
    from tests.walk.test_walk import ancestors, golden_edges

    upstream = ancestors("rpt.v_sales_weekly", golden_edges())
    written = {t for _, t in golden_edges() if t in upstream}  # every upstream dataset a statement writes
    for plan in ("transformations", "tables"):
        events = export(stores["warehouse"], tmp_path / f"{plan}.json", "rpt.v_sales_weekly", "--direction", "up",
                        "--walkplan", plan)  # fmt: skip
        assert {d["name"] for e in events for d in e["outputs"]} == written
        assert {d["name"] for e in events for d in e["inputs"]} <= upstream
        assert_valid_openlineage(tmp_path / f"{plan}.json")
    everything = export(stores["warehouse"], tmp_path / "all.json")
    assert len(events) < len(everything)
    outcome = CliRunner().invoke(cli, ["export", "--store", str(stores["warehouse"]), "nosuch.table"])
    assert outcome.exit_code == 1 and "no table, view or column" in outcome.output


MALFORMED = [
    # (what is odd, the event, the message)
    ("a huge line", {"lineage_statement": {"name": "s", "file": "f.sql", "line": 10**11}}, "line 100000000000 is no"),
    ("a negative line", {"lineage_statement": {"name": "s", "file": "f.sql", "line": -3}}, "line -3 is no line number"),
    ("a statement name past the limit", {"lineage_statement": {"name": "s" * 5000}}, "name is longer than 4,096"),
    ("a file past the limit", {"lineage_statement": {"name": "s", "file": "f" * 5000, "line": 1}}, "file is longer"),
]


@pytest.mark.parametrize(("case", "facets", "message"), MALFORMED, ids=[case for case, _, _ in MALFORMED])
def test_import_names_what_is_wrong_with_a_statement_facet(tmp_path, case, facets, message) -> None:
    event = {**FOREIGN[0], "run": {"runId": "r", "facets": facets}}
    assert_import_refuses(tmp_path, event, message)


def with_output(facets: dict) -> dict:
    return {**FOREIGN[0], "outputs": [{"name": "ods.orders", "facets": facets}]}


def lineage_of(fields: dict) -> dict:
    return with_output({"columnLineage": {"fields": fields}})


def field_from(**transformation: object) -> dict:
    return {"inputFields": [{"name": "stg.orders", "field": "id", "transformations": [transformation]}]}


EDGE_SUBTYPES = {"lineage_edge": {"subtypes": [["x"]]}}
UNUSABLE = [
    ("a list as subtype", lineage_of({"id": field_from(type="DIRECT", subtype=["x"])}), "subtype ['x'] is not a"),
    ("a huge transformation", lineage_of({"id": field_from(type="x" * 9000)}), "transformation {'type': 'xxx"),
    ("a field past the limit", lineage_of({"f" * 5000: field_from(type="DIRECT")}), "field is longer than 4,096"),
    ("a dataset past the limit", {**FOREIGN[0], "inputs": [{"name": "t" * 5000}]}, "name is longer than 4,096"),
    ("a list as edge subtype", {**FOREIGN[0], "outputs": [{"name": "o", "outputFacets": EDGE_SUBTYPES}]}, "['x']"),
]


@pytest.mark.parametrize(("case", "event", "message"), UNUSABLE, ids=[case for case, _, _ in UNUSABLE])
def test_import_refuses_an_unusable_event_in_plain_words(tmp_path, case, event, message) -> None:
    assert_import_refuses(tmp_path, event, message)


def test_a_dataset_type_of_another_shape_is_a_table(tmp_path) -> None:
    events = tmp_path / "e.jsonl"
    events.write_text(json.dumps(with_output({"datasetType": {"datasetType": ["VIEW"]}})) + "\n")
    outcome = CliRunner().invoke(
        cli, ["import", str(events), "--format", "openlineage", *HIVE, "--store", str(tmp_path / "g")]
    )
    assert outcome.exit_code == 0 and "imported 1 of 1 rows" in outcome.output
    assert read_store(tmp_path / "g").kinds["ods.orders"] is NodeKind.TABLE


def assert_import_refuses(tmp_path: Path, event: dict, message: str) -> None:
    events = tmp_path / "e.jsonl"
    events.write_text(json.dumps(event) + "\n" + json.dumps(FOREIGN[1]) + "\n")
    store = tmp_path / "g.lin"
    outcome = CliRunner().invoke(cli, ["import", str(events), "--format", "openlineage", *HIVE, "--store", str(store)])
    assert outcome.exit_code == 0, outcome.output
    assert "imported 1 of 2 rows (1 skipped)" in outcome.output
    error = next(line for line in outcome.output.splitlines() if line.startswith(f"{events}:1: error: "))
    assert message in error and len(error) < 300
    assert "ods.orders.total" in read_store(store).kinds  # the good event is imported


def test_an_event_warns_of_a_field_new_to_a_dataset_the_store_holds(tmp_path) -> None:
    events, store = tmp_path / "e.jsonl", tmp_path / "g.lin"
    events.write_text("\n".join(map(json.dumps, FOREIGN)) + "\n")
    first = CliRunner().invoke(cli, ["import", str(events), "--format", "openlineage", *HIVE, "--store", str(store)])
    assert first.exit_code == 0
    schema = {"schema": {"fields": [{"name": "id"}, {"name": "added"}]}}
    added = {**FOREIGN[0], "inputs": [{"name": "stg.orders", "facets": schema}]}
    later = tmp_path / "later.jsonl"
    later.write_text(json.dumps(FOREIGN[0]) + "\n" + json.dumps(added) + "\n")
    outcome = CliRunner().invoke(cli, ["import", str(later), "--format", "openlineage", *HIVE, "--store", str(store)])
    warning = f"{later}:2: warning: column stg.orders.added is not in the store, though its table stg.orders is"
    assert outcome.exit_code == 0 and warning in outcome.output and "stg.orders.id " not in outcome.output


def test_a_statement_read_approximately_says_so_and_reads_back_so(stores, tmp_path) -> None:
    """A statement that did not parse claims no exactness: its run facet says ``approximate``, and an import
    flags its statement again."""
    from lineage_cli.model import NodeFlag

    events = export(stores["columns"], tmp_path / "e.json")
    facets = [e["run"]["facets"]["lineage_statement"] for e in events]
    flagged = {f["name"] for f in facets if f.get("approximate")}
    assert any(name.endswith("columns/approximate.sql:6") for name in flagged)  # its first case: a broken insert
    assert all(f.get("approximate") in (None, True) for f in facets)
    copy = tmp_path / "imported.lin"
    outcome = CliRunner().invoke(
        cli, ["import", str(tmp_path / "e.json"), "--format", "openlineage", "--store", str(copy)]
    )
    assert outcome.exit_code == 0, outcome.output
    from lineage_cli.store.reader import open_store

    store = open_store(copy)
    names, flags = store.names(), store.array("node_flags")
    assert {names[n] for n in range(store.node_count) if flags[n] & NodeFlag.APPROXIMATE.bit} == flagged


FILES_SQL = """CREATE TABLE stg.orders (id INT, amount DOUBLE);
LOAD DATA INPATH 's3a://lake/raw/orders/' INTO TABLE stg.orders;
INSERT OVERWRITE DIRECTORY 'hdfs://nn:8020/exports/orders' SELECT id, amount FROM stg.orders;
INSERT INTO ods.orders SELECT id, amount FROM stg.orders;
INSERT INTO dwh.orders SELECT id, amount FROM ods.orders;
"""


@pytest.fixture
def files_store(tmp_path: Path) -> Path:
    """Tables and file locations: an object store, HDFS and a local path."""
    (tmp_path / "files.sql").write_text(FILES_SQL)
    (tmp_path / "local.sql").write_text("-- dialect: postgres\nCOPY stg.orders FROM '/data/in/orders.csv';\n")
    store = tmp_path / "files.lin"
    write_store(harvest([tmp_path], dialect="hive").graph, store, {})
    return store


def addresses(events: list[dict]) -> set[tuple[str, str, str]]:
    return {
        (d["namespace"], d["name"], d["facets"]["datasetType"]["datasetType"])
        for e in events
        for d in (*e["inputs"], *e["outputs"])
    }


def test_files_export_under_scheme_and_authority_and_tables_under_their_schemas_namespace(files_store, tmp_path):
    spaces = ("--namespace", "hive://c", "--namespace", "dwh=postgres://db:5432")
    first = tmp_path / "first.json"
    events = export(files_store, first, *spaces)
    assert_valid_openlineage(first)
    assert addresses(events) == {
        ("s3a://lake", "raw/orders/", "FILE"),
        ("hdfs://nn:8020", "/exports/orders", "FILE"),
        ("file", "/data/in/orders.csv", "FILE"),
        ("hive://c", "stg.orders", "TABLE"),
        ("hive://c", "ods.orders", "TABLE"),
        ("postgres://db:5432", "dwh.orders", "TABLE"),
    }
    lineage = [d["facets"]["columnLineage"] for e in events for d in e["outputs"] if d["name"] == "dwh.orders"]
    assert {f["namespace"] for f in lineage[0]["fields"]["id"]["inputFields"]} == {"hive://c"}
    # Imported with hive://c as the plain namespace, each node is named as harvested but dwh.orders, which keeps
    # its namespace; exported again with the same options, the events are the same
    copy = tmp_path / "copy.lin"
    outcome = CliRunner().invoke(
        cli, ["import", str(first), "--format", "openlineage", "--namespace", "hive://c", "--store", str(copy)]
    )
    assert outcome.exit_code == 0, outcome.output
    kinds = read_store(copy).kinds
    datasets = {name for name, kind in kinds.items() if kind.is_dataset}
    assert datasets == {"s3a://lake/raw/orders/", "hdfs://nn:8020/exports/orders", "/data/in/orders.csv",
                        "stg.orders", "ods.orders", "postgres://db:5432/dwh.orders"}  # fmt: skip
    export(copy, tmp_path / "second.json", *spaces)
    assert (tmp_path / "second.json").read_bytes() == first.read_bytes()


def test_import_keeps_namespaces_so_same_names_of_two_sources_do_not_merge(tmp_path) -> None:
    def event(namespace: str, run: str) -> dict:
        return {**FOREIGN[0], "run": {"runId": run}, "inputs": [{"namespace": namespace, "name": "shop.orders"}],
                "outputs": [{"namespace": "bigquery", "name": "proj.ds.orders"}]}  # fmt: skip

    events = tmp_path / "two.jsonl"
    events.write_text(json.dumps(event("postgres://a:5432", "r1")) + "\n" + json.dumps(event("mysql://b", "r2")) + "\n")
    for plain, expected in (
        ((), {"postgres://a:5432/shop.orders", "mysql://b/shop.orders", "bigquery:proj.ds.orders"}),
        (("--namespace", "postgres://a:5432"), {"shop.orders", "mysql://b/shop.orders", "bigquery:proj.ds.orders"}),
    ):
        store = tmp_path / f"g{len(plain)}.lin"
        outcome = CliRunner().invoke(
            cli, ["import", str(events), "--format", "openlineage", *plain, "--store", str(store)]
        )
        assert outcome.exit_code == 0, outcome.output
        assert {name for name, kind in read_store(store).kinds.items() if kind.is_dataset} == expected
    again = export(tmp_path / "g0.lin", tmp_path / "again.json")
    assert {(n, name) for n, name, _ in addresses(again)} == {
        ("postgres://a:5432", "shop.orders"), ("mysql://b", "shop.orders"), ("bigquery", "proj.ds.orders")
    }  # fmt: skip


def test_a_manifests_namespaces_reach_the_export_and_options_beat_them(tmp_path, monkeypatch) -> None:
    (tmp_path / "load.sql").write_text("INSERT INTO ods.orders SELECT id FROM stg.orders;\n")
    (tmp_path / "flow.yaml").write_text(
        "namespace: hive://cluster\nnamespaces: {ods: 'postgres://ods:5432'}\n"
        "entries:\n  - {workflow: wf, module: load, sql_file: load.sql}\n"
    )
    monkeypatch.chdir(tmp_path)
    outcome = CliRunner().invoke(cli, ["harvest", "--manifest", "flow.yaml", "--store", "g.lin", "-q", "--no-cache"])
    assert outcome.exit_code == 0, outcome.output
    manifest_only = addresses(export(tmp_path / "g.lin", tmp_path / "a.json"))
    assert {(n, name) for n, name, _ in manifest_only} == {("hive://cluster", "stg.orders"),
                                                           ("postgres://ods:5432", "ods.orders")}  # fmt: skip
    overridden = addresses(export(tmp_path / "g.lin", tmp_path / "b.json", "--namespace", "ods=x://y"))
    assert {(n, name) for n, name, _ in overridden} == {("hive://cluster", "stg.orders"), ("x://y", "ods.orders")}
    bad = tmp_path / "bad.yaml"
    bad.write_text("namespaces: [a, b]\nentries:\n  - {workflow: wf, module: load, sql_file: load.sql}\n")
    refused = CliRunner().invoke(cli, ["harvest", "--manifest", "bad.yaml", "--store", "h.lin", "-q"])
    assert refused.exit_code == 2 and "'namespaces' must map schemas to namespaces" in refused.output


def git(folder: Path, *arguments: str) -> str:
    import subprocess

    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *arguments]
    return subprocess.run(command, cwd=folder, check=True, capture_output=True, text=True).stdout.strip()


def test_jobs_say_their_type_and_where_their_sql_is_in_the_repository(tmp_path, monkeypatch) -> None:
    import shutil

    if shutil.which("git") is None:
        from tests.conftest import skip_for_want_of

        skip_for_want_of("git")
    repo = tmp_path / "etl"
    (repo / "sql").mkdir(parents=True)
    (repo / "sql" / "a.sql").write_text("-- load\nINSERT INTO ods.orders SELECT id FROM stg.orders;\n")
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", "https://x-token:s3cret@github.com/acme/etl.git")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "sql")
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.chdir(repo)
    assert CliRunner().invoke(cli, ["harvest", "sql", "--store", "g.lin", "-q", "--no-cache"]).exit_code == 0
    (event,) = export(repo / "g.lin", tmp_path / "e.json")
    assert_valid_openlineage(tmp_path / "e.json")
    facets = event["job"]["facets"]
    assert {k: facets["jobType"][k] for k in ("processingType", "integration", "jobType")} == {
        "processingType": "BATCH", "integration": "lineage", "jobType": "QUERY"}  # fmt: skip
    location = {k: v for k, v in facets["sourceCodeLocation"].items() if not k.startswith("_")}
    assert location == {
        "type": "git",
        "repoUrl": "https://github.com/acme/etl.git",  # without the token
        "path": "sql/a.sql",
        "version": head,
        "url": f"https://github.com/acme/etl/blob/{head}/sql/a.sql#L2",
    }
    (given,) = export(repo / "g.lin", tmp_path / "f.json", "--repo-url", "git@gitlab.com:acme/etl.git")
    assert (
        given["job"]["facets"]["sourceCodeLocation"]["url"] == f"https://gitlab.com/acme/etl/blob/{head}/sql/a.sql#L2"
    )
    monkeypatch.chdir(tmp_path)  # outside the checkout: the file, as a file URI
    (outside,) = export(repo / "g.lin", tmp_path / "g.json")
    assert {k: v for k, v in outside["job"]["facets"]["sourceCodeLocation"].items() if not k.startswith("_")} == {
        "type": "file", "url": f"{(tmp_path / 'sql' / 'a.sql').as_uri()}#L2", "path": str(tmp_path / "sql" / "a.sql")
    }  # fmt: skip


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["export", "--namespace", "=hive://c"], "give NAMESPACE or SCHEMA=NAMESPACE"),
        (["export", "--namespace", "dwh="], "give NAMESPACE or SCHEMA=NAMESPACE"),
        (["import", "edges.csv", "--namespace", "hive://c"], "--namespace is for --format openlineage, not csv"),
    ],
)
def test_namespace_options_that_cannot_be_used_exit_2(stores, tmp_path, monkeypatch, command, message) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "edges.csv").write_text("source,target\na.b,c.d\n")
    outcome = CliRunner().invoke(cli, [*command, "--store", str(stores["oozie"] if command[0] == "export" else "g")])
    assert outcome.exit_code == 2 and message in outcome.output, outcome.output


def test_a_statement_is_located_in_its_repository_or_as_a_file(tmp_path, monkeypatch) -> None:
    from lineage_cli.emit.naming import Repository

    monkeypatch.chdir(tmp_path)
    (tmp_path / "etl").mkdir()
    here = (tmp_path / "etl" / "a.sql").as_uri()
    hosted = Repository("git@github.com:acme/etl.git", "https://github.com/acme/etl", "abc123", tmp_path)
    assert hosted.location("etl/a.sql", 3) == {
        "type": "git",
        "repoUrl": "git@github.com:acme/etl.git",
        "path": "etl/a.sql",
        "version": "abc123",
        "url": "https://github.com/acme/etl/blob/abc123/etl/a.sql#L3",
    }
    local_remote = Repository("/srv/git/etl.git", None, "abc123", tmp_path)  # no web page to link to
    assert local_remote.location("etl/a.sql", 3)["url"] == f"{here}#L3"
    no_remote = Repository(None, None, "abc123", tmp_path / "etl")  # a checkout without an origin
    assert no_remote.location("etl/a.sql", 3) == {
        "type": "file",
        "url": f"{here}#L3",
        "path": str(tmp_path / "etl/a.sql"),
    }
    assert hosted.location("/elsewhere/b.sql", 1) == {"type": "file", "url": "file:///elsewhere/b.sql#L1",
                                                      "path": "/elsewhere/b.sql"}  # fmt: skip
