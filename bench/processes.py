"""What the bench scripts share: where things are, and how a fresh process is timed.

Cold commands are timed round-robin, so that a slow spell of a shared machine (its speed drifts by a
third from minute to minute) hits each of them alike, and after ``compileall``: the shell may set
``PYTHONDONTWRITEBYTECODE=1``, and then every cold run would recompile our modules.
"""

from __future__ import annotations

import argparse
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


def cold(commands: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float | None]]:
    """Median wall seconds of ``repeat`` fresh processes of each command (round-robin over the commands,
    after compiling our package), and the peak RSS (MB) of one more."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "lineage_cli")], check=True)
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
