"""What the schema catalog learns from analysed statements: the columns ``CREATE TABLE`` DDL declares
(``CREATE TABLE ... LIKE`` included), T-SQL's ``DECLARE @t TABLE (...)`` declares and ``ALTER TABLE ... ADD
COLUMN`` adds, and the output columns of a CTAS, view, ``SELECT INTO``, clone or Spark ``CACHE TABLE ... AS``.

Apart from ``schema.py`` because it reads syntax trees: a harvest that recalls its last result, or
reads a schema file, imports no parser.
"""

from __future__ import annotations

from sqlglot import exp

from lineage_cli.harvest.schema import DDL, OBSERVED, Columns, SchemaCatalog
from lineage_cli.harvest.sql.columns import output_columns
from lineage_cli.harvest.sql.statements import Context, StatementLineage

_OUTPUT_TYPES = ("ctas", "view", "alter_view", "select_into", "clone", "cache")
_TYPE_NAMES: dict[tuple[str, object, tuple[str, ...]], str] = {}


def observe(
    catalog: SchemaCatalog, expression: exp.Expression, lineage: StatementLineage | None, ctx: Context
) -> list[str]:
    """Teach ``catalog`` one analysed statement: ``CREATE TABLE`` DDL, or the outputs of a CTAS/view/SELECT INTO.
    Returns the tables it taught, so the statement's line can be told for each (``lineage check`` reports there)."""
    if isinstance(expression, exp.Create) and lineage is None:
        return _observe_ddl(catalog, expression, ctx)
    if isinstance(expression, exp.Alter) and lineage is None:
        return _observe_added_columns(catalog, expression, ctx)
    if isinstance(expression, exp.Declare):
        return _observe_table_variables(catalog, expression, ctx)
    taught = []
    if lineage is not None and lineage.type in _OUTPUT_TYPES:
        for write in lineage.writes:
            names = output_columns(write, ctx, catalog)
            if names is not None:
                catalog.add(write.target, names, OBSERVED)
                taught.append(write.target)
    return taught


def _observe_ddl(catalog: SchemaCatalog, create: exp.Create, ctx: Context) -> list[str]:
    schema = create.this
    if (create.kind or "").upper() != "TABLE":
        return []
    like = create.find(exp.LikeProperty)
    if isinstance(schema, exp.Table) and like is not None and isinstance(like.this, exp.Table):
        template = ctx.table_name(like.this)  # CREATE TABLE t LIKE s: t has s's columns
        known = catalog.types(template)
        if known is None:
            return []
        table = ctx.table_name(schema)
        catalog.add(table, known, DDL, partitions=catalog.partition_columns(template))
        return [table]
    table = schema.this if isinstance(schema, exp.Schema) else None
    if not isinstance(table, exp.Table):
        return []
    columns = _column_defs(schema, ctx)
    partitions: Columns = {}
    for prop in create.find_all(exp.PartitionedByProperty):
        if isinstance(prop.this, exp.Schema):
            partitions.update(_column_defs(prop.this, ctx))
    if not columns and not partitions:
        return []
    # Hive lists partition columns apart from the others; a SELECT feeds them last.
    name = ctx.table_name(table)
    catalog.add(name, {**columns, **partitions}, DDL, partitions=partitions)
    return [name]


def _observe_table_variables(catalog: SchemaCatalog, declare: exp.Declare, ctx: Context) -> list[str]:
    """``DECLARE @t TABLE (a INT, ...)``: the table ``@t`` (as ``survey`` names a table variable) has these columns."""
    taught = []
    for item in declare.expressions:
        names, kind = item.this if isinstance(item.this, list) else [item.this], item.args.get("kind")
        if len(names) != 1 or not isinstance(names[0], exp.Parameter) or not isinstance(kind, exp.Schema):
            continue
        table = ctx.table_name(exp.Table(this=exp.Identifier(this="@" + names[0].name)))
        catalog.add(table, _column_defs(kind, ctx), DDL)
        taught.append(table)
    return taught


def _observe_added_columns(catalog: SchemaCatalog, alter: exp.Alter, ctx: Context) -> list[str]:
    """``ALTER TABLE t ADD [COLUMN] c INT`` (Hive: ``ADD COLUMNS (c STRING, ...)``) on a table of known columns:
    the new ones follow the others, before Hive's partition columns."""
    if (alter.args.get("kind") or "").upper() != "TABLE" or not isinstance(alter.this, exp.Table):
        return []
    added: Columns = {}
    for action in alter.args.get("actions") or ():
        added.update(_column_defs(action if isinstance(action, exp.Schema) else exp.Schema(expressions=[action]), ctx))
    table = ctx.table_name(alter.this)
    known = catalog.types(table) if added else None
    if known is None:
        return []  # (a table whose other columns are unknown stays unknown: a star over it is not these alone)
    partitions = catalog.partition_columns(table)
    kept = {name: kind for name, kind in known.items() if name not in partitions}
    tail = {name: known[name] for name in partitions if name in known}
    catalog.add(table, {**kept, **added, **tail}, DDL, partitions=partitions)
    return [table]


def _column_defs(schema: exp.Schema, ctx: Context) -> Columns:
    found: Columns = {}
    dialect = ctx.profile.sqlglot_dialect
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            kind = item.args.get("kind")
            found[ctx.fold(item.this)] = _type_name(kind, dialect) if isinstance(kind, exp.DataType) else None
        elif isinstance(item, exp.Identifier):  # PARTITIONED BY (dt) of an earlier-declared column
            found[ctx.fold(item)] = None
    return found


def _type_name(kind: exp.DataType, dialect: str) -> str:
    """A column type as the dialect writes it; generating SQL is slow, and DDL repeats a few types."""
    if kind.args.get("nested"):
        return kind.sql(dialect)
    params = tuple(p.name if isinstance(p, exp.DataTypeParam) else p.sql(dialect) for p in kind.expressions)
    key = (dialect, kind.this, params)
    name = _TYPE_NAMES.get(key)
    if name is None:
        name = _TYPE_NAMES[key] = kind.sql(dialect)
    return name
