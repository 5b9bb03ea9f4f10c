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
from sys import intern
from typing import Any, NamedTuple

from lineage_cli.errors import InputError

Columns = dict[str, str | None]  # column -> type (None when untyped), in table order

# The layers, in the order they are looked up: an explicit schema, DDL, the outputs of CTAS / views (``observe.py``).
EXPLICIT, DDL, OBSERVED = 0, 1, 2
_COLUMN_TYPES = {str, type(None)}  # what a column's type is in a catalog's data: a name, or null when untyped


class SchemaError(InputError, ValueError):  # a ValueError too: the cache takes one as a miss
    """A schema file or mapping has a shape the catalog does not understand."""


def _type_name(kind: object) -> str | None:
    return intern(str(kind)) if kind is not None else None


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
        self._text_digest: str | None = None  # of the schema file's text, while the catalog holds that file alone
        # (layer, table) -> what the layer held before this catalog first changed it, when it keeps that (``learned``)
        self._journal: dict[tuple[int, str], Columns | None] | None = None

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
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise SchemaError(str(error)) from error
        data = _json(text, path) if str(path).endswith(".json") else _yaml(text, path)
        if not isinstance(data, Mapping):
            raise SchemaError(f"{path}: expected a mapping of tables to columns")
        catalog = cls.from_mapping(data)
        catalog._text_digest = hashlib.sha256(b"schema file\0" + text.encode()).hexdigest()
        return catalog

    def add(
        self,
        table: str,
        columns: Mapping[str, str | None] | Iterable[str],
        layer: int = EXPLICIT,
        partitions: Iterable[str] = (),
    ) -> None:
        """Record the columns of ``table`` in ``layer`` (replacing what that layer knew)."""
        # Interned: a warehouse's column names and types repeat over its tables (a third of a large schema's memory)
        if isinstance(columns, Mapping):
            known = {intern(str(name).lower()): _type_name(kind) for name, kind in columns.items()}
        else:
            known = {intern(str(name).lower()): None for name in columns}
        key = table.lower()
        self._text_digest = None
        self._note(layer, key)
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

    def copy(self, journal: bool = False) -> SchemaCatalog:
        """A twin to change apart from this catalog; with ``journal``, one that says what it ``learned``."""
        twin = SchemaCatalog()
        twin._layers = tuple(dict(layer) for layer in self._layers)
        twin._partitions = dict(self._partitions)
        twin._text_digest = self._text_digest
        twin._journal = {} if journal else None
        return twin

    def _note(self, layer: int, table: str) -> None:
        if self._journal is not None and layer != EXPLICIT:
            self._journal.setdefault((layer, table), self._layers[layer].get(table))

    def learned(self) -> SchemaCatalog:
        """``learned_since`` the catalog this one was copied from with ``journal``: read off the tables it changed,
        not found by comparing every table (which made a harvest's files cost as many times all its tables).

        >>> catalog = SchemaCatalog.from_mapping({"s.t": ["a"]}).copy(journal=True)
        >>> catalog.add("s.u", ["b"], DDL)
        >>> catalog.learned().tables()
        ['s.u']
        """
        if self._journal is None:
            raise ValueError("learned() asks a catalog copied with journal=True")
        if any(previous is not None for previous in self._journal.values()):
            # a known table changed: where it stands in its layer decides the delta's order, as learned_since has it
            before = self.copy()
            for (layer, table), previous in self._journal.items():
                if previous is None:
                    del before._layers[layer][table]
                else:
                    before._layers[layer][table] = previous
            return self.learned_since(before)
        delta = SchemaCatalog()
        for layer in (DDL, OBSERVED):  # new tables only: the journal holds them in the order the layer does
            for journal_layer, table in self._journal:
                if journal_layer == layer:
                    delta._layers[layer][table] = self._layers[layer][table]
                    if table in self._partitions:
                        delta._partitions[table] = self._partitions[table]
        return delta

    def learned_since(self, before: SchemaCatalog) -> SchemaCatalog:
        """The DDL and observed entries added or changed since the snapshot ``before``.

        >>> catalog = SchemaCatalog.from_mapping({"s.t": ["a"]})
        >>> before = catalog.copy()
        >>> catalog.add("s.u", ["b"], DDL)
        >>> catalog.learned_since(before).tables()
        ['s.u']
        """
        delta = SchemaCatalog()
        for layer in (DDL, OBSERVED):
            for table, columns in self._layers[layer].items():
                if before._layers[layer].get(table) != columns:
                    delta._layers[layer][table] = columns
                    if table in self._partitions:
                        delta._partitions[table] = self._partitions[table]
        return delta

    def absorb(self, other: SchemaCatalog) -> None:
        """Add ``other``'s DDL and observed entries (the explicit layer stays this catalog's own)."""
        if any(other._layers[layer] for layer in (DDL, OBSERVED)):
            self._text_digest = None
        for layer in (DDL, OBSERVED):
            for table in other._layers[layer]:
                self._note(layer, table)
            self._layers[layer].update(other._layers[layer])
        self._partitions.update(other._partitions)

    def to_data(self) -> dict[str, object]:
        """The catalog as JSON data: the harvest cache keeps what each file taught it (``outcome.py``)."""
        return {"layers": list(self._layers), "partitions": self._partitions}

    @classmethod
    def from_data(cls, data: Any) -> SchemaCatalog:
        """The catalog ``to_data`` made, from JSON data whose shape is checked first (a ``SchemaError`` if not)."""
        if not (type(data) is dict and data.keys() == {"layers", "partitions"}):
            raise SchemaError("not a catalog's data")
        layers, partitions = data["layers"], data["partitions"]
        if not (type(layers) is list and len(layers) == OBSERVED + 1 and all(map(_is_layer, layers))):
            raise SchemaError("not a catalog's layers")
        if not (type(partitions) is dict and all(type(p) is list and _only_strings(p) for p in partitions.values())):
            raise SchemaError("not a catalog's partition columns")
        catalog = cls()
        catalog._layers = tuple(layers)
        catalog._partitions = {table: tuple(columns) for table, columns in partitions.items()}
        return catalog

    def fingerprint(self) -> str:
        """A digest of everything the catalog knows, columns in order: part of the harvest cache keys.

        For a catalog that holds a schema file and nothing else, the digest of the file's text: the same text
        makes the same catalog, and is hashed at a tenth of the cost.
        """
        if self._text_digest is not None:
            return self._text_digest
        state = ([sorted(layer.items()) for layer in self._layers], sorted(self._partitions.items()))
        return hashlib.sha256(json.dumps(state).encode()).hexdigest()


