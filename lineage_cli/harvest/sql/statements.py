"""Table-level lineage of one parsed statement: what it writes and what it reads.

One handler per statement kind, in an explicit registry (``HANDLERS``); statements
without lineage (SET, DROP, ANALYZE ...) have no handler and yield nothing.  A plain query
yields what it reads and no writes: ``lineage parse`` reports it, a harvest adds nothing.
``USE db`` changes the default schema of the statements after it (or, where the profile says it
switches the database, puts it back to the default), and a trigger's body reads its table through
pseudo-tables (T-SQL's INSERTED), so the analysis carries a small mutable ``Context`` through a script.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp

from lineage_cli.profiles import DialectProfile

if TYPE_CHECKING:
    from lineage_cli.harvest.sql.columns import ColumnEdge


@dataclass(slots=True)
class Write:
    """One target of a statement and the datasets that flow into it."""

    target: str
    sources: list[str]
    is_view: bool = False
    target_node: exp.Table | None = None  # the AST node, for column analysis
    query: exp.Expression | None = None  # the expression producing the rows, when there is one


@dataclass(slots=True)
class StatementLineage:
    """What one statement writes (``writes``) and reads; a query that writes nothing (``select``) only
    ``reads``: it has no lineage of its own, but says which datasets it uses."""

    type: str  # insert, ctas, view, ..., or select: a query that writes nothing
    writes: list[Write]
    expression: exp.Expression
    line: int = 0  # set by the script analysis: the line of the statement's first token
    columns: list[ColumnEdge] = field(default_factory=list)  # filled when column lineage is asked for
    reads: list[str] = field(default_factory=list)  # what a query without writes reads

    @property
    def targets(self) -> list[str]:
        return sorted({w.target for w in self.writes})

    @property
    def sources(self) -> list[str]:
        return sorted({s for w in self.writes for s in w.sources}.union(self.reads))


@dataclass(slots=True)
class Context:
    """What a script's earlier statements tell the later ones."""

    profile: DialectProfile
    default_schema: str | None = None
    cte_names: set[str] = field(default_factory=set)
    # the statement under analysis and its Table nodes, gathered in the same walk as its CTE names
    statement: exp.Expression | None = None
    statement_tables: list[exp.Table] = field(default_factory=list)
    # inside a trigger's body: each of the profile's ``trigger_row_tables`` -> the trigger's table (set by
    # the script analysis, which knows where a trigger's body ends)
    row_tables: dict[str, str] = field(default_factory=dict)
    # ... and each of its ``trigger_row_variables`` (NEW, OLD) -> the trigger's table
    row_variables: dict[str, str] = field(default_factory=dict)
    # script variables (BigQuery's `DECLARE run_date DATE`): a bare name that no table surely has is one of these
    variables: set[str] = field(default_factory=set)
    # inside a routine whose body is a string: its parameters (set per statement by the script analysis)
    routine_parameters: frozenset[str] | None = None
    # the default schema the script started with: where a USE of another database leads back to
    base_schema: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.default_schema is None:
            self.default_schema = self.profile.default_schema
        self.base_schema = self.default_schema

    def into_sets_variables(self) -> bool:
        """Whether ``SELECT ... INTO name`` assigns variables here rather than creating a table."""
        rule = self.profile.select_into
        return rule == "variables" or (rule == "variables_in_routines" and self.routine_parameters is not None)

    def fold(self, identifier: exp.Expression | None) -> str:
        if isinstance(identifier, exp.Identifier):
            return self.profile.fold(identifier.this, identifier.quoted)
        if isinstance(identifier, exp.Placeholder):  # a bind variable (`:schema_name`): kept as written
            return placeholder_text(identifier)
        return self.profile.fold(identifier.name) if identifier is not None else ""

    def table_name(self, table: exp.Table) -> str:
        """``[catalog.]schema.table``, folded, the default schema filled in.

        >>> from lineage_cli.profiles import load_profile
        >>> ctx = Context(load_profile("hive"), default_schema="ods")
        >>> ctx.table_name(sqlglot.parse_one("SELECT * FROM `Customer_Clean`", read="hive").find(exp.Table))
        'ods.customer_clean'
        """
        location = file_location(table)
        if location is not None:
            return location
        name = self.fold(table.args.get("this"))
        if name in self.row_tables and not table.args.get("db"):
            return self.row_tables[name]  # INSERTED in a trigger on dbo.src: the rows of dbo.src
        mark = _temporary_mark(table)
        if mark:
            return mark + name
        schema = self.fold(table.args.get("db")) or self.default_schema
        catalog = self.fold(table.args.get("catalog"))
        return ".".join(part for part in (catalog, schema, name) if part)


# Spark and Databricks read and write files in place: ``SELECT * FROM parquet.`s3://bucket/dir/` ``.
_FILE_FORMATS = frozenset({"parquet", "orc", "json", "csv", "avro", "text", "delta", "binaryfile", "iceberg"})


def file_location(table: exp.Table) -> str | None:
    """The location a table reference reads in place, as written; None for a table.  Spark's ``format.`path` ``,
    a Snowflake stage (``SELECT $1 FROM @stage/dir/``), DuckDB's ``'data/in.parquet'`` and ``read_parquet(path)``
    (any ``read_*`` table function given a path).

    >>> def location(sql, dialect):
    ...     return file_location(sqlglot.parse_one(sql, read=dialect).find(exp.Table))
    >>> location("SELECT * FROM delta.`/mnt/Raw/events`", "spark"), location("SELECT $1 FROM @st/ev/", "snowflake")
    ('/mnt/Raw/events', '@st/ev/')
    >>> location("SELECT * FROM 'in/x.parquet'", "duckdb"), location("SELECT * FROM read_csv_auto('a.csv')", "duckdb")
    ('in/x.parquet', 'a.csv')
    """
    name, schema = table.args.get("this"), table.args.get("db")
    if isinstance(name, exp.Var) and name.name.startswith("@") and schema is None:
        return name.name
    if isinstance(name, exp.Func):
        return _read_function_path(name)
    if not isinstance(name, exp.Identifier) or not name.quoted or table.args.get("catalog"):
        return None
    if schema is None:
        return name.this if _FILE_NAME.search(name.this) else None
    return name.this if "/" in name.this and schema.name.lower() in _FILE_FORMATS else None


