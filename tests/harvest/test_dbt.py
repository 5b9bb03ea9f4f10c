"""dbt projects: the hand-made fixture against its golden files, declared lineage, manifest lookup."""

from __future__ import annotations

import ast
import json
import re
import shutil

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.harvest.batch import harvest
from lineage_cli.harvest.inputs.dbt import DbtError, load_dbt
from lineage_cli.model import EdgeType
from tests.conftest import REPO
from tests.store.storeview import golden, read_store

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


# -- a project read from its own files: files of the wrong shape, files outside it -------------------------
def _uncompiled_shop(tmp_path, **files: str):
    """A copy of the fixture project without its target/ (so it is read from its files), ``files`` written over
    it: ``{"models/sources.yml": text}``."""
    project = tmp_path / "shop"
    shutil.copytree(DBT, project)
    shutil.rmtree(project / "target")
    for name, text in files.items():
        (project / name).write_text(text)
    return project


def _harvest_files(project, *options: str):
    """``lineage harvest --dbt project``: its exit code, its stderr lines, and the tables its models read."""
    store = project.parent / "graph.lin"
    arguments = ["harvest", "--dbt", str(project), "--dialect", "postgres", "--store", str(store), "--no-cache"]
    outcome = CliRunner().invoke(cli, [*arguments, *options])
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit), outcome.output
    statements = read_store(store).statements(str(project) + "/") if outcome.exit_code == 0 else []
    return outcome.exit_code, outcome.stderr.splitlines(), statements


def _errors(lines: list[str]) -> list[str]:
    return [line for line in lines if ": error: " in line]


SOURCES = """\
version: 2
sources:
  - name: shop
    database: warehouse
    schema: raw
    tables:
      - name: orders
      - name: customers
      - name: payments
"""


@pytest.mark.parametrize(
    ("payments", "line", "problem"),
    [
        ("      - payments\n", 9, "source shop, table 3: expected an object with a name, got a string"),
        ("      - name: [payments]\n", 9, "source shop, table 3: name must be a string, got a list"),
        ("      - name: payments\n        identifier: 7\n", 10,
         "source shop, table payments: identifier must be a string, got a number"),
        ("      - name: payments\n  - raw_shop\n", 10, "source 2: expected an object with a name, got a string"),
        ("      - name: payments\n  - schema: raw\n", 10, "source 2: no name"),
    ],
)  # fmt: skip
def test_a_source_entry_of_the_wrong_type_is_an_error_naming_it_and_the_others_are_read(
    tmp_path, payments, line, problem
) -> None:
    project = _uncompiled_shop(
        tmp_path, **{"models/sources.yml": SOURCES.replace("      - name: payments\n", payments)}
    )
    code, stderr, statements = _harvest_files(project)
    assert code == 0
    assert _errors(stderr) == [f"{project}/models/sources.yml:{line}: error: {problem}; skipped"]
    assert "models/staging/stg_orders.sql:1 - public.stg_orders <- warehouse.raw.orders" in statements


@pytest.mark.parametrize(
    ("sources", "line", "problem"),
    [
        (SOURCES.replace("schema: raw", "schema: [raw]"), 5, "source shop: schema must be a string, got a list"),
        (SOURCES.replace("database: warehouse", "database: {name: warehouse}"), 4,
         "source shop: database must be a string, got an object"),
        (SOURCES.split("\n      - ")[0] + " orders\n", 6, "source shop: tables must be a list, got a string"),
        ("version: 2\nsources:\n  shop:\n    tables: []\n", 3, "sources must be a list, got an object"),
    ],
)  # fmt: skip
def test_a_source_with_a_field_of_the_wrong_type_is_an_error_naming_it_and_its_tables_are_skipped(
    tmp_path, sources, line, problem
) -> None:
    project = _uncompiled_shop(tmp_path, **{"models/sources.yml": sources})
    code, stderr, statements = _harvest_files(project)
    assert code == 0
    assert _errors(stderr) == [f"{project}/models/sources.yml:{line}: error: {problem}; skipped"]
    assert "models/marts/rpt_big_spenders.sql:1 - public.rpt_big_spenders <- public.fct_customer_orders" in statements


