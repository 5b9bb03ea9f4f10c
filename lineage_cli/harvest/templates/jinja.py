"""Jinja rendering of templated SQL, with the source's line numbers kept and unknown macros reported.

``{% if %}`` blocks drop lines and ``{% for %}`` loops repeat them, so the rendered text's line
numbers are not the file's.  Before rendering, every newline outside a Jinja tag gets markers
naming the source line that follows it; after rendering, the markers are read back into a map
from each rendered line to its source line and removed.  (The markers also stop ``-%}`` /
``{%-`` from eating newlines, which would merge source lines.)

A variable with no value renders as its placeholder, ``{{ name }}``, so it can become a
parameterized name later.  A call of a macro, filter or test that is not defined is reported as
a warning with its line and renders as ``{{ name() }}`` (an unknown filter passes its value
through): the statement still parses and keeps the lineage it has.  Such an unknown value
(``KeptUndefined``) is safe wherever a template uses it: a ``{% for %}`` over it runs zero
times, it is false, its length is 0, and calling, indexing or comparing it raises nothing.  A
template Jinja cannot read at all is reported and left for the scheduler placeholders alone.  Rendering is sandboxed:
the SQL of a repository under harvest is not trusted code.  It is also metered (``render_budget.py``): a
template that runs past its time, loop, output or value limits is reported at the line where it did, and
read as if Jinja could not render it.

dbt's context functions are provided where they make sense: ``ref``, ``source``, ``var``,
``env_var`` (its default only: the harvest must not depend on the environment), ``config``,
``is_incremental`` (False: the full-refresh shape), ``this`` and ``return``.  A dbt project's macro files
(``MacroFile``) are run as modules before the model renders, under its budget: the project's macros are
called by name, an installed package's as ``package.name``, and ``adapter.dispatch`` finds a package's
``default__`` macro.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import CodeType
from typing import Any, NoReturn

from jinja2 import Environment, TemplateError, TemplateSyntaxError, nodes
from jinja2.ext import Extension
from jinja2.parser import Parser
from jinja2.runtime import Undefined

from lineage_cli.harvest.templates.budget import (
    LIMITS,
    BudgetedSandbox,
    BudgetExceeded,
    Limits,
    charge_value,
    meter,
    metered,
)
from lineage_cli.harvest.templates.macro_file import MacroFile
from lineage_cli.harvest.templates.markers import JINJA_OPEN

_CLOSE = {"{{": "}}", "{%": "%}", "{#": "#}"}
_END = "\ue000"  # before a source newline: keeps whitespace control from removing it
_START = "\ue001{}\ue002"  # after a source newline: the number of the line that starts there
_START_MARK = re.compile("\ue001(\\d+)\ue002")
# Names Jinja itself binds inside templates.
_JINJA_NAMES = frozenset({"loop", "caller", "varargs", "kwargs", "self", "true", "false", "none", "True", "False"})


class SnapshotBlock(Extension):
    """dbt's ``{% snapshot name %} select ... {% endsnapshot %}``: the table ``name`` made from the query, so
    ``CREATE TABLE name AS`` is rendered on the tag's line and the query after it."""

    tags = frozenset({"snapshot"})

    def parse(self, parser: Parser) -> list[nodes.Node]:
        lineno = next(parser.stream).lineno
        name = parser.parse_expression()
        body = parser.parse_statements(("name:endsnapshot",), drop_needle=True)
        target = name.name if isinstance(name, nodes.Name) else "snapshot"
        return [nodes.Output([nodes.TemplateData(f"CREATE TABLE {target} AS ")], lineno=lineno), *body]


EXTENSIONS = ("jinja2.ext.do", "jinja2.ext.loopcontrols", SnapshotBlock)


@dataclass(slots=True)
class JinjaOutput:
    text: str
    lines: list[int]  # lines[i] is the source line of rendered line i + 1
    warnings: list[tuple[int, str]] = field(default_factory=list)


