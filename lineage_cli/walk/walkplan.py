"""Walkplans: declarative rules for what a lineage query follows, collects and shows.

A plan holds rules per edge type: the direction to follow it in (``forward`` is the query's
own direction — downstream for ``down``, upstream for ``up`` — ``backward`` the other way,
or ``both``), whether to go on from the node it reaches (``follow``: true, false, or the
node kinds to go on from), whether to collect that node (true, false or node kinds) and the
edge itself, conditions on the node and the edge (kind, LIKE pattern on the name, schema,
subtype, depth), and ``when_arg``, which makes the rule active only when the query passes
``--arg NAME``.  Plans are YAML (JSON being YAML, a ``.json`` plan is read too), or XML in
the ``<lineageServerPlan>`` form; all load into ``WalkPlan``.  Conditions are data, never
code.  Errors name the file and the line.

The built-in plans are JSON files, read with the json module: the YAML and XML parsers cost
a query some 20 ms of start-up, so they are imported only for a plan file that needs them.
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from lineage_cli.errors import QueryError
from lineage_cli.model import EdgeType, NodeKind, Subtype

if TYPE_CHECKING:
    import yaml

BUILTIN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plans")
PLAN_SUFFIXES = (".yaml", ".yml", ".json", ".xml")
DIRECTIONS = ("forward", "backward", "both")
EDGE_NAMES = {t.label: t for t in EdgeType}
NODE_KINDS = {k.label for k in NodeKind}
SUBTYPES = set(Subtype.__members__) - {Subtype.APPROXIMATE.name}  # an answer's mark, on no stored edge: --exact
_RULE_KEYS = {"edge", "direction", "follow", "collect_node", "collect_edge", "when_arg", "conditions"}
_CONDITION_KEYS = {"node_kind", "name_like", "schema", "subtype", "max_depth", "target_kind"}


class PlanError(QueryError):
    """A walkplan file is malformed: the message names the file, the line and what was expected."""


# NamedTuples rather than dataclasses: immutable values all the same, at a tenth of the class-creation
# cost, which every `lineage up` pays on start-up (about 2 ms for the three).
class Conditions(NamedTuple):
    node_kinds: frozenset[str] = frozenset()  # empty: any
    name_like: str | None = None
    schemas: frozenset[str] = frozenset()
    subtypes: frozenset[str] = frozenset()
    max_depth: int | None = None
    target_kinds: frozenset[str] = frozenset()  # the kinds the stored edge may end at (its target); empty: any


class EdgeRule(NamedTuple):
    """How a walk treats one edge type.

    ``conditions`` decide whether the edge is traversed at all (checked on the edge and on
    the node it reaches); ``follow`` whether the walk goes on from that node — ``True``,
    ``False`` or a set of node kinds; ``collect_node`` whether the node shows in the answer —
    likewise (a node not shown is folded: the edges through it are contracted);
    ``collect_edge`` whether the edge shows.
    """

    edge: EdgeType
    direction: str = "forward"
    follow: bool | frozenset[str] = True
    collect_node: bool | frozenset[str] = True
    collect_edge: bool = True
    when_arg: str | None = None
    conditions: Conditions = Conditions()

    def collects(self, kind: str) -> bool:
        return _admits(self.collect_node, kind)

    def follows(self, kind: str) -> bool:
        return _admits(self.follow, kind)


def _admits(setting: bool | frozenset[str], kind: str) -> bool:
    return setting if isinstance(setting, bool) else kind in setting


class WalkPlan(NamedTuple):
    name: str
    description: str
    rules: tuple[EdgeRule, ...]
    origin: str = "<builtin>"

    def active(self, args: frozenset[str] = frozenset()) -> tuple[EdgeRule, ...]:
        """The rules in force for a query given its ``--arg`` names."""
        return tuple(r for r in self.rules if r.when_arg is None or r.when_arg in args)


def builtin_names() -> list[str]:
    return sorted(name.removesuffix(".json") for name in os.listdir(BUILTIN_DIR) if name.endswith(".json"))


def builtin_plans() -> dict[str, WalkPlan]:
    return {name: builtin_plan(name) for name in builtin_names()}


@cache  # a session of queries reads each built-in plan once; plans are immutable
def builtin_plan(name: str) -> WalkPlan:
    return load_plan(os.path.join(BUILTIN_DIR, f"{name}.json"))


def _stem(path: str) -> str:
    """A plan file's name without its suffix: the plan's name when the file gives none."""
    return os.path.splitext(os.path.basename(path))[0]


def resolve_plan(name_or_file: str) -> WalkPlan:
    """A built-in plan by name, or a plan file (YAML, JSON or XML) by path."""
    if os.path.splitext(name_or_file)[1].lower() in PLAN_SUFFIXES:
        return load_plan(name_or_file)
    names = builtin_names()
    if name_or_file in names:
        return builtin_plan(name_or_file)
    raise PlanError(f"no walkplan {name_or_file!r}: built-in plans are {', '.join(names)}, or give a .yaml/.xml file")


def load_plan(path: str | os.PathLike[str]) -> WalkPlan:
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise PlanError(f"{path}: cannot read: {error.strerror}") from None
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".xml":
        return _from_xml(text, str(path))
    if suffix == ".json":
        return _from_json(text, str(path))
    return _from_yaml(text, str(path))


# -- JSON --------------------------------------------------------------------------------------------


def _from_json(text: str, origin: str) -> WalkPlan:
    """A JSON plan through the json module; a mistake in it is located by reading it again as YAML."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise PlanError(f"{origin}:{error.lineno}: not valid JSON: {error.msg}") from None
    try:
        rules = tuple(_json_rule(raw, origin) for raw in data["edges"])
        return WalkPlan(str(data.get("name", _stem(origin))), str(data.get("description", "")), rules, origin)
    except (PlanError, TypeError, KeyError, AttributeError):
        return _from_yaml(text, origin)  # JSON is YAML, whose nodes carry the line numbers for the error