# A quoted name that is a file: a path, or a name with a data file's extension (DuckDB's FROM 'x.parquet')
_FILE_NAME = re.compile(r"/|\.(?:parquet|csv|tsv|json|jsonl|ndjson|txt|avro|orc)(?:\.gz|\.zst)?$", re.IGNORECASE)


def _read_function_path(call: exp.Func) -> str | None:
    """The path a ``read_*`` table function reads (DuckDB's read_parquet, read_csv_auto, read_json ...)."""
    name = call.name if isinstance(call, exp.Anonymous) else call.sql_name()
    if not name.lower().startswith("read_"):
        return None
    first = call.this if isinstance(call.this, exp.Expression) else (call.expressions or [None])[0]
    return first.name if isinstance(first, exp.Literal) and first.is_string else None


def placeholder_text(placeholder: exp.Placeholder) -> str:
    """A bind placeholder as written: ``:name`` (psql, Redshift scripts), or ``?``.

    >>> placeholder_text(sqlglot.parse_one("COPY t FROM :emr_file_path", read="redshift").args["files"][0])
    ':emr_file_path'
    """
    return f":{placeholder.name}" if placeholder.args.get("this") else "?"


def _temporary_mark(table: exp.Table) -> str:
    """``#`` for T-SQL's local temporary tables, ``##`` for global ones, else nothing.  They keep their mark
    and take no schema: ``#tmp`` is not the permanent ``dbo.tmp``."""
    name = table.args.get("this")
    if not isinstance(name, exp.Identifier) or table.args.get("db"):
        return ""
    return "##" if name.args.get("global_") else "#" if name.args.get("temporary") else ""


def analyze_statement(expression: exp.Expression, ctx: Context) -> StatementLineage | None:
    """Table-level lineage of ``expression``, or None when it has none.

    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("postgres"))
    >>> sql = "WITH c AS (SELECT * FROM stg.a) INSERT INTO dwh.t SELECT * FROM c JOIN stg.b USING (id)"
    >>> lineage = analyze_statement(sqlglot.parse_one(sql, read="postgres"), ctx)
    >>> (lineage.type, lineage.targets, lineage.sources)
    ('insert', ['dwh.t'], ['stg.a', 'stg.b'])
    """
    _survey(expression, ctx)
    handler = HANDLERS.get(type(expression))
    return handler(expression, ctx) if handler else None


def nested_statements(expression: exp.Expression, line: int) -> Iterator[tuple[exp.Expression, int]]:
    """``expression`` with its line, or, for control flow (``IF``, ``WHILE``, a ``BEGIN ... END`` block, a
    routine parsed whole), the statements it holds, each with the line of its first name.

    >>> statement = sqlglot.parse_one("IF @n > 0 BEGIN INSERT INTO a.t SELECT * FROM a.s END", read="tsql")
    >>> [(inner.key, line) for inner, line in nested_statements(statement, 1)]
    [('insert', 1)]
    """
    held = _held(expression)
    if held is None:
        yield expression, line
        return
    for inner in held:
        yield from nested_statements(inner, _first_line(inner, line))


# Languages whose routine bodies are SQL: their statements are harvested like a script's.
_SQL_LANGUAGES = frozenset({"SQL", "PLPGSQL", "PLSQL", "TSQL"})


def routine_body(expression: exp.Expression) -> str | None:
    """The text of a SQL routine's body written as a string (Snowflake's ``LANGUAGE SQL AS $$ ... $$``,
    Postgres' ``AS $body$ ... $body$ LANGUAGE plpgsql``); None for anything else, or another language.

    >>> routine_body(sqlglot.parse_one("CREATE FUNCTION f() RETURNS void AS $$ DELETE FROM t; $$ LANGUAGE sql",
    ...                                read="postgres"))
    ' DELETE FROM t; '
    """
    if isinstance(expression, exp.Command):
        return _command_body(expression)
    if not isinstance(expression, exp.Create) or (expression.kind or "").upper() not in _ROUTINE_KINDS:
        return None
    language = expression.find(exp.LanguageProperty)
    if language is not None and language.name.upper() not in _SQL_LANGUAGES:
        return None
    body = expression.expression
    if isinstance(body, exp.Block) and len(body.expressions) == 1:
        body = body.expressions[0]
    if isinstance(body, (exp.Heredoc, exp.RawString)) or (isinstance(body, exp.Literal) and body.is_string):
        return body.name
    return _body_in_a_setting(expression) if body is None else None


def _command_body(command: exp.Command) -> str | None:
    """The statements an opaque command holds: Postgres' anonymous ``DO [LANGUAGE plpgsql] $$ ... $$`` block,
    Snowflake's ``CREATE TASK t ... AS <statement>``, ``EXECUTE [IMMEDIATE] '<statement>'`` of a constant.

    >>> _command_body(sqlglot.parse_one("DO $$ BEGIN DELETE FROM t; END $$", read="postgres"))
    ' BEGIN DELETE FROM t; END '
    """
    text = _command_text(command)
    word = command.name.upper()
    if word == "DO" and (block := _DO_BLOCK.match(text)) is not None:
        language = (block.group(1) or block.group(4) or "plpgsql").upper()
        return block.group(3) if language in _SQL_LANGUAGES else None
    if word == "CREATE" and (task := _TASK.match(text)) is not None:
        return task.group(1)
    if word == "EXECUTE" and (literal := _EXECUTED.match(text)) is not None:
        return literal.group(1)  # dynamic SQL given as one constant string: it runs as written
    return None


