"""Which projection subtype a function call is, per dialect.

sqlglot knows aggregates by class (``exp.AggFunc``); the dialect profiles name masking,
counting and extra aggregate functions as the dialect writes them.  Each profile name is
parsed once to find the node class the dialect builds for it, so typed nodes (``md5`` ->
``exp.MD5``) and anonymous calls (``mask_hash``) are matched alike.
"""

from __future__ import annotations

from functools import cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from lineage_cli.model import Subtype
from lineage_cli.profiles import DialectProfile

TRANSFORMATION = int(Subtype.TRANSFORMATION)
TRANSFORMATION_MASKING = int(Subtype.TRANSFORMATION_MASKING)
AGGREGATION = int(Subtype.AGGREGATION)
AGGREGATION_MASKING = int(Subtype.AGGREGATION_MASKING)


class FunctionLevels:
    """The projection subtype (a ``Subtype`` value) of each function call in one dialect.

    >>> from lineage_cli.profiles import load_profile
    >>> levels = FunctionLevels.of(load_profile("hive"))
    >>> calls = sqlglot.parse_one("SELECT md5(a), mask_hash(a), sum(a), lag(a), count(a)", read="hive")
    >>> for call in calls.expressions:
    ...     print(call.sql("hive"), Subtype(levels.level(call)).name)
    MD5(a) TRANSFORMATION_MASKING
    MASK_HASH(a) TRANSFORMATION_MASKING
    SUM(a) AGGREGATION
    LAG(a) TRANSFORMATION
    COUNT(a) AGGREGATION_MASKING
    """

    # Navigation and ranking functions are AggFunc subclasses in sqlglot, but they pick a row
    # instead of aggregating: a value path through LAG is a TRANSFORMATION.
    _NOT_AGGREGATES = (
        exp.Lag,
        exp.Lead,
        exp.FirstValue,
        exp.LastValue,
        exp.NthValue,
        exp.Rank,
        exp.DenseRank,
        exp.Ntile,
        exp.PercentRank,
        exp.CumeDist,
        exp.RowNumber,
    )
    _COUNTS = (exp.Count, exp.ApproxDistinct, exp.CountIf)

    def __init__(self, profile: DialectProfile) -> None:
        self.by_class: dict[type, int] = {cls: TRANSFORMATION for cls in self._NOT_AGGREGATES}
        self.by_class.update({cls: AGGREGATION_MASKING for cls in self._COUNTS})
        self.by_name: dict[str, int] = {}
        for names, level in (
            (profile.masking_functions, TRANSFORMATION_MASKING),
            (profile.aggregate_functions, AGGREGATION),
            (profile.count_functions, AGGREGATION_MASKING),
        ):
            for name in sorted(names):
                self._register(name, level, profile.sqlglot_dialect)

    @staticmethod
    @cache
    def of(profile: DialectProfile) -> FunctionLevels:
        return FunctionLevels(profile)

    def _register(self, name: str, level: int, dialect: str) -> None:
        self.by_name[name] = max(level, self.by_name.get(name, level))
        for node_type in _call_types(name, dialect):
            # A masking aggregate (HASH_AGG) still aggregates: the higher subtype wins.
            own = AGGREGATION if issubclass(node_type, exp.AggFunc) else level
            self.by_class[node_type] = max(level, own, self.by_class.get(node_type, level))

    def level(self, node: exp.Expression) -> int:
        node_type = type(node)
        if node_type is exp.Anonymous:
            return self.by_name.get(str(node.this).lower(), TRANSFORMATION)
        level = self.by_class.get(node_type)
        if level is None:
            level = self.by_class[node_type] = AGGREGATION if issubclass(node_type, exp.AggFunc) else TRANSFORMATION
        return level


def _call_types(name: str, dialect: str) -> set[type]:
    """The node classes a dialect builds for calls of ``name``.

    Builders may need an algorithm argument and pick the class from it (T-SQL
    ``HASHBYTES('MD5', x)`` is ``exp.MD5``), so a few argument shapes are tried.  The class
    sqlglot names ``name`` is one of them too: a dialect may build it from other calls
    (BigQuery's ``MD5(x)`` is ``MD5Digest``, but ``TO_HEX(MD5(x))`` is ``MD5``).
    """
    if not name.replace("_", "").isalnum():
        return set()  # schema-qualified names (anon.partial) stay anonymous calls
    found: set[type] = {cls for cls in exp.ALL_FUNCTIONS if name.upper() in cls.sql_names()}
    for arguments in ("x", "'md5', x", "'sha1', x", "'sha2_256', x"):
        try:
            select = sqlglot.parse_one(f"SELECT {name}({arguments})", read=dialect)
        except (SqlglotError, ValueError, TypeError, IndexError):  # some builders unpack a fixed arity
            continue
        if isinstance(select, exp.Select) and select.expressions:
            found.add(type(select.expressions[0]))
    return found - {exp.Anonymous}
