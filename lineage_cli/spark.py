"""The harvest on Spark: a plan's units analysed by a PySpark job, their shards merged into one graph.

The harvest is the local one (``harvest/batch.py``), phases, cache and merge alike; only where each phase's
units are analysed differs.  ``analyser`` runs a phase as one Spark job: the units are shared out over the
cluster's cores, each partition analysed by ``batch.analyze_unit`` (``mapPartitions``), with the phase's
schema snapshot shipped to each executor once, as a broadcast variable, not with every unit.  What comes back
is each unit's analysis, which the driver writes as shard files and merges (``harvest/shards.py``), so the
graph is the local harvest's by construction.

A unit of SQL files is read by the executor that analyses it, by its path: on a cluster that is a path every
node can read (``/dbfs/...`` on Databricks, an NFS mount); a DataFrame of ``path`` and ``sql`` columns
(``spark.read.text(..., wholetext=True)``) carries the text instead.  pyspark is imported by this module only
(``pip install 'lineage-cli[spark]'``); docs/spark.md has the recipes for spark-submit, a Databricks job, and
Dask or Ray.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lineage_cli.errors import InputError
from lineage_cli.harvest.assemble import Harvest
from lineage_cli.harvest.batch import Analyse, analyze_unit, harvest_plan
from lineage_cli.harvest.inputs.plan import HarvestOptions, Plan, Unit, plan_harvest
from lineage_cli.harvest.outcome import FileOutcome
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.shards import ShardFiles, store_settings
from lineage_cli.profiles import load_profile

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_MISSING = "the Spark engine needs pyspark: pip install 'lineage-cli[spark]'"
_SLICES_A_CORE = 4  # partitions per core: a slow file holds up a quarter of a core's share, not all of it


def harvest(
    spark: SparkSession,
    paths_or_dataframe: Iterable[str | os.PathLike[str]] | DataFrame,
    dialect: str | None = None,
    *,
    schema: SchemaCatalog | None = None,
    default_schema: str | None = None,
    columns: bool = True,
    shards: str | os.PathLike[str] | None = None,
) -> Harvest:
    """Harvest SQL files under paths, or a DataFrame's ``path`` and ``sql`` rows, on ``spark``: the units
    analysed by Spark jobs, their shards written to the folder ``shards`` (a temporary one by default) and merged.
    """
    options = HarvestOptions(dialect, default_schema, columns=columns)
    if _is_dataframe(paths_or_dataframe):
        plan = Plan(schema=schema)
        plan.units = [Unit(path, options, text=sql) for path, sql in _rows(paths_or_dataframe)]  # type: ignore[arg-type]
    else:
        plan = plan_harvest(paths_or_dataframe, options, schema=schema)  # type: ignore[arg-type]
    with contextlib.ExitStack() as stack:
        folder = shards if shards is not None else stack.enter_context(tempfile.TemporaryDirectory(prefix="lineage-"))
        files = ShardFiles(Path(folder), store_settings(load_profile(dialect), default_schema))
        return harvest_plan(plan, analyse=analyser(spark), shard_files=files)


def analyser(spark: SparkSession) -> Analyse:
    """A phase's units analysed by a Spark job on ``spark``'s cluster, its schema snapshot a broadcast."""
    context = spark.sparkContext

    def analyse(units: list[Unit], ddl_only: bool, catalog: SchemaCatalog | None) -> list[FileOutcome]:
        snapshot = context.broadcast(catalog)
        try:
            slices = max(1, min(len(units), context.defaultParallelism * _SLICES_A_CORE))
            numbered = context.parallelize(list(enumerate(units)), slices)
            found = numbered.mapPartitions(lambda part: _analyse_partition(part, snapshot.value, ddl_only)).collect()
        finally:
            snapshot.unpersist()
        return [outcome for _, outcome in sorted(found, key=lambda pair: pair[0])]

    return analyse


def _analyse_partition(
    units: Iterable[tuple[int, Unit]], catalog: SchemaCatalog | None, ddl_only: bool
) -> Iterator[tuple[int, FileOutcome]]:
    """An executor's share of a phase: each unit, by its number, analysed with the phase's snapshot."""
    from lineage_cli.harvest import quiet_sqlglot

    quiet_sqlglot()
    for index, unit in units:
        yield index, analyze_unit(unit, catalog, ddl_only)


@contextlib.contextmanager
def session(master: str | None, quiet: bool = False) -> Iterator[SparkSession]:
    """A Spark session for ``lineage harvest --engine spark`` (``master``: ``local[2]``, ``spark://...``; None:
    spark-submit's or the environment's), stopped at the end; an ``InputError`` when pyspark is absent."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise InputError(_MISSING) from None
    builder = SparkSession.builder.appName("lineage harvest")
    if master is not None:
        builder = builder.master(master)
        if master.startswith("local"):  # workers of this Python, with its packages, not the first python3 on PATH
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if quiet:
        builder = builder.config("spark.ui.showConsoleProgress", "false")
    spark = builder.getOrCreate()
    if quiet:
        spark.sparkContext.setLogLevel("ERROR")
    try:
        yield spark
    finally:
        spark.stop()


def _is_dataframe(value: Any) -> bool:
    return hasattr(value, "toLocalIterator") and hasattr(value, "columns")


def _rows(frame: DataFrame) -> Sequence[tuple[str, str]]:
    """A DataFrame's ``path`` and ``sql`` rows, sorted by path: a harvest's units are in its files' order."""
    missing = {"path", "sql"} - set(frame.columns)
    if missing:
        raise InputError(f"the DataFrame to harvest has no {' or '.join(sorted(missing))} column (path, sql)")
    return sorted((row["path"], row["sql"]) for row in frame.select("path", "sql").toLocalIterator())