# `EXECUTE [IMMEDIATE] 'INSERT ...'` (a string without doubled quotes: it is found again as written in the file)
_EXECUTED = re.compile(r"\s*(?:IMMEDIATE\s+)?'([^']*)'\s*$", re.I)
_DO_BLOCK = re.compile(r"\s*(?:LANGUAGE\s+(\w+)\s+)?\$(\w*)\$(.*)\$\2\$\s*(?:LANGUAGE\s+(\w+))?\s*$", re.I | re.S)
_TASK = re.compile(
    r"\s*(?:OR\s+(?:REPLACE|ALTER)\s+)?TASK\b.*?\bAS\s+((?:INSERT|MERGE|UPDATE|DELETE|COPY)\b.*)", re.I | re.S
)


def _body_in_a_setting(routine: exp.Create) -> str | None:
    """Postgres' ``SET search_path = public AS $$ ... $$``: sqlglot reads the body as the alias of the setting's
    value (a name no one writes: it holds statements)."""
    properties = routine.args.get("properties")
    for alias in properties.find_all(exp.Alias) if properties is not None else ():
        name = alias.args.get("alias")
        if isinstance(name, exp.Identifier) and ";" in name.name:
            return name.name
    return None


_ROUTINE_KINDS = frozenset({"PROCEDURE", "FUNCTION"})


def routine_parameters(routine: exp.Expression) -> frozenset[str]:
    """The parameter names of a ``CREATE FUNCTION f(p_day DATE, ...)``, as written (lower case).

    >>> sql = "CREATE FUNCTION f(p_day date, n int) RETURNS int AS $$ SELECT 1 $$"
    >>> sorted(routine_parameters(sqlglot.parse_one(sql, read="postgres")))
    ['n', 'p_day']
    """
    signature = routine.this if isinstance(routine, exp.Create) else None
    definitions = signature.expressions if isinstance(signature, exp.UserDefinedFunction) else []
    return frozenset(d.name.lower() for d in definitions if isinstance(d, exp.ColumnDef) and d.name)


def _held(expression: exp.Expression) -> list[exp.Expression] | None:
    """The statements control flow holds (sqlglot parses T-SQL's IF and WHILE, and a routine whose body it
    can read, into these); None for anything else."""
    if isinstance(expression, exp.Block):
        parts = expression.expressions
    elif isinstance(expression, exp.IfBlock):
        parts = [expression.args.get("true"), expression.args.get("false")]
    elif isinstance(expression, exp.WhileBlock):
        parts = [expression.args.get("body")]
    elif isinstance(expression, exp.Create) and isinstance(expression.expression, exp.Block):
        parts = [expression.expression]
    else:
        return None
    return [part for part in parts if isinstance(part, exp.Expression)]


def _first_line(expression: exp.Expression, default: int) -> int:
    name = expression.find(exp.Identifier)
    return name.meta.get("line", default) if name is not None else default


def _survey(expression: exp.Expression, ctx: Context) -> None:
    """One walk of the statement for what every handler needs: its CTE names and its Table nodes."""
    tables, ctes = [], set()
    for node in expression.walk():
        if isinstance(node, exp.Table):
            tables.append(node)
        elif isinstance(node, exp.CTE):
            ctes.add(ctx.profile.fold(node.alias_or_name))
    for table in tables:
        if isinstance(table.this, exp.DynamicIdentifier):
            _named_by_string(table, ctx)
    ctx.statement, ctx.statement_tables, ctx.cte_names = expression, tables, ctes


def _named_by_string(table: exp.Table, ctx: Context) -> None:
    """Snowflake's ``IDENTIFIER('db.s.t')``: the table the string names, in place (a variable names none)."""
    name = table.this.this
    if not isinstance(name, exp.Literal) or not name.is_string:
        return
    try:
        named = exp.to_table(name.name, dialect=ctx.profile.sqlglot_dialect)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        return
    for part in ("this", "db", "catalog"):
        table.set(part, named.args.get(part))


def apply_use(statement: exp.Use, ctx: Context) -> None:
    """``USE [KIND] name``: the schema of the unqualified tables after it, as the profile's ``use_switches`` says.

    Names leave out the database unless it is written, so that a table is one node whichever database a
    script was connected to: switching the database (T-SQL's ``USE db``, Snowflake's ``USE DATABASE db``)
    puts unqualified tables back in the script's default schema; ``USE db.s`` sets schema ``s``; a USE of
    something else (a warehouse, a role) changes nothing.

    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("snowflake"))
    >>> for sql in ("USE SCHEMA raw.stg", "USE WAREHOUSE wh", "USE DATABASE raw"):
    ...     apply_use(sqlglot.parse_one(sql, read="snowflake"), ctx)
    ...     print(ctx.default_schema)
    stg
    stg
    public
    """
    named = statement.this
    switched = ctx.profile.use_switch(_use_kind(statement))
    if switched is None or not isinstance(named, exp.Table):
        return
    if switched == "schema" or named.args.get("db") is not None:  # USE db.s names the schema too
        ctx.default_schema = ctx.fold(named.args.get("this")) or ctx.default_schema
    else:
        ctx.default_schema = ctx.base_schema


def _declare(statement: exp.Declare, ctx: Context) -> None:
    """``DECLARE a, b INT64 DEFAULT 0``: names the statements after it may read as values, not columns.

    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("bigquery"))
    >>> _declare(sqlglot.parse_one("DECLARE run_date, cutoff DATE", read="bigquery"), ctx)
    >>> sorted(ctx.variables)
    ['cutoff', 'run_date']
    """
    for item in statement.expressions:
        names = item.this if isinstance(item.this, list) else [item.this]
        ctx.variables.update(ctx.fold(name) for name in names if isinstance(name, exp.Identifier))


def _use_kind(statement: exp.Use) -> str:
    """The word between USE and the name (``DATABASE``, ``SCHEMA``, ``WAREHOUSE`` ...); "" for none."""
    kind = statement.args.get("kind")
    return kind.name if isinstance(kind, exp.Expression) else str(kind or "")


def _insert(statement: exp.Insert, ctx: Context) -> StatementLineage | None:
    written = _table_of(statement.this)
    landing = _through_cte(written, statement, ctx)
    if written is None or landing is None:
        return _into_location(statement, ctx)
    write = _write(statement, written, ctx, query=statement.expression, landing=landing)
    conflict = statement.args.get("conflict")
    if isinstance(conflict, exp.OnConflict) and conflict.expressions:  # an upsert updates rows it reads
        write.sources = sorted({*write.sources, write.target})
    return StatementLineage("insert", [write], statement)


