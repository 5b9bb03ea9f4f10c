"""The interactive viewer: one self-contained HTML page (``page.html``, ``view.css``, ``view.js`` beside this module,
shipped in the wheel) with the answer embedded as JSON.

The page needs no network: its script and style are inlined, its drawing is inline SVG.  The embedded document is
the dictionary ``lineage up/down --format json`` prints (``LineageResult.to_dict``), with a few optional members the
viewer reads: per node ``groups`` (the schema, workflow or datamart it folds into), per edge ``rows`` and
``frequency`` (a flow manifest's facts about its statement, for line width and dashes), and at the top the
``level`` the view opens at.  Without a document, the page asks a lineage server (``api``) for neighbourhoods.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from lineage_cli.emit.picture import Volume
    from lineage_cli.walk.result import LineageResult

ASSETS = ("page.html", "view.css", "view.js")
_SLOT = re.compile(r"\{\{([A-Z]+)\}\}")


def view_document(
    result: LineageResult,
    containers: dict[str, dict[str, str]] | None = None,
    volumes: dict[tuple[str, str], Volume] | None = None,
    level: str | None = None,
) -> dict[str, object]:
    """The JSON document the page embeds: ``result.to_dict()`` with each node's ``groups``, each edge's ``rows`` and
    ``frequency`` where known, and the ``level`` to open at (None: the viewer picks from the queried nodes' kind)."""
    document = result.to_dict()
    for node in document["nodes"]:  # type: ignore[union-attr]
        if found := (containers or {}).get(node["name"]):
            node["groups"] = found
    for edge in document["edges"]:  # type: ignore[union-attr]
        volume = (volumes or {}).get((edge["source"], edge["target"]))
        if volume is not None and volume.rows is not None:
            edge["rows"] = volume.rows
        if volume is not None and volume.frequency is not None:
            edge["frequency"] = volume.frequency
    if level is not None:
        document["level"] = level
    return document


def view_html(document: dict | None, *, api: str | None = None, title: str = "lineage") -> str:
    """The viewer page with ``document`` embedded, or, with ``document`` None, one that fetches from ``api`` (a URL
    prefix such as ``/api`` answering ``/up``, ``/down`` and ``/search`` as ``lineage serve`` does)."""
    page, style, script = (_asset(name) for name in ASSETS)
    slots = {
        "TITLE": html.escape(title),
        "STYLE": style,
        "CONFIG": _script_json({"api": api, "title": title}),
        "DATA": _script_json(document),
        "SCRIPT": script,
    }
    # one pass, so that a slot's text (a name in the data) is never read as another slot
    return _SLOT.sub(lambda match: slots[match[1]], page)


def _asset(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def _script_json(value: object) -> str:
    """JSON safe inside a ``<script type="application/json">``: no ``<`` (so no ``</script>``) and no ``&``."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