class KeptUndefined(Undefined):
    """The value of a name, attribute, item or macro call that has no value here: a placeholder.

    Rendered with ``{{ }}`` it is its own expression, ``{{ name }}`` or ``{{ name() }}``, which
    becomes a parameterized name later.  Everywhere else it is an unknown value that adds
    nothing: a ``{% for %}`` over it runs zero times (a loop over a macro's columns adds no SQL,
    not one clause per character of the placeholder), its ``length`` is 0, ``|join`` gives "",
    ``{% if %}`` finds it false, calling it or taking an attribute or item gives another
    placeholder, arithmetic keeps it unknown, and it equals only the same expression and is
    neither less nor greater than anything.  So no use of it in a template raises.
    """

    __slots__ = ()

    def _path(self) -> str:
        return self._undefined_name or "?"

    def __str__(self) -> str:
        return "{{ " + self._path() + " }}"

    def __getattr__(self, name: str) -> Any:
        if name[:2] == "__":  # keep Python's protocol probing (``__html__``, ``__iter__`` ...) working
            raise AttributeError(name)
        return KeptUndefined(name=f"{self._path()}.{name}")

    def __getitem__(self, key: object) -> Any:
        return KeptUndefined(name=self._path() + _subscript(key))

    def __call__(self, *args: object, **kwargs: object) -> Any:
        if (sql := _known_macro(self._path(), args, kwargs)) is not None:
            return sql  # `CAST(x AS {{ dbt.type_string() }})`: a placeholder cannot stand for a type
        # Arguments left out: the text stays on one line, and one macro is one placeholder in every file.
        return KeptUndefined(name=f"{self._path()}()")

    def __eq__(self, other: object) -> bool:
        # Undefined's own equality holds between any two undefined values; two unknowns are
        # equal only when they are the same expression.
        return isinstance(other, KeptUndefined) and other._path() == self._path()

    def __hash__(self) -> int:
        return hash(self._path())

    def _unordered(self, other: object) -> bool:
        """An unknown value is neither less nor greater than anything: every ordering test is false."""
        return False

    def _unknown(self, *other: object) -> KeptUndefined:
        """Arithmetic with an unknown value gives an unknown value."""
        return self

    def _not_a_number(self) -> Any:
        """``|int`` and ``|float`` catch a TypeError and give their default, as for any non-number."""
        raise TypeError(f"{self._path()} has no value")

    __lt__ = __le__ = __gt__ = __ge__ = _unordered
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unknown
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _unknown
    __pow__ = __rpow__ = __pos__ = __neg__ = _unknown
    __int__ = __float__ = __complex__ = _not_a_number


# dbt's cross-database type macros (dbt.type_string(), dbt_utils.type_int() before dbt 1.2), as types every
# dialect parses: what a column is cast to does not change its lineage
_TYPE_MACROS = {
    "type_string": "varchar",
    "type_int": "int",
    "type_integer": "int",
    "type_date": "date",
    "type_bigint": "bigint",
    "type_float": "float",
    "type_numeric": "numeric",
    "type_timestamp": "timestamp",
    "type_boolean": "boolean",
}
# dbt's cross-database macros (dbt.datediff(), or bare datediff(); dbt_utils' before dbt 1.2) as the SQL they stand
# for, with their parameters in dbt's order: what they compute reads their arguments, so their lineage is kept.  A
# date part is a word (`day`), put in quotes so that no dialect reads it as a column.
_SQL_MACROS: dict[str, tuple[tuple[str, ...], str]] = {
    "datediff": (("first_date", "second_date", "datepart"), "datediff('{datepart}', {first_date}, {second_date})"),
    "dateadd": (
        ("datepart", "interval", "from_date_or_timestamp"),
        "dateadd('{datepart}', {interval}, {from_date_or_timestamp})",
    ),
    "date_trunc": (("datepart", "date"), "date_trunc('{datepart}', {date})"),
    "last_day": (("date", "datepart"), "last_day({date})"),
    "safe_cast": (("field", "type"), "cast({field} as {type})"),
    "cast_bool_to_text": (("field",), "cast({field} as varchar)"),
    "hash": (("field",), "md5(cast({field} as varchar))"),
    "split_part": (
        ("string_text", "delimiter_text", "part_number"),
        "split_part({string_text}, {delimiter_text}, {part_number})",
    ),
    "replace": (("field", "old_chars", "new_chars"), "replace({field}, {old_chars}, {new_chars})"),
    "right": (("string_text", "length_expression"), "right({string_text}, {length_expression})"),
    "length": (("expression",), "length({expression})"),
    "position": (("substring_text", "string_text"), "position({substring_text} in {string_text})"),
    "any_value": (("expression",), "any_value({expression})"),
    "bool_or": (("expression",), "bool_or({expression})"),
    "safe_divide": (("numerator", "denominator"), "({numerator}) / nullif(({denominator}), 0)"),
    "current_timestamp": ((), "current_timestamp"),
}
# ... and those over a list of expressions (dbt_utils' `safe_add(['a', 'b'])`; before dbt_utils 1.0 its arguments):
# the list's parameter, how each expression is written, what joins them and the SQL around them
_LIST_MACROS: dict[str, tuple[str, str, str, str]] = {
    "concat": ("fields", "{}", ", ", "concat({})"),
    "safe_add": ("field_list", "coalesce({}, 0)", " + ", "({})"),
    "safe_subtract": ("field_list", "coalesce({}, 0)", " - ", "({})"),
}
_DATE_PARTS = frozenset({"datepart"})
_MACRO_NAMESPACES = frozenset({"dbt", "dbt_utils"})
_KEY_SEPARATOR = ", '-', "  # between the fields of dbt_utils' surrogate key
_KNOWN_MACROS = frozenset(
    {*_TYPE_MACROS, *_SQL_MACROS, *_LIST_MACROS, "surrogate_key", "generate_surrogate_key", "star", "group_by"}
    | {"date_spine", "string_literal"}
)