def _json_rule(raw: dict[str, Any], origin: str) -> EdgeRule:
    unknown = set(raw) - _RULE_KEYS
    if unknown:
        raise PlanError(f"{origin}: unknown rule field {sorted(unknown)[0]}")
    return build_rule(raw, origin, lambda key: 0)


# -- YAML --------------------------------------------------------------------------------------------


def _from_yaml(text: str, origin: str) -> WalkPlan:
    import yaml

    from lineage_cli.yamlsafe import compose

    try:
        root = compose(text, origin)
    except ValueError as error:  # not YAML, or an alias bomb
        raise PlanError(str(error)) from None
    if not isinstance(root, yaml.MappingNode):
        raise PlanError(f"{origin}:1: expected a mapping with name, description and edges")
    top = _mapping(root, origin)
    edges = top.get("edges")
    if edges is None or not isinstance(edges[1], yaml.SequenceNode):
        raise PlanError(f"{origin}:{_line(edges[1] if edges else root)}: expected `edges:`, a list of rules")
    rules = tuple(_rule(_mapping(item, origin), origin, _line(item)) for item in edges[1].value)
    return WalkPlan(
        name=_scalar(top, "name", origin, default=_stem(origin)),
        description=_scalar(top, "description", origin, default=""),
        rules=rules,
        origin=origin,
    )


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _mapping(node: yaml.Node, origin: str) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise PlanError(f"{origin}:{_line(node)}: expected a mapping")
    return {key.value: (key, value) for key, value in node.value}


def _scalar(mapping: dict[str, tuple[yaml.Node, yaml.Node]], key: str, origin: str, default: Any = None) -> Any:
    import yaml

    if key not in mapping:
        return default
    node = mapping[key][1]
    if not isinstance(node, yaml.ScalarNode):
        raise PlanError(f"{origin}:{_line(node)}: expected a single value for `{key}`")
    return _value(node, origin)


