"""A dbt project read from its own files, for a project that was never compiled (no ``target/manifest.json``).

The project's files are read into the parts of a manifest that ``dbt.py`` uses, so the harvest is the
same as for a manifest's uncompiled models: each model's ``raw_code`` rendered with ``ref`` / ``source`` /
``this`` resolved.  What only a dbt run knows is approximated, and the docs say so: a model's relation is
its name (or ``config(alias=..., schema=...)``) in the default schema, since the target schema is in the
user's profiles.yml; materializations come from ``config(materialized=...)`` and the ``+materialized``
of ``dbt_project.yml``; an ephemeral model is read as a view (dbt would inline it); ``depends_on`` is
every ``ref`` and ``source`` the raw code calls.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lineage_cli.yamlsafe import load

# `ref('name')`, `ref('package', 'name')`, `source('source', 'table')`, `config(materialized='table', ...)`
_REF = re.compile(r"\bref\s*\(\s*(?:['\"][^'\"]+['\"]\s*,\s*)?['\"]([^'\"]+)['\"]")
_SOURCE = re.compile(r"\bsource\s*\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"]([^'\"]+)['\"]")
_CONFIG_VALUE = r"\b{key}\s*=\s*['\"]([^'\"]+)['\"]"
_SNAPSHOT = re.compile(r"{%-?\s*snapshot\s+(\w+)\s*-?%}(.*?){%-?\s*endsnapshot\s*-?%}", re.DOTALL)


def project_manifest(root: Path) -> dict[str, Any] | None:
    """The manifest parts of the dbt project at ``root`` (its ``dbt_project.yml``), None if it is none."""
    settings = _yaml(root / "dbt_project.yml")
    if not isinstance(settings, dict):
        return None
    project = str(settings.get("name") or root.name)
    nodes: dict[str, dict[str, Any]] = {}
    for folder in _paths(settings, "model-paths", "models"):
        for path in sorted((root / folder).rglob("*.sql")):
            nodes[f"model.{project}.{path.stem}"] = _model(root, path, project, settings)
        for path in sorted((root / folder).rglob("*.yml")):
            nodes.update(_sources(project, _yaml(path)))
    for folder in _paths(settings, "seed-paths", "seeds"):
        for path in sorted((root / folder).rglob("*.csv")):
            nodes[f"seed.{project}.{path.stem}"] = {"resource_type": "seed", "name": path.stem}
    for folder in _paths(settings, "snapshot-paths", "snapshots"):
        for path in sorted((root / folder).rglob("*.sql")):
            nodes.update(_snapshots(root, path, project))
    return {"metadata": {"adapter_type": "ansi"}, "nodes": _with_dependencies(nodes, project)}


def _yaml(path: Path) -> Any:  # noqa: ANN401 - whatever the file holds
    """The data of a project file; None when it cannot be read.  A file that is not plain YAML (an alias
    bomb, a ``!!python`` tag) raises ``YamlError``: dbt itself would refuse the project."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    return load(text, str(path))


def _paths(settings: Mapping[str, Any], key: str, default: str) -> list[str]:
    paths = settings.get(key) or [default]
    return [str(p) for p in paths] if isinstance(paths, list) else [default]


def _model(root: Path, path: Path, project: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    code = path.read_text(encoding="utf-8")
    folders = path.relative_to(root).parts[1:-1]  # under the model path
    materialized = _config(code, "materialized") or _project_config(settings, project, folders, "materialized")
    if materialized == "ephemeral":
        materialized = "view"  # dbt inlines it; read on its own, it is a view its dependents read
    return {
        "resource_type": "model",
        "name": path.stem,
        "alias": _config(code, "alias"),
        "schema": _config(code, "schema"),
        "original_file_path": str(path.relative_to(root)),
        "raw_code": code,
        "language": "sql",
        "config": {"materialized": materialized or "view"},
    }


def _config(code: str, key: str) -> str | None:
    found = re.search(_CONFIG_VALUE.format(key=key), " ".join(re.findall(r"config\s*\((.*?)\)", code, re.DOTALL)))
    return found.group(1) if found else None


def _project_config(settings: Mapping[str, Any], project: str, folders: tuple[str, ...], key: str) -> str | None:
    """``models: {project: {folder: {+key: value}}}`` of dbt_project.yml, the deepest folder's winning."""
    level = (settings.get("models") or {}).get(project) or {}
    value = None
    for folder in ("", *folders):
        level = level.get(folder) if folder else level
        if not isinstance(level, dict):
            break
        value = level.get(f"+{key}", level.get(key, value))
    return str(value) if value is not None else None


def _sources(project: str, data: Any) -> Iterator[tuple[str, dict[str, Any]]]:  # noqa: ANN401 - a yml file
    sources = data.get("sources") if isinstance(data, dict) else None
    for source in sources if isinstance(sources, list) else []:
        name = str(source.get("name"))
        for table in source.get("tables") or []:
            yield (
                f"source.{project}.{name}.{table.get('name')}",
                {
                    "resource_type": "source",
                    "source_name": name,
                    "name": table.get("name"),
                    "identifier": table.get("identifier") or table.get("name"),
                    "schema": source.get("schema") or name,
                    "database": source.get("database"),
                },
            )


def _snapshots(root: Path, path: Path, project: str) -> Iterator[tuple[str, dict[str, Any]]]:
    text = path.read_text(encoding="utf-8")
    for match in _SNAPSHOT.finditer(text):
        # the body keeps its lines: the text before it is blanked, not cut
        body = re.sub(r"[^\n]", " ", text[: match.start(2)]) + match.group(2)
        yield (
            f"snapshot.{project}.{match.group(1)}",
            {
                "resource_type": "snapshot",
                "name": match.group(1),
                "original_file_path": str(path.relative_to(root)),
                "raw_code": body,
                "language": "sql",
                "config": {"materialized": "snapshot"},
            },
        )


def _with_dependencies(nodes: dict[str, dict[str, Any]], project: str) -> dict[str, dict[str, Any]]:
    """Each model's ``refs``, ``sources`` and ``depends_on``: the calls its raw code makes."""
    by_name = {node["name"]: uid for uid, node in nodes.items() if node["resource_type"] != "source"}
    for node in nodes.values():
        code = node.get("raw_code") or ""
        refs, sources = _REF.findall(code), _SOURCE.findall(code)
        node["refs"] = [{"name": name} for name in refs]
        node["sources"] = [list(pair) for pair in sources]
        parents = [by_name[name] for name in refs if name in by_name]
        parents += [f"source.{project}.{s}.{t}" for s, t in sources if f"source.{project}.{s}.{t}" in nodes]
        node["depends_on"] = {"nodes": parents}
    return nodes
