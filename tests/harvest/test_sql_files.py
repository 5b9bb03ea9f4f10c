"""Which files a harvest of PATHs reads, in which order, under which names, what it says of the rest, and how
their bytes become text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lineage_cli.errors import InputError
from lineage_cli.harvest.inputs.files import display_path, sql_files
from lineage_cli.harvest.inputs.sql_text import decode_sql


def found_paths(paths: list) -> list[str]:
    found = sql_files(paths)
    assert found.issues == []
    return [file.path for file in found.files]


def make_tree(root: Path) -> None:
    for name in ("a/b.sql", "a-c/x.sql", "a/b/c.sql", "a/b.sql.bak", "b.sql/inner.sql", "z.sql", "Z.sql", "a/UP.SQL"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("SELECT 1")
    (root / "linked").symlink_to(root / "a", target_is_directory=True)
    (root / "alias.sql").symlink_to(root / "z.sql")


def rglob_order(root: str) -> list[str]:
    """What ``sql_files`` replaced: sorted ``Path.rglob``, which it must match name for name, each real file
    once, by its first name."""
    first: dict[str, str] = {}
    for path in sorted(p for p in Path(root).rglob("*.sql") if p.is_file()):
        first.setdefault(os.path.realpath(path), str(path))
    return list(first.values())


@pytest.mark.parametrize("root", ["tree", "tree/", "./tree", "."])
def test_sql_files_are_those_of_sorted_rglob(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: str) -> None:
    make_tree(tmp_path / "tree")
    monkeypatch.chdir(tmp_path if root != "." else tmp_path / "tree")
    found = found_paths([root])
    assert found == rglob_order(root)
    assert not any("linked" in path for path in found), "a symlinked directory is not entered"


def test_a_file_given_twice_or_by_name_is_taken_once(tmp_path: Path) -> None:
    make_tree(tmp_path)
    named = tmp_path / "a" / "b.sql.bak"
    assert found_paths([tmp_path / "a", named, tmp_path / "a" / "b.sql", f"{tmp_path}/./a/b.sql"]) == [
        str(tmp_path / "a" / "b" / "c.sql"),
        str(tmp_path / "a" / "b.sql"),
        str(named),
    ]
    with pytest.raises(FileNotFoundError):
        sql_files([tmp_path / "missing"])
    with pytest.raises(InputError, match="missing: no such file or directory"):  # bad input, as harvest() reports it
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


def test_a_file_reached_by_a_symlink_is_taken_once_by_its_first_name(tmp_path: Path) -> None:
    make_tree(tmp_path)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "b_again.sql").symlink_to(tmp_path / "a" / "b.sql")
    found = found_paths([tmp_path])
    assert str(tmp_path / "alias.sql") in found and str(tmp_path / "z.sql") not in found, "alias.sql sorts first"
    assert str(tmp_path / "a" / "b.sql") in found and str(tmp_path / "other" / "b_again.sql") not in found
    assert found_paths([tmp_path / "other", tmp_path / "a"])[0] == str(tmp_path / "other" / "b_again.sql")
    linked = tmp_path / "linked"  # a symlinked folder named on the command line is searched, under its own name
    assert found_paths([linked, tmp_path / "a"]) == [str(linked / "b" / "c.sql"), str(linked / "b.sql")]


def test_a_dangling_sql_link_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("sql").mkdir()
    Path("sql/good.sql").write_text("SELECT 1")
    Path("sql/gone.sql").symlink_to("deleted.sql")
    Path("sql/notes.txt").symlink_to("deleted.txt")  # not a *.sql name: not ours to mention
    found = sql_files(["sql"])
    assert [file.path for file in found.files] == ["sql/good.sql"]
    assert [str(issue) for issue in found.issues] == [
        "sql/gone.sql: warning: symbolic link to deleted.sql, which does not exist: not harvested"
    ]


def test_a_directory_that_cannot_be_listed_is_a_warning_and_the_search_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Refused by a patched scandir, not by chmod: the tests may run as root, whom permissions do not stop.
    monkeypatch.chdir(tmp_path)
    for name in ("sql/a/one.sql", "sql/private/secret.sql", "sql/z/two.sql"):
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text("SELECT 1")
    scandir = os.scandir

    def refusing(path: str) -> object:
        if os.path.basename(path) == "private":
            raise PermissionError(13, "Permission denied", path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    found = sql_files(["sql"])
    assert [file.path for file in found.files] == ["sql/a/one.sql", "sql/z/two.sql"]
    assert [str(issue) for issue in found.issues] == [
        "sql/private: warning: cannot read directory: Permission denied; the files in it are not harvested"
    ]


def test_a_byte_the_encoding_cannot_decode_is_kept_and_located() -> None:
    data = "SELECT 'é'\r\n  , '".encode() + b"\x81\x80\xe9'\r\nFROM t"
    decoded = decode_sql(data, "x.sql")
    assert decoded.text == "SELECT 'é'\n  , '\x81€é'\nFROM t", (
        "valid UTF-8 stays; each bad byte is one cp1252 character"
    )
    assert [(w.line, w.col, w.message.split(":")[0]) for w in decoded.warnings] == [
        (2, 6, "byte 0x81 is not valid utf-8")
    ]
    assert "\ufffd" not in decoded.text


@pytest.mark.parametrize(
    ("data", "encoding", "text", "warned"),
    [
        (b"\xef\xbb\xbf-- encoding: latin-1\nSELECT '\xc3\xa9'", None, "-- encoding: latin-1\nSELECT 'é'", []),
        ("SELECT 'é'".encode("utf-16-be"), "utf-16-be", "SELECT 'é'", []),
        (
            b"\n-- dialect: hive\n-- encoding: cp1252\nSELECT '\x80'",
            "latin-1",
            "\n-- dialect: hive\n-- encoding: cp1252\nSELECT '€'",
            [],
        ),
        (b"SELECT 1;\n-- encoding: cp1252\nSELECT '\xe9'", "latin-1", "SELECT 1;\n-- encoding: cp1252\nSELECT 'é'", []),
        (
            b"-- encoding: klingon\nSELECT 1",
            None,
            "-- encoding: klingon\nSELECT 1",
            [(1, "unknown encoding 'klingon': read as utf-8")],
        ),
    ],
    ids=["a byte-order mark wins", "--encoding", "a header wins over --encoding", "only a leading header", "unknown"],
)
def test_which_encoding_a_file_is_read_in(data: bytes, encoding: str | None, text: str, warned: list) -> None:
    decoded = decode_sql(data, "x.sql", encoding)
    assert (decoded.text, [(w.line, w.message) for w in decoded.warnings]) == (text, warned)
