"""Harvesting many files: phases, the per-file cache, worker processes, column lineage in the store."""

from __future__ import annotations

import codecs
import concurrent.futures
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from lineage_cli.cli import cli
from lineage_cli.harvest import batch
from lineage_cli.harvest.batch import harvest, harvest_plan
from lineage_cli.harvest.inputs.plan import HarvestOptions, plan_harvest
from lineage_cli.harvest.schema import DDL, OBSERVED, SchemaCatalog
from lineage_cli.model import EdgeType, NodeKind, Subtype
from lineage_cli.store.reader import open_store
from lineage_cli.walk.query import lineage
from tests.conftest import WAREHOUSE, generate_warehouse


def column_triples(graph) -> set[tuple[str, str, str, int]]:
    return {
        (s, t, k.label, f) for (s, t, k, _), f in graph.edges.items() if k in (EdgeType.PROJECTION, EdgeType.PREDICATE)
    }


def test_ddl_in_another_file_maps_a_positional_insert(tmp_path) -> None:
    (tmp_path / "b_load.sql").write_text("INSERT INTO dwh.t SELECT s.a, s.b FROM stg.s s")
    (tmp_path / "z_ddl.sql").write_text("CREATE TABLE dwh.t (id INT, amount DECIMAL(10, 2))")
    result = harvest([tmp_path], dialect="hive")
    assert {(s, t) for s, t, k, _ in column_triples(result.graph) if k == "projection"} == {
        ("stg.s.a", "dwh.t.id"),
        ("stg.s.b", "dwh.t.amount"),
    }


def test_a_view_defined_in_a_later_file_expands_a_star_once_known(tmp_path) -> None:
    (tmp_path / "a_report.sql").write_text("CREATE VIEW rpt.r AS SELECT * FROM rpt.base")
    (tmp_path / "b_base.sql").write_text("CREATE VIEW rpt.base AS SELECT o.id, o.total FROM stg.o o")
    result = harvest([tmp_path], dialect="hive")
    assert not [i for i in result.issues if i.level == "warning"]
    assert {(s, t) for s, t, k, _ in column_triples(result.graph) if k == "projection"} == {
        ("stg.o.id", "rpt.base.id"),
        ("stg.o.total", "rpt.base.total"),
        ("rpt.base.id", "rpt.r.id"),
        ("rpt.base.total", "rpt.r.total"),
    }


def test_outcomes_come_in_order_as_soon_as_no_later_phase_can_change_them(tmp_path, monkeypatch) -> None:
    """A merge takes each outcome as it comes and lets it go: an outcome is out once those before it are and it left
    nothing unresolved; one that did waits, with those after it, for the phase that redoes it."""
    for name, sql in {
        "a.sql": "INSERT INTO dwh.a SELECT s.id FROM stg.s s",
        "b.sql": "INSERT INTO dwh.b SELECT s.id FROM stg.s s",
        "c.sql": "CREATE VIEW rpt.c AS SELECT * FROM rpt.e",  # a star over a view only e.sql defines
        "d.sql": "INSERT INTO dwh.d SELECT s.id FROM stg.s s",
        "e.sql": "CREATE VIEW rpt.e AS SELECT o.id, o.total FROM stg.o o",
    }.items():
        (tmp_path / name).write_text(sql)
    analysed: list[str] = []
    real = batch.analyze_file

    def counting(task: batch._Task) -> batch.FileOutcome:
        analysed.append(task.unit.display)
        return real(task)

    monkeypatch.setattr(batch, "analyze_file", counting)
    plan = plan_harvest([tmp_path], HarvestOptions("hive"))
    digests = [batch._digest(unit) for unit in plan.units]
    seen = [(outcome.file, len(analysed)) for outcome in batch.harvest_units(plan.units, digests)]
    names = [unit.display for unit in plan.units]
    assert [file for file, _ in seen] == names
    # a and b as soon as each is analysed; c after the whole first phase and its own second analysis; d and e with it
    assert [count for _, count in seen] == [1, 2, 6, 6, 6]
    assert analysed[5] == names[2]


def test_ddl_is_found_in_a_files_bytes_and_in_the_text_of_files_whose_keywords_are_not_ascii(tmp_path) -> None:
    ddl, ctas = "CREATE TABLE dwh.t (id INT)", "CREATE TABLE dwh.u AS SELECT 1 AS id"
    (tmp_path / "utf8").mkdir()
    (tmp_path / "utf8" / "ddl.sql").write_text("-- é\n" + ddl, encoding="utf-8")
    (tmp_path / "utf8" / "ctas.sql").write_text(ctas, encoding="utf-8")
    (tmp_path / "utf8" / "utf16.sql").write_bytes(codecs.BOM_UTF16_LE + ddl.encode("utf-16-le"))
    (tmp_path / "ebcdic").mkdir()
    (tmp_path / "ebcdic" / "ddl.sql").write_bytes(ddl.encode("cp500"))
    found = {}
    for folder, encoding in (("utf8", None), ("ebcdic", "cp500")):
        plan = plan_harvest([tmp_path / folder], HarvestOptions("hive", encoding=encoding))
        found |= {"/".join(Path(unit.display).parts[-2:]): batch._declares_tables(unit) for unit in plan.units}
    assert found == {"utf8/ddl.sql": True, "utf8/ctas.sql": False, "utf8/utf16.sql": True, "ebcdic/ddl.sql": True}