def _macro_name(path: str) -> str | None:
    """The name of a dbt (or dbt_utils) macro called as ``path``; None for another namespace's."""
    namespace, _, name = path.rpartition(".")
    return name if namespace in _MACRO_NAMESPACES or not namespace else None


def _known_macro(path: str, args: tuple[object, ...], kwargs: Mapping[str, object]) -> str | None:
    """The SQL of a dbt macro whose output is known from its arguments: the type macros, the surrogate key
    (dbt_utils' md5 of its fields, so the key keeps their lineage), ``star`` (every column of the relation,
    ``except`` ignored), ``group_by(n)`` (``group by 1, ..., n``), ``date_spine`` (a query of its one column,
    ``date_<datepart>``, that reads no table), ``string_literal`` (its text in quotes) and the cross-database
    macros (``datediff``, ``safe_add`` ...: the SQL function or expression they stand for); None for any other
    call (or one whose arguments say nothing of its SQL).

    >>> _known_macro("dbt_utils.generate_surrogate_key", (["order_id", "line_no"],), {})
    "md5(concat(coalesce(cast(order_id as varchar), ''), '-', coalesce(cast(line_no as varchar), '')))"
    """
    name = _macro_name(path)
    if name in _TYPE_MACROS:
        return _TYPE_MACROS[name]
    fields = args[0] if args else kwargs.get("field_list")
    if name in ("surrogate_key", "generate_surrogate_key") and isinstance(fields, list) and fields:
        parts = [f"coalesce(cast({field} as varchar), '')" for field in fields if isinstance(field, str)]
        return f"md5(concat({_KEY_SEPARATOR.join(parts)}))" if len(parts) == len(fields) else None
    if name == "star":
        qualifier = kwargs.get("relation_alias")
        return f"{qualifier}.*" if isinstance(qualifier, str) and qualifier else "*"
    if name == "group_by":
        return _group_by(args[0] if args else kwargs.get("n"))
    if name == "date_spine":
        datepart = args[0] if args else kwargs.get("datepart")
        column = f"date_{datepart}" if isinstance(datepart, str) and datepart.isidentifier() else "date_day"
        return f"select cast(null as timestamp) as {column}"
    if name == "string_literal":
        value = args[0] if args else kwargs.get("value")
        return "'" + value.replace("'", "''") + "'" if isinstance(value, str) else None
    if name in _SQL_MACROS:
        return _cross_database_sql(*_SQL_MACROS[name], args, kwargs)
    if name in _LIST_MACROS:
        return _list_sql(*_LIST_MACROS[name], args, kwargs)
    return None


def _cross_database_sql(
    parameters: tuple[str, ...], template: str, args: tuple[object, ...], kwargs: Mapping[str, object]
) -> str | None:
    """``template`` filled with the call's arguments, bound to ``parameters`` as Python binds them; None when one
    is missing or is no SQL text (a placeholder, a list), or a date part is no word.

    >>> _cross_database_sql(*_SQL_MACROS["datediff"], ("o.created_at", "o.closed_at"), {"datepart": "day"})
    "datediff('day', o.created_at, o.closed_at)"
    """
    bound = dict(zip(parameters, args, strict=False)) | {k: v for k, v in kwargs.items() if k in parameters}
    if len(args) > len(parameters) or set(bound) != set(parameters):
        return None
    texts = {name: _sql_text(value) for name, value in bound.items()}
    if any(text is None for text in texts.values()):
        return None
    if any(not str(texts[name]).isidentifier() for name in _DATE_PARTS.intersection(texts)):
        return None
    return template.format(**texts)