def _into_location(statement: exp.Insert, ctx: Context) -> StatementLineage | None:
    """``INSERT OVERWRITE [LOCAL] DIRECTORY 'path' SELECT ...``: the rows land in files at a location."""
    directory = statement.this
    location = _location(directory.this) if isinstance(directory, exp.Directory) else None
    if location is None:
        return None
    return StatementLineage("insert", [Write(location, _read_tables(statement, ctx, skip=()))], statement)


def _through_cte(target: exp.Table | None, statement: exp.Expression, ctx: Context) -> exp.Table | None:
    """The table a DML statement changes when its target is a CTE of its own (T-SQL writes through a CTE over
    one base table: ``WITH d AS (SELECT ... FROM dbo.t) DELETE FROM d WHERE rn > 1`` deletes rows of
    ``dbo.t``): the first table of the CTE's FROM, through CTEs over CTEs.  A CTE is never a dataset, so one
    over no table (VALUES, a set operation) leaves no target.

    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("tsql"))
    >>> sql = "WITH a AS (SELECT * FROM dbo.t), b AS (SELECT * FROM a) UPDATE b SET x = 1"
    >>> analyze_statement(sqlglot.parse_one(sql, read="tsql"), ctx).targets
    ['dbo.t']
    """
    if target is None or target.args.get("db") or ctx.fold(target.this) not in ctx.cte_names:
        return target  # (the common case: no CTE, or not the target)
    ctes = _own_ctes(statement, ctx)
    seen: set[str] = set()
    while target is not None and not target.args.get("db") and (name := ctx.fold(target.this)) in ctes:
        if not _names_a_cte(target, name, ctx):
            return target  # `WITH t AS (SELECT ... FROM t)`: the CTE's own body reads the table t
        if name in seen:
            return None  # a recursive CTE: no base table of its own
        seen.add(name)
        target = _first_from_table(ctes[name].this)
    return target


def _own_ctes(statement: exp.Expression, ctx: Context) -> dict[str, exp.CTE]:
    """The CTEs written before the statement's keyword, by folded name."""
    with_ = statement.args.get("with_")
    ctes = with_.expressions if isinstance(with_, exp.With) else []
    return {ctx.profile.fold(cte.alias_or_name): cte for cte in ctes}


def _first_from_table(query: exp.Expression | None) -> exp.Table | None:
    """The table a query reads first: its FROM's table, or the FROM table of a derived table there."""
    while isinstance(query, exp.Subquery):
        query = query.this
    from_ = query.args.get("from_") if isinstance(query, exp.Select) else None
    relation = from_.this if isinstance(from_, exp.From) else None
    if isinstance(relation, exp.Subquery):
        return _first_from_table(relation.this)
    return _table_of(relation)


def _multi_insert(statement: exp.MultitableInserts, ctx: Context) -> StatementLineage | None:
    shared = _read_tables(statement.args.get("source"), ctx, skip=())
    writes = []
    for branch in statement.expressions:
        insert = branch.this if isinstance(branch, exp.ConditionalInsert) else branch  # Oracle INSERT ALL
        target = _table_of(insert.this)
        if target is not None:
            write = _write(insert, target, ctx, query=insert.expression)
            write.sources = sorted(set(write.sources) | set(shared))
            writes.append(write)
    return StatementLineage("multi_insert", writes, statement) if writes else None


def _create(statement: exp.Create, ctx: Context) -> StatementLineage | None:
    query = statement.expression
    target = _table_of(statement.this)
    clone = statement.args.get("clone")
    if isinstance(clone, exp.Clone) and target is not None:
        return _clone(statement, target, _table_of(clone.this), ctx)
    if not isinstance(query, exp.Query) or target is None:
        return None  # plain DDL (CREATE TABLE ... LIKE included: it copies no rows): no data flows
    is_view = (statement.kind or "").upper() == "VIEW"
    into = statement.find(exp.ToTableProperty)
    if into is not None and (destination := _table_of(into.this)) is not None:
        target, is_view = destination, False  # ClickHouse's MATERIALIZED VIEW mv TO dest: the rows land in dest
    write = _write(statement, target, ctx, query=query, is_view=is_view)
    return StatementLineage("view" if is_view else "ctas", [write], statement)


def _cache(statement: exp.Cache, ctx: Context) -> StatementLineage | None:
    """Spark's ``CACHE TABLE t AS SELECT ...``: a temporary table of the query's rows, as a CTAS."""
    query, target = statement.expression, _table_of(statement.this)
    if not isinstance(query, exp.Query) or target is None:
        return None  # CACHE TABLE t: keeps an existing table in memory
    return StatementLineage("cache", [_write(statement, target, ctx, query=query)], statement)


def _clone(
    statement: exp.Expression, target: exp.Table, source: exp.Table | None, ctx: Context
) -> StatementLineage | None:
    """``CREATE TABLE t CLONE s`` (Snowflake, BigQuery, Databricks): ``t`` starts as a copy of ``s``'s rows,
    column for column, as if written by ``SELECT * FROM s``."""
    if source is None:
        return None
    query = exp.select("*").from_(source.copy())
    write = Write(ctx.table_name(target), [ctx.table_name(source)], target_node=target, query=query)
    return StatementLineage("clone", [write], statement)


def _alter(statement: exp.Alter, ctx: Context) -> StatementLineage | None:
    actions = statement.args.get("actions") or ()
    target = _table_of(statement.this)
    swap = next((a for a in actions if isinstance(a, exp.SwapTable)), None)
    if swap is not None and target is not None:
        return _swapped(statement, target, _table_of(swap.this), ctx)
    query = next((a for a in actions if isinstance(a, exp.Query)), None)
    if (statement.args.get("kind") or "").upper() != "VIEW" or query is None or target is None:
        return None
    write = _write(statement, target, ctx, query=query, is_view=True)
    return StatementLineage("alter_view", [write], statement)


