"""dbt projects: models, sources and seeds from ``target/manifest.json`` (and ``catalog.json``), or, for a
project never compiled, from its own files (``dbt_files``).

Each model's compiled SQL (``compiled_code``, or ``compiled_sql`` before dbt 1.3) becomes a
``CREATE TABLE|VIEW <relation> AS <compiled SQL>`` statement in the adapter's dialect, so it is
harvested at table and column level like any other SQL; a model that was never compiled has its
``raw_code`` rendered here, ``ref`` / ``source`` / ``this`` resolved from the manifest.  Ephemeral
models are not datasets: dbt inlines them into their dependents as CTEs.  Sources and seeds become
dataset nodes.  Names are the relations' names (``database.schema.identifier``), read from
``relation_name`` and folded by the adapter's dialect profile, so they match the names the compiled
SQL of other models uses.  A model's ``depends_on`` is its declared lineage: compared with the parsed
lineage, and used alone for a model without SQL (a Python model).  ``catalog.json`` gives the
columns of every relation it lists.  A node (or catalog entry) with a field of the wrong JSON type is an
error at its line, naming it, and is skipped; the other nodes are harvested.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lineage_cli.errors import InputError
from lineage_cli.harvest.inputs.dbt_files import ProjectFiles, project_manifest
from lineage_cli.harvest.inputs.files import display_path
from lineage_cli.harvest.inputs.json_types import json_type, type_name
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.sql.statements import Context, relation_name
from lineage_cli.harvest.templates.macro_file import MacroFile
from lineage_cli.model import Issue
from lineage_cli.profiles import DialectProfile, ProfileError, load_profile

# dbt adapter -> sqlglot dialect (the adapter's own name when sqlglot knows it).
ADAPTER_DIALECTS = {
    "sqlserver": "tsql",
    "synapse": "tsql",
    "fabric": "tsql",
    "materialize": "postgres",
    "starburst": "trino",
    "glue": "spark",
}
_DATASETS = ("model", "seed", "snapshot")
_VIEWS = ("view", "materialized_view")
# What this module reads of a node: dotted field -> the JSON type it must have when it is not null.
_NODE_FIELDS: dict[str, type] = {
    **dict.fromkeys(("name", "alias", "identifier", "database", "schema", "relation_name", "source_name"), str),
    **dict.fromkeys(("original_file_path", "path", "compiled_code", "compiled_sql", "raw_code", "raw_sql"), str),
    "config": dict,
    "config.materialized": str,
    "depends_on": dict,
    "depends_on.nodes": list,
    "refs": list,
    "sources": list,
}
_NODE_ITEMS: dict[str, type] = {"depends_on.nodes": str, "sources": list}  # lists whose items have one type
_NEVER_NULL = ("resource_type", "language")  # strings; a node without a language is SQL
_CATALOG_COLUMN: dict[str, type] = {"name": str, "type": str, "index": int}


class DbtError(InputError):
    """The dbt project or its manifest cannot be read."""


@dataclass(frozen=True, slots=True)
class DbtModel:
    """One model (or snapshot) to harvest, or to take as declared lineage when it has no SQL."""

    unique_id: str
    display: str  # the model's file, as provenance
    relation: str  # folded name of what it builds
    sources: tuple[str, ...]  # declared: what it depends on (ephemeral models looked through)
    sql: str | None = None  # CREATE ... AS <compiled SQL>, or None (a Python model)
    relations: tuple[tuple[str, str], ...] = ()  # ref:/source:/this -> relation text, for raw_code


@dataclass(slots=True)
class DbtProject:
    root: Path
    dialect: str
    models: list[DbtModel] = field(default_factory=list)
    datasets: list[str] = field(default_factory=list)  # sources and seeds
    catalog: SchemaCatalog | None = None
    issues: list[Issue] = field(default_factory=list)  # nodes skipped for fields of the wrong type
    variables: dict[str, str] = field(default_factory=dict)  # dbt_project.yml's vars, for a project never compiled
    macros: tuple[MacroFile, ...] = ()  # its macro files and its packages', for a project never compiled


@dataclass(frozen=True, slots=True)
class _Json:
    """A JSON document as read, with its text: a message about a node points at the node's line."""

    path: Path
    data: dict[str, Any]
    text: str = ""

    def error(self, key: str, message: str) -> Issue:
        """An error at the line where ``key`` first appears as an object key (line 1 when it is not found)."""
        found = re.search(re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:", self.text)
        line = self.text.count("\n", 0, found.start()) + 1 if found else 1
        return Issue(display_path(self.path), line, message)


def load_dbt(
    path: str | Path, dialect: str | None = None, *, root: str | Path | None = None, encoding: str | None = None
) -> DbtProject:
    """Read a dbt project directory, its ``target`` directory, or a ``manifest.json``; a project never compiled
    from its own files (``dbt_files``: every one inside ``root``, by default the project, its SQL in ``encoding``),
    its names folded by ``dialect`` (its adapter is in no file)."""
    manifest, files = _manifest(Path(path), dialect, Path(root) if root is not None else None, encoding)
    manifest_path = manifest.path
    folder = manifest_path.parent.parent if manifest_path.parent.name == "target" else manifest_path.parent
    metadata = manifest.data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise DbtError(f"{display_path(manifest_path)}: metadata must be an object, got {json_type(metadata)}")
    adapter = str(metadata.get("adapter_type") or "ansi")
    dialect = ADAPTER_DIALECTS.get(adapter, adapter)
    try:
        profile = load_profile(dialect)
    except ProfileError as error:
        raise DbtError(f"{display_path(manifest_path)}: adapter {adapter}: {error}") from None
    project = DbtProject(folder, dialect)
    if files is not None:
        project.issues.extend(files.issues)
        project.variables.update(files.variables)
        project.macros = files.macros
    nodes = {**_nodes(manifest, "nodes", project.issues), **_nodes(manifest, "sources", project.issues)}
    ctx = Context(profile)
    names = {uid: _relation(node, ctx) for uid, node in nodes.items()}
    for uid, node in sorted(nodes.items()):
        kind = node.get("resource_type")
        if kind in ("source", "seed") and names[uid]:
            project.datasets.append(names[uid])
        elif kind in ("model", "snapshot") and names[uid] and _materialized(node) != "ephemeral":
            project.models.append(_model(uid, node, nodes, names, folder))
    catalog_path = manifest_path.with_name("catalog.json")
    if catalog_path.is_file():
        project.catalog = _catalog(_read_json(catalog_path), names, profile, project.issues)
    return project


def _manifest(
    path: Path, dialect: str | None, root: Path | None, encoding: str | None
) -> tuple[_Json, ProjectFiles | None]:
    """The manifest of the project at ``path``, where it is (or would be); read from the project's files
    (with ``dialect`` for its adapter, files under ``root`` in ``encoding``) when it has none, with what they hold
    besides."""
    for candidate in (path, path / "manifest.json", path / "target" / "manifest.json"):
        if candidate.is_file():
            return _read_json(candidate), None
    from_files = project_manifest(path, root, encoding) if path.is_dir() else None
    if from_files is None:
        raise DbtError(f"{path}: no dbt manifest (target/manifest.json) and no dbt_project.yml")
    from_files.manifest["metadata"]["adapter_type"] = dialect or "ansi"
    return _Json(path / "target" / "manifest.json", from_files.manifest), from_files


def _read_json(path: Path) -> _Json:
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError) as error:
        raise DbtError(f"{display_path(path)}: {error}") from None
    if not isinstance(data, dict):
        raise DbtError(f"{display_path(path)}: expected a JSON object")
    return _Json(path, data, text)


