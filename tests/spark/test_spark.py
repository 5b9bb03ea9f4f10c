"""The harvest on a real local Spark (``local[2]``): the merged store's lineage is the local harvest's, exactly,
from paths, from a DataFrame of SQL texts, and through ``lineage harvest --engine spark``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lineage_cli import spark as on_spark
from lineage_cli.harvest.batch import harvest
from lineage_cli.harvest.inputs.files import display_path, sql_files
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.shards import read_shard
from tests.conftest import REPO, generate_warehouse


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_warehouse(tmp_path_factory.mktemp("spark") / "wh", "--tables", "60", "--seed", "11")


def test_a_spark_harvest_of_paths_is_the_local_harvest(spark, warehouse: Path, tmp_path: Path) -> None:
    schema = SchemaCatalog.from_file(str(warehouse / "schema.json"))
    local = harvest([warehouse / "sql"], "hive", schema=schema, jobs=2)
    merged = on_spark.harvest(spark, [warehouse / "sql"], "hive", schema=schema, shards=tmp_path / "shards")
    assert merged.graph == local.graph
    assert merged.graph.edges and merged.graph.expressions  # column lineage, not an empty graph twice
    assert (merged.files, merged.statements, merged.issues) == (local.files, local.statements, local.issues)
    written = [read_shard(path) for path in sorted((tmp_path / "shards").glob("shard-*.jsonl.gz"))]
    assert sum(len(shard.units) for shard in written) == local.files


def test_a_spark_harvest_of_a_dataframe_of_sql_texts_is_the_local_harvest(spark, warehouse: Path) -> None:
    files = sql_files([warehouse / "sql"]).files
    rows = [(display_path(file.path), Path(file.path).read_text(encoding="utf-8")) for file in files]
    frame = spark.createDataFrame(list(reversed(rows)), ["path", "sql"])
    merged = on_spark.harvest(spark, frame, "hive")
    assert merged.graph == harvest([warehouse / "sql"], "hive").graph


def test_a_dataframe_without_the_sql_column_is_an_input_error(spark) -> None:
    from lineage_cli.errors import InputError

    with pytest.raises(InputError, match="no sql column"):
        on_spark.harvest(spark, spark.createDataFrame([("a.sql",)], ["path"]))


@pytest.mark.usefixtures("spark_installed")
def test_lineage_harvest_engine_spark_writes_the_local_store_byte_for_byte(warehouse: Path, tmp_path: Path) -> None:
    """In a process of its own: the command starts and stops its own session."""
    common = [str(warehouse / "sql"), "--dialect", "hive", "--no-cache", "-q"]
    lineage = [sys.executable, "-m", "lineage_cli", "harvest", *common]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([*lineage, "--store", str(tmp_path / "local.lin"), "--jobs", "2"], check=True, env=env)
    run = subprocess.run(
        [*lineage, "--store", str(tmp_path / "spark.lin"), "--engine", "spark", "--master", "local[2]"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("harvested ")
    assert (tmp_path / "spark.lin").read_bytes() == (tmp_path / "local.lin").read_bytes()


@pytest.mark.usefixtures("spark_installed")
def test_the_spark_bench_times_each_way_and_finds_the_stores_alike(tmp_path: Path) -> None:
    """bench/spark.py, as `make bench` runs it, on a small warehouse: in a process of its own (it starts and stops
    its own sessions)."""
    probe = (
        "import sys\nsys.path[:0] = [sys.argv[1]]\nimport harvest, processes, spark\n"
        "harvest.OUT = processes.OUT = spark.OUT = __import__('pathlib').Path(sys.argv[2])\n"
        "sys.argv = ['spark.py', '--tables', '20', '--runs', '1']\nspark.main()\n"
    )
    generate_warehouse(tmp_path / "wh_hive_20", "--tables", "20", "--dialect", "hive")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-c", probe, str(REPO / "bench"), str(tmp_path)], env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.count(" s  (") == 4 and "the Spark store is the local one, byte for byte" in run.stdout
