"""Lineage queries: resolve what the user typed to start nodes, walk under a walkplan, shape the answer.

Without a plan, table lineage walks the ``tables`` plan — ``dataset -> transformation -> dataset``
(and direct ``flow`` edges from imported lineage), each transformation folded into ``flow`` edges
between the datasets it reads and writes — or ``transformations``, which shows them; column lineage
walks ``columns`` (projection edges, and the predicate edges onto a column: the conditions and window keys
that shape its value) or ``columns-with-predicates`` (``planned.py``).
"""

from __future__ import annotations

from lineage_cli.errors import QueryError
from lineage_cli.model import EdgeType, NodeKind
from lineage_cli.store.reader import Store
from lineage_cli.walk.answer import answer
from lineage_cli.walk.planned import as_plan, default_plan, plan_walk
from lineage_cli.walk.result import LineageResult
from lineage_cli.walk.walkplan import WalkPlan

QUERYABLE = frozenset((NodeKind.TABLE, NodeKind.VIEW, NodeKind.COLUMN))
TABLE_FLOW = EdgeType.READ.bit | EdgeType.WRITE.bit | EdgeType.FLOW.bit
TRANSFORMATION = int(NodeKind.TRANSFORMATION)


class NameNotFound(QueryError):
    """Nothing in the store matches a queried name; carries the closest known names."""

    def __init__(self, query: str, suggestions: list[str]) -> None:
        self.query, self.suggestions = query, suggestions
        hint = f"; closest: {', '.join(suggestions)}" if suggestions else ""
        super().__init__(f"no table, view or column named {query!r}{hint}")


class AmbiguousName(QueryError):
    def __init__(self, query: str, candidates: list[str]) -> None:
        self.query, self.candidates = query, candidates
        super().__init__(f"{query!r} is ambiguous: {', '.join(candidates[:10])}; qualify it or use a pattern")


def resolve(store: Store, query: str) -> list[int]:
    """Start node ids for ``query``: an exact name, a name without its schema, or a LIKE pattern."""
    wanted = query.strip().lower()
    if "%" in wanted:
        # `stg.%` means the stg tables, not also every stg column; columns when no dataset matches
        found = [n for n in store.like(wanted) if store.kind(n) in QUERYABLE]
        datasets = [n for n in found if store.kind(n) is not NodeKind.COLUMN]
        if not found:
            raise NameNotFound(query, _closest(store, wanted.replace("%", "")))
        return datasets or found
    default_schema = store.meta.get("default_schema")
    # names are folded to lower case, but a file location keeps its case: the name as typed comes first
    typed = query.strip()
    for candidate in dict.fromkeys((typed, wanted, f"{default_schema}.{wanted}" if default_schema else typed)):
        node = store.find(candidate)
        if node is not None and store.kind(node) in QUERYABLE:
            return [node]
    suffix = [n for n in store.like(f"%.{_escape_like(wanted)}") if store.kind(n) in QUERYABLE]
    if len(suffix) == 1:
        return suffix
    if suffix:
        raise AmbiguousName(query, sorted(store.name(n) for n in suffix))
    raise NameNotFound(query, _closest(store, wanted))


def lineage(
    store: Store,
    name_or_pattern: str,
    direction: str,
    depth: int | None = None,
    show_transformations: bool = False,
    predicates: bool = False,
    plan: WalkPlan | str | None = None,
    args: frozenset[str] = frozenset(),
    exact: bool = False,
) -> LineageResult:
    """Everything ``direction`` ("up" or "down") of the named nodes under ``plan`` (a plan, a built-in
    plan's name or a plan file; by default chosen by the nodes' kind and the two flags), merged; ``exact``:
    without the statements read approximately."""
    starts = resolve(store, name_or_pattern)
    chosen = default_plan(store, starts, show_transformations, predicates) if plan is None else as_plan(plan)
    walk = plan_walk(store, starts, direction, chosen, args, depth, exact)
    return answer(store, walk, sorted(starts), direction)


def _closest(store: Store, wanted: str) -> list[str]:
    queryable = {int(k) for k in QUERYABLE}
    names = [n for i, n in enumerate(store.names()) if store.kinds[i] in queryable]
    # a misspelt table gets tables, a misspelt column columns: names with as many parts come first
    parts = wanted.count(".")
    names = [n for n in names if n.count(".") == parts] or names
    import difflib  # only here: the query path does not pay its import

    close = difflib.get_close_matches(wanted, names, n=5, cutoff=0.5)
    tail = [n for n in names if n.endswith(wanted.rsplit(".", 1)[-1])][:5]
    return list(dict.fromkeys(close + tail))[:5]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
