"""Table-level harvest: statement kinds, names, errors, and the golden fixture warehouse."""

from __future__ import annotations

import inspect
import json
from typing import get_type_hints

import pytest

from lineage_cli.harvest.assemble import Harvest
from lineage_cli.harvest.batch import harvest
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.harvest.sql.script import analyze_script, harvest_text
from lineage_cli.harvest.sql.statements import APPROXIMATE_NOTE
from lineage_cli.model import EdgeType, Graph, NodeKind
from tests.conftest import WAREHOUSE, generate_warehouse


def table_edges(graph: Graph) -> set[tuple[str, str]]:
    """Fold ``dataset -> transformation -> dataset`` into dataset pairs."""
    reads: dict[str, set[str]] = {}
    writes: dict[str, set[str]] = {}
    for source, target, kind, _ in graph.edges:
        if kind is EdgeType.READ:
            reads.setdefault(target, set()).add(source)
        elif kind is EdgeType.WRITE:
            writes.setdefault(source, set()).add(target)
    return {(s, t) for step in reads.keys() | writes.keys() for s in reads.get(step, ()) for t in writes.get(step, ())}


def lineage_of(sql: str, dialect: str = "hive", default_schema: str | None = None) -> list[tuple[str, list, list]]:
    script = analyze_script(sql, "<test>", dialect, default_schema)
    assert script.issues == []
    return [(s.type, s.targets, s.sources) for s in script.lineage]


