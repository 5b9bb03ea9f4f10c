"""The JSON names of values' types, for messages about data of the wrong type.

dbt's manifest and catalog (JSON) and its project's YAML files (whose mappings dbt validates as JSON
objects) are described in the same words: ``must be an object, got a list``.
"""

from __future__ import annotations

_JSON_TYPES = ((bool, "a boolean"), (int, "a number"), (float, "a number"), (str, "a string"), (list, "a list"))


def json_type(value: object) -> str:
    """The JSON name of a value's type: ``null``, ``a string``, ``a list``, ``an object``..."""
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "an object")


def type_name(kind: type) -> str:
    """The JSON name of a Python type: ``a string`` for ``str``, ``an object`` for ``dict``."""
    return next((name for known, name in _JSON_TYPES if known is kind), "an object")
