"""The budget of one Jinja render: a template under harvest is untrusted code, so it may not run long or
build much.

The sandbox (``jinja2.sandbox``) keeps a template from Python's internals, not from the machine:
``{{ 7 ** (7 ** 12) }}`` computes for hours, ``{{ "x" * 3000000000 }}`` allocates 3 GB, and two nested
loops over ``range(100000)`` run ten billion times, each loop within the sandbox's own cap.  So every
render of a file spends one ``Budget``, and a template that overspends it stops with ``BudgetExceeded``:

* ``text``: the characters the render produces, counting what macros, ``{% set %}`` and filter blocks
  build as they build it (so a buffer cannot grow behind the output's back); no single value (a string
  built by ``*``, ``+``, ``~`` or ``%``, the text of a printed list) may be longer either;
* ``iterations``: the ``{% for %}`` iterations of the whole render, nested loops multiplying;
* ``items``: the length of a list or tuple built by ``*`` or ``+``;
* ``int_bits``: the size of an integer built by ``*`` or ``**``;
* ``seconds``: the wall time of the render, checked at every loop iteration, operator, call, filter and
  output, so it holds in worker processes and needs no thread to interrupt it.

Each check is made before the operation, from the sizes of its operands, so the memory is never
allocated.  A filter or string method is refused when its result could outgrow the text limit: the
value's text times (1 + its longest text argument), plus the text of its list arguments times (1 + the
value's length), plus the widths it asks for (``ljust(n)``, ``center(n)``, ``%10s``, ``{:>10}``).
Loops, output and ``~`` are metered by rewriting the template's tree (``meter``); operators, calls and
filters by ``BudgetedSandbox``.  Past a limit, ``jinja.py`` reads the file as if Jinja could not render it.
"""

from __future__ import annotations

import math
import re
import string
import time
from collections.abc import Callable, ItemsView, Iterable, Iterator, KeysView, ValuesView
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import wraps
from types import BuiltinMethodType
from typing import Any

from jinja2 import nodes, pass_context
from jinja2.defaults import DEFAULT_FILTERS
from jinja2.environment import Environment
from jinja2.nodes import EvalContext
from jinja2.runtime import Context
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import Namespace
from jinja2.visitor import NodeTransformer


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits of one render; ``LIMITS``, the defaults, are the README's."""

    text: int = 16 * 1024 * 1024  # characters: 16 Mi, far beyond any SQL file, a fraction of a machine
    iterations: int = 1_000_000
    items: int = 1_000_000
    int_bits: int = 4096  # a 1,233-digit number; SQL integers stop at 128 bits
    seconds: float = 5.0


LIMITS = Limits()


class BudgetExceeded(Exception):  # noqa: N818 - it is what the warning says: the template exceeded its budget
    """A template went past one of its limits; the message says which (``exceeded ...``)."""


class Budget:
    """What is left of one render's limits."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.deadline = time.monotonic() + limits.seconds
        self.iterations = 0
        self.text = 0

    # tick, iterate and produce run for every loop iteration and piece of output: kept to a few operations

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise BudgetExceeded(f"exceeded its time limit of {self.limits.seconds:g} s")

    def iterate(self, iterable: Iterable[Any]) -> Iterator[Any]:
        limit, deadline, clock = self.limits.iterations, self.deadline, time.monotonic
        for item in iterable:
            self.iterations += 1
            if self.iterations > limit:
                raise BudgetExceeded(f"exceeded its limit of {limit:,} loop iterations")
            if clock() > deadline:
                self.tick()
            yield item

    def produce(self, characters: int) -> None:
        """Charge text the render produces."""
        self.text += characters
        if self.text > self.limits.text:
            raise BudgetExceeded(f"exceeded its limit of {self.limits.text:,} characters of output")
        if time.monotonic() > self.deadline:
            self.tick()

    def value(self, characters: int) -> None:
        """Refuse to build a value of more than the text limit."""
        if characters > self.limits.text:
            raise BudgetExceeded(f"exceeded its limit of {self.limits.text:,} characters for a value")

    def sequence(self, sequence: object, length: int) -> None:
        """Refuse to build a string or a list longer than its limit."""
        if isinstance(sequence, str):
            self.value(length)
        elif length > self.limits.items:
            raise BudgetExceeded(f"exceeded its limit of {self.limits.items:,} items for a list")

    def integer(self, bits: float) -> None:
        if bits > self.limits.int_bits:
            raise BudgetExceeded(f"exceeded its limit of {self.limits.int_bits:,}-bit numbers")

    def text_of(self, value: object) -> int:
        """About how long ``str(value)`` is, without making it; past the text limit, a number over it."""
        return text_size(value, self.limits.text, self.limits.items)


# The budget of the render under way: a context variable, since a filter is given neither the environment
# nor the context unless it asks (and Jinja's own do not).
_BUDGET: ContextVar[Budget] = ContextVar("jinja_budget")


@contextmanager
def metered(limits: Limits = LIMITS) -> Iterator[Budget]:
    """Spend one budget on what renders inside the block."""
    token = _BUDGET.set(Budget(limits))
    try:
        yield _BUDGET.get()
    finally:
        _BUDGET.reset(token)


def charge_value(characters: int) -> None:
    """Refuse to build a value of ``characters`` in the render under way (a macro's output made in Python)."""
    _BUDGET.get().value(characters)


_CONTAINERS = (list, tuple, dict, set, frozenset, Namespace, KeysView, ValuesView, ItemsView)


def text_size(value: object, limit: int, steps: int) -> int:
    """About how long ``str(value)`` would be, counted without making it.

    Lists that share their items (``[a] * 1000`` of ``[b] * 1000`` ...) print exponentially long, so the
    count walks them, and gives up with ``limit + 1`` past ``limit`` characters or ``steps`` items.
    """
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        # the common cases first: isinstance against the abstract views is slow, and this runs per item
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, int):
            total += item.bit_length() // 3 + 1
        elif isinstance(item, _CONTAINERS):
            if isinstance(item, Namespace):
                item = item._Namespace__attrs  # type: ignore[attr-defined] # its repr shows them all
            parts = [part for pair in item.items() for part in pair] if isinstance(item, dict) else item
            total += 2 + 2 * len(parts)  # brackets, separators
            stack.extend(parts)
        else:
            total += 8  # None, a float, a date, a placeholder: short
        steps -= 1
        if total > limit or steps < 0:
            return limit + 1
    return total


