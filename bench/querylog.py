"""``make bench``, query-log part: the harvest rate (rows per second) and peak memory of ``lineage harvest
--query-log`` on a generated log of a million rows.

The log (``bench-out/querylog_ROWS.jsonl``, made once) is the generic JSON lines format: the statements of a
generated warehouse (``../shared/bench/gen_warehouse.py``, its SET / DROP noise included) in rotation, each
row with its layer's schema as the default and a time an hour after the last, the day of that time in its dated
filters (so that no two runs of a statement have the same text: the fingerprint, not the text, finds the
repeats), and one row in a hundred failed.  Then the fingerprint's two candidates on a sample of the rows:
this token-level normalization against sqlglot's normalized SQL (parse, literals replaced, SQL generated again).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from processes import GEN, OUT, bench_parser, timed_process  # bench/ is the script's folder, so on sys.path

from lineage_cli.harvest.batch import usable_cpus

_STATEMENT_END = re.compile(r";\s*\n")
_FILTER_LITERAL = re.compile(r"'\d{4}-\d{2}-\d{2}'")
_START = 1_700_000_000  # the first row's time: rows are an hour apart


def warehouse_statements(tables: int) -> list[tuple[str, str]]:
    """(default schema, statement) of every statement of a generated warehouse, file by file."""
    out = OUT / f"wh_hive_{tables}"
    if not (out / "ground_truth.json").is_file():
        command = [sys.executable, str(GEN), "--tables", str(tables), "--dialect", "hive", "--out", str(out)]
        subprocess.run(command, check=True, capture_output=True)
    found = []
    for path in sorted((out / "sql").rglob("*.sql")):
        for statement in _STATEMENT_END.split(path.read_text() + "\n"):
            if statement.strip():
                found.append((path.parent.name, statement.strip()))
    return found


def generate_log(rows: int, tables: int) -> tuple[Path, int]:
    """The log of ``rows`` rows (made once), and how many distinct statements it rotates through."""
    statements = warehouse_statements(tables)
    log = OUT / f"querylog_{rows}.jsonl"
    if not log.is_file():
        partial = log.with_suffix(".partial")
        with partial.open("w", encoding="utf-8") as out:
            for row in range(rows):
                schema, sql = statements[row % len(statements)]
                when = _START + 3600 * row
                day = time.strftime("'%Y-%m-%d'", time.gmtime(when))  # the day of its run in its dated filters
                record = {"sql": _FILTER_LITERAL.sub(day, sql), "default_schema": schema, "user": "etl", "time": when}
                if row % 100 == 99:
                    record["status"] = "failed"
                out.write(json.dumps(record) + "\n")
        partial.rename(log)
    return log, len(statements)


def fingerprint_rates(log: Path, sample: int) -> tuple[float, float]:
    """Rows per second of the token fingerprint and of sqlglot's normalized SQL, on the log's first rows."""
    import sqlglot
    from sqlglot import exp

    from lineage_cli.harvest.inputs.querylog.fingerprint import fingerprint

    with log.open(encoding="utf-8") as lines:
        texts = [json.loads(next(lines))["sql"] for _ in range(sample)]
    started = time.perf_counter()
    for text in texts:
        fingerprint(text, None, "stg")
    tokens = time.perf_counter() - started
    started = time.perf_counter()
    for text in texts:
        try:
            for tree in sqlglot.parse(text, read="hive"):
                if tree is not None:
                    tree.transform(lambda n: exp.Placeholder() if isinstance(n, exp.Literal) else n).sql("hive")
        except sqlglot.errors.SqlglotError:
            pass
    parsed = time.perf_counter() - started
    return sample / tokens, sample / parsed


def harvest_log(log: Path, jobs: int) -> tuple[float, float | None, str]:
    """Wall seconds, peak RSS (MB) and summary of ``lineage harvest`` of the log with ``jobs`` processes."""
    store = OUT / "querylog-bench" / "graph.lin"
    shutil.rmtree(store.parent, ignore_errors=True)
    command = [sys.executable, "-m", "lineage_cli", "harvest", "--query-log", str(log), "--log-format", "jsonl"]
    command += ["--dialect", "hive", "--store", str(store), "--no-cache", "-q", "-j", str(jobs)]
    seconds, peak, done = timed_process(command)
    shutil.rmtree(store.parent, ignore_errors=True)
    if done.returncode != 0:
        sys.exit(f"query-log harvest failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds, peak, done.stdout


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in the generated log")
    parser.add_argument("--tables", type=int, default=200, help="tables of the warehouse its statements come from")
    parser.add_argument("--sample", type=int, default=2000, help="rows the fingerprint candidates are timed on")
    args = parser.parse_args()
    log, distinct = generate_log(args.rows, args.tables)
    size = log.stat().st_size / 1e6
    print(f"query log: {args.rows:,} rows ({size:,.0f} MB), {distinct:,} statements of a {args.tables}-table warehouse")
    for jobs in sorted({1, usable_cpus()}):
        seconds, peak, summary = harvest_log(log, jobs)
        rate = f"{seconds:.1f} s, {args.rows / seconds:,.0f} rows/s"
        print(f"  lineage harvest --query-log -j {jobs}: {rate}, peak RSS {peak or 0:,.0f} MB (the largest process)")
    for line in summary.splitlines():
        print(f"    {line}")
    tokens, parsed = fingerprint_rates(log, args.sample)
    ratio = f"{tokens / parsed:.0f}x"
    print(f"  fingerprint: tokens {tokens:,.0f} rows/s, sqlglot's normalized SQL {parsed:,.0f} rows/s ({ratio})")


if __name__ == "__main__":
    main()
