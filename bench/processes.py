"""What the bench scripts share: where things are, and how a fresh process is timed.

Cold commands are timed round-robin, so that a slow spell of a shared machine (its speed drifts by a
third from minute to minute) hits each of them alike, and after ``compileall``: the shell may set
``PYTHONDONTWRITEBYTECODE=1``, and then every cold run would recompile our modules.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench-out"
BIN = Path(sys.executable).parent
GEN = REPO / ".." / "shared" / "bench" / "gen_warehouse.py"
# Processes run this tree's package, whichever one the `lineage` script was installed from.
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))}


def bench_parser(description: str | None) -> argparse.ArgumentParser:
    """An argument parser that prints a bench script's docstring as its ``--help``."""
    return argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)


def warehouse_parser(description: str | None) -> argparse.ArgumentParser:
    """``bench_parser`` with the generated warehouse's size and dialect."""
    parser = bench_parser(description)
    parser.add_argument("--tables", type=int, default=2000, help="tables in the generated warehouse")
    parser.add_argument("--dialect", default="hive", help="dialect of the generated warehouse's SQL")
    return parser


def graph_bench_store(description: str | None, argv: list[str] | None) -> tuple[argparse.Namespace, Path, dict]:
    """For a script timing queries on the store ``bench/graph.py`` built: its arguments (``--small``, the 100k-node
    graph; ``--repeat``), the store, and the graph's query nodes (``deep_mart``, ``hub_source``); an exit saying
    what to run first when that store is not there."""
    parser = bench_parser(description)
    parser.add_argument("--small", action="store_true", help="the 100k-node graph instead of the 1M-node one")
    parser.add_argument("--repeat", type=int, default=21, help="runs of each query")
    args, _ = parser.parse_known_args(argv)  # `make bench` passes BENCH_ARGS, meant for bench/graph.py, here too
    graph = "g100k" if args.small else "g1m"
    path, meta = OUT / f"{graph}.lin", OUT / graph / "graph_meta.json"
    if not (path.is_file() and meta.is_file()):
        raise SystemExit(f"run `python bench/graph.py{' --small' if args.small else ''}` first: it builds {path}")
    return args, path, json.loads(meta.read_text())["query_nodes"]


def timed_process(command: list[str]) -> tuple[float, float | None, subprocess.CompletedProcess[str]]:
    """Wall seconds, peak RSS (MB) and outcome of one run of ``command``.

    The RSS comes from /usr/bin/time: Linux starts a child's ru_maxrss at its parent's RSS (the high-water
    mark survives fork and exec), and this bench's own RSS is large, but time's is tiny.
    """
    timer = shutil.which("time", path="/usr/bin:/bin")
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as report:
        wrapped = [timer, "-f", "%M", "-o", report.name, *command] if timer else command
        started = time.perf_counter()
        done = subprocess.run(wrapped, capture_output=True, text=True, env=ENV)
        seconds = time.perf_counter() - started
        peak = int(report.read().split()[-1]) / 1024 if timer and done.returncode == 0 else None
    return seconds, peak, done


def compile_package() -> None:
    """Compile our package's modules, as an installed package has them: with ``PYTHONDONTWRITEBYTECODE=1`` in the
    shell, every fresh process of the bench would compile them again, a cost no user's install pays."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "lineage_cli")], check=True)


def cold(commands: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float | None]]:
    """Median wall seconds of ``repeat`` fresh processes of each command (round-robin over the commands,
    after compiling our package), and the peak RSS (MB) of one more."""
    compile_package()
    times: dict[str, list[float]] = {key: [] for key in commands}
    for _ in range(repeat):
        for key, command in commands.items():
            started = time.perf_counter()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
            times[key].append(time.perf_counter() - started)
    return {key: (statistics.median(times[key]), timed_process(command)[1]) for key, command in commands.items()}


def status_mb(pid: int | str, field: str = "VmHWM") -> float | None:
    """A memory field of a process's /proc status (``VmHWM``: its peak RSS) in MB; None where there is no
    /proc, or the process has ended.  Linux's ru_maxrss would start a child's at its parent's."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    line = next((line for line in status.splitlines() if line.startswith(field + ":")), None)
    return int(line.split()[1]) / 1024 if line else None
