"""The ``lineage`` command line: a thin click layer over the Python API.

Each command imports what it needs inside its body, so ``lineage up`` never pays for
sqlglot and ``lineage --help`` pays for nothing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from lineage_cli import __version__

DEFAULT_STORE = os.path.join(".lineage", "graph.lin")
FORMATS = ("tree", "json", "tgf", "graphml", "dot")
F = TypeVar("F", bound=Callable[..., Any])


def store_option(command: F) -> F:
    return click.option(
        "--store",
        envvar="LINEAGE_STORE",
        default=DEFAULT_STORE,
        show_default=True,
        type=click.Path(dir_okay=False),
        help="Store file (also LINEAGE_STORE).",
    )(command)


def output_options(command: F) -> F:
    command = click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False),
        help="Write to FILE; the format follows its extension.",
    )(command)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        help="Output format [default: tree on a terminal, json otherwise].",
    )(command)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lineage")
def cli() -> None:
    """Harvest data lineage from SQL and query it.

    \b
    Quick start:
      lineage harvest fixtures/sql          # SQL files -> .lineage/graph.lin
      lineage up mart.sales_daily           # where does it come from?
      lineage down stg.pos_sales            # what does it feed?
    """


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--dialect", help="sqlglot dialect of the SQL (a file's `-- dialect: NAME` line wins).")
@click.option("--default-schema", help="Schema for unqualified table names (`USE db` in a file wins).")
@store_option
@click.option("--strict", is_flag=True, help="Exit 1 if any statement could not be harvested.")
@click.option("-q", "--quiet", is_flag=True, help="Print errors and the summary only; no progress bar.")
def harvest(
    paths: tuple[str, ...],
    dialect: str | None,
    default_schema: str | None,
    store: str,
    strict: bool,
    quiet: bool,
) -> None:
    """Parse SQL files into the lineage store.

    PATHS are files or directories (searched recursively for *.sql).  Statements that
    fail to parse are reported as file:line and the rest is harvested.

    \b
    Example:
      lineage harvest warehouse/sql --dialect hive --default-schema dwh
    """
    from lineage_cli.harvest.run import run_harvest

    code = run_harvest(paths, dialect, default_schema, store, strict=strict, quiet=quiet)
    sys.exit(code)


def _walk_command(direction: str) -> Callable[..., None]:
    word = "upstream" if direction == "up" else "downstream"

    @click.argument("name")
    @click.option("--depth", type=click.IntRange(min=1), help="Stop after N hops (tables, or columns).")
    @click.option("--show-transformations", is_flag=True, help="Show the statements between datasets.")
    @click.option("--predicates", is_flag=True, help="Column lineage: follow predicate edges too.")
    @store_option
    @output_options
    def command(
        name: str,
        depth: int | None,
        show_transformations: bool,
        predicates: bool,
        store: str,
        fmt: str | None,
        output: str | None,
    ) -> None:
        from lineage_cli.walk.run import run_walk

        sys.exit(
            run_walk(
                direction,
                name,
                store,
                depth=depth,
                fmt=fmt,
                output=output,
                show_transformations=show_transformations,
                predicates=predicates,
            )
        )

    command.__doc__ = f"""Show everything {word} of NAME.

    NAME is a table, view or column, case-insensitive; the default schema may be omitted;
    a SQL LIKE pattern (`stg.%`, `%.t_sales%`) merges the lineage of every match.

    \b
    Example:
      lineage {direction} mart.sales_daily --depth 2
      lineage {direction} 'stg.%' -o lineage.graphml
    """
    return command


cli.command(name="up")(_walk_command("up"))
cli.command(name="down")(_walk_command("down"))


@cli.command(name="import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("csv", "tsv", "jsonl", "hive")),
    help="Input format [default: from the file's extension].",
)
@click.option("--replace", is_flag=True, help="Replace the store instead of merging into it.")
@store_option
def import_(file: str, fmt: str | None, replace: bool, store: str) -> None:
    """Merge lineage from another tool into the store.

    \b
    Formats:
      csv, tsv, jsonl  edge lists with a header naming the columns source, target and
                       optionally type (flow | projection | predicate | contains) and
                       subtype (e.g. FILTER or IDENTITY; several joined by ',' or '|')
      hive             Hive LineageLogger hook output (JSON lines with vertices and edges)

    Bad rows are reported with their line number and skipped.

    \b
    Example:
      lineage import edges.csv
      lineage import hive_lineage.log --format hive
    """
    from lineage_cli.harvest.import_run import run_import

    sys.exit(run_import(file, fmt, store, replace))


@cli.command()
@store_option
@click.option("--verify", is_flag=True, help="Also check the checksum of the whole file.")
def stats(store: str, verify: bool) -> None:
    """Count the store's nodes and edges by kind.

    \b
    Example:
      lineage stats --store .lineage/graph.lin
    """
    from lineage_cli.store.stats import run_stats

    sys.exit(run_stats(Path(store), verify=verify))


def main() -> None:
    cli(prog_name="lineage")
