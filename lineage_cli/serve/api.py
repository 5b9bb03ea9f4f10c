"""The server's questions: ``/api/up``, ``/api/down``, ``/api/path``, ``/api/search`` and ``/api/node``.

Each takes its query parameters, named as the command's long options without their dashes (``depth``,
``walkplan``, ``arg``, ``exact``, ``level``, ``show-transformations``, ``predicates``; ``path`` adds ``from``,
``to``, ``all``, ``max-paths``), and gives a ``Reply``.  Up, down and path run the command line's own
questions (``walk/questions.py``) and its JSON emitter, so their text is exactly ``lineage up/down/path
--format json``'s.  What the server will not do is refused as a bad request: a walkplan that is not a built-in
one (the server reads no file a request names), an unknown parameter, a value the command line would refuse.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from lineage_cli.errors import InputError, LineageError, QueryError, StoreError

if TYPE_CHECKING:  # pragma: no cover
    from lineage_cli.store.reader import Store
    from lineage_cli.walk.questions import Shaping

JSON = "application/json; charset=utf-8"
SEARCH_LIMIT, SEARCH_LIMIT_MAX = 100, 10_000
FLAG_VALUES = {"": True, "1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


class BadRequest(InputError):
    """A parameter missing, unknown, repeated or of a value the question cannot take (HTTP 400)."""


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: str
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)


def error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    """A JSON error body: ``{"error": message}``, the one line the command line would print after ``error:``."""
    return Reply(status, json.dumps({"error": message}, ensure_ascii=False) + "\n", JSON, headers or {})


def json_reply(document: object) -> Reply:
    return Reply(200, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


class Parameters:
    """A request's query parameters, each read and checked by the question; ``check_all_read`` refuses the rest."""

    def __init__(self, query: str) -> None:
        try:
            self._values = parse_qs(query, keep_blank_values=True, strict_parsing=False, max_num_fields=200)
        except ValueError as error:  # more fields than max_num_fields
            raise BadRequest(str(error)) from None
        self._read: set[str] = set()

    def many(self, name: str) -> tuple[str, ...]:
        self._read.add(name)
        return tuple(self._values.get(name, ()))

    def text(self, name: str, required: bool = False) -> str | None:
        """The parameter's value; None when it is absent or blank (a 400 for a ``required`` one)."""
        value = self._single(name)
        if value is None or not value.strip():
            if required:
                raise BadRequest(f"parameter {name!r} is required")
            return None
        return value

    def flag(self, name: str) -> bool:
        """A switch: absent is false; given bare (``?exact``) or as true/false, 1/0, yes/no, as it says."""
        value = self._single(name)
        if value is None:
            return False
        if value.strip().lower() not in FLAG_VALUES:
            raise BadRequest(f"parameter {name!r} is true or false (1 or 0), not {value!r}")
        return FLAG_VALUES[value.strip().lower()]

    def _single(self, name: str) -> str | None:
        values = self.many(name)
        if len(values) > 1:
            raise BadRequest(f"parameter {name!r} given {len(values)} times; it takes one value")
        return values[0] if values else None

    def positive(self, name: str, default: int | None = None, most: int | None = None) -> int | None:
        value = self.text(name)
        if value is None:
            return default
        if not (value.isascii() and value.isdigit()) or int(value) < 1:
            raise BadRequest(f"parameter {name!r} is a whole number of at least 1, not {value!r}")
        if most is not None and int(value) > most:
            raise BadRequest(f"parameter {name!r} is at most {most}, not {value}")
        return int(value)

    def choice(self, name: str, choices: tuple[str, ...] | list[str], why: str = "") -> str | None:
        value = self.text(name)
        if value is not None and value not in choices:
            raise BadRequest(f"parameter {name!r} is one of {', '.join(choices)}{why}, not {value!r}")
        return value

    def check_all_read(self) -> None:
        leftover = sorted(set(self._values) - self._read)
        if leftover:
            known = ", ".join(sorted(self._read))
            raise BadRequest(f"unknown parameter {', '.join(map(repr, leftover))}; this question takes {known}")


Opener = Callable[[], "Store"]  # the request's store, opened once its parameters are checked


