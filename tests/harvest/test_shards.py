"""Shards and ``lineage merge``: a harvest's store is the merge of its shards, byte for byte, however they are cut;
shard files are data, checked as they are read; pyspark is imported by no path but the Spark engine's."""

from __future__ import annotations

import gzip
import json
import pickle
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.harvest.batch import harvest
from lineage_cli.harvest.shards import ShardError, merge, read_shard, shards_of, write_shard
from tests.conftest import REPO, generate_warehouse

QUERY_LOG = REPO / "fixtures" / "querylogs" / "snowflake_query_history.csv"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_warehouse(tmp_path_factory.mktemp("shards") / "wh", "--tables", "60", "--seed", "7")


def lineage(*arguments: str) -> str:
    outcome = CliRunner().invoke(cli, list(arguments))
    assert outcome.exit_code == 0, outcome.output
    return outcome.output


@pytest.mark.parametrize(
    "inputs",
    [
        pytest.param(lambda wh: [str(wh / "sql")], id="files"),
        pytest.param(lambda wh: ["--manifest", str(wh / "manifest.yaml")], id="manifest"),
        pytest.param(lambda wh: ["--query-log", str(QUERY_LOG), "--log-format", "snowflake"], id="query-log"),
    ],
)
def test_a_harvest_store_is_the_merge_of_its_shards_byte_for_byte(warehouse: Path, tmp_path: Path, inputs) -> None:
    arguments = [*inputs(warehouse), "-q"]
    lineage("harvest", *arguments, "--no-cache", "--store", str(tmp_path / "local.lin"))
    lineage(
        "harvest", *arguments, "--no-cache", "--shards", str(tmp_path / "shards"), "--store", str(tmp_path / "s.lin")
    )
    shards = sorted(map(str, (tmp_path / "shards").glob("shard-*.jsonl.gz")))
    assert shards
    said = lineage("merge", *reversed(shards), "--store", str(tmp_path / "merged.lin"))  # in any order
    assert f"\nmerged {len(shards)} shards: " in f"\n{said}"  # after the issues, which the harvest reported too
    local = (tmp_path / "local.lin").read_bytes()
    assert (tmp_path / "merged.lin").read_bytes() == local
    assert (tmp_path / "s.lin").read_bytes() == local


def test_shards_cut_anyhow_and_shuffled_merge_to_the_same_graph(warehouse: Path, tmp_path: Path) -> None:
    from lineage_cli.harvest.batch import harvest_units
    from lineage_cli.harvest.inputs.plan import HarvestOptions, plan_harvest

    plan = plan_harvest([warehouse / "sql"], HarvestOptions())
    outcomes = list(harvest_units(plan.units, [str(i) for i in range(len(plan.units))]))
    whole = merge(shards_of(plan, outcomes))
    cut = shards_of(plan, outcomes, size=7)
    assert len(cut) == -(-len(plan.units) // 7)
    random.Random(3).shuffle(cut)
    paths = []
    for number, shard in enumerate(cut):
        paths.append(tmp_path / f"{number}.jsonl")  # uncompressed: a name without .gz
        write_shard(shard, paths[-1])
    merged = merge(read_shard(path) for path in paths)
    assert merged.graph == whole.graph == harvest([warehouse / "sql"]).graph
    assert merged.graph.edges and merged.graph.expressions
    assert (merged.files, merged.statements, merged.issues) == (whole.files, whole.statements, whole.issues)


@pytest.fixture
def shard_dir(warehouse: Path, tmp_path: Path) -> Path:
    lineage(
        "harvest", str(warehouse / "sql"), "-q", "--shards", str(tmp_path / "sh"), "--store", str(tmp_path / "a.lin")
    )
    return tmp_path / "sh"


def merge_exit(tmp_path: Path, *paths: Path) -> tuple[int, str]:
    store = tmp_path / "m.lin"
    store.write_bytes(b"the previous store")
    outcome = CliRunner().invoke(cli, ["merge", *map(str, paths), "--store", str(store)])
    assert store.read_bytes() == b"the previous store"  # an error leaves the store as it was
    return outcome.exit_code, outcome.output


def test_shards_of_two_harvests_or_a_missing_unit_are_an_error(shard_dir: Path, tmp_path: Path) -> None:
    shard = shard_dir / "shard-00000.jsonl.gz"
    assert merge_exit(tmp_path, shard, shard) == (2, "lineage: error: the shards hold 2 harvests' plans: a merge"
                                                     " takes the shards of one harvest\n")  # fmt: skip
    lines = gzip.decompress(shard.read_bytes()).decode().splitlines()
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(lines[:-1]) + "\n")
    code, said = merge_exit(tmp_path, partial)
    assert code == 2 and f"units [{len(lines) - 3}] are in no shard" in said


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(pickle.dumps({"lineage_shard": 1}), id="a pickle"),
        pytest.param(b"", id="empty"),
        pytest.param(b'{"lineage_shard": 99, "tool": "0"}\n', id="another format"),
        pytest.param(b"not json\n", id="not json"),
    ],
)
def test_a_file_that_is_no_shard_of_this_version_is_an_error_naming_it(tmp_path: Path, content: bytes) -> None:
    planted = tmp_path / "planted.jsonl"
    planted.write_bytes(content)
    code, said = merge_exit(tmp_path, planted)
    assert code == 2 and said.startswith(f"lineage: error: {planted}: not a lineage shard of this version")


