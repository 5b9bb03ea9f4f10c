"""Flow manifests: the oozie-like fixture against its golden files, CSV manifests, PATHs, the cache key,
and generated templated warehouses harvested through their manifest and vars file."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.harvest.batch import harvest
from lineage_cli.harvest.inputs.manifest import ManifestError, load_manifest
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.model import EdgeType, NodeKind, Subtype
from tests.bounded import run_bounded, yaml_bomb
from tests.conftest import REPO, generate_warehouse
from tests.store.storeview import golden, read_store

OOZIE = REPO / "fixtures" / "sql" / "oozie"
PREFIX = "fixtures/sql/oozie/"


@pytest.fixture(scope="module")
def oozie(tmp_path_factory: pytest.TempPathFactory):
    """The fixture flow harvested by the CLI from the repository root, as the README shows it."""
    store = tmp_path_factory.mktemp("oozie") / "graph.lin"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        outcome = CliRunner().invoke(
            cli, ["harvest", "--manifest", f"{PREFIX}manifest.yaml", "--store", str(store), "--no-cache"]
        )
    assert outcome.exit_code == 0, outcome.output
    return read_store(store), outcome.stderr


def test_oozie_statements_and_their_modules(oozie) -> None:
    view, _ = oozie
    assert view.statements(PREFIX) == golden(OOZIE / "expected_statements.txt")


def test_oozie_table_edges(oozie) -> None:
    assert oozie[0].table_edges() == golden(OOZIE / "expected_table_edges.txt")


def test_oozie_column_edges(oozie) -> None:
    assert oozie[0].column_edges() == golden(OOZIE / "expected_column_edges.txt")


def test_oozie_rolls_up_to_modules_and_workflows(oozie) -> None:
    view, _ = oozie
    assert view.flow_edges() == golden(OOZIE / "expected_flow_edges.txt")
    assert view.kinds["wf_sales"] is NodeKind.WORKFLOW and view.kinds["wf_sales/build_sales"] is NodeKind.MODULE
    assert view.containers["wf_sales/build_sales"] == "wf_sales"
    member = {(s, t) for s, t, kind, _ in view.edges if kind is EdgeType.MEMBER}
    assert ("wf_sales/build_sales", "wf_sales") in member
    assert (f"{PREFIX}sql/dwh_sales.sql:17#2", "wf_sales/build_sales") in member


def test_oozie_issues_name_their_row_or_line(oozie) -> None:
    _, stderr = oozie
    reported = [line.replace(PREFIX, "", 1) for line in stderr.splitlines() if line.startswith(PREFIX)]
    assert reported == golden(OOZIE / "expected_issues.txt")


def test_oozie_parameterized_nodes_and_module_facts(oozie) -> None:
    view, _ = oozie
    parameterized = sorted(n for n, k in view.kinds.items() if k is NodeKind.PARAMETERIZED)
    assert parameterized == [
        "#src_schema#.t_orders",
        "${hivevar:arch_db}.sales_history",
        "{{ export_db }}.sales_feed_public",
    ]
    modules = view.meta["modules"]
    assert modules["wf_export/export_sales"] == {
        "workflow": "wf_export",
        "module": "export_sales",
        "rows": 1200000,
        "frequency": "hourly",
        "entry": f"{PREFIX}manifest.yaml:45",
    }
    assert modules["wf_ingest/load_orders"]["sql_file"] == f"{PREFIX}sql/ods_orders.sql"


def test_declared_edges_carry_the_declared_flag_only_where_declared(oozie) -> None:
    view, _ = oozie
    declared = {(s, t) for s, t, kind, flags in view.edges if flags & Subtype.DECLARED.bit}
    assert all(kind in (EdgeType.READ, EdgeType.WRITE) for s, t, kind, f in view.edges if f & Subtype.DECLARED.bit)
    assert ("dwh.sales_web", f"{PREFIX}manifest.yaml:45") in declared
    assert not any(t.startswith(f"{PREFIX}sql/") or s.startswith(f"{PREFIX}sql/") for s, t in declared)


# ----------------------------------------------------------------------------- manifests in detail


def _flows(graph) -> set[tuple[str, str, bool]]:
    reads = {(s, t) for (s, t, k, _), f in graph.edges.items() if k is EdgeType.READ}
    writes = {(s, t, bool(f & Subtype.DECLARED.bit)) for (s, t, k, _), f in graph.edges.items() if k is EdgeType.WRITE}
    return {(source, target, declared) for step, target, declared in writes for source, s in reads if s == step}


def test_a_csv_manifest_reads_like_the_yaml_one(tmp_path) -> None:
    (tmp_path / "load.sql").write_text("INSERT INTO ods.a SELECT s.x FROM stg.s s")
    (tmp_path / "flow.csv").write_text(
        "workflow,module,sql_file,target,sources,rows,frequency\n"
        "wf,load,load.sql,ods.a,stg.s,10,daily\n"
        'wf,spark_step,,mart.b,"ods.a,stg.t",,hourly\n'
        "wf,java_step,,mart.c,ods.a;mart.b,,\n"
        "wf,broken,,,,,\n"
    )
    manifest = load_manifest(tmp_path / "flow.csv")
    assert [(e.line, e.module, e.sources) for e in manifest.entries] == [
        (2, "load", ("stg.s",)),
        (3, "spark_step", ("ods.a", "stg.t")),
        (4, "java_step", ("ods.a", "mart.b")),
    ]
    assert [(i.line, i.level) for i in manifest.issues] == [(5, "error")]
    result = harvest(dialect="hive", manifest=manifest)
    assert _flows(result.graph) == {
        ("stg.s", "ods.a", False),
        ("ods.a", "mart.b", True),
        ("stg.t", "mart.b", True),
        ("ods.a", "mart.c", True),
        ("mart.b", "mart.c", True),
    }
    assert result.modules["wf/load"]["rows"] == 10


def test_manifest_plus_paths_harvests_each_file_once(tmp_path) -> None:
    (tmp_path / "sql").mkdir()
    (tmp_path / "sql" / "a.sql").write_text("INSERT INTO ods.a SELECT s.x FROM stg.s s")
    (tmp_path / "sql" / "b.sql").write_text("INSERT INTO ods.b SELECT a.x FROM ods.a a")
    (tmp_path / "m.yaml").write_text("entries:\n  - {workflow: wf, module: a, sql_file: sql/a.sql}\n")
    manifest = load_manifest(tmp_path / "m.yaml")
    alone = harvest(dialect="hive", manifest=manifest)
    both = harvest([tmp_path / "sql"], dialect="hive", manifest=manifest)
    assert alone.files == 1 and both.files == 2
    assert _flows(both.graph) == {("stg.s", "ods.a", False), ("ods.a", "ods.b", False)}
    members = {s for (s, t, k, _) in both.graph.edges if k is EdgeType.MEMBER}
    assert [m.rsplit("/", 1)[-1] for m in members if m.endswith(".sql:1")] == ["a.sql:1"]


def test_parsed_lineage_wins_and_disagreements_are_warnings(tmp_path) -> None:
    (tmp_path / "a.sql").write_text("INSERT INTO ods.a SELECT s.x FROM stg.s s JOIN stg.u u ON u.k = s.k")
    (tmp_path / "m.yaml").write_text(
        "entries:\n  - workflow: wf\n    module: a\n    sql_file: a.sql\n"
        "    targets: [ods.a, ods.z]\n    sources: [STG.S, stg.v]\n"
    )
    result = harvest(dialect="hive", manifest=load_manifest(tmp_path / "m.yaml"))
    assert sorted(i.message for i in result.issues) == [
        "declared source stg.v is not read by its SQL",
        "declared target ods.z is not written by its SQL",
        "its SQL reads stg.u, which is not a declared source",
    ]
    assert {i.line for i in result.issues} == {2}
    assert _flows(result.graph) == {("stg.s", "ods.a", False), ("stg.u", "ods.a", False)}


def test_an_unparsable_step_falls_back_to_its_declared_lineage(tmp_path) -> None:
    (tmp_path / "broken.sql").write_text("INSERT INTO ods.a SELEC x FROM")
    (tmp_path / "m.yaml").write_text("entries:\n  - {sql_file: broken.sql, target: ods.a, sources: [stg.s]}\n")
    result = harvest(dialect="hive", manifest=load_manifest(tmp_path / "m.yaml"))
    assert [i.level for i in result.issues] == ["error"]
    assert _flows(result.graph) == {("stg.s", "ods.a", True)}


def test_a_query_step_writes_its_rows_into_its_one_declared_target(tmp_path) -> None:
    """A scheduler's query job (an Airflow BigQuery job and its destination table): the step's SQL is a SELECT."""
    (tmp_path / "q.sql").write_text(
        "SET x = 1;\nSELECT o.id, SUM(o.amount) AS total FROM stg.orders o WHERE o.ok GROUP BY o.id"
    )
    (tmp_path / "m.yaml").write_text("entries:\n  - {workflow: wf, module: q, sql_file: q.sql, target: Mart.Totals}\n")
    result = harvest(dialect="hive", manifest=load_manifest(tmp_path / "m.yaml"), schema=SchemaCatalog())
    assert result.issues == []
    assert _flows(result.graph) == {("stg.orders", "mart.totals", False)}
    projections = {(s, t, f) for (s, t, k, _), f in result.graph.edges.items() if k is EdgeType.PROJECTION}
    assert projections == {
        ("stg.orders.id", "mart.totals.id", Subtype.IDENTITY.bit),
        ("stg.orders.amount", "mart.totals.total", Subtype.AGGREGATION.bit),
    }


@pytest.mark.parametrize(
    ("sql", "targets"),
    [
        ("SELECT a FROM stg.s", "[mart.a, mart.b]"),  # which of the two it writes is not known
        ("SELECT a FROM stg.s;\nSELECT b FROM stg.t", "[mart.a]"),  # nor which query's rows
        ("SELECT a INTO mart.x FROM stg.s", "[mart.a]"),  # a SELECT INTO writes its own table (T-SQL)
    ],
)
def test_a_step_whose_query_is_not_known_to_fill_its_target_keeps_the_declared_lineage(
    tmp_path, sql: str, targets: str
) -> None:
    (tmp_path / "q.sql").write_text(sql)
    (tmp_path / "m.yaml").write_text(f"entries:\n  - {{sql_file: q.sql, targets: {targets}, sources: [stg.s]}}\n")
    result = harvest(dialect="tsql", manifest=load_manifest(tmp_path / "m.yaml"))
    # the declared lineage where the SQL writes nothing, the SELECT INTO's own where it does: no parsed write there
    assert not any(not declared for _, target, declared in _flows(result.graph) if target in {"mart.a", "mart.b"})


def test_a_query_target_keeps_its_placeholder_and_is_in_the_cache_key(tmp_path) -> None:
    entries = ["{sql_file: q.sql, target: '${hivevar:db}.a'}", "{sql_file: q.sql, target: ods.b}"]
    assert _written_on_each_run(tmp_path, "SELECT s.x FROM stg.s s", entries) == [["${hivevar:db}.a"], ["ods.b"]]


def test_entry_vars_are_in_the_cache_key(tmp_path) -> None:
    entries = [f"{{sql_file: q.sql, vars: {{db: {db}}}}}" for db in ("ods", "dwh")]
    assert _written_on_each_run(tmp_path, "INSERT INTO ${db}.a SELECT s.x FROM stg.s s", entries) == [
        ["ods.a"],
        ["dwh.a"],
    ]


def _written_on_each_run(tmp_path, sql: str, entries: list[str]) -> list[list[str]]:
    """The tables written by a harvest of each manifest entry in turn, one cache for all: none served from it."""
    (tmp_path / "q.sql").write_text(sql)
    manifest, cache, written = tmp_path / "m.yaml", tmp_path / "cache", []
    for entry in entries:
        manifest.write_text(f"entries:\n  - {entry}\n")
        result = harvest(dialect="hive", manifest=load_manifest(manifest), cache_dir=cache)
        written.append(sorted(t for (_, t, k, _), _f in result.graph.edges.items() if k is EdgeType.WRITE))
        assert result.cache_hits == 0
    return written


def test_command_line_vars_win_over_the_manifest(tmp_path) -> None:
    (tmp_path / "a.sql").write_text("INSERT INTO ${db}.a SELECT s.x FROM stg.s s")
    (tmp_path / "vars.yaml").write_text("db: from_vars_file\n")
    (tmp_path / "m.yaml").write_text("vars_file: vars.yaml\nentries:\n  - {sql_file: a.sql, vars: {db: from_entry}}\n")
    manifest = load_manifest(tmp_path / "m.yaml")
    for variables, expected in (({}, "from_entry.a"), ({"db": "cli"}, "cli.a")):
        result = harvest(dialect="hive", manifest=manifest, variables=variables)
        assert expected in result.graph.kinds


def test_bad_manifests_are_reported(tmp_path) -> None:
    (tmp_path / "no_entries.yaml").write_text("dialect: hive\n")
    (tmp_path / "bad_rows.yaml").write_text(
        "entries:\n  - just a string\n  - {sql_file: a.sql, sql: SELECT 1}\n  - {target: [1, 2]}\n"
        "  - {target: ods.t, rows: lots}\n"
    )
    with pytest.raises(ManifestError):
        load_manifest(tmp_path / "no_entries.yaml")
    manifest = load_manifest(tmp_path / "bad_rows.yaml")
    assert [(i.line, i.level) for i in manifest.issues] == [(2, "error"), (3, "error"), (4, "error"), (5, "warning")]
    assert [e.targets for e in manifest.entries] == [("ods.t",)]
    runner = CliRunner()
    outcome = runner.invoke(cli, ["harvest", "--manifest", str(tmp_path / "no_entries.yaml"), "--store", "x.lin"])
    assert outcome.exit_code == 2 and "entries" in outcome.output
    assert runner.invoke(cli, ["harvest"]).exit_code == 2


def test_manifest_variables_must_be_single_values(tmp_path) -> None:
    (tmp_path / "a.sql").write_text("INSERT INTO ${db}.a SELECT s.x FROM stg.s s")
    (tmp_path / "m.yaml").write_text(
        "entries:\n  - {sql_file: a.sql, vars: {db: [ods, dwh]}}\n  - {sql_file: a.sql, vars: {db: ods}}\n"
    )
    manifest = load_manifest(tmp_path / "m.yaml")
    expected = "variable 'db': expected a single value (text, number, true/false, date or null), got a list"
    assert [(i.line, i.message) for i in manifest.issues] == [(2, f"manifest entry: vars: {expected}")]
    assert [e.variables for e in manifest.entries] == [(("db", "ods"),)]
    (tmp_path / "top.yaml").write_text("vars: {db: {nested: x}}\nentries:\n  - {sql_file: a.sql}\n")
    with pytest.raises(
        ManifestError, match=r"top.yaml: vars: variable 'db': expected a single value .*, got a mapping"
    ):
        load_manifest(tmp_path / "top.yaml")


def test_an_alias_bomb_in_a_manifest_is_refused(tmp_path) -> None:
    (tmp_path / "m.yaml").write_text(yaml_bomb() + "entries:\n  - {target: ods.t, sources: *l8}\n")
    code = (
        "from lineage_cli.harvest.inputs.manifest import ManifestError, load_manifest\n"
        "try:\n    load_manifest('m.yaml')\nexcept ManifestError as error:\n    print(error)\n"
    )
    run = run_bounded(code, cwd=tmp_path, seconds=30)
    assert run.stdout.strip() == "m.yaml:6:5: YAML aliases expand to more than 100,000 nodes: refused (an alias bomb?)"
    assert run.seconds < 2 and run.peak_mb < 300


def test_results_do_not_depend_on_the_number_of_workers(tmp_path) -> None:
    manifest = load_manifest(OOZIE / "manifest.yaml")
    one = harvest(manifest=manifest, jobs=1)
    three = harvest(manifest=manifest, jobs=3)
    assert one.graph.edges == three.graph.edges and one.graph.kinds == three.graph.kinds
    assert one.graph.containers == three.graph.containers and one.issues == three.issues


# ----------------------------------------------------------------------------- generated warehouses


@pytest.mark.parametrize("dialect", ["hive", "snowflake"])
def test_templated_generated_warehouse_reproduces_the_ground_truth(tmp_path, dialect) -> None:
    out = generate_warehouse(tmp_path / "wh", "--tables", "80", "--dialect", dialect, "--templated")
    manifest = load_manifest(out / "manifest.yaml")
    assert manifest.variables and manifest.dialect == dialect  # its vars_file, honoured
    result = harvest([out / "ddl"], manifest=manifest, schema=SchemaCatalog.from_file(out / "schema.json"), jobs=2)
    assert result.issues == []
    truth = json.loads((out / "ground_truth.json").read_text())
    assert _table_edges(result.graph) == {tuple(edge) for edge in truth["table_edges"]}
    columns = json.loads((out / "ground_truth_columns.json").read_text())
    projection, predicate, predicate_columns = _column_triples(result.graph)
    assert projection == {tuple(edge) for edge in columns["projection"]}
    assert predicate == {tuple(edge) for edge in columns["predicate"]}
    assert predicate_columns == {tuple(edge) for edge in columns["predicate_columns"]}
    assert not [n for n, k in result.graph.kinds.items() if k is NodeKind.PARAMETERIZED]
    workflows = {n for n, k in result.graph.kinds.items() if k is NodeKind.WORKFLOW}
    assert workflows == {entry.workflow for entry in manifest.entries}


def _table_edges(graph) -> set[tuple[str, str]]:
    return {(source, target) for source, target, _ in _flows(graph)}


Triples = set[tuple[str, str, str]]


def _column_triples(graph) -> tuple[Triples, Triples, Triples]:
    """Projection, predicate-to-table and predicate-to-column triples of the graph."""
    order = ["IDENTITY", "TRANSFORMATION", "TRANSFORMATION_MASKING", "AGGREGATION", "AGGREGATION_MASKING"]
    best: dict[tuple[str, str], int] = {}
    predicate, predicate_columns = set(), set()
    for (source, target, kind, _), flags in graph.edges.items():
        names = [s.name for s in Subtype if flags & s.bit]
        if kind is EdgeType.PROJECTION:
            best[(source, target)] = max(best.get((source, target), 0), *(order.index(n) for n in names))
        elif kind is EdgeType.PREDICATE:
            into = predicate_columns if graph.kinds[target] is NodeKind.COLUMN else predicate
            into |= {(source, target, name) for name in names}
    return {(s, t, order[i]) for (s, t), i in best.items()}, predicate, predicate_columns


def test_declared_steps_stay_declared_through_folding_and_are_drawn_dotted(tmp_path) -> None:
    from lineage_cli.emit.formats import emit
    from lineage_cli.store.reader import open_store
    from lineage_cli.walk.query import lineage

    store_path = tmp_path / "graph.lin"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        outcome = CliRunner().invoke(
            cli, ["harvest", "--manifest", f"{PREFIX}manifest.yaml", "--store", str(store_path), "-q", "--no-cache"]
        )
    assert outcome.exit_code == 0, outcome.output
    store = open_store(store_path)
    feed = lineage(store, "export.sales_feed", "up", depth=1)
    assert {(e.source, e.target, e.type, e.subtypes) for e in feed.edges} == {
        ("dwh.sales_web", "export.sales_feed", "flow", ("DECLARED",)),
        ("dwh.sales_store", "export.sales_feed", "flow", ("DECLARED",)),
    }
    parsed = lineage(store, "dwh.sales", "up", depth=1)  # built by parsed SQL
    assert parsed.edges and all(e.subtypes == () for e in parsed.edges)
    dot = emit(feed, "dot")
    assert dot.count("style=dotted") == 2 or dot.count('style="dotted"') == 2


def _flow_beside_a_secret(tmp_path):
    """A manifest in flow/ whose entries point out of it: up, absolute, and through a symlink; a .env beside."""
    secret = tmp_path / ".env"
    secret.write_text("PASSWORD='hunter2-SECRET\nAWS_SECRET_ACCESS_KEY=AKIA123\n")
    flow = tmp_path / "flow"
    flow.mkdir()
    (flow / "ok.sql").write_text("INSERT INTO ods.a SELECT x FROM stg.a")
    (flow / "link.sql").symlink_to(secret)
    (flow / "m.yaml").write_text(
        "entries:\n"
        "  - {module: ok, sql_file: ok.sql}\n"
        "  - {module: up, sql_file: ../.env, target: ods.up}\n"
        f"  - {{module: absolute, sql_file: {secret}}}\n"
        "  - {module: link, sql_file: link.sql}\n"
    )
    return flow / "m.yaml"


def test_a_sql_file_outside_the_manifest_folder_is_an_error_and_is_not_read(tmp_path) -> None:
    manifest = load_manifest(_flow_beside_a_secret(tmp_path))
    folder = tmp_path / "flow"
    assert [(e.module, e.sql_file) for e in manifest.entries] == [
        ("ok", folder / "ok.sql"), ("up", None), ("absolute", None), ("link", None),
    ]  # fmt: skip
    outside = f"outside the manifest's folder {folder}; not read"
    assert [(i.line, i.message) for i in manifest.issues] == [
        (3, f"manifest entry: sql_file ../.env: {outside}; using its declared lineage"),
        (4, f"manifest entry: sql_file {tmp_path / '.env'}: {outside}"),
        (5, f"manifest entry: sql_file link.sql: {outside}"),
    ]
    outcome = CliRunner().invoke(
        cli, ["harvest", "--manifest", str(folder / "m.yaml"), "--store", str(tmp_path / "g.lin"), "--no-cache"]
    )
    assert outcome.exit_code == 0 and "hunter2" not in outcome.output and "AKIA" not in outcome.output


def test_root_widens_where_manifest_files_may_be(tmp_path) -> None:
    path = _flow_beside_a_secret(tmp_path)
    (tmp_path / "shared.sql").write_text("INSERT INTO ods.b SELECT x FROM stg.b")
    path.write_text("entries:\n  - {module: shared, sql_file: ../shared.sql}\n  - {sql_file: /etc/hostname}\n")
    manifest = load_manifest(path, root=tmp_path)
    assert [e.sql_file for e in manifest.entries] == [tmp_path / "flow" / ".." / "shared.sql", None]
    assert [i.message for i in manifest.issues] == [
        f"manifest entry: sql_file /etc/hostname: outside --root {tmp_path}; not read"
    ]
    store = tmp_path / "g.lin"
    arguments = ["harvest", "--manifest", str(path), "--root", str(tmp_path), "--store", str(store), "--no-cache"]
    outcome = CliRunner().invoke(cli, arguments)
    assert outcome.exit_code == 0, outcome.output
    assert "1 errors" in outcome.output and "ods.b table" in read_store(store).datasets()


def test_a_vars_file_outside_the_manifest_folder_is_not_read(tmp_path) -> None:
    path = _flow_beside_a_secret(tmp_path)
    path.write_text("vars_file: ../.env\nentries:\n  - {sql_file: ok.sql}\n")
    with pytest.raises(ManifestError, match=r"vars_file \.\./\.env: outside the manifest's folder .*; not read"):
        load_manifest(path)
