"""The schema catalog: the known columns of each table, in order, optionally typed.

Column lineage needs a table's columns to expand ``SELECT *`` and ``t.*``, to find which
joined table an unqualified column belongs to, and to map a positional ``INSERT``.  The
catalog answers from three layers, looked up in this order:

1. an explicit schema (``--schema FILE`` or a mapping given to ``parse_sql``);
2. ``CREATE TABLE`` DDL seen in the harvest (Hive ``PARTITIONED BY`` columns go last);
3. the outputs of earlier CTAS / ``CREATE VIEW`` / ``SELECT INTO`` statements.

Names are ``[catalog.]schema.table`` and column names, lower-cased like every name of
the lineage output.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from sqlglot import exp

if TYPE_CHECKING:
    from lineage_cli.harvest.statements import Context, StatementLineage

Columns = dict[str, str | None]  # column -> type (None when untyped), in table order

_EXPLICIT, _DDL, _OBSERVED = 0, 1, 2


class SchemaError(ValueError):
    """A schema file or mapping has a shape the catalog does not understand."""


class SchemaCatalog:
    """Known columns per table, fed by a schema file, DDL and earlier statements.

    >>> catalog = SchemaCatalog.from_mapping({"ods": {"orders": {"id": "BIGINT", "amount": "DECIMAL"}}})
    >>> catalog.columns("ODS.Orders")
    ['id', 'amount']
    >>> catalog.columns("ods.missing") is None
    True
    """

    def __init__(self) -> None:
        self._layers: tuple[dict[str, Columns], ...] = ({}, {}, {})
        self._partitions: dict[str, tuple[str, ...]] = {}

    # -- building -----------------------------------------------------------------------

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any] | None) -> SchemaCatalog:
        """A catalog of the explicit layer from any of the accepted shapes.

        ``{"schema.table": ["c1", "c2"]}``, ``{"schema.table": {"c1": "type"}}`` and the nested
        ``{schema: {table: {column: type}}}`` (optionally under a catalog level) are all read.

        >>> SchemaCatalog.from_mapping({"s.t": ["A", "b"], "x": {"y": {"z": {"c": "int"}}}}).tables()
        ['s.t', 'x.y.z']
        """
        catalog = cls()
        for table, columns in _flatten(mapping or {}, ()):
            catalog.add(table, columns)
        return catalog

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> SchemaCatalog:
        """Read a YAML or JSON schema file (JSON is valid YAML, so either parser works)."""
        text = Path(path).read_text(encoding="utf-8")
        try:
            data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
        except (json.JSONDecodeError, yaml.YAMLError) as error:
            raise SchemaError(f"{path}: {error}") from error
        if not isinstance(data, Mapping):
            raise SchemaError(f"{path}: expected a mapping of tables to columns")
        return cls.from_mapping(data)

    def add(
        self,
        table: str,
        columns: Mapping[str, str | None] | Iterable[str],
        layer: int = _EXPLICIT,
        partitions: Iterable[str] = (),
    ) -> None:
        """Record the columns of ``table`` in ``layer`` (replacing what that layer knew)."""
        if isinstance(columns, Mapping):
            known = {str(name).lower(): (str(kind) if kind is not None else None) for name, kind in columns.items()}
        else:
            known = {str(name).lower(): None for name in columns}
        key = table.lower()
        self._layers[layer][key] = known
        if partitions:
            self._partitions[key] = tuple(p.lower() for p in partitions)

    # -- queries ------------------------------------------------------------------------

    def columns(self, table: str) -> list[str] | None:
        """The ordered column names of ``table``, or None when no layer knows it."""
        known = self.types(table)
        return list(known) if known is not None else None

    def types(self, table: str) -> Columns | None:
        """Column -> type of ``table`` from the first layer that knows it."""
        for key in _candidate_keys(table.lower()):
            for layer in self._layers:
                known = layer.get(key)
                if known is not None:
                    return known
        return None

    def partition_columns(self, table: str) -> tuple[str, ...]:
        """Hive partition columns of ``table`` as its DDL declared them (they are its last columns)."""
        return self._partitions.get(table.lower(), ())

    def tables(self) -> list[str]:
        return sorted({key for layer in self._layers for key in layer})

    def __contains__(self, table: object) -> bool:
        return isinstance(table, str) and self.types(table) is not None

    def __len__(self) -> int:
        return len(self.tables())

    # -- snapshots, for harvesting in several processes ---------------------------------

    def copy(self) -> SchemaCatalog:
        twin = SchemaCatalog()
        twin._layers = tuple(dict(layer) for layer in self._layers)
        twin._partitions = dict(self._partitions)
        return twin

    def learned_since(self, before: SchemaCatalog) -> SchemaCatalog:
        """The DDL and observed entries added or changed since the snapshot ``before``.

        >>> catalog = SchemaCatalog.from_mapping({"s.t": ["a"]})
        >>> before = catalog.copy()
        >>> catalog.add("s.u", ["b"], _DDL)
        >>> catalog.learned_since(before).tables()
        ['s.u']
        """
        delta = SchemaCatalog()
        for layer in (_DDL, _OBSERVED):
            for table, columns in self._layers[layer].items():
                if before._layers[layer].get(table) != columns:
                    delta._layers[layer][table] = columns
                    if table in self._partitions:
                        delta._partitions[table] = self._partitions[table]
        return delta

    def absorb(self, other: SchemaCatalog) -> None:
        """Add ``other``'s DDL and observed entries (the explicit layer stays this catalog's own)."""
        for layer in (_DDL, _OBSERVED):
            self._layers[layer].update(other._layers[layer])
        self._partitions.update(other._partitions)

    def fingerprint(self) -> str:
        """A digest of everything the catalog knows: part of the harvest cache key."""
        state = (self._layers, sorted(self._partitions.items()))
        return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()

    # -- learning from the harvest ------------------------------------------------------

    def observe(self, expression: exp.Expression, lineage: StatementLineage | None, ctx: Context) -> None:
        """Learn from one analysed statement: ``CREATE TABLE`` DDL, or the outputs of a CTAS/view/SELECT INTO."""
        if isinstance(expression, exp.Create) and lineage is None:
            self._observe_ddl(expression, ctx)
        elif lineage is not None and lineage.type in ("ctas", "view", "alter_view", "select_into"):
            # Imported here: columns.py imports this module for its type hints.
            from lineage_cli.harvest.columns import output_columns

            for write in lineage.writes:
                names = output_columns(write, ctx, self)
                if names is not None:
                    self.add(write.target, names, _OBSERVED)

    def _observe_ddl(self, create: exp.Create, ctx: Context) -> None:
        schema = create.this
        if (create.kind or "").upper() != "TABLE":
            return
        like = create.find(exp.LikeProperty)
        if isinstance(schema, exp.Table) and like is not None and isinstance(like.this, exp.Table):
            template = ctx.table_name(like.this)  # CREATE TABLE t LIKE s: t has s's columns
            known = self.types(template)
            if known is not None:
                self.add(ctx.table_name(schema), known, _DDL, partitions=self.partition_columns(template))
            return
        table = schema.this if isinstance(schema, exp.Schema) else None
        if not isinstance(table, exp.Table):
            return
        columns = _column_defs(schema, ctx)
        partitions: Columns = {}
        for prop in create.find_all(exp.PartitionedByProperty):
            if isinstance(prop.this, exp.Schema):
                partitions.update(_column_defs(prop.this, ctx))
        if columns or partitions:
            # Hive lists partition columns apart from the others; a SELECT feeds them last.
            self.add(ctx.table_name(table), {**columns, **partitions}, _DDL, partitions=partitions)


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


_TYPE_NAMES: dict[tuple[str, object, tuple[str, ...]], str] = {}


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


def _candidate_keys(table: str) -> tuple[str, ...]:
    """``cat.db.t`` may be listed as ``db.t``; a schema may list a table by its bare name."""
    parts = table.split(".")
    keys = [table]
    if len(parts) == 3:
        keys.append(".".join(parts[1:]))
    if len(parts) > 1:
        keys.append(parts[-1])
    return tuple(keys)


def _flatten(node: Mapping[str, Any], prefix: tuple[str, ...]) -> Iterable[tuple[str, Columns | list[str]]]:
    """Walk nested mappings down to the column level; the keys on the way make the table name."""
    for key, value in node.items():
        path = (*prefix, str(key))
        if isinstance(value, list):
            yield ".".join(path), [str(item) for item in value]
        elif isinstance(value, Mapping) and value and all(not isinstance(v, (Mapping, list)) for v in value.values()):
            yield ".".join(path), {str(name): (str(kind) if kind is not None else None) for name, kind in value.items()}
        elif isinstance(value, Mapping):
            if len(path) >= 4:
                raise SchemaError(f"{'.'.join(path)}: nested deeper than catalog.schema.table")
            yield from _flatten(value, path)
        else:
            raise SchemaError(f"{'.'.join(path)}: expected a list or mapping of columns, got {type(value).__name__}")
