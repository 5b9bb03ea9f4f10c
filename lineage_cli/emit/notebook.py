"""How a ``LineageResult`` shows itself in a notebook (Jupyter, VS Code, Colab): the interactive viewer of
``lineage view`` as HTML, and the Graphviz picture as SVG where ``dot`` is on PATH.

``walk/result.py``'s ``_repr_html_`` and ``_repr_svg_`` call these by name.  The viewer is a page of its own
(scripts, styles, a global ``window.lineageView``), so it is shown in an ``<iframe srcdoc>``: two results in
one notebook do not share a page, and the notebook's styles do not reach into it.
"""

from __future__ import annotations

import html
import shutil

from lineage_cli.walk.result import LineageResult

# A notebook asks for every representation each time it shows a result; dot takes seconds, then minutes, on
# thousands of nodes, so a larger answer gets no SVG and the notebook shows the viewer alone.
SVG_LIMIT = 500  # nodes
FRAME_HEIGHT = 600  # pixels


def result_title(result: LineageResult) -> str:
    """``lineage up mart.sales_daily``, ``lineage path a -> b``, ``lineage up 'mart.%' (4 matches)`` ...

    >>> result_title(LineageResult("path", ["a", "b"]))
    'lineage path a -> b'
    """
    if result.direction == "path" and len(result.roots) == 2:
        return f"lineage path {result.roots[0]} -> {result.roots[1]}"
    shown = ", ".join(result.roots[:3]) + (f" and {len(result.roots) - 3} more" if len(result.roots) > 3 else "")
    return f"lineage {result.direction} {shown}".rstrip()


def result_html(result: LineageResult) -> str:
    """The viewer of ``result``, framed for a notebook's output cell."""
    from lineage_cli.emit.view import view_html  # the viewer's page and scripts: only when a notebook asks

    page = view_html(result.to_dict(), title=result_title(result))
    return (
        f'<iframe srcdoc="{html.escape(page, quote=True)}" title="{html.escape(result_title(result), quote=True)}" '
        f'style="width: 100%; height: {FRAME_HEIGHT}px; border: 1px solid #ddd"></iframe>'
    )


def result_svg(result: LineageResult) -> str | None:
    """The DOT picture of ``result`` as SVG text, or None (the notebook then shows the HTML alone) when
    Graphviz is absent, fails, or the answer is too large to draw on every display."""
    if result.node_count > SVG_LIMIT or shutil.which("dot") is None:
        return None
    from lineage_cli.emit.formats import RenderError, render

    try:
        return render(result, "svg").decode("utf-8")
    except RenderError:
        return None
