"""One script's lineage: parsed statement by statement, analysed at table and column level.

Reads a script's dialect (``--dialect`` or a ``-- dialect: NAME`` comment at the top of
the file), parses statement by statement and analyses each at table level and, given a
schema catalog, at column level.  A statement that fails becomes an ``Issue`` with file
and line; the analysis goes on with everything else.  ``analyze_template`` renders a
template first and maps the names, lines and messages back to it.  Inside a trigger's body,
the profile's ``trigger_row_tables`` (T-SQL's INSERTED / DELETED) stand for the trigger's
table.  A statement that does not parse keeps its error, and the tables its tokens name become
its approximate lineage (``statements/approximate.py``).  ``batch`` runs this over many files;
``assemble`` turns the lineage into the graph.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError, TokenError

from lineage_cli.harvest.assemble import Harvest, add_script, table_of
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.sql.columns import ColumnEdge, column_lineage
from lineage_cli.harvest.sql.messages import internal_error, parse_error, readable
from lineage_cli.harvest.sql.observe import observe
from lineage_cli.harvest.sql.split import ParsedStatement, parse_script
from lineage_cli.harvest.sql.statements import (
    APPROXIMATE_NOTE,
    Context,
    StatementLineage,
    analyze_statement,
    nested_statements,
    recover,
    routine_body,
    routine_parameters,
    unanalysed,
)
from lineage_cli.harvest.templates.macro_file import MacroFile
from lineage_cli.harvest.templates.params import default_name
from lineage_cli.harvest.templates.placeholders import Rendered, render
from lineage_cli.heap import tree_pace
from lineage_cli.model import Issue, bounded_sql
from lineage_cli.profiles import DialectProfile, load_profile

_DIALECT_DIRECTIVE = re.compile(r"^\s*--\s*dialect\s*:\s*([A-Za-z0-9_]+)\s*$", re.MULTILINE)
_UNRESOLVED_COLUMN = re.compile(r"^cannot resolve column (\S+?)(?:: ambiguous)?$")


def harvest_text(
    sql: str,
    file: str,
    into: Harvest,
    dialect: str | None = None,
    default_schema: str | None = None,
    catalog: SchemaCatalog | None = None,
) -> None:
    """Add the lineage of every statement in ``sql`` (from ``file``) to ``into``."""
    script = analyze_script(sql, file, dialect, default_schema, catalog)
    add_script(into, script.statements, script.issues, file, script.lineage)


@dataclass(slots=True)
class ScriptAnalysis:
    """The lineage of one script: what ``harvest`` stores and ``lineage parse`` prints."""

    lineage: list[StatementLineage] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    statements: int = 0
    defaults: dict[str, str] = field(default_factory=dict)  # parameterized dataset -> the real one it defaults to
    # table -> line of the first statement that taught the catalog its columns (its CREATE TABLE, mostly)
    declared: dict[str, int] = field(default_factory=dict)


def analyze_script(
    sql: str,
    file: str,
    dialect: str | None = None,
    default_schema: str | None = None,
    catalog: SchemaCatalog | None = None,
    default_database: str | None = None,
    query_target: str | None = None,
) -> ScriptAnalysis:
    """Parse and analyse every statement of ``sql``; problems become issues, never exceptions.

    With a ``catalog`` each statement also gets its column edges, and the catalog learns
    the tables the script creates (DDL, CTAS, views) for the statements after them.  A
    ``default_database`` (a query log row's) is the first part of every table name that leaves it out.  A
    ``query_target`` (a scheduler step's one declared target: an Airflow BigQuery job's destination table) is
    where the script's query writes its rows, when the script has one query that writes nowhere itself.
    """
    with tree_pace():
        return _analyzed_script(sql, file, dialect, default_schema, catalog, default_database, query_target)


def _analyzed_script(
    sql: str,
    file: str,
    dialect: str | None,
    default_schema: str | None,
    catalog: SchemaCatalog | None,
    default_database: str | None,
    query_target: str | None,
) -> ScriptAnalysis:
    profile = load_profile(file_dialect(sql) or dialect)
    ctx = Context(profile, default_schema=default_schema, default_database=default_database)
    script = ScriptAnalysis()
    triggers = trigger_scopes(sql, profile)
    statements: Iterable[ParsedStatement] = _parsed_statements(sql, profile)
    if query_target is not None:
        statements = _into_target(list(statements), query_target)
    for parsed in statements:
        script.statements += 1
        if triggers:
            _enter_trigger(ctx, triggers, parsed.line)
        ctx.routine_parameters = parsed.routine_parameters
        if parsed.error is not None:
            _recover(parsed, file, ctx, script)
        elif parsed.expression is not None:
            text = bounded_sql(parsed.text)  # (a block's statements share its text: their own spans are not known)
            for statement, line in nested_statements(parsed.expression, parsed.line):
                _analyze_one(statement, line, file, ctx, script, catalog, text)
    return script


def _into_target(statements: list[ParsedStatement], target: str) -> list[ParsedStatement]:
    """``statements`` with their one query that writes nowhere itself read as writing into ``target`` (an
    ``INSERT INTO target`` of it); as they are where there is no such query, or several.

    >>> parsed = list(_parsed_statements("SET x = 1; SELECT a FROM s.t", load_profile("hive")))
    >>> [p.expression.sql() for p in _into_target(parsed, "mart.m")]
    ['SET x = 1', 'INSERT INTO "mart"."m" SELECT a FROM s.t']
    """
    queries = [p for p in statements if _writes_nowhere(p.expression)]
    if len(queries) == 1:
        table = exp.table_(*reversed(target.rsplit(".", 2)), quoted=True)  # (declared names are folded already)
        queries[0].expression = exp.Insert(this=table, expression=queries[0].expression)
    return statements


def _writes_nowhere(expression: exp.Expression | None) -> bool:
    """A query (a SELECT, a UNION ...) that writes no table of its own (a SELECT INTO does)."""
    return isinstance(expression, exp.Query) and not expression.args.get("into")


def _recover(parsed: ParsedStatement, file: str, ctx: Context, script: ScriptAnalysis) -> None:
    """A statement that did not parse: its error, and the tables its tokens name as approximate lineage."""
    lineage = recover(parsed.tokens or [], ctx)
    message = parsed.error or ""
    if lineage is not None:
        lineage.line, lineage.sql, lineage.dialect = parsed.line, bounded_sql(parsed.text), ctx.profile.name
        script.lineage.append(lineage)
        message += f"; {APPROXIMATE_NOTE}"
    script.issues.append(Issue(file, parsed.error_line or parsed.line, message, parsed.error_col))


def _parsed_statements(sql: str, profile: DialectProfile, lines_before: int = 0) -> Iterator[ParsedStatement]:
    """Every statement of ``sql``, each with its line in the file (``sql`` starts after ``lines_before``
    lines of it); a SQL routine whose body is a string (``AS $$ ... $$``) stands for the body's statements."""
    for parsed in parse_script(
        sql,
        profile.sqlglot_dialect,
        optional_semicolons=profile.optional_semicolons,
        client_commands=profile.client_commands,
        unread_statements=profile.unread_statements,
    ):
        body = routine_body(parsed.expression) if parsed.expression is not None else None
        if body is not None and (at := sql.find(body, _line_start(sql, parsed.line))) >= 0:
            parameters = routine_parameters(parsed.expression)  # type: ignore[arg-type] - the routine
            for inner in _parsed_statements(body, profile, lines_before + sql.count("\n", 0, at)):
                inner.routine_parameters = parameters | (inner.routine_parameters or frozenset())
                yield inner
            continue
        parsed.line += lines_before
        if parsed.error_line is not None:
            parsed.error_line += lines_before
        yield parsed


@dataclass(frozen=True, slots=True)
class TriggerScope:
    """The lines of one trigger, from its header to the end of its body, and the table it is on, as written."""

    first: int
    last: int
    table: str


# A DML trigger's header, at the start of a line: `CREATE [OR ALTER] TRIGGER name [BEFORE|AFTER ...] ON table`
_NAME_PART = r'(?:\[[^\]\n]*\]|"[^"\n]*"|[^\s.;,()\[\]"]+)'
_QUALIFIED = rf"{_NAME_PART}(?:\s*\.\s*{_NAME_PART})*"
_TRIGGER_HEADER = re.compile(
    rf"^[ \t]*(?:CREATE(?:\s+OR\s+(?:ALTER|REPLACE))?|ALTER)\s+TRIGGER\s+{_QUALIFIED}\s+"
    rf"(?:(?:BEFORE|AFTER|INSTEAD\s+OF)\s[^;]*?)?ON\s+({_QUALIFIED})",
    re.IGNORECASE | re.MULTILINE,
)
# DDL triggers (`ON DATABASE`, `ON ALL SERVER`) have no rows
_NOT_TABLES = frozenset({"DATABASE", "ALL"})
# sqlcmd's batch separator (the `optional_semicolons` fact): a `GO` line, perhaps with a count
_BATCH_END = re.compile(r"^[ \t]*GO(?:[ \t]+\d+)?[ \t]*(?:--[^\n]*)?$", re.IGNORECASE | re.MULTILINE)


def trigger_scopes(sql: str, profile: DialectProfile) -> list[TriggerScope]:
    """The triggers of ``sql`` whose bodies read their table through pseudo-tables (the profile's
    ``trigger_row_tables``), each up to the end of its batch (a T-SQL CREATE TRIGGER is alone in its batch),
    else up to the next trigger, else to the end of the script.

    >>> from lineage_cli.profiles import load_profile
    >>> sql = "SELECT 1\\nGO\\nCREATE TRIGGER g ON [dbo].[Src] FOR INSERT AS\\nINSERT a SELECT a FROM inserted\\nGO"
    >>> trigger_scopes(sql, load_profile("tsql"))
    [TriggerScope(first=3, last=4, table='[dbo].[Src]')]
    """
    if not profile.trigger_row_tables and not profile.trigger_row_variables:
        return []
    headers = [m for m in _TRIGGER_HEADER.finditer(sql) if m.group(1).upper() not in _NOT_TABLES]
    if not headers:
        return []
    ends = [_line_of(sql, m.start()) for m in _BATCH_END.finditer(sql)] if profile.optional_semicolons else []
    starts = [_line_of(sql, m.start()) for m in headers]
    scopes = []
    for index, (header, first) in enumerate(zip(headers, starts, strict=True)):
        bounds = [line - 1 for line in [*ends, *starts[index + 1 :]] if line > first]
        scopes.append(TriggerScope(first, min(bounds, default=sql.count("\n") + 1), header.group(1)))
    return scopes


def _line_of(sql: str, offset: int) -> int:
    return sql.count("\n", 0, offset) + 1


def _enter_trigger(ctx: Context, triggers: list[TriggerScope], line: int) -> None:
    """Point the profile's trigger pseudo-tables at the table of the trigger whose body holds ``line``; outside
    every trigger, they are nobody's (a table that happens to be called ``inserted`` is a table)."""
    scope = next((t for t in triggers if t.first <= line <= t.last), None)
    ctx.row_tables, ctx.row_variables = {}, {}
    if scope is None:
        return
    try:
        table = exp.to_table(scope.table, dialect=ctx.profile.sqlglot_dialect)
    except (ParseError, TokenError):
        return  # a name sqlglot cannot read: the pseudo-tables stay tables
    name = ctx.table_name(table)
    ctx.row_tables = {pseudo: name for pseudo in ctx.profile.trigger_row_tables}
    ctx.row_variables = {variable: name for variable in ctx.profile.trigger_row_variables}


def _line_start(sql: str, line: int) -> int:
    """Where line ``line`` (1-based) of ``sql`` begins: the body of a routine is looked for from its own line."""
    start = 0
    for _ in range(line - 1):
        start = sql.find("\n", start) + 1
    return start


def analyze_template(
    sql: str,
    file: str,
    dialect: str | None = None,
    default_schema: str | None = None,
    catalog: SchemaCatalog | None = None,
    *,
    variables: Mapping[str, object] | None = None,
    defaults: Mapping[str, str] | None = None,
    relations: Mapping[str, str] | None = None,
    macros: tuple[MacroFile, ...] = (),
    default_database: str | None = None,
    query_target: str | None = None,
) -> ScriptAnalysis:
    """``analyze_script`` over a template: rendered first (``templates.render``), then its names,
    lines and messages mapped back to the template (a ``query_target``'s placeholders too).

    A placeholder without a value stays in the names it is part of; with a default (``defaults``)
    the analysis also says which real dataset each such name points to.

    >>> script = analyze_template("INSERT INTO ${db}.t SELECT s.a FROM #src#.s s WHERE s.b > ${low}",
    ...                           "x.sql", "hive", variables={"db": "dwh"}, defaults={"src": "stg"})
    >>> [(s.targets, s.sources) for s in script.lineage], script.defaults
    ([(['dwh.t'], ['#src#.s'])], {'#src#.s': 'stg.s'})
    """
    profile = load_profile(file_dialect(sql) or dialect)
    rendered = render(sql, variables, relations, macros, profile.placeholder_styles)
    if query_target is not None:
        query_target = rendered.placeholders.protect(query_target, profile.placeholder_styles)
    script = analyze_script(rendered.text, file, dialect, default_schema, catalog, default_database, query_target)
    _map_back(script, rendered, defaults or {}, profile.fold)
    script.issues[:0] = [Issue(file, line, message, level="warning") for line, message in rendered.warnings]
    return script


def _map_back(
    script: ScriptAnalysis, rendered: Rendered, defaults: Mapping[str, str], fold: Callable[[str], str]
) -> None:
    """Source lines for rendered ones, placeholders for their tokens; edges from value placeholders dropped."""
    placeholders, restore = rendered.placeholders, rendered.placeholders.restore
    for statement in script.lineage:
        statement.line = rendered.source_line(statement.line)
        if not placeholders.texts:
            continue
        for name in _dataset_names(statement):
            real = default_name(name, placeholders, defaults, fold) if defaults else None
            if real is not None:
                script.defaults[restore(name)] = real
        for write in statement.writes:
            write.target, write.sources = restore(write.target), [restore(source) for source in write.sources]
        statement.reads = [restore(name) for name in statement.reads]
        statement.columns = sorted(
            ColumnEdge(restore(e.source), restore(e.target), e.kind, e.subtype)
            for e in statement.columns
            if not placeholders.is_value(e.source)
        )
        statement.target_columns = [restore(column) for column in statement.target_columns]
        statement.expressions = {restore(column): restore(text) for column, text in statement.expressions.items()}
        statement.sql = bounded_sql(restore(statement.sql))
    script.issues = [
        Issue(i.file, rendered.source_line(i.line), restore(i.message), i.col, i.level)
        for i in script.issues
        if not _is_value_warning(i, rendered)
    ]


def _dataset_names(statement: StatementLineage) -> set[str]:
    names = {w.target for w in statement.writes} | set(statement.sources)
    names |= {table_of(e.source) for e in statement.columns} | {table_of(e.target) for e in statement.columns}
    return {name for name in names if name != "?"}


def _is_value_warning(issue: Issue, rendered: Rendered) -> bool:
    """``cannot resolve column ${min_amount}``: a value placeholder, not a column."""
    match = _UNRESOLVED_COLUMN.match(issue.message)
    return match is not None and rendered.placeholders.is_value(match.group(1))


def _analyze_one(
    expression: exp.Expression,
    line: int,
    file: str,
    ctx: Context,
    script: ScriptAnalysis,
    catalog: SchemaCatalog | None = None,
    text: str = "",
) -> None:
    try:
        lineage = analyze_statement(expression, ctx)
    except ParseError as error:  # the SQL a statement holds in a string, as UNLOAD's query, is parsed here
        script.issues.append(Issue(file, line, f"cannot analyse statement: {parse_error(error)}"))
        return
    except Exception as error:  # noqa: BLE001 - one odd statement must not end the harvest
        script.issues.append(Issue(file, line, _failure(error, "statement", "this statement")))
        return
    if lineage is not None:
        lineage.line, lineage.sql, lineage.dialect = line, text, ctx.profile.name
        script.lineage.append(lineage)
    elif (message := unanalysed(expression)) is not None:
        script.issues.append(Issue(file, line, message, level="warning"))
    if catalog is not None:
        _analyze_columns(expression, lineage, line, file, ctx, script, catalog)


def _analyze_columns(
    expression: exp.Expression,
    lineage: StatementLineage | None,
    line: int,
    file: str,
    ctx: Context,
    script: ScriptAnalysis,
    catalog: SchemaCatalog,
) -> None:
    """Column edges of one statement; a failure here costs its column edges, never its table edges."""
    try:
        if lineage is not None:
            lineage.columns, lineage.target_columns, lineage.expressions, warnings = column_lineage(
                lineage, ctx, catalog
            )
            script.issues.extend(Issue(file, line, message, level="warning") for message in warnings)
        for table in observe(catalog, expression, lineage, ctx):
            script.declared.setdefault(table, line)
    except Exception as error:  # noqa: BLE001 - as above
        script.issues.append(Issue(file, line, _failure(error, "columns", "the columns of this statement")))


def _failure(error: Exception, part: str, what: str) -> str:
    """A failure of the analysis of a statement's ``part``: sqlglot's word on the SQL (its optimizer's), else a
    bug of ours in analysing ``what``."""
    if isinstance(error, SqlglotError):
        return f"cannot analyse {part}: {readable(str(error))}"
    return internal_error(error, what)


def file_dialect(sql: str) -> str | None:
    """The dialect named by a ``-- dialect: NAME`` comment in the file's leading comments."""
    head = []
    for text in sql.splitlines():
        if text.strip() and not text.lstrip().startswith("--"):
            break
        head.append(text)
    match = _DIALECT_DIRECTIVE.search("\n".join(head))
    return match.group(1).lower() if match else None
