"""What a star stands for: ``*`` and ``t.*``, their modifiers, and a star of unknown columns.

The modifiers are ``EXCEPT`` / ``EXCLUDE``, ``REPLACE``, ``RENAME`` and Snowflake's ``ILIKE``; a
star of unknown columns is lined up against a column list or a wider set-operation branch.  A
star over a table whose columns the catalog does not know stays one ``*`` output (``t.*``); a
derived table asked for a column ``c`` through it answers ``t.c`` (``_star_column``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from sqlglot import exp

from lineage_cli.harvest.sql.columns.lineage import STAR
from lineage_cli.harvest.sql.columns.nodes import _last_identifier

if TYPE_CHECKING:
    from lineage_cli.harvest.sql.columns.analysis import _Analysis


def _is_star(projection: exp.Expression) -> bool:
    return isinstance(projection, exp.Star) or (
        isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
    )


def _star_node(projection: exp.Expression) -> exp.Star:
    return projection if isinstance(projection, exp.Star) else projection.this


def _star_modifiers_names(star: exp.Star, names: list[str], analysis: _Analysis) -> list[str]:
    renamed = _renames(star, analysis)
    return [renamed.get(name, name) for name in names]


def _without(items: list[_Item], excluded: set[str]) -> list[_Item]:
    """``items`` (names, or (name, lineage) pairs) but those named in ``excluded``."""
    if not excluded:
        return items
    return [item for item in items if (item if isinstance(item, str) else item[0]) not in excluded]


def _renames(star: exp.Star, analysis: _Analysis) -> dict[str, str]:
    return {
        analysis.fold(_last_identifier(item.this)): analysis.fold(item.args.get("alias"))
        for item in star.args.get("rename") or ()
        if isinstance(item, exp.Alias)
    }


def _like(pattern: str) -> Callable[[str], bool]:
    """A case-insensitive LIKE test: ``%`` any run of characters, ``_`` any one."""
    expression = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    compiled = re.compile(expression, re.IGNORECASE | re.DOTALL)
    return lambda text: compiled.fullmatch(text) is not None


_Item = TypeVar("_Item")


def _star_filled(items: list[_Item], names: list[str], width: int) -> list[_Item]:
    """``(SELECT * FROM t) AS s(a, b)``: a column list names the columns a star of unknown columns stands
    for, so the star's item is repeated once for each name of the list it takes."""
    if names.count(STAR) != 1:
        return items
    at, copies = names.index(STAR), width - len(names) + 1
    if at >= width or copies < 2:
        return items
    return items[:at] + [items[at]] * copies + items[at + 1 :]


def _aligned(items: list[_Item], width: int) -> list[_Item]:
    """A set operation's branch, its star of unknown columns standing for as many columns as the widest
    branch has: the columns after it line up from the end (``SELECT * FROM t UNION SELECT x, y FROM s``)."""
    names = [item if isinstance(item, str) else item[0] for item in items]  # type: ignore[index]
    return _star_filled(items, names, width)


def _star_column(star: str, name: str) -> str:
    """``schema.t.*`` seen through a derived table that was asked for column ``name``."""
    return f"{star[:-1]}{name}" if star.endswith(".*") else star
