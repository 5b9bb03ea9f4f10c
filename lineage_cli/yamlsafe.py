"""Reading YAML that may be hostile: plain data only, and no alias bomb.

Every YAML file the tool reads (vars files, walkplans, schemas, manifests, dbt project files, datamart
mappings, dialect profiles) goes through here.  Only plain data is built (``yaml.SafeLoader``, in C when
libyaml is installed): a tag such as ``!!python/object`` is an error, never code.  An alias repeats the
node of its anchor, so a few lines of nested aliases ("billion laughs") stand for a billion nodes: harmless
as a graph of shared nodes, but every consumer that walks, copies or prints the data expands it.  So a
document whose aliases would expand to more than ``MAX_ALIAS_NODES`` nodes, or whose alias refers to the
node it is inside of, is refused before anything is built from it.

Errors are ``YamlError``, an ``InputError`` (and a ``ValueError``) whose message is one line,
``file:line:col: what is wrong``.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from lineage_cli.errors import InputError

# The nodes aliases may add to a document, counted with repetition.  Real files reuse a block of settings
# (`<<: *defaults`) a few hundred times; a billion-laughs file needs far more than this to do harm.
MAX_ALIAS_NODES = 100_000

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_UNKNOWN_TAG = re.compile(r"could not determine a constructor for the tag '(?P<tag>[^']*)'")


class YamlError(InputError, ValueError):  # a ValueError too: readers of YAML catch that
    """A YAML file that cannot be read as plain data; the message is ``file:line:col: problem``."""

    def __init__(self, origin: str, mark: yaml.Mark | None, problem: str) -> None:
        self.line = mark.line + 1 if mark is not None else 1
        self.column = mark.column + 1 if mark is not None else None
        where = f"{origin}:{self.line}" + (f":{mark.column + 1}" if mark is not None else "")
        super().__init__(f"{where}: {problem}")
        self.problem = problem


def load(text: str, origin: str) -> Any:  # noqa: ANN401 - whatever the document holds
    """The plain data of the YAML ``text`` (None for an empty document); ``origin`` names it in errors."""
    node = compose(text, origin)
    return None if node is None else construct(node, origin)


def compose(text: str, origin: str) -> yaml.Node | None:
    """The node graph of the YAML ``text``, which keeps every value's line, checked for alias bombs."""
    try:
        loader = _Loader(text)  # PyYAML's own reader checks every character here already
    except yaml.YAMLError as error:
        raise _error(error, origin, text) from None
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as error:
        raise _error(error, origin, text) from None
    except RecursionError:  # the pure-Python composer recurses per level; libyaml stops at 1000 levels itself
        raise YamlError(origin, None, "not valid YAML: nested too deeply") from None
    finally:
        loader.dispose()
    if node is not None:
        _check_aliases(node, origin)
    return node


class _Constructor(yaml.constructor.SafeConstructor):
    """PyYAML's safe constructor, whose conversions' own errors are YAML errors at their value: ``!!int x`` raises
    ValueError, ``!!bool maybe`` KeyError, ``!!int ""`` IndexError, ``!!timestamp x`` AttributeError."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:  # noqa: ANN401 - whatever it holds
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, IndexError, KeyError, AttributeError):
            tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
            raise yaml.constructor.ConstructorError(None, None, f"not a {tag} value", node.start_mark) from None


def construct(node: yaml.Node, origin: str) -> Any:  # noqa: ANN401 - whatever the node holds
    """The plain data of a node from ``compose``: strings, numbers, booleans, null, lists and mappings."""
    try:
        return _Constructor().construct_document(node)
    except yaml.YAMLError as error:
        raise _error(error, origin) from None


def _error(error: yaml.YAMLError, origin: str, text: str = "") -> YamlError:
    problem = str(getattr(error, "problem", None) or error).splitlines()[0]
    mark = getattr(error, "problem_mark", None)
    if isinstance(error, yaml.reader.ReaderError) and (at := text.find(chr(error.character))) >= 0:
        # a character YAML does not allow has no mark, only an offset (of bytes, in libyaml): the first of its kind
        mark = yaml.Mark(origin, at, text.count("\n", 0, at), at - text.rfind("\n", 0, at) - 1, None, None)
    if mark is None or (text and not text[mark.index :].strip()):
        # reading ran off the end (`[` never closed): where the broken construct began says more
        mark = getattr(error, "context_mark", None) or mark
    if (tag := _UNKNOWN_TAG.match(problem)) is not None:
        name = tag.group("tag").replace("tag:yaml.org,2002:", "!!")
        return YamlError(origin, mark, f"the YAML tag {name} is not plain data: refused")
    return YamlError(origin, mark, f"not valid YAML: {problem}")


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_aliases(root: yaml.Node, origin: str) -> None:
    """Refuse a graph whose aliases expand past ``MAX_ALIAS_NODES`` nodes, or that contains itself.

    A node met again (an alias: the composer shares its anchor's node) adds its whole expanded size.  Each
    node is sized once, depth-first without recursion, so the check costs one pass over the nodes as
    written, however far they would expand.
    """
    size: dict[int, int] = {}  # id(node) -> its expanded node count, once all its children are sized
    inside = {id(root)}  # the nodes on the path from the root to the one being read
    stack = [(root, iter(_children(root)))]
    added = 0
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            inside.discard(id(node))
            size[id(node)] = 1 + sum(size[id(each)] for each in _children(node))
        elif id(child) in inside:
            raise YamlError(origin, node.start_mark, "a YAML alias refers to a node it is inside of")
        elif id(child) in size:
            added += size[id(child)]
            if added > MAX_ALIAS_NODES:
                problem = f"YAML aliases expand to more than {MAX_ALIAS_NODES:,} nodes: refused (an alias bomb?)"
                raise YamlError(origin, node.start_mark, problem)
        else:
            inside.add(id(child))
            stack.append((child, iter(_children(child))))
