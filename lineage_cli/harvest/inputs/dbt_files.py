"""A dbt project read from its own files, for a project that was never compiled (no ``target/manifest.json``).

The project's files are read into the parts of a manifest that ``dbt.py`` uses, so the harvest is the
same as for a manifest's uncompiled models: each model's ``raw_code`` rendered with ``ref`` / ``source`` /
``this`` resolved, and the project's macros (and its installed packages') callable.  What only a dbt run
knows is approximated, and the docs say so: a model's relation is its name in the default schema, since the
target schema is in the user's profiles.yml, unless an alias or a schema is configured.  Its alias, schema
and materialization come from ``config(materialized=...)`` (or ``config({'materialized': ...})``), else from
the ``+materialized`` / ``+alias`` / ``+schema`` of ``dbt_project.yml``'s folders (the deepest first), else
from its project's: dbt's precedence.  An ephemeral model is read as a view (dbt would inline it);
``depends_on`` is every ``ref`` and ``source`` the raw code's Jinja calls, itself or through its macros (a SQL
comment's text calls nothing).  The single values of
``dbt_project.yml``'s ``vars`` (and of its ``vars: {project: ...}``) are the values of ``var()``.

A project from a pull request must not make the harvest read other files: every file read, and every
folder searched, must be inside the project's folder (or the ``root`` it is read with), symlinks
resolved; anything else is an error naming it, and is not opened.  Models and snapshots are read as
every SQL file is (``sql_text``); a ``.yml`` that is not UTF-8 or not YAML (``yamlsafe``), a key of
``dbt_project.yml`` or a source entry of the wrong type is an error at its line naming it: the key's
default is used, the entry or file is skipped, and the rest of the project is read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lineage_cli.harvest.inputs.files import display_path, inside
from lineage_cli.harvest.inputs.json_types import json_type
from lineage_cli.harvest.inputs.sql_text import decode_sql
from lineage_cli.harvest.templates.macro_file import MacroFile
from lineage_cli.harvest.templates.placeholders import SINGLE_VALUES, template_values
from lineage_cli.model import Issue
from lineage_cli.yamlsafe import YamlError, compose, construct

# `ref('name')`, `ref('package', 'name')`, `source('source', 'table')`, `config(materialized='table', ...)` or
# `config({'materialized': 'table', ...})`
_REF = re.compile(r"\bref\s*\(\s*(?:['\"][^'\"]+['\"]\s*,\s*)?['\"]([^'\"]+)['\"]")
_SOURCE = re.compile(r"\bsource\s*\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"]([^'\"]+)['\"]")
_CONFIG_VALUE = r"(?:\b{key}\s*=|['\"]{key}['\"]\s*:)\s*['\"]([^'\"]+)['\"]"
# `{% macro name(args) %} body {% endmacro %}`, and a call in a template: `name(`, `package.name(`
_MACRO = re.compile(r"{%-?\s*macro\s+(\w+)\s*\(.*?%}(.*?){%-?\s*endmacro", re.DOTALL)
_CALL = re.compile(r"\b(\w+(?:\.\w+)?)\s*\(")
# The Jinja code of a template, where alone it calls anything: its `{{ }}` and `{% %}` tags (not its `{# #}`
# comments, nor SQL text: `-- replaces source('a', 'b')` in a SQL comment is no call)
_JINJA_COMMENT = re.compile(r"{#.*?#}", re.DOTALL)
_JINJA_TAG = re.compile(r"{{.*?}}|{%.*?%}", re.DOTALL)
_SNAPSHOT = re.compile(r"{%-?\s*snapshot\s+(\w+)\s*-?%}(.*?){%-?\s*endsnapshot\s*-?%}", re.DOTALL)
_FOLDERS = {"model-paths": "models", "seed-paths": "seeds", "snapshot-paths": "snapshots", "macro-paths": "macros"}
# What a model takes from dbt_project.yml's `models:` folders (`+schema: x`, or `schema: x`, when it is no folder).
_FOLDER_CONFIGS = ("materialized", "alias", "schema")
_PLUS_CONFIGS = frozenset(f"+{key}" for key in _FOLDER_CONFIGS)
_PACKAGES = "dbt_packages"  # where `dbt deps` installs packages, each with its macros under macros/
# The strings a source and a source's table may give besides their names.
_SOURCE_TEXT, _TABLE_TEXT = ("schema", "database"), ("identifier",)


@dataclass(slots=True)
class ProjectFiles:
    """The manifest parts read from a project's files, the values of its ``vars``, and what was wrong."""

    manifest: dict[str, Any]
    variables: dict[str, str] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)
    macros: tuple[MacroFile, ...] = ()  # the project's macro files, then its installed packages'