def _list_sql(
    parameter: str, each: str, separator: str, around: str, args: tuple[object, ...], kwargs: Mapping[str, object]
) -> str | None:
    """The expressions of the call's list (or, as before dbt_utils 1.0, of its arguments), each written as ``each``,
    joined by ``separator`` and put in ``around``; None for an empty list or one holding anything but SQL text.

    >>> _list_sql(*_LIST_MACROS["safe_add"], (["a.n", "b.n"],), {})
    '(coalesce(a.n, 0) + coalesce(b.n, 0))'
    """
    items = args[0] if len(args) == 1 and isinstance(args[0], list) else kwargs.get(parameter, list(args))
    texts = [_sql_text(item) for item in items] if isinstance(items, list) else []
    if not texts or None in texts:
        return None
    return around.format(separator.join(each.format(text) for text in texts))


def _sql_text(value: object) -> str | None:
    """A macro argument as the SQL it stands for: text or a number; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _group_by(count: object) -> str | None:
    """``group by 1, 2, ..., count``, its size charged to the render's budget first; None for no count."""
    if isinstance(count, str) and count.isdigit():
        count = int(count)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        return None
    charge_value(count * (len(str(count)) + 2))
    return "group by " + ", ".join(str(position) for position in range(1, count + 1))


def _subscript(key: object) -> str:
    """An item's part of a placeholder's text: ``.key``, or a slice as Jinja writes it (``[1:]``)."""
    if not isinstance(key, slice):
        return f".{key}"
    bounds = ["" if bound is None else str(bound) for bound in (key.start, key.stop, key.step)]
    return "[" + ":".join(bounds if key.step is not None else bounds[:2]) + "]"


def render_jinja(
    sql: str,
    variables: Mapping[str, str],
    relations: Mapping[str, str] | None = None,
    limits: Limits = LIMITS,
    macros: tuple[MacroFile, ...] = (),
) -> JinjaOutput:
    """Render ``sql`` with ``variables``; ``relations`` resolves dbt's ``ref`` / ``source`` / ``this``, and the
    macros of ``macros`` (a dbt project's files) may be called.

    >>> out = render_jinja("SELECT 1\\n{% if full %}\\nFROM a\\n{% else %}\\nFROM {{ db }}.b\\n{% endif %}\\n;", {})
    >>> [(line, text) for line, text in zip(out.lines, out.text.splitlines()) if text.strip()]
    [(1, 'SELECT 1'), (5, 'FROM {{ db }}.b'), (7, ';')]
    """
    # Sandboxed: a harvest reads SQL from any repository, and a template must not reach Python internals,
    # nor run for hours or fill the memory.
    environment = _environment()
    context = {**_dbt_context(variables, relations or {}), **variables}
    library = _MacroLibrary(environment, macros)
    try:
        tree = environment.parse(_mark_lines(sql))
        warnings = _unknown_calls(tree, environment, set(context) | library.names, library.packages)
        with metered(limits):
            warnings += library.load(context)
            rendered = environment.from_string(meter(tree)).render(context)
    except BudgetExceeded as error:
        message = f"template {error}: Jinja not rendered, only placeholders substituted"
        return JinjaOutput(sql, _identity(sql), [(_template_line(error), message)])
    except TemplateError as error:
        line = getattr(error, "lineno", None) or 1
        return JinjaOutput(
            sql, _identity(sql), [(line, f"cannot render Jinja: {error}; only placeholders substituted")]
        )
    except Exception as error:  # noqa: BLE001 - a template's own code may raise anything; the harvest goes on
        message = f"cannot render Jinja: {type(error).__name__}: {error}; only placeholders substituted"
        return JinjaOutput(sql, _identity(sql), [(1, message)])
    text, lines = _unmark(rendered)
    return JinjaOutput(text, lines, warnings)


class _MacroReturn(Exception):  # noqa: N818 - not an error: how dbt's return() leaves a macro
    """dbt's ``return(value)``: the value of the macro that calls it, carried out of the macro's text."""

    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value


