"""Shared fixtures: paths, a harvested fixture store, generated warehouses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO / ".." / "shared"
GEN_WAREHOUSE = SHARED / "bench" / "gen_warehouse.py"
CHECK_FORMATS = SHARED / "tools" / "check_formats.py"
WAREHOUSE = REPO / "fixtures" / "sql" / "warehouse"


def generate_warehouse(out: Path, *args: str) -> Path:
    """Run the shared generator; returns ``out``."""
    subprocess.run(
        [sys.executable, str(GEN_WAREHOUSE), *args, "--out", str(out)], check=True, capture_output=True, text=True
    )
    return out


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
    from lineage_cli.harvest.manifest import load_manifest
    from lineage_cli.store.writer import write_store

    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        result = harvest(manifest=load_manifest(Path("fixtures/sql/oozie/manifest.yaml")))
    path = tmp_path_factory.mktemp("flow") / "graph.lin"
    write_store(result.graph, path, {})
    return path


@pytest.fixture(scope="session")
def hive_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_warehouse(tmp_path_factory.mktemp("wh_hive"), "--tables", "2000", "--dialect", "hive")


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


# tests/peer holds sqllineage stand-ins and helpers for test_peer_sqllineage.py's subprocess, not tests
collect_ignore = ["peer"]
