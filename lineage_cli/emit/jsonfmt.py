"""The ``--format json`` emitter: the result's own dictionary, pretty-printed.

The text is exactly ``json.dumps(result.to_dict(), indent=2, ensure_ascii=False)`` plus a newline, but
written from the result's columns: with ``indent`` the json module falls back to its pure-Python encoder,
several microseconds per value, seconds for a 100,000-edge answer.  Every object of the ``nodes`` and
``edges`` arrays has the same layout, so the array is one template repeated, its value slots filled by
extended-slice assignment and the whole joined once: no Python code runs per object.  Names that need no
escaping (checked at once, in C) are quoted by the template; others go through the json module's own escaper.
"""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring  # the C escaper json.dumps(ensure_ascii=False) uses

from lineage_cli.walk.result import ROLES, LineageResult, ResultColumns

MEMBER = ",\n      "  # between two members of an object of the nodes or edges arrays
OBJECT_OPEN, OBJECT_CLOSE = "    {\n      ", "\n    }"
# A node's "role" member as it follows "depth", by role ("": no member).
_ROLE_TEXT = {None: "", **{role: f'{MEMBER}"role": "{role}"' for role in ROLES}}


# The characters a JSON string cannot hold as they are (json.dumps(ensure_ascii=False) escapes these only).
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]')


class _Member:
    """One member of every object of an array: its key text, and per object its value's text.

    ``quoted`` values are plain strings that the template quotes (no escaping needed: the common case of SQL
    names); an empty key marks an optional member whose texts carry their own separator and key, or are
    empty where an object lacks it.
    """

    __slots__ = ("key", "values", "quoted")

    def __init__(self, key: str, values: list[str], quoted: bool = False) -> None:
        self.key, self.values, self.quoted = key, values, quoted


def _strings(key: str, texts: list[str]) -> _Member:
    """A member of string values: quoted by the template when none needs escaping, else escaped each."""
    if _plain("".join(texts)):
        return _Member(key, texts, quoted=True)
    escaped = {text: encode_basestring(text) for text in set(texts)}
    return _Member(key, list(map(escaped.__getitem__, texts)))


def _plain(text: str) -> bool:
    """Whether JSON holds ``text`` as it is: three C scans (``isprintable`` is false for every control
    character, and rarely for anything else, which the regex then settles)."""
    if '"' in text or "\\" in text:
        return False
    return text.isprintable() or _NEEDS_ESCAPE.search(text) is None


def to_json(result: LineageResult) -> str:
    columns = result.columns()
    roots = _array(list(map(encode_basestring, result.roots)), "  ")
    # One join of every part: a 100,000-edge answer is some 15 MB of text, each copy of it costs
    parts = [f'{{\n  "direction": {_value(result.direction)},\n  "roots": {roots},\n  "nodes": ']
    parts += _nodes(columns)
    parts.append(',\n  "edges": ')
    parts += _edges(columns)
    parts.append("\n}\n")
    return "".join(parts)


def _nodes(columns: ResultColumns) -> list[str]:
    members = [_strings('"name": ', columns.names), _strings('"kind": ', columns.kinds)]
    members.append(_Member('"depth": ', _numbers(columns.depths)))
    if columns.roles:
        members.append(_Member("", list(map(_ROLE_TEXT.__getitem__, columns.roles))))
    if columns.files:
        provenance = zip(columns.files, columns.lines, strict=True)
        texts = ["" if f is None else f'{MEMBER}"file": {_value(f)}{MEMBER}"line": {_value(n)}' for f, n in provenance]
        members.append(_Member("", texts))
    if columns.expressions:
        key = f'{MEMBER}"expression": '
        texts = [
            "" if not found else key + encode_basestring(found[0][1]) if len(found) == 1 else _several(found)
            for found in columns.expressions
        ]  # (one comprehension, no call per node: most nodes have no expression, or one)
        members.append(_Member("", texts))
    return _objects(members)


def _several(expressions: tuple[tuple[str, str], ...]) -> str:
    """A column several statements write: ``expression`` (the first's) and ``expressions``, as ``result.py``'s
    ``_node_dict`` has them."""
    inner = "\n          "  # laid out as json.dumps(indent=2) lays them out at this depth: its Python encoder is slow
    items = [
        f'{{{inner}"statement": {encode_basestring(made)},{inner}"expression": {encode_basestring(text)}\n        }}'
        for made, text in expressions
    ]
    listed = _array(items, "      ")
    return f'{MEMBER}"expression": {encode_basestring(expressions[0][1])}{MEMBER}"expressions": {listed}'


def _edges(columns: ResultColumns) -> list[str]:
    members = [_strings('"source": ', columns.sources), _strings('"target": ', columns.targets)]
    members.append(_strings('"type": ', columns.types))
    if any(columns.subtypes):
        arrays = {subtypes: _subtypes_text(subtypes) for subtypes in set(columns.subtypes)}
        members.append(_Member("", list(map(arrays.__getitem__, columns.subtypes))))
    return _objects(members)


def _subtypes_text(subtypes: tuple[str, ...]) -> str:
    if not subtypes:
        return ""
    text = f'{MEMBER}"subtypes": {_array(list(map(encode_basestring, subtypes)), "      ")}'
    # only statements that did not parse give the edge: their tables were read from their tokens
    return text + f'{MEMBER}"approximate": true' if "APPROXIMATE" in subtypes else text


def _objects(members: list[_Member]) -> list[str]:
    """A top-level array of objects with ``members``, one value of each per object, as parts to join."""
    count = len(members[0].values)
    if not count:
        return ["[]"]
    template: list[str | None] = []
    text, first = OBJECT_OPEN, True  # the constant text before the next value
    for member in members:
        if member.key:
            text += ("" if first else MEMBER) + member.key
            first = False
        template += (text + '"', None) if member.quoted else (text, None)
        text = '"' if member.quoted else ""
    template.append(text + OBJECT_CLOSE + ",\n")
    stride = len(template)
    parts = template * count
    for slot, member in zip(range(1, stride, 2), members, strict=False):
        parts[slot::stride] = member.values
    parts[-1] = text + OBJECT_CLOSE + "\n  ]"
    parts.insert(0, "[\n")
    return parts  # type: ignore[return-value] - every slot is filled


def _numbers(values: list[int]) -> list[str]:
    """Small ints as JSON text through a table (``str`` per int is slow); anything else through ``_value``."""
    if set(map(type, values)) <= {int} and min(values, default=0) >= 0 and max(values, default=0) < 4096:
        table = [str(i) for i in range(max(values, default=0) + 1)]
        return list(map(table.__getitem__, values))
    return list(map(_value, values))


def _array(literals: list[str], indent: str) -> str:
    """An array of JSON literals, laid out like ``json.dumps(indent=2)`` does at ``indent``."""
    if not literals:
        return "[]"
    inner = indent + "  "
    return f"[\n{inner}" + f",\n{inner}".join(literals) + f"\n{indent}]"


def _value(value: object) -> str:
    """A scalar as JSON: str, int, None (``json.dumps`` itself for anything else)."""
    if type(value) is int:
        return int.__repr__(value)
    if isinstance(value, str):
        return encode_basestring(value)
    return json.dumps(value, ensure_ascii=False)