# -- operators and calls -----------------------------------------------------------------------------------

_PRINTF_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\d+|\*)?(?:\.(\d+|\*))?")
# The calls whose number arguments are widths: `"x".ljust(n)`, `s | center(n)`.
_PADDING = frozenset({"ljust", "rjust", "center", "zfill", "expandtabs", "indent"})


def _numbers(arguments: object) -> int:
    values = arguments if isinstance(arguments, (tuple, list)) else (arguments,)
    return sum(abs(value) for value in values if isinstance(value, int))


def _printf_widths(template: str, arguments: object) -> int:
    """The widths and precisions a ``%`` template asks for, added up; with a ``*`` width, its numbers too."""
    widths = [width for match in _PRINTF_SPEC.finditer(template) for width in match.groups() if width]
    fixed = sum(int(width) for width in widths if width != "*")
    return fixed + (_numbers(arguments) if "*" in widths else 0)


def _format_widths(template: str, arguments: list[object]) -> int:
    """The same for a ``str.format`` template, whose widths may be fields themselves (``{:{}}``)."""
    try:
        specs = [spec for _, _, spec, _ in string.Formatter().parse(template) if spec]
    except ValueError:
        return 0  # not a valid template: formatting it raises, and builds nothing
    fixed = sum(int(number) for spec in specs for number in re.findall(r"\d+", spec))
    return fixed + (_numbers(arguments) if any("{" in spec for spec in specs) else 0)


def _check_binop(budget: Budget, operator: str, left: object, right: object) -> None:
    if operator == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            budget.integer(right * math.log2(abs(left)))
    elif operator == "*":
        if isinstance(left, int) and isinstance(right, int):
            budget.integer(left.bit_length() + right.bit_length())
        for sequence, count in ((left, right), (right, left)):
            if isinstance(sequence, (str, list, tuple)) and isinstance(count, int):
                budget.sequence(sequence, len(sequence) * count)
    elif operator == "+":
        if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
            budget.sequence(left, len(left) + len(right))
    elif operator == "%" and isinstance(left, str):
        budget.value(len(left) + _printf_widths(left, right) + budget.text_of(right))


def _check_growth(budget: Budget, name: str, value: object, arguments: list[object], widths: int = 0) -> None:
    """Refuse a filter or string method whose result could outgrow the text limit (the module docstring)."""
    budget.tick()
    longest = lists = 0
    for argument in arguments:
        if isinstance(argument, str):
            longest = max(longest, len(argument))
        elif isinstance(argument, int) and name in _PADDING:
            widths += abs(argument)
        elif isinstance(argument, _CONTAINERS):
            lists += budget.text_of(argument)
    grows_by = len(value) if isinstance(value, str) else 0  # `sep.join(parts)` adds sep between the parts
    budget.value(budget.text_of(value) * (1 + longest) + lists * (1 + grows_by) + widths)


