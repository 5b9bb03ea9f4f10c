"""Fetch the sqllineage sdist whose SQL test suite ``tests/peer/test_peer_sqllineage.py`` runs, before the tests.

``make test`` runs this in its install step (``python -m tests.peer.fetch``), so that pytest itself never
needs the network: the test reads the cached sdist and skips with the reason when it is not there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

VERSION = "1.5.9"
CACHE = Path(os.environ.get("LINEAGE_PEER_CACHE", Path(__file__).resolve().parents[2] / ".cache" / "peer"))
SDIST = CACHE / f"sqllineage-{VERSION}.tar.gz"


def fetch() -> str | None:
    """Download the sdist into the cache unless it is there; returns why it could not be had, or None."""
    if SDIST.is_file():
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"]
    run = subprocess.run([*command, f"sqllineage=={VERSION}", "-d", str(CACHE)], capture_output=True, text=True)
    if run.returncode != 0 or not SDIST.is_file():
        last_line = (run.stderr.strip().splitlines() or ["no sdist written"])[-1]
        return f"pip download sqllineage=={VERSION} failed: {last_line}"
    return None


if __name__ == "__main__":
    problem = fetch()
    if problem:
        print(f"note: {problem}; tests/peer/test_peer_sqllineage.py will skip", file=sys.stderr)
