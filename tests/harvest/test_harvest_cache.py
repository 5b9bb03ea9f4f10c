"""The harvest cache: an unchanged harvest is recalled whole, exactly as a fresh harvest would come out;
any changed input assembles it again, re-parsing only what that input touches.  On the command line, a
re-run that recalls the harvest its store holds leaves the store as it is, and imports no parser."""

from __future__ import annotations

import base64
import errno
import json
import os
import pickle
import re
import resource
import shutil
import signal
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from lineage_cli.cli import cli
from lineage_cli.harvest import batch
from lineage_cli.harvest import cache as harvest_cache
from lineage_cli.harvest.assemble import Harvest
from lineage_cli.harvest.batch import harvest
from lineage_cli.harvest.inputs.manifest import load_manifest
from lineage_cli.harvest.schema import DDL, SchemaCatalog
from lineage_cli.store import writer
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
    real = batch.merge_outcomes

    def counting(*args: object) -> Harvest:
        calls.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "merge_outcomes", counting)
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
        graph.sql,
    )


def unit_entries(cache: Path) -> dict[str, str]:
    """The units file's entries: each unit's key and its analysis, as JSON text."""
    loaded = harvest_cache._read(cache / "units", "units")
    assert loaded is not None, "no units file"
    return harvest_cache._unit_entries(loaded[1])


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


def test_a_lost_units_file_is_parsed_again_not_recalled(inputs: Path, assembled: list[int]) -> None:
    cache = inputs / "cache"
    run(cache)
    (cache / "units").unlink()
    again = run(cache)
    assert len(assembled) == 2 and again.cache_hits == 0 and (cache / "units").exists()
    assert facts(again) == facts(run(None))


def test_the_cache_is_three_files_holding_what_the_last_harvest_used(inputs: Path) -> None:
    cache, alone = inputs / "cache", inputs / "alone"
    for etl_date in ("2024-01-01", "2024-01-02", "2024-01-03"):
        run(cache, variables={"etl_date": etl_date})
    run(alone, variables={"etl_date": "2024-01-03"})
    assert sorted(p.name for p in cache.iterdir()) == ["graph", "harvest", "units"]
    assert unit_entries(cache) == unit_entries(alone)
    before = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
    run(cache, variables={"etl_date": "2024-01-03"})  # recalled: nothing written
    assert {p.name: p.stat().st_mtime_ns for p in cache.iterdir()} == before


def test_a_lost_graph_file_assembles_again(inputs: Path, assembled: list[int]) -> None:
    cache = inputs / "cache"
    run(cache)
    (cache / "graph").unlink()
    again = run(cache)
    assert len(assembled) == 2 and (cache / "graph").exists()
    assert facts(again) == facts(run(None))


def test_a_graph_file_damaged_after_the_recall_is_made_again_from_the_units(inputs: Path, assembled: list[int]) -> None:
    cache = inputs / "cache"
    first = run(cache)
    recalled = run(cache)
    assert len(assembled) == 1 and recalled.recalled is not None
    (cache / "graph").write_bytes(b"damaged")  # read only now, when the graph is asked for
    assert facts(recalled) == facts(first) and len(assembled) == 2
    assert store_bytes(recalled, inputs / "recalled.lin") == store_bytes(first, inputs / "first.lin")
    assert facts(run(cache)) == facts(first) and len(assembled) == 2  # the file was written again


class _Planted:
    """A pickle that creates ``marker`` when it is loaded: what a hostile cache folder would hold."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, ...]:
        return (exec, (f"open({str(self.marker)!r}, 'w').close()",))


def test_a_planted_pickle_runs_nothing_and_is_a_cache_miss(inputs: Path) -> None:
    cache, marker = inputs / "cache", inputs / "planted-pickle-ran"
    fresh = run(None)
    run(cache)
    planted = pickle.dumps(_Planted(marker))
    # Every file the cache has, and the names older versions read (a unit's key, a memo's) too.
    for path in [*cache.iterdir(), cache / ("0" * 64), cache / f"harvest-{'0' * 64}"]:
        path.write_bytes(planted)
    again = run(cache)
    assert not marker.exists()
    assert facts(again) == facts(fresh) and again.cache_hits == 0 and again.recalled is None
    assert sorted(p.name for p in cache.iterdir()) == ["graph", "harvest", "units"]  # the planted names are gone


def _rewrite(cache: Path, name: str, change: Callable[[bytes], bytes]) -> None:
    """Rewrite a cache file's text, its header kept valid: only the data is unexpected."""
    loaded = harvest_cache._read(cache / name, name)
    assert loaded is not None
    harvest_cache._replace(cache / name, name, loaded[0], change(loaded[1]))


