"""The one finding record every output format is made from, and the rules that produce findings."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# Levels, most severe first; `--fail-on` names a threshold in this order.  A removed column or table that
# downstream still reads is an error, as a parse error is: either breaks a consumer when it runs.
LEVELS = ("error", "warning", "notice")
FAIL_ON = {"error": "error", "breaking": "warning", "change": "notice", "never": None}


@dataclass(frozen=True)
class Rule:
    id: str  # stable: SARIF consumers track results by it
    name: str
    level: str
    description: str


RULES = {
    rule.name: rule
    for rule in (
        Rule("LIN001", "parse-error", "error", "A statement does not parse."),
        Rule("LIN101", "column-removed", "error", "A target column is removed or renamed while downstream reads it."),
        Rule("LIN102", "table-removed", "error", "A target table is no longer written while downstream reads it."),
        Rule("LIN103", "type-narrowed", "warning", "A column's declared type is narrowed."),
        Rule("LIN201", "lineage-changed", "notice", "The lineage of a target changed; lists its downstream impact."),
    )
}


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    col: int | None
    rule_id: str
    level: str
    message: str
    title: str  # a short headline: the annotation title and the SARIF rule name

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def finding(rule_name: str, file: str, line: int, message: str, col: int | None = None) -> Finding:
    rule = RULES[rule_name]
    return Finding(file, max(line, 1), col, rule.id, rule.level, message, rule.name)


def fails(findings: list[Finding], fail_on: str) -> bool:
    """Whether any finding is at or above the ``--fail-on`` threshold."""
    threshold = FAIL_ON[fail_on]
    if threshold is None:
        return False
    worst = LEVELS.index(threshold)
    return any(LEVELS.index(f.level) <= worst for f in findings)


def sort_key(item: Finding) -> tuple[int, str, int, int, str]:
    return (LEVELS.index(item.level), item.file, item.line, item.col or 0, item.message)
