"""What changed: the ``.sql`` files that differ between a base revision and the working tree (or the index).

Plain ``git`` through subprocess: the gate runs where the repository is checked out, and git's own
rules (ignores, renames shown as delete + add) are the ones reviewers see.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from lineage_cli.errors import InputError

DEFAULT_BRANCHES = ("origin/HEAD", "main", "master")
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # what the first commit's staged files are compared with


class GitError(InputError):
    """Git cannot answer: not a repository, an unknown revision, git missing."""


@dataclass(frozen=True)
class ChangedFile:
    path: str  # relative to the repository root, with forward slashes
    status: str  # "added", "modified" or "removed"


def _git(root: Path, *args: str) -> str:
    return _git_bytes(root, *args).decode(errors="replace")  # names and messages: never an exception


def _git_bytes(root: Path, *args: str) -> bytes:
    """What git writes, as bytes: a file's content is in the file's encoding, not git's."""
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)
    except FileNotFoundError as error:
        raise GitError("git is not installed") from error
    if done.returncode != 0:
        raise GitError(done.stderr.decode(errors="replace").strip() or f"git {' '.join(args)} failed")
    return done.stdout


def repo_root(start: Path) -> Path:
    try:
        return Path(_git(start, "rev-parse", "--show-toplevel").strip())
    except GitError as error:
        raise GitError(
            f"not inside a git repository ({error}); name the files to check, or run in a checkout"
        ) from error


def resolve_base(root: Path, base: str | None, *, for_diff: bool = False) -> str:
    """The commit to compare with: the merge base of HEAD with ``base``, else with the default branch.

    A merge base, as ``git diff REF...``: a branch behind its base must not show the base's newer
    commits as changes of its own.  With ``for_diff`` (the files to check are what differs from the
    base), a shallow clone's merge base that is HEAD itself is no base: the commits that made HEAD
    were not fetched, and an empty diff would pass what was never checked.
    """
    shallow = _git(root, "rev-parse", "--is-shallow-repository").strip() == "true"
    head = _git(root, "rev-parse", "HEAD").strip() if for_diff and shallow else None
    tried = []
    for ref in (base,) if base is not None else DEFAULT_BRANCHES:
        commit, why = _merge_base(root, ref)
        if commit is not None and commit == head:
            commit, why = None, "HEAD itself"
        if commit is not None:
            return commit
        tried.append(f"{ref} ({why})")
    raise GitError(_no_base_message(base, tried, shallow))


def _merge_base(root: Path, ref: str) -> tuple[str | None, str]:
    """The merge base of HEAD and ``ref``, or None and why there is none."""
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except GitError:
        return None, "no such revision"
    try:
        return _git(root, "merge-base", ref, "HEAD").strip(), ""
    except GitError:
        return None, "no history in common with HEAD"


def _no_base_message(base: str | None, tried: list[str], shallow: bool) -> str:
    asked = f"--base {tried[0]}" if base is not None else f"no base to compare with: tried {', '.join(tried)}"
    if shallow:
        return (
            f"{asked}; this shallow clone lacks the history before HEAD: fetch it (`fetch-depth: 0` in "
            "actions/checkout, or `git fetch --unshallow`), or pass --base REV of a fetched commit"
        )
    return asked if base is not None else f"{asked}; pass --base REF"


def head_or_empty_tree(root: Path) -> str:
    """HEAD, or the empty tree before the first commit: what the staged change is compared with."""
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
    except GitError:
        return EMPTY_TREE


def changed_sql(root: Path, base: str, *, staged: bool = False) -> list[ChangedFile]:
    """``.sql`` files added, modified or removed between ``base`` and the working tree, untracked included;
    with ``staged``, between ``base`` and the index (what the next commit holds), deletions included."""
    statuses = {"A": "added", "M": "modified", "D": "removed", "T": "modified"}
    against = ("--cached",) if staged else ()
    fields = _git(root, "diff", "--name-status", "--no-renames", "-z", *against, base, "--").split("\0")
    changed = {
        path: statuses[code[0]] for code, path in zip(fields[::2], fields[1::2], strict=False) if code[:1] in statuses
    }
    untracked = () if staged else _git(root, "ls-files", "--others", "--exclude-standard", "-z").split("\0")
    for path in untracked:
        if path:
            changed.setdefault(path, "added")
    return [ChangedFile(path, status) for path, status in sorted(changed.items()) if path.lower().endswith(".sql")]


def show(root: Path, base: str, path: str) -> bytes | None:
    """The content of ``path`` at ``base``, or None when it did not exist there."""
    return _show(root, f"{base}:{path}")


def show_staged(root: Path, path: str) -> bytes | None:
    """The content of ``path`` in the index, or None when it is not staged."""
    return _show(root, f":{path}")


def _show(root: Path, spec: str) -> bytes | None:
    try:
        return _git_bytes(root, "show", spec)
    except GitError:
        return None


def checkout(start: Path) -> tuple[Path, str | None, str | None] | None:
    """The checkout ``start`` is in: its root, the URL of its ``origin`` remote and its HEAD commit (None when it
    has none); None outside a repository or without git.  For the export's ``sourceCodeLocation`` facets."""
    try:
        root, _, head = _git(start, "rev-parse", "--show-toplevel", "HEAD").strip().partition("\n")
    except GitError:
        try:
            root, head = _git(start, "rev-parse", "--show-toplevel").strip(), ""  # a repository with no commit
        except GitError:
            return None
    try:
        remote: str | None = _git(start, "remote", "get-url", "origin").strip() or None
    except GitError:
        remote = None
    return Path(root), remote, head.strip() or None
