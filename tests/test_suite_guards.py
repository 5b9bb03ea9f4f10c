"""The suite's own guards: what a test does when ``../shared`` or a cached peer sdist is missing."""

from __future__ import annotations

import pytest

from tests import conftest


def test_a_missing_shared_tool_skips_with_its_reason(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv("LINEAGE_STRICT_SKIPS", raising=False)
    monkeypatch.setattr(conftest, "SHARED", tmp_path / "shared")
    with pytest.raises(pytest.skip.Exception, match=r"\.\./shared/tools/check_formats\.py .*CI only"):
        conftest.shared_tool("tools/check_formats.py")


def test_under_strict_skips_a_missing_shared_tool_fails(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("LINEAGE_STRICT_SKIPS", "1")
    monkeypatch.setattr(conftest, "SHARED", tmp_path / "shared")
    with pytest.raises(pytest.fail.Exception, match="LINEAGE_STRICT_SKIPS"):
        conftest.generate_warehouse(tmp_path / "wh", "--tables", "3")


def test_a_present_shared_tool_is_returned(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    (tmp_path / "shared" / "bench").mkdir(parents=True)
    (tmp_path / "shared" / "bench" / "gen_warehouse.py").write_text("")
    monkeypatch.setattr(conftest, "SHARED", tmp_path / "shared")
    assert conftest.shared_tool("bench/gen_warehouse.py") == tmp_path / "shared" / "bench" / "gen_warehouse.py"
