"""Column-level lineage: one test per rule of docs/lineage-semantics.md, and generated warehouses.

Every expected set below was reasoned from the SQL and the rules, then compared with the
engine.  The warehouse tests harvest-by-parse ``gen_warehouse.py`` corpora and demand the
generator's ground truth exactly, in four dialects.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lineage_cli import parse_sql
from lineage_cli.harvest.schema import SchemaCatalog, SchemaError
from lineage_cli.harvest.sql.script import analyze_script
from lineage_cli.harvest.templates.placeholders import substitute
from tests.bounded import run_bounded, yaml_bomb
from tests.conftest import REPO, generate_warehouse

SEMANTICS = REPO / "docs" / "lineage-semantics.md"

P, Q = "projection", "predicate"
ID, TR, TM, AG, AM = "IDENTITY", "TRANSFORMATION", "TRANSFORMATION_MASKING", "AGGREGATION", "AGGREGATION_MASKING"


def edges(sql: str, dialect: str = "ansi", **options: object) -> set[tuple[str, str, str, str]]:
    result = parse_sql(sql, dialect=dialect, **options)  # type: ignore[arg-type]
    return {(c["source"], c["target"], c["kind"], c["subtype"]) for s in result["statements"] for c in s["columns"]}


def warnings(sql: str, dialect: str = "ansi", **options: object) -> list[str]:
    return [w["message"] for w in parse_sql(sql, dialect=dialect, **options)["warnings"]]  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- projection subtypes


def test_identity_and_rename():
    assert edges("INSERT INTO t (a, b) SELECT s.x, s.y AS z FROM s") == {
        ("s.x", "t.a", P, ID),
        ("s.y", "t.b", P, ID),
    }


def test_functions_operators_and_casts_transform():
    sql = "CREATE TABLE t AS SELECT s.x + s.y AS total, CAST(s.d AS DATE) AS d, COALESCE(s.a, s.b) AS c FROM s"
    assert edges(sql) == {
        ("s.x", "t.total", P, TR),
        ("s.y", "t.total", P, TR),
        ("s.d", "t.d", P, TR),
        ("s.a", "t.c", P, TR),
        ("s.b", "t.c", P, TR),
    }


def test_aggregates_counts_and_group_by():
    sql = "INSERT INTO t (k, total, n, nd) SELECT s.k, SUM(s.v), COUNT(*), COUNT(DISTINCT s.u) FROM s GROUP BY s.k"
    assert edges(sql) == {
        ("s.k", "t.k", P, ID),
        ("s.v", "t.total", P, AG),
        ("s.u", "t.nd", P, AM),  # COUNT(*) reads no column
        ("s.k", "t", Q, "GROUP_BY"),
    }


def test_masking_functions_from_the_profile_and_the_highest_step_wins():
    sql = (
        "CREATE TABLE t AS SELECT md5(s.email) AS e, sha2(s.phone, 256) AS p, mask_hash(s.name) AS n,"
        " upper(md5(s.x)) AS x2, SUM(hash(s.y)) AS y, COUNT(DISTINCT md5(s.z)) AS z FROM s"
    )
    assert edges(sql, "hive") == {
        ("default.s.email", "default.t.e", P, TM),
        ("default.s.phone", "default.t.p", P, TM),
        ("default.s.name", "default.t.n", P, TM),  # an anonymous call, matched by name
        ("default.s.x", "default.t.x2", P, TM),
        ("default.s.y", "default.t.y", P, AG),
        ("default.s.z", "default.t.z", P, AM),
    }


def test_typed_masking_node_matched_by_its_sql_name():
    # T-SQL HASHBYTES('MD5', x) parses as exp.MD5; the profile lists hashbytes.
    assert edges("SELECT HASHBYTES('MD5', s.ssn) AS h INTO dbo.t FROM dbo.s", "tsql") == {
        ("dbo.s.ssn", "dbo.t.h", P, TM)
    }


def test_several_paths_to_one_column_keep_the_highest():
    assert edges("CREATE TABLE t AS SELECT s.a + SUM(s.a) OVER () AS x FROM s") == {("s.a", "t.x", P, AG)}


# ----------------------------------------------------------------------------- conditions


def test_case_conditions_and_simple_case_operand_are_conditional():
    sql = (
        "CREATE TABLE t AS SELECT CASE WHEN s.status = 'A' THEN s.amount ELSE 0 END AS amt,"
        " CASE s.kind WHEN 1 THEN s.a END AS k FROM s"
    )
    assert edges(sql) == {
        ("s.amount", "t.amt", P, TR),
        ("s.a", "t.k", P, TR),
        ("s.status", "t", Q, "CONDITIONAL"),
        ("s.kind", "t", Q, "CONDITIONAL"),
        ("s.status", "t.amt", Q, "CONDITIONAL"),
        ("s.kind", "t.k", Q, "CONDITIONAL"),
    }


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("spark", "CREATE TABLE t AS SELECT IF(s.c, s.a, s.b) AS v FROM s"),
        ("tsql", "SELECT IIF(s.c = 1, s.a, s.b) AS v INTO t FROM s"),
        ("snowflake", "CREATE TABLE t AS SELECT IFF(s.c, s.a, s.b) AS v FROM s"),
    ],
)
def test_if_first_argument_is_conditional(dialect, sql):
    found = {(source.rsplit(".", 1)[1], kind, subtype) for source, _, kind, subtype in edges(sql, dialect)}
    assert found == {("a", P, TR), ("b", P, TR), ("c", Q, "CONDITIONAL")}


def test_nvl2_and_decode():
    sql = "CREATE TABLE t AS SELECT NVL2(s.x, s.y, s.z) AS v, DECODE(s.c, 1, s.a, s.b) AS w FROM s"
    assert edges(sql, "oracle") == {
        ("s.x", "t", Q, "CONDITIONAL"),
        ("s.x", "t.v", Q, "CONDITIONAL"),
        ("s.y", "t.v", P, TR),
        ("s.z", "t.v", P, TR),
        ("s.c", "t", Q, "CONDITIONAL"),
        ("s.c", "t.w", Q, "CONDITIONAL"),
        ("s.a", "t.w", P, TR),
        ("s.b", "t.w", P, TR),
    }


def test_function_the_parser_rewrites_into_an_if_is_no_condition():
    # Snowflake DIV0(a, b) is parsed as IF(b = 0 AND ..., 0, a / b): not a written condition.
    assert edges("CREATE TABLE t AS SELECT DIV0(s.a, s.b) AS r FROM s", "snowflake") == {
        ("public.s.a", "public.t.r", P, TR),
        ("public.s.b", "public.t.r", P, TR),
    }


# ----------------------------------------------------------------------------- windows


def test_window_specs_are_window_predicates_and_ranking_has_no_source():
    sql = (
        "CREATE TABLE t AS SELECT s.id, ROW_NUMBER() OVER (PARTITION BY s.k ORDER BY s.t) AS rn,"
        " SUM(s.v) OVER (PARTITION BY s.k) AS cum, LAG(s.v) OVER (ORDER BY s.t) AS prev FROM s"
    )
    assert edges(sql) == {
        ("s.id", "t.id", P, ID),
        ("s.v", "t.cum", P, AG),
        ("s.v", "t.prev", P, TR),
        ("s.k", "t", Q, "WINDOW"),
        ("s.t", "t", Q, "WINDOW"),
        ("s.k", "t.rn", Q, "WINDOW"),
        ("s.t", "t.rn", Q, "WINDOW"),
        ("s.k", "t.cum", Q, "WINDOW"),
        ("s.t", "t.prev", Q, "WINDOW"),
    }


def test_predicate_on_a_derived_column_reads_its_window_keys():
    sql = (
        "INSERT INTO t SELECT d.id FROM (SELECT s.id, ROW_NUMBER() OVER (PARTITION BY s.k ORDER BY s.ts DESC) AS rn"
        " FROM s) d WHERE d.rn = 1"
    )
    assert edges(sql) == {
        ("s.id", "t.id", P, ID),
        ("s.k", "t", Q, "WINDOW"),
        ("s.ts", "t", Q, "WINDOW"),
        ("s.k", "t", Q, "FILTER"),
        ("s.ts", "t", Q, "FILTER"),
    }


def test_named_window():
    sql = "CREATE TABLE t AS SELECT SUM(s.v) OVER w AS x FROM s WINDOW w AS (PARTITION BY s.k ORDER BY s.d)"
    assert edges(sql, "postgres") == {
        ("public.s.v", "public.t.x", P, AG),
        ("public.s.k", "public.t", Q, "WINDOW"),
        ("public.s.d", "public.t", Q, "WINDOW"),
        ("public.s.k", "public.t.x", Q, "WINDOW"),
        ("public.s.d", "public.t.x", Q, "WINDOW"),
    }


def test_conditions_and_windows_shape_the_columns_their_values_reach():
    # Through a CTE, a star, a derived table and a UNION branch; a window read only by WHERE shapes no column,
    # and a condition on a derived column reads all of its bases.
    sql = (
        "INSERT INTO t (band, rn, copy, pick) WITH c AS (SELECT CASE WHEN s.amt > 10 THEN 'H' END AS band,"
        " ROW_NUMBER() OVER (PARTITION BY s.k ORDER BY s.d) AS rn, s.v FROM s)"
        " SELECT * FROM (SELECT c.band, c.rn, c.rn + 1 AS copy, IF(c.band = 'H', c.v, 0) AS pick FROM c"
        " UNION ALL SELECT u.a, u.b, u.c, u.d FROM u) x"
        " WHERE x.rn IN (SELECT ROW_NUMBER() OVER (PARTITION BY w.z) FROM w)"
    )
    shaped = {(e[0], e[1], e[3]) for e in edges(sql, "spark") if e[2] == Q and e[1] != "default.t"}
    assert shaped == {
        ("default.s.amt", "default.t.band", "CONDITIONAL"),
        ("default.s.k", "default.t.rn", "WINDOW"),
        ("default.s.d", "default.t.rn", "WINDOW"),
        ("default.s.k", "default.t.copy", "WINDOW"),
        ("default.s.d", "default.t.copy", "WINDOW"),
        ("default.s.amt", "default.t.pick", "CONDITIONAL"),
    }


def test_qualify_on_a_window_and_on_an_alias():
    sql = (
        "CREATE TABLE t AS SELECT s.k, SUM(s.v) AS total FROM s GROUP BY s.k HAVING SUM(s.v) > 10"
        " QUALIFY ROW_NUMBER() OVER (ORDER BY s.k) = 1"
    )
    assert edges(sql, "snowflake") == {
        ("public.s.k", "public.t.k", P, ID),
        ("public.s.v", "public.t.total", P, AG),
        ("public.s.k", "public.t", Q, "GROUP_BY"),
        ("public.s.v", "public.t", Q, "FILTER"),
        ("public.s.k", "public.t", Q, "WINDOW"),
        ("public.s.k", "public.t", Q, "FILTER"),
    }


# ----------------------------------------------------------------------------- clauses


def test_subqueries_in_where_are_filters_correlated_or_not():
    sql = (
        "INSERT INTO t SELECT a.id FROM a WHERE a.k IN (SELECT b.k FROM b WHERE b.flag = 1)"
        " AND NOT EXISTS (SELECT 1 FROM c WHERE c.id = a.id)"
    )
    assert edges(sql) == {
        ("a.id", "t.id", P, ID),
        ("a.id", "t", Q, "FILTER"),
        ("a.k", "t", Q, "FILTER"),
        ("b.k", "t", Q, "FILTER"),
        ("b.flag", "t", Q, "FILTER"),
        ("c.id", "t", Q, "FILTER"),
    }


def test_scalar_subquery_is_a_value_and_its_where_a_filter():
    sql = "INSERT INTO t SELECT a.id, (SELECT MAX(b.v) FROM b WHERE b.id = a.id) AS mx FROM a"
    assert edges(sql) == {
        ("a.id", "t.id", P, ID),
        ("b.v", "t.mx", P, AG),
        ("a.id", "t", Q, "FILTER"),
        ("b.id", "t", Q, "FILTER"),
    }


def test_join_on_and_using_both_sides():
    sql = "CREATE TABLE t AS SELECT a.x, b.y FROM a JOIN b ON a.k = b.k LEFT JOIN c USING (id)"
    schema = {"a": ["k", "x", "id"], "b": ["k", "y"], "c": ["id"]}
    assert edges(sql, schema=schema) == {
        ("a.x", "t.x", P, ID),
        ("b.y", "t.y", P, ID),
        ("a.k", "t", Q, "JOIN"),
        ("b.k", "t", Q, "JOIN"),
        ("a.id", "t", Q, "JOIN"),
        ("c.id", "t", Q, "JOIN"),
    }


def test_order_by_ordinal_and_column_sort():
    assert edges("INSERT INTO t SELECT s.a, s.b FROM s ORDER BY 2, s.c") == {
        ("s.a", "t.a", P, ID),
        ("s.b", "t.b", P, ID),
        ("s.b", "t", Q, "SORT"),
        ("s.c", "t", Q, "SORT"),
    }


def test_group_by_and_order_by_a_select_alias():
    sql = "CREATE TABLE t AS SELECT UPPER(s.name) AS name FROM s GROUP BY name ORDER BY name"
    assert edges(sql, "postgres") == {
        ("public.s.name", "public.t.name", P, TR),
        ("public.s.name", "public.t", Q, "GROUP_BY"),
        ("public.s.name", "public.t", Q, "SORT"),
    }


def test_aggregate_filter_and_ordered_aggregate():
    sql = "CREATE TABLE t AS SELECT SUM(s.v) FILTER (WHERE s.ok) AS v, ARRAY_AGG(s.x ORDER BY s.y) AS xs FROM s"
    assert edges(sql, "postgres") == {
        ("public.s.v", "public.t.v", P, AG),
        ("public.s.x", "public.t.xs", P, AG),
        ("public.s.ok", "public.t", Q, "CONDITIONAL"),
        ("public.s.ok", "public.t.v", Q, "CONDITIONAL"),  # it decides which rows the sum adds up
        ("public.s.y", "public.t", Q, "SORT"),
    }


def test_ordered_set_aggregate_takes_its_value_from_the_order():
    sql = (
        "CREATE TABLE t AS SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY a.x) AS med,"
        " LISTAGG(a.n, ',') WITHIN GROUP (ORDER BY a.o) AS names FROM a"
    )
    assert edges(sql, "snowflake") == {
        ("public.a.x", "public.t.med", P, AG),
        ("public.a.n", "public.t.names", P, AG),
        ("public.a.o", "public.t", Q, "SORT"),
    }


# ----------------------------------------------------------------------------- query structure


def test_cte_chain_union_and_aggregation():
    sql = (
        "WITH a AS (SELECT x.id, x.v FROM x UNION ALL SELECT y.id, y.w FROM y),"
        " b AS (SELECT a.id, SUM(a.v) AS total FROM a GROUP BY a.id)"
        " INSERT INTO t SELECT b.id, b.total FROM b"
    )
    assert edges(sql) == {
        ("x.id", "t.id", P, ID),
        ("y.id", "t.id", P, ID),
        ("x.v", "t.total", P, AG),
        ("y.w", "t.total", P, AG),
        ("x.id", "t", Q, "GROUP_BY"),
        ("y.id", "t", Q, "GROUP_BY"),
    }


def test_union_order_by_and_union_by_name():
    assert edges("CREATE TABLE t AS SELECT a.x FROM a UNION SELECT b.y FROM b ORDER BY x") == {
        ("a.x", "t.x", P, ID),
        ("b.y", "t.x", P, ID),
        ("a.x", "t", Q, "SORT"),
        ("b.y", "t", Q, "SORT"),
    }
    assert edges("CREATE TABLE t AS SELECT a.x, a.y FROM a UNION ALL BY NAME SELECT b.y, b.x FROM b", "duckdb") == {
        ("main.a.x", "main.t.x", P, ID),
        ("main.a.y", "main.t.y", P, ID),
        ("main.b.x", "main.t.x", P, ID),
        ("main.b.y", "main.t.y", P, ID),
    }


def test_recursive_cte_terminates():
    sql = (
        "WITH RECURSIVE r (n, x) AS (SELECT 1, s.x FROM s UNION ALL SELECT r.n + 1, r.x FROM r WHERE r.n < 10)"
        " INSERT INTO t SELECT r.n, r.x FROM r"
    )
    assert edges(sql, "postgres") == {("public.s.x", "public.t.x", P, ID)}


def test_lateral_column_alias():
    assert edges("CREATE TABLE t AS SELECT s.a AS x, x + 1 AS y FROM s", "snowflake") == {
        ("public.s.a", "public.t.x", P, ID),
        ("public.s.a", "public.t.y", P, TR),
    }


# ----------------------------------------------------------------------------- stars and resolution


def test_star_expands_from_the_schema_into_positional_target_columns():
    schema = {"s": ["a", "b"], "t": ["x", "y"]}
    assert edges("INSERT INTO t SELECT * FROM s", schema=schema) == {("s.a", "t.x", P, ID), ("s.b", "t.y", P, ID)}


def test_unknown_star_gives_a_star_edge_and_a_warning():
    sql = "CREATE TABLE t AS SELECT * FROM s"
    assert edges(sql) == {("s.*", "t.*", P, ID)}
    assert warnings(sql) == ["cannot expand s.*: its columns are unknown"]


def test_qualified_star_and_star_except():
    assert edges("CREATE TABLE t AS SELECT a.*, b.z FROM a JOIN b ON a.k = b.k", schema={"a": ["k", "v"]}) == {
        ("a.k", "t.k", P, ID),
        ("a.v", "t.v", P, ID),
        ("b.z", "t.z", P, ID),
        ("a.k", "t", Q, "JOIN"),
        ("b.k", "t", Q, "JOIN"),
    }
    assert edges("CREATE TABLE d.t AS SELECT * EXCEPT (b) FROM d.s", "bigquery", schema={"d.s": ["a", "b", "c"]}) == {
        ("d.s.a", "d.t.a", P, ID),
        ("d.s.c", "d.t.c", P, ID),
    }


def test_star_through_a_cte_with_unknown_columns_resolves_named_columns():
    sql = "WITH c AS (SELECT * FROM s) INSERT INTO t SELECT c.a FROM c"
    assert edges(sql) == {("s.a", "t.a", P, ID)}


def test_unqualified_columns_resolve_through_the_schema():
    sql = "CREATE TABLE t AS SELECT x, y FROM a JOIN b ON a.k = b.k"
    assert edges(sql, schema={"a": ["k", "x"], "b": ["k", "y"]}) == {
        ("a.x", "t.x", P, ID),
        ("b.y", "t.y", P, ID),
        ("a.k", "t", Q, "JOIN"),
        ("b.k", "t", Q, "JOIN"),
    }


def test_ambiguous_column_gets_the_unresolved_marker_and_a_warning():
    sql = "CREATE TABLE t AS SELECT x FROM a JOIN b ON a.k = b.k"
    assert ("?.x", "t.x", P, ID) in edges(sql)
    assert warnings(sql) == ["cannot resolve column x: ambiguous"]


def test_correlated_column_resolves_in_the_enclosing_query():
    sql = "CREATE TABLE t AS SELECT a.x FROM a WHERE a.k IN (SELECT k2 FROM b)"
    assert edges(sql, schema={"a": ["k", "x"], "b": ["k2"]}) == {
        ("a.x", "t.x", P, ID),
        ("a.k", "t", Q, "FILTER"),
        ("b.k2", "t", Q, "FILTER"),
    }


def test_quoted_and_mixed_case_names_fold():
    sql = 'INSERT INTO "Dwh"."T" SELECT "S"."Amount" AS "Amt" FROM "Stg"."Sales" "S"'
    assert edges(sql, "postgres") == {("stg.sales.amount", "dwh.t.amt", P, ID)}


# ----------------------------------------------------------------------------- target columns


def test_positional_insert_from_ddl_and_from_an_earlier_ctas():
    assert edges("CREATE TABLE t (c1 INT, c2 INT); INSERT INTO t SELECT s.a, s.b FROM s") == {
        ("s.a", "t.c1", P, ID),
        ("s.b", "t.c2", P, ID),
    }
    assert edges("CREATE TABLE t AS SELECT s.a AS p, s.b AS q FROM s; INSERT INTO t SELECT u.x, u.y FROM u") == {
        ("s.a", "t.p", P, ID),
        ("s.b", "t.q", P, ID),
        ("u.x", "t.p", P, ID),
        ("u.y", "t.q", P, ID),
    }


def test_explicit_schema_wins_over_ddl():
    sql = "CREATE TABLE t (c1 INT, c2 INT); INSERT INTO t SELECT s.a, s.b FROM s"
    assert edges(sql, schema={"t": ["k1", "k2"]}) == {("s.a", "t.k1", P, ID), ("s.b", "t.k2", P, ID)}


def test_hive_static_partition_gets_no_edge_and_dynamic_goes_last():
    ddl = "CREATE TABLE t (a INT, b INT) PARTITIONED BY (dt STRING);"
    static = ddl + "INSERT OVERWRITE TABLE t PARTITION (dt='2024') SELECT s.x, s.y FROM s"
    assert edges(static, "hive") == {("default.s.x", "default.t.a", P, ID), ("default.s.y", "default.t.b", P, ID)}
    dynamic = ddl + "INSERT OVERWRITE TABLE t PARTITION (dt) SELECT s.x, s.y, s.d FROM s"
    assert ("default.s.d", "default.t.dt", P, ID) in edges(dynamic, "hive")


def test_create_table_like_copies_the_columns():
    sql = "CREATE TABLE t LIKE s; INSERT INTO t SELECT u.a, u.b FROM u"
    assert edges(sql, "hive", schema={"default.s": ["p", "q"]}) == {
        ("default.u.a", "default.t.p", P, ID),
        ("default.u.b", "default.t.q", P, ID),
    }


def test_view_column_list_and_alter_view():
    assert edges("CREATE VIEW v (m, n) AS SELECT s.a, s.b FROM s") == {("s.a", "v.m", P, ID), ("s.b", "v.n", P, ID)}
    assert edges("ALTER VIEW v AS SELECT s.a FROM s", "hive") == {("default.s.a", "default.v.a", P, ID)}


def test_select_into_and_replace():
    assert edges("SELECT s.a INTO dbo.t FROM dbo.s WHERE s.f = 1", "tsql") == {
        ("dbo.s.a", "dbo.t.a", P, ID),
        ("dbo.s.f", "dbo.t", Q, "FILTER"),
    }
    assert edges("REPLACE INTO t (a) SELECT s.x FROM s", "mysql") == {("s.x", "t.a", P, ID)}


def test_insert_values_has_no_column_edges():
    assert edges("INSERT INTO t (a, b) VALUES (1, 2)") == set()


# ----------------------------------------------------------------------------- DML


def test_merge_update_insert_on_and_matched_condition():
    sql = (
        "MERGE INTO dwh.t AS t USING stg.s AS s ON t.id = s.id"
        " WHEN MATCHED AND s.flag = 'U' THEN UPDATE SET x = s.x"
        " WHEN NOT MATCHED THEN INSERT (id, x) VALUES (s.id, s.x)"
    )
    assert edges(sql, "postgres") == {
        ("dwh.t.id", "dwh.t", Q, "JOIN"),
        ("stg.s.id", "dwh.t", Q, "JOIN"),
        ("stg.s.flag", "dwh.t", Q, "FILTER"),
        ("stg.s.id", "dwh.t.id", P, ID),
        ("stg.s.x", "dwh.t.x", P, ID),
    }


def test_merge_insert_without_columns_is_positional_and_star_is_by_name():
    sql = "MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v + 1)"
    assert edges(sql, schema={"t": ["id", "value"]}) >= {("s.id", "t.id", P, ID), ("s.v", "t.value", P, TR)}
    star = "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    assert edges(star, "databricks", schema={"s": ["id", "v"]}) == {
        ("default.s.id", "default.t", Q, "JOIN"),
        ("default.t.id", "default.t", Q, "JOIN"),
        ("default.s.id", "default.t.id", P, ID),
        ("default.s.v", "default.t.v", P, ID),
    }


def test_update_from_and_update_join():
    assert edges("UPDATE t SET a = s.b + 1 FROM s WHERE t.id = s.id AND s.ok", "postgres") == {
        ("public.s.b", "public.t.a", P, TR),
        ("public.t.id", "public.t", Q, "FILTER"),
        ("public.s.id", "public.t", Q, "FILTER"),
        ("public.s.ok", "public.t", Q, "FILTER"),
    }
    assert edges("UPDATE t JOIN s ON t.id = s.id SET t.a = s.b WHERE s.c > 1", "mysql") == {
        ("s.b", "t.a", P, ID),
        ("t.id", "t", Q, "JOIN"),
        ("s.id", "t", Q, "JOIN"),
        ("s.c", "t", Q, "FILTER"),
    }


def test_update_of_a_column_tuple_from_a_subquery():
    assert edges("UPDATE t SET (a, b) = (SELECT s.a, s.b + 1 FROM s WHERE s.id = t.id)", "postgres") == {
        ("public.s.a", "public.t.a", P, ID),
        ("public.s.b", "public.t.b", P, TR),
        ("public.s.id", "public.t", Q, "FILTER"),
        ("public.t.id", "public.t", Q, "FILTER"),
    }


def test_tsql_update_through_a_from_alias():
    assert edges("UPDATE x SET a = s.b FROM dbo.t AS x JOIN dbo.s ON x.id = s.id", "tsql") == {
        ("dbo.s.b", "dbo.t.a", P, ID),
        ("dbo.t.id", "dbo.t", Q, "JOIN"),
        ("dbo.s.id", "dbo.t", Q, "JOIN"),
    }


def test_upsert_assignments_read_the_proposed_row():
    sql = (
        "INSERT INTO t (id, x) SELECT s.id, s.x FROM s"
        " ON CONFLICT (id) DO UPDATE SET x = t.x + EXCLUDED.x WHERE t.y > 0"
    )
    assert edges(sql, "postgres") == {
        ("public.s.id", "public.t.id", P, ID),
        ("public.s.x", "public.t.x", P, TR),  # IDENTITY when inserted, TRANSFORMATION when updated: the highest
        ("public.t.x", "public.t.x", P, TR),
        ("public.t.y", "public.t", Q, "FILTER"),
    }
    sql = "INSERT INTO t (id, x) SELECT s.id, s.x FROM s ON DUPLICATE KEY UPDATE x = t.x + VALUES(x)"
    assert edges(sql, "mysql") == {("s.id", "t.id", P, ID), ("s.x", "t.x", P, TR), ("t.x", "t.x", P, TR)}


def test_delete_has_predicates_only():
    assert edges("DELETE FROM t WHERE t.d < (SELECT MAX(s.d) FROM s)", "postgres") == {
        ("public.t.d", "public.t", Q, "FILTER"),
        ("public.s.d", "public.t", Q, "FILTER"),
    }


# ----------------------------------------------------------------------------- nested data


def test_lateral_view_explode():
    sql = "INSERT INTO t SELECT s.id, item FROM s LATERAL VIEW OUTER explode(s.items) x AS item"
    assert edges(sql, "hive") == {("default.s.id", "default.t.id", P, ID), ("default.s.items", "default.t.item", P, TR)}


def test_unnest_and_flatten():
    assert edges("INSERT INTO t SELECT s.id, u.item FROM s CROSS JOIN UNNEST(s.items) AS u(item)", "trino") == {
        ("s.id", "t.id", P, ID),
        ("s.items", "t.item", P, TR),
    }
    assert edges("INSERT INTO d.t SELECT item FROM d.s, UNNEST(s.items) AS item", "bigquery") == {
        ("d.s.items", "d.t.item", P, TR)
    }
    sql = "CREATE TABLE t AS SELECT f.value AS v FROM s, LATERAL FLATTEN(input => s.arr) f"
    assert edges(sql, "snowflake") == {("public.s.arr", "public.t.v", P, TR)}


def test_zipped_unnest_maps_arrays_to_their_columns():
    sql = "INSERT INTO t SELECT x.k, x.v FROM raw CROSS JOIN UNNEST(raw.keys, raw.vals) AS x(k, v)"
    assert edges(sql, "trino") == {("raw.keys", "t.k", P, TR), ("raw.vals", "t.v", P, TR)}


def test_struct_and_map_access_trace_to_the_base_column():
    sql = "CREATE TABLE t AS SELECT s.addr.city AS city, addr.zip AS zip, s.m['k'] AS mk FROM s"
    assert edges(sql, "hive", schema={"default.s": ["addr", "m"]}) == {
        ("default.s.addr", "default.t.city", P, TR),
        ("default.s.addr", "default.t.zip", P, TR),
        ("default.s.m", "default.t.mk", P, TR),
    }


def test_pivot_and_unpivot():
    schema = {"public.s": ["id", "k", "v", "a", "b"]}
    sql = "CREATE TABLE t AS SELECT p.id, p.x_total FROM s PIVOT (SUM(s.v) AS total FOR s.k IN ('a' AS x)) AS p"
    assert edges(sql, "snowflake", schema={"public.s": ["id", "k", "v"]}) == {
        ("public.s.id", "public.t.id", P, ID),
        ("public.s.v", "public.t.x_total", P, AG),
        ("public.s.id", "public.t", Q, "GROUP_BY"),
        ("public.s.k", "public.t", Q, "CONDITIONAL"),
    }
    sql = "CREATE TABLE t AS SELECT u.id, u.val FROM s UNPIVOT (val FOR name IN (a, b)) u"
    assert edges(sql, "snowflake", schema=schema) == {
        ("public.s.id", "public.t.id", P, ID),
        ("public.s.a", "public.t.val", P, ID),
        ("public.s.b", "public.t.val", P, ID),
    }


# ----------------------------------------------------------------------------- the expression walk


def test_each_expression_class_is_walked_by_its_nearest_listed_visitor():
    """``visit`` dispatches through ``_VISITORS``: a class not listed takes its nearest listed ancestor's visitor,
    whatever was looked up before (a sqlglot function or query has ``exp.Expression`` before ``exp.Func`` /
    ``exp.Query`` in its method resolution order, so remembering ``exp.Expression``'s must not shadow them)."""
    from sqlglot import exp

    from lineage_cli.harvest.sql.columns.analysis import _Analysis, _visitor

    assert _visitor(exp.Expression) is _Analysis._operator
    assert _visitor(exp.Add) is _Analysis._operator
    assert _visitor(exp.Sum) is _Analysis._function
    assert _visitor(exp.Select) is _Analysis._subquery
    assert _visitor(exp.Pseudocolumn) is _Analysis._column  # Oracle's ROWNUM, a Column subclass
    assert _visitor(exp.Sort) is _Analysis._operator  # Hive's SORT BY: an Order to sqlglot, no aggregate's ORDER BY


# ----------------------------------------------------------------------------- statements


def test_hive_multi_insert_shares_the_from():
    sql = (
        "FROM src s JOIN dim d ON s.k = d.k"
        " INSERT INTO TABLE a SELECT s.v, d.n WHERE d.f = 1"
        " INSERT INTO TABLE b SELECT d.n"
    )
    assert edges(sql, "hive") == {
        ("default.src.v", "default.a.v", P, ID),
        ("default.dim.n", "default.a.n", P, ID),
        ("default.dim.n", "default.b.n", P, ID),
        ("default.dim.f", "default.a", Q, "FILTER"),
        ("default.src.k", "default.a", Q, "JOIN"),
        ("default.dim.k", "default.a", Q, "JOIN"),
        ("default.src.k", "default.b", Q, "JOIN"),
        ("default.dim.k", "default.b", Q, "JOIN"),
    }


def test_oracle_insert_all():
    sql = (
        "INSERT ALL INTO dw.small (id, amount) VALUES (id, amount) INTO dw.log (id) VALUES (id)"
        " SELECT o.id, o.amount FROM ods.orders o WHERE o.status = 'NEW'"
    )
    assert edges(sql, "oracle") == {
        ("ods.orders.id", "dw.small.id", P, ID),
        ("ods.orders.amount", "dw.small.amount", P, ID),
        ("ods.orders.id", "dw.log.id", P, ID),
        ("ods.orders.status", "dw.small", Q, "FILTER"),
        ("ods.orders.status", "dw.log", Q, "FILTER"),
    }


def test_broken_statement_is_an_error_and_the_others_keep_their_lineage():
    result = parse_sql("SELECT 1;\nINSERT INTO t SELECT FROM WHERE;\nINSERT INTO t2 SELECT s.a FROM s")
    assert [e["line"] for e in result["errors"]] == [2]
    # the broken one keeps its target, read approximately from its tokens, and no columns
    assert [(s["line"], s["targets"], s.get("approximate")) for s in result["statements"]] == [
        (2, ["t"], True),
        (3, ["t2"], None),
    ]
    assert result["statements"][0]["columns"] == []
    assert result["statements"][1]["columns"] == [
        {"source": "s.a", "target": "t2.a", "kind": "projection", "subtype": "IDENTITY"}
    ]


def test_variables_are_substituted_before_parsing():
    sql = "INSERT INTO ${hivevar:db}.t SELECT s.a FROM #src# s WHERE s.dt = '{{ etl_date }}'"
    variables = {"db": "dwh", "src": "stg.s", "etl_date": "2024-01-01"}
    assert edges(sql, "hive", variables=variables) == {
        ("stg.s.a", "dwh.t.a", P, ID),
        ("stg.s.dt", "dwh.t", Q, "FILTER"),
    }


def test_output_is_deterministic_and_sorted():
    sql = "INSERT INTO t SELECT s.b, s.a FROM s WHERE s.c AND s.a"
    first, second = parse_sql(sql), parse_sql(sql)
    assert first == second
    columns = first["statements"][0]["columns"]
    assert columns == sorted(columns, key=lambda c: (c["source"], c["target"], c["kind"], c["subtype"]))


# ----------------------------------------------------------------------------- schema and templates


def test_schema_shapes(tmp_path):
    flat = SchemaCatalog.from_mapping({"S.T": ["A", "b"]})
    typed = SchemaCatalog.from_mapping({"s.t": {"a": "INT", "b": None}})
    nested = SchemaCatalog.from_mapping({"s": {"t": {"a": "INT", "b": "TEXT"}}})
    catalogs = SchemaCatalog.from_mapping({"c": {"s": {"t": {"a": "INT"}}}})
    assert flat.columns("s.t") == typed.columns("s.t") == nested.columns("s.t") == ["a", "b"]
    assert catalogs.columns("c.s.t") == ["a"]
    (tmp_path / "schema.yaml").write_text("s.t: [a, b]\n")
    (tmp_path / "schema.json").write_text(json.dumps({"s": {"t": {"a": "INT"}}}))
    assert SchemaCatalog.from_file(tmp_path / "schema.yaml").columns("s.t") == ["a", "b"]
    assert SchemaCatalog.from_file(tmp_path / "schema.json").types("s.t") == {"a": "INT"}
    with pytest.raises(SchemaError):
        SchemaCatalog.from_mapping({"s.t": 3})


def test_a_schema_file_that_cannot_be_read_is_a_schema_error_with_the_systems_words(tmp_path):
    with pytest.raises(SchemaError, match=r"^\[Errno 2\] No such file or directory: '.*missing\.json'$"):
        SchemaCatalog.from_file(tmp_path / "missing.json")
    (tmp_path / "latin.yaml").write_bytes("s.t: [größe]\n".encode("latin-1"))
    with pytest.raises(SchemaError, match="can't decode byte 0xf6 in position 8"):
        SchemaCatalog.from_file(tmp_path / "latin.yaml")


def test_an_alias_bomb_in_a_schema_is_refused_before_it_is_read(tmp_path):
    (tmp_path / "schema.yaml").write_text(yaml_bomb() + "s.t: *l8\n")
    code = (
        "from lineage_cli.harvest.schema import SchemaCatalog, SchemaError\n"
        "try:\n    SchemaCatalog.from_file('schema.yaml')\nexcept SchemaError as error:\n    print(error)\n"
    )
    run = run_bounded(code, cwd=tmp_path, seconds=30)
    assert (
        run.stdout.strip()
        == "schema.yaml:6:5: YAML aliases expand to more than 100,000 nodes: refused (an alias bomb?)"
    )
    assert run.seconds < 2 and run.peak_mb < 300


def test_templates_keep_unknown_placeholders_and_line_numbers():
    sql = "SELECT '${a}', '#b#',\n'{{ c }}', '${hiveconf:d}'"
    assert substitute(sql, {"a": "1", "d": "x\ny"}) == "SELECT '1', '#b#',\n'{{ c }}', 'x y'"


# ----------------------------------------------------------------------------- the documentation


def _documented_examples() -> list[tuple[str, str]]:
    """(SQL, edges) of every example in docs/lineage-semantics.md: a sql block right before a text block (whose
    lines are edges, ``source -> target KIND/SUBTYPE``, and maybe expressions, ``column = text``)."""
    text = SEMANTICS.read_text(encoding="utf-8")
    return re.findall(r"```sql\n(.*?)```\n```text\n(.*?)```", text, re.DOTALL)


def test_the_semantics_document_has_examples():
    assert len(_documented_examples()) >= 12


@pytest.mark.parametrize(("sql", "listed"), _documented_examples())
def test_documented_examples_are_what_the_engine_gives(sql, listed):
    schema = re.search(r"^-- schema: (.*)$", sql, re.MULTILINE)
    result = parse_sql(sql, schema=json.loads(schema.group(1)) if schema else None)  # the dialect is a comment
    found = sorted(
        f"{c['source']} -> {c['target']} {c['kind'].upper()}/{c['subtype']}"
        for statement in result["statements"]
        for c in statement["columns"]
    )
    lines = listed.strip().splitlines()
    assert found == [line for line in lines if " -> " in line]
    expressions = dict(line.split(" = ", 1) for line in lines if " -> " not in line)
    if expressions:  # an example of the expression behind a column lists every target column's
        assert {c: t for statement in result["statements"] for c, t in statement["expressions"].items()} == expressions


# ----------------------------------------------------------------------------- generated warehouses


_ORDER = [ID, TR, TM, AG, AM]


Triples = set[tuple[str, str, str]]


def _harvest_columns(root: Path, dialect: str) -> tuple[Triples, Triples, Triples, list]:
    """Every column triple of a generated warehouse, DDL first, files in order, one catalog: projection, predicate
    to a table, predicate to a column."""
    catalog = SchemaCatalog.from_file(root / "schema.json")
    files = sorted((root / "ddl").glob("*.sql")) + sorted((root / "sql").rglob("*.sql"))
    best: dict[tuple[str, str], int] = {}
    predicates: Triples = set()
    predicate_columns: Triples = set()
    issues = []
    for path in files:
        script = analyze_script(path.read_text(encoding="utf-8"), str(path), dialect, catalog=catalog)
        issues.extend(script.issues)
        for lineage in script.lineage:
            for edge in lineage.columns:
                if edge.kind == P:  # the ground truth keeps the highest subtype of a pair over the corpus
                    key = (edge.source, edge.target)
                    best[key] = max(best.get(key, 0), _ORDER.index(edge.subtype))
                elif edge.target in lineage.targets:
                    predicates.add((edge.source, edge.target, edge.subtype))
                else:
                    predicate_columns.add((edge.source, edge.target, edge.subtype))
    return {(s, t, _ORDER[i]) for (s, t), i in best.items()}, predicates, predicate_columns, issues


@pytest.mark.parametrize("dialect", ["hive", "spark", "postgres", "snowflake"])
def test_generated_warehouse_matches_the_ground_truth_exactly(tmp_path, dialect):
    out = generate_warehouse(tmp_path / dialect, "--tables", "120", "--dialect", dialect)
    truth = json.loads((out / "ground_truth_columns.json").read_text())
    projection, predicates, predicate_columns, issues = _harvest_columns(out, dialect)
    assert issues == []
    expected_projection = {tuple(edge) for edge in truth["projection"]}
    expected_predicates = {tuple(edge) for edge in truth["predicate"]}
    expected_predicate_columns = {tuple(edge) for edge in truth["predicate_columns"]}
    assert sorted(expected_projection - projection) == [] and sorted(projection - expected_projection) == []
    assert sorted(expected_predicates - predicates) == [] and sorted(predicates - expected_predicates) == []
    assert sorted(expected_predicate_columns - predicate_columns) == []
    assert sorted(predicate_columns - expected_predicate_columns) == []


def test_an_expression_too_deep_to_print_costs_its_text_only(monkeypatch) -> None:
    """The SQL text of a column is made after its edges: a generator that gives up leaves the edges as they are."""
    from lineage_cli import parse_sql
    from lineage_cli.harvest.sql.columns import expressions

    def too_deep(*_: object) -> str:
        raise RecursionError

    sql = "INSERT INTO t.x (a, b) SELECT s.b, s.a + 1 FROM s.s s"
    monkeypatch.setattr(expressions, "_text", too_deep)
    (statement,) = parse_sql(sql, dialect="hive")["statements"]
    assert statement["expressions"] == {}
    assert {(c["source"], c["target"]) for c in statement["columns"]} == {("s.s.b", "t.x.a"), ("s.s.a", "t.x.b")}
