"""Template placeholders: turn a templated SQL text into SQL the parser reads, lines kept.

Warehouse SQL is often a template for a scheduler: Hive's ``${NAME}``, ``${hivevar:NAME}``
and ``${hiveconf:NAME}`` (impala-shell's ``${var:NAME}``), Oozie/DataStage style ``#NAME#``, Postgres extension
scripts' ``@extschema@``
(where the dialect profile's ``placeholder_styles`` has ``at``), SQL*Plus substitution variables ``&name`` (where it
has ``ampersand``) and Jinja/dbt (``{{ NAME }}``,
``{% if %}``, ``{% for %}``, ``ref`` / ``source``).  ``render`` runs the whole way: Jinja
(``jinja.py``, when the text has Jinja tags), then the scheduler placeholders with known
values (``substitute``), then parse-safe tokens for the placeholders still left (``params.py``).
Its ``Rendered`` maps rendered lines back to source lines and tokens back to placeholders.
``substitute`` alone replaces known names and leaves unknown placeholders exactly as written;
a value spanning several lines is joined onto one, so line numbers never move.  ``read_vars_file``
reads a YAML vars file: values, and the defaults of its ``defaults:`` mapping.  A value is substituted as
text, so it must be one: a list or mapping is an error naming its variable (``template_values``).
"""

from __future__ import annotations

import datetime
import functools
import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lineage_cli.errors import InputError
from lineage_cli.harvest.templates.macro_file import MacroFile
from lineage_cli.harvest.templates.markers import JINJA_OPEN
from lineage_cli.harvest.templates.params import AMPERSAND_STYLE, AT_STYLE, VARIABLE_PREFIX, Placeholders

_COMMON = (
    r"\$\{" + VARIABLE_PREFIX + r"(?P<dollar>[A-Za-z_][\w.]*)\}"
    r"|#(?P<hash>[A-Za-z_]\w*)#"
    r"|\{\{\s*(?P<jinja>[A-Za-z_][\w.]*)\s*\}\}"
)
# The profile's styles (``params.py``): @extschema@, and SQL*Plus' &name / &&name / &1, a `.` ending the name
_STYLE_NAMES = {AT_STYLE: r"@(?P<at>[A-Za-z_]\w*)@", AMPERSAND_STYLE: r"&&?(?P<amp>[A-Za-z_]\w*|\d+)\.?"}


@functools.lru_cache(maxsize=16)
def _placeholders(styles: frozenset[str]) -> re.Pattern[str]:
    return re.compile("|".join((_COMMON, *(_STYLE_NAMES[style] for style in sorted(styles & _STYLE_NAMES.keys())))))


# Where a Jinja tag opens: a text without one has no Jinja, and rendering it does not import jinja2 (``jinja.py``).


def substitute(sql: str, variables: Mapping[str, object] | None, styles: Collection[str] = ()) -> str:
    """Replace every known placeholder of ``sql`` by its value (``@name@`` too where ``styles`` has ``at``).

    >>> substitute("SELECT * FROM ${hivevar:db}.t WHERE dt = '#run_date#' AND x = {{ x }} -- ${other}",
    ...            {"db": "ods", "run_date": "2024-01-31", "x": 1})
    "SELECT * FROM ods.t WHERE dt = '2024-01-31' AND x = 1 -- ${other}"
    >>> substitute("SELECT * FROM @extschema@.t", {"extschema": "pgx"}, ["at"])
    'SELECT * FROM pgx.t'
    >>> substitute("INSERT INTO &&owner..t SELECT * FROM &src", {"owner": "hr", "src": "s"}, ["ampersand"])
    'INSERT INTO hr.t SELECT * FROM s'
    """
    if not variables:
        return sql
    values = {str(name): _one_line(value) for name, value in variables.items()}
    lowered = {name.lower(): value for name, value in values.items()}

    def replace(match: re.Match[str]) -> str:
        groups = match.groupdict()
        name = groups["dollar"] or groups["hash"] or groups["jinja"] or groups.get("at") or groups.get("amp")
        # Scheduler variables are matched as written first, then case-insensitively.
        value = values.get(name, lowered.get(name.lower()))
        return match.group(0) if value is None else value

    return _placeholders(frozenset(styles)).sub(replace, sql)


def _one_line(value: object) -> str:
    """A multi-line value would shift every later line number, so its lines are joined."""
    return " ".join(str(value).splitlines()) if value is not None else ""


@dataclass(slots=True)
class Rendered:
    """A template made parseable: the text, where its lines come from, the placeholders it kept."""

    text: str
    placeholders: Placeholders
    lines: list[int] | None = None  # rendered line -> source line; None when they are the same
    warnings: list[tuple[int, str]] = field(default_factory=list)  # (source line, message)

    def source_line(self, line: int) -> int:
        if self.lines is None or not 0 < line <= len(self.lines):
            return line
        return self.lines[line - 1]


