"""One local Spark session (``local[2]``) for the Spark tests, or their skip, with the reason, without pyspark or
Java (``.ci/run`` installs the ``spark`` extra, and under ``LINEAGE_STRICT_SKIPS`` their absence fails)."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import skip_for_want_of


@pytest.fixture(scope="session")
def spark_installed() -> None:
    """Spark can run here: pyspark and Java are installed (a test that starts its own session asks only this)."""
    if importlib.util.find_spec("pyspark") is None:
        skip_for_want_of("pyspark (pip install 'lineage-cli[spark]')")
    if shutil.which("java") is None:
        skip_for_want_of("java, which Spark runs on")


@pytest.fixture(scope="session")
def spark(spark_installed: None) -> Iterator[Any]:
    from lineage_cli.spark import session

    with session("local[2]", quiet=True) as started:
        yield started