@pytest.mark.parametrize(
    ("broken", "where", "problem"),
    [
        ("models:\n  - name: stg_orders\n   description: one space short\n", "3:4", ""),
        ("models:\n  - name: stg\x01orders\n", "2:14", "unacceptable character #x0001"),
        ("models: " + "[" * 2000 + "]" * 2000 + "\n", "1", ""),  # nested too deeply
        ("models:\n  - name: !!int stg_orders\n", "2:11", "not a !!int value"),
        ("models:\n  - docs: {show: !!bool maybe}\n", "2:18", "not a !!bool value"),
    ],
)
def test_a_yml_file_that_is_not_yaml_is_an_error_at_its_line_and_column_and_the_rest_is_read(
    tmp_path, broken, where, problem
) -> None:
    project = _uncompiled_shop(tmp_path, **{"models/staging/schema.yml": broken})
    code, stderr, statements = _harvest_files(project)
    assert code == 0
    [error] = _errors(stderr)
    file = re.escape(f"{project}/models/staging/schema.yml")
    assert re.fullmatch(rf"{file}:{where}(:\d+)?: error: not valid YAML: {re.escape(problem)}.*; skipped", error)
    assert "models/staging/stg_customers.sql:1 - public.stg_customers <- warehouse.raw.customers" in statements


def test_a_dbt_project_yml_that_is_not_yaml_is_an_error_and_the_defaults_are_used(tmp_path) -> None:
    project = _uncompiled_shop(tmp_path, **{"dbt_project.yml": "name: shop\nmodel-paths: [models\n"})
    code, stderr, statements = _harvest_files(project)
    assert code == 0
    [error] = _errors(stderr)
    assert re.fullmatch(
        rf"{re.escape(str(project))}/dbt_project.yml:2:14: error: not valid YAML: .+; using the defaults", error
    )
    assert len(statements) == 5  # models/ is dbt's default model path


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        ("name: [shop]", "name must be a string, got a list; using shop"),
        ("model-paths: 3", "model-paths must be a list of folders, got a number; using [models]"),
        ("model-paths: [models, 3]", "each item of model-paths must be a string, got a number; using [models]"),
        ("seed-paths: {seeds: true}", "seed-paths must be a list of folders, got an object; using [seeds]"),
        ('model-paths: [models, "\\0"]', "model-paths: '\\x00' is no folder name; not read"),
        ("vars: big_spender_threshold", "vars must be an object, got a string; not used"),
        ("models: [shop]", "models must be an object, got a list; not used"),
        ("models: {shop: table}", "models.shop must be an object, got a string; not used"),
        (
            "models: {shop: {marts: {+materialized: 3}}}",
            "models.shop.marts.+materialized must be a string, got a number; not used",
        ),
    ],
)
def test_a_dbt_project_yml_setting_of_the_wrong_type_is_an_error_naming_it_and_its_default_is_used(
    tmp_path, setting, problem
) -> None:
    key = setting.split(":")[0]
    kept = [line for line in (DBT / "dbt_project.yml").read_text().split("\n\n") if not line.startswith(key)]
    project = _uncompiled_shop(tmp_path, **{"dbt_project.yml": "\n\n".join([*kept, setting]) + "\n"})
    line = _line_of(project / "dbt_project.yml", setting)
    code, stderr, statements = _harvest_files(project)
    assert code == 0
    assert _errors(stderr) == [f"{project}/dbt_project.yml:{line}: error: {problem}"]
    assert len(statements) >= 4
    assert "models/staging/stg_orders.sql:1 - public.stg_orders <- warehouse.raw.orders" in statements


SECRET = "AWS_SECRET=hunter2-SECRET 'unbalanced\n"


def test_a_model_linked_to_a_file_outside_the_project_is_an_error_and_is_not_read(tmp_path) -> None:
    project = _uncompiled_shop(tmp_path)
    (tmp_path / "secret.env").write_text(SECRET)
    (project / "models" / "leak.sql").symlink_to(tmp_path / "secret.env")
    (project / "models" / "leak.yml").symlink_to(tmp_path / "secret.env")
    code, stderr, statements = _harvest_files(project)
    assert code == 0
    assert _errors(stderr) == [
        f"{project}/models/leak.sql: error: outside the dbt project {project}; not read",
        f"{project}/models/leak.yml: error: outside the dbt project {project}; not read",
    ]
    assert "hunter2" not in "\n".join(stderr) and not any("leak.sql" in s for s in statements)
    assert len(statements) == 5


