"""Column-level lineage of one statement: projection and predicate edges with subtypes.

A statement is cut into *blocks*, one per query scope (SELECT, set operation, CTE, derived
table, expression subquery, VALUES) plus one for the body of a MERGE / UPDATE / DELETE.  A
block knows its sources by folded alias and computes, once, the lineage of all its output
columns; blocks reference each other, so CTE chains, derived tables and UNION branches are
resolved through memoised outputs instead of one walk per column.

The lineage of a derived column is two sets of base columns (``schema.table.column``):

* ``values``: the columns on a value path, each with the highest projection subtype of
  its paths (IDENTITY < TRANSFORMATION < TRANSFORMATION_MASKING < AGGREGATION <
  AGGREGATION_MASKING);
* ``conds``: the columns its expression reads in non-value positions (CASE conditions,
  IF / NVL2 first arguments, DECODE operands, window specs, subquery filters).

Projection edges map the ``values`` of each output to its target column.  Predicate edges
(column -> target table) come from the clauses of every block: WHERE / HAVING / QUALIFY
FILTER, JOIN ON / USING JOIN, GROUP BY GROUP_BY, ORDER BY SORT, window specs WINDOW, CASE /
IF conditions CONDITIONAL; a predicate on a derived column reads all of its ``values`` and
``conds``.  docs/lineage-semantics.md states the rules with examples.

The scope model is sqlglot's (``sqlglot.optimizer.scope``) but built here, lazily and per
block: sqlglot's ``Scope`` keys sources by their case-sensitive spelling, does not model the
sources of MERGE / UPDATE / Hive multi-insert branches, and its column collection is a
second full walk we do not need.

The package, bottom up: ``lineage.py`` (subtype levels, ``ColumnEdge``, a column's ``_Lineage``),
``nodes.py`` (reading sqlglot nodes), ``stars.py`` (what a star stands for), ``sources.py`` and
``pivot.py`` (what a block reads rows from), ``blocks.py`` (the query block), ``select.py`` and
``set_operations.py`` (SELECT and UNION / INTERSECT / EXCEPT blocks), ``dml.py`` (MERGE / UPDATE /
DELETE and upserts), ``targets.py`` (where the rows land) and ``analysis.py`` (the analysis of one
statement and its expression walk).
"""

from lineage_cli.harvest.sql.columns.analysis import column_lineage, output_columns
from lineage_cli.harvest.sql.columns.lineage import PREDICATE, PROJECTION, ColumnEdge

__all__ = ["PREDICATE", "PROJECTION", "ColumnEdge", "column_lineage", "output_columns"]
