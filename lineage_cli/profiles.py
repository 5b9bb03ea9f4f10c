"""Dialect profiles: the per-dialect facts in ``dialects/*.yaml``.

A profile names the sqlglot dialect that parses the SQL and holds what sqlglot does
not know or what we decide per dialect: identifier case folding, the default schema,
masking, counting and extra aggregate functions, placeholder styles, what ``USE`` switches,
the pseudo-tables of a trigger, whether a select alias is a name later in its select list, the
functions that move partitions between tables.
The YAML files ship inside the wheel (``lineage_cli/dialects``) and sit at the repository
root in a source checkout.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lineage_cli.errors import InputError
from lineage_cli.yamlsafe import load

_PACKAGED = Path(__file__).resolve().parent / "dialects"
_CHECKOUT = Path(__file__).resolve().parent.parent / "dialects"


# `USE x` / `USE SCHEMA x` / `USE DATABASE x` set the schema, `USE CATALOG x` the catalog (Hive, Spark, MySQL,
# Databricks: there a database is a schema)
_DEFAULT_USE_SWITCHES: tuple[tuple[str, str], ...] = (
    ("", "schema"),
    ("database", "schema"),
    ("schema", "schema"),
    ("catalog", "catalog"),
)
_SWITCHED = frozenset({"schema", "catalog"})


class ProfileError(InputError):
    """A dialect profile is unknown or malformed."""


# The dialects sqlglot parses (its ``sqlglot.dialects.DIALECTS``, lower-cased), written out so that choosing a
# profile never imports sqlglot: this module sits below every stage, and the query path loads profiles too.
# tests/test_profiles.py keeps the set equal to the installed sqlglot's.
SQLGLOT_DIALECTS = frozenset(
    {
        "athena", "bigquery", "clickhouse", "databricks", "dax", "doris", "dremio", "drill", "druid", "duckdb",
        "dune", "exasol", "fabric", "hive", "materialize", "mysql", "oracle", "postgres", "presto", "prql",
        "redshift", "risingwave", "singlestore", "snowflake", "solr", "spark", "spark2", "sqlite", "starrocks",
        "tableau", "teradata", "trino", "tsql",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class DialectProfile:
    name: str
    sqlglot_dialect: str
    description: str = ""
    case_folding: str = "lower"  # lower | upper | preserve, for unquoted identifiers
    quoted_case_folding: str = "lower"
    default_schema: str | None = None
    masking_functions: frozenset[str] = frozenset()
    count_functions: frozenset[str] = frozenset()
    aggregate_functions: frozenset[str] = frozenset()
    placeholder_styles: tuple[str, ...] = ()
    # T-SQL ends a statement where the next one starts, semicolon or not, and a batch at a `GO` line
    optional_semicolons: bool = False
    # What `USE [KIND] name` switches, by its KIND word ("" when there is none): "schema" (unqualified
    # tables take `name` as their schema) or "catalog" (another database: names do not change, see
    # ``use_switch``).  A KIND not listed (WAREHOUSE, ROLE) switches nothing that names a table.
    use_switches: tuple[tuple[str, str], ...] = _DEFAULT_USE_SWITCHES
    # Names that, inside a trigger's body, stand for the rows of the trigger's table (T-SQL's
    # INSERTED / DELETED): not tables of their own
    trigger_row_tables: frozenset[str] = frozenset()
    # Names that, inside a trigger's body, qualify the columns of the row it fires for (MySQL's NEW.c, Oracle's
    # :NEW.c): columns of the trigger's table
    trigger_row_variables: frozenset[str] = frozenset()
    # What `SELECT ... INTO name` does: "table" creates it (T-SQL), "variables" assigns them (PL/SQL, MySQL,
    # Snowflake scripting), "variables_in_routines" does the one in a routine's body, the other outside (plpgsql)
    select_into: str = "variables_in_routines"
    # The output columns of table functions sqlglot gives none (Snowflake's SPLIT_TO_TABLE: seq, index, value),
    # by function name: a bare `value` then names the function's column, not an unknown table's
    table_function_columns: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # One-row tables of no data that queries name to select expressions (Oracle's and MySQL's DUAL): no dataset
    dummy_tables: frozenset[str] = frozenset()
    # Whether a select-list alias may be named later in the same select list (Snowflake's `a + 1 AS b, b * 2
    # AS c`); where it may not, the name is a column of the FROM tables
    lateral_column_aliases: bool = False
    # Functions a plain SELECT calls to move one table's partitions into another (Vertica's
    # SWAP_PARTITIONS_BETWEEN_TABLES): name -> the positions of the source and the target table's name among its
    # arguments, counted from 0
    partition_functions: tuple[tuple[str, tuple[int, int]], ...] = ()
    # Whether `WITH c AS (SELECT ... FROM t) INSERT INTO c ...` inserts into t (T-SQL's updatable CTEs); where
    # not, an INSERT's target is always a table, whatever the statement's CTEs are called
    inserts_through_ctes: bool = False
    # The names of a VALUES list's columns where no alias names them (`{n}` counts from 1, `{i}` from 0): Spark's
    # `SELECT col1 FROM VALUES (1, 2)`, Postgres' `column1`
    values_column_names: str = "_c{i}"
    # Commands of the dialect's client, not SQL, that a script's line may start a statement with (the Hive CLI's
    # `dfs -rmr ../x;`, `source q.sql;`): skipped to their semicolon
    client_commands: tuple[str, ...] = ()
    # Statements sqlglot does not read that move no data, by their first words (Impala's COMPUTE STATS,
    # BigQuery's ASSERT): skipped whole wherever they stand, with no error; each holds its words upper-cased
    unread_statements: tuple[tuple[str, ...], ...] = ()
    # Whether a quoted name alone that looks like a file (a path, a data file's extension) is that file (DuckDB's
    # `FROM 'in/x.parquet'`); where not (Hive, Spark: `` `src/_/cbo` ``), it is a table's name like any other
    quoted_paths_are_files: bool = True

    def fold(self, identifier: str, quoted: bool = False) -> str:
        """Apply this dialect's case folding to one identifier part.

        >>> load_profile("hive").fold("Sales_Daily")
        'sales_daily'
        """
        rule = self.quoted_case_folding if quoted else self.case_folding
        if rule == "lower":
            return identifier.lower()
        if rule == "upper":
            return identifier.upper()
        return identifier

    def values_column(self, position: int) -> str:
        """The name of the VALUES column at ``position`` (0-based) where no alias names it.

        >>> load_profile("spark").values_column(0), load_profile("postgres").values_column(1)
        ('col1', 'column2')
        """
        return self.values_column_names.format(i=position, n=position + 1)

    def use_switch(self, kind: str) -> str | None:
        """What ``USE <kind> name`` switches, ``schema`` or ``catalog``; None for a kind that names no tables.

        >>> load_profile("tsql").use_switch(""), load_profile("snowflake").use_switch("WAREHOUSE")
        ('catalog', None)
        """
        return dict(self.use_switches).get(kind.lower())


def profiles_dir() -> Path:
    return _PACKAGED if _PACKAGED.is_dir() else _CHECKOUT


def available_profiles() -> list[str]:
    return sorted(p.stem for p in profiles_dir().glob("*.yaml"))


@cache
def load_profile(name: str | None) -> DialectProfile:
    """Load the profile ``name`` (default ``ansi``).

    A sqlglot dialect without a profile of its own (``redshift``, ``databricks`` ...)
    gets the ``ansi`` facts and its own parser, so every sqlglot dialect works.
    """
    name = (name or "ansi").lower()
    path = profiles_dir() / f"{name}.yaml"
    if path.is_file():
        return _profile_from_file(path)
    if name in SQLGLOT_DIALECTS:
        base = _profile_from_file(profiles_dir() / "ansi.yaml")
        return DialectProfile(**{**_as_kwargs(base), "name": name, "sqlglot_dialect": name})
    known = ", ".join(available_profiles())
    raise ProfileError(f"unknown dialect {name!r}; profiles: {known} (or any sqlglot dialect name)")


def _profile_from_file(path: Path) -> DialectProfile:
    try:
        data = load(path.read_text(encoding="utf-8"), str(path)) or {}
    except ValueError as error:
        raise ProfileError(str(error)) from None
    if not isinstance(data, dict) or "sqlglot_dialect" not in data:
        raise ProfileError(f"{path}: expected a mapping with at least 'sqlglot_dialect'")
    return DialectProfile(
        name=str(data.get("name", path.stem)),
        sqlglot_dialect=str(data["sqlglot_dialect"] or ""),
        description=str(data.get("description", "")),
        case_folding=str(data.get("case_folding", "lower")),
        quoted_case_folding=str(data.get("quoted_case_folding", "lower")),
        default_schema=data.get("default_schema"),
        masking_functions=_lower_set(data.get("masking_functions")),
        count_functions=_lower_set(data.get("count_functions")),
        aggregate_functions=_lower_set(data.get("aggregate_functions")),
        placeholder_styles=tuple(data.get("placeholder_styles") or ()),
        optional_semicolons=bool(data.get("optional_semicolons", False)),
        use_switches=_use_switches(path, data.get("use_switches")),
        trigger_row_tables=_lower_set(data.get("trigger_row_tables")),
        trigger_row_variables=_lower_set(data.get("trigger_row_variables")),
        select_into=_select_into(path, data.get("select_into")),
        dummy_tables=_lower_set(data.get("dummy_tables")),
        lateral_column_aliases=bool(data.get("lateral_column_aliases", False)),
        partition_functions=_partition_functions(path, data.get("partition_functions")),
        inserts_through_ctes=bool(data.get("inserts_through_ctes", False)),
        values_column_names=_values_column_names(path, data.get("values_column_names")),
        client_commands=tuple(str(c) for c in data.get("client_commands") or ()),
        unread_statements=tuple(tuple(str(s).upper().split()) for s in data.get("unread_statements") or ()),
        quoted_paths_are_files=bool(data.get("quoted_paths_are_files", True)),
        table_function_columns=tuple(
            (str(name).lower(), tuple(str(c).lower() for c in columns))
            for name, columns in (data.get("table_function_columns") or {}).items()
        ),
    )


def _use_switches(path: Path, values: object) -> tuple[tuple[str, str], ...]:
    """The ``use_switches`` mapping of a profile file (``{"": catalog, schema: schema}``), checked."""
    if values is None:
        return _DEFAULT_USE_SWITCHES
    if not isinstance(values, dict) or not all(str(v).lower() in _SWITCHED for v in values.values()):
        raise ProfileError(f"{path}: use_switches maps USE kinds to 'schema' or 'catalog'")
    return tuple(sorted((str(k or "").lower(), str(v).lower()) for k, v in values.items()))


def _partition_functions(path: Path, values: object) -> tuple[tuple[str, tuple[int, int]], ...]:
    """The ``partition_functions`` mapping of a profile file (``{name: [source, target]}``), checked."""
    if values is None:
        return ()
    pairs = values.items() if isinstance(values, dict) else ()
    checked = tuple(
        (str(name).lower(), (int(where[0]), int(where[1])))
        for name, where in pairs
        if isinstance(where, list) and len(where) == 2 and all(isinstance(i, int) and i >= 0 for i in where)
    )
    if not isinstance(values, dict) or len(checked) != len(values):
        raise ProfileError(f"{path}: partition_functions maps function names to [source, target] argument positions")
    return checked


_SELECT_INTO = frozenset({"table", "variables", "variables_in_routines"})


def _select_into(path: Path, value: object) -> str:
    if value is None:
        return "variables_in_routines"
    if str(value) not in _SELECT_INTO:
        raise ProfileError(f"{path}: select_into is one of {', '.join(sorted(_SELECT_INTO))}")
    return str(value)


def _values_column_names(path: Path, value: object) -> str:
    template = "_c{i}" if value is None else str(value)
    try:
        template.format(i=0, n=1)
    except (KeyError, IndexError, ValueError):
        raise ProfileError(f"{path}: values_column_names takes {{n}} (from 1) or {{i}} (from 0)") from None
    return template


def _lower_set(values: object) -> frozenset[str]:
    return frozenset(str(v).lower() for v in (values or ()))  # type: ignore[union-attr]


def _as_kwargs(profile: DialectProfile) -> dict[str, object]:
    return {slot: getattr(profile, slot) for slot in DialectProfile.__slots__}
