"""What the analysis of one statement gives (``Write``, ``StatementLineage``) and the ``Context`` a script
carries from one statement to the next, with the naming of tables it implies: folding by the dialect
profile, the default schema, T-SQL's temporary marks, a trigger's pseudo-tables; and the same naming of a
relation written as text (``relation_name``: dbt's manifests), so that the inputs need not import sqlglot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlglot import exp
from sqlglot.errors import SqlglotError

from lineage_cli.harvest.sql.statements.locations import file_location, placeholder_text
from lineage_cli.profiles import DialectProfile

if TYPE_CHECKING:
    from lineage_cli.harvest.sql.columns.lineage import ColumnEdge


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
    expression: exp.Expression | None  # None: a statement that did not parse, read approximately
    line: int = 0  # set by the script analysis: the line of the statement's first token
    columns: list[ColumnEdge] = field(default_factory=list)  # filled when column lineage is asked for
    target_columns: list[str] = field(default_factory=list)  # ... and the columns it writes, sources or not
    expressions: dict[str, str] = field(default_factory=dict)  # ... and what each is written as (its SQL text)
    reads: list[str] = field(default_factory=list)  # what a query without writes reads
    sql: str = ""  # set by the script analysis: the statement's text, first token to last (``model.bounded_sql``)
    dialect: str = ""  # ... and the name of the dialect profile it was read in
    # read from the tokens of a statement sqlglot could not parse (``approximate.py``): tables only, maybe not all
    approximate: bool = False

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
    # the first part of three-part names the SQL leaves out (a query log row's database); None: names leave it out
    default_database: str | None = None
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
        if isinstance(identifier, str):  # the empty part of `db..t` (T-SQL, Snowflake): the default schema's place
            return self.profile.fold(identifier)
        return self.profile.fold(identifier.name) if identifier is not None else ""

    def table_name(self, table: exp.Table) -> str:
        """``[catalog.]schema.table``, folded, the default schema filled in.

        >>> import sqlglot
        >>> from lineage_cli.profiles import load_profile
        >>> ctx = Context(load_profile("hive"), default_schema="ods")
        >>> ctx.table_name(sqlglot.parse_one("SELECT * FROM `Customer_Clean`", read="hive").find(exp.Table))
        'ods.customer_clean'
        """
        location = file_location(table, self.profile.quoted_paths_are_files)
        if location is not None:
            return location
        name = self.fold(table.args.get("this"))
        if name in self.row_tables and not table.args.get("db"):
            return self.row_tables[name]  # INSERTED in a trigger on dbo.src: the rows of dbo.src
        mark = _temporary_mark(table)
        if mark:
            return mark + name.removeprefix(mark)
        schema = self.fold(table.args.get("db")) or self.default_schema
        catalog = self.fold(table.args.get("catalog")) or (self.default_database if schema else None)
        return ".".join(part for part in (catalog, schema, name) if part)


def relation_name(ctx: Context, text: str) -> str:
    """The name of a relation written as text (dbt's ``relation_name``, quoted per adapter), as
    ``Context.table_name`` gives it; text that sqlglot reads as no table name keeps its parts, each folded.

    >>> from lineage_cli.profiles import load_profile
    >>> ctx = Context(load_profile("snowflake"))
    >>> relation_name(ctx, '"ANALYTICS".STAGING.Orders'), relation_name(ctx, "Raw..Orders"), relation_name(ctx, "A;B")
    ('analytics.staging.orders', 'raw..orders', 'a;b')
    """
    table = _relation_table(text, ctx)
    if table is None:
        return ".".join(ctx.profile.fold(part) for part in text.split("."))
    return ctx.table_name(table)


def _relation_table(text: str, ctx: Context) -> exp.Table | None:
    """``text`` as sqlglot reads a table name; None when it reads none (``x'``, ``a;b``, ``../..``, ``a..b``)."""
    try:
        table = exp.to_table(text, dialect=ctx.profile.sqlglot_dialect)
    except (SqlglotError, ValueError, TypeError):
        return None
    parts = (table.args.get("db"), table.args.get("catalog"))
    return table if all(part is None or isinstance(part, exp.Identifier) for part in parts) else None


def _temporary_mark(table: exp.Table) -> str:
    """``#`` for T-SQL's local temporary tables, ``##`` for global ones, else nothing.  They keep their mark
    and take no schema: ``#tmp`` is not the permanent ``dbo.tmp``.  A table variable (``DECLARE @t TABLE``,
    named ``@t`` by ``survey``) is local to its script the same way; its mark is in its name."""
    name = table.args.get("this")
    if not isinstance(name, exp.Identifier) or table.args.get("db"):
        return ""
    if name.this.startswith("@"):
        return "@"
    return "##" if name.args.get("global_") else "#" if name.args.get("temporary") else ""
