"""``parse_sql``: the lineage of a SQL text as the JSON structure ``lineage parse`` prints.

The one code path behind the CLI's ``parse`` command and the Python API: template
rendering, the script analysis shared with ``harvest`` (table and column level), and
a deterministic rendering (statements in script order, edges sorted).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from lineage_cli.harvest.schema import SchemaCatalog, as_catalog
from lineage_cli.harvest.sql.script import analyze_template
from lineage_cli.harvest.sql.statements import StatementLineage
from lineage_cli.model import Issue


def parse_sql(
    sql: str,
    *,
    dialect: str = "ansi",
    schema: SchemaCatalog | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    variables: Mapping[str, object] | None = None,
    default_schema: str | None = None,
    file: str = "<string>",
) -> dict[str, Any]:
    """Table and column lineage of every statement of ``sql``.

    ``schema`` is a ``SchemaCatalog``, a mapping in any shape ``SchemaCatalog.from_mapping`` reads,
    or the path of a YAML / JSON schema file; a catalog passed in also learns the tables ``sql``
    creates.  A mapping is prepared once and reused while it lists the same tables: one whose columns
    changed in place is not read again (pass a new mapping then).  Returns ``{"statements": [...],
    "errors": [...], "warnings": [...]}``: ``errors`` are statements that could not be read,
    ``warnings`` columns that could not be resolved (their edges use ``?.column``), stars that could
    not be expanded and unknown Jinja macros.  ``variables`` fill Jinja and the scheduler
    placeholders; a placeholder without a value stays in the names it is part of.

    >>> result = parse_sql("INSERT INTO mart.t (total) SELECT SUM(o.amount) FROM ods.orders o WHERE o.ok")
    >>> [(s["type"], s["targets"], s["sources"]) for s in result["statements"]]
    [('insert', ['mart.t'], ['ods.orders'])]
    >>> for column in result["statements"][0]["columns"]:
    ...     print(column["source"], column["target"], column["kind"], column["subtype"])
    ods.orders.amount mart.t.total projection AGGREGATION
    ods.orders.ok mart.t predicate FILTER
    """
    catalog = as_catalog(schema)
    script = analyze_template(sql, file, dialect, default_schema, catalog=catalog, variables=variables)
    return {
        "statements": [_statement(file, lineage) for lineage in script.lineage],
        "errors": _issues(script.issues, "error"),
        "warnings": _issues(script.issues, "warning"),
    }


def _statement(file: str, lineage: StatementLineage) -> dict[str, Any]:
    statement = {
        "file": file,
        "line": lineage.line,
        "type": lineage.type,
        "targets": lineage.targets,
        "sources": lineage.sources,
        "target_columns": lineage.target_columns,
        "expressions": lineage.expressions,
        "columns": [
            {"source": e.source, "target": e.target, "kind": e.kind, "subtype": e.subtype}
            for e in lineage.columns  # column_lineage sorts them
        ],
    }
    if lineage.approximate:  # a statement that did not parse (its error is in "errors"): tables read from its tokens
        statement["approximate"] = True
    return statement


def _issues(issues: list[Issue], level: str) -> list[dict[str, Any]]:
    chosen = sorted((i for i in issues if i.level == level), key=lambda i: (i.file, i.line, i.message))
    return [issue_dict(i) for i in chosen]


def issue_dict(issue: Issue) -> dict[str, Any]:
    """An error or warning as the JSON contract has it."""
    return {"file": issue.file, "line": issue.line, "message": issue.message}
