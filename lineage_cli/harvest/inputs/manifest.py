"""Flow manifests: which SQL a scheduler runs, in which workflow and module, and what it declares.

A manifest is YAML (``entries:``, a list of mappings) or CSV (one row per entry, the same column
names; a list cell holds names separated by ``;``, or by ``,`` inside a quoted cell).  Each entry
names a ``workflow``, a ``module``, its SQL (``sql_file`` relative to the manifest's folder, or
inline ``sql``), its ``target`` / ``targets``, optional declared ``sources``, ``rows`` (volume) and
``frequency``, and optionally its own ``dialect``, ``vars`` and ``defaults``.  A YAML manifest may
also hold ``dialect``, ``vars_file`` (relative to its folder), ``vars`` and ``defaults`` for every
entry.  ``docs/manifests.md`` is the prose version.

A bad entry or a missing SQL file is an ``Issue`` with the manifest's file and the entry's line;
loading goes on with the other entries.  Only an unreadable manifest raises ``ManifestError``.

A manifest names files it makes the harvest read, so it must not reach beyond its folder (or the
``root`` it is loaded with): a ``sql_file`` or ``vars_file`` whose real path (symlinks resolved) is
outside is an error and is never opened -- a manifest from a pull request must not print
``/etc/shadow`` or a ``.env`` into a CI log.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lineage_cli.errors import InputError
from lineage_cli.harvest.inputs.files import display_path, inside
from lineage_cli.harvest.templates.placeholders import VarsError, read_vars_file, template_values
from lineage_cli.model import Issue
from lineage_cli.yamlsafe import compose, construct

_LIST_SEPARATOR = re.compile(r"[;,]")


class ManifestError(InputError):
    """The manifest cannot be read at all."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One step of a flow: a SQL file, inline SQL, or declared lineage only."""

    line: int  # the entry's line in the manifest
    workflow: str | None = None
    module: str | None = None
    sql_file: Path | None = None  # None when absent or missing on disk
    sql: str | None = None  # inline SQL, padded with newlines so its lines are the manifest's
    targets: tuple[str, ...] | None = None  # None: not declared
    sources: tuple[str, ...] | None = None
    rows: int | None = None
    frequency: str | None = None
    dialect: str | None = None
    variables: tuple[tuple[str, str], ...] = ()
    defaults: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class Manifest:
    path: Path
    display: str
    root: Path  # real path of the folder its files must be in
    dialect: str | None = None
    variables: dict[str, str] = field(default_factory=dict)  # vars_file values, then vars:
    defaults: dict[str, str] = field(default_factory=dict)
    # the OpenLineage namespace of tables (``namespace:``) and of schemas' tables (``namespaces:``), for exports
    namespace: str | None = None
    namespaces: dict[str, str] = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)


def load_manifest(path: str | Path, root: str | Path | None = None) -> Manifest:
    """Read a YAML or CSV manifest (by its extension: ``.csv`` is CSV, anything else YAML) whose files are under
    ``root`` (by default, the manifest's folder)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as error:
        raise ManifestError(f"{path}: cannot read the manifest: {error.strerror or error}") from None
    manifest = Manifest(path, display_path(path), Path(root or path.parent).resolve())
    rows = _csv_rows(text) if path.suffix.lower() == ".csv" else _yaml_rows(text, manifest)
    for line, row, sql_line in rows:
        entry = _entry(row, line, sql_line, manifest)
        if entry is not None:
            manifest.entries.append(entry)
    return manifest


# -- reading -----------------------------------------------------------------------------------------------
def _yaml_rows(text: str, manifest: Manifest) -> list[tuple[int, object, int | None]]:
    """(entry line, entry, first line of its inline SQL) for each entry; the top-level keys go to ``manifest``."""
    try:
        root = compose(text, manifest.display)
        data = None if root is None else construct(root, manifest.display)
    except ValueError as error:
        raise ManifestError(str(error)) from None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise ManifestError(f"{manifest.display}: expected a mapping with an 'entries:' list")
    _top_level(data, manifest)
    items = _value_node(root, "entries")
    rows = []
    for index, entry in enumerate(data["entries"]):
        node = items.value[index] if isinstance(items, yaml.SequenceNode) else None
        line = node.start_mark.line + 1 if node is not None else 1
        rows.append((line, entry, _sql_line(node)))
    return rows


def _value_node(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if key_node.value == key:
                return value_node
    return None


def _sql_line(entry: yaml.Node | None) -> int | None:
    """The manifest line where an inline ``sql:`` text starts (a block scalar starts below its key)."""
    node = _value_node(entry, "sql")
    if node is None:
        return None
    return node.start_mark.line + 1 + (1 if getattr(node, "style", None) in ("|", ">") else 0)


def _top_level(data: Mapping[str, Any], manifest: Manifest) -> None:
    manifest.dialect = str(data["dialect"]) if data.get("dialect") else None
    if data.get("vars_file"):
        vars_path = manifest.path.parent / str(data["vars_file"])
        if not inside(vars_path, manifest.root):
            raise ManifestError(f"{manifest.display}: vars_file {data['vars_file']}: {_outside(manifest)}")
        try:
            manifest.variables, manifest.defaults = read_vars_file(vars_path)
        except InputError as error:  # it cannot be read, is no YAML, or holds no variables
            raise ManifestError(f"{manifest.display}: vars_file {data['vars_file']}: {error}") from None
    for key, into in (("vars", manifest.variables), ("defaults", manifest.defaults)):
        value = data.get(key)
        if isinstance(value, dict):
            try:
                into.update(template_values(value, f"{manifest.display}: {key}"))
            except VarsError as error:
                raise ManifestError(str(error)) from None
        elif value is not None:
            raise ManifestError(f"{manifest.display}: '{key}' must be a mapping")
    _namespaces(data, manifest)


def _namespaces(data: Mapping[str, Any], manifest: Manifest) -> None:
    """``namespace: NS`` and ``namespaces: {SCHEMA: NS}``: where an OpenLineage export puts the flow's tables."""
    namespace, by_schema = data.get("namespace"), data.get("namespaces")
    if namespace is not None:
        if not isinstance(namespace, str) or not namespace:
            raise ManifestError(f"{manifest.display}: 'namespace' must be a text, e.g. hive://cluster")
        manifest.namespace = namespace
    if by_schema is None:
        return
    if not isinstance(by_schema, dict) or not all(
        isinstance(key, str) and key and isinstance(value, str) and value for key, value in by_schema.items()
    ):
        raise ManifestError(f"{manifest.display}: 'namespaces' must map schemas to namespaces, e.g. dwh: pg://db")
    manifest.namespaces = dict(by_schema)