def _return(value: object = None) -> NoReturn:
    raise _MacroReturn(value)


def _returning(macro: Callable[..., object]) -> Callable[..., object]:
    """``macro`` called as dbt calls it: its value is what it ``return()``s, else its text."""

    def call(*args: object, **kwargs: object) -> object:
        try:
            return macro(*args, **kwargs)
        except _MacroReturn as returned:
            return returned.value

    return call


class _Package:
    """An installed package's macros, called as ``package.name(...)``: a name it lacks is a placeholder, and a
    dbt / dbt_utils macro whose output is known (``_known_macro``) keeps that output (the package's own would
    dispatch to adapter macros this harvest does not have)."""

    def __init__(self, name: str, macros: Mapping[str, Callable[..., object]]) -> None:
        self._name, self._macros = name, macros

    def __getattr__(self, name: str) -> Any:
        if name[:2] == "__":
            raise AttributeError(name)
        path = f"{self._name}.{name}"
        if name in self._macros and not (self._name in _MACRO_NAMESPACES and name in _KNOWN_MACROS):
            return self._macros[name]
        return KeptUndefined(name=path)


class _Adapter:
    """dbt's ``adapter``, as far as macros need it to find each other: ``dispatch(name, namespace)`` is the
    namespace's ``default__name`` (else the project's); the adapter's own macros (``<adapter>__name``) are not
    known, as the harvest runs no adapter.  Anything else of it is a placeholder."""

    def __init__(self, macros: Mapping[str, Mapping[str, Callable[..., object]]]) -> None:
        self._macros = macros

    def dispatch(self, macro_name: str, macro_namespace: str | None = None) -> Any:
        for package in dict.fromkeys((macro_namespace or "", "")):
            if (found := self._macros.get(package, {}).get(f"default__{macro_name}")) is not None:
                return found
        # a known dbt / dbt_utils macro keeps its output (``_known_macro``); another is a placeholder naming it
        return KeptUndefined(name=f"{macro_namespace}.{macro_name}" if macro_namespace else macro_name)

    def __getattr__(self, name: str) -> Any:
        if name[:2] == "__":
            raise AttributeError(name)
        return KeptUndefined(name=f"adapter.{name}")


@dataclass(frozen=True, slots=True)
class _CompiledFile:
    file: MacroFile
    macros: tuple[str, ...]  # the names of the macros it defines
    code: CodeType | None  # None when Jinja could not compile it
    problem: str = ""  # why not


@dataclass(frozen=True, slots=True)
class _CompiledMacros:
    """A project's macro files, parsed and compiled once per process: every model of a harvest renders with the
    same files, and compiling them is most of the time a render takes.  ``filters`` and ``tests`` are the unknown
    ones they use, stubbed in the environment of each render as the model's own are."""

    files: tuple[_CompiledFile, ...]
    filters: frozenset[str]
    tests: frozenset[str]


@lru_cache(maxsize=2)
def _compiled_macros(files: tuple[MacroFile, ...]) -> _CompiledMacros:
    environment = _environment()
    known_filters, known_tests = set(environment.filters), set(environment.tests)
    compiled = []
    for file in files:
        try:
            tree = environment.parse(file.text)
        except TemplateSyntaxError:
            continue  # reported once, when the project was read (``macro_file_problem``)
        _unknown_calls(tree, environment, set())  # stubs its unknown filters and tests, so that it compiles
        macros = tuple(macro.name for macro in _macros_of(tree))
        try:  # named as its file, so a budget overspent in a macro is reported at the model's line that called it
            compiled.append(_CompiledFile(file, macros, environment.compile(meter(tree), filename=file.display)))
        except TemplateError as error:
            compiled.append(_CompiledFile(file, macros, None, str(error)))
    filters, tests = set(environment.filters) - known_filters, set(environment.tests) - known_tests
    return _CompiledMacros(tuple(compiled), frozenset(filters), frozenset(tests))


