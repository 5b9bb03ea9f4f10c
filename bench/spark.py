"""``make bench``: the harvest on a local Spark (``--engine spark --master local[2]``) against the local one.

Harvests the generated warehouse (``bench-out/``, as ``bench/harvest.py`` makes it; 2,000 tables by default) at
column level without the cache, three ways, each a fresh process timed round-robin: the local process pool
with ``--jobs 2`` and with one job, and a Spark job on ``local[2]`` (its JVM's start included, and the shards
written and merged), and checks that the Spark store is the local one byte for byte.  Then, in this process,
the Spark harvest once its session is up (``lineage_cli.spark.harvest``): what a cluster that is already
running pays.  Skips, saying so, without pyspark.
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harvest import generate  # bench/ is the script's folder, so on sys.path
from processes import BIN, ENV, OUT, warehouse_parser


def main() -> None:
    parser = warehouse_parser(__doc__)
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each way (the median is printed)")
    arguments = parser.parse_args()
    if importlib.util.find_spec("pyspark") is None:
        print("spark bench skipped: pyspark is absent (pip install 'lineage-cli[spark]')")
        return
    warehouse = generate(arguments.tables, arguments.dialect)
    base = [str(BIN / "python"), "-m", "lineage_cli", "harvest", str(warehouse / "sql"), "--dialect", arguments.dialect]
    base += ["--schema", str(warehouse / "schema.json"), "--no-cache", "-q"]
    ways = {
        "local, --jobs 2": ["--jobs", "2"],
        "local, --jobs 1": ["--jobs", "1"],
        "spark, local[2]": ["--engine", "spark", "--master", "local[2]"],
    }
    timings: dict[str, list[float]] = {label: [] for label in ways}
    stores = {label: OUT / f"spark_bench_{number}.lin" for number, label in enumerate(ways)}
    for _ in range(arguments.runs):
        for label, extra in ways.items():
            store = stores[label]
            started = time.perf_counter()
            subprocess.run([*base, *extra, "--store", str(store)], check=True, env=ENV, capture_output=True)
            timings[label].append(time.perf_counter() - started)
    same = stores["spark, local[2]"].read_bytes() == stores["local, --jobs 2"].read_bytes()
    assert same, "the Spark harvest's store is not the local one"
    what = f"{arguments.tables:,} tables ({warehouse.name}), columns, no cache"
    print(f"harvest of {what}: wall time, median of {arguments.runs}")
    for label, seconds in timings.items():
        print(f"  {label:24s} {statistics.median(seconds):6.2f} s  (a fresh process)")
    up = _in_session(warehouse, arguments.dialect)
    print(f"  {'spark, session up':24s} {up:6.2f} s  (lineage_cli.spark.harvest)")
    print("  the Spark store is the local one, byte for byte")


def _in_session(warehouse: Path, dialect: str) -> float:
    from lineage_cli.harvest.schema import SchemaCatalog
    from lineage_cli.spark import harvest, session

    schema = SchemaCatalog.from_file(str(warehouse / "schema.json"))
    with session("local[2]", quiet=True) as spark:
        harvest(spark, [warehouse / "sql"], dialect, schema=schema)  # the workers started, the modules imported
        started = time.perf_counter()
        harvest(spark, [warehouse / "sql"], dialect, schema=schema)
        return time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
