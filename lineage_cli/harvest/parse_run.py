"""``lineage parse``: the lineage of SQL files as JSON, straight from the analysis."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from lineage_cli.harvest import quiet_sqlglot
from lineage_cli.harvest.api import parse_sql
from lineage_cli.harvest.run import load_variables
from lineage_cli.harvest.schema import SchemaCatalog, SchemaError
from lineage_cli.profiles import ProfileError


def run_parse(
    files: tuple[str, ...], dialect: str, schema_file: str | None, default_schema: str | None, pairs: tuple[str, ...]
) -> int:
    quiet_sqlglot()
    try:
        variables = load_variables(pairs, ())
        schema = SchemaCatalog.from_file(Path(schema_file)) if schema_file else None
        combined: dict[str, Any] = {"statements": [], "errors": [], "warnings": []}
        for file in files:
            sql, name = (sys.stdin.read(), "<stdin>") if file == "-" else (_read(file), file)
            result = parse_sql(
                sql, dialect=dialect, schema=schema, variables=variables, default_schema=default_schema, file=name
            )
            for part in combined:
                combined[part].extend(result[part])
    except (ValueError, OSError, SchemaError, ProfileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    json.dump(combined, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def _read(file: str) -> str:
    return Path(file).read_text(encoding="utf-8-sig")