class Questions:
    """The API over one store: ``answer(route, query, store)``; ``datamarts`` is the server's ``--datamarts``."""

    def __init__(self, datamarts: str | None = None) -> None:
        self.datamarts = datamarts
        self.routes: dict[str, Callable[[Parameters, Opener], Reply]] = {
            "/api/up": lambda parameters, store: self._walk("up", parameters, store),
            "/api/down": lambda parameters, store: self._walk("down", parameters, store),
            "/api/path": self._path,
            "/api/search": _search,
            "/api/node": _node,
        }

    def answer(self, route: str, query: str, store: Opener) -> Reply:
        """The reply to ``route`` (one of ``routes``) with ``query``, the URL's query string.  The store is
        opened once the parameters are checked, so that a bad request is a 400 whatever the store's state.  A
        question the store cannot answer is an error reply with the command line's message: 404 for a name or
        a path that is not there, 400 for a question asked wrong, 503 when the store cannot be read."""
        try:
            return self.routes[route](Parameters(query), store)
        except LineageError as error:
            return error_reply(_status(error), str(error))

    def _shaping(self, parameters: Parameters) -> Shaping:
        from lineage_cli.walk.levels import LEVELS
        from lineage_cli.walk.questions import Shaping
        from lineage_cli.walk.walkplan import builtin_names

        plan = parameters.choice("walkplan", builtin_names(), " (the built-in plans: the server reads no plan file)")
        level = parameters.choice("level", LEVELS)
        return Shaping(plan, parameters.many("arg"), level, self.datamarts, exact=parameters.flag("exact"))

    def _walk(self, direction: str, parameters: Parameters, store: Opener) -> Reply:
        from lineage_cli.emit.formats import emit
        from lineage_cli.walk.questions import walk_answer

        name = parameters.text("name", required=True)
        depth = parameters.positive("depth")
        shown, predicates = parameters.flag("show-transformations"), parameters.flag("predicates")
        shaping = self._shaping(parameters)
        if shaping.plan and (shown or predicates):
            raise BadRequest("walkplan replaces show-transformations and predicates")  # as the command line says
        parameters.check_all_read()
        result = walk_answer(store(), direction, name, depth, shown, predicates, shaping)  # type: ignore[arg-type]
        return Reply(200, emit(result, "json"))

    def _path(self, parameters: Parameters, store: Opener) -> Reply:
        from lineage_cli.emit.formats import emit
        from lineage_cli.walk.paths import DEFAULT_MAX_PATHS
        from lineage_cli.walk.questions import path_answer

        source, target = parameters.text("from", required=True), parameters.text("to", required=True)
        all_paths, depth = parameters.flag("all"), parameters.positive("depth")
        max_paths = parameters.positive("max-paths", DEFAULT_MAX_PATHS)
        shaping = self._shaping(parameters)
        parameters.check_all_read()
        found = path_answer(store(), source, target, all_paths, max_paths, depth, shaping)  # type: ignore[arg-type]
        # what `lineage path` says on standard error, as headers: the body is its standard output
        counted = {"X-Lineage-Paths": str(found.paths), "X-Lineage-Complete": "true" if found.complete else "false"}
        return Reply(200, emit(found.result, "json"), headers=counted)


def _search(parameters: Parameters, store: Opener) -> Reply:
    """The nodes whose name matches the LIKE pattern ``q`` (as typed, or in lower case as names are folded),
    in name order, at most ``limit``: ``{"query", "matches": [{"name", "kind"}], "truncated"}``."""
    pattern = parameters.text("q", required=True)
    limit = parameters.positive("limit", SEARCH_LIMIT, most=SEARCH_LIMIT_MAX)
    parameters.check_all_read()
    opened = store()
    found = opened.like(pattern)
    if pattern.lower() != pattern:
        found = sorted({*found, *opened.like(pattern.lower())})
    shown = found[:limit]
    named = zip(shown, opened.names_of(shown), strict=True)
    matches = [{"name": name, "kind": opened.kind(node).label} for node, name in named]
    return json_reply({"query": pattern, "matches": matches, "truncated": len(found) > len(shown)})


def _node(parameters: Parameters, store: Opener) -> Reply:
    """One node: its name, kind, role, container, provenance and its edges counted by type each way; a statement's
    text and dialect (``sql``) too, when the store has them."""
    from lineage_cli.store.roles import node_roles

    name = parameters.text("name", required=True)
    parameters.check_all_read()
    opened = store()
    node = _one_node(opened, name)  # type: ignore[arg-type]
    container = opened.container(node)
    provenance = opened.provenance(node)
    described: dict[str, object] = {
        "name": opened.name(node),
        "kind": opened.kind(node).label,
        "role": node_roles(opened, [node])[0],
        "container": None if container is None else opened.name(container),
        "file": provenance[0] if provenance else None,
        "line": provenance[1] if provenance else None,
        "degrees": {"in": _degrees(opened, node, "bwd"), "out": _degrees(opened, node, "fwd")},
    }
    if (sql := opened.sql(node)) is not None:
        described["sql"] = {"query": sql[0], "dialect": sql[1]}
    return json_reply(described)


def _one_node(store: Store, name: str) -> int:
    """The node ``name`` names: exactly (any kind: a statement is named by its ``file:line``), else as
    ``lineage up`` reads a name (case, default schema, a name without its schema, a pattern matching one)."""
    from lineage_cli.walk.query import resolve

    node = store.find(name)
    if node is not None:
        return node
    nodes = resolve(store, name)
    if len(nodes) > 1:
        raise BadRequest(f"{name!r} names {len(nodes)} nodes; /api/node describes one (/api/search lists them)")
    return nodes[0]


def _degrees(store: Store, node: int, way: str) -> dict[str, int]:
    """``node``'s edges ``way`` (``fwd``: out, ``bwd``: in) counted by edge type, in the types' order."""
    from lineage_cli.model import EdgeType
    from lineage_cli.store.layout import TYPE_MASK

    offsets, attributes = store.array(f"{way}_offsets"), store.array(f"{way}_attr")
    counts: dict[int, int] = {}
    for index in range(offsets[node], offsets[node + 1]):
        edge_type = attributes[index] & TYPE_MASK
        counts[edge_type] = counts.get(edge_type, 0) + 1
    return {EdgeType(edge_type).label: counts[edge_type] for edge_type in sorted(counts)}


def _status(error: LineageError) -> int:
    """The HTTP status of an error: what is not there 404, a question asked wrong 400, an unusable store 503."""
    from lineage_cli.walk.paths import NoPath
    from lineage_cli.walk.query import NameNotFound

    if isinstance(error, NameNotFound | NoPath):
        return 404
    if isinstance(error, StoreError):
        return 503
    if isinstance(error, InputError | QueryError):
        return 400
    return 500
