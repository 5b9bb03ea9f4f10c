"""What changed: the ``.sql`` files that differ between a base revision and the working tree.

Plain ``git`` through subprocess: the gate runs where the repository is checked out, and git's own
rules (ignores, renames shown as delete + add) are the ones reviewers see.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

DEFAULT_BRANCHES = ("origin/HEAD", "main", "master")


class GitError(RuntimeError):
    """Git cannot answer: not a repository, an unknown revision, git missing."""


@dataclass(frozen=True)
class ChangedFile:
    path: str  # relative to the repository root, with forward slashes
    status: str  # "added", "modified" or "removed"


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    except FileNotFoundError as error:
        raise GitError("git is not installed") from error
    if done.returncode != 0:
        raise GitError(done.stderr.strip() or f"git {' '.join(args)} failed")
    return done.stdout


def repo_root(start: Path) -> Path:
    try:
        return Path(_git(start, "rev-parse", "--show-toplevel").strip())
    except GitError as error:
        raise GitError(
            f"not inside a git repository ({error}); name the files to check, or run in a checkout"
        ) from error


def resolve_base(root: Path, base: str | None) -> str:
    """The commit to compare with: the merge base of HEAD with ``base``, else with the default branch.

    A merge base, as ``git diff REF...``: a branch behind its base must not show the base's newer
    commits as changes of its own.
    """
    if base is not None:
        try:
            _git(root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
        except GitError as error:
            raise GitError(f"--base {base}: no such revision") from error
        return _git(root, "merge-base", base, "HEAD").strip()
    for branch in DEFAULT_BRANCHES:
        try:
            return _git(root, "merge-base", branch, "HEAD").strip()
        except GitError:
            continue
    raise GitError(f"no default branch to compare with (tried {', '.join(DEFAULT_BRANCHES)}); pass --base REF")


def changed_sql(root: Path, base: str) -> list[ChangedFile]:
    """``.sql`` files added, modified or removed between ``base`` and the working tree, untracked included."""
    statuses = {"A": "added", "M": "modified", "D": "removed", "T": "modified"}
    fields = _git(root, "diff", "--name-status", "--no-renames", "-z", base, "--").split("\0")
    changed = {
        path: statuses[code[0]] for code, path in zip(fields[::2], fields[1::2], strict=False) if code[:1] in statuses
    }
    for path in _git(root, "ls-files", "--others", "--exclude-standard", "-z").split("\0"):
        if path:
            changed.setdefault(path, "added")
    return [ChangedFile(path, status) for path, status in sorted(changed.items()) if path.lower().endswith(".sql")]


def show(root: Path, base: str, path: str) -> str | None:
    """The text of ``path`` at ``base``, or None when it did not exist there."""
    try:
        return _git(root, "show", f"{base}:{path}")
    except GitError:
        return None
