"""Fetch the sqllineage sdist whose SQL test suite ``tests/peer/test_peer_sqllineage.py`` runs, before the tests.

``make test`` runs this in its install step (``python -m tests.peer.fetch``), so that pytest itself never
needs the network: the test reads the cached sdist and skips with the reason when it is not there.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.fetching import download, report

VERSION = "1.5.9"
CACHE = Path(os.environ.get("LINEAGE_PEER_CACHE", Path(__file__).resolve().parents[2] / ".cache" / "peer"))
SDIST = CACHE / f"sqllineage-{VERSION}.tar.gz"


def fetch() -> str | None:
    """Download the sdist into the cache unless it is there; returns why it could not be had, or None."""
    if SDIST.is_file():
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"]
    command += [f"sqllineage=={VERSION}", "-d", str(CACHE)]
    return download(command, SDIST.is_file, f"pip download sqllineage=={VERSION}")


if __name__ == "__main__":
    report(fetch(), "tests/peer/test_peer_sqllineage.py will skip")