def test_cached_and_parallel_harvests_equal_the_plain_one(tmp_path) -> None:
    out = generate_warehouse(tmp_path / "wh", "--tables", "60", "--dialect", "spark", "--statements-per-file", "2")
    schema = SchemaCatalog.from_file(out / "schema.json")
    plain = harvest([out / "sql"], dialect="spark", schema=schema)
    cache = tmp_path / "cache"
    first = harvest([out / "sql"], dialect="spark", schema=schema, jobs=2, cache_dir=cache)
    second = harvest([out / "sql"], dialect="spark", schema=schema, jobs=2, cache_dir=cache)
    assert first.cache_hits == 0 and second.cache_hits == second.files
    assert plain.graph.edges == first.graph.edges == second.graph.edges
    assert plain.graph.kinds == second.graph.kinds


def test_changing_one_file_reparses_that_file_only(tmp_path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.sql").write_text(f"INSERT INTO dwh.{name} SELECT s.x FROM stg.s s")
    cache = tmp_path / "cache"
    harvest([tmp_path], dialect="hive", cache_dir=cache)
    (tmp_path / "b.sql").write_text("INSERT INTO dwh.b SELECT s.y FROM stg.s s")
    again = harvest([tmp_path], dialect="hive", cache_dir=cache)
    assert again.cache_hits == 2
    assert ("stg.s.y", "dwh.b.y", "projection", Subtype.IDENTITY.bit) in column_triples(again.graph)


def test_generated_warehouse_column_ground_truth_in_the_store(tmp_path) -> None:
    out = generate_warehouse(tmp_path, "--tables", "80", "--dialect", "hive")
    result = harvest([out / "sql"], dialect="hive", schema=SchemaCatalog.from_file(out / "schema.json"), jobs=2)
    truth = json.loads((out / "ground_truth_columns.json").read_text())
    order = ["IDENTITY", "TRANSFORMATION", "TRANSFORMATION_MASKING", "AGGREGATION", "AGGREGATION_MASKING"]
    projection: dict[tuple[str, str], int] = {}
    predicate, predicate_columns = set(), set()
    for source, target, kind, flags in column_triples(result.graph):
        names = [s.name for s in Subtype if flags & s.bit]
        if kind == "projection":
            best = max(order.index(n) for n in names)
            projection[(source, target)] = max(projection.get((source, target), 0), best)
        elif result.graph.kinds[target] is NodeKind.COLUMN:
            predicate_columns |= {(source, target, n) for n in names}
        else:
            predicate |= {(source, target, n) for n in names}
    assert {(s, t, order[i]) for (s, t), i in projection.items()} == {tuple(x) for x in truth["projection"]}
    assert predicate == {tuple(x) for x in truth["predicate"]}
    assert predicate_columns == {tuple(x) for x in truth["predicate_columns"]}


def test_cli_harvest_with_schema_vars_and_column_queries(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schema.yaml").write_text("stg.orders: [id, amount, status]\n")
    (tmp_path / "load.sql").write_text(
        "INSERT INTO ${hivevar:mart}.revenue SELECT o.id, SUM(o.amount) AS total FROM stg.orders o "
        "WHERE o.status = '#wanted#' GROUP BY o.id"
    )
    runner = CliRunner()
    outcome = runner.invoke(
        cli, ["harvest", "load.sql", "--dialect", "hive", "--schema", "schema.yaml", "--var", "mart=mart",
              "--var", "wanted=PAID", "-q"],
    )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    store = open_store(".lineage/graph.lin")
    up = lineage(store, "mart.revenue.total", "up", predicates=True)
    assert {(e.source, e.target, e.type, e.subtypes) for e in up.edges} == {
        ("stg.orders.amount", "mart.revenue.total", "projection", ("AGGREGATION",)),
        ("stg.orders.status", "mart.revenue", "predicate", ("FILTER",)),
        ("stg.orders.id", "mart.revenue", "predicate", ("GROUP_BY",)),
        ("mart.revenue", "mart.revenue.total", "contains", ()),
    }
    assert runner.invoke(cli, ["harvest", "load.sql", "--vars", "missing.yaml"]).exit_code == 2


def test_warehouse_fixture_harvest_reports_the_unexpandable_star_as_a_warning() -> None:
    result = harvest([WAREHOUSE])
    warnings = [i for i in result.issues if i.level == "warning"]
    assert [(i.file.rsplit("/", 1)[-1], i.line) for i in warnings] == [("ods_customer.sql", 10)]
    assert result.errors == []


def test_unreadable_files_and_unknown_dialect_lines_cost_only_their_file(tmp_path) -> None:
    (tmp_path / "a_gone.sql").write_text("INSERT INTO a.gone SELECT 1")
    (tmp_path / "b_dialect.sql").write_text("-- dialect: nosuchsql\nINSERT INTO a.b SELECT 1")
    (tmp_path / "c_cut.sql").write_text("INSERT INTO x.y SELECT a FROM")
    (tmp_path / "d_good.sql").write_text("INSERT INTO dwh.t SELECT s.x FROM stg.s s")
    plan = plan_harvest([tmp_path], HarvestOptions(dialect="hive"))
    (tmp_path / "a_gone.sql").unlink()  # found, then gone before it is read
    result = harvest_plan(plan, jobs=2)
    errors = {(i.file.rsplit("/", 1)[-1], i.message.split(":")[0].split(";")[0]) for i in result.errors}
    assert {file for file, _ in errors} == {"a_gone.sql", "b_dialect.sql", "c_cut.sql"}
    assert ("a_gone.sql", "cannot read file") in errors
    assert ("c_cut.sql", "Expected table name but got the end of the statement") in errors
    assert ("stg.s.x", "dwh.t.x", "projection", Subtype.IDENTITY.bit) in column_triples(result.graph)


def transformations(result) -> list[str]:
    return sorted(name for name, kind in result.graph.kinds.items() if kind is NodeKind.TRANSFORMATION)


def test_a_symlinked_file_is_one_statement_and_a_dangling_link_a_warning(tmp_path) -> None:
    (tmp_path / "etl").mkdir()
    (tmp_path / "etl" / "load.sql").write_text("INSERT INTO dwh.t SELECT x FROM stg.s")
    (tmp_path / "current.sql").symlink_to(tmp_path / "etl" / "load.sql")
    (tmp_path / "old.sql").symlink_to(tmp_path / "etl" / "deleted.sql")
    result = harvest([tmp_path, tmp_path / "etl" / "load.sql"])
    assert (result.files, result.statements) == (1, 1)
    assert transformations(result) == [f"{tmp_path / 'current.sql'}:1"], "by the first name found"
    assert [(i.file.rsplit("/", 1)[-1], i.level) for i in result.issues] == [("old.sql", "warning")]
    assert "does not exist" in result.issues[0].message


def test_a_latin1_byte_costs_a_warning_at_its_line_and_column_not_the_file(tmp_path) -> None:
    sql = "-- load\n-- caf\xe9 orders, € in EUR\nINSERT INTO dwh.t SELECT s.x FROM stg.s s;\n"
    (tmp_path / "load.sql").write_bytes(sql.encode("cp1252"))
    result = harvest([tmp_path])
    assert result.errors == [] and result.statements == 1
    assert [(i.line, i.col, i.level) for i in result.issues] == [(2, 7, "warning")]
    assert "byte 0xe9 is not valid utf-8: such bytes are read as cp1252" in result.issues[0].message
    assert ("stg.s.x", "dwh.t.x", "projection", Subtype.IDENTITY.bit) in column_triples(result.graph)


def test_utf16_files_with_a_byte_order_mark_and_declared_encodings_are_read(tmp_path) -> None:
    statement = "-- Café\r\nINSERT INTO dwh.t{n} SELECT s.x FROM stg.s s\r\n"
    (tmp_path / "a_le.sql").write_bytes(codecs.BOM_UTF16_LE + statement.format(n=1).encode("utf-16-le"))
    (tmp_path / "b_be.sql").write_bytes(codecs.BOM_UTF16_BE + statement.format(n=2).encode("utf-16-be"))
    (tmp_path / "c_bom.sql").write_bytes(codecs.BOM_UTF8 + statement.format(n=3).encode())
    declared = "-- dialect: hive\n-- encoding: latin-1\nCREATE TABLE dwh.t4 AS SELECT s.x AS café FROM stg.s s"
    (tmp_path / "d_declared.sql").write_bytes(declared.encode("latin-1"))
    (tmp_path / "e_option.sql").write_bytes("CREATE TABLE dwh.t5 AS SELECT s.x AS €uro FROM stg.s s".encode("cp1252"))
    result = harvest([tmp_path], encoding="cp1252")
    assert result.issues == []
    assert {(s, t) for s, t, k, _ in column_triples(result.graph) if k == "projection"} == {
        *(("stg.s.x", f"dwh.t{n}.x") for n in range(1, 4)),
        ("stg.s.x", "dwh.t4.café"),
        ("stg.s.x", "dwh.t5.€uro"),
    }
    assert transformations(result)[0].endswith("a_le.sql:2"), "lines of a UTF-16 file count as the file's"


def test_the_encoding_is_part_of_the_cache_key(tmp_path) -> None:
    (tmp_path / "t.sql").write_bytes("INSERT INTO dwh.t SELECT s.x AS \xe9 FROM stg.s s".encode("latin-1"))
    cache = tmp_path / "cache"
    assert harvest([tmp_path / "t.sql"], cache_dir=cache).issues != []
    assert harvest([tmp_path / "t.sql"], cache_dir=cache, encoding="latin-1").issues == []


def test_workers_are_capped_at_the_cpus_this_process_may_use(tmp_path, monkeypatch) -> None:
    for n in range(8):
        (tmp_path / f"f{n}.sql").write_text(f"INSERT INTO dwh.t{n} SELECT x FROM stg.s")
    started: list[int] = []

    class Recording(ThreadPoolExecutor):  # threads: the test sees what a process pool would be asked for
        def __init__(self, workers: int, **options: object) -> None:
            started.append(workers)
            super().__init__(workers, **options)

    monkeypatch.setattr(batch, "usable_cpus", lambda: 2)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Recording)
    result = harvest([tmp_path], jobs=64, columns=False)
    assert result.statements == 8
    assert started and max(started) == 2


def test_conditions_and_window_keys_are_upstream_of_the_column_and_a_literal_column_exists(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sql").write_text(
        "CREATE TABLE t AS WITH c AS (SELECT s.id, s.c1, 'k' AS k FROM s) SELECT * FROM c;\n"
        "CREATE TABLE u AS SELECT IF(t.c1 = 'x', 1, 0) AS flag,"
        " ROW_NUMBER() OVER (PARTITION BY t.k ORDER BY t.id) AS rn FROM t;\n"
    )
    runner = CliRunner()
    assert runner.invoke(cli, ["harvest", "a.sql", "--dialect", "spark", "-q"]).exit_code == 0
    store = open_store(".lineage/graph.lin")
    flag, rn = lineage(store, "default.u.flag", "up"), lineage(store, "default.u.rn", "up")
    assert {(e.source, e.target, e.type, e.subtypes) for e in flag.edges} == {
        ("default.s.c1", "default.t.c1", "projection", ("IDENTITY",)),
        ("default.t.c1", "default.u.flag", "predicate", ("CONDITIONAL",)),
    }
    assert {(e.source, e.type, e.subtypes) for e in rn.edges if e.target == "default.u.rn"} == {
        ("default.t.k", "predicate", ("WINDOW",)),
        ("default.t.id", "predicate", ("WINDOW",)),
    }
    # the literal column is in its table and written by its statement: a node with no upstream, not unknown
    up = runner.invoke(cli, ["up", "default.t.k", "--format", "json"])
    assert up.exit_code == 0 and json.loads(up.output)["edges"] == []
    assert store.container(store.find("default.t.k")) == store.find("default.t")
    dot = runner.invoke(cli, ["up", "default.u.rn", "--format", "dot"]).output
    assert '"default.t.k" -> "default.u.rn" [label="WINDOW", style="dashed"];' in dot


@settings(max_examples=80, deadline=None)
@given(
    known=st.dictionaries(st.sampled_from("abcde"), st.lists(st.sampled_from("xyz"), max_size=2), max_size=4),
    changes=st.lists(
        st.tuples(
            st.sampled_from([DDL, OBSERVED]), st.sampled_from("abcdefg"), st.lists(st.sampled_from("xyz"), max_size=2)
        ),
        max_size=8,
    ),
)
def test_what_a_journaled_copy_learned_is_what_it_changed(known, changes) -> None:
    """``learned()`` reads off the tables a file's catalog changed; it must be ``learned_since`` the snapshot,
    entries and order alike, whether the file adds tables, redefines known ones or sets one to what it was."""
    base = SchemaCatalog()
    for table, columns in known.items():
        base.add(f"s.{table}", columns, DDL, partitions=columns[:1])
    journaled, before = base.copy(journal=True), base.copy()
    for layer, table, columns in changes:
        journaled.add(f"s.{table}", columns, layer, partitions=columns[-1:])
    learned, expected = journaled.learned(), journaled.learned_since(before)
    assert learned.to_data() == expected.to_data()
    assert [list(layer) for layer in learned.to_data()["layers"]] == [
        list(layer) for layer in expected.to_data()["layers"]
    ]
