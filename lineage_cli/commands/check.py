"""``lineage check`` end to end: pick the files, analyse both versions, find, report, exit status."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import click

from lineage_cli.check import git
from lineage_cli.check.diff import analyse, compare
from lineage_cli.check.findings import Finding, fails, sort_key
from lineage_cli.check.report import markdown_summary, render
from lineage_cli.check.rules import file_findings
from lineage_cli.harvest import quiet_sqlglot
from lineage_cli.harvest.inputs.sql_text import decode_sql
from lineage_cli.harvest.schema import SchemaCatalog, SchemaError
from lineage_cli.profiles import ProfileError, load_profile
from lineage_cli.store.layout import StoreError
from lineage_cli.store.reader import Store, open_store


class CheckError(Exception):
    """A usage or configuration problem: the command exits 2 with this message."""


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    files: int = 0


@dataclass(frozen=True)
class Target:
    path: str  # as reported: relative to the repository root, or as named on the command line
    now: str | None  # the text in the working tree, None when removed
    base: str | None  # the text at the base, None when added or when there is no base


def check(
    paths: list[str],
    base: str | None,
    store: Store | None,
    dialect: str | None,
    catalog: SchemaCatalog,
    *,
    staged: bool = False,
    encoding: str | None = None,
) -> CheckResult:
    if staged:
        files = _staged_files(encoding)
    else:
        files = _named_files(paths, base, encoding) if paths else _changed_files(base, encoding)
    result = CheckResult(files=len(files))
    for target in files:
        before = analyse(target.base, target.path, dialect, catalog)
        after = analyse(target.now, target.path, dialect, catalog)
        result.findings += file_findings(target.path, before, after, compare(before, after), store)
    result.findings.sort(key=sort_key)
    return result


def _changed_files(base: str | None, encoding: str | None) -> list[Target]:
    try:
        root = git.repo_root(Path.cwd())
        commit = git.resolve_base(root, base, for_diff=True)
        changed = git.changed_sql(root, commit)
        return [_target(root, commit, c.path, c.status != "removed", encoding) for c in changed]
    except git.GitError as error:
        raise CheckError(str(error)) from error


def _staged_files(encoding: str | None) -> list[Target]:
    """The staged change as a whole, the index against HEAD: deletions included, which a pre-commit hook is
    never told of (it names only the files that exist), and the staged text, not the working tree's."""
    try:
        root = git.repo_root(Path.cwd())
        head = git.head_or_empty_tree(root)
        changed = git.changed_sql(root, head, staged=True)
        return [
            Target(
                c.path,
                _checked_text(git.show_staged(root, c.path), c.path, encoding),
                _base_text(git.show(root, head, c.path), c.path, encoding),
            )
            for c in changed
        ]
    except git.GitError as error:
        raise CheckError(str(error)) from error


def _target(root: Path, commit: str, path: str, exists: bool, encoding: str | None) -> Target:
    # Paths stay relative to the repository root: GitHub annotations and SARIF locations need that.
    now = _checked_text((root / path).read_bytes(), path, encoding) if exists else None
    return Target(path, now, _base_text(git.show(root, commit, path), path, encoding))


def _checked_text(data: bytes | None, display: str, encoding: str | None) -> str | None:
    """The text of the version checked (None when it is gone); bytes its encoding cannot decode are warnings
    on stderr."""
    if data is None:
        return None
    read = decode_sql(data, display, encoding)
    for warning in read.warnings:
        click.echo(str(warning), err=True)
    return read.text


def _base_text(data: bytes | None, display: str, encoding: str | None) -> str | None:
    """The text at the base, decoded as the checked one's (its warnings are the base's, not the change's)."""
    return decode_sql(data, display, encoding).text if data is not None else None


def _named_files(paths: list[str], base: str | None, encoding: str | None) -> list[Target]:
    """The files named on the command line; their base versions when git can give them.

    A pre-commit hook names the staged files and may run where no default branch exists: then each
    file is checked on its own (parse errors, lineage against the store) rather than refused.
    """
    try:
        root = git.repo_root(Path.cwd())
    except git.GitError:
        if base is not None:
            raise CheckError("--base needs a git repository") from None
        return [Target(path, _checked_text(Path(path).read_bytes(), path, encoding), None) for path in paths]
    commit = _optional_base(root, base)
    targets = []
    for path in paths:
        text = _checked_text(Path(path).read_bytes(), path, encoding)
        relative = _relative(root, path)
        before = git.show(root, commit, relative) if commit and relative else None
        targets.append(Target(path, text, _base_text(before, path, encoding)))
    return targets


def _relative(root: Path, path: str) -> str | None:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None  # outside the repository: no base version


def _optional_base(root: Path, base: str | None) -> str | None:
    try:
        return git.resolve_base(root, base)
    except git.GitError as error:
        if base is not None:
            raise CheckError(str(error)) from error
        return None


def run_check(
    paths: list[str],
    base: str | None,
    store_path: str,
    dialect: str | None,
    schema_file: str | None,
    fmt: str,
    fail_on: str,
    staged: bool = False,
    encoding: str | None = None,
) -> int:
    """The command: print the findings in ``fmt``, return the exit status (0 clean, 1 failing, 2 usage).

    With ``staged`` the named ``paths`` are ignored: a pre-commit hook's file names leave out deletions.
    """
    quiet_sqlglot()  # sqlglot's own warnings about unsupported statements are not findings
    try:
        if staged and base is not None:
            raise CheckError("--staged compares the index with HEAD; it takes no --base")
        if dialect:
            load_profile(dialect)
        catalog = SchemaCatalog.from_file(schema_file) if schema_file else SchemaCatalog()
        store = _open_store(store_path)
        result = check(paths, base, store, dialect, catalog, staged=staged, encoding=encoding)
    except (CheckError, ProfileError, SchemaError, StoreError, OSError) as error:
        click.echo(f"error: {error}", err=True)
        return 2
    click.echo(render(result.findings, fmt, result.files, color=fmt == "text" and _is_terminal()), nl=False)
    if fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
            summary.write(markdown_summary(result.findings, result.files))
    return 1 if fails(result.findings, fail_on) else 0


def _open_store(path: str) -> Store | None:
    """The stored warehouse, or None (with a note) when it has not been harvested yet."""
    if not Path(path).exists():
        click.echo(f"note: no store at {path}: downstream impact and breaking changes are not checked", err=True)
        return None
    return open_store(path)


def _is_terminal() -> bool:
    return sys.stdout.isatty()