def as_catalog(schema: SchemaCatalog | Mapping[str, Any] | str | os.PathLike[str] | None) -> SchemaCatalog:
    """What a caller gives as a schema, as a catalog: a catalog as it is, a YAML or JSON file read, a mapping
    in any shape ``from_mapping`` reads (None: no tables).

    A mapping is prepared once while it stays as it was (``_prepared``) and each call gets a copy of the
    prepared catalog, which learns the call's own CTAS outputs and nothing of other calls'.
    """
    if isinstance(schema, SchemaCatalog):
        return schema
    if isinstance(schema, (str, os.PathLike)):
        return SchemaCatalog.from_file(schema)
    return _prepared(schema or {}).copy()


class _Prepared(NamedTuple):
    mapping: Mapping[str, Any]  # held, so that its id is not reused while the entry lives
    shape: tuple[int, int]  # its tables and columns when the catalog was built, to tell a mapping edited since
    catalog: SchemaCatalog


_PREPARED: dict[int, _Prepared] = {}  # id(mapping) -> its catalog, for the last few mappings given
_PREPARED_LIMIT = 4


def _prepared(mapping: Mapping[str, Any]) -> SchemaCatalog:
    """The catalog of ``mapping``, built once per mapping object: ``parse_sql`` called per file with the same
    schema would otherwise rebuild (and lower-case) every column of the warehouse on every call.

    The entry is kept while the mapping's ``_shape`` is what it was, so tables added or removed between calls
    are read again; a check that looked at every column would cost a third of a parse per call (half a
    millisecond per thousand tables), so columns changed in place are not seen: pass a new mapping then.

    >>> schema = {"s": {"t": {"a": "int"}}}
    >>> _prepared(schema) is _prepared(schema)
    True
    >>> schema["s"]["u"] = {"b": "int"}
    >>> _prepared(schema).columns("s.u")
    ['b']
    """
    shape = _shape(mapping)
    entry = _PREPARED.get(id(mapping))
    if entry is not None and entry.mapping is mapping and entry.shape == shape:
        return entry.catalog
    catalog = SchemaCatalog.from_mapping(mapping)
    if len(_PREPARED) >= _PREPARED_LIMIT:
        del _PREPARED[next(iter(_PREPARED))]  # the oldest: dicts keep insertion order
    _PREPARED[id(mapping)] = _Prepared(mapping, shape, catalog)
    return catalog


