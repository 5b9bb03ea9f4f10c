"""The ``--format tgf`` emitter: yEd's Trivial Graph Format.

Node lines ``id label`` (ids 1..n in result order), one ``#`` line, then edge lines
``source-id target-id label``.  TGF has no quoting, so a label must stay on one line.
"""

from __future__ import annotations

from lineage_cli.emit.style import index_nodes
from lineage_cli.walk.result import LineageResult, ResultEdge

# Every character str.splitlines() breaks on: readers differ in which ones end a line.
_LINE_BREAKS = str.maketrans(dict.fromkeys("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", " "))


def flatten(text: str) -> str:
    """``text`` on one line: each line-break character becomes a space.

    >>> flatten("a\\r\\nb")
    'a  b'
    """
    return text.translate(_LINE_BREAKS)


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
    lines = [_line(position + 1, flatten(node.name)) for position, node in enumerate(result.nodes)]
    lines.append("#")
    lines += [_line(index[edge.source] + 1, index[edge.target] + 1, flatten(edge_label(edge))) for edge in result.edges]
    return "\n".join(lines) + "\n"
