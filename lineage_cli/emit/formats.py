"""The output-format registry: format names, file-suffix guessing and dispatch to emitters.

Emitter modules are imported only when their format is asked for, so a query that prints
JSON never loads rich or XML machinery.  Pictures (SVG, PNG, PDF) are the DOT text rendered
by Graphviz's ``dot`` program, which the ``graphviz`` package runs.
"""

from __future__ import annotations

import os
from importlib import import_module
from typing import TYPE_CHECKING

from lineage_cli.errors import InputError, LineageError

if TYPE_CHECKING:  # pragma: no cover
    from lineage_cli.emit.picture import Picture
    from lineage_cli.walk.result import LineageResult

FORMATS = ("tree", "json", "tgf", "graphml", "dot", "mermaid")
RENDERED = ("svg", "png", "pdf")  # written to a file only: bytes, chosen by the file's suffix
PICTURED = ("graphml", "dot", "mermaid")  # the formats a Picture (grouping, direction) applies to

# format -> (module, function taking a LineageResult and returning the text)
_EMITTERS: dict[str, tuple[str, str]] = {
    "tree": ("lineage_cli.emit.tree", "tree_text"),
    "json": ("lineage_cli.emit.jsonfmt", "to_json"),
    "tgf": ("lineage_cli.emit.tgf", "to_tgf"),
    "graphml": ("lineage_cli.emit.graphml", "to_graphml"),
    "dot": ("lineage_cli.emit.dot", "to_dot"),
    "mermaid": ("lineage_cli.emit.mermaid", "to_mermaid"),
}

_SUFFIXES = {
    ".json": "json",
    ".tgf": "tgf",
    ".graphml": "graphml",
    ".dot": "dot",
    ".gv": "dot",
    ".mmd": "mermaid",
    ".mermaid": "mermaid",
    ".txt": "tree",
    ".svg": "svg",
    ".png": "png",
    ".pdf": "pdf",
}


class RenderError(LineageError):
    """A picture could not be rendered: no ``dot`` program, or ``dot`` failed (exit 2: neither the input nor
    the store is to blame, but the answer is not there)."""

    exit_code = 2


def emit(result: LineageResult, fmt: str, picture: Picture | None = None) -> str:
    """Render ``result`` as text in format ``fmt`` (one of ``FORMATS``); ``picture`` for the ``PICTURED`` ones."""
    try:
        module_name, function_name = _EMITTERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    emitter = getattr(import_module(module_name), function_name)
    return emitter(result, picture) if fmt in PICTURED else emitter(result)


def render(result: LineageResult, fmt: str, picture: Picture | None = None) -> bytes:
    """Render ``result`` as a picture in format ``fmt`` (one of ``RENDERED``) with Graphviz's ``dot``."""
    import graphviz

    try:
        return graphviz.Source(emit(result, "dot", picture)).pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise RenderError(
            f"cannot render {fmt}: Graphviz's `dot` program is not on PATH; install Graphviz "
            "(e.g. `apt-get install graphviz`) or write DOT with `-o FILE.dot`"
        ) from None
    except graphviz.CalledProcessError as error:
        message = (error.stderr or b"").decode("utf-8", "replace").strip()
        raise RenderError(f"dot failed to render {fmt}: {message or error}") from None


def format_from_path(path: str) -> str | None:
    """The format an output file's suffix asks for, or None when the suffix says nothing.

    >>> format_from_path("out/lineage.GV"), format_from_path("lineage.svg")
    ('dot', 'svg')
    >>> format_from_path("lineage.xml") is None
    True
    """
    return _SUFFIXES.get(os.path.splitext(path)[1].lower())


def output_format(path: str) -> str:
    """The format output file ``path`` is written in, from its suffix; an InputError listing the known ones else.

    >>> output_format("lineage.GV")
    'dot'
    """
    fmt = format_from_path(path)
    if fmt is None:
        known = ", ".join(_SUFFIXES)
        raise InputError(f"cannot tell the format of {path} from its extension: use one of {known}, or pass --format")
    return fmt
