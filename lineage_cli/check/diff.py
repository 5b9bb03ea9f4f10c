"""Analyse one file as it is now and as it was at the base, and compare the two per target.

A file's lineage is keyed by target (the tables its statements write), so moving a statement inside
the file, or reformatting it, changes nothing; only edges and column sets are compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.sql.script import analyze_script
from lineage_cli.harvest.sql.statements import StatementLineage
from lineage_cli.model import Issue

EdgeKey = tuple[str, str, str]  # (source, target, kind): kind is "table", "projection" or "predicate"


@dataclass
class TargetLineage:
    line: int = 0  # the first statement writing the target
    edges: dict[EdgeKey, frozenset[str]] = field(default_factory=dict)  # -> subtypes
    columns: set[str] = field(default_factory=set)  # the target's columns that get a value


@dataclass
class FileLineage:
    targets: dict[str, TargetLineage] = field(default_factory=dict)
    errors: list[Issue] = field(default_factory=list)
    types: dict[str, dict[str, str | None]] = field(default_factory=dict)  # DDL: table -> column -> type
    ddl_lines: dict[str, int] = field(default_factory=dict)  # table -> line of the statement declaring it


@dataclass(frozen=True)
class TargetDiff:
    target: str
    line: int  # where the target is written now, else where it was written at the base
    added: list[EdgeKey]
    removed: list[EdgeKey]
    subtypes: list[tuple[EdgeKey, frozenset[str], frozenset[str]]]  # (edge, before, after)
    columns_removed: list[str]
    columns_added: list[str]
    status: str  # "added", "changed" or "removed"

    @property
    def changed(self) -> bool:
        columns = self.columns_removed or self.columns_added  # a column of literals comes and goes with no edge
        return bool(self.added or self.removed or self.subtypes or columns or self.status != "changed")


def analyse(sql: str | None, file: str, dialect: str | None, catalog: SchemaCatalog) -> FileLineage:
    """The per-target lineage of ``sql`` (nothing when the file does not exist in this version)."""
    result = FileLineage()
    if sql is None:
        return result
    own = catalog.copy()  # each version learns its own DDL, not the other's
    script = analyze_script(sql, file, dialect, None, own)
    result.errors = [issue for issue in script.issues if issue.level == "error"]
    for statement in script.lineage:
        if statement.approximate:
            continue  # a statement that does not parse is its error (LIN001), not a change of its lineage
        for write in statement.writes:
            _add_table_edges(result.targets, write.target, write.sources, statement.line)
        for edge in statement.columns:
            _add_column_edge(result.targets, edge.source, edge.target, edge.kind, edge.subtype, statement)
        for column in statement.target_columns:  # a column of literals gets a value too
            _target(result.targets, _owner(statement.targets, column), statement.line).columns.add(column)
    learned = own.learned_since(catalog)
    result.types = {table: dict(learned.types(table) or {}) for table in learned.tables()}
    # Where each table was declared: its statement's first token, as the parser placed it (not a search of the
    # text for its name, which finds stg.orders' line for ods.orders); lower-cased as the catalog keys names.
    result.ddl_lines = {table.lower(): line for table, line in script.declared.items()}
    return result


def _target(targets: dict[str, TargetLineage], name: str, line: int) -> TargetLineage:
    found = targets.setdefault(name, TargetLineage(line=line))
    found.line = min(found.line, line) if found.line else line
    return found


def _add_table_edges(targets: dict[str, TargetLineage], target: str, sources: list[str], line: int) -> None:
    found = _target(targets, target, line)
    for source in sources:
        found.edges.setdefault((source, target, "table"), frozenset())


def _add_column_edge(
    targets: dict[str, TargetLineage], source: str, target: str, kind: str, subtype: str, statement: StatementLineage
) -> None:
    # A predicate edge ends at the table or (a condition or window shaping it) at one of its columns, a projection
    # edge at one of its columns.
    into_table = target in statement.targets
    table = target if into_table else _owner(statement.targets, target)
    found = _target(targets, table, statement.line)
    key = (source, target, kind)
    found.edges[key] = found.edges.get(key, frozenset()) | {subtype}
    if not into_table:
        found.columns.add(target)


def _owner(tables: list[str], column: str) -> str:
    """The written table a column belongs to: the longest target that prefixes it."""
    matching = [t for t in tables if column.startswith(f"{t}.")]
    return max(matching, key=len) if matching else column.rsplit(".", 1)[0]


def compare(before: FileLineage, after: FileLineage) -> list[TargetDiff]:
    """One diff per target written in either version, in target order."""
    return [
        _compare_target(name, before.targets.get(name), after.targets.get(name))
        for name in sorted(before.targets.keys() | after.targets.keys())
    ]


def _compare_target(name: str, old: TargetLineage | None, new: TargetLineage | None) -> TargetDiff:
    status = "added" if old is None else "removed" if new is None else "changed"
    old, new = old or TargetLineage(), new or TargetLineage()
    common = old.edges.keys() & new.edges.keys()
    return TargetDiff(
        target=name,
        line=new.line or old.line,
        added=sorted(new.edges.keys() - old.edges.keys()),
        removed=sorted(old.edges.keys() - new.edges.keys()),
        subtypes=[(k, old.edges[k], new.edges[k]) for k in sorted(common) if old.edges[k] != new.edges[k]],
        columns_removed=sorted(old.columns - new.columns),
        columns_added=sorted(new.columns - old.columns),
        status=status,
    )
