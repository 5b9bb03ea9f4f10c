"""``make bench``: harvest throughput and query latency, each beside a baseline.

Generates a warehouse with ``../shared/bench/gen_warehouse.py`` (cached in ``bench-out/``),
then prints one table:

* harvest statements/s over all statements (noise included): sqlglot parsing alone vs our
  table-level harvest (``bench/harvest.py`` has the column-level and parallel figures);
* a cold ``lineage up`` process vs a cold Python process answering the same question
  with a SQLite recursive CTE over an indexed edges table (the do-it-yourself baseline).
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path

from harvest import generate  # bench/ is the script's folder, so on sys.path
from processes import BIN, OUT, cold, warehouse_parser

SQLITE_UP = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute('''WITH RECURSIVE up(name) AS (
    SELECT ? UNION SELECT e.source FROM edges e JOIN up ON e.target = up.name)
    SELECT name FROM up''', (sys.argv[2],)).fetchall()
print(len(rows))
"""


def sql_texts(warehouse: Path) -> list[tuple[Path, str]]:
    return [(p, p.read_text()) for p in sorted((warehouse / "sql").rglob("*.sql"))]


def parse_only(texts: list[tuple[Path, str]], dialect: str) -> tuple[int, float]:
    import sqlglot

    started, statements = time.perf_counter(), 0
    for _, sql in texts:
        statements += len(sqlglot.parse(sql, read=dialect))
    return statements, time.perf_counter() - started


def table_harvest(warehouse: Path, dialect: str) -> tuple[int, float, object]:
    from lineage_cli.harvest.batch import harvest

    result = harvest([warehouse / "sql"], dialect=dialect, columns=False)
    return result.statements, result.seconds, result


def sqlite_baseline(truth: dict, path: Path) -> Path:
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE edges (source TEXT, target TEXT)")
    db.executemany("INSERT INTO edges VALUES (?, ?)", truth["table_edges"])
    db.execute("CREATE INDEX edges_target ON edges (target)")
    db.commit()
    db.close()
    return path


def deepest_mart(truth: dict) -> str:
    upstream: dict[str, set[str]] = {}
    for source, target in truth["table_edges"]:
        upstream.setdefault(target, set()).add(source)

    def closure(name: str) -> int:
        seen, stack = {name}, [name]
        while stack:
            for source in upstream.get(stack.pop(), ()):
                if source not in seen:
                    seen.add(source)
                    stack.append(source)
        return len(seen)

    marts = [t for t in upstream if t.startswith("mart.")]
    return max(sorted(marts), key=closure)


def main() -> None:
    parser = warehouse_parser(__doc__)
    parser.add_argument("--repeat", type=int, default=21, help="fresh processes per cold command")
    args = parser.parse_args()

    warehouse = generate(args.tables, args.dialect)
    truth = json.loads((warehouse / "ground_truth.json").read_text())
    texts = sql_texts(warehouse)
    parsed, parse_seconds = parse_only(texts, args.dialect)
    statements, harvest_seconds, result = table_harvest(warehouse, args.dialect)

    from lineage_cli.store.writer import write_store

    store = OUT / f"{warehouse.name}.lin"
    write_store(result.graph, store, {"default_schema": None})
    mart = deepest_mart(truth)
    db = sqlite_baseline(truth, OUT / f"{warehouse.name}.sqlite")
    commands = {
        "ours": [str(BIN / "lineage"), "up", mart, "--store", str(store), "--format", "json"],
        "theirs": [sys.executable, "-c", SQLITE_UP, str(db), mart],
        "python": [sys.executable, "-c", "pass"],
    }
    timed = cold(commands, args.repeat)
    ours, theirs, python_alone = (timed[key][0] for key in commands)

    rows = [
        ("harvest, statements/s (all statements)", "sqlglot parse alone", parsed / parse_seconds,
         statements / harvest_seconds, "x"),
        (f"cold `lineage up {mart}`, ms", "python + SQLite recursive CTE", theirs * 1000, ours * 1000, "ms"),
        ("cold `python -c pass`, ms", "", python_alone * 1000, python_alone * 1000, "ms"),
    ]  # fmt: skip
    print(
        f"warehouse: {args.tables} tables, {args.dialect}, {len(texts)} files, {result.lineage_statements} "
        f"lineage statements of {statements}; store {store.stat().st_size:,} bytes"
    )
    print(f"{'measure':<52}{'baseline':>12}{'lineage':>12}{'ratio':>10}   baseline is")
    for label, baseline_name, baseline, ours_value, _ in rows:
        ratio = ours_value / baseline if baseline else float("nan")
        print(f"{label:<52}{baseline:>12.1f}{ours_value:>12.1f}{ratio:>9.2f}x   {baseline_name}")


if __name__ == "__main__":
    main()
