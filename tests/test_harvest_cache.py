"""The harvest cache: an unchanged harvest is recalled whole, exactly as a fresh harvest would come out;
any changed input assembles it again, re-parsing only what that input touches."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.harvest import batch
from lineage_cli.harvest.batch import harvest
from lineage_cli.harvest.harvester import Harvest
from lineage_cli.harvest.manifest import load_manifest
from lineage_cli.harvest.schema import SchemaCatalog
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
    entries = sorted(p for p in cache.iterdir() if not p.name.startswith("harvest-"))
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


def test_the_cli_rerun_writes_the_bytes_of_a_fresh_harvest(inputs: Path) -> None:
    runner = CliRunner()
    command = ["harvest", "warehouse", "--manifest", str(MANIFEST), "-q"]
    outputs = [runner.invoke(cli, [*command, "--store", "cached.lin"]) for _ in range(2)]
    fresh = runner.invoke(cli, [*command, "--store", "fresh.lin", "--no-cache"])
    assert [o.exit_code for o in (*outputs, fresh)] == [0, 0, 0]
    assert "files from cache" not in outputs[0].output
    assert re.search(r"\b(\d+) of \1 files from cache", outputs[1].output)
    assert Path("cached.lin").read_bytes() == Path("fresh.lin").read_bytes()
    assert outputs[1].output.splitlines()[-1].replace("cached.lin", "fresh.lin") == fresh.output.splitlines()[-1]