def read_golden(name: str) -> list[str]:
    text = (WAREHOUSE / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_fixture_warehouse_table_edges_are_exact() -> None:
    result = harvest([WAREHOUSE])
    assert result.errors == []
    expected = {tuple(line.split(" -> ")) for line in read_golden("expected_table_edges.txt")}
    assert table_edges(result.graph) == expected


def test_fixture_warehouse_statements_and_provenance() -> None:
    result = harvest([WAREHOUSE])
    seen = []
    by_position: dict[tuple[str, int], tuple[set[str], set[str]]] = {}
    for source, target, kind, _ in result.graph.edges:
        if kind not in (EdgeType.READ, EdgeType.WRITE):
            continue
        step = source if kind is EdgeType.WRITE else target
        provenance = result.graph.provenance[step]
        key = (provenance.file.split("warehouse/", 1)[1], provenance.line)
        targets, sources = by_position.setdefault(key, (set(), set()))
        (targets if kind is EdgeType.WRITE else sources).add(target if kind is EdgeType.WRITE else source)
    for (file, line), (targets, sources) in sorted(by_position.items()):
        seen.append(f"{file}:{line} {', '.join(sorted(targets))} <- {', '.join(sorted(sources))}")
    assert seen == read_golden("expected_statements.txt")


def test_generated_warehouse_reproduces_ground_truth(hive_warehouse, hive_harvest) -> None:
    truth = json.loads((hive_warehouse / "ground_truth.json").read_text())
    result = hive_harvest
    assert result.errors == []
    assert table_edges(result.graph) == {tuple(edge) for edge in truth["table_edges"]}
    assert result.lineage_statements == truth["n_statements"]


@pytest.mark.parametrize("dialect", ["postgres", "snowflake", "spark"])
def test_generated_warehouse_other_dialects(tmp_path, dialect) -> None:
    out = generate_warehouse(tmp_path, "--tables", "80", "--dialect", dialect, "--statements-per-file", "3")
    truth = json.loads((out / "ground_truth.json").read_text())
    result = harvest([out / "sql"], dialect=dialect)
    assert result.errors == []
    assert table_edges(result.graph) == {tuple(edge) for edge in truth["table_edges"]}


@pytest.mark.parametrize(
    ("sql", "dialect", "expected"),
    [
        (
            "INSERT OVERWRITE TABLE ods.a PARTITION (dt='2024-01-01') SELECT s.x FROM stg.s s",
            "hive",
            [("insert", ["ods.a"], ["stg.s"])],
        ),
        (
            "FROM stg.src s INSERT OVERWRITE TABLE ods.a SELECT s.x "
            "INSERT INTO TABLE ods.b SELECT s.y WHERE s.k IN (SELECT k FROM stg.keys)",
            "hive",
            [("multi_insert", ["ods.a", "ods.b"], ["stg.keys", "stg.src"])],
        ),
        ("CREATE TABLE m.c AS WITH q AS (SELECT * FROM d.x) SELECT * FROM q", "hive", [("ctas", ["m.c"], ["d.x"])]),
        (
            "CREATE OR REPLACE VIEW r.v AS SELECT * FROM m.c JOIN m.d ON c.id = d.id",
            "spark",
            [("view", ["r.v"], ["m.c", "m.d"])],
        ),
        ("CREATE MATERIALIZED VIEW r.mv AS SELECT a FROM m.c", "postgres", [("view", ["r.mv"], ["m.c"])]),
        ("ALTER VIEW r.v AS SELECT * FROM m.e", "hive", [("alter_view", ["r.v"], ["m.e"])]),
        ("SELECT a.x INTO dbo.t2 FROM dbo.t1 a", "tsql", [("select_into", ["dbo.t2"], ["dbo.t1"])]),
        (
            "MERGE INTO d.t USING (SELECT * FROM s.a) src ON t.id = src.id WHEN MATCHED THEN UPDATE SET x = src.x",
            "postgres",
            [("merge", ["d.t"], ["d.t", "s.a"])],
        ),
        (
            "UPDATE t SET t.x = s.x FROM dbo.t t JOIN dbo.s s ON t.id = s.id",
            "tsql",
            [("update", ["dbo.t"], ["dbo.s", "dbo.t"])],
        ),
        ("UPDATE a.t SET x = s.x FROM a.s WHERE t.id = s.id", "postgres", [("update", ["a.t"], ["a.s", "a.t"])]),
        ("DELETE FROM a.t USING a.s WHERE t.id = s.id", "postgres", [("delete", ["a.t"], ["a.s", "a.t"])]),
        ("REPLACE INTO a.t SELECT * FROM a.s", "mysql", [("replace", ["a.t"], ["a.s"])]),
        (
            "INSERT INTO d.t SELECT e.item FROM s.a a LATERAL VIEW explode(a.items) e AS item",
            "hive",
            [("insert", ["d.t"], ["s.a"])],
        ),
        (
            "INSERT INTO d.t SELECT u.v FROM s.a CROSS JOIN UNNEST(s.a.arr) AS u(v)",
            "trino",
            [("insert", ["d.t"], ["s.a"])],
        ),
        ("INSERT INTO d.t SELECT * FROM generate_series(1, 3) g", "postgres", [("insert", ["d.t"], [])]),
        # only T-SQL inserts through a CTE: elsewhere the target is the table of that name
        ("WITH test AS (SELECT 42) INSERT INTO test VALUES (1)", "spark", [("insert", ["default.test"], [])]),
        (
            "WITH t AS (SELECT a FROM s.base) INSERT INTO t SELECT a FROM t",
            "postgres",
            [("insert", ["public.t"], ["s.base"])],
        ),
        (
            "SELECT * INTO dbo.all_films FROM dbo.films UNION ALL SELECT * FROM dbo.old_films",
            "tsql",
            [("select_into", ["dbo.all_films"], ["dbo.films", "dbo.old_films"])],
        ),
        # files: a location is a dataset named as written (case kept)
        (
            "INSERT OVERWRITE DIRECTORY 'hdfs://nn/Out/x' SELECT * FROM a.b",
            "hive",
            [("insert", ["hdfs://nn/Out/x"], ["a.b"])],
        ),
        ("LOAD DATA LOCAL INPATH '/data/in.csv' INTO TABLE a.b", "hive", [("load", ["a.b"], ["/data/in.csv"])]),
        ("COPY a.b FROM 's3://bucket/in/'", "redshift", [("copy", ["a.b"], ["s3://bucket/in/"])]),
        ("COPY (SELECT x FROM a.b) TO '/tmp/out.csv'", "postgres", [("copy", ["/tmp/out.csv"], ["a.b"])]),
        ("COPY INTO a.b FROM @stage/in/ FILE_FORMAT = (TYPE = CSV)", "snowflake", [("copy", ["a.b"], ["@stage/in/"])]),
        ("COPY INTO @stage/out/ FROM (SELECT x FROM a.b)", "snowflake", [("copy", ["@stage/out/"], ["a.b"])]),
        (
            "UNLOAD ('SELECT * FROM a.b WHERE k = ''x''') TO 's3://bucket/out/' IAM_ROLE 'r'",
            "redshift",
            [("unload", ["s3://bucket/out/"], ["a.b"])],
        ),
        # copies and swaps of whole tables
        ("CREATE TABLE a.c CLONE a.b", "snowflake", [("clone", ["a.c"], ["a.b"])]),
        ("ALTER TABLE a.b SWAP WITH a.b_staging", "snowflake", [("swap", ["a.b"], ["a.b_staging"])]),
        ("ALTER TABLE a.b EXCHANGE PARTITION (dt='1') WITH TABLE a.b_new", "hive", [("swap", ["a.b"], ["a.b_new"])]),
        # the statements of a procedure's body, each on its own
        (
            "CREATE PROCEDURE dbo.load_t AS BEGIN INSERT INTO dbo.t SELECT * FROM dbo.s; "
            "BEGIN TRY UPDATE dbo.u SET x = 1; END TRY BEGIN CATCH SELECT 1; END CATCH; END",
            "tsql",
            [("insert", ["dbo.t"], ["dbo.s"]), ("update", ["dbo.u"], ["dbo.u"])],
        ),
    ],
)
def test_statement_kinds(sql, dialect, expected) -> None:
    assert lineage_of(sql, dialect) == expected


def test_statements_without_lineage_add_nothing_and_raise_nothing() -> None:
    sql = """SET hive.exec.parallel=true; USE ods; ANALYZE TABLE a.b COMPUTE STATISTICS;
    DROP TABLE IF EXISTS a.b; TRUNCATE TABLE a.b; DESCRIBE a.b; GRANT SELECT ON TABLE a.b TO USER bob;
    SELECT 1; CREATE TABLE a.c LIKE a.b; CREATE FUNCTION f() RETURNS INT BEGIN RETURN 1; END"""
    script = analyze_script(sql, "<noise>", "hive")
    # 9: the function's body and END are procedural code, passed over without being parsed
    assert (script.lineage, script.issues, script.statements) == ([], [], 9)


def test_a_query_reads_but_adds_no_lineage() -> None:
    sql = "WITH r AS (SELECT * FROM a.b) SELECT r.x FROM r JOIN a.c ON r.k = c.k UNION SELECT y FROM a.d"
    script = analyze_script(sql, "q.sql", "hive")
    assert [(s.type, s.targets, s.sources) for s in script.lineage] == [("select", [], ["a.b", "a.c", "a.d"])]
    result = Harvest()
    harvest_text(sql, "q.sql", result, "hive")
    assert (result.lineage_statements, len(result.graph.kinds)) == (0, 0)


def test_use_sets_the_default_schema_for_later_statements() -> None:
    sql = "INSERT INTO t1 SELECT * FROM s1;\nUSE ods;\nINSERT INTO t2 SELECT * FROM stg.s2 JOIN s3 ON 1=1"
    assert lineage_of(sql, "hive", default_schema="dwh") == [
        ("insert", ["dwh.t1"], ["dwh.s1"]),
        ("insert", ["ods.t2"], ["ods.s3", "stg.s2"]),
    ]


def test_profile_default_schema_applies_when_none_is_given() -> None:
    assert lineage_of("INSERT INTO t SELECT * FROM s", "postgres") == [("insert", ["public.t"], ["public.s"])]
    assert lineage_of("INSERT INTO t SELECT * FROM s", "bigquery") == [("insert", ["t"], ["s"])]


def test_names_are_case_folded_and_unquoted() -> None:
    assert lineage_of('INSERT INTO "Dwh"."Fact" SELECT * FROM STG."Orders"', "postgres") == [
        ("insert", ["dwh.fact"], ["stg.orders"])
    ]
    assert lineage_of("INSERT INTO `Db`.`T` SELECT * FROM proj.ds.src", "bigquery") == [
        ("insert", ["db.t"], ["proj.ds.src"])
    ]


def test_cte_and_alias_names_never_become_tables() -> None:
    sql = """WITH orders AS (SELECT * FROM stg.orders), o2 AS (SELECT * FROM orders)
    INSERT INTO dwh.f SELECT x.* FROM (SELECT * FROM o2) x JOIN stg.c c ON x.id = c.id
    WHERE EXISTS (SELECT 1 FROM stg.k k WHERE k.id = x.id)"""
    assert lineage_of(sql, "spark") == [("insert", ["dwh.f"], ["stg.c", "stg.k", "stg.orders"])]


def test_broken_statement_is_reported_and_the_rest_is_harvested() -> None:
    sql = "INSERT INTO a.t SELECT * FROM a.s;\n\nINSERT INTO a.u SELECT FROM WHERE;\nINSERT INTO a.v SELECT * FROM a.t;"
    result = Harvest()
    harvest_text(sql, "etl/broken.sql", result, "hive")
    assert [(i.file, i.line) for i in result.issues] == [("etl/broken.sql", 3)]
    assert table_edges(result.graph) == {("a.s", "a.t"), ("a.t", "a.v")}


def test_untokenizable_statement_costs_only_itself() -> None:
    sql = "INSERT INTO a.t SELECT * FROM a.s;\nSELECT 'unterminated\nFROM x;\nINSERT INTO a.v SELECT * FROM a.t;\n"
    result = Harvest()
    harvest_text(sql, "q.sql", result, "hive")
    assert [i.line for i in result.errors] == [2]
    assert table_edges(result.graph) == {("a.s", "a.t"), ("a.t", "a.v")}


def test_file_dialect_directive_wins(tmp_path) -> None:
    (tmp_path / "pg.sql").write_text("-- dialect: postgres\nINSERT INTO t SELECT * FROM s;\n")
    result = harvest([tmp_path], dialect="hive")
    assert table_edges(result.graph) == {("public.s", "public.t")}


def test_views_are_views_and_transformations_carry_provenance(tmp_path) -> None:
    (tmp_path / "v.sql").write_text("\n-- the view\nCREATE VIEW r.v AS SELECT * FROM m.t; INSERT INTO m.u SELECT 1")
    result = harvest([tmp_path / "v.sql"])
    graph = result.graph
    assert graph.kinds["r.v"] is NodeKind.VIEW and graph.kinds["m.t"] is NodeKind.TABLE
    steps = sorted(n for n, k in graph.kinds.items() if k is NodeKind.TRANSFORMATION)
    assert [graph.provenance[s].line for s in steps] == [3, 3]
    assert steps[0].endswith("v.sql:3") and steps[1].endswith("v.sql:3#2")


def _approximate(sql: str, dialect: str) -> list[tuple[str, list[str], list[str]]]:
    """The statements of ``sql`` read approximately: type, targets, sources."""
    script = analyze_script(sql, "x.sql", dialect)
    return [(s.type, s.targets, s.sources) for s in script.lineage if s.approximate]


def test_a_statement_that_does_not_parse_keeps_its_error_and_its_tables_approximately() -> None:
    script = analyze_script("INSERT INTO mart.t SELECT a FROM stg.s WITH (FANCYHINT 7);\n", "x.sql", "postgres")
    (error,) = script.issues
    assert (error.level, error.line, error.col) == ("error", 1, 56)
    assert error.message == f"Expecting ); {APPROXIMATE_NOTE}"
    (statement,) = script.lineage
    assert (statement.approximate, statement.targets, statement.sources, statement.columns) == (
        True, ["mart.t"], ["stg.s"], []
    )  # fmt: skip


@pytest.mark.parametrize(
    ("sql", "dialect", "expected"),
    [
        # the names are qualified as a parsed statement's: the USE before, folding, T-SQL's temporary marks
        ("USE ods;\nINSERT INTO T SELECT a FROM `Src` ~~;", "hive", [("insert", ["ods.t"], ["ods.src"])]),
        ("INSERT INTO #t SELECT a FROM [Dbo].[S] x, ##g WHERE a !! 1", "tsql", [("insert", ["#t"], ["##g", "dbo.s"])]),
        ("INSERT @t (a) SELECT a FROM dbo.src WHERE ~~", "tsql", [("insert", ["@t"], ["dbo.src"])]),
        # a FROM list goes on past what may follow a relation, up to its clauses
        (
            "INSERT INTO t SELECT * FROM ONLY p, s TABLESAMPLE SYSTEM (10) x, u FOR SYSTEM_TIME AS OF y, v "
            "WHERE a IN (SELECT b FROM w) ~~",
            "postgres",
            [("insert", ["public.t"], ["public.p", "public.s", "public.u", "public.v", "public.w"])],
        ),
        # a function's FROM, IS DISTINCT FROM, a table function, DUAL and a derived table's alias are no tables
        (
            "INSERT INTO t SELECT EXTRACT(YEAR FROM d), TRIM(BOTH FROM x) FROM dual, generate_series(1, 2) g, "
            "(SELECT * FROM s) q JOIN q2 ON q.a IS DISTINCT FROM q2.a ~~",
            "oracle",
            [("insert", ["t"], ["q2", "s"])],
        ),
        # an alias, a keyword or a CTE never becomes a table: `UPDATE q` writes no derived table's alias
        ("UPDATE q SET a = 1 FROM (SELECT * FROM s) q WHERE ~~", "tsql", []),
        ("WITH c AS (SELECT 1) DELETE FROM c WHERE ~~", "postgres", []),
        ("INSERT INTO VALUES ~~", "postgres", []),
        ("MERGE INTO (SELECT 1) USING s ON ~~", "postgres", []),
        ("GRANT SELECT ON t FROM u ~~", "postgres", []),
        # MERGE and UPDATE read their target, as parsed ones do; a join's USING lists columns, not tables
        (
            "MERGE INTO dw.t t USING stg.s s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = ~~",
            "postgres",
            [("merge", ["dw.t"], ["dw.t", "stg.s"])],
        ),
        (
            "INSERT INTO dw.t SELECT * FROM stg.a JOIN stg.b USING (k) QUALIFY ~~",
            "postgres",
            [("insert", ["dw.t"], ["stg.a", "stg.b"])],
        ),
    ],
)
def test_the_approximate_reading_names_only_tables(sql: str, dialect: str, expected: list) -> None:
    assert _approximate(sql, dialect) == expected


def test_a_statement_that_does_not_tokenize_gives_no_lineage() -> None:
    script = analyze_script("INSERT INTO t SELECT a FROM s WHERE x = 'unclosed;\n", "x.sql", "postgres")
    assert script.lineage == []
    assert [i.message.startswith("cannot tokenize") for i in script.issues] == [True]


def test_approximate_statements_go_through_the_cache_records_as_they_are() -> None:
    from lineage_cli.harvest.batch import _record
    from lineage_cli.harvest.outcome import FileOutcome, outcome_data, outcome_from_data

    script = analyze_script("INSERT INTO a.t SELECT x FROM a.s ~~;\nINSERT INTO a.u SELECT 1;\n", "x.sql", "hive")
    outcome = FileOutcome("x.sql", lineage=[_record(s) for s in script.lineage])
    back = outcome_from_data(json.loads(json.dumps(outcome_data(outcome))))
    assert [(s.type, s.approximate) for s in back.lineage] == [("insert", True), ("insert", False)]


def test_parse_errors_point_at_the_start_of_the_offending_token() -> None:
    script = analyze_script("INSERT INTO a.t SELECT * FROM a.s;\nINSERT INTO a.u SELECT FROM WHERE;\n", "f.sql", "hive")
    (error,) = script.issues
    assert (error.line, error.col) == (2, 29)  # 'WHERE' spans columns 29-33


def test_a_missing_semicolon_is_an_error_where_the_dialect_needs_one() -> None:
    sql = "INSERT INTO a.t SELECT x FROM a.s\nINSERT INTO a.u SELECT y FROM a.s\n"
    hive, tsql = analyze_script(sql, "x.sql", "hive"), analyze_script(sql, "x.sql", "tsql")
    assert [i.line for i in hive.issues] == [2]
    # the two inserts are one statement that does not parse: read approximately, as one writing both
    assert [(s.type, s.targets, s.sources, s.approximate) for s in hive.lineage] == [
        ("multi_insert", ["a.t", "a.u"], ["a.s"], True)
    ]
    assert (tsql.issues, [s.targets for s in tsql.lineage]) == ([], [["a.t"], ["a.u"]])


def test_a_data_statement_read_only_as_a_command_is_a_warning_not_a_silent_loss() -> None:
    sql = "UNLOAD ($$ SELECT * FROM a.b $$) TO 's3://bucket/out/';\nGRANT SELECT ON a.b TO u;\n"
    script = analyze_script(sql, "x.sql", "redshift")
    assert script.lineage == []
    assert [(i.line, i.level, i.message.split(":")[0]) for i in script.issues] == [
        (1, "warning", "UNLOAD not analysed")
    ]


def test_statements_glued_into_one_command_by_a_missing_semicolon_are_a_warning() -> None:
    sql = "CREATE TABLE IF NOT EXISTS d (code STRING) USING DELTA LOCATION '/mnt/d'\n"
    sql += "INSERT OVERWRITE d SELECT code FROM s\n"
    script = analyze_script(sql, "x.sql", "databricks")
    assert script.lineage == []
    assert [(i.line, i.level, i.message.split(":")[0]) for i in script.issues] == [
        (1, "warning", "CREATE read as one opaque command running on into a later line's INSERT")
    ]


def test_hive_cli_commands_are_skipped_not_parsed_as_sql() -> None:
    sql = "dfs -rmr ../x;\nsource q.sql;\n!ls /in;\ndfs -ls /in/*.txt;\nadd jar /x.jar;\n"
    sql += "INSERT INTO d.t SELECT a,\nsource\nFROM d.s;\n"  # a column named like a command, inside a statement
    script = analyze_script(sql, "x.hql", "hive")
    assert (script.issues, [(s.line, s.targets, s.sources) for s in script.lineage]) == (
        [],
        [(6, ["d.t"], ["d.s"])],
    )


@pytest.mark.parametrize("dialect", ["hive", "spark"])
def test_map_and_reduce_functions_and_columns_are_no_script_clauses(dialect) -> None:
    """Only a MAP / REDUCE with its input list up to USING is a script clause; ``map(k, v)``, ``MAP<K, V>`` and a
    column named map stay what they are, and parse (golden hive_scripts.sql has the scripts)."""
    sql = "INSERT INTO d.t SELECT map('k', a) AS m, map, reduce FROM d.s;\n"
    sql += "CREATE TABLE d.u (m MAP<STRING, INT>, map INT);\n"
    script = analyze_script(sql, "x.hql", dialect)
    assert (script.issues, [(s.line, s.targets, s.sources) for s in script.lineage]) == (
        [],
        [(1, ["d.t"], ["d.s"])],
    )


def test_an_unclosed_table_function_costs_only_its_statement() -> None:
    script = analyze_script("SELECT * FROM noop(ON d.s;\nINSERT INTO d.t SELECT a FROM d.s;\n", "x.hql", "hive")
    assert ([issue.line for issue in script.issues], [(s.line, s.targets) for s in script.lineage]) == (
        [1],
        [(2, ["d.t"])],
    )


def test_an_explained_statement_and_a_merge_action_on_their_own_lines_are_no_glued_statements() -> None:
    sql = "EXPLAIN EXTENDED\nUPDATE t SET a = 1\nWHERE b = 2;\n"
    sql += "EXPLAIN MERGE INTO t USING s ON t.a = s.a\nWHEN MATCHED THEN\nUPDATE SET b = s.b;\n"
    assert analyze_script(sql, "x.sql", "hive").issues == []
    glued = analyze_script("EXPLAIN SELECT 1\nINSERT INTO t SELECT 1;\n", "x.sql", "hive")
    assert [i.message.split(":")[0] for i in glued.issues] == [
        "EXPLAIN read as one opaque command running on into a later line's INSERT"
    ]


def test_statements_inside_strings_and_cursor_queries_are_no_glued_statements() -> None:
    dynamic = "EXECUTE IMMEDIATE '\n  INSERT INTO t SELECT a FROM s';\n"
    assert analyze_script(dynamic, "x.sql", "snowflake").issues == []
    cursor = "DECLARE c CURSOR FOR\nSELECT a FROM t\nOPEN c;\nINSERT INTO u SELECT b FROM t;\n"
    script = analyze_script(cursor, "x.sql", "tsql")
    assert (script.issues, [(s.line, s.targets) for s in script.lineage]) == ([], [(4, ["dbo.u"])])


def test_a_routine_body_written_as_a_string_is_harvested_at_its_own_lines() -> None:
    sql = "-- load\nCREATE PROCEDURE etl.p()\nRETURNS VARCHAR\nLANGUAGE SQL\nAS\n$$\nBEGIN\n"
    sql += "  INSERT INTO d.t SELECT s.a FROM d.s s;\n  RETURN 'ok';\nEND;\n$$;\nINSERT INTO d.u SELECT * FROM d.t;\n"
    sql += sql.replace("-- load\n", "")  # the same body again: found at its own lines, not the first one's
    script = analyze_script(sql, "p.sql", "snowflake")
    assert script.issues == []
    assert [(s.line, s.targets) for s in script.lineage] == [(8, ["d.t"]), (12, ["d.u"]), (19, ["d.t"]), (23, ["d.u"])]


def test_a_broken_query_held_in_a_string_is_an_error_at_the_statement_in_plain_words() -> None:
    script = analyze_script("SELECT 1;\nUNLOAD ('SELECT FROM WHERE (') TO 's3://bucket/x/';\n", "u.sql", "redshift")
    assert [(i.line, i.message) for i in script.issues] == [
        (2, "cannot analyse statement: Expected table name but got 'WHERE'")
    ]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("INSERT INTO a SELECT CASE x END FROM t", "CASE without WHEN"),
        ("DELETE FROM t WHERE", "nothing after WHERE"),
        ("INSERT INTO a SELECT x FROM t ORDER BY", "nothing after ORDER BY"),
        ("INSERT INTO a SELECT x FROM t WHERE x = 1 AND", "nothing after AND"),
        ("UPDATE t SET x = WHERE y = 1", "nothing after ="),
        ("INSERT INTO a SELECT SUM() FROM t", "SUM() without an argument"),
        ("INSERT INTO a SELECT x FROM t WHERE x BETWEEN 1", "BETWEEN without AND and its high bound"),
        ("MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN", "WHEN without THEN"),
        ("INSERT INTO a SELECT x FROM t WHERE x IS", "unexpected 'IS'"),
    ],
)
def test_parse_errors_say_what_is_wrong_in_the_sql_not_in_sqlglot(sql, message) -> None:
    script = analyze_script(f"SELECT 1;\n{sql};\n", "x.sql", "hive")
    # each of them names its target: its tables are read approximately, and the message says so
    assert [(i.line, i.message) for i in script.issues] == [(2, f"{message}; {APPROXIMATE_NOTE}")]


