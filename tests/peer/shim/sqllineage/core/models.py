"""sqllineage.core.models stand-in: tables, schemas and paths by name only."""

from __future__ import annotations


class Schema:
    def __init__(self, name: str | None = None) -> None:
        self.raw_name = (name or "<default>").lower()


class Table:
    def __init__(self, raw_name: str, schema: Schema | None = None, **_: object) -> None:
        self.raw_name = (f"{schema.raw_name}.{raw_name}" if schema is not None else raw_name).lower()


class Path:
    def __init__(self, uri: str) -> None:
        self.uri = uri