def test_model_paths_outside_the_project_are_an_error_and_are_not_searched(tmp_path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "leak.sql").write_text("select * from " + SECRET)
    settings = (DBT / "dbt_project.yml").read_text().replace('["models"]', f'["models", "../elsewhere", "{outside}"]')
    project = _uncompiled_shop(tmp_path, **{"dbt_project.yml": settings})
    (project / "snapshots").symlink_to(outside)
    line = _line_of(project / "dbt_project.yml", "model-paths")
    code, stderr, statements = _harvest_files(project)
    assert code == 0
    assert _errors(stderr) == [
        f"{project}/dbt_project.yml:{line}: error: model-paths: ../elsewhere is outside the dbt project {project};"
        " not read",
        f"{project}/dbt_project.yml:{line}: error: model-paths: {outside} is outside the dbt project {project};"
        " not read",
        f"{project}/dbt_project.yml:1: error: snapshot-paths: snapshots is outside the dbt project {project}; not read",
    ]
    assert "hunter2" not in "\n".join(stderr) and len(statements) == 5


def test_root_lets_a_dbt_project_read_files_beside_it(tmp_path) -> None:
    shared = tmp_path / "shared_models"
    shared.mkdir()
    (shared / "stg_refunds.sql").write_text("select order_id, amount from {{ source('shop', 'payments') }}\n")
    project = _uncompiled_shop(tmp_path)
    (project / "models" / "stg_refunds.sql").symlink_to(shared / "stg_refunds.sql")
    code, stderr, statements = _harvest_files(project, "--root", str(tmp_path))
    assert code == 0 and _errors(stderr) == []
    assert "models/stg_refunds.sql:1 - public.stg_refunds <- warehouse.raw.payments" in statements
    code, stderr, _ = _harvest_files(project, "--root", str(project / "models"))
    assert _errors(stderr)[0] == f"{project}/dbt_project.yml: error: outside --root {project}/models; not read"


def test_a_model_not_in_utf8_is_read_as_any_sql_file_and_a_yml_is_an_error(tmp_path) -> None:
    project = _uncompiled_shop(tmp_path)
    (project / "models" / "latin.sql").write_bytes(b"-- orders\n-- caf\xe9\nselect 1 as one\n")
    (project / "models" / "latin.yml").write_bytes(b"version: 2\n# caf\xe9\n")
    code, stderr, statements = _harvest_files(project)
    assert code == 0
    assert _errors(stderr) == [
        f"{project}/models/latin.yml:2: error: not UTF-8 text: byte 0xe9 cannot be read; skipped"
    ]
    warning = f"{project}/models/latin.sql:2:7: warning: byte 0xe9 is not valid utf-8: such bytes are read as cp1252"
    assert any(line.startswith(warning) for line in stderr)
    assert len(statements) == 6


def test_the_vars_of_dbt_project_yml_are_the_values_of_var(tmp_path) -> None:
    settings = (
        (DBT / "dbt_project.yml")
        .read_text()
        .replace(
            "vars:\n",
            "vars:\n  events_schema: landing\n  shop:\n    events_table: clicks\n  other_package:\n    x: 1\n",
        )
    )
    model = "select * from {{ var('events_schema') }}.{{ var('events_table') }}\n"
    project = _uncompiled_shop(tmp_path, **{"dbt_project.yml": settings, "models/stg_events.sql": model})
    _, _, statements = _harvest_files(project)
    assert "models/stg_events.sql:1 - public.stg_events <- landing.clicks" in statements
    _, _, statements = _harvest_files(project, "--var", "events_schema=raw")  # the command line wins
    assert "models/stg_events.sql:1 - public.stg_events <- raw.clicks" in statements


def test_folder_configs_apply_under_a_nested_model_path(tmp_path) -> None:
    settings = (DBT / "dbt_project.yml").read_text().replace('["models"]', '["dbt/models"]')
    project = _uncompiled_shop(tmp_path, **{"dbt_project.yml": settings})
    (project / "dbt").mkdir()
    (project / "models").rename(project / "dbt" / "models")
    loaded = load_dbt(project, "postgres")
    kinds = {m.display.rsplit("/", 1)[-1]: m.sql.split(" AS ")[0] for m in loaded.models if m.sql}
    assert kinds["stg_orders.sql"] == "CREATE VIEW stg_orders"
    assert kinds["fct_customer_orders.sql"] == "CREATE TABLE fct_customer_orders"
    assert loaded.issues == []


