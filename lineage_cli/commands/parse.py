"""``lineage parse``: the lineage of SQL files as JSON, straight from the analysis."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from lineage_cli.commands.harvest import load_variables
from lineage_cli.errors import InputError, LineageError
from lineage_cli.harvest import quiet_sqlglot
from lineage_cli.harvest.inputs.sql_text import SqlText, decode_sql, read_sql_file
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.sql.api import issue_dict, parse_sql


def run_parse(
    files: tuple[str, ...],
    dialect: str,
    schema_file: str | None,
    default_schema: str | None,
    pairs: tuple[str, ...],
    encoding: str | None = None,
) -> int:
    quiet_sqlglot()
    try:
        variables = load_variables(pairs, ())
        schema = SchemaCatalog.from_file(Path(schema_file)) if schema_file else None
        combined: dict[str, Any] = {"statements": [], "errors": [], "warnings": []}
        for file in files:
            name, read = _read(file, encoding)
            result = parse_sql(
                read.text, dialect=dialect, schema=schema, variables=variables, default_schema=default_schema, file=name
            )
            combined["warnings"].extend(issue_dict(warning) for warning in read.warnings)
            for part in combined:
                combined[part].extend(result[part])
    except LineageError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    json.dump(combined, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def _read(file: str, encoding: str | None) -> tuple[str, SqlText]:
    """The name and the text of a FILE to parse (``-``: standard input); one that cannot be read is bad input."""
    if file == "-":
        return "<stdin>", decode_sql(sys.stdin.buffer.read(), "<stdin>", encoding)
    try:
        return file, read_sql_file(file, file, encoding)
    except OSError as error:
        raise InputError(str(error)) from error