def _section(document: _Json, name: str, issues: list[Issue]) -> dict[str, Any]:
    """A top-level object of ``document`` (``nodes``, ``sources``) by unique id; {} and an error when it is not
    an object."""
    section = document.data.get(name) or {}
    if isinstance(section, dict):
        return section
    issues.append(document.error(name, f"{name} must be an object by unique_id, got {json_type(section)}; skipped"))
    return {}


def _nodes(manifest: _Json, name: str, issues: list[Issue]) -> dict[str, dict[str, Any]]:
    """The readable nodes of a manifest's section; each of the others is an error naming it."""
    nodes: dict[str, dict[str, Any]] = {}
    for uid, node in _section(manifest, name, issues).items():
        problem = _node_problem(node)
        if problem is None:
            nodes[uid] = node
        else:
            issues.append(manifest.error(uid, f"dbt node {uid}: {problem}; skipped"))
    return nodes


def _node_problem(node: object) -> str | None:
    """Why this module cannot read ``node``: it is not an object, or a field it reads has the wrong type."""
    if not isinstance(node, dict):
        return f"expected an object, got {json_type(node)}"
    if "resource_type" not in node:
        return "no resource_type"
    for key in _NEVER_NULL:
        if key in node and not isinstance(node[key], str):
            return f"{key} must be a string, got {json_type(node[key])}"
    for dotted, kind in _NODE_FIELDS.items():
        value = _field(node, dotted)
        if value is not None and not isinstance(value, kind):
            return f"{dotted} must be {type_name(kind)}, got {json_type(value)}"
        item_kind = _NODE_ITEMS.get(dotted)
        if item_kind is not None and isinstance(value, list):
            wrong = [item for item in value if not isinstance(item, item_kind)]
            if wrong:
                return f"each item of {dotted} must be {type_name(item_kind)}, got {json_type(wrong[0])}"
    return None