def _guarded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` as a filter that first checks its growth; its value follows the context it may take."""

    @wraps(function)  # keeps the pass_context / pass_environment mark that says what comes first
    def guarded(*args: Any, **kwargs: Any) -> Any:
        first = 1 if args and isinstance(args[0], (Context, EvalContext, Environment)) else 0
        if len(args) > first:
            value, arguments = args[first], [*args[first + 1 :], *kwargs.values()]
            widths = _printf_widths(value, arguments) if name == "format" and isinstance(value, str) else 0
            _check_growth(_BUDGET.get(), name, value, arguments, widths)
        return function(*args, **kwargs)

    return guarded


GUARDED_FILTERS = {name: _guarded_filter(name, function) for name, function in DEFAULT_FILTERS.items()}


class BudgetedSandbox(SandboxedEnvironment):
    """The sandbox, with its operators, calls and filters checked against the render's budget."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.filters.update(GUARDED_FILTERS)
        self.filters.update(_HOOKS)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        budget = _BUDGET.get()
        budget.tick()
        _check_binop(budget, operator, left, right)
        return super().call_binop(context, operator, left, right)

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        budget = _BUDGET.get()
        budget.tick()
        method = getattr(obj, "__wrapped__", obj)  # the sandbox hands out str.format wrapped in its formatter
        if isinstance(method, BuiltinMethodType) and isinstance(method.__self__, str):  # "x".ljust(n), sep.join()
            arguments = [*args, *kwargs.values()]
            formats = method.__name__ in ("format", "format_map")
            widths = _format_widths(method.__self__, arguments) if formats else 0
            _check_growth(budget, method.__name__, method.__self__, arguments, widths)
        return super().call(context, obj, *args, **kwargs)


# -- the hooks a metered tree calls ------------------------------------------------------------------------


# pass_context keeps Jinja from calling these at compile time, on constant arguments
@pass_context
def _emit(context: Context, value: object) -> object:
    """A ``{{ }}`` value, before it becomes text: charged, its text measured without making it."""
    budget = _BUDGET.get()
    budget.produce(len(value) if isinstance(value, str) else budget.text_of(value))
    return value


@pass_context
def _charge(context: Context, characters: int) -> str:
    """An output's literal text, charged each time it is produced."""
    _BUDGET.get().produce(characters)
    return ""


@pass_context
def _iterate(context: Context, iterable: Iterable[Any]) -> Iterator[Any]:
    return _BUDGET.get().iterate(iterable)


@pass_context
def _concat(context: Context, values: list[object]) -> str:
    """``a ~ b``: Jinja's own concatenation, its size checked first."""
    budget = _BUDGET.get()
    budget.tick()
    budget.value(sum(budget.text_of(value) for value in values))
    return "".join(map(str, values))


_HOOKS = {"lineage_emit": _emit, "lineage_charge": _charge, "lineage_iterate": _iterate, "lineage_concat": _concat}


def _hook(name: str, argument: nodes.Expr, lineno: int) -> nodes.Filter:
    return nodes.Filter(argument, name, [], [], None, None, lineno=lineno)


class _Meter(NodeTransformer):
    """Routes loops, literal output and ``~`` of a template tree through the budget's hooks."""

    def visit_For(self, node: nodes.For) -> nodes.For:  # noqa: N802 - NodeVisitor's naming
        node = self.generic_visit(node)
        node.iter = _hook("lineage_iterate", node.iter, node.lineno)
        if node.recursive:  # `loop(children)` runs the body again over a new iterable
            for call in node.find_all(nodes.Call):
                if isinstance(call.node, nodes.Name) and call.node.name == "loop" and call.args:
                    call.args[0] = _hook("lineage_iterate", call.args[0], call.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Filter:  # noqa: N802
        node = self.generic_visit(node)
        return _hook("lineage_concat", nodes.List(node.nodes, lineno=node.lineno), node.lineno)

    def visit_Output(self, node: nodes.Output) -> nodes.Output:  # noqa: N802
        node = self.generic_visit(node)
        literal = sum(len(child.data) for child in node.nodes if isinstance(child, nodes.TemplateData))
        node.nodes = [
            child if isinstance(child, nodes.TemplateData) else _hook("lineage_emit", child, child.lineno)
            for child in node.nodes
        ]
        if literal:  # charged once for all of them, each time the output runs
            node.nodes.insert(0, _hook("lineage_charge", nodes.Const(literal, lineno=node.lineno), node.lineno))
        return node


def meter(tree: nodes.Template) -> nodes.Template:
    """``tree`` with its loops, literal output and ``~`` charged to the render's budget."""
    return _Meter().visit(tree)
