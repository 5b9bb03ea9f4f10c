"""lineage: a SQL-parsing data-lineage harvester, as a command line and as a library.

The package is a pipeline in one direction: ``harvest`` (SQL -> graph), ``store`` (graph -> memory-mapped
file), ``walk`` (queries on the file), ``emit`` (results -> tree, JSON, TGF, GraphML, DOT, Mermaid).  The names of
``__all__`` are its public API, what the ``lineage`` commands run::

    import lineage_cli

    store = lineage_cli.open_store(".lineage/graph.lin")
    result = lineage_cli.up(store, "mart.sales_daily", depth=2)
    by_schema = lineage_cli.rollup(store, result, "schema")

Every error they report is a ``LineageError`` whose ``exit_code`` is the command's.  Heavy modules (sqlglot,
numpy, rich) are imported lazily so that ``import lineage_cli`` stays cheap: each function imports its
stage when it is called, and the classes are looked up when first named (the module's ``__getattr__``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

__version__ = "0.3.0"

# Python sets a package as an attribute of its parent when the package is first imported, and this module
# names a function ``harvest`` like the stage: imported here, before the function is defined, the package is
# never set again, and ``lineage_cli.harvest`` stays the function (``from lineage_cli.harvest.x import y``
# goes by ``sys.modules``, never by this attribute).  After ``__version__``, which the stage's modules import.
__import__("lineage_cli.harvest")

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable, Mapping

    from lineage_cli.errors import LineageError
    from lineage_cli.harvest.assemble import Harvest
    from lineage_cli.harvest.inputs.dbt import DbtProject
    from lineage_cli.harvest.inputs.manifest import Manifest
    from lineage_cli.harvest.schema import SchemaCatalog
    from lineage_cli.walk.lineage_store import LineageStore as Store
    from lineage_cli.walk.result import LineageResult
    from lineage_cli.walk.walkplan import WalkPlan

__all__ = [
    "__version__",
    "harvest",
    "parse_sql",
    "open_store",
    "up",
    "down",
    "path",
    "rollup",
    "Store",
    "LineageResult",
    "WalkPlan",
    "LineageError",
]

# The public classes, by the module that defines them: imported when first named.
_CLASSES = {
    "Store": ("lineage_cli.walk.lineage_store", "LineageStore"),
    "LineageResult": ("lineage_cli.walk.result", "LineageResult"),
    "WalkPlan": ("lineage_cli.walk.walkplan", "WalkPlan"),
    "LineageError": ("lineage_cli.errors", "LineageError"),
}


def harvest(
    paths: Iterable[str | os.PathLike[str]] = (),
    dialect: str | None = None,
    default_schema: str | None = None,
    *,
    schema: SchemaCatalog | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    variables: Mapping[str, str] | None = None,
    manifest: str | os.PathLike[str] | None = None,
    dbt: str | os.PathLike[str] | None = None,
    columns: bool = True,
    jobs: int = 1,
    cache_dir: str | os.PathLike[str] | None = None,
    encoding: str | None = None,
    query_logs: Iterable[str | os.PathLike[str]] = (),
    log_format: str | None = None,
    log_databases: bool = True,
) -> Harvest:
    """Harvest SQL into one lineage graph, as ``lineage harvest`` does before it writes the store.

    Statements that cannot be read are reported in the result's ``issues`` and the rest is harvested.

    Args:
        paths: SQL files, and folders searched for ``*.sql`` files.
        dialect: The dialect of the SQL (a profile such as ``hive``, or any sqlglot dialect); ``ansi`` by default.
        default_schema: The schema of unqualified table names.
        schema: Table columns: a ``SchemaCatalog``, a mapping (``{"db.t": ["a", "b"]}`` or nested) or a YAML or
            JSON file, as ``--schema`` takes.
        variables: Values of template placeholders (``${etl_date}``, ``{{ var('x') }}``), as ``--var``.
        manifest: A scheduler's flow manifest (YAML or CSV), as ``--manifest``: its steps are harvested too.
        dbt: A dbt project, its ``target`` folder or its ``manifest.json``, as ``--dbt``.
        columns: Column lineage as well as table lineage (``False``: ``--tables-only``).
        jobs: Worker processes (capped at the CPUs this process may use).
        cache_dir: A folder for the cache of each file's analysis; none by default.
        encoding: The encoding of files without a byte-order mark or ``-- encoding:`` line (UTF-8 by default).
        query_logs: A warehouse's exported query history, as ``--query-log`` (``docs/query-logs.md``).
        log_format: Their format: ``snowflake``, ``bigquery``, ``redshift``, ``postgres`` or ``jsonl``.
        log_databases: Whether their rows' databases are the first part of table names (``False``:
            ``--no-log-databases``).

    Returns:
        The ``Harvest``: its ``graph`` (nodes and edges), ``issues`` (``errors`` among them), and counts of
        ``files`` and ``statements``.

    Raises:
        InputError: a path, schema, manifest, dbt project, dialect or log format that cannot be used (a
            ``LineageError``).
    """
    from pathlib import Path

    from lineage_cli.harvest.batch import harvest as harvest_files
    from lineage_cli.harvest.schema import as_catalog

    return harvest_files(
        paths,
        dialect,
        default_schema,
        schema=as_catalog(schema) if schema is not None else None,
        variables=variables,
        manifest=_manifest(manifest),
        dbt=_dbt(dbt, dialect, encoding),
        columns=columns,
        jobs=jobs,
        cache_dir=Path(cache_dir) if cache_dir is not None else None,
        encoding=encoding,
        query_logs=[os.fspath(log) for log in query_logs],
        log_format=log_format,
        log_databases=log_databases,
    )


def parse_sql(sql: str, **options: Any) -> dict[str, Any]:
    """The lineage of a SQL text, as ``lineage parse`` prints it.

    Args:
        sql: One or more statements.
        **options: ``dialect`` (``ansi`` by default), ``schema`` (as ``harvest`` takes it), ``variables``,
            ``default_schema``, and ``file`` (the name issues give).

    Returns:
        ``{"statements": [...], "errors": [...], "warnings": [...]}``: each statement's type, targets, sources
        and column edges (``docs/parse-json.md``).

    Raises:
        InputError: an unknown dialect, or a schema that cannot be used (a ``LineageError``).
    """
    from lineage_cli.harvest.sql.api import parse_sql as parse

    return parse(sql, **options)


def open_store(path: str | os.PathLike[str]) -> Store:
    """Open a store file written by ``lineage harvest`` or ``lineage import``, for queries.

    Args:
        path: The store file (``.lineage/graph.lin`` by default on the command line).

    Returns:
        The ``Store``, memory-mapped and read-only, for ``up``, ``down``, ``path`` and ``rollup``.

    Raises:
        StoreError: the file is missing, no store, damaged or of another format version (a ``LineageError``).
    """
    from lineage_cli.walk.lineage_store import LineageStore

    return LineageStore(path)


def up(
    store: Store,
    name: str,
    depth: int | None = None,
    walkplan: WalkPlan | str | None = None,
    *,
    args: Iterable[str] = (),
    show_transformations: bool = False,
    predicates: bool = False,
    exact: bool = False,
) -> LineageResult:
    """Everything upstream of the named nodes, as ``lineage up NAME`` answers.

    Args:
        store: An open store (``open_store``).
        name: A table, view or column: its name, its name without the schema, or a LIKE pattern (``stg.%``).
        depth: At most this many hops; no limit by default.
        walkplan: A built-in plan's name (``lineage walkplans``), a plan file or a ``WalkPlan``; by default the
            plan the node's kind and the two flags choose.
        args: The names that turn on a plan's rules marked ``when_arg`` (``--arg``).
        show_transformations: Keep the statements between datasets in the answer.
        predicates: Follow the predicate edges onto tables (columns read by WHERE, JOIN ON ...) as well; those
            onto a column (the conditions and window keys that shape its value) are followed anyway.
        exact: Leave out the statements read approximately (that did not parse), as ``--exact`` does.

    Returns:
        The ``LineageResult``: its ``nodes`` (with their depth) and ``edges``, in data-flow direction;
        ``to_dict()`` is the ``--format json`` document.

    Raises:
        QueryError: no node, or more than one when a single one is meant, has the name (``NameNotFound``,
            ``AmbiguousName``), or the walkplan cannot be read (``PlanError``): a ``LineageError``.
    """
    return _lineage(store, "up", name, depth, walkplan, args, show_transformations, predicates, exact)


def down(
    store: Store,
    name: str,
    depth: int | None = None,
    walkplan: WalkPlan | str | None = None,
    *,
    args: Iterable[str] = (),
    show_transformations: bool = False,
    predicates: bool = False,
    exact: bool = False,
) -> LineageResult:
    """Everything downstream of the named nodes, as ``lineage down NAME`` answers.

    Args:
        store: An open store (``open_store``).
        name: A table, view or column: its name, its name without the schema, or a LIKE pattern (``stg.%``).
        depth: At most this many hops; no limit by default.
        walkplan: A built-in plan's name (``impact``, ...), a plan file or a ``WalkPlan``; by default the plan
            the node's kind and the two flags choose.
        args: The names that turn on a plan's rules marked ``when_arg`` (``--arg``).
        show_transformations: Keep the statements between datasets in the answer.
        predicates: Follow the predicate edges onto tables (columns read by WHERE, JOIN ON ...) as well; those
            onto a column (the conditions and window keys that shape its value) are followed anyway.
        exact: Leave out the statements read approximately (that did not parse), as ``--exact`` does.

    Returns:
        The ``LineageResult``, edges in data-flow direction; ``to_dict()`` is the ``--format json`` document.

    Raises:
        QueryError: no node has the name, or the walkplan cannot be read (a ``LineageError``).
    """
    return _lineage(store, "down", name, depth, walkplan, args, show_transformations, predicates, exact)


def path(
    store: Store,
    source: str,
    target: str,
    walkplan: WalkPlan | str | None = None,
    *,
    args: Iterable[str] = (),
    depth: int | None = None,
    all_paths: bool = False,
    max_paths: int = 100,
    show_transformations: bool = False,
    exact: bool = False,
) -> LineageResult:
    """How ``source`` reaches ``target`` downstream, as ``lineage path SOURCE TARGET`` answers.

    With ``all_paths``, a path search that stops at ``max_paths`` says so with a ``UserWarning``, as the
    command does on standard error.

    Args:
        store: An open store (``open_store``).
        source: The node the data comes from: a name that names exactly one node.
        target: The node it goes to.
        walkplan: The plan walked (as ``down`` takes it); by default the one ``down(store, source)`` walks.
        args: The names that turn on a plan's rules marked ``when_arg``.
        depth: Paths of at most this many hops.
        all_paths: Every simple path, not only the shortest one.
        max_paths: With ``all_paths``, at most this many paths.
        show_transformations: Keep the statements on the path.
        exact: Not through the statements read approximately (that did not parse), as ``--exact``.

    Returns:
        The ``LineageResult`` of the path's nodes and edges.

    Raises:
        QueryError: ``NoPath``: no path under the plan, or a name that does not name exactly one node (a
            ``LineageError``).
    """
    import warnings

    from lineage_cli.walk.paths import lineage_path

    steps = show_transformations
    plan, named = walkplan, frozenset(args)
    found = lineage_path(store, source, target, plan, named, depth, all_paths, max_paths, steps, exact)
    if not found.complete:
        warnings.warn(f"showing the first {found.paths} paths; raise max_paths for more", UserWarning, stacklevel=2)
    return found.result


def rollup(
    store: Store, result: LineageResult, level: str, datamarts: str | os.PathLike[str] | None = None
) -> LineageResult:
    """``result`` with every node lifted to its container at ``level``, as ``--level`` shows an answer.

    Data climbs column -> table -> schema (or -> datamart), statements transformation -> module -> workflow:
    to lift statements, ask for them (``show_transformations=True``), as ``--level module`` does.

    Args:
        store: The store ``result`` comes from.
        result: An answer of ``up``, ``down`` or ``path``.
        level: One of ``column``, ``table``, ``schema``, ``datamart``, ``module``, ``workflow``.
        datamarts: For the ``datamart`` level, a YAML file of table name patterns to datamarts
            (``dwh.fct_%: sales``), as ``--datamarts`` takes.

    Returns:
        A new ``LineageResult`` of the containers and the edges between them.

    Raises:
        QueryError: ``LevelError``: an unknown level, or datamarts missing or unusable (a ``LineageError``).
    """
    from lineage_cli.walk.levels import load_datamarts
    from lineage_cli.walk.levels import rollup as lift

    return lift(store, result, level, load_datamarts(datamarts) if datamarts is not None else None)


def __getattr__(name: str) -> Any:  # noqa: ANN401 - one of the public classes
    """The public classes, imported when first named: ``lineage_cli.Store`` loads the walk modules only then."""
    if name not in _CLASSES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _CLASSES[name]
    value = getattr(__import__(module, fromlist=[attribute]), attribute)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _lineage(
    store: Store,
    direction: str,
    name: str,
    depth: int | None,
    walkplan: WalkPlan | str | None,
    args: Iterable[str],
    show_transformations: bool,
    predicates: bool,
    exact: bool,
) -> LineageResult:
    """``up`` / ``down``: the store's own query (``LineageStore.lineage``), for any open store."""
    from lineage_cli.walk.lineage_store import LineageStore

    flags = {"show_transformations": show_transformations, "predicates": predicates, "exact": exact}
    return LineageStore.lineage(store, direction, name, depth, walkplan, args=args, **flags)  # type: ignore[arg-type]


def _manifest(manifest: str | os.PathLike[str] | None) -> Manifest | None:
    if manifest is None:
        return None
    from lineage_cli.harvest.inputs.manifest import load_manifest

    return load_manifest(manifest)


def _dbt(project: str | os.PathLike[str] | None, dialect: str | None, encoding: str | None) -> DbtProject | None:
    if project is None:
        return None
    from lineage_cli.harvest.inputs.dbt import load_dbt

    return load_dbt(project, dialect, encoding=encoding)
