"""Template placeholders: substitute ``--var`` values into SQL before it is parsed.

Warehouse SQL is often a template for a scheduler: Hive's ``${NAME}``, ``${hivevar:NAME}``
and ``${hiveconf:NAME}``, Oozie/DataStage style ``#NAME#`` and Jinja/dbt ``{{ NAME }}``.
Known names are replaced by their values; unknown placeholders are left exactly as written,
so the parser (or the reader) sees what the file said.  Line numbers never move: a value
spanning several lines is joined onto one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_PLACEHOLDER = re.compile(
    r"\$\{(?:hivevar:|hiveconf:)?(?P<dollar>[A-Za-z_][\w.]*)\}"
    r"|#(?P<hash>[A-Za-z_]\w*)#"
    r"|\{\{\s*(?P<jinja>[A-Za-z_][\w.]*)\s*\}\}"
)


def substitute(sql: str, variables: Mapping[str, object] | None) -> str:
    """Replace every known placeholder of ``sql`` by its value.

    >>> substitute("SELECT * FROM ${hivevar:db}.t WHERE dt = '#run_date#' AND x = {{ x }} -- ${other}",
    ...            {"db": "ods", "run_date": "2024-01-31", "x": 1})
    "SELECT * FROM ods.t WHERE dt = '2024-01-31' AND x = 1 -- ${other}"
    """
    if not variables:
        return sql
    values = {str(name): _one_line(value) for name, value in variables.items()}
    lowered = {name.lower(): value for name, value in values.items()}

    def replace(match: re.Match[str]) -> str:
        name = match.group("dollar") or match.group("hash") or match.group("jinja")
        # Scheduler variables are matched as written first, then case-insensitively.
        value = values.get(name, lowered.get(name.lower()))
        return match.group(0) if value is None else value

    return _PLACEHOLDER.sub(replace, sql)


def _one_line(value: object) -> str:
    """A multi-line value would shift every later line number, so its lines are joined."""
    return " ".join(str(value).splitlines()) if value is not None else ""