@pytest.mark.parametrize("database", ["../..", "ware'house", "a;b", "a."])
def test_a_source_whose_name_sqlglot_cannot_read_is_kept_as_written(tmp_path, database) -> None:
    sources = SOURCES.replace("database: warehouse", f'database: "{database}"')
    project = _uncompiled_shop(tmp_path, **{"models/sources.yml": sources})
    code, _, _ = _harvest_files(project)
    assert code == 0
    assert f"{database}.raw.payments table" in read_store(project.parent / "graph.lin").datasets()


def test_a_model_path_that_cannot_be_searched_is_an_error_naming_it(tmp_path) -> None:
    settings = (DBT / "dbt_project.yml").read_text().replace('["models"]', f'["models", "{"m" * 300}"]')
    project = _uncompiled_shop(tmp_path, **{"dbt_project.yml": settings})
    (project / "models" / "archive.sql").mkdir()  # a folder, not a model
    code, stderr, statements = _harvest_files(project)
    assert code == 0 and len(statements) == 5
    assert _errors(stderr) == [f"{project}/{'m' * 300}: error: cannot search folder: File name too long; skipped"]


def test_an_error_that_stops_the_harvest_is_one_line_however_long(tmp_path) -> None:
    folder = tmp_path / ("not_a_dbt_project_" * 8)
    folder.mkdir()
    outcome = CliRunner().invoke(cli, ["harvest", "--dbt", str(folder), "--store", str(tmp_path / "g.lin")])
    assert outcome.exit_code == 2
    assert outcome.stderr.splitlines() == [
        f"error: {folder}: no dbt manifest (target/manifest.json) and no dbt_project.yml"
    ]


def test_configs_nested_deeper_than_python_recurses_are_checked(tmp_path) -> None:
    depth = 990  # libyaml reads up to 1,000 levels
    settings = "name: shop\nmodels:\n  shop: " + "{a: " * depth + "{+materialized: 3}" + "}" * depth + "\n"
    project = _uncompiled_shop(tmp_path, **{"dbt_project.yml": settings})
    code, stderr, statements = _harvest_files(project)
    assert code == 0 and len(statements) == 5
    [error] = _errors(stderr)
    assert error.startswith(f"{project}/dbt_project.yml:3: error: models.shop.a.a.")
    assert error.endswith(".a.+materialized must be a string, got a number; not used")


def test_the_dbt_reader_names_relations_through_the_sql_boundary_and_imports_no_sqlglot() -> None:
    tree = ast.parse((REPO / "lineage_cli" / "harvest" / "inputs" / "dbt.py").read_text())
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert [name for name in imported if name.split(".")[0] == "sqlglot"] == []


# -- a project read from its own files: its macros, configs and the dbt_utils macros -----------------------
def _project(tmp_path, files: dict[str, str], settings: str = "name: p\n"):
    """A dbt project of ``files`` (path -> text) with ``settings`` as its dbt_project.yml."""
    project = tmp_path / "p"
    for name, text in {"dbt_project.yml": settings, **files}.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    return project


RAW_SOURCES = "version: 2\nsources:\n  - name: raw\n    tables:\n      - name: orders\n      - name: customers\n"


def _column_edges(project) -> set[str]:
    """``source -> target`` of every column edge of the project's harvest."""
    return {" ".join(line.split(" ")[:3]) for line in read_store(project.parent / "graph.lin").column_edges()}


