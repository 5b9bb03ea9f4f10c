"""The ``lineage`` command line: a thin click layer over the Python API.

Each command imports what it needs inside its body, so ``lineage up`` never pays for
sqlglot and ``lineage --help`` pays for nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from lineage_cli import __version__
from lineage_cli.commands.options import DEFAULT_STORE, FORMATS, GROUP_BYS, LEVELS, LOG_FORMATS, RANKDIRS

# Parameter types are stateless: one instance each, shared by every option (each one made costs a gettext lookup).
OUTPUT_FILE = click.Path(dir_okay=False)
EXISTING_FILE = click.Path(exists=True, dir_okay=False)
EXISTING_PATH = click.Path(exists=True)
F = TypeVar("F", bound=Callable[..., Any])


def _together(*options: Callable[[F], F]) -> Callable[[F], F]:
    """Options applied as one decorator, listed in ``--help`` in the order given."""

    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


store_option = click.option(
    "--store",
    envvar="LINEAGE_STORE",
    default=DEFAULT_STORE,
    show_default=True,
    type=OUTPUT_FILE,
    help="Store file (also LINEAGE_STORE).",
)
no_wait_option = click.option(
    "--no-wait", is_flag=True, help="Exit 2 at once if another harvest or import is writing the store, not wait."
)


def _known_encoding(_context: click.Context, _parameter: click.Parameter, name: str | None) -> str | None:
    from lineage_cli.harvest.inputs.sql_text import known_encoding

    if name is not None and not known_encoding(name):
        raise click.BadParameter(f"unknown encoding {name!r} (a Python codec name: utf-8, cp1252, utf-16, ...)")
    return name


encoding_option = click.option(
    "--encoding",
    metavar="NAME",
    callback=_known_encoding,
    help="Encoding of SQL files with no byte-order mark or `-- encoding: NAME` line [default: utf-8].",
)
output_options = _together(
    click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        help="Output format [default: tree on a terminal, json otherwise].",
    ),
    click.option("-o", "--output", type=OUTPUT_FILE, help="Write to FILE; the format follows its extension."),
)
walk_options = _together(
    click.option("--depth", type=click.IntRange(min=1), help="Stop after N hops (tables, or columns)."),
    click.option("--show-transformations", is_flag=True, help="Show the statements between datasets."),
    click.option("--predicates", is_flag=True, help="Column lineage: follow predicate edges too."),
)


def direction_option(help_text: str) -> Callable[[F], F]:
    return click.option(
        "--direction", type=click.Choice(("up", "down", "both")), default="both", show_default=True, help=help_text
    )


plan_options = _together(
    click.option(
        "--walkplan",
        metavar="NAME|FILE",
        help="What to walk and show: a built-in plan (`lineage walkplans`) or a YAML/XML plan file.",
    ),
    click.option(
        "--arg",
        "plan_args",
        multiple=True,
        metavar="NAME",
        help="Turn on the walkplan's rules marked `when_arg: NAME` (repeatable).",
    ),
    click.option(
        "--exact",
        is_flag=True,
        help="Leave out the statements read approximately (that did not parse; their tables read from tokens).",
    ),
)
picture_options = _together(
    click.option(
        "--group-by",
        type=click.Choice(GROUP_BYS),
        help="GraphML, DOT and Mermaid: frame nodes by schema, workflow or datamart (--datamarts); columns in tables.",
    ),
    click.option(
        "--rankdir",
        type=click.Choice(RANKDIRS),
        help="DOT, Mermaid and pictures: data flows left to right (LR) or top to bottom (TB) [default: LR].",
    ),
)
level_options = _together(
    click.option(
        "--level",
        type=click.Choice(LEVELS),
        help="Roll the answer up: each node replaced by its table, schema, datamart, module or workflow.",
    ),
    click.option(
        "--datamarts",
        type=EXISTING_FILE,
        help="YAML mapping of table name patterns to datamarts, for --level datamart.",
    ),
)


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
@click.argument("paths", nargs=-1, type=EXISTING_PATH)
@click.option("--dialect", help="sqlglot dialect of the SQL (a file's `-- dialect: NAME` line wins).")
@click.option("--default-schema", help="Schema for unqualified table names (`USE db` in a file wins).")
@click.option(
    "--schema",
    "schema_file",
    type=EXISTING_FILE,
    help="Table columns: YAML or JSON, {schema.table: [col, ...]} or {schema: {table: {col: type}}}.",
)
@click.option(
    "--var",
    "var_pairs",
    multiple=True,
    metavar="NAME=VALUE",
    help="Template variable for ${NAME}, ${hivevar:NAME}, #NAME#, {{ NAME }} and Jinja (repeatable).",
)
@click.option(
    "--vars",
    "var_files",
    multiple=True,
    type=EXISTING_FILE,
    help="YAML file of template variables, and of placeholder defaults under `defaults:` (repeatable; --var wins).",
)
@click.option(
    "--manifest",
    "manifest_file",
    type=EXISTING_FILE,
    help="Flow manifest (YAML or CSV): workflow, module, sql_file or sql, targets, declared sources, rows, frequency.",
)
@click.option(
    "--root",
    "manifest_root",
    type=click.Path(exists=True, file_okay=False),
    help="Folder the manifest's sql_file and vars_file, and the files of a --dbt project, must be inside"
    " [default: the manifest's folder, the project's].",
)
@click.option(
    "--dbt",
    "dbt_path",
    type=EXISTING_PATH,
    help="dbt project (or its target/manifest.json): compiled models, sources and seeds.",
)
@click.option(
    "--query-log",
    "query_logs",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, allow_dash=True),
    help="A warehouse's exported query history to harvest (repeatable; - reads standard input): see --log-format.",
)
@click.option(
    "--log-format",
    type=click.Choice(LOG_FORMATS),
    help="Format of --query-log: snowflake (QUERY_HISTORY), bigquery (INFORMATION_SCHEMA.JOBS), redshift"
    " (STL_QUERY, SYS_QUERY_HISTORY), postgres (csvlog), jsonl (sql, default_database, default_schema, user, time;"
    " its SQL is of --dialect).",
)
@click.option(
    "--no-log-databases",
    is_flag=True,
    help="Leave the --query-log rows' databases out of table names, as SQL files' names leave them"
    " (to meet a harvest of the same warehouse's SQL files).",
)
@encoding_option
@store_option
@click.option(
    "-j", "--jobs", type=click.IntRange(min=1), help="Worker processes, at most the CPUs [default: all of them]."
)
@click.option("--no-cache", is_flag=True, help="Parse every file again instead of reusing unchanged results.")
@click.option(
    "--shards",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Also write the harvest's shards to DIR (shard-*.jsonl.gz, replacing those there): `lineage merge` builds"
    " the same store from them.",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "spark"]),
    default="local",
    show_default=True,
    help="Where the units are analysed: this machine's processes, or a PySpark job (needs lineage-cli[spark]).",
)
@click.option(
    "--master",
    metavar="URL",
    help="With --engine spark: the Spark master (local[2], spark://host:7077, yarn) [default: spark-submit's].",
)
@no_wait_option
@click.option("--tables-only", is_flag=True, help="Table lineage only: skip the column analysis.")
@click.option("--strict", is_flag=True, help="Exit 1 if any statement could not be harvested.")
@click.option("--allow-empty", is_flag=True, help="With nothing found to harvest, write an empty store (else: exit 2).")
@click.option("-q", "--quiet", is_flag=True, help="Print errors and the summary only; no progress bar.")
def harvest(
    paths: tuple[str, ...],
    dialect: str | None,
    default_schema: str | None,
    schema_file: str | None,
    var_pairs: tuple[str, ...],
    var_files: tuple[str, ...],
    manifest_file: str | None,
    manifest_root: str | None,
    dbt_path: str | None,
    query_logs: tuple[str, ...],
    log_format: str | None,
    no_log_databases: bool,
    encoding: str | None,
    store: str,
    jobs: int | None,
    no_cache: bool,
    shards: str | None,
    engine: str,
    master: str | None,
    no_wait: bool,
    tables_only: bool,
    strict: bool,
    allow_empty: bool,
    quiet: bool,
) -> None:
    """Parse SQL files into the lineage store: tables, columns, and the statements between them.

    PATHS are files or directories (searched recursively for *.sql).  Statements that
    fail to parse are reported as file:line and the rest is harvested.  Unchanged files
    are read from a cache beside the store; files are parsed in parallel.

    --manifest adds a scheduler's flow: its SQL files (PATHS are then optional), the
    workflow and module of each step, and declared lineage for steps without SQL.
    --dbt adds a dbt project's models, sources and seeds.  Templates are rendered first
    (Jinja, ${hivevar:x}, #x#); a placeholder without a value stays in the table name.
    --query-log adds what a warehouse ran: each query with its row's database and schema,
    failed ones skipped, identical statements once with their runs (file:line is the row).
    --engine spark analyses the units as a PySpark job and merges its shards.

    \b
    Example:
      lineage harvest warehouse/sql --dialect hive --schema schema.json
      lineage harvest etl/ --var etl_date=2024-01-31 --default-schema dwh
      lineage harvest --manifest flows/manifest.yaml --vars flows/vars.yaml
      lineage harvest --dbt jaffle_shop/
      lineage harvest --query-log query_history.csv --log-format snowflake
      lineage harvest warehouse/sql --engine spark --master 'local[2]'
    """
    from lineage_cli.commands.harvest import run_harvest

    if not (paths or manifest_file or dbt_path or query_logs):
        raise click.UsageError("give PATHS, --manifest, --dbt or --query-log")
    if master is not None and engine != "spark":
        raise click.UsageError("--master goes with --engine spark")
    if bool(query_logs) != bool(log_format):
        raise click.UsageError("--query-log and --log-format go together")
    code = run_harvest(
        paths,
        dialect,
        default_schema,
        store,
        schema_file=schema_file,
        var_pairs=var_pairs,
        var_files=var_files,
        manifest_file=manifest_file,
        manifest_root=manifest_root,
        dbt_path=dbt_path,
        query_logs=query_logs,
        log_format=log_format,
        log_databases=not no_log_databases,
        jobs=jobs,
        use_cache=not no_cache,
        columns=not tables_only,
        strict=strict,
        quiet=quiet,
        encoding=encoding,
        allow_empty=allow_empty,
        wait=not no_wait,
        shards=shards,
        engine=engine,
        master=master,
    )
    sys.exit(code)


@cli.command()
@click.argument("shards", nargs=-1, required=True, type=click.Path(dir_okay=False))
@store_option
@no_wait_option
def merge(shards: tuple[str, ...], store: str, no_wait: bool) -> None:
    """Build one store from a harvest's shards (`lineage harvest --shards DIR`, a Spark job's, or your own).

    SHARDS are shard files (JSON lines, docs/shards.md): every shard of one harvest, in any order.  The store
    is the one the harvest itself writes, byte for byte, when it ran without a cache.

    \b
    Example:
      lineage harvest warehouse/sql --shards shards/ --no-cache
      lineage merge shards/shard-*.jsonl.gz --store merged.lin
    """
    from lineage_cli.commands.merge import run_merge

    sys.exit(run_merge(shards, store, wait=not no_wait))


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(allow_dash=True, dir_okay=False))
@click.option("--dialect", default="ansi", show_default=True, help="sqlglot dialect of the SQL.")
@click.option(
    "--schema",
    "schema_file",
    type=EXISTING_FILE,
    help="Table columns: YAML or JSON, {schema.table: [col, ...]} or {schema: {table: {col: type}}}.",
)
@click.option("--default-schema", help="Schema for unqualified table names.")
@click.option(
    "--var",
    "variables",
    multiple=True,
    metavar="NAME=VALUE",
    help="Template variable for ${NAME}, ${hivevar:NAME}, #NAME#, {{ NAME }} (repeatable).",
)
@encoding_option
@click.option("--format", "fmt", type=click.Choice(("json",)), default="json", show_default=True)
def parse(
    files: tuple[str, ...],
    dialect: str,
    schema_file: str | None,
    default_schema: str | None,
    variables: tuple[str, ...],
    encoding: str | None,
    fmt: str,
) -> None:
    """Print the lineage of SQL statements as JSON, without touching the store.

    FILES are SQL files, or `-` (the default) for standard input.  The JSON is the
    contract other tools read: statements with file, line, type, targets, sources and
    column edges (projection / predicate, with subtypes), and errors with file and line.

    \b
    Example:
      lineage parse etl/load_orders.sql --dialect hive --schema schema.yaml
      echo "INSERT INTO a.t SELECT x FROM a.s" | lineage parse
    """
    from lineage_cli.commands.parse import run_parse

    sys.exit(run_parse(files or ("-",), dialect, schema_file, default_schema, variables, encoding))


def _walk_command(direction: str) -> Callable[..., None]:
    word = "upstream" if direction == "up" else "downstream"

    @click.argument("name")
    @walk_options
    @plan_options
    @level_options
    @picture_options
    @store_option
    @output_options
    def command(**options: Any) -> None:  # noqa: ANN401 - the options above, as click passes them
        from lineage_cli.commands.walk import run_walk_options

        if options["walkplan"] and (options["show_transformations"] or options["predicates"]):
            raise click.UsageError("--walkplan replaces --show-transformations and --predicates")
        sys.exit(run_walk_options(direction, options))

    command.__doc__ = f"""Show everything {word} of NAME.

    NAME is a table, view or column, case-insensitive; the default schema may be omitted;
    a SQL LIKE pattern (`stg.%`, `%.t_sales%`) merges the lineage of every match.
    --walkplan chooses what is walked and shown (default: `tables` for tables and views,
    `columns` for columns); --level rolls the answer up to tables, schemas, datamarts,
    modules or workflows.  A column shows the SQL expression its statement writes it with
    (under it in the tree; `expression` in JSON and GraphML; the tooltip in DOT).

    \b
    Example:
      lineage {direction} mart.sales_daily --depth 2
      lineage {direction} 'stg.%' -o lineage.graphml
      lineage {direction} dwh.fct_sales --walkplan impact --level table
      lineage {direction} mart.sales_daily --level schema
      lineage {direction} mart.sales_daily.revenue_usd --group-by schema -o lineage.svg
    """
    return command


cli.command(name="up")(_walk_command("up"))
cli.command(name="down")(_walk_command("down"))


@cli.command()
@click.argument("names", nargs=-1, required=True, metavar="NAME...")
@direction_option("Walk upstream and downstream of NAME, or one way only.")
@walk_options
@plan_options
@level_options
@store_option
@click.option("-o", "--output", type=OUTPUT_FILE, help="Write the page to FILE.html instead of opening it.")
@click.option("--no-open", "no_open", is_flag=True, help="Print the page on standard output instead of opening it.")
def view(**options: Any) -> None:  # noqa: ANN401 - the options above, as click passes them
    """Draw the lineage around NAME in the browser: one self-contained HTML page.

    The queried node sits in the middle, what it comes from in columns to the left, what it
    feeds to the right.  Click a node to centre it; the +/- on a table or group unfolds its
    columns or members; the level, the search box (SQL LIKE: `stg.%`) and the predicate
    switch are in the bar.  The page needs no network.  NAME and the walk options are those of
    `lineage up`; --level is the level the page opens at (it can be changed there).

    \b
    Example:
      lineage view mart.sales_daily
      lineage view mart.sales_daily.revenue_usd -o revenue.html
      lineage view 'dwh.fct_%' --depth 2 --level schema --no-open > fct.html
    """
    from lineage_cli.commands.view import run_view

    if options["walkplan"] and (options["show_transformations"] or options["predicates"]):
        raise click.UsageError("--walkplan replaces --show-transformations and --predicates")
    if options["output"] and options["no_open"]:
        raise click.UsageError("-o writes the page to a file and --no-open prints it: give one of them")
    options["open_browser"] = not options.pop("no_open")
    sys.exit(run_view(options))


@cli.command()
@click.argument("source")
@click.argument("target")
@click.option("--all", "all_paths", is_flag=True, help="Every simple path, not just the shortest.")
@click.option(
    "--max-paths",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="With --all: stop after N paths.",
)
@click.option("--depth", type=click.IntRange(min=1), help="Paths of at most N hops.")
@plan_options
@level_options
@picture_options
@store_option
@output_options
def path(
    source: str,
    target: str,
    all_paths: bool,
    max_paths: int,
    depth: int | None,
    walkplan: str | None,
    plan_args: tuple[str, ...],
    exact: bool,
    level: str | None,
    datamarts: str | None,
    group_by: str | None,
    rankdir: str | None,
    store: str,
    fmt: str | None,
    output: str | None,
) -> None:
    """Show how SOURCE reaches TARGET downstream: the shortest path, or all of them.

    SOURCE and TARGET each name one table, view or column.  The walk follows the walkplan
    (default: `tables`, or `columns` from a column); no path exits 1 with a message.

    \b
    Example:
      lineage path stg.pos_sales mart.sales_daily
      lineage path stg.pos_sales mart.sales_daily --all -o paths.graphml
      lineage path stg.pos_sales_line.unit_price mart.sales_daily.revenue_usd
    """
    from lineage_cli.commands.walk import Shaping, run_path

    sys.exit(
        run_path(
            source,
            target,
            store,
            fmt=fmt,
            output=output,
            all_paths=all_paths,
            max_paths=max_paths,
            depth=depth,
            shaping=Shaping(walkplan, plan_args, level, datamarts, group_by, rankdir, exact),
        )
    )


@cli.command()
@click.argument("name")
@store_option
@output_options
def io(name: str, store: str, fmt: str | None, output: str | None) -> None:
    """Show what a workflow or module reads and writes.

    NAME is a workflow or a module (`workflow/module`) of a flow manifest.  Each dataset
    it reads points into it, each one it writes points out of it (a table both read and
    written gets both); input views are traced to their tables, parameterized tables to
    the table their default names.

    \b
    Example:
      lineage io wf_sales
      lineage io wf_sales/build_sales -o build_sales.graphml
    """
    from lineage_cli.commands.walk import run_io

    sys.exit(run_io(name, store, fmt, output))


@cli.command()
@click.argument("name", required=False)
def walkplans(name: str | None) -> None:
    """List the built-in walkplans, or print one (to copy into a plan file of your own).

    A walkplan says, per edge type, which way to follow it, whether to go on from the
    node it reaches, whether to show that node and the edge, and under which conditions;
    pass one to up, down or path with --walkplan NAME or --walkplan FILE.yaml.

    \b
    Example:
      lineage walkplans
      lineage walkplans impact > my-impact.json
    """
    from lineage_cli.commands.walk import run_walkplans

    sys.exit(run_walkplans(name))


@cli.command()
@store_option
@click.option(
    "--host",
    metavar="ADDRESS",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; anything but loopback lets other machines read the lineage (a warning says so).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0: any free one).",
)
@click.option(
    "--datamarts",
    type=EXISTING_FILE,
    help="YAML mapping of table name patterns to datamarts, for level=datamart.",
)
@click.option("-q", "--quiet", is_flag=True, help="Do not log a line per request on standard error.")
def serve(store: str, host: str, port: int, datamarts: str | None, quiet: bool) -> None:
    """Serve the store read-only over HTTP: the lineage API and the viewer page.

    GET /api/up?name=NAME and /api/down answer exactly what `lineage up/down NAME
    --format json` prints, /api/path?from=A&to=B what `lineage path` does; parameters are
    the commands' options (depth, walkplan, arg, exact, level, ...).  /api/search?q=PATTERN
    lists names matching a LIKE pattern, /api/node?name=NAME describes one node, and / is
    the viewer.  A re-harvested store is picked up without a restart; Ctrl-C stops.

    \b
    Example:
      lineage serve
      curl 'http://127.0.0.1:8765/api/up?name=mart.sales_daily&depth=2'
      lineage serve --store warehouse.lin --port 0
    """
    from lineage_cli.commands.serve import run_serve

    sys.exit(run_serve(store, host, port, datamarts, quiet))


@cli.command(name="import")
@click.argument("file", type=EXISTING_FILE)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("csv", "tsv", "jsonl", "hive", "openlineage")),
    help="Input format [default: from the file's extension].",
)
@click.option("--replace", is_flag=True, help="Replace the store instead of merging into it.")
@click.option(
    "--namespace",
    "namespaces",
    multiple=True,
    metavar="NS",
    help="openlineage: datasets of namespace NS are named without it (repeatable) [default: default]; "
    "others keep it, as NS/name (hive://cluster/dwh.sales) or NS:name (bigquery:p.ds.t).",
)
@store_option
@no_wait_option
def import_(file: str, fmt: str | None, replace: bool, namespaces: tuple[str, ...], store: str, no_wait: bool) -> None:
    """Merge lineage from another tool into the store.

    \b
    Formats:
      csv, tsv, jsonl  edge lists with a header naming the columns source, target and
                       optionally type (flow | projection | predicate | contains) and
                       subtype (e.g. FILTER or IDENTITY; several joined by ',' or '|')
      hive             Hive LineageLogger hook output (JSON lines with vertices and edges)
      openlineage      OpenLineage run or job events (JSON lines, or one event or array),
                       e.g. from `lineage export`

    Bad rows are reported with their line number and skipped.

    \b
    Example:
      lineage import edges.csv
      lineage import hive_lineage.log --format hive
      lineage import events.json --format openlineage
      lineage import events.json --format openlineage --namespace hive://cluster
    """
    from lineage_cli.commands.import_ import run_import

    sys.exit(run_import(file, fmt, store, replace, wait=not no_wait, namespaces=namespaces))


@cli.command()
@click.argument("name", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("openlineage",)),
    default="openlineage",
    show_default=True,
    help="Export format.",
)
@direction_option("With NAME: the statements upstream, downstream or both ways of it.")
@click.option(
    "--walkplan", help="With NAME: the walkplan (name or file) that picks the statements [default: transformations]."
)
@click.option("--arg", "args", multiple=True, metavar="NAME", help="Activate the plan's rules marked when_arg: NAME.")
@click.option("-o", "--output", type=OUTPUT_FILE, help="Write to FILE instead of standard output.")
@click.option(
    "--to",
    metavar="URL",
    help="Push the events: http(s)://HOST[:PORT][/PATH] (an OpenLineage endpoint; PATH defaults to "
    "/api/v1/lineage), kafka://BROKER[,BROKER]/TOPIC[?SETTING=VALUE], file://PATH.",
)
@click.option(
    "--api-key-env",
    metavar="VAR",
    help="With --to http(s)://: send the value of environment variable VAR as `Authorization: Bearer ...`.",
)
@click.option(
    "--retries",
    type=click.IntRange(0, 100),
    default=5,
    show_default=True,
    help="With --to: attempts more after a 5xx answer or a connection error (4xx is final).",
)
@click.option(
    "--retry-delay",
    type=click.FloatRange(0, 600),
    default=0.5,
    show_default=True,
    metavar="SECONDS",
    help="With --to: the wait before the first retry, doubled for each next one (at most 30 s).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 3600),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="With --to: per request (Kafka: for the delivery reports of each round).",
)
@click.option(
    "--batch",
    type=click.IntRange(1, 10000),
    default=1,
    show_default=True,
    help="With --to http(s)://: events per request, >1 posts a JSON array (Marquez takes one event a request).",
)
@click.option(
    "--connections", type=click.IntRange(1, 64), default=4, show_default=True, help="With --to http(s)://: in flight."
)
@click.option(
    "--namespace",
    "namespaces",
    multiple=True,
    metavar="[SCHEMA=]NS",
    help="Namespace of the tables (hive://cluster), or of the tables of one schema or catalog (dwh=postgres://db:5432);"
    " repeatable; beats a flow manifest's namespaces [default: default]. Files are under their scheme and authority.",
)
@click.option("--job-namespace", default="lineage", show_default=True, help="Namespace of the jobs.")
@click.option(
    "--repo-url",
    metavar="URL",
    help="Repository of the SQL files, for the sourceCodeLocation facet [default: git remote get-url origin].",
)
@click.option(
    "--event-time",
    metavar="ISO8601",
    help="eventTime of every event, with a time zone [default: 1970-01-01T00:00:00Z, reproducible].",
)
@store_option
def export(
    name: str | None,
    fmt: str,
    direction: str,
    walkplan: str | None,
    args: tuple[str, ...],
    output: str | None,
    to: str | None,
    api_key_env: str | None,
    retries: int,
    retry_delay: float,
    timeout: float,
    batch: int,
    connections: int,
    namespaces: tuple[str, ...],
    job_namespace: str,
    repo_url: str | None,
    event_time: str | None,
    store: str,
) -> None:
    """Export the store, or the lineage of NAME, for other lineage tools, or push it to one.

    Without NAME every statement is exported; with NAME only the statements its lineage
    walks through (`--direction`, `--walkplan`).

    openlineage: one COMPLETE RunEvent per statement, as JSON lines.  The job is the
    statement's workflow/module (from a flow manifest) or its file:line, with the jobType
    and sourceCodeLocation facets; inputs and outputs carry the schema facet and the
    columnLineage facet (DIRECT for projection edges, INDIRECT for predicate edges).
    `lineage import --format openlineage` reads the events back.

    --to pushes the events to a consumer (Marquez, DataHub, Data.Rentgen, OpenMetadata),
    retrying 5xx answers and connection errors with exponential backoff, and prints what
    was sent, failed and retried; it exits 1 when an event could not be delivered.  Kafka
    needs the extra: pip install 'lineage-cli[openlineage]'.

    \b
    Example:
      lineage export -o events.json --namespace hive://cluster
      lineage export --event-time 2024-01-31T06:00:00Z | head -1
      lineage export mart.sales_daily --direction up -o sales_daily.json
      lineage export --to http://localhost:5000 --event-time "$(date -u +%FT%TZ)"
      OL_KEY=... lineage export --to https://ol.example.com/api/v1/lineage --api-key-env OL_KEY
      lineage export --to kafka://broker:9092/openlineage --namespace dwh=postgres://db:5432
    """
    from lineage_cli.commands.export import PushSettings, run_export
    from lineage_cli.emit.push import Policy
    from lineage_cli.walk.scope import Scope

    scope = Scope(name, direction, walkplan, frozenset(args)) if name else None
    policy = Policy(retries, retry_delay, timeout=timeout, batch=batch, connections=connections)
    settings = PushSettings(to, api_key_env, policy)
    sys.exit(run_export(store, output, namespaces, job_namespace, event_time, scope, settings, repo_url))


@cli.command()
@store_option
@click.option("--verify", is_flag=True, help="Also check the checksum of the whole file.")
def stats(store: str, verify: bool) -> None:
    """Count the store's nodes and edges by kind.

    \b
    Example:
      lineage stats --store .lineage/graph.lin
    """
    from lineage_cli.commands.stats import run_stats

    sys.exit(run_stats(store, verify=verify))


@cli.command()
@click.argument("paths", nargs=-1, type=EXISTING_FILE)
@click.option(
    "--base",
    metavar="REF",
    help="Compare with the merge base of HEAD and REF [default REF: origin/HEAD, main or master].",
)
@click.option(
    "--staged",
    is_flag=True,
    help="Check the staged change as a whole (the index against HEAD, deletions included), not PATHS: for pre-commit.",
)
@store_option
@click.option("--dialect", help="sqlglot dialect of the SQL (a file's `-- dialect: NAME` line wins).")
@click.option("--schema", "schema_file", type=EXISTING_FILE, help="Tables' columns (YAML/JSON).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "github", "json", "sarif")),
    default="text",
    show_default=True,
    help="text for people, github workflow commands, json, SARIF 2.1.0.",
)
@click.option(
    "--fail-on",
    type=click.Choice(("error", "breaking", "change", "never")),
    default="error",
    show_default=True,
    help="Exit 1 on errors (parse errors, a removed column or table still read), also on warnings "
    "(narrowed types), also on any lineage change, or never (warn-only).",
)
@encoding_option
def check(
    paths: tuple[str, ...],
    base: str | None,
    staged: bool,
    store: str,
    dialect: str | None,
    schema_file: str | None,
    fmt: str,
    fail_on: str,
    encoding: str | None,
) -> None:
    """Check changed SQL: parse errors, lineage diff, downstream impact, breaking changes.

    Without PATHS, checks the .sql files added, changed or removed since the base revision;
    each is analysed as it is now and as it was at the base, against the stored warehouse.
    With --staged, the staged change against HEAD, deletions included (the pre-commit hook).

    \b
    Example:
      lineage check --base origin/main --fail-on breaking
      lineage check etl/orders.sql --format github
      lineage check --staged
    """
    from lineage_cli.commands.check import run_check

    sys.exit(run_check(list(paths), base, store, dialect, schema_file, fmt, fail_on, staged, encoding))


def main() -> None:
    """The click command line, then an exit without tearing the interpreter down (``quick.finish``)."""
    from lineage_cli.commands.quick import finish

    try:
        cli(prog_name="lineage")
    except SystemExit as done:
        code = _exit_status(done.code)
    else:
        code = 0
    finish(code)


def _exit_status(code: object) -> int:
    """The process status ``sys.exit(code)`` would give: an int as it is, None as 0, anything else printed, 1."""
    if code is None or isinstance(code, int):
        return code or 0
    print(code, file=sys.stderr)
    return 1
