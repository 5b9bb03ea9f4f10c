"""Running code that may hang or fill the memory (template and YAML bombs) in a child process, capped.

The child gets an address-space limit and the run a timeout, so a bomb that is not defused fails its test
instead of taking the machine down; the child reports its own wall time and peak memory.  ``yaml_bomb``
writes the YAML one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_WRAPPER = """
import resource, sys, time
start = time.monotonic()
try:
    exec(compile(sys.argv[1], "<bounded>", "exec"))
finally:
    try:  # the child's own peak: ru_maxrss outlives exec, so it counts the forking test process's size too
        with open("/proc/self/status") as status:
            peak = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    print(f"\\nBOUNDED {time.monotonic() - start:.3f} {peak}", file=sys.stderr)
"""


@dataclass(frozen=True)
class Bounded:
    returncode: int
    stdout: str
    stderr: str
    seconds: float  # the code's own run time, start-up excluded
    peak_mb: float


def run_bounded(
    code: str, cwd: Path | None = None, stdin: str = "", seconds: float = 60, memory_mb: int = 1024
) -> Bounded:
    """Run ``code`` in a fresh Python with at most ``memory_mb`` of address space and ``seconds`` of time."""
    import resource

    def cap() -> None:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, code],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=seconds,
        preexec_fn=cap,  # noqa: PLW1509 - the child runs no threads before exec
        check=False,
    )
    head, _, report = done.stderr.rpartition("\nBOUNDED ")
    elapsed, peak = report.split()
    return Bounded(done.returncode, done.stdout, head, float(elapsed), int(peak) / 1024 / 1024)


def yaml_bomb(levels: int = 9) -> str:
    """ "Billion laughs": ``levels`` top-level keys ``l0`` .. ``lN``, each nine aliases of the one before, so
    a few hundred bytes stand for 9 ** ``levels`` strings; the last anchor is ``*l{levels - 1}``."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"