def _rule(mapping: dict[str, tuple[yaml.Node, yaml.Node]], origin: str, line: int) -> EdgeRule:
    import yaml

    for key, (key_node, _) in mapping.items():
        if key not in _RULE_KEYS:
            raise PlanError(f"{origin}:{_line(key_node)}: unknown rule field `{key}`; expected {_listing(_RULE_KEYS)}")
    raw = {key: _value(node, origin) for key, (_, node) in mapping.items()}
    lines = {key: _line(node) for key, (_, node) in mapping.items()}
    conditions = mapping.get("conditions")
    if conditions is not None and isinstance(conditions[1], yaml.MappingNode):
        lines.update({f"conditions.{key.value}": _line(key) for key, _ in conditions[1].value})
    return build_rule(raw, origin, lambda key: lines.get(key, lines.get(key.split(".")[0], line)))


def _value(node: yaml.Node, origin: str) -> Any:
    """Plain data only: a tag such as ``!!python/object`` is an error at its line, never code."""
    from lineage_cli.yamlsafe import construct

    try:
        return construct(node, origin)
    except ValueError as error:
        raise PlanError(str(error)) from None


# -- XML -------------------------------------------------------------------------------------------


def _from_xml(text: str, origin: str) -> WalkPlan:
    name, attributes, line, children = _xml_tree(text, origin)
    if name != "lineageServerPlan":
        raise PlanError(f"{origin}:{line}: expected a <lineageServerPlan> root element, got <{name}>")
    rules = []
    for child in children:
        if child[0] != "useEdge":
            raise PlanError(f"{origin}:{child[2]}: unexpected <{child[0]}>; expected <useEdge>")
        rules.append(_xml_rule(child, origin))
    return WalkPlan(attributes.get("name", _stem(origin)), attributes.get("description", ""), tuple(rules), origin)


def _xml_tree(text: str, origin: str) -> tuple[str, dict[str, str], int, list]:
    """The root element as (tag, attributes, line, children) tuples: ElementTree keeps no line numbers."""
    import xml.sax

    class Handler(xml.sax.ContentHandler):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[tuple[str, dict[str, str], int, list]] = [("#document", {}, 1, [])]
            self.locator: Any = None

        def setDocumentLocator(self, locator: Any) -> None:  # noqa: N802 - SAX API
            self.locator = locator

        def startElement(self, name: str, attrs: Any) -> None:  # noqa: N802 - SAX API
            line = self.locator.getLineNumber() if self.locator else 1
            element = (name, dict(attrs), line, [])
            self.stack[-1][3].append(element)
            self.stack.append(element)

        def endElement(self, name: str) -> None:  # noqa: N802 - SAX API
            self.stack.pop()

    handler = Handler()
    try:
        xml.sax.parseString(text.encode("utf-8"), handler)
    except xml.sax.SAXParseException as error:
        raise PlanError(f"{origin}:{error.getLineNumber()}: not well-formed XML: {error.getMessage()}") from None
    return handler.stack[0][3][0]


_XML_RULE_ATTRIBUTES = {
    "name": "edge",
    "direction": "direction",
    "follow": "follow",
    "collectNode": "collect_node",
    "collectEdge": "collect_edge",
    "conditionalOnArg": "when_arg",
}
_XML_CONDITION_ATTRIBUTES = {
    "nodeKind": "node_kind",
    "nameLike": "name_like",
    "schema": "schema",
    "subtype": "subtype",
    "maxDepth": "max_depth",
    "targetKind": "target_kind",
}


def _xml_rule(element: tuple, origin: str) -> EdgeRule:
    _, attributes, line, children = element
    raw: dict[str, Any] = {}
    for key, value in attributes.items():
        if key not in _XML_RULE_ATTRIBUTES:
            raise PlanError(f"{origin}:{line}: unknown attribute {key}=; expected {_listing(_XML_RULE_ATTRIBUTES)}")
        raw[_XML_RULE_ATTRIBUTES[key]] = _xml_value(value)
    conditions: dict[str, Any] = {}
    for child in children:
        child_name, child_attributes, child_line, _ = child
        if child_name != "condition":
            raise PlanError(f"{origin}:{child_line}: unexpected <{child_name}>; expected <condition>")
        for key, value in child_attributes.items():
            if key not in _XML_CONDITION_ATTRIBUTES:
                expected = _listing(_XML_CONDITION_ATTRIBUTES)
                raise PlanError(f"{origin}:{child_line}: unknown condition {key}=; expected {expected}")
            field_name = _XML_CONDITION_ATTRIBUTES[key]
            conditions[field_name] = (
                value.split(",") if field_name in ("node_kind", "schema", "subtype", "target_kind") else value
            )
    if conditions:
        raw["conditions"] = conditions
    return build_rule(raw, origin, lambda key: line)


