"""Turn the per-target diffs of a changed file, and the stored graph, into findings.

The store is the whole warehouse as last harvested: it says who reads a column or a table
(projection and predicate edges out of it) and what lies downstream (the ``impact`` walkplan).
Without a store only parse errors and the lineage diff are reported.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from lineage_cli.check.diff import EdgeKey, FileLineage, TargetDiff
from lineage_cli.check.findings import Finding, finding
from lineage_cli.store.reader import Store
from lineage_cli.walk.query import AmbiguousName, NameNotFound, lineage

FIRST_N = 5  # downstream names shown in a message
READ_EDGES = ("projection", "predicate")
DATASETS = ("table", "view", "parameterized")


def file_findings(
    file: str, before: FileLineage, after: FileLineage, diffs: list[TargetDiff], store: Store | None
) -> list[Finding]:
    found = [finding("parse-error", file, e.line, e.message, e.col) for e in after.errors]
    for diff in diffs:
        # A target whose statement no longer parses is not removed: the parse error is the finding.
        if diff.changed and not (after.errors and diff.status == "removed"):
            found += _target_findings(file, diff, store)
    found += _narrowed_types(file, before, after)
    return found


def _target_findings(file: str, diff: TargetDiff, store: Store | None) -> list[Finding]:
    found = [finding("lineage-changed", file, diff.line, _diff_message(diff) + _impact_message(store, diff.target))]
    if store is None:
        return found
    if diff.status == "removed":
        readers = _readers(store, diff.target)
        if readers and not _written_elsewhere(store, diff.target, file):
            found.append(
                finding(
                    "table-removed",
                    file,
                    diff.line,
                    f"{diff.target} is no longer written but {_names(readers)} read it",
                )
            )
        return found
    for column in diff.columns_removed:
        readers = _readers(store, column)
        if readers:
            renamed = f" (renamed to {diff.columns_added[0]}?)" if len(diff.columns_added) == 1 else ""
            found.append(
                finding(
                    "column-removed",
                    file,
                    diff.line,
                    f"{column} is no longer written{renamed} but {_names(readers)} read it",
                )
            )
    return found


def _diff_message(diff: TargetDiff) -> str:
    parts = [f"{diff.target}: {diff.status}"]
    parts += [f"+ {_edge(key)}" for key in diff.added]
    parts += [f"- {_edge(key)}" for key in diff.removed]
    parts += [f"~ {_edge(key)}: {'/'.join(sorted(old))} -> {'/'.join(sorted(new))}" for key, old, new in diff.subtypes]
    # a column written from literals alone has no edge to show it by
    shown = {target for _, target, _ in (*diff.added, *diff.removed)}
    parts += [f"+ {column} (column)" for column in diff.columns_added if column not in shown]
    parts += [f"- {column} (column)" for column in diff.columns_removed if column not in shown]
    return "\n".join(parts)


def _edge(key: EdgeKey) -> str:
    source, target, kind = key
    return f"{source} -> {target}" + ("" if kind == "table" else f" ({kind})")


def _impact_message(store: Store | None, target: str) -> str:
    if store is None:
        return ""
    tables, columns = _downstream(store, target)
    if not tables and not columns:
        return "\nno downstream in the store"
    return f"\ndownstream: {len(tables)} tables/views, {len(columns)} columns" + (
        f": {_names(tables)}" if tables else ""
    )


def _walk(store: Store, name: str, direction: str, **options: object):  # noqa: ANN202 - LineageResult
    try:
        return lineage(store, name, direction, **options)  # type: ignore[arg-type]
    except (NameNotFound, AmbiguousName):
        return None  # new to the warehouse: nothing reads it yet


def _downstream(store: Store, target: str) -> tuple[list[str], list[str]]:
    """The datasets and columns the ``impact`` walkplan reaches from ``target``, nearest first."""
    result = _walk(store, target, "down", plan="impact")
    if result is None:
        return [], []
    reached = sorted((n for n in result.nodes if n.name != target), key=lambda n: (n.depth, n.name))
    tables = [n.name for n in reached if n.kind in DATASETS]
    columns = [n.name for n in reached if n.kind == "column" and not n.name.startswith(f"{target}.")]
    return tables, columns


def _readers(store: Store, name: str) -> list[str]:
    """What reads the column or table ``name`` in the store: the ends of its read edges, sorted."""
    result = _walk(store, name, "down", plan="impact", depth=1)
    if result is None:
        return []
    ends = {e.target for e in result.edges if e.source == name and e.type in (*READ_EDGES, "flow") and e.target != name}
    return sorted(ends)


def _written_elsewhere(store: Store, table: str, file: str) -> bool:
    """Whether another file's statement writes ``table`` too (then it is not removed from the warehouse)."""
    result = _walk(store, table, "up", show_transformations=True, depth=1)
    files = {n.file for n in result.nodes if n.kind == "transformation" and n.file} if result else set()
    return any(not _same_file(other, file) for other in files)


def _same_file(stored: str, changed: str) -> bool:
    # The store keeps paths as they were given to `harvest`; git's are relative to the repository root:
    # the same file when one path's components end the other's.
    a, b = PurePosixPath(stored.replace("\\", "/")).parts, PurePosixPath(changed.replace("\\", "/")).parts
    shorter, longer = sorted((a, b), key=len)
    return longer[len(longer) - len(shorter) :] == shorter


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:FIRST_N])
    return shown + (f" and {len(names) - FIRST_N} more" if len(names) > FIRST_N else "")


def _narrowed_types(file: str, before: FileLineage, after: FileLineage) -> list[Finding]:
    found = []
    for table in sorted(before.types.keys() & after.types.keys()):
        old, new = before.types[table], after.types[table]
        for column in old.keys() & new.keys():
            if narrower(old[column], new[column]):
                found.append(
                    finding(
                        "type-narrowed",
                        file,
                        after.ddl_lines.get(table, 1),
                        f"{table}.{column}: {old[column]} -> {new[column]}",
                    )
                )
    return sorted(found, key=lambda f: f.message)


# Integer and floating types ranked from narrow to wide; a lower rank in the same family narrows.
_FAMILIES = (
    {"tinyint": 0, "smallint": 1, "int": 2, "integer": 2, "bigint": 3},
    {"real": 0, "float": 0, "double": 1, "double precision": 1},
)
_TYPE = re.compile(r"^\s*([a-z ]+?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*$")


def narrower(old: str | None, new: str | None) -> bool:
    """Whether ``new`` holds fewer values than ``old``: a shorter length, a smaller precision or scale,
    or a smaller integer / float type.  Unknown or differently-named types are not judged.

    >>> narrower("VARCHAR(100)", "VARCHAR(50)"), narrower("DECIMAL(18, 2)", "DECIMAL(20, 2)"), narrower("BIGINT", "INT")
    (True, False, True)
    """
    parsed_old, parsed_new = _TYPE.match((old or "").lower()), _TYPE.match((new or "").lower())
    if not parsed_old or not parsed_new:
        return False
    (name_old, *size_old), (name_new, *size_new) = parsed_old.groups(), parsed_new.groups()
    for family in _FAMILIES:
        if name_old in family and name_new in family:
            return family[name_new] < family[name_old]
    if name_old != name_new or None in (size_old[0], size_new[0]):
        return False
    digits_old, digits_new = int(size_old[0]), int(size_new[0])
    scale_old, scale_new = int(size_old[1] or 0), int(size_new[1] or 0)
    # DECIMAL(p, s): narrowed when fewer digits, or fewer integer digits (p - s).
    return digits_new < digits_old or scale_new < scale_old or digits_new - scale_new < digits_old - scale_old