def _shape(mapping: Mapping[str, Any]) -> tuple[int, int]:
    """The entries of ``mapping`` and of the mappings right under it: tables added or removed change it (in the
    nested ``{schema: {table: ...}}`` form as in the flat one), at the cost of a look per schema, not per table."""
    return len(mapping), sum(len(value) for value in mapping.values() if isinstance(value, (dict, list, Mapping)))


def _json(text: str, path: str | os.PathLike[str]) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SchemaError(f"{path}: {error}") from error


def _yaml(text: str, path: str | os.PathLike[str]) -> object:
    from lineage_cli.yamlsafe import load  # only a YAML schema pays for yaml

    try:
        return load(text, os.fspath(path))
    except ValueError as error:
        raise SchemaError(str(error)) from None


def _is_layer(layer: Any) -> bool:
    """Whether JSON data is one layer of a catalog: tables to columns to types (or null)."""
    return type(layer) is dict and all(
        type(columns) is dict and set(map(type, columns.values())) <= _COLUMN_TYPES for columns in layer.values()
    )


def _only_strings(values: Iterable[object]) -> bool:
    return set(map(type, values)) <= {str}


def _nests(mapping: Mapping[Any, Any]) -> bool:
    """Whether a mapping holds mappings or lists: a level above the columns.  Tested once per type of value
    (a table's values are mostly all strings), not once per value."""
    return any(issubclass(kind, (Mapping, list)) for kind in set(map(type, mapping.values())))


def _candidate_keys(table: str) -> tuple[str, ...]:
    """``cat.db.t`` may be listed as ``db.t``; a schema may list a table by its bare name."""
    parts = table.split(".")
    keys = [table]
    if len(parts) == 3:
        keys.append(".".join(parts[1:]))
    if len(parts) > 1:
        keys.append(parts[-1])
    return tuple(keys)


def _flatten(node: Mapping[str, Any], prefix: tuple[str, ...]) -> Iterable[tuple[str, Mapping[Any, Any] | list[Any]]]:
    """Walk nested mappings down to the column level; the keys on the way make the table name.  The columns
    are yielded as found, ``add`` makes strings of them."""
    for key, value in node.items():
        path = (*prefix, str(key))
        if isinstance(value, list) or (isinstance(value, Mapping) and value and not _nests(value)):
            yield ".".join(path), value
        elif isinstance(value, Mapping):
            if len(path) >= 4:
                raise SchemaError(f"{'.'.join(path)}: nested deeper than catalog.schema.table")
            yield from _flatten(value, path)
        else:
            raise SchemaError(f"{'.'.join(path)}: expected a list or mapping of columns, got {type(value).__name__}")
