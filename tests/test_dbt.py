"""dbt projects: the hand-made fixture against its golden files, declared lineage, manifest lookup."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.harvest.batch import harvest
from lineage_cli.harvest.inputs.dbt import DbtError, load_dbt
from tests.conftest import REPO
from tests.storeview import golden, read_store

DBT = REPO / "fixtures" / "dbt"


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory):
    store = tmp_path_factory.mktemp("dbt") / "graph.lin"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        outcome = CliRunner().invoke(cli, ["harvest", "--dbt", "fixtures/dbt", "--store", str(store), "--no-cache"])
    assert outcome.exit_code == 0, outcome.output
    assert outcome.stderr == ""
    return read_store(store)


def test_dbt_datasets(shop) -> None:
    assert shop.datasets() == golden(DBT / "expected_nodes.txt")


def test_dbt_table_edges(shop) -> None:
    assert shop.table_edges() == golden(DBT / "expected_table_edges.txt")


def test_dbt_column_edges(shop) -> None:
    assert shop.column_edges() == golden(DBT / "expected_column_edges.txt")


def test_dbt_transformations_are_the_model_files(shop) -> None:
    assert shop.statements("fixtures/dbt/") == [
        "models/marts/customer_segments.py:1 - warehouse.analytics.customer_segments"
        " <- warehouse.analytics.fct_customer_orders DECLARED",
        "models/marts/fct_customer_orders.sql:1 - warehouse.analytics.fct_customer_orders"
        " <- warehouse.analytics.country_codes, warehouse.analytics.stg_customers, warehouse.analytics.stg_orders",
        "models/marts/rpt_big_spenders.sql:1 - warehouse.analytics.rpt_big_spenders"
        " <- warehouse.analytics.fct_customer_orders",
        "models/staging/stg_customers.sql:1 - warehouse.analytics.stg_customers <- warehouse.raw.customers",
        "models/staging/stg_orders.sql:1 - warehouse.analytics.stg_orders <- warehouse.raw.orders",
    ]


def test_the_manifest_is_found_from_the_project_its_target_or_itself() -> None:
    projects = [load_dbt(path) for path in (DBT, DBT / "target", DBT / "target" / "manifest.json")]
    assert {p.root for p in projects} == {DBT}
    assert all(p.dialect == "postgres" and p.catalog is not None for p in projects)
    with pytest.raises(DbtError):
        load_dbt(REPO / "fixtures" / "sql")


def test_a_dependency_the_compiled_sql_does_not_show_is_a_warning(tmp_path) -> None:
    project = tmp_path / "shop"
    shutil.copytree(DBT, project)
    manifest_path = project / "target" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    fct = manifest["nodes"]["model.shop.fct_customer_orders"]
    fct["depends_on"]["nodes"] = [
        "model.shop.stg_customers",
        "model.shop.int_order_amounts",
        "source.shop.shop.payments",
    ]
    manifest_path.write_text(json.dumps(manifest))
    result = harvest(dbt=load_dbt(project))
    assert [(i.file.rsplit("shop/", 1)[-1], i.line, i.message) for i in result.issues] == [
        (
            "models/marts/fct_customer_orders.sql",
            1,
            "declared source warehouse.raw.payments is not read by its SQL",
        ),
        (
            "models/marts/fct_customer_orders.sql",
            1,
            "its SQL reads warehouse.analytics.country_codes, which is not a declared source",
        ),
    ]


def test_relation_names_follow_the_adapter_dialect(tmp_path) -> None:
    model = {
        "resource_type": "model",
        "name": "Orders",
        "database": "ANALYTICS",
        "schema": "STAGING",
        "relation_name": "ANALYTICS.STAGING.Orders",
        "original_file_path": "models/Orders.sql",
        "config": {"materialized": "table"},
        "compiled_code": "select o.ID from RAW.SHOP.ORDERS o",
        "depends_on": {"nodes": []},
    }
    target = tmp_path / "target"
    target.mkdir()
    document = {"metadata": {"adapter_type": "snowflake"}, "nodes": {"model.x.Orders": model}, "sources": {}}
    (target / "manifest.json").write_text(json.dumps(document))
    project = load_dbt(tmp_path)
    assert project.dialect == "snowflake" and [m.relation for m in project.models] == ["analytics.staging.orders"]
    result = harvest(dbt=project)
    assert ("raw.shop.orders.id", "analytics.staging.orders.id") in {(s, t) for s, t, _, _ in result.graph.edges}


def test_a_project_never_compiled_is_read_from_its_own_files(tmp_path) -> None:
    project = tmp_path / "shop"
    shutil.copytree(DBT, project)
    shutil.rmtree(project / "target")
    store = tmp_path / "graph.lin"
    outcome = CliRunner().invoke(
        cli, ["harvest", "--dbt", str(project), "--dialect", "postgres", "--store", str(store), "--no-cache"]
    )
    assert outcome.exit_code == 0, outcome.output
    # Relations are the model names in the default schema (the target schema is in no project file); the
    # sources come from sources.yml, the seed from seeds/, materializations from config() and dbt_project.yml.
    assert read_store(store).statements(str(project) + "/") == [
        "models/intermediate/int_order_amounts.sql:1 - public.int_order_amounts <- public.stg_orders",
        "models/marts/fct_customer_orders.sql:1 - public.fct_customer_orders"
        " <- public.country_codes, public.int_order_amounts, public.stg_customers",
        "models/marts/rpt_big_spenders.sql:1 - public.rpt_big_spenders <- public.fct_customer_orders",
        "models/staging/stg_customers.sql:1 - public.stg_customers <- warehouse.raw.customers",
        "models/staging/stg_orders.sql:1 - public.stg_orders <- warehouse.raw.orders",
    ]


def test_a_plain_harvest_of_a_dbt_project_points_at_dbt(tmp_path) -> None:
    arguments = ["harvest", str(DBT / "models"), "--store", str(tmp_path / "g.lin"), "--no-cache"]
    outcome = CliRunner().invoke(cli, arguments)
    assert outcome.exit_code == 0, outcome.output
    assert f"note: {DBT} is a dbt project: `lineage harvest --dbt {DBT}`" in " ".join(outcome.stderr.split())


STG_ORDERS = "model.shop.stg_orders"


def _shop_with(tmp_path, manifest_change=None, catalog_change=None):
    """A copy of the fixture project whose manifest (and catalog) JSON went through the changes, indented."""
    project = tmp_path / "shop"
    shutil.copytree(DBT, project)
    for name, change in (("manifest.json", manifest_change), ("catalog.json", catalog_change)):
        path = project / "target" / name
        document = json.loads(path.read_text())
        if change is not None:
            change(document)
        path.write_text(json.dumps(document, indent=2))
    return project


def _line_of(path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"compiled_code": 5}, "compiled_code must be a string, got a number"),
        ({"language": None}, "language must be a string, got null"),
        ({"resource_type": ["model"]}, "resource_type must be a string, got a list"),
        ({"depends_on": "source.shop.shop.orders"}, "depends_on must be an object, got a string"),
        (
            {"depends_on": {"nodes": [["source.shop.shop.orders"]]}},
            "each item of depends_on.nodes must be a string, got a list",
        ),
        ({"config": {"materialized": True}}, "config.materialized must be a string, got a boolean"),
        ({"sources": ["shop.orders"]}, "each item of sources must be a list, got a string"),
    ],
)
def test_a_node_with_a_field_of_the_wrong_type_is_an_error_naming_it(tmp_path, change, problem) -> None:
    project = _shop_with(tmp_path, lambda manifest: manifest["nodes"][STG_ORDERS].update(change))
    loaded = load_dbt(project)
    manifest = project / "target" / "manifest.json"
    assert [(i.file, i.line, i.message) for i in loaded.issues] == [
        (str(manifest), _line_of(manifest, f'"{STG_ORDERS}": {{'), f"dbt node {STG_ORDERS}: {problem}; skipped")
    ]
    assert [m.relation.rsplit(".", 1)[-1] for m in loaded.models] == [
        "customer_segments", "fct_customer_orders", "rpt_big_spenders", "stg_customers",
    ]  # fmt: skip
    result = harvest(dbt=loaded)
    assert [i for i in result.issues if i.level == "error"] == loaded.issues


def test_nodes_that_are_not_an_object_are_an_error_and_the_sources_are_harvested(tmp_path) -> None:
    project = _shop_with(tmp_path, lambda manifest: manifest.update(nodes=list(manifest["nodes"].values())))
    store = tmp_path / "graph.lin"
    outcome = CliRunner().invoke(cli, ["harvest", "--dbt", str(project), "--store", str(store), "--no-cache"])
    assert outcome.exit_code == 0, outcome.output
    manifest = project / "target" / "manifest.json"
    line = _line_of(manifest, '"nodes": [')
    assert outcome.stderr.splitlines() == [
        f"{manifest}:{line}: error: nodes must be an object by unique_id, got a list; skipped"
    ]
    assert {"warehouse.raw.customers table", "warehouse.raw.orders table"} <= set(read_store(store).datasets())


def test_a_catalog_entry_with_columns_of_the_wrong_type_is_an_error_naming_it(tmp_path) -> None:
    seed = "seed.shop.country_codes"
    project = _shop_with(tmp_path, catalog_change=lambda catalog: catalog["nodes"][seed].update(columns="code"))
    loaded = load_dbt(project)
    catalog = project / "target" / "catalog.json"
    assert [(i.file, i.line, i.message) for i in loaded.issues] == [
        (
            str(catalog),
            _line_of(catalog, f'"{seed}": {{'),
            f"catalog node {seed}: columns must be an object, got a string; its columns are not used",
        )
    ]
    assert loaded.catalog is not None and "warehouse.analytics.country_codes" not in loaded.catalog.tables()
    assert "warehouse.raw.orders" in loaded.catalog.tables()
    assert len(loaded.models) == 5