def test_the_projects_own_macros_and_its_packages_are_called(tmp_path) -> None:
    project = _project(
        tmp_path,
        {
            "models/sources.yml": RAW_SOURCES,
            "models/a.sql": "{{ pick(source('raw', 'orders')) }}\n",
            "models/b.sql": "select {{ util.cols() }} from {{ source('raw', 'customers') }}\n",
            "macros/m.sql": "{% macro pick(src) %}select {{ columns() }} from {{ src }}{% endmacro %}\n",
            "macros/more/c.sql": "{% macro columns() %}{{ return('id, amount') }}{% endmacro %}\n",
            "dbt_packages/util/macros/u.sql": "{% macro cols() %}{{ own() }}{% endmacro %}"
            "{% macro own() %}id, name{% endmacro %}\n",
            "macros/broken.sql": "{% macro oops( %}\n",
        },
    )
    code, stderr, statements = _harvest_files(project)
    assert code == 0
    assert statements == ["models/a.sql:1 - public.a <- raw.orders", "models/b.sql:1 - public.b <- raw.customers"]
    assert {"raw.orders.id -> public.a.id", "raw.orders.amount -> public.a.amount"} <= _column_edges(project)
    assert "raw.customers.name -> public.b.name" in _column_edges(project)
    assert [line for line in stderr if "warning" in line] == [
        f"{project}/macros/broken.sql:1: warning: cannot read dbt macros: expected token 'name', got '%';"
        " its macros are unknown"
    ]


def test_a_macro_renders_under_the_models_budget(tmp_path) -> None:
    loops = "{% for i in range(1000) %}{% for j in range(1001) %}{% endfor %}{% endfor %}"
    project = _project(
        tmp_path,
        {
            "models/a.sql": "select 1 as x\n{{ spin() }}\n",
            "macros/m.sql": f"{{% macro spin() %}}{loops}{{% endmacro %}}",
        },
    )
    code, stderr, _ = _harvest_files(project)
    assert code == 0
    assert f"{project}/models/a.sql:2: warning: template exceeded its limit of 1,000,000 loop iterations" in " ".join(
        stderr
    )


FOLDER_CONFIGS = """\
name: p
models:
  p:
    +schema: base
    marts:
      +schema: mattermost
      +materialized: table
      core:
        +alias: fact_core
        +materialized: [table]
"""


def test_config_in_the_model_over_dbt_project_yml_folders_over_the_project(tmp_path) -> None:
    project = _project(
        tmp_path,
        {
            "models/stg.sql": "select 1 as x\n",
            "models/marts/server_fact.sql": "select x from {{ ref('stg') }}\n",
            "models/marts/own.sql": "{{ config({'schema': 'x', \"materialized\": 'view'}) }}\nselect 1 as y\n",
            "models/marts/core/c.sql": "{{ config(schema='kw') }}\nselect x from {{ ref('server_fact') }}\n",
        },
        FOLDER_CONFIGS,
    )
    loaded = load_dbt(project, "postgres")
    built = {m.display.rsplit("/", 1)[-1]: m.sql.split(" AS ")[0] for m in loaded.models if m.sql}
    assert built == {
        "stg.sql": "CREATE VIEW base.stg",
        "server_fact.sql": "CREATE TABLE mattermost.server_fact",
        "own.sql": "CREATE VIEW x.own",
        "c.sql": "CREATE TABLE kw.fact_core",
    }
    assert [str(issue) for issue in loaded.issues] == [
        f"{project}/dbt_project.yml:10: error: models.p.marts.core.+materialized must be a string, got a list; not used"
    ]
    _, _, statements = _harvest_files(project)
    assert "models/marts/core/c.sql:1 - kw.fact_core <- mattermost.server_fact" in statements


def test_a_ref_names_its_model_whatever_the_ctes_are_called(tmp_path) -> None:
    project = _project(
        tmp_path,
        {
            "models/sources.yml": RAW_SOURCES,
            "models/orders.sql": "select id from {{ source('raw', 'orders') }}\n",
            "models/b.sql": "with orders as (select * from {{ ref('orders') }})\nselect id from orders\n",
            # the ref in the second CTE would be the first CTE, were it rendered as a bare name
            "models/c.sql": "with orders as (select 1 as n), totals as (select id from {{ ref('orders') }})\n"
            "select totals.id, orders.n from totals cross join orders\n",
        },
    )
    _, _, statements = _harvest_files(project)
    assert statements == [
        "models/b.sql:1 - public.b <- public.orders",
        "models/c.sql:1 - public.c <- public.orders",
        "models/orders.sql:1 - public.orders <- raw.orders",
    ]
    assert {"public.orders.id -> public.b.id", "public.orders.id -> public.c.id"} <= _column_edges(project)


