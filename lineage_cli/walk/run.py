"""``lineage up`` / ``lineage down``: query the store and print or write the answer."""

from __future__ import annotations

import sys

from lineage_cli.store.layout import StoreError


def run_walk(
    direction: str,
    name: str,
    store_path: str,
    depth: int | None,
    fmt: str | None,
    output: str | None,
    show_transformations: bool,
    predicates: bool,
) -> int:
    from lineage_cli.emit.formats import emit, format_from_path
    from lineage_cli.store.reader import open_store
    from lineage_cli.walk.query import AmbiguousName, NameNotFound, lineage

    chosen = fmt or (format_from_path(output) if output else None) or _terminal_default()
    try:
        store = open_store(store_path)
        result = lineage(store, name, direction, depth, show_transformations, predicates)
    except StoreError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except NameNotFound as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except AmbiguousName as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    text = emit(result, chosen)
    if output:
        with open(output, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        print(f"{result.node_count} nodes, {result.edge_count} edges -> {output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _terminal_default() -> str:
    return "tree" if sys.stdout.isatty() else "json"