def _damage_one_unit(change: Callable[[Any], Any]) -> Callable[[bytes], bytes]:
    """A change of the units file: ``change`` applied to the analysis of one unit that has column lineage."""

    def apply(text: bytes) -> bytes:
        lines = text.decode().splitlines()
        index = next(i for i, line in enumerate(lines) if '"projection"' in line and str(PLAIN_FILE) not in line)
        key, _, entry = lines[index].partition(" ")
        changed = change(json.loads(entry))
        lines[index] = f"{key} {changed if isinstance(changed, str) else json.dumps(changed)}"
        return "".join(f"{line}\n" for line in lines).encode()

    return apply


def _set(field: str, value: object) -> Callable[[Any], Any]:
    return lambda entry: {**entry, field: value}


def _first_column_subtype(value: str) -> Callable[[Any], Any]:
    def change(entry: Any) -> Any:
        statement = next(s for s in entry["lineage"] if s[3])
        statement[3][3] = value
        return entry

    return change


def _first_statement_line(value: int) -> Callable[[Any], Any]:
    def change(entry: Any) -> Any:
        entry["lineage"][0][0] = value
        return entry

    return change


def _first_expressions(value: object) -> Callable[[Any], Any]:
    """The expressions of the first statement with column edges (a mapping of target column to text)."""

    def change(entry: Any) -> Any:
        statement = next(s for s in entry["lineage"] if s[3])
        statement[6] = value
        return entry

    return change


def _first_sql(value: object) -> Callable[[Any], Any]:
    """The SQL text of the first statement."""

    def change(entry: Any) -> Any:
        entry["lineage"][0][7] = value
        return entry

    return change


UNIT_DAMAGE = {
    "bad JSON": _damage_one_unit(lambda entry: "{not json"),
    "nested too deep": _damage_one_unit(lambda entry: "[" * 100_000),
    "a count as a string": _damage_one_unit(_set("statements", "3")),
    "a boolean line": _damage_one_unit(_set("issues", [["f.sql", True, "m", None, "error"]])),
    "an issue's level as a number": _damage_one_unit(_set("issues", [["f.sql", 1, "m", None, 2]])),
    "an unknown subtype": _damage_one_unit(_first_column_subtype("NOT_A_SUBTYPE")),
    "a line past the store's": _damage_one_unit(_first_statement_line(2**40)),
    "expressions as a list": _damage_one_unit(_first_expressions(["x.t.c", "a + b"])),
    "an expression as a number": _damage_one_unit(_first_expressions({"x.t.c": 1})),
    "a statement's text as a number": _damage_one_unit(_first_sql(1)),
    "a statement's text past the bound": _damage_one_unit(_first_sql("x" * 70_000)),
    "a catalog of another shape": _damage_one_unit(_set("learned", {"layers": "x", "partitions": {}})),
    "a field more": _damage_one_unit(_set("extra", 1)),
    "a line without a key": lambda text: text.replace(b"\n", b"\nnot-a-key ", 1),
}


@pytest.mark.parametrize("damage", UNIT_DAMAGE.values(), ids=UNIT_DAMAGE.keys())
def test_unexpected_units_data_is_parsed_again(inputs: Path, damage: Callable[[bytes], bytes]) -> None:
    cache = inputs / "cache"
    run(cache)
    _rewrite(cache, "units", damage)
    PLAIN_FILE.write_text(PLAIN_FILE.read_text() + "\n-- changed: the units file is read\n")
    again = run(cache)
    assert again.cache_hits <= again.files - 2  # the changed file, and the damaged entry or the whole file
    assert facts(again) == facts(run(None))


def _on_disk(change: Callable[[bytes], bytes]) -> Callable[[Path, str], None]:
    """A change of a cache file's bytes as they are, header and all."""

    def apply(cache: Path, name: str) -> None:
        (cache / name).write_bytes(change((cache / name).read_bytes()))

    return apply


def _in_data(change: Callable[[Any], Any]) -> Callable[[Path, str], None]:
    """A change of a cache file's JSON data, its header and compression kept valid."""
    return lambda cache, name: _rewrite(cache, name, lambda text: json.dumps(change(json.loads(text))).encode())


def _edges_to_nowhere(data: Any) -> Any:
    sources = np.frombuffer(base64.b64decode(data["sources"]), dtype="<i4") + len(data["names"])
    return {**data, "sources": base64.b64encode(sources.astype("<i4").tobytes()).decode()}