def test_dbt_utils_group_by_and_date_spine_render_as_sql(tmp_path) -> None:
    model = """\
with spine as (
    {{ dbt_utils.date_spine(datepart="day", start_date="cast('2020-01-01' as date)", end_date="current_date") }}
), totals as (
    select o.id, s.date_day, sum(o.amount) as amount
    from {{ source('raw', 'orders') }} o join spine s on o.id > 0
    {{ dbt_utils.group_by(2) }}
)
select * from totals
"""
    downstream = "select * from {{ ref('a') }}\n"
    project = _project(tmp_path, {"models/sources.yml": RAW_SOURCES, "models/a.sql": model, "models/b.sql": downstream})
    code, stderr, statements = _harvest_files(project)
    assert code == 0 and not [line for line in stderr if "a.sql" in line], stderr
    assert statements == ["models/a.sql:1 - public.a <- raw.orders", "models/b.sql:1 - public.b <- public.a"]
    edges = _column_edges(project)
    assert {"raw.orders.id -> public.a.id", "raw.orders.amount -> public.a.amount"} <= edges
    # the spine's column is a column of the model, from no table
    assert "public.a.date_day -> public.b.date_day" in edges
    assert not [edge for edge in edges if edge.endswith(" public.a.date_day")]


def test_a_ref_in_a_sql_or_jinja_comment_is_no_dependency(tmp_path) -> None:
    model = """\
-- use this instead of source('raw', 'customers'); it calls cols() no more
{# was: select * from {{ ref('b') }} #}
select {{ cols() }} from {{ source('raw', 'orders') }}
"""
    macros = "{% macro cols() %}id{% endmacro %}\n{% macro old() %}{{ ref('b') }}{% endmacro %}\n"
    files = {"models/sources.yml": RAW_SOURCES, "models/a.sql": model, "models/b.sql": "select 1 as id\n"}
    project = _project(tmp_path, {**files, "macros/m.sql": macros})
    code, stderr, statements = _harvest_files(project)
    assert code == 0 and stderr == [], stderr  # no `declared source raw.customers is not read by its SQL`
    assert statements == ["models/a.sql:1 - public.a <- raw.orders", "models/b.sql:1 - public.b <- "]


def test_dbt_cross_database_macros_keep_their_arguments_lineage(tmp_path) -> None:
    model = """\
select
    {{ dbt_utils.safe_add(['o.net', 'o.tax']) }} as total,
    {{ datediff("o.created_at", "o.closed_at", "day") }} as age,
    {{ dbt.dateadd(datepart='day', interval=7, from_date_or_timestamp='o.created_at') }} as due,
    {{ dbt.safe_cast('o.code', dbt.type_int()) }} as code,
    {{ dbt.concat(['o.code', "'-'", 'o.id']) }} as label,
    {{ dbt_utils.string_literal(source('raw', 'orders')) }} as source_relation
from {{ source('raw', 'orders') }} o
"""
    project = _project(tmp_path, {"models/sources.yml": RAW_SOURCES, "models/a.sql": model})
    code, stderr, statements = _harvest_files(project)
    assert code == 0 and stderr == [], stderr  # no unknown macro
    assert statements == ["models/a.sql:1 - public.a <- raw.orders"]
    assert {edge for edge in _column_edges(project) if edge.startswith("raw.")} == {
        "raw.orders.net -> public.a.total",
        "raw.orders.tax -> public.a.total",
        "raw.orders.created_at -> public.a.age",
        "raw.orders.closed_at -> public.a.age",
        "raw.orders.created_at -> public.a.due",
        "raw.orders.code -> public.a.code",
        "raw.orders.code -> public.a.label",
        "raw.orders.id -> public.a.label",
    }


def test_a_group_by_past_the_budget_is_a_warning(tmp_path) -> None:
    project = _project(tmp_path, {"models/a.sql": "select 1 as x\n{{ dbt_utils.group_by(10 ** 8) }}\n"})
    code, stderr, _ = _harvest_files(project)
    assert code == 0
    assert "models/a.sql:2: warning: template exceeded its limit of 16,777,216 characters for a value" in " ".join(
        stderr
    )