def render(
    sql: str,
    variables: Mapping[str, object] | None = None,
    relations: Mapping[str, str] | None = None,
    macros: tuple[MacroFile, ...] = (),
    styles: Collection[str] = (),
) -> Rendered:
    """Jinja, then scheduler placeholders, then parse-safe tokens for what has no value; ``styles`` are the
    dialect profile's ``placeholder_styles`` (``at``: ``@name@`` is a placeholder too).

    >>> out = render("{% if x %}\\n{% endif %}\\nINSERT INTO ${db}.t SELECT * FROM #src#.s", {"db": "dwh"})
    >>> out.source_line(2), out.placeholders.restore(out.text.splitlines()[1])  # the if block took a line
    (3, 'INSERT INTO dwh.t SELECT * FROM #src#.s')
    """
    values = {str(name): _one_line(value) for name, value in (variables or {}).items()}
    lines, warnings = None, []
    if JINJA_OPEN.search(sql) is not None:
        from lineage_cli.harvest.templates.jinja import render_jinja

        output = render_jinja(sql, values, relations, macros=macros)
        sql, warnings = output.text, output.warnings
        lines = None if output.lines == list(range(1, len(output.lines) + 1)) else output.lines
    placeholders = Placeholders()
    text = placeholders.protect(substitute(sql, values, styles), styles)
    if warnings:  # (an unknown macro's call is always warned of)
        text = _macro_statements_ended(text, placeholders)
    return Rendered(text, placeholders, lines, warnings)


_CALL = re.compile(r"\{\{-?\s*[A-Za-z_][\w.]*\s*\(")  # a macro's call, as an unknown one is left in the text


def _macro_statements_ended(text: str, placeholders: Placeholders) -> str:
    """``text`` with a semicolon after each line that holds an unknown macro's call alone where a statement
    begins: a data test's ``{{ is_unique(["id"]) }}`` expands to a query of its own, with no semicolon before the
    next statement.  Its placeholder is then a statement of its own, which adds no lineage, and the statement
    after it is read.  A call within a statement is left as it is.  Lines are kept.

    >>> p = Placeholders()
    >>> text = p.protect("{{ is_unique() }} -- ids\\n-- rows\\n{{ min_rows() }}\\nSELECT a\\n{{ more() }}\\nFROM t")
    >>> p.restore(_macro_statements_ended(text, p)).split("\\n")
    ['{{ is_unique() }}; -- ids', '-- rows', '{{ min_rows() }};', 'SELECT a', '{{ more() }}', 'FROM t']
    """
    lines, at_start = text.split("\n"), True  # at_start: no statement is open before this line
    for number, line in enumerate(lines):
        code = line.split("--", 1)[0].strip()
        if not code or code.startswith("#"):
            continue
        if at_start and _CALL.match(placeholders.texts.get(code, "")):
            lines[number] = line.replace(code, f"{code};", 1)  # before a comment after it
        else:
            at_start = code.endswith(";")
    return "\n".join(lines)


class VarsError(InputError, ValueError):  # a ValueError too: a manifest entry's checks catch that
    """Template values that cannot be used: a vars file that cannot be read, a value that is no single value."""


def read_vars_file(path: str | os.PathLike[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The values and the defaults (its ``defaults:`` mapping) of a YAML vars file.

    Values are substituted; a default only says where a placeholder without a value points to.
    """
    from lineage_cli.yamlsafe import load  # only a run given a vars file pays for yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise VarsError(str(error)) from error
    data = load(text, os.fspath(path)) or {}
    if not isinstance(data, dict):
        raise VarsError(f"{path}: expected a mapping of variable names to values")
    defaults = data.pop("defaults", None) if isinstance(data.get("defaults"), dict) else None
    return template_values(data, f"{path}"), template_values(defaults or {}, f"{path}: defaults")


# What a YAML value may be to stand for a variable: its text is what is substituted.
SINGLE_VALUES = (str, int, float, datetime.date, type(None))


def template_values(mapping: Mapping[object, object], where: str) -> dict[str, str]:
    """The variables of ``mapping`` as the text substituted for them (null: empty).

    A list or mapping is refused: its text would be Python's, not SQL, and a YAML alias bomb
    held there would expand into gigabytes when printed.

    >>> template_values({"day": 1, "db": "ods", "none": None}, "vars.yaml")
    {'day': '1', 'db': 'ods', 'none': ''}
    >>> try:
    ...     template_values({"dbs": ["a", "b"]}, "vars.yaml")
    ... except VarsError as error:
    ...     print(error)
    vars.yaml: variable 'dbs': expected a single value (text, number, true/false, date or null), got a list
    """
    for name, value in mapping.items():
        if not isinstance(value, SINGLE_VALUES):
            expected = "a single value (text, number, true/false, date or null)"
            kind = (
                "mapping" if isinstance(value, Mapping) else "list" if isinstance(value, list) else type(value).__name__
            )
            raise VarsError(f"{where}: variable {str(name)!r}: expected {expected}, got a {kind}")
    return {str(k): "" if v is None else str(v) for k, v in mapping.items()}
