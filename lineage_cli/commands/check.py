"""``lineage check``: print the gate's findings in the chosen format and pick the exit status."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from lineage_cli.check.findings import fails
from lineage_cli.check.gate import CheckError, check
from lineage_cli.check.impact import impact_section
from lineage_cli.check.report import markdown_summary, render
from lineage_cli.errors import LineageError
from lineage_cli.harvest import quiet_sqlglot
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.profiles import load_profile
from lineage_cli.store.reader import Store, open_store


def run_check(
    paths: list[str],
    base: str | None,
    store_path: str,
    dialect: str | None,
    schema_file: str | None,
    fmt: str,
    fail_on: str,
    staged: bool = False,
    encoding: str | None = None,
) -> int:
    """The command: print the findings in ``fmt``, return the exit status (0 clean, 1 failing, 2 usage).

    With ``staged`` the named ``paths`` are ignored: a pre-commit hook's file names leave out deletions.
    """
    quiet_sqlglot()  # sqlglot's own warnings about unsupported statements are not findings
    try:
        if staged and base is not None:
            raise CheckError("--staged compares the index with HEAD; it takes no --base")
        if dialect:
            load_profile(dialect)
        catalog = SchemaCatalog.from_file(schema_file) if schema_file else SchemaCatalog()
        store = _open_store(store_path)
        result = check(paths, base, store, dialect, catalog, staged=staged, encoding=encoding)
    except LineageError as error:
        click.echo(f"error: {error}", err=True)
        return error.exit_code
    for warning in result.warnings:
        click.echo(str(warning), err=True)
    click.echo(render(result.findings, fmt, result.files, color=fmt == "text" and _is_terminal()), nl=False)
    if fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
            summary.write(markdown_summary(result.findings, result.files) + impact_section(store, result.changed))
    return 1 if fails(result.findings, fail_on) else 0


def _open_store(path: str) -> Store | None:
    """The stored warehouse, or None (with a note) when it has not been harvested yet."""
    if not Path(path).exists():
        click.echo(f"note: no store at {path}: downstream impact and breaking changes are not checked", err=True)
        return None
    return open_store(path)


def _is_terminal() -> bool:
    return sys.stdout.isatty()
