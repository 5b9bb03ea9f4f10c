"""The output-format registry: format names, file-suffix guessing and dispatch to emitters.

Emitter modules are imported only when their format is asked for, so a query that prints
JSON never loads rich or XML machinery.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import PurePath
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from lineage_cli.walk.result import LineageResult

FORMATS = ("tree", "json", "tgf", "graphml", "dot")

# format -> (module, function taking a LineageResult and returning the text)
_EMITTERS: dict[str, tuple[str, str]] = {
    "tree": ("lineage_cli.emit.tree", "tree_text"),
    "json": ("lineage_cli.emit.jsonfmt", "to_json"),
    "tgf": ("lineage_cli.emit.tgf", "to_tgf"),
    "graphml": ("lineage_cli.emit.graphml", "to_graphml"),
    "dot": ("lineage_cli.emit.dot", "to_dot"),
}

_SUFFIXES = {
    ".json": "json",
    ".tgf": "tgf",
    ".graphml": "graphml",
    ".dot": "dot",
    ".gv": "dot",
    ".txt": "tree",
}


def emit(result: LineageResult, fmt: str) -> str:
    """Render ``result`` as text in format ``fmt`` (one of ``FORMATS``)."""
    try:
        module_name, function_name = _EMITTERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    return getattr(import_module(module_name), function_name)(result)


def format_from_path(path: str) -> str | None:
    """The format an output file's suffix asks for, or None when the suffix says nothing.

    >>> format_from_path("out/lineage.GV")
    'dot'
    >>> format_from_path("lineage.xml") is None
    True
    """
    return _SUFFIXES.get(PurePath(path).suffix.lower())
