"""Which files a harvest of PATHs reads, in which order, under which names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lineage_cli.harvest.files import display_path, sql_files


def make_tree(root: Path) -> None:
    for name in ("a/b.sql", "a-c/x.sql", "a/b/c.sql", "a/b.sql.bak", "b.sql/inner.sql", "z.sql", "Z.sql", "a/UP.SQL"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("SELECT 1")
    (root / "linked").symlink_to(root / "a", target_is_directory=True)
    (root / "alias.sql").symlink_to(root / "z.sql")


def rglob_order(root: str) -> list[str]:
    """What ``sql_files`` replaced: sorted ``Path.rglob``, which it must match name for name."""
    return [str(p) for p in sorted(p for p in Path(root).rglob("*.sql") if p.is_file())]


@pytest.mark.parametrize("root", ["tree", "tree/", "./tree", "."])
def test_sql_files_are_those_of_sorted_rglob(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: str) -> None:
    make_tree(tmp_path / "tree")
    monkeypatch.chdir(tmp_path if root != "." else tmp_path / "tree")
    found = sql_files([root])
    assert found == rglob_order(root)
    assert not any("linked" in path for path in found), "a symlinked directory is not entered"


def test_a_file_given_twice_or_by_name_is_taken_once(tmp_path: Path) -> None:
    make_tree(tmp_path)
    named = tmp_path / "a" / "b.sql.bak"
    assert sql_files([tmp_path / "a", named, tmp_path / "a" / "b.sql"]) == [
        str(tmp_path / "a" / "b" / "c.sql"),
        str(tmp_path / "a" / "b.sql"),
        str(named),
    ]
    with pytest.raises(FileNotFoundError):
        sql_files([tmp_path / "missing"])


def test_display_path_is_relative_under_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "work" / "..sql").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    assert display_path("x.sql") == "x.sql"
    assert display_path(tmp_path / "work" / "sub" / "y.sql") == "sub/y.sql"
    assert display_path("..sql/z.sql") == "..sql/z.sql"
    assert display_path(tmp_path / "work") == "."
    assert display_path("../other.sql") == os.path.join(tmp_path, "other.sql").replace(os.sep, "/")
    assert display_path(tmp_path / "workshop" / "w.sql") == (tmp_path / "workshop" / "w.sql").as_posix()
