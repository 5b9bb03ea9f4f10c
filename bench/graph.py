"""``make bench``, graph part: walks on a generated 1M-node / 5M-edge lineage graph, side by side.

Inputs, cached in ``bench-out/``: ``gen_warehouse.py --edges-only`` writes the graph (``.npy`` arrays and
``nodes.tsv``); our store is built from the arrays directly through ``GraphArrays`` (timed); a names-based
TSV of the same edges is written once for ``lineage import`` (timed, target under a minute); a SQLite
database holds nodes and edges tables with covering indexes (load and index times recorded when built).

Every engine runs in its own worker process, so each one's peak RSS is its own:

* ``ours``: ``bfs`` over the memory-mapped store with the query's edge-type mask (the complete walk: nodes,
  hops, edge sources, targets, attributes), in a warm session (numpy loaded); for table-level queries also
  the whole ``lineage()`` answer (folded, named, sorted) and its ``--format json`` text;
* ``C``: ``bench/cbfs.c`` compiled with the C compiler when there is one, over the same memory-mapped CSR
  arrays, writing the same walk: the physical-limit reference;
* ``SQLite``: ``WITH RECURSIVE reach(node) AS (SELECT ? UNION SELECT ...)`` over the indexed edges table
  (UNION, not UNION ALL, so cycles end), the do-it-yourself baseline; it returns the reached nodes only;
* ``networkx``: ``nx.descendants`` / ``nx.ancestors`` on a graph of the query's edge types (built apart).

Then cold processes: ``lineage up MART`` and ``lineage down HUB --format json -o out.json`` against a cold
``python + sqlite3`` process running the same recursive CTE.  ``PYTHONDONTWRITEBYTECODE=1`` would make
every cold run recompile our modules, so the bench runs ``compileall`` on ``lineage_cli`` first.  Warm
timings are medians of repeated runs after a warm-up run, the engines of a query taking turns three times
(``--rounds``) with the median of the rounds reported; cold ones medians of fresh processes, round-robin.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from processes import (  # bench/ is the script's folder, so on sys.path
    BIN,
    ENV,
    GEN,
    OUT,
    REPO,
    bench_parser,
    cold,
    status_mb,
    timed_process,
)

if str(REPO) not in sys.path:  # run as a script: import the working tree's package
    sys.path.insert(0, str(REPO))

from lineage_cli.model import EdgeType, NodeKind  # noqa: E402
from lineage_cli.store.layout import TYPE_MASK, pack_attributes  # noqa: E402
from lineage_cli.walk.traverse import slice_part  # noqa: E402

if TYPE_CHECKING:  # numpy stays out of the SQLite worker's peak RSS
    import numpy as np

    from lineage_cli.store.arrays import GraphArrays

# graph name -> (nodes, edges); g1m is the 1M-node / 5M-edge graph
SIZES = {"g1m": (1_000_000, 5_000_000), "g100k": (100_000, 500_000)}
# gen_warehouse edge-type bit -> our edge type (its `lineage import` name is the type's label)
GEN_TYPES = {1: EdgeType.FLOW, 2: EdgeType.PROJECTION, 4: EdgeType.PREDICATE, 8: EdgeType.CONTAINS}
TABLE_FLOW = (EdgeType.READ, EdgeType.WRITE, EdgeType.FLOW)  # what `lineage up/down TABLE` follows
EVERY_TYPE = tuple(EdgeType)  # "everything": the walk then skips the type check, and so does the C BFS
DEEP = ("a", "b", "c", "d")  # the deep queries the targets are about
TARGETS = {"sqlite": 25.0, "c": 3.0, "up": 0.100, "down": 0.300, "import": 60.0, "bytes": 16.0}

SQLITE_COLD = """
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
(start,) = db.execute("SELECT id FROM nodes WHERE name = ?", (sys.argv[3],)).fetchone()
near, far = ("source", "target") if sys.argv[2] == "down" else ("target", "source")
rows = db.execute(f'''WITH RECURSIVE reach(node) AS (
    SELECT ? UNION SELECT e.{far} FROM edges e JOIN reach r ON e.{near} = r.node WHERE e.type IN (1, 2, 6))
    SELECT n.name FROM reach JOIN nodes n ON n.id = reach.node ORDER BY n.name''', (start,)).fetchall()
