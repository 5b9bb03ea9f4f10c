"""``lineage view``: the lineage up and down of NAMEs as one self-contained HTML page, written and opened."""

from __future__ import annotations

import os
import sys
import tempfile
import webbrowser
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lineage_cli.errors import LineageError


def run_view(options: Mapping[str, Any]) -> int:
    """Walk, build the page, and write it to ``-o``, to standard output (``--no-open``), or to a temporary file that
    the browser opens; query errors exit 1, input and store errors 2, a file that cannot be written 2."""
    try:
        page, counts = view_page(options)
    except LineageError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    output = options["output"]
    if output is None and not options["open_browser"]:
        sys.stdout.write(page)
        return 0
    try:
        target = Path(output) if output else _temporary_page()
        target.write_text(page, encoding="utf-8", newline="\n")
    except OSError as error:
        print(f"error: cannot write {output or 'the page'}: {error.strerror or error}", file=sys.stderr)
        return 2
    print(f"{counts[0]} nodes, {counts[1]} edges -> {target}", file=sys.stderr)
    if output is None and not webbrowser.open(target.resolve().as_uri()):
        print(f"no browser to open it with: open {target} yourself", file=sys.stderr)
    return 0


def view_page(options: Mapping[str, Any]) -> tuple[str, tuple[int, int]]:
    """The page of ``lineage view``'s options, and the node and edge counts of the answer it embeds."""
    from lineage_cli.emit.view import view_document, view_html
    from lineage_cli.emit.volumes import volumes
    from lineage_cli.store.reader import open_store
    from lineage_cli.walk.around import containers, merged, with_containment
    from lineage_cli.walk.levels import LevelError, load_datamarts
    from lineage_cli.walk.questions import STEP_LEVELS, Shaping, walk_answer

    store = open_store(options["store"])
    level = options["level"]
    marts = load_datamarts(options["datamarts"]) if options["datamarts"] else None
    if level == "datamart" and not marts:
        raise LevelError("--level datamart needs --datamarts FILE.yaml (table name pattern: datamart)")
    ways = ("up", "down") if options["direction"] == "both" else (options["direction"],)
    # the page folds to its level itself: the walk rolls nothing up, but shows the statements a level lifts
    shaping = Shaping(options["walkplan"], options["plan_args"], exact=options["exact"])
    shown = options["show_transformations"] or level in STEP_LEVELS
    walk = (options["depth"], shown, options["predicates"], shaping)
    answers = [walk_answer(store, way, name, *walk) for name in options["names"] for way in ways]
    result = with_containment(store, merged(options["direction"], answers))
    document = view_document(result, containers(store, result, marts), volumes(store, result), _opening(level))
    title = "lineage: " + ", ".join(options["names"])
    return view_html(document, title=title), (result.node_count, result.edge_count)


def _opening(level: str | None) -> str | None:
    """The viewer's level for ``--level``: it folds rather than rolls up (a module folds as its workflow does)."""
    return "workflow" if level == "module" else level


def _temporary_page() -> Path:
    handle, name = tempfile.mkstemp(prefix="lineage-view-", suffix=".html")
    os.close(handle)
    return Path(name)