@dataclass(frozen=True, slots=True)
class _Yaml:
    """A YAML file as read: its data, and its nodes, which know the line of every value."""

    display: str
    data: Any
    node: yaml.Node | None = None

    def line(self, *keys: str | int) -> int:
        """The line of the value at ``keys`` (mapping keys, list indexes), else of its deepest parent found."""
        node = self.node
        line = node.start_mark.line + 1 if node is not None else 1
        for key in keys:
            node = _child(node, key)
            if node is None:
                break
            line = node.start_mark.line + 1
        return line


def project_manifest(project: Path, root: Path | None = None, encoding: str | None = None) -> ProjectFiles | None:
    """The manifest parts of the dbt project at ``project`` (its ``dbt_project.yml``), None if it is none; every
    file read must be under ``root`` (by default, the project's folder), SQL files in ``encoding`` (``sql_text``)."""
    if not (project / "dbt_project.yml").is_file():
        return None
    reader = _Reader(project, Path(root or project).resolve(), root is not None, encoding)
    settings = reader.settings()
    name = reader.project_name(settings)
    nodes: dict[str, dict[str, Any]] = {}
    models = reader.models_config(settings, name)
    for folder in reader.folders(settings, "model-paths"):
        found = reader.files(folder, ".sql", ".yml")
        for path in (path for path in found if path.suffix == ".sql"):
            if (code := reader.sql(path)) is not None:
                nodes[f"model.{name}.{path.stem}"] = _model(project, folder, path, code, models)
        for path in (path for path in found if path.suffix == ".yml"):
            if (properties := reader.yaml(path, "skipped")) is not None:
                nodes.update(reader.sources(properties, name))
    for folder in reader.folders(settings, "seed-paths"):
        for path in reader.files(folder, ".csv"):  # never opened: a seed is its name
            nodes[f"seed.{name}.{path.stem}"] = {"resource_type": "seed", "name": path.stem}
    for folder in reader.folders(settings, "snapshot-paths"):
        for path in reader.files(folder, ".sql"):
            if (text := reader.sql(path)) is not None:
                nodes.update(_snapshots(project, path, text, name))
    macros = [macro for folder in reader.folders(settings, "macro-paths") for macro in reader.macros(folder, "")]
    for package in reader.packages():
        macros += reader.macros(package / "macros", package.name)
    manifest = {"metadata": {"adapter_type": "ansi"}, "nodes": _with_dependencies(nodes, name, _macro_bodies(macros))}
    return ProjectFiles(manifest, reader.variables(settings, name), reader.issues, tuple(macros))