def _swapped(
    statement: exp.Expression, target: exp.Table, source: exp.Table | None, ctx: Context
) -> StatementLineage | None:
    """``ALTER TABLE t SWAP WITH s`` (Snowflake), ``ALTER TABLE t EXCHANGE PARTITION (...) WITH TABLE s`` (Hive):
    ``t`` takes the rows ``s`` held.  (A swap also hands ``t``'s old rows to ``s``, but the pattern is a staging
    table swapped into place: the flow that matters is ``s -> t``.)"""
    if source is None:
        return None
    write = Write(ctx.table_name(target), [ctx.table_name(source)], target_node=target)
    return StatementLineage("swap", [write], statement)


def _select(statement: exp.Query, ctx: Context) -> StatementLineage | None:
    """``SELECT ... INTO t``; in a set operation, the first branch's INTO takes the whole result.  Where the
    profile says so (PL/SQL, MySQL, Snowflake scripting; plpgsql in a routine), INTO sets variables."""
    target = _into_target(statement)
    if target is not None and ctx.into_sets_variables():
        ctx.variables.add(ctx.fold(target.this))
        return _select_reads(statement, ctx, skip=(target,))
    if target is None:
        return _select_reads(statement, ctx, skip=())
    write = _write(statement, target, ctx, query=statement)
    return StatementLineage("select_into", [write], statement)


def _select_reads(statement: exp.Query, ctx: Context, skip: tuple[exp.Table, ...]) -> StatementLineage | None:
    reads = _read_tables(statement, ctx, skip=skip)
    return StatementLineage("select", [], statement, reads=reads) if reads else None


def _parenthesized(statement: exp.Subquery, ctx: Context) -> StatementLineage | None:
    """``(SELECT ...)`` on its own: the query inside."""
    inner = statement.unnest()
    return _select(inner, ctx) if isinstance(inner, (exp.Select, exp.SetOperation)) else None


def _into_target(statement: exp.Query) -> exp.Table | None:
    first = statement
    while isinstance(first, exp.SetOperation):
        first = first.this
    into = first.args.get("into") if isinstance(first, exp.Select) else None
    return _table_of(into.this) if isinstance(into, exp.Into) else None


def _load(statement: exp.LoadData, ctx: Context) -> StatementLineage | None:
    """Hive ``LOAD DATA [LOCAL] INPATH 'path' INTO TABLE t``: the files at the path become rows of ``t``."""
    target, location = _table_of(statement.this), _location(statement.args.get("inpath"))
    if target is None or location is None:
        return None
    return StatementLineage("load", [Write(ctx.table_name(target), [location], target_node=target)], statement)


def _copy(statement: exp.Copy, ctx: Context) -> StatementLineage | None:
    """``COPY t FROM 'path'`` / ``COPY INTO t FROM @stage`` load files; ``COPY t TO 'path'`` and Snowflake's
    ``COPY INTO 'path' FROM (SELECT ...)`` unload rows into files.  Bind placeholders stay as written.

    >>> from lineage_cli.profiles import load_profile
    >>> sql = "copy :schema_name.supplier_stage from :emr_file_path iam_role 'arn:x' delimiter '|' gzip"
    >>> lineage = _copy(sqlglot.parse_one(sql, read="redshift"), Context(load_profile("redshift")))
    >>> lineage.targets, lineage.sources
    ([':schema_name.supplier_stage'], [':emr_file_path'])
    """
    files = statement.args.get("files") or []
    written, read = ([statement.this], files) if statement.args.get("kind") else (files, [statement.this])
    sources = sorted({name for node in read for name in _read_datasets(node, ctx)})
    targets = sorted({name for node in written if (name := _dataset_or_location(node, ctx)) is not None})
    writes = [Write(target, sources) for target in targets]
    return StatementLineage("copy", writes, statement) if writes and sources else None


def _read_datasets(node: exp.Expression, ctx: Context) -> list[str]:
    """What a COPY reads from ``node``: a location, a table, or the tables a query reads."""
    named = _dataset_or_location(node, ctx)
    return [named] if named is not None else _read_tables(node, ctx, skip=())


def _dataset_or_location(node: exp.Expression, ctx: Context) -> str | None:
    table = _table_of(node)
    return ctx.table_name(table) if table is not None else _location(node)


def _location(node: exp.Expression | None) -> str | None:
    """A file location as written: a path or URI literal (``'s3://bucket/dir/'``) or a stage (``@stage/dir/``).

    Locations are dataset nodes named by the location itself; their case is kept, as file systems keep it.

    >>> _location(sqlglot.parse_one("LOAD DATA INPATH 'hdfs://nn/In/' INTO TABLE t", read="hive").args["inpath"])
    'hdfs://nn/In/'
    """
    if isinstance(node, exp.Table):
        node = node.this
    if isinstance(node, exp.Literal) and node.is_string or isinstance(node, exp.Var):
        return node.name.strip() or None
    if isinstance(node, exp.Placeholder) and node.args.get("this"):  # `COPY t FROM :path`: known at run time
        return placeholder_text(node)
    return None


def _merge(statement: exp.Merge, ctx: Context) -> StatementLineage | None:
    # Through a CTE, the written node stays the MERGE's target: its alias is what ON and SET name.
    written = _table_of(statement.this)
    landing = _through_cte(written, statement, ctx)
    return _self_reading(statement, written, ctx, "merge", landing) if landing is not None else None


# UPDATE and DELETE through a CTE take the CTE's base table as their target node: the column analysis then
# reads the statement's own relation (the CTE) as any FROM item, and a WHERE on a CTE column (`rn > 1`)
# reads what that column is made of.
def _update(statement: exp.Update, ctx: Context) -> StatementLineage | None:
    target = _resolve_alias(statement, _table_of(statement.this))
    # MySQL's UPDATE a JOIN b SET b.z = ... writes b too (a CTE the SET names is the target's own way in)
    others = [t for t in _set_tables(statement) if t is not target and _is_dataset(t, ctx)]
    lineage = _self_reading(statement, _through_cte(target, statement, ctx), ctx, "update")
    return _with_more_targets(lineage, statement, others, ctx)


