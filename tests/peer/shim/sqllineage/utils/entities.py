"""sqllineage.utils.entities stand-in: the (column, qualifier) pairs its column tests expect."""

from typing import NamedTuple


class ColumnQualifierTuple(NamedTuple):
    column: str
    qualifier: str | None