class _MacroLibrary:
    """A dbt project's macro files: compiled before the render (their macros' names are known names), made into
    macros when it runs (``load``: under its budget, as their files' top level runs then)."""

    def __init__(self, environment: Environment, files: tuple[MacroFile, ...]) -> None:
        self.environment = environment
        self.compiled = _compiled_macros(files) if files else _CompiledMacros((), frozenset(), frozenset())
        for name in self.compiled.filters:
            environment.filters.setdefault(name, _pass_through)
        for name in self.compiled.tests:
            environment.tests.setdefault(name, _never)
        # the names a model may call: the project's macros, the packages, and each package's macros by dotted name
        self.packages = {entry.file.package for entry in self.compiled.files if entry.file.package}
        self.names = {
            name
            for entry in self.compiled.files
            for macro in entry.macros
            for name in ((f"{entry.file.package}.{macro}", entry.file.package) if entry.file.package else (macro,))
        }

    def load(self, context: dict[str, Any]) -> list[tuple[int, str]]:
        """Bind the macros in ``context``: the project's by name, a package's under its name.  A package's macros
        see its own by name too.  A file whose top level fails is a warning naming it; its macros stay unknown."""
        environment = self.environment
        for name, value in environment.globals.items():
            context.setdefault(name, value)
        scopes: dict[str, dict[str, Any]] = {"": context}
        found: dict[str, dict[str, Callable[..., object]]] = {"": {}}
        warnings: list[tuple[int, str]] = []
        for entry in self.compiled.files:
            package = entry.file.package
            scope = scopes.setdefault(package, {})
            try:
                if entry.code is None:
                    raise TemplateError(entry.problem)
                template = environment.template_class.from_code(environment, entry.code, environment.globals)
                # shared: its macros look names up in the scope when they run, so they see the macros of every file
                module = template.make_module(vars=scope, shared=True)
            except BudgetExceeded:
                raise
            except Exception as error:  # noqa: BLE001 - a macro file's own code may raise anything
                message = f"cannot load dbt macros {entry.file.display}: {error}; its macros are unknown"
                warnings.append((1, message))
                continue
            macros = found.setdefault(package, {})
            for name in entry.macros:
                if (made := getattr(module, name, None)) is not None:
                    macros[name] = _returning(made)
        context.setdefault("adapter", _Adapter(dict(found)))
        context.update(found.pop(""))
        for package, macros in found.items():
            context.setdefault(package, _Package(package, macros))
        for package, macros in found.items():
            scopes[package].update({**context, **macros})
        return warnings


def _macros_of(tree: nodes.Template) -> Iterator[nodes.Macro]:
    """The macros a file defines at its top level."""
    return (node for node in tree.body if isinstance(node, nodes.Macro))


def macro_file_problem(text: str) -> tuple[int, str] | None:
    """The line and the reason Jinja cannot read a file of macros; None when it can."""
    try:
        _environment().parse(text)
    except TemplateSyntaxError as error:
        return error.lineno, error.message or "not Jinja"
    return None


def _environment() -> BudgetedSandbox:
    return BudgetedSandbox(undefined=KeptUndefined, keep_trailing_newline=True, extensions=list(EXTENSIONS))


def _template_line(error: BaseException) -> int:
    """The template line an error was raised at: Jinja rewrites the traceback to name template lines."""
    line = 1
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == "<template>":
            line = trace.tb_lineno
        trace = trace.tb_next
    return line


def _identity(sql: str) -> list[int]:
    return list(range(1, sql.count("\n") + 2))


def _mark_lines(sql: str) -> str:
    """``sql`` with line markers around every newline outside ``{{ }}``, ``{% %}`` and ``{# #}``."""
    out, line, at = [_START.format(1)], 1, 0
    while at < len(sql):
        opening = JINJA_OPEN.search(sql, at)
        data = sql[at : opening.start() if opening else len(sql)]
        for piece_index, piece in enumerate(data.split("\n")):
            if piece_index:
                line += 1
                out.append(_END + "\n" + _START.format(line))
            out.append(piece)
        if opening is None:
            break
        end = _closing(sql, opening.end(), _CLOSE[opening.group(0)])
        tag = sql[opening.start() : end]
        out.append(tag)
        line += tag.count("\n")
        at = end
    return "".join(out)


def _closing(sql: str, at: int, close: str) -> int:
    """The index just past ``close``, skipping quoted strings inside expressions and statements."""
    quote = None
    while at < len(sql):
        char = sql[at]
        if quote:
            if char == "\\":
                at += 1
            elif char == quote:
                quote = None
        elif char in "'\"" and close != "#}":
            quote = char
        elif sql.startswith(close, at):
            return at + len(close)
        at += 1
    return len(sql)