text = json.dumps({"nodes": [name for (name,) in rows]}, indent=2)
if len(sys.argv) > 4:
    open(sys.argv[4], "w").write(text)
else:
    print(text)
"""


# -- inputs ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Query:
    key: str
    label: str
    start: int  # store node id
    name: str
    direction: str
    types: tuple[int, ...]  # EdgeType values to follow
    table_level: bool  # also time the whole `lineage()` answer and its JSON

    @property
    def mask(self) -> int:
        return sum(1 << t for t in self.types)


def generate(name: str) -> Path:
    nodes, edges = SIZES[name]
    out = OUT / name
    if not (out / "graph_meta.json").is_file():
        command = [sys.executable, str(GEN), "--edges-only", "--nodes", str(nodes), "--edges", str(edges)]
        subprocess.run([*command, "--format", "both", "--out", str(out)], check=True, capture_output=True)
    return out


def graph_arrays(graph: Path) -> tuple[GraphArrays, np.ndarray]:
    """Our arrays for the generated graph, and the generator id -> store id map (ids are name ranks)."""
    import numpy as np

    from lineage_cli.store.arrays import GraphArrays

    with (graph / "nodes.tsv").open(encoding="utf-8") as handle:
        next(handle)
        names = [line.split("\t", 3)[2] for line in handle]
    order = np.argsort(np.array(names), kind="stable")
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    gen_kind = np.load(graph / "node_kind.npy")[order]  # 0 table, 1 column
    sources, targets = rank[np.load(graph / "src.npy")], rank[np.load(graph / "dst.npy")]
    gen_type = np.load(graph / "type.npy")
    packed = np.zeros(16, dtype="<u2")
    for bit, edge_type in GEN_TYPES.items():
        packed[bit] = pack_attributes(edge_type, 0)
    containers = np.full(len(names), -1, dtype="<i4")
    contains = gen_type == 8
    containers[targets[contains]] = sources[contains]
    arrays = GraphArrays(
        names=[names[i] for i in order],
        kinds=np.where(gen_kind == 0, NodeKind.TABLE, NodeKind.COLUMN).astype("u1"),
        containers=containers,
        node_file=np.full(len(names), -1, dtype="<i4"),
        node_line=np.zeros(len(names), dtype="<i4"),
        files=[],
        sources=sources.astype("<i4"),
        targets=targets.astype("<i4"),
        attributes=packed[gen_type],
        statements=np.full(sources.size, -1, dtype="<i4"),
        flags=np.zeros(len(names), dtype="u1"),  # (no statement here is read approximately)
    )
    return arrays, rank


def build_store(graph: Path, arrays: GraphArrays) -> tuple[Path, float]:
    from lineage_cli.store.writer import write_store

    path = OUT / f"{graph.name}.lin"
    started = time.perf_counter()
    write_store(arrays, path, {"default_schema": None, "tool": "bench/graph.py", "source": graph.name})
    return path, time.perf_counter() - started


def names_tsv(graph: Path, arrays: GraphArrays) -> Path:
    """The same edges as a names-based TSV for `lineage import` (written once)."""
    path = graph / "edges_named.tsv"
    if path.is_file():
        return path
    names = arrays.names
    labels = {int(pack_attributes(t, 0)): t.label for t in GEN_TYPES.values()}
    rows = zip(arrays.sources.tolist(), arrays.targets.tolist(), arrays.attributes.tolist(), strict=True)
    temporary = path.with_suffix(".tmp")
    with temporary.open("w", encoding="utf-8") as out:
        out.write("source\ttarget\ttype\n")
        out.writelines(f"{names[s]}\t{names[t]}\t{labels[a]}\n" for s, t, a in rows)
    temporary.replace(path)
    return path


def sqlite_db(graph: Path, arrays: GraphArrays) -> tuple[Path, dict[str, float]]:
    """The DIY baseline: nodes and edges tables, covering indexes both ways; build times kept beside it."""

    def load(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE nodes (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        db.execute("CREATE TABLE edges (source INTEGER NOT NULL, target INTEGER NOT NULL, type INTEGER NOT NULL)")
        db.executemany("INSERT INTO nodes VALUES (?, ?)", enumerate(arrays.names))
        db.executemany("INSERT INTO edges VALUES (?, ?, ?)", _edge_rows(arrays))

    indexes = (
        "CREATE INDEX edges_down ON edges (source, type, target)",
        "CREATE INDEX edges_up ON edges (target, type, source)",
        "CREATE UNIQUE INDEX nodes_name ON nodes (name)",
    )
    return _database(OUT / f"{graph.name}.sqlite", load, indexes)


def sqlite_named_db(graph: Path, arrays: GraphArrays) -> tuple[Path, dict[str, float]]:
    """The baseline a team builds first: one edges table named by text, indexed on (source, type) and
    (target, type); load and index build times kept beside it (they are the import's target)."""

    def load(db: sqlite3.Connection) -> None:
        names = arrays.names
        db.execute("CREATE TABLE edges (source TEXT NOT NULL, target TEXT NOT NULL, type INTEGER NOT NULL)")
        db.executemany(
            "INSERT INTO edges VALUES (?, ?, ?)", ((names[s], names[t], k) for s, t, k in _edge_rows(arrays))
        )

    indexes = ("CREATE INDEX edges_down ON edges (source, type)", "CREATE INDEX edges_up ON edges (target, type)")
    return _database(OUT / f"{graph.name}_named.sqlite", load, indexes)


def _edge_rows(arrays: GraphArrays) -> Any:  # noqa: ANN401 - an iterator of (source, target, type)
    return zip(arrays.sources.tolist(), arrays.targets.tolist(), (arrays.attributes & TYPE_MASK).tolist(), strict=True)


def _database(
    path: Path, load: Callable[[sqlite3.Connection], None], indexes: tuple[str, ...]
) -> tuple[Path, dict[str, float]]:
    """A SQLite database built once (``load`` its tables, then ``indexes``), and the seconds each step took,
    kept beside it: a cached database reports the times of the run that built it."""
    timings_path = path.with_name(path.name + ".json")
    if path.is_file() and timings_path.is_file():
        return path, {**json.loads(timings_path.read_text()), "cached": 1.0}
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")
    started = time.perf_counter()
    load(db)
    db.commit()
    loaded = time.perf_counter()
    for index in indexes:
        db.execute(index)
    db.commit()
    db.close()
    timings = {"load": loaded - started, "index": time.perf_counter() - loaded}
    timings_path.write_text(json.dumps(timings))
    return path, timings


def queries(graph: Path, arrays: GraphArrays, rank: np.ndarray) -> list[Query]:
    meta = json.loads((graph / "graph_meta.json").read_text())
    hub, mart = (meta["query_nodes"][k] for k in ("hub_source", "deep_mart"))
    hub_id, mart_id = int(rank[hub["id"]]), int(rank[mart["id"]])
    column = f"{mart['name']}.c00"  # the deepest mart's first column: a leaf with a deep column lineage
    leaf = arrays.names.index(column) if column in arrays.names else mart_id
    projection = (EdgeType.PROJECTION,)
    return [
        Query("a", "down hub, tables", hub_id, hub["name"], "down", TABLE_FLOW, True),
        Query("b", "down hub, all edges", hub_id, hub["name"], "down", EVERY_TYPE, False),
        Query("c", "up deep mart, tables", mart_id, mart["name"], "up", TABLE_FLOW, True),
        Query("d", "up deep mart, all edges", mart_id, mart["name"], "up", EVERY_TYPE, False),
        Query("e", "up leaf column, projection", leaf, arrays.names[leaf], "up", projection, True),
        Query("f", "down leaf column, projection", leaf, arrays.names[leaf], "down", projection, True),
    ]


# -- engines (each in a worker process) ---------------------------------------------------------------------
def measure(run: Callable[[], Any], repeat: int, budget: float = 4.0, least: float = 0.3) -> tuple[float, Any]:
    """Median seconds of ``repeat`` runs after a warm-up run (stopping early past ``budget`` seconds), or of as
    many as fill ``least`` seconds: a query of a millisecond timed nine times is at the mercy of one slow
    spell of a shared machine, timed a few hundred times it is not."""
    started = time.perf_counter()
    value = run()
    times: list[float] = []
    while not times or (
        (len(times) < repeat or time.perf_counter() - started < least) and time.perf_counter() - started < budget
    ):
        begin = time.perf_counter()
        value = run()
        times.append(time.perf_counter() - begin)
    return statistics.median(times), value


def peak_rss_mb() -> float:
    """This process's peak RSS: from /proc where there is one, else ru_maxrss."""
    peak = status_mb("self")
    if peak is None:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return peak


def engine_ours(spec: dict[str, Any], chosen: list[Query], repeat: int) -> dict[str, Any]:
    # A warm session has numpy loaded (its first wide walk imported it), so every hop wider than a few
    # hundred entries runs vectorized; the cold runs below show the start-up path without numpy.
    import numpy  # noqa: F401

    from lineage_cli import open_store
    from lineage_cli.emit.formats import emit
    from lineage_cli.store.reader import Store
    from lineage_cli.walk.query import lineage
    from lineage_cli.walk.traverse import bfs

    opened, store = measure(lambda: Store(spec["store"]), 20)
    results: dict[str, Any] = {"open": opened}
    public = open_store(spec["store"])
    for query in chosen:
        # bfs returns the complete walk (a vectorized one as numpy arrays), as the C BFS writes it
        seconds, walk = measure(lambda q=query: bfs(store, [q.start], q.direction, q.mask), repeat)
        row = {"walk": seconds, "nodes": len(walk.nodes), "edges": len(walk.sources)}
        if query.key in DEEP:  # what a user calls: the public API, its answer named
            row["api"], named = measure(lambda q=query: api_call(public, q), repeat)
            row["api_answer"] = [len(named.nodes), len(named.edges)]
        if query.table_level:
            row["lineage"], answer = measure(lambda q=query: lineage(store, q.name, q.direction), repeat)
            row["json"], _ = measure(lambda a=answer: emit(a, "json"), repeat)
            row["answer"] = [len(answer.nodes), len(answer.edges)]
        results[query.key] = row
    results["rss"] = peak_rss_mb()
    return results


def api_call(store: Any, query: Query) -> Any:  # noqa: ANN401 - a LineageStore and its LineageResult
    """``store.up(name)`` / ``store.down(name)``: the table plan for a table-flow query, else a plan that follows
    and shows every edge type."""
    from lineage_cli.walk.walkplan import EdgeRule, WalkPlan

    walk = store.down if query.direction == "down" else store.up
    if set(query.types) == set(TABLE_FLOW):
        return walk(query.name)
    return walk(query.name, walkplan=WalkPlan("every edge", "", tuple(EdgeRule(EdgeType(t)) for t in query.types)))


def engine_c(spec: dict[str, Any], chosen: list[Query], repeat: int) -> dict[str, Any]:
    from lineage_cli.store.reader import Store

    library = ctypes.CDLL(spec["cbfs"])
    library.cbfs.restype = ctypes.c_int64
    store = Store(spec["store"])
    results: dict[str, Any] = {}
    for query in chosen:
        prefix = "fwd" if query.direction == "down" else "bwd"
        arrays = [store.numpy_array(f"{prefix}_{part}") for part in ("offsets", "split", "node", "attr")]
        # as bfs does: the part of each slice the mask needs, and no type check when it keeps all of it
        part = slice_part(query.mask)
        out = CBuffers(store.node_count, store.edge_count)
        seconds, (nodes, edges) = measure(lambda q=query, a=arrays, p=part, o=out: c_bfs(library, a, q, p, o), repeat)
        results[query.key] = {"walk": seconds, "nodes": nodes, "edges": edges}
    results["rss"] = peak_rss_mb()
    return results


class CBuffers:
    """The compiled walk's output arrays, allocated once per worker and kept between calls, as a C caller would
    keep them: allocating 1M + 5M entries per call costs more than a small walk, and would flatter ours."""

    def __init__(self, node_count: int, entries: int) -> None:
        import numpy as np

        self.nodes, self.hops = np.empty(node_count, dtype=np.int32), np.empty(node_count, dtype=np.int32)
        self.origins, self.targets = np.empty(entries, dtype=np.int32), np.empty(entries, dtype=np.int32)
        self.kinds = np.empty(entries, dtype=np.uint16)


def c_bfs(
    library: ctypes.CDLL, arrays: list[np.ndarray], query: Query, part: tuple[int, bool], out: CBuffers
) -> tuple[int, int]:
    """One compiled walk into ``out``."""
    import numpy as np

    offsets, split, neighbours, attributes = arrays
    kept = ctypes.c_int64(0)
    starts = np.array([query.start], dtype=np.int32)
    pointer = ctypes.c_void_p
    reached = library.cbfs(
        *(a.ctypes.data_as(pointer) for a in (offsets, split, neighbours, attributes)),
        ctypes.c_int64(offsets.size - 1),
        starts.ctypes.data_as(pointer),
        ctypes.c_int64(1),
        ctypes.c_uint32(query.mask),
        ctypes.c_int32(part[0]),
        ctypes.c_int32(part[1]),
        ctypes.c_int64(-1),
        *(a.ctypes.data_as(pointer) for a in (out.nodes, out.hops, out.origins, out.targets, out.kinds)),
        ctypes.byref(kept),
    )
    return int(reached), int(kept.value)


def engine_sqlite(spec: dict[str, Any], chosen: list[Query], repeat: int, named: bool = False) -> dict[str, Any]:
    """The recursive CTE over the integer-id database (``named``: over the text-named one, answering names)."""
    db = sqlite3.connect(spec["sqlite_names" if named else "sqlite"])
    results: dict[str, Any] = {}
    for query in chosen:
        sql, start = recursive_cte(query), query.name if named else query.start
        seconds, rows = measure(lambda s=sql, v=start: db.execute(s, (v,)).fetchall(), repeat)
        results[query.key] = {"walk": seconds, "nodes": len(rows)}
    results["rss"] = peak_rss_mb()
    return results


def recursive_cte(query: Query) -> str:
    near, far = ("source", "target") if query.direction == "down" else ("target", "source")
    every = set(query.types) >= set(EdgeType)
    where = "" if every else f" WHERE e.type IN ({', '.join(str(int(t)) for t in query.types)})"
    return (
        f"WITH RECURSIVE reach(node) AS (SELECT ? UNION SELECT e.{far} FROM edges e "
        f"JOIN reach r ON e.{near} = r.node{where}) SELECT node FROM reach"
    )


def engine_networkx(spec: dict[str, Any], chosen: list[Query], repeat: int) -> dict[str, Any]:
    import networkx as nx
    import numpy as np

    from lineage_cli.store.reader import Store

    store = Store(spec["store"])
    offsets = store.numpy_array("fwd_offsets")
    sources = np.repeat(np.arange(offsets.size - 1, dtype=np.int32), np.diff(offsets))
    targets, types = store.numpy_array("fwd_node"), store.numpy_array("fwd_attr") & TYPE_MASK
    graphs: dict[frozenset[int], Any] = {}
    results: dict[str, Any] = {"build": 0.0}
    for query in chosen:
        key = frozenset(int(t) for t in query.types)
        if key not in graphs:
            started = time.perf_counter()
            keep = np.isin(types, list(key))
            graph = nx.DiGraph()
            graph.add_nodes_from(range(offsets.size - 1))
            graph.add_edges_from(zip(sources[keep].tolist(), targets[keep].tolist(), strict=True))
            graphs[key] = graph
            results["build"] += time.perf_counter() - started
        walk = nx.descendants if query.direction == "down" else nx.ancestors
        seconds, reached = measure(lambda g=graphs[key], w=walk, q=query: w(g, q.start), repeat)
        results[query.key] = {"walk": seconds, "nodes": len(reached) + 1}
    results["rss"] = peak_rss_mb()
    return results


ENGINES: dict[str, Callable[[dict[str, Any], list[Query], int], dict[str, Any]]] = {
    "ours": engine_ours,
    "c": engine_c,
    "sqlite": engine_sqlite,
    "sqlite_names": functools.partial(engine_sqlite, named=True),
    "networkx": engine_networkx,
}


def interleaved(spec: dict[str, Any], library: Path | None, repeat: int, rounds: int) -> dict[str, dict[str, Any]]:
    """Ours, C and SQLite query by query, one worker process per engine and query, the engines taking turns
    ``rounds`` times (ours, C, SQLite, ours, ...): a slow spell of a shared machine then falls on every
    engine of a query alike, not on one engine's series.  Each timing is the median over the rounds."""
    slow = {**spec, "repeat": min(repeat, 3)}
    workers = {"ours": spec, "sqlite": slow, "sqlite_names": slow}
    if library:
        workers["c"] = {**spec, "cbfs": str(library)}
    engines: dict[str, dict[str, Any]] = {engine: {"rss": 0.0} for engine in workers}
    for query in spec["queries"]:
        samples: dict[str, list[dict[str, Any]]] = {engine: [] for engine in workers}
        for _ in range(rounds):
            for engine, engine_spec in workers.items():
                result = run_worker(engine, {**engine_spec, "queries": [query]})
                engines[engine]["rss"] = max(engines[engine]["rss"], result.pop("rss"))
                samples[engine].append(result)
        for engine, results in samples.items():
            engines[engine].update(_medians(results))
    return engines


def _medians(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One result from several rounds: the median of each timing (a float), the rest as the first round has it."""
    merged: dict[str, Any] = {}
    for key, first in results[0].items():
        values = [result[key] for result in results]
        if isinstance(first, dict):
            merged[key] = _medians(values)
        elif isinstance(first, float):
            merged[key] = statistics.median(values)
        else:
            merged[key] = first
    return merged


def run_worker(engine: str, spec: dict[str, Any]) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    try:
        command = [sys.executable, __file__, "--worker", engine, handle.name]
        done = subprocess.run(command, check=True, capture_output=True, text=True, env=ENV)
    finally:
        os.unlink(handle.name)
    return json.loads(done.stdout)


# -- processes ---------------------------------------------------------------------------------------------
def cold_runs(store: Path, sqlite: Path, chosen: dict[str, Query], repeat: int) -> dict[str, tuple]:
    lineage, python = [str(BIN / "lineage")], sys.executable
    up, down, out = chosen["c"], chosen["a"], str(OUT / "out.json")
    runs = {
        "pass": ("python -c pass", [python, "-c", "pass"]),
        "numpy": ("python -c 'import numpy'", [python, "-c", "import numpy"]),
        "help": ("lineage --help (start-up: python + click + our CLI module)", [*lineage, "--help"]),
        "up": (f"lineage up {up.name}", [*lineage, "up", up.name, "--store", str(store), "--format", "json"]),
        "up-sqlite": ("  python + sqlite3, same CTE (names)", [python, "-c", SQLITE_COLD, str(sqlite), "up", up.name]),
        "down": (
            f"lineage down {down.name} --format json -o out.json",
            [*lineage, "down", down.name, "--store", str(store), "--format", "json", "-o", out],
        ),
        "down-sqlite": (
            "  python + sqlite3, same CTE -o out.json (names)",
            [python, "-c", SQLITE_COLD, str(sqlite), "down", down.name, out],
        ),
    }
    measured = cold({key: command for key, (_, command) in runs.items()}, repeat)
    return {key: (label, *measured[key]) for key, (label, _) in runs.items()}


def time_import(tsv: Path, graph: Path, edges: int) -> tuple[float, float | None, str, int]:
    """Seconds, peak RSS (MB), outcome and store size of ``lineage import`` of the names TSV."""
    target = OUT / f"{graph.name}_imported.lin"
    command = [str(BIN / "lineage"), "import", str(tsv), "--format", "tsv", "--store", str(target), "--replace"]
    seconds, peak, done = timed_process(command)
    if done.returncode:
        return seconds, None, f"FAILED: {done.stderr.strip()[-300:]}", 0
    from lineage_cli.store.reader import Store

    imported = Store(target)
    same = "same edge count as the bench store" if imported.edge_count == edges else "EDGE COUNT DIFFERS"
    size = target.stat().st_size
    return seconds, peak, f"{imported.node_count:,} nodes, {imported.edge_count:,} edges ({same})", size


def compile_cbfs() -> Path | None:
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None:
        return None
    library, source = OUT / "cbfs.so", REPO / "bench" / "cbfs.c"
    if not library.is_file() or library.stat().st_mtime < source.stat().st_mtime:
        subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return library


# -- report ------------------------------------------------------------------------------------------------
def ms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.3f}" if seconds < 0.01 else f"{seconds * 1000:.1f}"


def mb(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def ratio(numerator: float | None, denominator: float | None) -> str:
    return f"{numerator / denominator:.1f}x" if numerator and denominator else "-"


def store_sizes(store: Path) -> dict[str, int]:
    from lineage_cli.store.reader import Store

    sections = Store(store).header.sections
    per_edge = ("fwd_node", "fwd_attr", "fwd_statement", "bwd_node", "bwd_attr")
    strings = ("names", "name_offsets", "files", "file_offsets", "meta")
    edge_bytes = sum(sections[s].nbytes for s in per_edge)
    string_bytes = sum(sections[s].nbytes for s in strings)
    total = store.stat().st_size
    return {"total": total, "edges": edge_bytes, "strings": string_bytes, "nodes": total - edge_bytes - string_bytes}


def print_inputs(context: dict[str, Any], engines: dict[str, dict[str, Any]]) -> None:
    edges, sizes = context["edges"], context["sizes"]
    print(f"\ngraph: {context['nodes']:,} nodes, {edges:,} edges ({context['graph']}); {os.cpu_count()} cores")
    print(
        f"store: {sizes['total']:,} bytes = {sizes['total'] / edges:.1f} B/edge in all: per-edge arrays "
        f"(both directions) {sizes['edges'] / edges:.1f} B/edge, node arrays + CSR offsets and splits "
        f"{sizes['nodes'] / edges:.1f} B/edge, string table {sizes['strings'] / edges:.1f} B/edge"
    )
    print(f"store built from arrays in {context['build']:.1f} s; opened in {ms(engines['ours']['open'])} ms")
    if "import" in context:
        seconds, peak, outcome, size = context["import"]
        print(
            f"`lineage import` of the {edges:,}-row names TSV: {seconds:.1f} s, peak RSS {mb(peak)} MB "
            f"({ratio(peak, size / 2**20)} its {size / 2**20:.0f} MB store); {outcome}"
        )
    for form, key in (("integer ids, covering indexes", "sqlite_times"), ("text names", "sqlite_names_times")):
        built = context[key]
        cached = " (measured when the cached database was built)" if built.get("cached") else ""
        print(
            f"SQLite ({form}): edges loaded in {built['load']:.1f} s, indexes built in {built['index']:.1f} s{cached}"
        )
    if "networkx" in engines:
        print(f"networkx: graphs built in {engines['networkx']['build']:.1f} s")


def print_queries(chosen: list[Query], engines: dict[str, dict[str, Any]]) -> None:
    print(
        f"\n{'warm, in-process, ms (median)':<33}{'nodes':>9}{'edges':>10}{'ours bfs':>10}{'API':>9}"
        f"{'+json':>8}{'C bfs':>9}{'SQLite':>9}{'names':>9}{'networkx':>10}"
        f"{'names/API':>11}{'ids/bfs':>9}{'API/C':>7}{'bfs/C':>7}"
    )
    for query in chosen:
        ours, c = engines["ours"][query.key], engines.get("c", {}).get(query.key, {})
        ids, names = engines["sqlite"][query.key], engines["sqlite_names"][query.key]
        nx = engines.get("networkx", {}).get(query.key, {})
        api = ours.get("api", ours.get("lineage"))
        counts = {e: engines[e][query.key]["nodes"] for e in engines if query.key in engines[e]}
        flag = "" if len(set(counts.values())) == 1 else f"  node counts differ: {counts}"
        print(
            f"({query.key}) {query.label:<29}{ours['nodes']:>9,}{ours['edges']:>10,}{ms(ours['walk']):>10}"
            f"{ms(api):>9}{ms(ours.get('json')):>8}{ms(c.get('walk')):>9}{ms(ids['walk']):>9}"
            f"{ms(names['walk']):>9}{ms(nx.get('walk')):>10}{ratio(names['walk'], api):>11}"
            f"{ratio(ids['walk'], ours['walk']):>9}{ratio(api, c.get('walk')):>7}"
            f"{ratio(ours['walk'], c.get('walk')):>7}{flag}"
        )
    print(
        "API: lineage_cli.open_store(store).up/down(name), the answer named (table plan, or every edge type); "
        "SQLite: the recursive CTE over integer ids with covering indexes (the strongest form), and names: over "
        "a text-named edges table indexed on (source, type) and (target, type), answering names (what a team builds)"
    )
    answers = ", ".join(f"({q.key}) {engines['ours'][q.key]['answer']}" for q in chosen if q.table_level)
    print(f"lineage() answers [nodes, edges] (table ones folded to dataset -> dataset): {answers}")
    print("peak RSS per engine process: " + ", ".join(f"{e} {r['rss']:.0f} MB" for e, r in engines.items()))


def print_cold(runs: dict[str, tuple]) -> None:
    print(f"\n{'cold process (median wall; .pyc precompiled)':<70}{'ms':>8}{'peak RSS MB':>13}")
    for label, seconds, peak in runs.values():
        print(f"{label:<70}{seconds * 1000:>8.1f}{mb(peak):>13}")


def print_targets(context: dict[str, Any], chosen: list[Query], engines: dict[str, dict[str, Any]]) -> None:
    """Each target of the issues, measured, met or not."""
    lines = [("per-edge arrays <= 16 B/edge", context["sizes"]["edges"] / context["edges"] <= TARGETS["bytes"])]
    if "import" in context:
        seconds, peak, _, size = context["import"]
        built = context["sqlite_names_times"]
        lines.append(
            ("`lineage import` time <= SQLite's load + index build", seconds <= built["load"] + built["index"])
        )
        lines.append(("`lineage import` peak RSS <= 1.5x its store", peak is not None and peak * 2**20 <= 1.5 * size))
    for query in (q for q in chosen if q.key in DEEP):
        api = engines["ours"][query.key]["api"]
        named = engines["sqlite_names"][query.key]["walk"]
        lines.append((f"({query.key}) API >= 25x SQLite (names)", named / api >= TARGETS["sqlite"]))
        if "c" in engines:
            lines.append((f"({query.key}) API <= 3x the C BFS", api / engines["c"][query.key]["walk"] <= TARGETS["c"]))
    cold_runs_ = context["cold"]
    lines.append(
        (
            "cold `lineage up MART --format json` <= 1.1x python + sqlite3",
            cold_runs_["up"][1] <= 1.1 * cold_runs_["up-sqlite"][1],
        )
    )
    lines.append(("cold `lineage up MART` <= 100 ms", cold_runs_["up"][1] <= TARGETS["up"]))
    lines.append(
        ("cold `lineage down HUB --format json -o out.json` <= 0.3 s", cold_runs_["down"][1] <= TARGETS["down"])
    )
    print("\ntargets:")
    for label, ok in lines:
        print(f"  {'met    ' if ok else 'NOT met'}  {label}")


# -- main --------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--small", action="store_true", help="a 100k-node / 500k-edge graph, for a quick run")
    parser.add_argument("--repeat", type=int, default=9, help="timed runs per warm query (at least)")
    parser.add_argument("--cold-repeat", type=int, default=21, help="fresh processes per cold command")
    parser.add_argument("--rounds", type=int, default=3, help="turns the engines take at each warm query")
    parser.add_argument("--no-import", action="store_true", help="skip timing `lineage import`")
    parser.add_argument("--no-networkx", action="store_true", help="skip networkx (its 5M-edge build is slow)")
    parser.add_argument("--worker", nargs=2, metavar=("ENGINE", "SPEC"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        engine, spec_path = args.worker
        spec = json.loads(Path(spec_path).read_text())
        print(json.dumps(ENGINES[engine](spec, [Query(**q) for q in spec["queries"]], spec["repeat"])))
        return

    OUT.mkdir(exist_ok=True)
    graph = generate("g100k" if args.small else "g1m")
    arrays, rank = graph_arrays(graph)
    store, build_seconds = build_store(graph, arrays)
    chosen = queries(graph, arrays, rank)
    sqlite, sqlite_times = sqlite_db(graph, arrays)
    sqlite_names, sqlite_names_times = sqlite_named_db(graph, arrays)
    context: dict[str, Any] = {
        "graph": graph.name, "nodes": arrays.node_count, "edges": arrays.edge_count, "build": build_seconds,
        "sizes": store_sizes(store), "sqlite_times": sqlite_times, "sqlite_names_times": sqlite_names_times,
    }  # fmt: skip
    if not args.no_import:
        context["import"] = time_import(names_tsv(graph, arrays), graph, arrays.edge_count)
    del arrays, rank  # the workers map the store themselves
    spec = {
        "store": str(store),
        "sqlite": str(sqlite),
        "sqlite_names": str(sqlite_names),
        "repeat": args.repeat,
        "queries": [asdict(q) for q in chosen],
    }
    library = compile_cbfs()
    engines = interleaved(spec, library, args.repeat, args.rounds)
    if not args.no_networkx:
        engines["networkx"] = run_worker("networkx", {**spec, "repeat": min(args.repeat, 3)})
    context["cold"] = cold_runs(store, sqlite, {q.key: q for q in chosen}, args.cold_repeat)
    print_inputs(context, engines)
    print_queries(chosen, engines)
    print_cold(context["cold"])
    print_targets(context, chosen, engines)
    if library is None:
        print("no C compiler found: the compiled-BFS reference was skipped")


if __name__ == "__main__":
    main()
