"""What names an export's datasets and locates its statements: the namespaces tables are configured into
(``--namespace`` over a flow manifest's setting) and the repository of the SQL files, for ``sourceCodeLocation``.

Plain data and string handling (no git here: the command asks git and passes the answers in).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lineage_cli.errors import InputError


@dataclass(frozen=True, slots=True)
class Namespaces:
    """Where tables go: the namespace of each configured schema or catalog (a prefix of table names, matched
    case-insensitively, the longest first), else ``default``.

    >>> spaces = Namespaces("hive://c", {"dwh": "postgres://db:5432", "lake.raw": "s3a://lake"})
    >>> spaces.of("dwh.sales"), spaces.of("ods.x"), spaces.of("Lake.Raw.events"), spaces.of("lake.other.t")
    ('postgres://db:5432', 'hive://c', 's3a://lake', 'hive://c')
    """

    default: str = "default"
    schemas: Mapping[str, str] = field(default_factory=dict)
    _lowered: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lowered = {prefix.lower(): namespace for prefix, namespace in self.schemas.items()}
        object.__setattr__(self, "_lowered", lowered)  # (frozen: set once, here)

    def of(self, table: str) -> str:
        parts = table.lower().split(".")
        for end in range(len(parts) - 1, 0, -1):
            namespace = self._lowered.get(".".join(parts[:end]))
            if namespace is not None:
                return namespace
        return self.default


def namespaces(options: Iterable[str], setting: Mapping[str, Any] | None = None) -> Namespaces:
    """The namespaces of ``--namespace`` options (``NS`` for the default, ``SCHEMA=NS`` for a schema or
    catalog) over a flow manifest's setting (``{"default": NS, "schemas": {SCHEMA: NS}}``, from the store's
    meta): an option beats the manifest for the same schema, and for the default.

    >>> namespaces(["hive://c", "dwh=pg://db"], {"default": "x", "schemas": {"dwh": "y", "ods": "z"}})
    Namespaces(default='hive://c', schemas={'dwh': 'pg://db', 'ods': 'z'})
    """
    setting = setting or {}
    default = str(setting.get("default") or "default")
    schemas = {str(prefix): str(namespace) for prefix, namespace in dict(setting.get("schemas") or {}).items()}
    for option in options:
        prefix, equals, namespace = option.partition("=")
        if not equals or "://" in prefix or ":" in prefix:  # a URI with a query string is a default
            default = option
        elif not prefix or not namespace:
            raise InputError(f"--namespace {option!r}: give NAMESPACE or SCHEMA=NAMESPACE")
        else:
            schemas[prefix] = namespace
    if not default:
        raise InputError("--namespace: the namespace is empty")
    return Namespaces(default, schemas)


@dataclass(frozen=True, slots=True)
class Repository:
    """The repository the harvested SQL files are in, for ``sourceCodeLocation``: its URL as git has it
    (``url``), a web URL whose ``/blob/VERSION/PATH`` shows a file (GitHub, GitLab, Gitea; None when the URL
    gives none), the commit, and the folder file names are relative to (``root``; None: as stored)."""

    url: str | None = None
    web: str | None = None
    version: str | None = None
    root: Path | None = None

    def location(self, file: str, line: int) -> dict[str, Any]:
        """The facet's fields for ``file`` at ``line`` (relative to the working directory, as a harvest names
        files): in the repository when one is known and holds the file, else the file's URI."""
        path = Path(file)
        absolute = path if path.is_absolute() else Path.cwd() / path
        if self.url is None:
            return _file_location(absolute, line)
        if self.root is not None:
            try:
                path = absolute.resolve().relative_to(self.root)
            except ValueError:  # outside the repository: the file as it is
                return _file_location(absolute, line)
        fields: dict[str, Any] = {"type": "git", "repoUrl": self.url, "path": path.as_posix()}
        if self.version:
            fields["version"] = self.version
        if self.web:
            fields["url"] = f"{self.web}/blob/{self.version or 'HEAD'}/{path.as_posix()}#L{line}"
        else:  # a remote with no web page (a path, a bare server): the file where it is checked out
            fields["url"] = _file_location(absolute, line)["url"]
        return fields


def _file_location(path: Path, line: int) -> dict[str, Any]:
    return {"type": "file", "url": f"{path.absolute().as_uri()}#L{line}", "path": path.as_posix()}


def public_url(remote: str) -> str:
    """A git remote's URL without the credentials an https remote may carry (``https://TOKEN@host/...``).

    >>> public_url("https://x-token:s3cret@github.com/acme/etl.git"), public_url("git@github.com:acme/etl.git")
    ('https://github.com/acme/etl.git', 'git@github.com:acme/etl.git')
    """
    scheme, separator, rest = remote.strip().partition("://")
    if not separator:
        return remote.strip()
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host.rpartition('@')[2]}{slash}{path}"


def web_url(remote: str) -> str | None:
    """The https URL of a git remote (``git@host:owner/repo.git``, ``ssh://git@host/owner/repo``), or None.

    >>> web_url("git@github.com:acme/etl.git"), web_url("https://gitlab.com/acme/etl"), web_url("/srv/etl.git")
    ('https://github.com/acme/etl', 'https://gitlab.com/acme/etl', None)
    """
    text = remote.strip().removesuffix("/").removesuffix(".git")
    if text.startswith(("https://", "http://")):
        scheme, _, rest = text.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}"  # no credentials in a URL we write
    if text.startswith("ssh://"):
        rest = text.removeprefix("ssh://").rpartition("@")[2]
        host, _, path = rest.partition("/")
        return f"https://{host.partition(':')[0]}/{path}"
    if "@" in text and ":" in text and "://" not in text:
        host, _, path = text.rpartition("@")[2].partition(":")
        return f"https://{host}/{path}"
    return None