def _xml_value(value: str) -> Any:
    return {"true": True, "false": False}.get(value.strip().lower(), value)


# -- validation, shared by every form ---------------------------------------------------------------


def build_rule(raw: dict[str, Any], origin: str, line_of: Any) -> EdgeRule:
    def fail(key: str, expected: str) -> PlanError:
        return PlanError(f"{origin}:{line_of(key)}: `{key}`: expected {expected}, got {raw.get(key)!r}")

    edge = EDGE_NAMES.get(str(raw.get("edge", "")).strip().lower())
    if edge is None:
        raise fail("edge", f"one of {_listing(EDGE_NAMES)}")
    direction = raw.get("direction", "forward")
    if direction not in DIRECTIONS:
        raise fail("direction", "forward, backward or both")
    flags: dict[str, Any] = {"follow": _bool_or_kinds(raw, "follow", fail)}
    flags["collect_node"] = _bool_or_kinds(raw, "collect_node", fail)
    flags["collect_edge"] = raw.get("collect_edge", True)
    if not isinstance(flags["collect_edge"], bool):
        raise fail("collect_edge", "true or false")
    when_arg = raw.get("when_arg")
    if when_arg is not None and not isinstance(when_arg, str):
        raise fail("when_arg", "an argument name")
    conditions = _conditions(raw.get("conditions") or {}, origin, line_of)
    return EdgeRule(edge, direction, when_arg=when_arg, conditions=conditions, **flags)


def _bool_or_kinds(raw: dict[str, Any], key: str, fail: Any) -> bool | frozenset[str]:
    """``true``, ``false`` or node kinds, as a list or (XML) a comma-separated string."""
    value = raw.get(key, True)
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        value = [part for part in value.split(",") if part]
    kinds = frozenset(str(k).strip().lower() for k in _as_list(value))
    if not kinds or kinds - NODE_KINDS:
        raise fail(key, f"true, false or a list of node kinds ({_listing(NODE_KINDS)})")
    return kinds


def _conditions(raw: Any, origin: str, line_of: Any) -> Conditions:
    if not isinstance(raw, dict):
        raise PlanError(
            f"{origin}:{line_of('conditions')}: `conditions`: expected a mapping of {_listing(_CONDITION_KEYS)}"
        )
    for key in raw:
        if key not in _CONDITION_KEYS:
            where = f"{origin}:{line_of(f'conditions.{key}')}"
            raise PlanError(f"{where}: unknown condition `{key}`; expected {_listing(_CONDITION_KEYS)}")
    at = lambda key: f"{origin}:{line_of(f'conditions.{key}')}"  # noqa: E731
    kinds = _names(raw.get("node_kind"), NODE_KINDS, "node_kind", at("node_kind"), str.lower)
    subtypes = _names(raw.get("subtype"), SUBTYPES, "subtype", at("subtype"), str.upper)
    schemas = frozenset(str(s).lower() for s in _as_list(raw.get("schema")))
    depth = raw.get("max_depth")
    if depth is not None:
        try:
            depth = int(depth)
        except (TypeError, ValueError):
            raise PlanError(f"{at('max_depth')}: `max_depth`: expected a whole number, got {depth!r}") from None
    pattern = raw.get("name_like")
    ends = _names(raw.get("target_kind"), NODE_KINDS, "target_kind", at("target_kind"), str.lower)
    return Conditions(kinds, str(pattern).lower() if pattern is not None else None, schemas, subtypes, depth, ends)


def _names(value: Any, allowed: set[str], key: str, where: str, fold: Any) -> frozenset[str]:
    names = frozenset(fold(str(v).strip()) for v in _as_list(value))
    wrong = names - allowed
    if wrong:
        raise PlanError(f"{where}: `{key}`: {sorted(wrong)[0]!r} is not one of {_listing(allowed)}")
    return names


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _listing(names: Any) -> str:
    return ", ".join(sorted(names))
