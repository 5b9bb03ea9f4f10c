"""sqllineage.core.metadata_provider stand-in: the test schemas, handed to ``parse_sql(schema=...)``."""

from __future__ import annotations


class MetaDataProvider:
    def __init__(self, schemas: dict[str, list[str]] | None = None) -> None:
        self.schemas = schemas or {}
