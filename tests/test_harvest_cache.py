"""The harvest cache: an unchanged harvest is recalled whole, exactly as a fresh harvest would come out;
any changed input assembles it again, re-parsing only what that input touches.  On the command line, a
re-run that recalls the harvest its store holds leaves the store as it is, and imports no parser."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.harvest import batch
from lineage_cli.harvest.assemble import Harvest
from lineage_cli.harvest.batch import harvest
from lineage_cli.harvest.manifest import load_manifest
from lineage_cli.harvest.schema import DDL, SchemaCatalog
from lineage_cli.store.arrays import from_store
from lineage_cli.store.reader import open_store
from lineage_cli.store.writer import write_store
from tests.conftest import REPO, WAREHOUSE

MANIFEST = Path("oozie/manifest.yaml")
# A file of the fixture warehouse that declares no table: changing it changes no other file's schema.
PLAIN_FILE = Path("warehouse/hive/mart/store_kpi.sql")


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The oozie flow (errors, warnings, modules, defaults) and the fixture warehouse, copied to a work dir."""
    shutil.copytree(REPO / "fixtures" / "sql" / "oozie", tmp_path / "oozie")
    shutil.copytree(WAREHOUSE, tmp_path / "warehouse")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def assembled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One item per harvest that assembled its graph, rather than recalling it."""
    calls: list[int] = []
    real = batch._assemble

    def counting(*args: object) -> Harvest:
        calls.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "_assemble", counting)
    return calls


def run(cache: Path | None, **options: object) -> Harvest:
    return harvest(["warehouse"], manifest=load_manifest(MANIFEST), cache_dir=cache, **options)  # type: ignore[arg-type]


def facts(result: Harvest) -> tuple:
    graph = result.graph
    return (
        result.files,
        result.statements,
        result.lineage_statements,
        result.issues,
        dict(result.statement_types),
        result.defaults,
        result.modules,
        graph.kinds,
        graph.containers,
        graph.provenance,
        graph.edges,
    )


def store_bytes(result: Harvest, path: Path) -> bytes:
    """The store ``lineage harvest`` writes: from the arrays a cached harvest made, else from the graph."""
    write_store(result.arrays if result.arrays is not None else result.graph, path, {"files": result.files})
    return path.read_bytes()


def test_an_unchanged_harvest_is_recalled_exactly_as_a_fresh_one(inputs: Path, assembled: list[int]) -> None:
    cache = inputs / "cache"
    fresh = run(None)
    first = run(cache)
    recalled = run(cache, jobs=2)  # the number of jobs is no input
    assert len(assembled) == 2, "the unchanged harvest was assembled again"
    assert fresh.errors and len(fresh.errors) < len(fresh.issues), "the fixture should report errors and warnings"
    assert (first.cache_hits, recalled.cache_hits) == (0, recalled.files)
    assert store_bytes(recalled, inputs / "recalled.lin") == store_bytes(fresh, inputs / "fresh.lin")
    assert facts(recalled) == facts(first) == facts(fresh)


def test_changing_one_file_reparses_that_file_and_assembles_again(inputs: Path, assembled: list[int]) -> None:
    cache = inputs / "cache"
    run(cache)
    extra = "\nINSERT INTO mart.extra SELECT k.store_id FROM mart.store_kpi k;\n"
    PLAIN_FILE.write_text(PLAIN_FILE.read_text() + extra)
    changed = run(cache)
    assert changed.cache_hits == changed.files - 1
    assert "mart.extra" in changed.graph.kinds
    assert facts(changed) == facts(run(None))
    again = run(cache)
    assert len(assembled) == 3, "only the harvest after the change should assemble"
    assert facts(again) == facts(changed) and again.cache_hits == again.files


@pytest.mark.parametrize(
    "options",
    [
        {"variables": {"etl_date": "2024-02-01"}},
        {"columns": False},
        {"default_schema": "other"},
        {"schema": SchemaCatalog.from_mapping({"stg.crm_customer": ["id", "name"]})},
    ],
    ids=["variables", "tables-only", "default-schema", "schema"],
)
def test_changed_options_or_schema_analyse_and_assemble_again(
    inputs: Path, assembled: list[int], options: dict[str, object]
) -> None:
    cache = inputs / "cache"
    run(cache)
    changed = run(cache, **options)
    assert len(assembled) == 2 and changed.cache_hits < changed.files
    assert facts(changed) == facts(run(None, **options))


def test_a_changed_manifest_assembles_again_from_the_cached_units(inputs: Path, assembled: list[int]) -> None:
    cache = inputs / "cache"
    run(cache)
    MANIFEST.write_text(MANIFEST.read_text().replace("rows: 250000", "rows: 1"))
    changed = run(cache)
    assert len(assembled) == 2 and changed.cache_hits == changed.files  # a step's facts change no unit's analysis
    assert changed.modules["wf_ingest/load_orders"]["rows"] == 1
    assert facts(changed) == facts(run(None))


def test_a_lost_unit_entry_is_parsed_again_not_recalled(inputs: Path, assembled: list[int]) -> None:
    cache = inputs / "cache"
    run(cache)
    entries = sorted(p for p in cache.iterdir() if not p.name.startswith(("harvest-", "graph-")))
    entries[0].unlink()
    again = run(cache)
    assert len(assembled) == 2 and entries[0].exists()
    assert facts(again) == facts(run(None))


def test_the_cache_keeps_one_memo_and_what_its_harvest_used(inputs: Path) -> None:
    cache = inputs / "cache"
    for etl_date in ("2024-01-01", "2024-01-02", "2024-01-03"):
        run(cache, variables={"etl_date": etl_date})
    memos = [p.name for p in cache.iterdir() if p.name.startswith("harvest-")]
    assert len(memos) == 1
    before = sorted(p.name for p in cache.iterdir())
    run(cache, variables={"etl_date": "2024-01-03"})
    assert sorted(p.name for p in cache.iterdir()) == before


def test_a_lost_graph_entry_assembles_again(inputs: Path, assembled: list[int]) -> None:
    cache = inputs / "cache"
    run(cache)
    (graph,) = cache.glob("graph-*")
    graph.unlink()
    again = run(cache)
    assert len(assembled) == 2 and graph.exists()
    assert facts(again) == facts(run(None))


def test_a_graph_entry_damaged_after_the_recall_is_made_again_from_the_units(
    inputs: Path, assembled: list[int]
) -> None:
    cache = inputs / "cache"
    first = run(cache)
    recalled = run(cache)
    assert len(assembled) == 1 and recalled.recalled is not None
    (graph,) = cache.glob("graph-*")
    graph.write_bytes(b"damaged")  # read only now, when the graph is asked for
    assert facts(recalled) == facts(first) and len(assembled) == 2
    assert store_bytes(recalled, inputs / "recalled.lin") == store_bytes(first, inputs / "first.lin")
    assert facts(run(cache)) == facts(first) and len(assembled) == 2  # the entry was written again


def test_the_schema_fingerprint_sees_column_order_and_every_change_of_a_schema_file(tmp_path: Path) -> None:
    assert SchemaCatalog.from_mapping({"s.t": ["a", "b"]}).fingerprint() != (
        SchemaCatalog.from_mapping({"s.t": ["b", "a"]}).fingerprint()
    )
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"s": {"t": {"a": "int", "b": "int"}}}))
    loaded = SchemaCatalog.from_file(path)
    assert loaded.fingerprint() == SchemaCatalog.from_file(path).fingerprint() == loaded.copy().fingerprint()
    path.write_text(json.dumps({"s": {"t": {"b": "int", "a": "int"}}}))
    assert SchemaCatalog.from_file(path).fingerprint() != loaded.fingerprint()
    # Once it holds more than the file, a catalog's fingerprint is its content's, whatever it was read from.
    grown, built = loaded.copy(), SchemaCatalog.from_mapping({"s.t": {"a": "int", "b": "int"}})
    for catalog in (grown, built):
        catalog.add("s.u", ["x"], DDL)
    assert grown.fingerprint() == built.fingerprint() != loaded.fingerprint()


# -- the command line ----------------------------------------------------------------------------------------

HARVEST = ["harvest", "warehouse", "--manifest", str(MANIFEST)]


def summary(output: str) -> list[str]:
    """The summary's lines, without what differs run to run (time and rate) or between stores (the name)."""
    lines = [line for line in output.splitlines() if line.startswith("harvested ") or " nodes, " in line]
    return [re.sub(r" in [\d.]+s \(\d+ statements/s", " in Ts (R statements/s", line) for line in lines]