def _csv_rows(text: str) -> list[tuple[int, object, int | None]]:
    reader = csv.DictReader(io.StringIO(text))
    reader.fieldnames  # noqa: B018 - reads the header, so line_num counts from the first row
    rows, line = [], reader.line_num + 1
    for record in reader:
        cleaned = {k.strip(): v for k, v in record.items() if k is not None and v not in (None, "")}
        if cleaned:
            rows.append((line, cleaned, line))
        line = reader.line_num + 1
    return rows


# -- validating --------------------------------------------------------------------------------------------
def _entry(row: object, line: int, sql_line: int | None, manifest: Manifest) -> Entry | None:
    """The entry of one row, or None (and an error) when the row cannot be used."""

    def problem(message: str, level: str = "error") -> None:
        manifest.issues.append(Issue(manifest.display, line, f"manifest entry: {message}", level=level))

    if not isinstance(row, dict):
        problem(f"expected a mapping, got {type(row).__name__}")
        return None
    try:
        targets = _names(row, "target", "targets")
        sources = _names(row, "sources")
        variables, defaults = _mapping(row, "vars"), _mapping(row, "defaults")
    except ValueError as error:
        problem(str(error))
        return None
    sql_file, sql = row.get("sql_file"), row.get("sql")
    if sql_file and sql:
        problem("has both sql_file and sql")
        return None
    if not (sql_file or sql or targets):
        problem("nothing to harvest: no sql_file, sql or target")
        return None
    path = None
    if sql_file:
        path = manifest.path.parent / str(sql_file)
        fallback = "; using its declared lineage" if targets else ""
        if not inside(path, manifest.root):
            problem(f"sql_file {sql_file}: {_outside(manifest)}{fallback}")
            path = None
        elif not path.is_file():
            problem(f"sql_file {sql_file}: no such file{fallback}")
            path = None
    text = "\n" * ((sql_line or line) - 1) + str(sql) if sql else None
    return Entry(
        line=line,
        workflow=_text(row.get("workflow")),
        module=_text(row.get("module")),
        sql_file=path,
        sql=text,
        targets=targets,
        sources=sources,
        rows=_rows(row.get("rows"), problem),
        frequency=_text(row.get("frequency")),
        dialect=_text(row.get("dialect")),
        variables=variables,
        defaults=defaults,
    )


def _outside(manifest: Manifest) -> str:
    folder = "--root" if manifest.root != manifest.path.parent.resolve() else "the manifest's folder"
    return f"outside {folder} {display_path(manifest.root)}; not read"


def _names(row: Mapping[str, Any], *keys: str) -> tuple[str, ...] | None:
    """The names under ``keys`` (a list, or a string of names separated by ``;`` or ``,``); None if absent."""
    found: list[str] = []
    present = False
    for key in keys:
        value = row.get(key)
        if value is None:
            continue
        present = True
        if isinstance(value, str):
            found.extend(_LIST_SEPARATOR.split(value))
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            found.extend(value)
        else:
            raise ValueError(f"{key} must be a name or a list of names")
    names = tuple(dict.fromkeys(name.strip() for name in found if name.strip()))
    return names if present else None


def _mapping(row: Mapping[str, Any], key: str) -> tuple[tuple[str, str], ...]:
    value = row.get(key)
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise ValueError(f"{key} must be a mapping of names to values")
    return tuple(sorted(template_values(value, key).items()))


def _rows(value: object, problem: Any) -> int | None:
    if value is None:
        return None
    try:
        rows = int(str(value).replace("_", ""))
    except ValueError:
        rows = -1
    if rows < 0:
        problem(f"rows must be a whole number, got {value!r}; ignored", "warning")
        return None
    return rows


def _text(value: object) -> str | None:
    return None if value is None or str(value).strip() == "" else str(value).strip()
