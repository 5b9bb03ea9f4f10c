"""sqllineage's test helpers, answered by ``lineage_cli.parse_sql``: its own test suite as a peer check.

``tests/peer/test_peer_sqllineage.py`` puts this file in place of the suite's ``helpers.py``.  Where the two
tools name things differently by design, the answer is mapped to sqllineage's conventions first:

* an unqualified table gets the dialect's default schema here (``default.t``, ``dbo.t``), not there;
* MERGE, UPDATE and DELETE list their target among their sources here (they read it to match rows);
* sqllineage reports a script's ends: tables read and never written are sources, tables written and
  never read again are targets, intermediate ones neither (a self-loop is both);
* its column lineage is end to end over projection edges and the predicate edges onto a column (the CASE / IF
  conditions and window keys that shape its value, which sqllineage reads as the column's sources too): the
  first and last column of each path;
* its switch ``SQLLINEAGE_LATERAL_COLUMN_ALIAS_REFERENCE=1`` makes a select alias visible later in its select
  list, which here is a fact of the dialect: its neutral SQL is then read as Teradata's (no default schema).
"""

from __future__ import annotations

import os
from typing import Any

from sqllineage.core.models import Path, Table

import lineage_cli

# sqllineage's dialect names -> sqlglot's
DIALECTS = {
    "non-validating": "ansi",
    "sparksql": "spark",
    "greenplum": "postgres",
    "impala": "hive",
    "db2": "ansi",
}
DEFAULT_SCHEMAS = ("default.", "dbo.", "main.", "public.")
LATERAL_ALIASES = "teradata"  # a dialect with lateral column aliases and no default schema


def assert_table_lineage_equal(
    sql: str, source_tables: Any = None, target_tables: Any = None, dialect: str = "ansi", **_: object
) -> None:
    result = _parsed(sql, dialect)
    sources, targets = _ends(result["statements"], sql)
    expected = ({_expected_name(t) for t in source_tables or ()}, {_expected_name(t) for t in target_tables or ()})
    assert (sources, targets) == expected, f"\n{sql}\nours: {sources} -> {targets}\nwant: {expected}"


def assert_column_lineage_equal(
    sql: str, column_lineages: Any = None, dialect: str = "ansi", metadata_provider: Any = None, **_: object
) -> None:
    result = _parsed(sql, dialect, getattr(metadata_provider, "schemas", None) or None)
    edges = {
        (_split_column(c["source"], sql), _split_column(c["target"], sql))
        for statement in result["statements"]
        for c in statement["columns"]
        if c["kind"] == "projection" or c["target"] in statement["target_columns"]
    }
    expected = {(_expected_column(s), _expected_column(t)) for s, t in column_lineages or ()}
    found = _end_to_end(edges)
    assert found == expected, f"\n{sql}\nmissing {sorted(expected - found)}\nextra {sorted(found - expected)}"


def generate_metadata_providers(test_schemas: dict[str, list[str]]) -> list[Any]:
    from sqllineage.core.metadata_provider import MetaDataProvider

    return [MetaDataProvider(test_schemas), MetaDataProvider(test_schemas)]  # theirs: two kinds of provider


def _parsed(sql: str, dialect: str, schema: dict[str, list[str]] | None = None) -> dict[str, Any]:
    dialect = DIALECTS.get(dialect, dialect)
    if dialect == "ansi" and os.environ.get("SQLLINEAGE_LATERAL_COLUMN_ALIAS_REFERENCE") == "1":
        dialect = LATERAL_ALIASES
    result = lineage_cli.parse_sql(sql, dialect=dialect, schema=schema)
    assert not result["errors"], result["errors"]
    return result


def _bare(name: str, sql: str) -> str:
    """A table name without the default schema this tool adds (kept where the SQL itself writes it)."""
    for schema in DEFAULT_SCHEMAS:
        if name.startswith(schema) and name.count(".") == 1 and schema not in sql.lower():
            return name.removeprefix(schema)
    return name


def _ends(statements: list[dict[str, Any]], sql: str) -> tuple[set[str], set[str]]:
    """sqllineage's view of a script: what it reads from outside, and what it leaves written."""
    edges, read_only, written_only = set(), set(), set()
    for statement in statements:
        targets = [_bare(t, sql) for t in statement["targets"]]
        sources = [_bare(s, sql) for s in statement["sources"]]
        if statement["type"] in ("merge", "update", "delete"):
            sources = [s for s in sources if s not in targets]
        read_only.update(() if targets else sources)
        written_only.update(() if sources else targets)
        edges.update((s, t) for s in sources for t in targets)
    loops = {s for s, t in edges if s == t}
    outs, ins = {s for s, t in edges if s != t}, {t for s, t in edges if s != t}
    return (outs - ins) | loops | (read_only - ins), (ins - outs) | loops | (written_only - outs)


def _expected_name(table: Any) -> str:
    if isinstance(table, Path):
        return table.uri
    name = (Table(table) if isinstance(table, str) else table).raw_name
    return name.removeprefix("<default>.")


def _split_column(name: str, sql: str) -> tuple[str, str]:
    table, _, column = name.rpartition(".")
    return _bare(table, sql), column


def _expected_column(column: Any) -> tuple[str, str]:
    return (column.qualifier or "").lower().removeprefix("<default>."), column.column.lower()


def _end_to_end(edges: set[tuple[tuple[str, str], tuple[str, str]]]) -> set[tuple[tuple[str, str], tuple[str, str]]]:
    """(first, last) column of every projection path, from a column nothing feeds to one that feeds nothing;
    a column a statement writes from itself (``SET c = c + 1``) is a path of its own."""
    outputs: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for source, target in edges:
        if source != target:
            outputs.setdefault(source, set()).add(target)
    fed = {target for source, target in edges if source != target}
    pairs = {(source, target) for source, target in edges if source == target}
    for root in outputs.keys() - fed:
        stack, seen = [root], {root}
        while stack:
            for column in outputs.get(stack.pop(), ()):
                if column not in seen:
                    seen.add(column)
                    if column in outputs:
                        stack.append(column)
                    else:
                        pairs.add((root, column))
    return pairs