def _expressions_reversed(data: Any) -> Any:
    """The expression rows out of their (column, statement) order: the reader's binary search needs it."""
    columns, statements, texts = data["expressions"]
    flipped = [_reversed_array(columns), _reversed_array(statements), texts[::-1]]
    return {**data, "expressions": flipped}


def _reversed_array(text: str) -> str:
    return base64.b64encode(np.frombuffer(base64.b64decode(text), dtype="<i4")[::-1].tobytes()).decode()


def _expression_of_no_node(data: Any) -> Any:
    columns, statements, texts = data["expressions"]
    beyond = np.frombuffer(base64.b64decode(columns), dtype="<i4") + len(data["names"])
    return {**data, "expressions": [base64.b64encode(beyond.tobytes()).decode(), statements, texts]}


def _statement_texts_reversed(data: Any) -> Any:
    """The statement text rows out of their node order: the reader's binary search needs it."""
    statements, dialects, names, texts = data["sql"]
    return {**data, "sql": [_reversed_array(statements), dialects, names, texts[::-1]]}


def _statement_text_of_no_dialect(data: Any) -> Any:
    statements, dialects, names, texts = data["sql"]
    return {**data, "sql": [statements, dialects, [], texts]}


FILE_DAMAGE = {
    "a truncated units file": ("units", _on_disk(lambda data: data[: len(data) // 2])),
    "a units file of another format": (
        "units",
        _on_disk(lambda data: data.replace(f" {harvest_cache._FORMAT} ".encode(), b" 999 ", 1)),
    ),
    "bytes after the units": ("units", _on_disk(lambda data: data + b"x")),
    "a summary's count as a string": ("harvest", _in_data(lambda data: {**data, "files": str(data["files"])})),
    "a summary as a list": ("harvest", _in_data(lambda data: [data])),
    "a graph's edge from no node": ("graph", _in_data(_edges_to_nowhere)),
    "a graph's names out of order": ("graph", _in_data(lambda data: {**data, "names": data["names"][::-1]})),
    "a graph's expressions out of order": ("graph", _in_data(_expressions_reversed)),
    "a graph's expression of no node": ("graph", _in_data(_expression_of_no_node)),
    "a graph's expression text a number": (
        "graph",
        _in_data(lambda data: {**data, "expressions": [*data["expressions"][:2], [1] * len(data["expressions"][2])]}),
    ),
    "a graph's statement texts out of order": ("graph", _in_data(_statement_texts_reversed)),
    "a graph's statement text of no dialect": ("graph", _in_data(_statement_text_of_no_dialect)),
}


@pytest.mark.parametrize(("name", "damage"), FILE_DAMAGE.values(), ids=FILE_DAMAGE.keys())
def test_an_unexpected_cache_file_is_a_miss(inputs: Path, name: str, damage: Callable[[Path, str], None]) -> None:
    cache = inputs / "cache"
    run(cache)
    damage(cache, name)
    if name == "units":  # else the harvest is recalled, which reads no units
        PLAIN_FILE.write_text(PLAIN_FILE.read_text() + "\n-- changed: the units file is read\n")
    again = run(cache)
    fresh = run(None)
    assert again.cache_hits == (0 if name == "units" else again.files)
    assert facts(again) == facts(fresh)
    assert store_bytes(again, inputs / "again.lin") == store_bytes(fresh, inputs / "fresh.lin")


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


# -- write errors: a cache that cannot be written is a warning, a store an error; neither leaves a temporary file --

EXTRA_STATEMENT = "\nINSERT INTO mart.extra SELECT k.store_id FROM mart.store_kpi k;\n"


def folder_files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir()}


def told(output: str) -> list[str]:
    """What ``lineage`` itself says on stderr: its own lines, not the issues of the SQL."""
    return [line for line in output.splitlines() if line.startswith("lineage: ")]


def failing_write(code: int) -> Callable[..., None]:
    """A write that stops part way with the OSError of a full disk, a read-only folder or the file size limit."""

    def write(out: IO[bytes], *args: object) -> None:
        out.write(b"the first bytes")
        raise OSError(code, os.strerror(code))

    return write


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EFBIG], ids=errno.errorcode.get)
def test_a_cache_that_cannot_be_written_is_a_warning_and_the_store_is_written(
    inputs: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    runner = CliRunner()
    command = [*HARVEST, "--store", "graph.lin"]
    assert runner.invoke(cli, [*command, "-q"]).exit_code == 0
    kept = folder_files(Path("graph.lin.cache"))
    PLAIN_FILE.write_text(PLAIN_FILE.read_text() + EXTRA_STATEMENT)
    with monkeypatch.context() as patch:
        patch.setattr(harvest_cache, "_write_entry", failing_write(code))
        failed = runner.invoke(cli, command)
    assert failed.exit_code == 0 and "Traceback" not in failed.output
    warning = f"cannot write the harvest cache graph.lin.cache: {os.strerror(code)} (the harvest goes on without it)"
    assert told(failed.stderr) == [f"lineage: warning: {warning}"]
    assert "mart.extra" in open_store("graph.lin").names()
    assert folder_files(Path("graph.lin.cache")) == kept  # the last harvest's files, and no temporary one
    again = runner.invoke(cli, [*command, "-q"])  # the cache still serves every file but the changed one
    served = re.search(r"harvested (\d+) files, .*, (\d+) of \1 files from cache", again.output)
    assert again.exit_code == 0 and served is not None and int(served.group(2)) == int(served.group(1)) - 1


def test_a_store_that_cannot_be_written_is_an_error_and_the_old_store_stays(
    inputs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    command = [*HARVEST, "-q", "--store", "graph.lin"]
    assert runner.invoke(cli, command).exit_code == 0
    before = Path("graph.lin").read_bytes()
    PLAIN_FILE.write_text(PLAIN_FILE.read_text() + EXTRA_STATEMENT)
    with monkeypatch.context() as patch:
        patch.setattr(writer, "_write_file", failing_write(errno.ENOSPC))
        failed = runner.invoke(cli, command)
    assert failed.exit_code == 2 and "Traceback" not in failed.output
    assert told(failed.stderr) == ["lineage: error: cannot write the store graph.lin: No space left on device"]
    assert Path("graph.lin").read_bytes() == before
    assert not [path.name for path in Path(".").iterdir() if path.name.startswith(".")]  # no temporary store
    assert runner.invoke(cli, command).exit_code == 0 and "mart.extra" in open_store("graph.lin").names()


def _file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # so a write past the limit fails with EFBIG, not a signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_the_file_size_limit_is_one_line_each_and_leaves_the_old_store_and_cache(inputs: Path) -> None:
    command = [*HARVEST, "--store", "graph.lin", "-j", "1"]
    assert CliRunner().invoke(cli, [*command, "-q"]).exit_code == 0
    store, cache = Path("graph.lin").read_bytes(), folder_files(Path("graph.lin.cache"))
    PLAIN_FILE.write_text(PLAIN_FILE.read_text() + EXTRA_STATEMENT)
    environment = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "lineage_cli", *command],
        preexec_fn=_file_size_limit(4096),  # smaller than the store and than the cache's units
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert told(done.stderr) == [
        "lineage: warning: cannot write the harvest cache graph.lin.cache: File too large"
        " (the harvest goes on without it)",
        "lineage: error: cannot write the store graph.lin: File too large",
    ]
    assert Path("graph.lin").read_bytes() == store and folder_files(Path("graph.lin.cache")) == cache
    assert not [path.name for path in Path(".").iterdir() if path.name.startswith(".")]


def test_no_cache_neither_reads_nor_writes_the_cache(inputs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    command = [*HARVEST, "-q", "--store", "graph.lin"]
    assert runner.invoke(cli, [*command, "--no-cache"]).exit_code == 0
    assert not Path("graph.lin.cache").exists()
    assert runner.invoke(cli, command).exit_code == 0
    kept = folder_files(Path("graph.lin.cache"))
    PLAIN_FILE.write_text(PLAIN_FILE.read_text() + EXTRA_STATEMENT)
    with monkeypatch.context() as patch:
        patch.setattr(harvest_cache, "_read", lambda *args: pytest.fail("--no-cache read the cache"))
        uncached = runner.invoke(cli, [*command, "--no-cache"])
    assert uncached.exit_code == 0 and "from cache" not in uncached.output
    assert folder_files(Path("graph.lin.cache")) == kept


# Runs a ``lineage`` command and then names every module it imported (``main`` would leave at once: os._exit).
_DRIVER = """
import sys
import zlib
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


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=9) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=40,
)


@given(_JSON)
@settings(max_examples=300, deadline=None)
def test_a_cache_file_written_in_parts_is_the_json_written_whole(data: object) -> None:
    """The graph's text is made and compressed part by part (a slice of 3 here, so that lists are cut): its
    text is the JSON written at once, and so is what its compressed parts inflate to."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(harvest_cache, "_SLICE", 3)
        parts = list(harvest_cache._json_parts(data))
    whole = harvest_cache._json(data)
    assert b"".join(parts) == whole
    deflated = harvest_cache._Deflated.of(parts)
    assert deflated.length == len(whole) and zlib.decompress(b"".join(deflated.finish())) == whole
