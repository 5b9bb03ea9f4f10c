"""Print findings: ``text`` for people, ``github`` workflow commands, SARIF 2.1.0, JSON.

Every format is made from the same ``Finding`` records, in the same order.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections import Counter
from urllib.parse import quote

from rich.text import Text

from lineage_cli import __version__
from lineage_cli.check.findings import LEVELS, RULES, Finding
from lineage_cli.terminal import plain_console

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVELS = {"error": "error", "warning": "warning", "notice": "note"}
STYLES = {"error": "bold red", "warning": "yellow", "notice": "cyan"}


def summary_line(findings: list[Finding], files: int) -> str:
    counts = Counter(f.level for f in findings)
    levels = ", ".join(f"{counts[level]} {level}{'s' if counts[level] != 1 else ''}" for level in LEVELS)
    return f"checked {files} changed file{'s' if files != 1 else ''}: {levels}"


def render(findings: list[Finding], fmt: str, files: int, *, color: bool = False) -> str:
    if fmt == "json":
        return json.dumps({"findings": [f.as_dict() for f in findings], "files": files}, indent=2) + "\n"
    if fmt == "sarif":
        return json.dumps(sarif(findings), indent=2) + "\n"
    if fmt == "github":
        return "".join(github_command(f) + "\n" for f in findings)
    return text(findings, files, color=color)


def text(findings: list[Finding], files: int, *, color: bool = False) -> str:
    out = io.StringIO()
    console = plain_console(file=out, force_terminal=color, no_color=not color, width=120, soft_wrap=True)
    for item in findings:
        where = f"{item.file}:{item.line}" + (f":{item.col}" if item.col else "")
        first, *rest = item.message.split("\n")
        line = Text.assemble(
            (where, "bold"), ": ", (item.level, STYLES[item.level]), f": [{item.rule_id} {item.title}] {first}"
        )
        console.print(line)
        for detail in rest:
            console.print(Text("    " + detail, style="dim" if detail.startswith("downstream") else ""))
    console.print(summary_line(findings, files))
    return out.getvalue()


def escape_data(value: str) -> str:
    """A workflow command's message, escaped as @actions/core's ``escapeData`` does."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """A workflow command's property value, escaped as @actions/core's ``escapeProperty`` does."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github_command(item: Finding) -> str:
    properties = {"file": item.file, "line": str(item.line)}
    if item.col:
        properties["col"] = str(item.col)
    properties["title"] = f"{item.rule_id} {item.title}"
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    return f"::{item.level} {joined}::{escape_data(item.message)}"


def markdown_summary(findings: list[Finding], files: int) -> str:
    """The step summary: a headline and one table row per finding; file names and messages are the user's
    text, shown as written (a table named ``<i>`` must not turn the rest of the row italic)."""
    rows = [
        f"| {item.level} | {_code(f'{item.file}:{item.line}')} | {item.rule_id} {item.title} | {_cell(item.message)} |"
        for item in findings
    ]
    table = ["| level | where | rule | message |", "| --- | --- | --- | --- |", *rows] if rows else []
    return "\n".join(["## lineage check", "", summary_line(findings, files), "", *table]) + "\n"


# What starts inline Markdown or HTML in a table cell: escapes, code, emphasis, strikethrough, links and
# images, raw HTML and autolinks, entities, math, and the cell separator. A backslash makes each literal.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_~\[\]<>&$|])")


def _cell(value: str) -> str:
    """Literal text in a table cell: Markdown's special characters escaped, line breaks as ``<br>``."""
    return "<br>".join(_MARKDOWN_SPECIAL.sub(r"\\\1", line) for line in _lines(value))


def _code(value: str) -> str:
    """A code span of ``value`` in a table cell: fenced by more backticks than it holds in a row, so its
    own backticks stay inside; a line break cannot be in a row, and a code span shows it as a space anyway."""
    text = " ".join(_lines(value)).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padding = " " if {text[:1], text[-1:]} & {"`", " "} else ""  # a code span strips one space from each end
    return f"{fence}{padding}{text}{padding}{fence}"


def _lines(value: str) -> list[str]:
    return value.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def sarif(findings: list[Finding]) -> dict:
    rules = list(RULES.values())
    index = {rule.id: i for i, rule in enumerate(rules)}
    driver = {
        "name": "lineage",
        "version": __version__,
        "rules": [
            {
                "id": rule.id,
                "name": rule.name,
                "shortDescription": {"text": rule.description},
                "defaultConfiguration": {"level": SARIF_LEVELS[rule.level]},
            }
            for rule in rules
        ],
    }
    results = [_sarif_result(item, index[item.rule_id]) for item in findings]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}


def _sarif_result(item: Finding, rule_index: int) -> dict:
    region = {"startLine": item.line} | ({"startColumn": item.col} if item.col else {})
    location = {"physicalLocation": {"artifactLocation": {"uri": quote(item.file)}, "region": region}}
    return {
        "ruleId": item.rule_id,
        "ruleIndex": rule_index,
        "level": SARIF_LEVELS[item.level],
        "message": {"text": item.message},
        "locations": [location],
        "partialFingerprints": {"lineageFinding/v1": fingerprint(item)},
    }


def fingerprint(item: Finding) -> str:
    """Stable across runs and line moves: the rule, the file and the message's headline."""
    headline = item.message.split("\n", 1)[0]
    return hashlib.sha256(f"{item.rule_id}\0{item.file}\0{headline}".encode()).hexdigest()[:32]
