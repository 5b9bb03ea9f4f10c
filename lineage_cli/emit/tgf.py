"""The ``--format tgf`` emitter: yEd's Trivial Graph Format.

Node lines ``id label`` (ids 1..n in result order), one ``#`` line, then edge lines
``source-id target-id label``.  TGF has no quoting, so a label must stay on one line and no two
labels may read alike: a backslash, a tab, a line end and every other control character are written
as backslash escapes (``\\\\``, ``\\t``, ``\\n``, ``\\r``, ``\\xNN``, and ``\\u2028`` / ``\\u2029`` for the
Unicode line and paragraph separators), which a reader can undo.
"""

from __future__ import annotations

from lineage_cli.emit.style import index_nodes
from lineage_cli.walk.result import LineageResult, ResultEdge

_NAMED = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
# C0 controls, DEL and C1 controls, then the two line breaks outside Latin-1 that str.splitlines() breaks on.
_CONTROLS = [*map(chr, range(0x20)), "\x7f", *map(chr, range(0x80, 0xA0))]
_ESCAPES = str.maketrans(
    {char: f"\\x{ord(char):02x}" for char in _CONTROLS} | {"\u2028": "\\u2028", "\u2029": "\\u2029"} | _NAMED
)


def escape(text: str) -> str:
    """``text`` on one line, control characters and backslashes escaped.

    >>> print(escape("a\\tb\\r\\nc\\\\d\\x07"))
    a\\tb\\r\\nc\\\\d\\x07
    """
    return text.translate(_ESCAPES)


def edge_label(edge: ResultEdge) -> str:
    """The edge type, then its subtypes comma-joined.

    >>> edge_label(ResultEdge("a", "b", "projection", ("IDENTITY", "AGGREGATION")))
    'projection IDENTITY,AGGREGATION'
    """
    return " ".join(filter(None, (edge.type, ",".join(edge.subtypes))))


def _line(*fields: object) -> str:
    # No trailing space when the label is empty.
    return " ".join(str(field) for field in fields if field != "")


def to_tgf(result: LineageResult) -> str:
    index = index_nodes(result)
    lines = [_line(position + 1, escape(node.name)) for position, node in enumerate(result.nodes)]
    lines.append("#")
    lines += [_line(index[edge.source] + 1, index[edge.target] + 1, escape(edge_label(edge))) for edge in result.edges]
    return "\n".join(lines) + "\n"
