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
columns of every relation it lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlglot import exp
from sqlglot.errors import ParseError

from lineage_cli.harvest.dbt_files import project_manifest
from lineage_cli.harvest.files import display_path
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.statements import Context
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


class DbtError(ValueError):
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


def load_dbt(path: str | Path, dialect: str | None = None) -> DbtProject:
    """Read a dbt project directory, its ``target`` directory, or a ``manifest.json``; a project never compiled
    from its own files (``dbt_files``), its names folded by ``dialect`` (its adapter is in no file)."""
    manifest_path, data = _manifest(Path(path), dialect)
    root = manifest_path.parent.parent if manifest_path.parent.name == "target" else manifest_path.parent
    adapter = str((data.get("metadata") or {}).get("adapter_type") or "ansi")
    dialect = ADAPTER_DIALECTS.get(adapter, adapter)
    try:
        profile = load_profile(dialect)
    except ProfileError as error:
        raise DbtError(f"{display_path(manifest_path)}: adapter {adapter}: {error}") from None
    nodes = {**(data.get("nodes") or {}), **(data.get("sources") or {})}
    ctx = Context(profile)
    names = {uid: _relation(node, ctx) for uid, node in nodes.items()}
    project = DbtProject(root, dialect)
    for uid, node in sorted(nodes.items()):
        kind = node.get("resource_type")
        if kind in ("source", "seed") and names[uid]:
            project.datasets.append(names[uid])
        elif kind in ("model", "snapshot") and names[uid] and _materialized(node) != "ephemeral":
            project.models.append(_model(uid, node, nodes, names, root))
    catalog_path = manifest_path.with_name("catalog.json")
    if catalog_path.is_file():
        project.catalog = _catalog(_read_json(catalog_path), names, profile)
    return project


def _manifest(path: Path, dialect: str | None) -> tuple[Path, dict[str, Any]]:
    """The manifest of the project at ``path`` and where it is (or would be); read from the project's files
    (with ``dialect`` for its adapter) when it has none."""
    for candidate in (path, path / "manifest.json", path / "target" / "manifest.json"):
        if candidate.is_file():
            return candidate, _read_json(candidate)
    from_files = project_manifest(path) if path.is_dir() else None
    if from_files is None:
        raise DbtError(f"{path}: no dbt manifest (target/manifest.json) and no dbt_project.yml")
    from_files["metadata"]["adapter_type"] = dialect or "ansi"
    return path / "target" / "manifest.json", from_files


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DbtError(f"{display_path(path)}: {error}") from None
    if not isinstance(data, dict):
        raise DbtError(f"{display_path(path)}: expected a JSON object")
    return data


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
    try:
        return ctx.table_name(exp.to_table(text, dialect=ctx.profile.sqlglot_dialect))
    except ParseError:
        return ".".join(ctx.profile.fold(part) for part in text.split("."))


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
        relations = _relations(node, nodes)
    if not code or node.get("language", "sql") != "sql":
        return DbtModel(uid, display, str(names[uid]), sources)
    kind = "VIEW" if _materialized(node) in _VIEWS else "TABLE"
    # On the first line, so the lines of the statement are the compiled SQL's.
    sql = f"CREATE {kind} {_relation_text(node)} AS {code}"
    return DbtModel(uid, display, str(names[uid]), sources, sql, relations)


def _depends_on(uid: str, nodes: Mapping[str, Any], names: Mapping[str, str | None], seen: set[str]) -> Iterable[str]:
    """The relations a node reads, looking through ephemeral models (dbt inlines them)."""
    for parent in (nodes.get(uid) or {}).get("depends_on", {}).get("nodes", []):
        node = nodes.get(parent)
        if node is None or parent in seen:
            continue
        seen.add(parent)
        if node.get("resource_type") == "model" and _materialized(node) == "ephemeral":
            yield from _depends_on(parent, nodes, names, seen)
        elif names.get(parent):
            yield str(names[parent])


def _relations(node: Mapping[str, Any], nodes: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """``ref:NAME`` / ``source:SOURCE.TABLE`` / ``this`` -> relation text, for rendering raw dbt SQL."""
    found: dict[str, str] = {}
    for other in nodes.values():
        text = _relation_text(other)
        if text is None:
            continue
        if other.get("resource_type") in _DATASETS:
            found[f"ref:{other.get('name')}"] = text
        elif other.get("resource_type") == "source":
            found[f"source:{other.get('source_name')}.{other.get('name')}"] = text
    wanted = {f"ref:{_ref_name(ref)}" for ref in node.get("refs") or []}
    wanted |= {f"source:{'.'.join(source)}" for source in node.get("sources") or []}
    chosen = {key: found[key] for key in wanted if key in found}
    if _relation_text(node):
        chosen["this"] = str(_relation_text(node))
    return tuple(sorted(chosen.items()))


def _ref_name(ref: object) -> str:
    """A ``refs`` item: ``{"name": ...}`` (dbt >= 1.5) or ``[package?, name]`` (older)."""
    if isinstance(ref, dict):
        return str(ref.get("name"))
    return str(ref[-1]) if isinstance(ref, list) and ref else str(ref)


def _catalog(data: Mapping[str, Any], names: Mapping[str, str | None], profile: DialectProfile) -> SchemaCatalog:
    """Columns, in their catalog order, of every relation ``catalog.json`` lists."""
    mapping: dict[str, dict[str, str | None]] = {}
    for section in ("nodes", "sources"):
        for uid, entry in (data.get(section) or {}).items():
            name = names.get(uid)
            columns = (entry or {}).get("columns") or {}
            if not name or not columns:
                continue
            ordered = sorted(columns.values(), key=lambda column: int(column.get("index") or 0))
            mapping[name] = {profile.fold(str(c.get("name"))): c.get("type") for c in ordered}
    return SchemaCatalog.from_mapping(mapping)