def _field(node: Mapping[str, Any], dotted: str) -> object:
    """``node["a"]["b"]`` for ``"a.b"``, None where a part is missing (its parents' types are checked first)."""
    value: object = node
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _materialized(node: Mapping[str, Any]) -> str:
    return str((node.get("config") or {}).get("materialized") or "view")


def _relation_text(node: Mapping[str, Any]) -> str | None:
    """The relation as dbt writes it in compiled SQL (quoted per adapter), else its parts joined."""
    if node.get("relation_name"):
        return str(node["relation_name"])
    identifier = node.get("identifier") or node.get("alias") or node.get("name")
    parts = [node.get("database"), node.get("schema"), identifier]
    return ".".join(str(p) for p in parts if p) if identifier else None


def _relation(node: Mapping[str, Any], ctx: Context) -> str | None:
    """The folded ``database.schema.identifier`` of a node, None for one that builds no relation."""
    if node.get("resource_type") not in (*_DATASETS, "source"):
        return None
    text = _relation_text(node)
    if text is None:
        return None
    return relation_name(ctx, text)


def _model(
    uid: str, node: Mapping[str, Any], nodes: Mapping[str, Any], names: Mapping[str, str | None], root: Path
) -> DbtModel:
    file = node.get("original_file_path") or node.get("path") or uid
    display = display_path(root / str(file))
    sources = tuple(sorted(set(_depends_on(uid, nodes, names, set()))))
    code = node.get("compiled_code") or node.get("compiled_sql")
    relations: tuple[tuple[str, str], ...] = ()
    if not code and node.get("language", "sql") == "sql":
        code = node.get("raw_code") or node.get("raw_sql")
        relations = _relations(uid, nodes, names)
    if not code or node.get("language", "sql") != "sql":
        return DbtModel(uid, display, str(names[uid]), sources)
    kind = "VIEW" if _materialized(node) in _VIEWS else "TABLE"
    # On the first line, so the lines of the statement are the compiled SQL's.
    sql = f"CREATE {kind} {_relation_text(node)} AS {code}"
    return DbtModel(uid, display, str(names[uid]), sources, sql, relations)


