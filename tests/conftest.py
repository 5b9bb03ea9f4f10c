"""Shared fixtures: paths, a harvested fixture store, generated warehouses, the shared format checker.

``../shared`` (the warehouse generator and the format checker) sits beside the repository in CI only:
a test that needs it skips with the reason in a user's clone.  ``.ci/run`` sets ``LINEAGE_STRICT_SKIPS``,
under which such a test fails instead, so CI cannot pass what it did not check.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
WAREHOUSE = REPO / "fixtures" / "sql" / "warehouse"


def skip_for_want_of(what: str) -> None:
    """Skip the running test because ``what`` is absent, or fail it where CI requires everything to run."""
    if os.environ.get("LINEAGE_STRICT_SKIPS"):
        pytest.fail(f"{what} is absent, and LINEAGE_STRICT_SKIPS says every test must run")
    pytest.skip(f"{what} is absent")


def shared_tool(relative: str) -> Path:
    """A file of ``../shared``, or a skip of the running test when the clone has nothing beside it."""
    path = SHARED / relative
    if not path.is_file():
        skip_for_want_of(f"../shared/{relative} (it ships beside the repository in CI only)")
    return path


def generate_warehouse(out: Path, *args: str) -> Path:
    """Run the shared generator; returns ``out``."""
    generator = shared_tool("bench/gen_warehouse.py")
    subprocess.run([sys.executable, str(generator), *args, "--out", str(out)], check=True, capture_output=True)
    return out


def check_formats(kind: str, path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """Run the shared format checker (``tgf``, ``graphml``, ``dot``, ``openlineage``, ``sarif``, ...) on a file."""
    checker = shared_tool("tools/check_formats.py")
    return subprocess.run([sys.executable, str(checker), kind, str(path), *options], capture_output=True, text=True)


def assert_valid_format(kind: str, path: Path, *options: str) -> None:
    """The shared checker accepts ``path`` as ``kind``."""
    run = check_formats(kind, path, *options)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.fixture(scope="session")
def warehouse_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture warehouse harvested into a store file (once per test session)."""
    from lineage_cli.harvest.batch import harvest
    from lineage_cli.store.writer import write_store

    path = tmp_path_factory.mktemp("store") / "graph.lin"
    result = harvest([WAREHOUSE])
    assert result.errors == []
    write_store(result.graph, path, {"default_schema": None})
    return path


@pytest.fixture(scope="session")
def flow_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The oozie-like flow (fixtures/sql/oozie) harvested through its manifest, from the repository root
    as the README does it, so statement nodes are named `fixtures/sql/oozie/...`."""
    from lineage_cli.harvest.batch import harvest
    from lineage_cli.harvest.inputs.manifest import load_manifest
    from lineage_cli.store.writer import write_store

    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        result = harvest(manifest=load_manifest(Path("fixtures/sql/oozie/manifest.yaml")))
    path = tmp_path_factory.mktemp("flow") / "graph.lin"
    write_store(result.graph, path, {})
    return path


@pytest.fixture(scope="session")
def manifest_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The oozie-like flow harvested as ``lineage harvest --manifest`` does: its facts in the meta."""
    from lineage_cli.harvest.batch import harvest
    from lineage_cli.harvest.inputs.manifest import load_manifest
    from lineage_cli.store.writer import write_store

    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        result = harvest(manifest=load_manifest(Path("fixtures/sql/oozie/manifest.yaml")))
    path = tmp_path_factory.mktemp("manifest") / "graph.lin"
    write_store(result.graph, path, {"modules": result.modules})
    return path


@pytest.fixture(scope="session")
def hive_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_warehouse(tmp_path_factory.mktemp("wh_hive"), "--tables", "2000", "--dialect", "hive")


@pytest.fixture(scope="session")
def hive_harvest(hive_warehouse: Path):
    """The generated 2,000-table warehouse's SQL harvested (once per test session: it takes seconds)."""
    from lineage_cli.harvest.batch import harvest

    return harvest([hive_warehouse / "sql"], dialect="hive")


@pytest.fixture(scope="session")
def hive_store(hive_harvest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated 2,000-table warehouse in a store file."""
    from lineage_cli.store.writer import write_store

    path = tmp_path_factory.mktemp("hive_store") / "graph.lin"
    write_store(hive_harvest.graph, path, {"default_schema": None})
    return path


@pytest.fixture(scope="module")
def store(warehouse_store: Path):
    """The fixture warehouse's store, opened."""
    from lineage_cli.store.reader import open_store

    return open_store(warehouse_store)


@pytest.fixture(scope="module")
def flow(flow_store: Path):
    """The oozie flow fixture's store, opened."""
    from lineage_cli.store.reader import open_store

    return open_store(flow_store)


# tests/peer/test_peer_sqllineage.py's stand-ins for sqllineage, and the helpers its subprocess loads: not tests
collect_ignore = ["peer/shim", "peer/helpers.py"]
