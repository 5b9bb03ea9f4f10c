"""What the fetches of ``make test``'s set-up step share (``tests/peer/fetch.py``, ``tests/emit/mermaid_fetch.py``):
run the download, say why it failed in one line, and report that as a note, not a failure, since the tests
that need what it fetches skip saying why."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable


def download(command: list[str], done: Callable[[], bool], what: str) -> str | None:
    """Run ``command``; why ``what`` could not be had (its last line of stderr), or None once ``done()``."""
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0 or not done():
        last_line = (run.stderr.strip().splitlines() or ["nothing written"])[-1]
        return f"{what} failed: {last_line}"
    return None


def report(problem: str | None, consequence: str) -> None:
    if problem:
        print(f"note: {problem}; {consequence}", file=sys.stderr)