def _depends_on(uid: str, nodes: Mapping[str, Any], names: Mapping[str, str | None], seen: set[str]) -> Iterable[str]:
    """The relations a node reads, looking through ephemeral models (dbt inlines them)."""
    for parent in ((nodes.get(uid) or {}).get("depends_on") or {}).get("nodes") or []:
        node = nodes.get(parent)
        if node is None or parent in seen:
            continue
        seen.add(parent)
        if node.get("resource_type") == "model" and _materialized(node) == "ephemeral":
            yield from _depends_on(parent, nodes, names, seen)
        elif names.get(parent):
            yield str(names[parent])


def _relations(uid: str, nodes: Mapping[str, Any], names: Mapping[str, str | None]) -> tuple[tuple[str, str], ...]:
    """``ref:NAME`` / ``source:SOURCE.TABLE`` / ``this`` -> relation text, for rendering raw dbt SQL."""
    node = nodes[uid]
    found: dict[str, str] = {}
    for other_uid, other in nodes.items():
        text = _qualified_text(other_uid, other, names)
        if text is None:
            continue
        if other.get("resource_type") in _DATASETS:
            found[f"ref:{other.get('name')}"] = text
        elif other.get("resource_type") == "source":
            found[f"source:{other.get('source_name')}.{other.get('name')}"] = text
    wanted = {f"ref:{_ref_name(ref)}" for ref in node.get("refs") or []}
    wanted |= {f"source:{'.'.join(map(str, source))}" for source in node.get("sources") or []}
    chosen = {key: found[key] for key in wanted if key in found}
    if (this := _qualified_text(uid, node, names)) is not None:
        chosen["this"] = this
    return tuple(sorted(chosen.items()))


def _qualified_text(uid: str, node: Mapping[str, Any], names: Mapping[str, str | None]) -> str | None:
    """The relation text a ``ref`` renders: qualified, as dbt's always is, so that no CTE of the model reading it
    (``with orders as (...), totals as (select * from {{ ref('orders') }})``) can take its place.  A model read
    from its files has no schema until the default one is filled in: its folded name is."""
    text = _relation_text(node)
    return (names.get(uid) or text) if text is not None and "." not in text else text


def _ref_name(ref: object) -> str:
    """A ``refs`` item: ``{"name": ...}`` (dbt >= 1.5) or ``[package?, name]`` (older)."""
    if isinstance(ref, dict):
        return str(ref.get("name"))
    return str(ref[-1]) if isinstance(ref, list) and ref else str(ref)


def _catalog(
    catalog: _Json, names: Mapping[str, str | None], profile: DialectProfile, issues: list[Issue]
) -> SchemaCatalog:
    """Columns, in their catalog order, of every relation ``catalog.json`` lists; an entry with fields of the
    wrong type is an error naming it."""
    mapping: dict[str, dict[str, str | None]] = {}
    for section in ("nodes", "sources"):
        for uid, entry in _section(catalog, section, issues).items():
            name = names.get(uid)
            if not name:
                continue
            problem = _catalog_problem(entry)
            if problem is not None:
                issues.append(catalog.error(uid, f"catalog node {uid}: {problem}; its columns are not used"))
                continue
            columns = sorted(((entry or {}).get("columns") or {}).items(), key=lambda item: item[1].get("index") or 0)
            if columns:
                mapping[name] = {profile.fold(c.get("name") or key): c.get("type") for key, c in columns}
    return SchemaCatalog.from_mapping(mapping)


def _catalog_problem(entry: object) -> str | None:
    """Why a catalog entry's columns cannot be read: ``{"columns": {NAME: {"name", "type", "index"}}}``."""
    if entry is not None and not isinstance(entry, dict):
        return f"expected an object, got {json_type(entry)}"
    columns = (entry or {}).get("columns")
    if columns is not None and not isinstance(columns, dict):
        return f"columns must be an object, got {json_type(columns)}"
    for key, column in (columns or {}).items():
        if not isinstance(column, dict):
            return f"column {key} must be an object, got {json_type(column)}"
        for field_name, kind in _CATALOG_COLUMN.items():
            value = column.get(field_name)
            if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
                return f"column {key}: {field_name} must be {type_name(kind)}, got {json_type(value)}"
    return None