def test_a_tokenizer_error_points_at_the_unclosed_quote_with_a_short_one_line_excerpt() -> None:
    sql = "SELECT 1;\nINSERT INTO a SELECT x FROM t WHERE a = 'it''s\nPASSWORD=hunter2\nAWS_KEY=AKIA\n"
    [issue] = analyze_script(sql, "x.sql", "postgres").issues
    assert (issue.line, issue.col) == (2, 41)
    assert issue.message == "cannot tokenize the SQL from here (an unclosed quote or comment?): \"'it''s…\""
    long_line = "SELECT '\x1b[31m" + "x" * 500
    [issue] = analyze_script(long_line, "x.sql", "hive").issues
    assert issue.message.endswith("\"'\\x1b[31m" + "x" * 51 + '…"') and "\x1b" not in issue.message


def test_a_crash_of_the_analysis_is_an_internal_error_at_the_statement_never_a_python_message(monkeypatch) -> None:
    from lineage_cli.harvest.sql import script as harvester

    def crash(*arguments: object) -> None:
        raise TypeError("string indices must be integers")

    sql = "SELECT 1;\nINSERT INTO a SELECT x FROM t;\n"
    with monkeypatch.context() as patch:
        patch.setattr(harvester, "column_lineage", crash)
        issues = analyze_script(sql, "x.sql", "hive", catalog=SchemaCatalog()).issues
    assert [(i.line, i.message) for i in issues] == [
        (2, "internal error analysing the columns of this statement (please report): TypeError")
    ]
    monkeypatch.setattr(harvester, "analyze_statement", crash)
    assert [(i.line, i.message) for i in analyze_script(sql, "x.sql", "hive").issues] == [
        (1, "internal error analysing this statement (please report): TypeError"),
        (2, "internal error analysing this statement (please report): TypeError"),
    ]


def test_a_crash_of_sqlglots_parser_is_a_statement_it_cannot_read_whose_tables_are_recovered() -> None:
    script = analyze_script("SELECT 1;\nCREATE TABLE a AS SELECT a ? FROM s.t;\n", "x.sql", "postgres")
    assert [(i.line, i.message) for i in script.issues] == [
        (2, "the parser failed on this statement (TypeError); it is read as unparseable; "
            "table lineage recovered approximately from its tokens")
    ]  # fmt: skip
    assert [(s.targets, s.sources, s.approximate) for s in script.lineage] == [(["public.a"], ["s.t"], True)]


def test_each_statement_handler_takes_the_kind_it_is_registered_for() -> None:
    """HANDLERS casts its handlers to take any expression; the kind each is looked up by must be one its own
    annotation accepts (what a type checker holds ``_handles`` to, checked here where none runs)."""
    from lineage_cli.harvest.sql.statements import HANDLERS

    for kind, handler in HANDLERS.items():
        statement = next(iter(inspect.signature(handler).parameters))
        assert issubclass(kind, get_type_hints(handler)[statement]), (kind.__name__, handler.__name__)