def _delete(statement: exp.Delete, ctx: Context) -> StatementLineage | None:
    # T-SQL: DELETE alias FROM table alias ...; sqlglot reads `DELETE TOP (n) FROM t` as a delete from `TOP`
    # MySQL: DELETE o, i FROM orders o JOIN items i ... deletes from both
    named = [t for t in statement.args.get("tables") or () if not _is_top(t)] or [statement.this]
    target = _resolve_alias(statement, _table_of(named[0]))
    others = [t for t in (_resolve_alias(statement, _table_of(n)) for n in named[1:]) if t is not None]
    lineage = _self_reading(statement, _through_cte(target, statement, ctx), ctx, "delete")
    return _with_more_targets(lineage, statement, others, ctx)


def _set_tables(statement: exp.Update) -> list[exp.Table]:
    """The tables the SET of a multi-table UPDATE writes, by the qualifiers of its columns."""
    qualifiers = {
        a.this.table.lower() for a in statement.expressions if isinstance(a, exp.EQ) and isinstance(a.this, exp.Column)
    }
    found: list[exp.Table] = []
    for table in statement.find_all(exp.Table):
        if (table.alias or table.name).lower() in qualifiers - {""}:
            named = _resolve_alias(statement, table)  # (T-SQL's UPDATE c ... FROM dbo.targets c: one table)
            if named is not None and all(named is not other for other in found):
                found.append(named)
    return found


def _with_more_targets(
    lineage: StatementLineage | None, statement: exp.Expression, targets: list[exp.Table], ctx: Context
) -> StatementLineage | None:
    """``lineage`` with a write to each of ``targets`` too, each reading itself as the first target does."""
    if lineage is None:
        return None
    for target in targets:
        write = _self_reading_write(statement, target, ctx)
        if write.target not in lineage.targets:
            lineage.writes.append(write)
    return lineage


def _is_top(table: exp.Expression) -> bool:
    return isinstance(table, exp.Table) and table.name.upper() == "TOP" and not table.args.get("db")


def _self_reading(
    statement: exp.Expression,
    target: exp.Table | None,
    ctx: Context,
    kind: str,
    landing: exp.Table | None = None,
) -> StatementLineage | None:
    """MERGE, UPDATE and DELETE decide which target rows change by reading the target itself.  ``landing``:
    the table that changes when ``target`` is a CTE over it."""
    if target is None:
        return None
    return StatementLineage(kind, [_self_reading_write(statement, target, ctx, landing)], statement)


def _self_reading_write(
    statement: exp.Expression, target: exp.Table, ctx: Context, landing: exp.Table | None = None
) -> Write:
    write = _write(statement, target, ctx, query=None, landing=landing)
    write.sources = sorted(set(write.sources) | {write.target})
    return write


def _command(statement: exp.Command, ctx: Context) -> StatementLineage | None:
    """Statements sqlglot keeps as opaque commands, read from their text: ``REPLACE INTO``, Redshift's
    ``UNLOAD``, Hive's ``ALTER TABLE ... EXCHANGE PARTITION``, a CREATE ... AS / CLONE it cannot parse."""
    reader = _COMMANDS.get(statement.name.upper())
    return reader(statement, _command_text(statement), ctx) if reader else None


def _command_text(statement: exp.Command) -> str:
    """What follows a command's first word."""
    body = statement.expression
    return body.name if isinstance(body, exp.Literal) else str(body)


# Statements that move data: read as an opaque command, they lose their lineage, which is worth a warning.
_DATA_COMMANDS = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "REPLACE", "COPY", "UNLOAD", "LOAD"})


def unanalysed(expression: exp.Expression) -> str | None:
    """Why a statement that moves data, and gave no lineage, gave none: the text of a warning.  None for any
    other statement, and for a COPY from or to the client (``FROM STDIN``), which moves no dataset's rows.

    >>> unanalysed(sqlglot.parse_one("COPY t FROM ? IAM_ROLE default", read="redshift"))
    'COPY not analysed: its table or its files are neither a name nor a location, so it adds no lineage'
    >>> unanalysed(sqlglot.parse_one("COPY t FROM STDIN", read="postgres"))
    """
    if isinstance(expression, exp.Copy):
        if _is_client_copy(expression):
            return None
        return "COPY not analysed: its table or its files are neither a name nor a location, so it adds no lineage"
    kind = unread_data_statement(expression)
    if kind is not None:
        return f"{kind} not analysed: sqlglot reads it only as an opaque command, so it adds no lineage"
    text = _STRING.sub("''", _command_text(expression)) if isinstance(expression, exp.Command) else ""
    if (glued := _GLUED_STATEMENT.search(text)) and not _ROUTINE_WORDS.intersection(text.upper().split()[:6]):
        return (
            f"{expression.name.upper()} read as one opaque command running on into a later line's "
            f"{glued.group(1).upper()}: a semicolon missing? It adds no lineage"
        )
    return None


# A routine's body may hold any statement on its lines (a JavaScript procedure's string, say)
_ROUTINE_WORDS = frozenset({"PROCEDURE", "PROC", "FUNCTION", "TRIGGER", "PACKAGE"})


# A string in a command's text (`EXECUTE IMMEDIATE '...'`, `SET @sql = N'...'`): statements inside it are text
_STRING = re.compile(r"'(?:[^']|'')*'|\$(\w*)\$.*?\$\1\$", re.S)
# A data statement beginning a line of a command's text: two statements glued by a missing semicolon
_GLUED_STATEMENT = re.compile(r"\n\s*(INSERT|UPDATE|DELETE|MERGE|CREATE|REPLACE)\b", re.IGNORECASE)


# `COPY t FROM STDIN` (pg_dump), `COPY t TO STDOUT`, `COPY t FROM PROGRAM 'cmd'`: the rows come from or go to
# the client, not a dataset
_CLIENT_STREAMS = frozenset({"STDIN", "STDOUT", "PROGRAM"})


def _is_client_copy(statement: exp.Copy) -> bool:
    files = statement.args.get("files") or ()
    return any(isinstance(f, exp.Identifier) and not f.quoted and f.name.upper() in _CLIENT_STREAMS for f in files)