@dataclass(slots=True)
class _Reader:
    """Reads a project's files, inside ``root`` only, and keeps what was wrong with them."""

    project: Path
    root: Path  # real path
    given: bool  # root is --root, not the project's folder
    encoding: str | None  # --encoding, for models and snapshots
    issues: list[Issue] = field(default_factory=list)

    def error(self, document: _Yaml, keys: tuple[str | int, ...], message: str) -> None:
        self.issues.append(Issue(document.display, document.line(*keys), message))

    def outside(self) -> str:
        folder = "--root" if self.given else "the dbt project"
        return f"outside {folder} {display_path(self.root)}; not read"

    def _bytes(self, path: Path, fallback: str) -> bytes | None:
        """What a project file holds; None, and an error ending in ``fallback``, when it is outside the root or
        cannot be read."""
        if not inside(path, self.root):
            self.issues.append(Issue(display_path(path), 0, self.outside()))
            return None
        try:
            return path.read_bytes()
        except OSError as error:
            self.issues.append(Issue(display_path(path), 0, f"cannot read file: {error.strerror or error}; {fallback}"))
            return None

    def sql(self, path: Path) -> str | None:
        """The text of a model or snapshot, read as every SQL file is (``sql_text``), or None."""
        data = self._bytes(path, "skipped")
        if data is None:
            return None
        text, warnings = decode_sql(data, display_path(path), self.encoding)
        self.issues.extend(warnings)
        return text

    def macros(self, folder: Path, package: str) -> list[MacroFile]:
        """The macro files under ``folder``, of ``package`` ("" for the project's own); one Jinja cannot read is
        a warning at its line, and its macros stay unknown."""
        if not folder.is_dir():
            return []
        from lineage_cli.harvest.templates.jinja import macro_file_problem  # jinja2: a project with macros

        found = []
        for path in self.files(folder, ".sql"):
            if (text := self.sql(path)) is None:
                continue
            if (problem := macro_file_problem(text)) is not None:
                line, reason = problem
                message = f"cannot read dbt macros: {reason}; its macros are unknown"
                self.issues.append(Issue(display_path(path), line, message, level="warning"))
            else:
                found.append(MacroFile(package, display_path(path), text))
        return found

    def packages(self) -> list[Path]:
        """The folders of the packages installed in the project (``dbt_packages/*``)."""
        installed = self.project / _PACKAGES
        try:
            return sorted(path for path in installed.iterdir() if path.is_dir()) if installed.is_dir() else []
        except OSError as error:
            self.issues.append(Issue(display_path(installed), 0, f"cannot search folder: {error.strerror}; skipped"))
            return []

    def yaml(self, path: Path, fallback: str) -> _Yaml | None:
        """A YAML file of the project; None, and an error ending in ``fallback``, when it cannot be read."""
        data = self._bytes(path, fallback)
        if data is None:
            return None
        display = display_path(path)
        try:
            text = data.decode("utf-8-sig")  # as dbt reads it
        except UnicodeDecodeError as error:
            line = data.count(b"\n", 0, error.start) + 1
            message = f"not UTF-8 text: byte 0x{data[error.start]:02x} cannot be read; {fallback}"
            self.issues.append(Issue(display, line, message))
            return None
        try:
            node = compose(text, display)
            return _Yaml(display, None if node is None else construct(node, display), node)
        except YamlError as error:
            self.issues.append(Issue(display, error.line, f"{error.problem}; {fallback}", error.column))
            return None

    def settings(self) -> _Yaml:
        """``dbt_project.yml``: an object of settings, {} (and an error) when it is not one."""
        settings = self.yaml(self.project / "dbt_project.yml", "using the defaults")
        if settings is None or isinstance(settings.data, dict):
            return settings or _Yaml(display_path(self.project / "dbt_project.yml"), {})
        message = f"expected an object of project settings, got {json_type(settings.data)}; using the defaults"
        self.error(settings, (), message)
        return _Yaml(settings.display, {})

    def project_name(self, settings: _Yaml) -> str:
        """``name``, else (and an error, when it is there but no name) the folder's name."""
        name = settings.data.get("name")
        if isinstance(name, str) and name:
            return name
        if "name" in settings.data:
            problem = "name is empty" if name == "" else f"name must be a string, got {json_type(name)}"
            self.error(settings, ("name",), f"{problem}; using {self.project.name}")
        return self.project.name

    def files(self, folder: Path, *suffixes: str) -> list[Path]:
        """The files under ``folder`` whose names end in one of ``suffixes``, sorted (a folder named ``x.sql`` is
        none); none, and an error, when it cannot be searched."""
        try:
            return sorted(path for path in folder.rglob("*") if path.suffix in suffixes and not path.is_dir())
        except OSError as error:
            self.issues.append(Issue(display_path(folder), 0, f"cannot search folder: {error.strerror}; skipped"))
            return []

    def folders(self, settings: _Yaml, key: str) -> list[Path]:
        """The folders of ``model-paths`` (or another ``*-paths`` key) that are inside the root."""
        default = _FOLDERS[key]
        value = settings.data.get(key)
        if value is None:
            value = [default]
        elif not isinstance(value, list):
            self.error(settings, (key,), f"{key} must be a list of folders, got {json_type(value)}; using [{default}]")
            value = [default]
        elif wrong := [item for item in value if not isinstance(item, str)]:
            message = f"each item of {key} must be a string, got {json_type(wrong[0])}; using [{default}]"
            self.error(settings, (key,), message)
            value = [default]
        folders = []
        for index, name in enumerate(value):
            folder = self.project / name
            if "\0" in name:
                self.error(settings, (key, index), f"{key}: {name!r} is no folder name; not read")
            elif inside(folder, self.root):
                folders.append(folder)
            else:
                self.error(settings, (key, index), f"{key}: {name} is {self.outside()}")
        return folders

    def models_config(self, settings: _Yaml, project: str) -> Mapping[str, Any]:
        """``models: {project: ...}``, its configs of the wrong type reported (they are not used)."""
        models = settings.data.get("models")
        if models is None:
            return {}
        if not isinstance(models, dict):
            self.error(settings, ("models",), f"models must be an object, got {json_type(models)}; not used")
            return {}
        config = models.get(project)
        if config is not None and not isinstance(config, dict):
            message = f"models.{project} must be an object, got {json_type(config)}; not used"
            self.error(settings, ("models", project), message)
            return {}
        self._check_configs(settings, ("models", project), config or {})
        return config or {}

    def _check_configs(self, settings: _Yaml, keys: tuple[str, ...], level: Mapping[str, Any]) -> None:
        """An error for each folder config a model takes (``_FOLDER_CONFIGS``) that is not a string."""
        pending = [(keys, level)]
        for keys, level in pending:  # grows as it goes: no recursion, as YAML nests deeper than Python recurses
            for key, value in level.items():
                if isinstance(value, dict) and key not in _PLUS_CONFIGS:
                    pending.append(((*keys, str(key)), value))
                elif (key in _PLUS_CONFIGS or key in _FOLDER_CONFIGS) and not isinstance(value, str):
                    message = f"{'.'.join((*keys, key))} must be a string, got {json_type(value)}; not used"
                    self.error(settings, (*keys, key), message)

    def variables(self, settings: _Yaml, project: str) -> dict[str, str]:
        """The single values of ``vars``, those of ``vars: {project: ...}`` winning; a list or an object (another
        package's vars) has no value a template could be given."""
        found = settings.data.get("vars")
        if found is None:
            return {}
        if not isinstance(found, dict):
            self.error(settings, ("vars",), f"vars must be an object, got {json_type(found)}; not used")
            return {}
        scoped = found.get(project)
        values = {**found, **(scoped if isinstance(scoped, dict) else {})}
        return template_values({k: v for k, v in values.items() if isinstance(v, SINGLE_VALUES)}, "vars")

    def sources(self, properties: _Yaml, project: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The source nodes of a properties file (``sources:``); each entry of the wrong type is an error."""
        if properties.data is None:
            return
        if not isinstance(properties.data, dict):
            message = f"expected an object of dbt properties, got {json_type(properties.data)}; skipped"
            self.error(properties, (), message)
            return
        sources = properties.data.get("sources")
        if sources is not None and not isinstance(sources, list):
            self.error(properties, ("sources",), f"sources must be a list, got {json_type(sources)}; skipped")
            return
        for index, source in enumerate(sources or []):
            keys: tuple[str | int, ...] = ("sources", index)
            name = self._entry(properties, keys, source, "source", _SOURCE_TEXT)
            if name is None:
                continue
            tables = source.get("tables")
            if tables is not None and not isinstance(tables, list):
                message = f"source {name}: tables must be a list, got {json_type(tables)}; skipped"
                self.error(properties, (*keys, "tables"), message)
                continue
            for number, table in enumerate(tables or []):
                where = (*keys, "tables", number)
                table_name = self._entry(properties, where, table, f"source {name}, table", _TABLE_TEXT)
                if table_name is None:
                    continue
                yield (
                    f"source.{project}.{name}.{table_name}",
                    {
                        "resource_type": "source",
                        "source_name": name,
                        "name": table_name,
                        "identifier": table.get("identifier") or table_name,
                        "schema": source.get("schema") or name,
                        "database": source.get("database"),
                    },
                )

    def _entry(
        self, document: _Yaml, keys: tuple[str | int, ...], entry: object, label: str, texts: tuple[str, ...]
    ) -> str | None:
        """The name of a source (or table) entry, an object with a string ``name`` and strings under ``texts``;
        None, and an error naming the entry (by its name, else its place), when it is not one."""
        what = f"{label} {int(keys[-1]) + 1}"  # the entry's place in its list, until its name is known
        if not isinstance(entry, dict):
            self.error(document, keys, f"{what}: expected an object with a name, got {json_type(entry)}; skipped")
            return None
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            problem = "no name" if name is None else f"name must be a string, got {json_type(name)}"
            self.error(document, (*keys, "name") if "name" in entry else keys, f"{what}: {problem}; skipped")
            return None
        for key in texts:
            value = entry.get(key)
            if value is not None and not isinstance(value, str):
                message = f"{label} {name}: {key} must be a string, got {json_type(value)}; skipped"
                self.error(document, (*keys, key), message)
                return None
        return name


def _child(node: yaml.Node | None, key: str | int) -> yaml.Node | None:
    """The value node under a mapping key (the last, as YAML's last duplicate wins) or a list index."""
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int):
        return node.value[key] if key < len(node.value) else None
    if isinstance(node, yaml.MappingNode):
        found = [value for name, value in node.value if isinstance(name, yaml.ScalarNode) and name.value == str(key)]
        return found[-1] if found else None
    return None


def _model(project: Path, folder: Path, path: Path, code: str, models: Mapping[str, Any]) -> dict[str, Any]:
    folders = path.relative_to(folder).parts[:-1]  # under the model path, as dbt_project.yml's models: names them
    # dbt's precedence: the model's config() over dbt_project.yml's folders (the deepest first), over its project's
    materialized, alias, schema = (
        _config(code, key) or _project_config(models, folders, key) for key in _FOLDER_CONFIGS
    )
    if materialized == "ephemeral":
        materialized = "view"  # dbt inlines it; read on its own, it is a view its dependents read
    return {
        "resource_type": "model",
        "name": path.stem,
        "alias": alias,
        "schema": schema,
        "original_file_path": os.path.relpath(path, project),
        "raw_code": code,
        "language": "sql",
        "config": {"materialized": materialized or "view"},
    }


def _config(code: str, key: str) -> str | None:
    calls = re.findall(r"config\s*\((.*?)\)", _jinja_code(code), re.DOTALL)
    found = re.search(_CONFIG_VALUE.format(key=key), " ".join(calls))
    return found.group(1) if found else None


def _jinja_code(template: str) -> str:
    """The Jinja tags of ``template``, one a line: the code that calls macros, ``ref`` and ``source``.

    >>> _jinja_code("-- was source('a', 'b')\\nselect * from {{ ref('c') }} {# ref('d') #}")
    "{{ ref('c') }}"
    """
    return "\n".join(_JINJA_TAG.findall(_JINJA_COMMENT.sub("", template)))


def _project_config(level: Mapping[str, Any], folders: tuple[str, ...], key: str) -> str | None:
    """``+key`` (or ``key``, when it is no folder) of dbt_project.yml's ``models: {project: ...}``, the deepest
    folder's winning; a value that is not a string is not used (``_Reader.models_config`` reported it)."""
    value = None
    for folder in ("", *folders):
        level = level.get(folder) if folder else level
        if not isinstance(level, dict):
            break
        for found in (level.get(f"+{key}"), level.get(key)):
            if isinstance(found, str):
                value = found
                break
    return value


def _snapshots(project: Path, path: Path, text: str, name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for match in _SNAPSHOT.finditer(text):
        # the body keeps its lines: the text before it is blanked, not cut
        body = re.sub(r"[^\n]", " ", text[: match.start(2)]) + match.group(2)
        yield (
            f"snapshot.{name}.{match.group(1)}",
            {
                "resource_type": "snapshot",
                "name": match.group(1),
                "original_file_path": os.path.relpath(path, project),
                "raw_code": body,
                "language": "sql",
                "config": {"materialized": "snapshot"},
            },
        )


def _macro_bodies(macros: list[MacroFile]) -> dict[str, tuple[str, str]]:
    """The package and the body of each macro, by the name it is called by (``name``, ``package.name``)."""
    bodies = {}
    for file in macros:
        for name, body in _MACRO.findall(file.text):
            bodies[f"{file.package}.{name}" if file.package else name] = (file.package, body)
    return bodies


def _called_macros(code: str, bodies: Mapping[str, tuple[str, str]]) -> str:
    """The bodies of the macros ``code`` calls, and of those they call (a package's own by name, within it)."""
    seen: set[str] = set()
    pending, found = [("", code)], []
    while pending:  # grows as it goes: macros call macros
        package, text = pending.pop()
        for called in _CALL.findall(_jinja_code(text)):
            key = next((key for key in (called, f"{package}.{called}") if key in bodies), None)
            if key is not None and key not in seen:
                seen.add(key)
                pending.append(bodies[key])
                found.append(bodies[key][1])
    return "\n".join(found)


def _with_dependencies(
    nodes: dict[str, dict[str, Any]], project: str, bodies: Mapping[str, tuple[str, str]]
) -> dict[str, dict[str, Any]]:
    """Each model's ``refs``, ``sources`` and ``depends_on``: the calls its raw code makes, and the macros it calls
    (``bodies``) make, as dbt records them."""
    by_name = {node["name"]: uid for uid, node in nodes.items() if node["resource_type"] != "source"}
    for node in nodes.values():
        code = node.get("raw_code") or ""
        if bodies:
            code += "\n" + _called_macros(code, bodies)
        refs, sources = _REF.findall(_jinja_code(code)), _SOURCE.findall(_jinja_code(code))
        node["refs"] = [{"name": name} for name in refs]
        node["sources"] = [list(pair) for pair in sources]
        parents = [by_name[name] for name in refs if name in by_name]
        parents += [f"source.{project}.{s}.{t}" for s, t in sources if f"source.{project}.{s}.{t}" in nodes]
        node["depends_on"] = {"nodes": parents}
    return nodes
