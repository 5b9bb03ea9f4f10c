"""Install Mermaid's own parser for ``tests/emit/test_mermaid.py``, before the tests.

The ``mermaid`` package parses a flowchart under Node without a browser when jsdom stands in for the page
(``mermaid_read.mjs``); ``@mermaid-js/mermaid-cli`` would download a browser to do the same.  ``make test`` runs
this in its set-up step (``python -m tests.emit.mermaid_fetch``), as it fetches the peer suite, so that pytest
itself never needs the network: the test skips with the reason when Node or these packages are not there.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.fetching import download, report

PACKAGES = {"mermaid": "11.17.2", "jsdom": "24.1.3"}
CACHE = Path(os.environ.get("LINEAGE_MERMAID_CACHE", Path(__file__).resolve().parents[2] / ".cache" / "mermaid"))


def installed() -> bool:
    """Whether the cache holds the pinned versions of both packages."""
    for name, version in PACKAGES.items():
        manifest = CACHE / "node_modules" / name / "package.json"
        try:
            if json.loads(manifest.read_text(encoding="utf-8")).get("version") != version:
                return False
        except (OSError, ValueError):
            return False
    return True


def fetch() -> str | None:
    """Install the packages into the cache unless they are there; returns why they could not be had, or None."""
    if installed():
        return None
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / "package.json").write_text('{"private": true}\n', encoding="utf-8")
    wanted = [f"{name}@{version}" for name, version in PACKAGES.items()]
    # Offline, npm's defaults retry for minutes: give up sooner, the test says why it skipped.
    command = [npm, "install", "--no-audit", "--no-fund", "--no-package-lock", "--fetch-retries=1"]
    command += ["--fetch-timeout=60000", "--prefix", str(CACHE), *wanted]
    return download(command, installed, f"npm install {' '.join(wanted)}")


if __name__ == "__main__":
    report(fetch(), "tests/emit/test_mermaid.py will not read its flowcharts back")