def unread_data_statement(expression: exp.Expression) -> str | None:
    """The keyword of a data-moving statement (an INSERT, a CREATE ... AS query) that sqlglot could only keep
    as an opaque command and no reader here made sense of; None for anything else.

    >>> unread_data_statement(exp.Command(this="INSERT", expression=exp.Literal.string("INTO t OUTPUT ...")))
    'INSERT'
    >>> unread_data_statement(exp.Command(this="GRANT", expression=exp.Literal.string("SELECT ON t TO u")))
    """
    if not isinstance(expression, exp.Command):
        return None
    word = expression.name.upper()
    if word in _DATA_COMMANDS or (word == "CREATE" and _AS_QUERY.search(_command_text(expression)) is not None):
        return word
    return None


def _replace_into(statement: exp.Command, body: str, ctx: Context) -> StatementLineage | None:
    """``REPLACE INTO``: an INSERT that may overwrite rows."""
    if not body.upper().startswith("INTO"):
        return None
    insert = sqlglot.parse_one(f"INSERT {body}", read=ctx.profile.sqlglot_dialect)
    lineage = _insert(insert, ctx) if isinstance(insert, exp.Insert) else None
    if lineage is not None:
        lineage.type = "replace"
    return lineage


_UNLOAD = re.compile(r"\s*\(\s*'((?:[^']|'')*)'\s*\)\s*TO\s+'([^']+)'", re.IGNORECASE)


def _unload(statement: exp.Command, body: str, ctx: Context) -> StatementLineage | None:
    """Redshift ``UNLOAD ('query') TO 's3://...'``: the query's rows land in files at the location."""
    match = _UNLOAD.match(body)
    if match is None:
        return None
    query = _query_in_text(match.group(1).replace("''", "'"), ctx)
    return StatementLineage("unload", [Write(match.group(2), _read_tables(query, ctx, skip=()))], statement)


def _query_in_text(text: str, ctx: Context) -> exp.Expression:
    """A query a command holds as text, parsed and surveyed (its CTEs are not datasets) for ``_read_tables``."""
    query = sqlglot.parse_one(text, read=ctx.profile.sqlglot_dialect)
    query = query.unnest() if isinstance(query, exp.Subquery) else query
    _survey(query, ctx)
    return query


# The head of a CREATE that sqlglot could only keep as a command: modifiers, TABLE or VIEW, the name, the rest
_CREATE_HEAD = re.compile(
    r"\s*(?:OR\s+REPLACE\s+)?(?:(?:GLOBAL|LOCAL|TEMP|TEMPORARY|TRANSIENT|VOLATILE|MATERIALIZED|MULTISET|SECURE)\s+)*"
    r"(TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?([^\s(]+)(.*)",
    re.I | re.S,
)
_CLONE_OF = re.compile(r"\s*(?:SHALLOW\s+|DEEP\s+)?CLONE\s+([^\s;]+)", re.I)
_AS_QUERY = re.compile(r"\bAS\s*(\(?\s*(?:SELECT|WITH)\b.*)", re.I | re.S)
_WITH_DATA = re.compile(r"\s*WITH\s+(?:NO\s+)?DATA\b.*$", re.I | re.S)  # Teradata, Postgres: not the query


def _create_command(statement: exp.Command, body: str, ctx: Context) -> StatementLineage | None:
    """A CREATE TABLE / VIEW ... AS query or ... CLONE source that sqlglot kept as a command (Databricks'
    DEEP CLONE, ``WITH [NO] DATA``, other dialect clauses): the target and the query, read apart."""
    head = _CREATE_HEAD.match(body)
    if head is None:
        return None
    kind, name, rest = head.groups()
    target = exp.to_table(name, dialect=ctx.profile.sqlglot_dialect)
    if (clone := _CLONE_OF.match(rest)) is not None:
        return _clone(statement, target, exp.to_table(clone.group(1), dialect=ctx.profile.sqlglot_dialect), ctx)
    query_text = _AS_QUERY.search(rest)
    if query_text is None:
        return None
    query = _query_in_text(_WITH_DATA.sub("", query_text.group(1)), ctx)
    is_view = kind.upper() == "VIEW"
    write = Write(ctx.table_name(target), _read_tables(query, ctx, skip=()), is_view, target, query)
    return StatementLineage("view" if is_view else "ctas", [write], statement)


_EXCHANGE = re.compile(r"\s*TABLE\s+(\S+)\s+EXCHANGE\s+PARTITION\s*\(.*\)\s*WITH\s+TABLE\s+(\S+)\s*$", re.I | re.S)


def _alter_command(statement: exp.Command, body: str, ctx: Context) -> StatementLineage | None:
    """The ALTER statements sqlglot keeps as commands: Hive's partition exchange, Oracle's schema switch."""
    if (session := _CURRENT_SCHEMA.match(body)) is not None:
        ctx.default_schema = ctx.profile.fold(session.group(1).strip('"'), session.group(1).startswith('"'))
        return None
    return _exchange_partition(statement, body, ctx)


# Oracle's `ALTER SESSION SET CURRENT_SCHEMA = dw`: a USE by another name
_CURRENT_SCHEMA = re.compile(r'\s*SESSION\s+SET\s+CURRENT_SCHEMA\s*=\s*("[^"]+"|\w+)\s*$', re.IGNORECASE)


def _exchange_partition(statement: exp.Command, body: str, ctx: Context) -> StatementLineage | None:
    match = _EXCHANGE.match(body)
    if match is None:
        return None
    target, source = (exp.to_table(name, dialect=ctx.profile.sqlglot_dialect) for name in match.groups())
    return _swapped(statement, target, source, ctx)


def _write(
    statement: exp.Expression,
    target: exp.Table,
    ctx: Context,
    query: exp.Expression | None,
    is_view: bool = False,
    landing: exp.Table | None = None,
) -> Write:
    """The write of ``statement`` into ``target``, or into ``landing`` when ``target`` is a CTE over that table
    (``target`` stays the node the column analysis starts from: the column list and the alias are there)."""
    landing = target if landing is None else landing
    sources = _read_tables(statement, ctx, skip=(*_target_nodes(statement), landing))
    if ctx.row_variables:
        sources = sorted({*sources, *_row_variable_reads(statement, ctx)})
    return Write(ctx.table_name(landing), sources, is_view, target, query)


