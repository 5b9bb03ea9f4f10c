"""The CI gate as a library: pick the changed files, analyse both versions of each, and find.

``check()`` returns findings; ``commands/check.py`` prints them and picks the exit status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lineage_cli.check import git
from lineage_cli.check.diff import analyse, compare
from lineage_cli.check.findings import Finding, sort_key
from lineage_cli.check.rules import file_findings
from lineage_cli.errors import InputError
from lineage_cli.harvest.inputs.sql_text import decode_sql
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.model import Issue
from lineage_cli.store.reader import Store


class CheckError(InputError):
    """A usage or configuration problem (exit 2): git cannot answer, a file cannot be read, options that clash."""


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    warnings: list[Issue] = field(default_factory=list)  # bytes the checked versions' encodings cannot decode
    changed: list[str] = field(default_factory=list)  # the targets whose lineage changed, in the files' order


@dataclass(frozen=True)
class Target:
    path: str  # as reported: relative to the repository root, or as named on the command line
    now: bytes | None  # the file in the working tree (or the index), None when removed
    base: bytes | None  # the file at the base, None when added or when there is no base


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
    files = _staged_files() if staged else _named_files(paths, base) if paths else _changed_files(base)
    result = CheckResult(files=len(files))
    for target in files:
        before = analyse(_text(target.base, target.path, encoding, None), target.path, dialect, catalog)
        after = analyse(_text(target.now, target.path, encoding, result.warnings), target.path, dialect, catalog)
        diffs = compare(before, after)
        result.findings += file_findings(target.path, before, after, diffs, store)
        result.changed += [diff.target for diff in diffs if diff.changed]
    result.findings.sort(key=sort_key)
    return result


def _changed_files(base: str | None) -> list[Target]:
    try:
        root = git.repo_root(Path.cwd())
        commit = git.resolve_base(root, base, for_diff=True)
        changed = git.changed_sql(root, commit)
        return [_target(root, commit, c.path, c.status != "removed") for c in changed]
    except git.GitError as error:
        raise CheckError(str(error)) from error


def _staged_files() -> list[Target]:
    """The staged change as a whole, the index against HEAD: deletions included, which a pre-commit hook is
    never told of (it names only the files that exist), and the staged text, not the working tree's."""
    try:
        root = git.repo_root(Path.cwd())
        head = git.head_or_empty_tree(root)
        changed = git.changed_sql(root, head, staged=True)
        return [Target(c.path, git.show_staged(root, c.path), git.show(root, head, c.path)) for c in changed]
    except git.GitError as error:
        raise CheckError(str(error)) from error


def _target(root: Path, commit: str, path: str, exists: bool) -> Target:
    # Paths stay relative to the repository root: GitHub annotations and SARIF locations need that.
    now = _read(root / path) if exists else None
    return Target(path, now, git.show(root, commit, path))


def _read(path: Path) -> bytes:
    """A checked file's bytes in the working tree; one that cannot be read is a ``CheckError``, its message the
    ``OSError``'s."""
    try:
        return path.read_bytes()
    except OSError as error:
        raise CheckError(str(error)) from error


def _text(data: bytes | None, display: str, encoding: str | None, warnings: list[Issue] | None) -> str | None:
    """A version's text (None when it is not there), decoded as harvest decodes files; what cannot be decoded
    is added to ``warnings``, given for the checked version only (the base's problems are not the change's)."""
    if data is None:
        return None
    read = decode_sql(data, display, encoding)
    if warnings is not None:
        warnings += read.warnings
    return read.text


def _named_files(paths: list[str], base: str | None) -> list[Target]:
    """The files named on the command line; their base versions when git can give them.

    A pre-commit hook names the staged files and may run where no default branch exists: then each
    file is checked on its own (parse errors, lineage against the store) rather than refused.
    """
    try:
        root = git.repo_root(Path.cwd())
    except git.GitError:
        if base is not None:
            raise CheckError("--base needs a git repository") from None
        return [Target(path, _read(Path(path)), None) for path in paths]
    commit = _optional_base(root, base)
    targets = []
    for path in paths:
        relative = _relative(root, path)
        before = git.show(root, commit, relative) if commit and relative else None
        targets.append(Target(path, _read(Path(path)), before))
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