def test_the_cli_rerun_writes_the_bytes_of_a_first_harvest(inputs: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(cli, [*HARVEST, "-q", "--store", "cached.lin"])
    Path("cached.lin").unlink()  # no store to find up to date: the re-run writes one from the memo
    again = runner.invoke(cli, [*HARVEST, "-q", "--store", "cached.lin"])
    fresh = runner.invoke(cli, [*HARVEST, "-q", "--store", "fresh.lin"])  # a first harvest, with a cache of its own
    assert [o.exit_code for o in (first, again, fresh)] == [0, 0, 0]
    assert "files from cache" not in first.output + fresh.output
    assert re.search(r"\b(\d+) of \1 files from cache", again.output) and "up to date" not in again.output
    assert Path("cached.lin").read_bytes() == Path("fresh.lin").read_bytes()
    assert again.output.splitlines()[-1].replace("cached.lin", "fresh.lin") == fresh.output.splitlines()[-1]


def test_the_store_keeps_the_harvest_key_and_else_what_an_uncached_harvest_writes(inputs: Path) -> None:
    runner = CliRunner()
    for store, options in (("cached.lin", []), ("uncached.lin", ["--no-cache"])):
        assert runner.invoke(cli, [*HARVEST, "-q", "--store", store, *options]).exit_code == 0
    cached, uncached = open_store("cached.lin"), open_store("uncached.lin")
    assert re.fullmatch(r"[0-9a-f]{64}", cached.meta.pop("harvest_key")) and "harvest_key" not in uncached.meta
    assert cached.meta == uncached.meta
    sections = set(cached.header.sections) - {"meta"}
    assert sections == set(uncached.header.sections) - {"meta"}
    assert all(bytes(cached.array(name)) == bytes(uncached.array(name)) for name in sections)


def test_an_unchanged_rerun_leaves_the_store_as_it_is_and_reports_the_same(inputs: Path) -> None:
    runner = CliRunner()
    command = [*HARVEST, "--store", "graph.lin"]  # not quiet: the warnings are printed too
    first = runner.invoke(cli, command)
    written = os.stat("graph.lin")
    again = runner.invoke(cli, command)
    kept = os.stat("graph.lin")
    assert (first.exit_code, again.exit_code) == (0, 0)
    assert (kept.st_ino, kept.st_mtime_ns, kept.st_size) == (written.st_ino, written.st_mtime_ns, written.st_size)
    assert first.stderr.count("error:") and first.stderr.count("warning:")
    assert again.stderr == first.stderr
    expected = summary(first.output)
    files = re.search(r"harvested (\d+) files", expected[0]).group(1)  # type: ignore[union-attr]
    expected[0] = expected[0].replace("statements/s)", f"statements/s, {files} of {files} files from cache)")
    expected[1] = expected[1].replace(f"({written.st_size} bytes)", f"({written.st_size} bytes, up to date)")
    assert summary(again.output) == expected


@pytest.mark.parametrize(
    "change",
    ["a file", "the store's meta", "the store itself"],
)
def test_a_rerun_writes_the_store_unless_it_holds_what_the_memo_recalls(inputs: Path, change: str) -> None:
    runner = CliRunner()
    command = [*HARVEST, "-q", "--store", "graph.lin"]
    assert runner.invoke(cli, command).exit_code == 0
    harvested = Path("graph.lin").read_bytes()
    if change == "a file":
        PLAIN_FILE.write_text(PLAIN_FILE.read_text() + "\nINSERT INTO mart.extra SELECT 1 AS one;\n")
    elif change == "the store's meta":
        store = open_store("graph.lin")
        write_store(from_store(store), "graph.lin", {**store.meta, "dialect": "spark"})
    else:
        Path("graph.lin").write_bytes(harvested[:100])
    again = runner.invoke(cli, command)
    assert again.exit_code == 0 and "up to date" not in again.output
    if change != "a file":
        assert re.search(r"\b(\d+) of \1 files from cache", again.output)
        assert Path("graph.lin").read_bytes() == harvested


def test_a_harvest_after_an_import_writes_the_harvested_graph_again(inputs: Path) -> None:
    runner = CliRunner()
    command = [*HARVEST, "-q", "--store", "graph.lin"]
    assert runner.invoke(cli, command).exit_code == 0
    harvested = Path("graph.lin").read_bytes()
    Path("edges.csv").write_text("source,target,type,subtype\nstg.elsewhere,mart.store_kpi,flow,\n")
    assert runner.invoke(cli, ["import", "edges.csv", "--store", "graph.lin"]).exit_code == 0
    assert "stg.elsewhere" in open_store("graph.lin").names_of(range(open_store("graph.lin").node_count))
    again = runner.invoke(cli, command)
    assert again.exit_code == 0 and "up to date" not in again.output
    assert Path("graph.lin").read_bytes() == harvested


# Runs a ``lineage`` command and then names every module it imported (``main`` would leave at once: os._exit).
_DRIVER = """
import sys
from lineage_cli.cli import cli
try:
    cli(sys.argv[1:], prog_name="lineage", standalone_mode=False)
except SystemExit as done:
    assert not done.code, done.code
print("imported:", *sorted(sys.modules), file=sys.stderr)
"""


def imported_by(*arguments: str) -> set[str]:
    """The top-level packages a ``lineage`` command imports, run in a process of its own."""
    done = subprocess.run([sys.executable, "-c", _DRIVER, *arguments], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    (names,) = (line for line in done.stderr.splitlines() if line.startswith("imported: "))
    return {name.split(".")[0] for name in names.split()[1:]}


def test_a_rerun_imports_no_parser_and_no_numpy_unless_it_writes_the_store(
    inputs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    command = [*HARVEST, "-q", "-j", "1", "--store", "graph.lin"]  # one job: the first harvest parses in this process
    heavy = {"sqlglot", "jinja2", "numpy"}
    assert heavy <= imported_by(*command)  # the flow fixture has Jinja templates
    assert not heavy & imported_by(*command)
    Path("graph.lin").unlink()
    assert heavy & imported_by(*command) == {"numpy"}  # the store is written from the memo's arrays