def test_a_shard_whose_analysis_was_tampered_with_is_an_error(shard_dir: Path, tmp_path: Path) -> None:
    lines = gzip.decompress((shard_dir / "shard-00000.jsonl.gz").read_bytes()).decode().splitlines()
    unit = json.loads(lines[2])
    unit["unit"]["outcome"]["statements"] = "many"
    tampered = tmp_path / "tampered.jsonl.gz"
    tampered.write_bytes(gzip.compress("\n".join([*lines[:2], json.dumps(unit), *lines[3:]]).encode() + b"\n"))
    with pytest.raises(ShardError, match="an outcome's file and count"):
        read_shard(tampered)
    assert merge_exit(tmp_path, tampered)[0] == 2


def test_a_missing_shard_file_is_an_error(tmp_path: Path) -> None:
    code, said = merge_exit(tmp_path, tmp_path / "nothing.jsonl")
    assert code == 2 and "cannot read the shard" in said


def test_spark_is_the_only_engine_that_imports_pyspark(warehouse: Path, tmp_path: Path) -> None:
    store = tmp_path / "g.lin"
    probe = f"""
import sys
from lineage_cli.cli import cli
for arguments in (
    ["harvest", {str(warehouse / "sql")!r}, "-q", "--store", {str(store)!r}, "--shards", {str(tmp_path / "sh")!r}],
    ["merge", {str(tmp_path / "sh" / "shard-00000.jsonl.gz")!r}, "--store", {str(store)!r}],
    ["stats", "--store", {str(store)!r}],
):
    try:
        cli(arguments, prog_name="lineage", standalone_mode=False)
    except SystemExit as end:
        assert end.code == 0, (arguments, end.code)
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j"))
    assert not loaded, (arguments, loaded)
"""
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stderr


def test_the_spark_engine_without_pyspark_says_what_to_install(warehouse: Path, tmp_path: Path) -> None:
    """In a process where pyspark cannot be imported, whether or not it is installed."""
    probe = (
        "import sys\nsys.modules['pyspark'] = sys.modules['pyspark.sql'] = None\n"
        "from lineage_cli.cli import cli\ncli(sys.argv[1:], prog_name='lineage')\n"
    )
    store = tmp_path / "g.lin"
    arguments = ["harvest", str(warehouse / "sql"), "--engine", "spark", "--store", str(store)]
    run = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 2 and "needs pyspark: pip install 'lineage-cli[spark]'" in run.stdout + run.stderr
    assert not store.exists()
