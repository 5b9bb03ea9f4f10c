"""``lineage up`` / ``down`` / ``path`` / ``io`` / ``walkplans``: query the store and print or write the answer."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from lineage_cli.errors import LineageError, QueryError
from lineage_cli.walk.questions import Shaping, path_answer, walk_answer

if TYPE_CHECKING:  # pragma: no cover
    from lineage_cli.emit.picture import Picture
    from lineage_cli.store.reader import Store
    from lineage_cli.walk.result import LineageResult


def run_walk(
    direction: str,
    name: str,
    store_path: str,
    depth: int | None,
    fmt: str | None,
    output: str | None,
    show_transformations: bool,
    predicates: bool,
    shaping: Shaping | None = None,
) -> int:
    shaping = shaping or Shaping()

    def ask(store: Store) -> LineageResult:
        return walk_answer(store, direction, name, depth, show_transformations, predicates, shaping)

    return _answer(store_path, ask, fmt, output, shaping)


def run_walk_options(direction: str, options: Mapping[str, Any]) -> int:
    """``run_walk`` with the parameters of ``lineage up`` / ``down`` as the command line reads them (click's, or
    ``quick.py``'s for a plain query): one place maps them onto the walk."""
    shaping = Shaping(
        options["walkplan"], options["plan_args"], options["level"], options["datamarts"], options["group_by"],
        options["rankdir"], options["exact"],
    )  # fmt: skip
    return run_walk(
        direction,
        options["name"],
        options["store"],
        depth=options["depth"],
        fmt=options["fmt"],
        output=options["output"],
        show_transformations=options["show_transformations"],
        predicates=options["predicates"],
        shaping=shaping,
    )


def run_path(
    source: str,
    target: str,
    store_path: str,
    fmt: str | None,
    output: str | None,
    all_paths: bool,
    max_paths: int,
    depth: int | None,
    shaping: Shaping | None = None,
) -> int:
    shaping = shaping or Shaping()

    def ask(store: Store) -> LineageResult:
        found = path_answer(store, source, target, all_paths, max_paths, depth, shaping)
        if not found.complete:
            print(f"showing the first {found.paths} paths; raise --max-paths for more", file=sys.stderr)
        return found.result

    return _answer(store_path, ask, fmt, output, shaping)


def run_io(name: str, store_path: str, fmt: str | None, output: str | None) -> int:
    def ask(store: Store) -> LineageResult:
        from lineage_cli.walk.workflow_io import workflow_io

        return workflow_io(store, name)

    return _answer(store_path, ask, fmt, output)


def run_walkplans(name: str | None) -> int:
    """List the built-in plans with their descriptions, or print one plan's file."""
    from lineage_cli.walk.walkplan import BUILTIN_DIR, builtin_names, builtin_plan

    names = builtin_names()
    if name is None:
        width = max(map(len, names))
        for plan in map(builtin_plan, names):
            print(f"{plan.name:<{width}}  {plan.description}")
        return 0
    if name not in names:
        print(f"error: no built-in walkplan {name!r}; built-in plans are {', '.join(names)}", file=sys.stderr)
        return 1
    with open(os.path.join(BUILTIN_DIR, f"{name}.json"), encoding="utf-8") as plan_file:
        sys.stdout.write(plan_file.read())
    return 0


def _picture(shaping: Shaping, store: Store, result: LineageResult, fmt: str) -> Picture | None:
    """How GraphML, DOT and pictures of ``result`` are drawn; None for the other formats."""
    from lineage_cli.emit.formats import PICTURED, RENDERED

    if fmt not in PICTURED + RENDERED:
        if shaping.group_by is None and shaping.rankdir is None:
            return None
        raise QueryError(f"--group-by and --rankdir draw graphml, dot, mermaid and pictures, not {fmt}")
    from lineage_cli.emit.picture import Picture
    from lineage_cli.emit.volumes import volumes
    from lineage_cli.walk.levels import groups, load_datamarts

    marts = load_datamarts(shaping.datamarts) if shaping.datamarts else None
    grouped = groups(store, result, shaping.group_by, marts) if shaping.group_by else {}
    return Picture(rankdir=shaping.rankdir or "LR", groups=grouped, volumes=volumes(store, result))


def _answer(
    store_path: str,
    ask: Callable[[Store], LineageResult],
    fmt: str | None,
    output: str | None,
    shaping: Shaping | None = None,
) -> int:
    """Open the store, compute the answer, and print or write it; query errors exit 1, input and store errors 2.

    An output file whose suffix names no format is refused before the store is opened, rather than written
    as JSON; a picture that cannot be rendered is refused before the file is written.
    """
    from lineage_cli.emit.formats import RENDERED, emit, output_format, render
    from lineage_cli.store.reader import open_store

    try:
        chosen = fmt or (output_format(output) if output else _terminal_default())
        store = open_store(store_path)
        result = ask(store)
        picture = _picture(shaping or Shaping(), store, result, chosen)
        rendered = render(result, chosen, picture) if output and chosen in RENDERED else None
    except LineageError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    if not output:
        sys.stdout.write(emit(result, chosen, picture))
        return 0
    if rendered is None:
        text = emit(result, chosen, picture)
        with open(output, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    else:
        with open(output, "wb") as handle:
            handle.write(rendered)
    print(f"{result.node_count} nodes, {result.edge_count} edges -> {output}", file=sys.stderr)
    return 0


def _terminal_default() -> str:
    return "tree" if sys.stdout.isatty() else "json"