def _unmark(rendered: str) -> tuple[str, list[int]]:
    """Remove the markers; each rendered line's source line is the marker before its first character."""
    texts, lines, current = [], [], 1
    for raw in rendered.replace(_END, "").split("\n"):
        pieces = _START_MARK.split(raw)
        number = None
        for index, piece in enumerate(pieces):
            if index % 2:
                current = int(piece)
            elif number is None and piece.strip():
                number = current
        texts.append("".join(pieces[0::2]))
        lines.append(number if number is not None else current)
    return "\n".join(texts), lines


def _unknown_calls(
    tree: nodes.Template, environment: Environment, known: set[str], packages: set[str] | None = None
) -> list[tuple[int, str]]:
    """Warnings for calls of undefined macros, filters and tests (a package's macro is known by its dotted name,
    ``package.name``, the ``packages`` being known too); unknown filters and tests are stubbed."""
    defined = known | set(environment.globals) | _JINJA_NAMES | set(_defined_names(tree))
    warnings: list[tuple[int, str]] = []
    for call in tree.find_all(nodes.Call):
        root, dotted = _callee(call.node)
        callee = ".".join(dotted.split(".")[:2]) if root in (packages or ()) else root
        if root is not None and callee not in defined and _macro_name(dotted) not in _KNOWN_MACROS:
            warnings.append((call.lineno, f"unknown Jinja macro {dotted}: rendered as a placeholder"))
    for node, registry, what, stub in (
        (nodes.Filter, environment.filters, "filter", _pass_through),
        (nodes.Test, environment.tests, "test", _never),
    ):
        for found in tree.find_all(node):
            if found.name not in registry:
                warnings.append((found.lineno, f"unknown Jinja {what} {found.name}: ignored"))
                registry[found.name] = stub
    return sorted(set(warnings))


def _defined_names(tree: nodes.Template) -> Iterator[str]:
    for macro in tree.find_all((nodes.Macro, nodes.CallBlock)):
        if isinstance(macro, nodes.Macro):
            yield macro.name
        yield from (arg.name for arg in macro.args)
    for statement in tree.find_all((nodes.Assign, nodes.AssignBlock, nodes.For)):
        yield from (name.name for name in statement.target.find_all(nodes.Name))
        if isinstance(statement.target, nodes.Name):
            yield statement.target.name
    for imported in tree.find_all(nodes.Import):
        yield imported.target
    for imported in tree.find_all(nodes.FromImport):
        yield from (name if isinstance(name, str) else name[1] for name in imported.names)


def _callee(node: nodes.Node) -> tuple[str | None, str]:
    """The root name and dotted text of a called expression (``dbt_utils.star`` -> ``dbt_utils``)."""
    parts: list[str] = []
    while isinstance(node, (nodes.Getattr, nodes.Getitem, nodes.Call)):
        if isinstance(node, nodes.Getattr):
            parts.append(node.attr)
        node = node.node
    if not isinstance(node, nodes.Name):
        return None, ""
    return node.name, ".".join([node.name, *reversed(parts)])


def _pass_through(value: object, *args: object, **kwargs: object) -> object:
    return value


def _never(value: object, *args: object, **kwargs: object) -> bool:
    return False


def _dbt_context(variables: Mapping[str, str], relations: Mapping[str, str]) -> dict[str, Any]:
    """dbt's context functions over ``relations`` (``ref:NAME``, ``source:SOURCE.TABLE``, ``this``)."""

    def ref(*args: str, **kwargs: object) -> str:
        name = str(args[-1]) if args else "?"
        return relations.get(f"ref:{name}", name)

    def source(source_name: str, table_name: str) -> str:
        return relations.get(f"source:{source_name}.{table_name}", f"{source_name}.{table_name}")

    def var(name: str, default: object = None) -> object:
        if name in variables:
            return variables[name]
        return default if default is not None else KeptUndefined(name=name)

    def env_var(name: str, default: object = None) -> object:
        return default if default is not None else KeptUndefined(name=f"env_var('{name}')")

    functions: dict[str, Callable[..., object]] = {
        "ref": ref,
        "source": source,
        "var": var,
        "env_var": env_var,
        "config": lambda *args, **kwargs: "",
        "is_incremental": lambda: False,
        "return": _return,
    }
    context: dict[str, Any] = dict(functions)
    if "this" in relations:
        context["this"] = relations["this"]
    return context