def _row_variable_reads(statement: exp.Expression, ctx: Context) -> set[str]:
    """The trigger's table, where the statement reads the row it fires for (``NEW.c``, Oracle's ``:NEW.c``)."""
    named = {column.table.lower() for column in statement.find_all(exp.Column) if column.table}
    named |= {placeholder.name.lower() for placeholder in statement.find_all(exp.Placeholder)}
    return {ctx.row_variables[name] for name in named if name in ctx.row_variables}


def _target_nodes(statement: exp.Expression) -> tuple[exp.Table, ...]:
    """Every Table node of ``statement`` that is written, not read."""
    if isinstance(statement, exp.MultitableInserts):
        return tuple(t for b in statement.expressions if (t := _table_of(b.this)) is not None)
    if isinstance(statement, (exp.Select, exp.SetOperation)):
        target = _into_target(statement)
        return (target,) if target is not None else ()
    if isinstance(statement, exp.Delete):
        return tuple(t for t in (_table_of(x) for x in statement.args.get("tables") or ()) if t) or (
            (_table_of(statement.this),) if _table_of(statement.this) else ()
        )
    target = _table_of(statement.this)
    return (target,) if target is not None else ()


def _read_tables(node: exp.Expression | None, ctx: Context, skip: Iterable[exp.Table]) -> list[str]:
    if node is None:
        return []
    skipped = {id(t) for t in skip}
    tables = ctx.statement_tables if node is ctx.statement else node.find_all(exp.Table)
    names = {ctx.table_name(table) for table in tables if id(table) not in skipped and _is_dataset(table, ctx)}
    return sorted(names)


def _is_dataset(table: exp.Table, ctx: Context) -> bool:
    """A Table node names a dataset unless it is a function call or a CTE reference."""
    if not isinstance(table.args.get("this"), exp.Identifier):
        # table functions: generate_series(...), TABLE(FLATTEN(...)), UNNEST ...; a stage is a location
        return file_location(table) is not None
    if table.args.get("db"):
        return True
    name = ctx.fold(table.args.get("this"))
    if name in ctx.profile.dummy_tables:
        return False  # Oracle's DUAL: one row of no data
    return name not in ctx.cte_names or not _names_a_cte(table, name, ctx)


def _names_a_cte(table: exp.Table, name: str, ctx: Context) -> bool:
    """Whether ``table``, named like one of the statement's CTEs, is that CTE where it stands: a CTE is seen by
    the query of its WITH and by the CTEs after it, not by its own body unless recursive, so ``WITH orders AS
    (SELECT * FROM orders)`` reads the table ``orders``.

    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("ansi"))
    >>> analyze_statement(sqlglot.parse_one("INSERT INTO o WITH y AS (SELECT b FROM y) SELECT b FROM y"), ctx).sources
    ['y']
    """
    through: exp.CTE | None = None  # the CTE whose body the walk up has come out of
    for node in _ancestors(table):
        with_ = node.args.get("with_")
        if isinstance(with_, exp.With):
            ctes = with_.expressions
            names = [ctx.profile.fold(cte.alias_or_name) for cte in ctes]
            inside = next((i for i, cte in enumerate(ctes) if cte is through), None)
            visible = names if inside is None else names[: inside + bool(with_.args.get("recursive"))]
            if name in visible:
                return True
        if isinstance(node, exp.CTE):
            through = node
    return False


def _ancestors(node: exp.Expression) -> Iterator[exp.Expression]:
    """The nodes above ``node``, nearest first; a CTE's parent is its WITH, whose parent holds it."""
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def _table_of(node: exp.Expression | None) -> exp.Table | None:
    if isinstance(node, exp.Schema):  # INSERT INTO t (a, b) / CREATE VIEW v (a, b)
        node = node.this
    return node if isinstance(node, exp.Table) and isinstance(node.args.get("this"), exp.Identifier) else None


def _resolve_alias(statement: exp.Expression, target: exp.Table | None) -> exp.Table | None:
    """``UPDATE t SET ... FROM dbo.orders t``: the written name may be an alias of a read table."""
    if target is None or target.args.get("db"):
        return target
    alias = target.name.lower()
    for table in statement.find_all(exp.Table):
        if table is not target and table.alias.lower() == alias:
            return table
    return target


Handler = Callable[[exp.Expression, Context], StatementLineage | None]

_COMMANDS: dict[str, Callable[[exp.Command, str, Context], StatementLineage | None]] = {
    "REPLACE": _replace_into,
    "UNLOAD": _unload,
    "ALTER": _alter_command,
    "CREATE": _create_command,
}

HANDLERS: dict[type[exp.Expression], Handler] = {
    exp.Use: apply_use,  # type: ignore[dict-item]
    exp.Declare: _declare,  # type: ignore[dict-item]
    exp.Insert: _insert,  # type: ignore[dict-item]
    exp.MultitableInserts: _multi_insert,  # type: ignore[dict-item]
    exp.Create: _create,  # type: ignore[dict-item]
    exp.Alter: _alter,  # type: ignore[dict-item]
    exp.Select: _select,  # type: ignore[dict-item]
    exp.Subquery: _parenthesized,  # type: ignore[dict-item]
    exp.Union: _select,  # type: ignore[dict-item]
    exp.Intersect: _select,  # type: ignore[dict-item]
    exp.Except: _select,  # type: ignore[dict-item]
    exp.LoadData: _load,  # type: ignore[dict-item]
    exp.Cache: _cache,  # type: ignore[dict-item]
    exp.Copy: _copy,  # type: ignore[dict-item]
    exp.Merge: _merge,  # type: ignore[dict-item]
    exp.Update: _update,  # type: ignore[dict-item]
    exp.Delete: _delete,  # type: ignore[dict-item]
    exp.Command: _command,  # type: ignore[dict-item]
}