def test_a_packages_macros_dispatch_to_their_default_and_an_unknown_one_is_a_warning(tmp_path) -> None:
    dispatching = (
        "{% macro cols() %}{{ return(adapter.dispatch('cols', 'util')()) }}{% endmacro %}"
        "{% macro default__cols() %}id, name{% endmacro %}\n"
    )
    project = _project(
        tmp_path,
        {
            "models/sources.yml": RAW_SOURCES,
            "models/b.sql": "select {{ util.cols() }} from {{ source('raw', 'customers') }}\n{{ util.nothing() }}\n",
            "dbt_packages/util/macros/u.sql": dispatching,
        },
    )
    code, stderr, _ = _harvest_files(project)
    assert code == 0
    assert "raw.customers.name -> public.b.name" in _column_edges(project)
    assert [line for line in stderr if "warning" in line] == [
        f"{project}/models/b.sql:2: warning: unknown Jinja macro util.nothing: rendered as a placeholder"
    ]


def test_a_macro_file_linked_outside_the_project_is_an_error_and_is_not_read(tmp_path) -> None:
    project = _project(tmp_path, {"models/a.sql": "select 1 as x\n"})
    (tmp_path / "secret.sql").write_text(SECRET)
    for folder in (project / "macros", project / "dbt_packages" / "util" / "macros"):
        folder.mkdir(parents=True)
        (folder / "leak.sql").symlink_to(tmp_path / "secret.sql")
    code, stderr, statements = _harvest_files(project)
    assert code == 0 and statements == ["models/a.sql:1 - public.a <- "]
    assert _errors(stderr) == [
        f"{project}/macros/leak.sql: error: outside the dbt project {project}; not read",
        f"{project}/dbt_packages/util/macros/leak.sql: error: outside the dbt project {project}; not read",
    ]
    assert "hunter2" not in "\n".join(stderr)


def test_the_refs_and_sources_of_the_macros_a_model_calls_are_its_own(tmp_path) -> None:
    sources = RAW_SOURCES.replace("  - name: raw\n", "  - name: raw\n    schema: landing\n")
    project = _project(
        tmp_path,
        {
            "models/sources.yml": sources,
            "models/stg.sql": "{{ config(schema='staging') }}\nselect 1 as id\n",
            "models/a.sql": "{{ both() }}\n",
            "macros/m.sql": "{% macro both() %}select id from {{ source('raw', 'orders') }} union all {{ other() }}"
            "{% endmacro %}{% macro other() %}select id from {{ ref('stg') }}{% endmacro %}\n",
        },
    )
    _, _, statements = _harvest_files(project)
    assert "models/a.sql:1 - public.a <- landing.orders, staging.stg" in statements
    [model] = [m for m in load_dbt(project, "postgres").models if m.relation == "public.a"]
    assert model.sources == ("landing.orders", "staging.stg")


def test_macro_files_with_unknown_filters_load_and_one_whose_top_level_fails_is_a_warning(tmp_path) -> None:
    project = _project(
        tmp_path,
        {
            "models/a.sql": "select {{ pick('id') }} from t\n",
            "macros/m.sql": "{% macro pick(x) %}{{ x | not_a_filter }}{% endmacro %}\n",
            "macros/n.sql": "{{ 1 / 0 }}{% macro other() %}{% endmacro %}\n",
        },
    )
    code, stderr, statements = _harvest_files(project)
    assert code == 0 and statements == ["models/a.sql:1 - public.a <- public.t"]
    assert [line for line in stderr if "macros" in line] == [
        f"{project}/models/a.sql:1: warning: cannot load dbt macros {project}/macros/n.sql: division by zero;"
        " its macros are unknown"
    ]


def test_a_column_of_literals_keeps_its_place_through_a_cte_and_a_star(tmp_path) -> None:
    model = (
        "with base as (select * from {{ ref('fct_customer_orders') }}),\n"
        "typed as (select customer_id, case when order_count > 1 then 'returning' else 'new' end as customer_type,"
        " 'shop' as origin from base)\n"
        "select * from typed\n"
    )
    project = _uncompiled_shop(tmp_path, **{"models/marts/customer_types.sql": model})
    code, lines, _ = _harvest_files(project)
    assert code == 0 and not [line for line in lines if "customer_types.sql" in line], lines
    view = read_store(project.parent / "graph.lin")
    table = "public.customer_types"
    columns = {f"{table}.{c}" for c in ("customer_id", "customer_type", "origin")}
    assert {c for c, t in view.containers.items() if t == table} == columns
    assert ("public.fct_customer_orders.order_count", f"{table}.customer_type", EdgeType.PREDICATE) in {
        (s, t, k) for s, t, k, _ in view.edges
    }
