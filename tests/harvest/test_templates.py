"""Templates: Jinja with line numbers kept, unknown macros, placeholders left without a value, defaults."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_cli import parse_sql
from lineage_cli.cli import cli
from lineage_cli.harvest.batch import harvest
from lineage_cli.harvest.sql.script import analyze_template
from lineage_cli.harvest.templates.budget import Limits
from lineage_cli.harvest.templates.jinja import render_jinja
from lineage_cli.harvest.templates.placeholders import VarsError, read_vars_file, render
from lineage_cli.model import EdgeType, Graph, NodeKind
from tests.bounded import run_bounded, yaml_bomb
from tests.store.storeview import read_store


def statements(sql: str, dialect: str = "hive", **options) -> list[tuple[int, list[str], list[str]]]:
    script = analyze_template(sql, "t.sql", dialect, **options)
    return [(s.line, s.targets, s.sources) for s in script.lineage]


def messages(sql: str, dialect: str = "hive", **options) -> list[tuple[int, str, str]]:
    return [(i.line, i.level, i.message) for i in analyze_template(sql, "t.sql", dialect, **options).issues]


# ----------------------------------------------------------------------------- Jinja and line numbers


def test_an_if_block_without_value_keeps_the_later_line_numbers() -> None:
    sql = (
        "{% if full %}\nTRUNCATE TABLE a.t;\n{% else %}\nDELETE FROM a.t WHERE 1 = 1;\n{% endif %}\n"
        "INSERT INTO a.t SELECT * FROM b.s;"
    )
    assert statements(sql) == [(4, ["a.t"], ["a.t"]), (6, ["a.t"], ["b.s"])]
    assert statements(sql, variables={"full": "yes"}) == [(6, ["a.t"], ["b.s"])]


def test_a_for_loop_gives_each_statement_the_line_of_its_body() -> None:
    sql = "-- loads\n{% for r in ['eu', 'us'] %}\nINSERT INTO mart.sales_{{ r }}\nSELECT * FROM ods.sales_{{ r }};\n"
    sql += "{% endfor %}\n"
    assert statements(sql) == [(3, ["mart.sales_eu"], ["ods.sales_eu"]), (3, ["mart.sales_us"], ["ods.sales_us"])]


def test_two_statements_from_one_line_get_distinct_transformations(tmp_path) -> None:
    (tmp_path / "loop.sql").write_text(
        "{% for r in ['eu', 'us'] %}\nINSERT INTO m.s_{{ r }} SELECT x FROM o.s;\n{% endfor %}"
    )
    graph = harvest([tmp_path], "hive").graph
    steps = sorted(name.rsplit("/", 1)[-1] for name, kind in graph.kinds.items() if kind is NodeKind.TRANSFORMATION)
    assert steps == ["loop.sql:2", "loop.sql:2#2"]


def test_whitespace_control_multi_line_tags_and_comments_keep_lines() -> None:
    sql = (
        "{{ config(\n  materialized='table'\n) }}\n"  # lines 1-3: a call spanning lines
        "{# a comment\n   on two lines #}\n"  # lines 4-5
        "{%- set src = 'stg.s' -%}\n"  # line 6: whitespace control
        "INSERT INTO a.t\n"  # line 7
        "SELECT * FROM {{ src }};\n"
        "{%- if true %}\nINSERT INTO a.u SELECT * FROM a.t;\n{% endif -%}\n"  # lines 9-11
    )
    assert statements(sql) == [(7, ["a.t"], ["stg.s"]), (10, ["a.u"], ["a.t"])]


def test_unknown_macros_filters_and_tests_are_warnings_with_their_line() -> None:
    sql = (
        "INSERT INTO a.t\nSELECT s.id,\n  {{ cents_to_dollars('s.amount') }} AS amount,\n"
        "  '{{ run_date | fancy_date }}' AS d\nFROM s.s s\n{% if x is weird %}WHERE 1 = 0{% endif %};"
    )
    assert messages(sql, variables={"run_date": "2024-01-31"}) == [
        (3, "warning", "unknown Jinja macro cents_to_dollars: rendered as a placeholder"),
        (4, "warning", "unknown Jinja filter fancy_date: ignored"),
        (6, "warning", "unknown Jinja test weird: ignored"),
    ]
    assert statements(sql) == [(1, ["a.t"], ["s.s"])]


def test_an_unknown_macro_standing_as_a_statement_of_its_own_costs_no_statement_after_it() -> None:
    # mozilla/bigquery-etl's checks.sql: a data test's macro expands to a query, with no semicolon before the next.
    sql = (
        "#fail\n"
        '{{ is_unique(["id"]) }} -- to do: more columns\n'
        "\n"
        "#warn\n"
        "{{ min_row_count(1000) }}\n"
        "INSERT INTO d.checked SELECT s.id FROM d.s s\n"
        "WHERE {{ extra_filter() }};\n"  # within a statement: a placeholder there, as before
        "{{ done() }}\n"
    )
    assert messages(sql, "bigquery") == [
        (2, "warning", "unknown Jinja macro is_unique: rendered as a placeholder"),
        (5, "warning", "unknown Jinja macro min_row_count: rendered as a placeholder"),
        (7, "warning", "unknown Jinja macro extra_filter: rendered as a placeholder"),
        (8, "warning", "unknown Jinja macro done: rendered as a placeholder"),
    ]
    assert statements(sql, "bigquery") == [(6, ["d.checked"], ["d.s"])]


def test_a_loop_over_an_unknown_macros_columns_adds_nothing() -> None:
    # mattermost's int_feature_daily_usage_pivoted.sql: the loop once ran per character of the placeholder.
    sql = (
        "{% set cols = dbt_utils.get_filtered_columns_in_relation(from=ref('x')) %}\n"
        "select id from {{ ref('x') }} where false\n"
        "{% for c in cols %} or {{ c }} > 0 {% endfor %}\n"
    )
    assert messages(sql, "snowflake") == [
        (1, "warning", "unknown Jinja macro dbt_utils.get_filtered_columns_in_relation: rendered as a placeholder")
    ]
    assert statements(sql, "snowflake") == [(2, [], ["public.x"])]
    rendered = render_jinja(sql, {})
    assert rendered.text.splitlines()[1:] == ["select id from x where false", ""]
    assert rendered.lines == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        pytest.param(
            "{{ m('a') }} {{ v }} {{ v.a.b }} {{ v['k'] }} {{ m().x }} {{ m()[1:] }}",
            "{{ m() }} {{ v }} {{ v.a.b }} {{ v.k }} {{ m().x }} {{ m()[1:] }}",
            id="rendered",
        ),
        pytest.param(
            "{% for c in m() %}X{% else %}none{% endfor %}{% for k, c in v.items() %}X{% endfor %}", "none", id="for"
        ),
        pytest.param(
            "{% for c in env_var('COLS').split(',') %}X{% endfor %}{% for c in v | fancy %}X{% endfor %}",
            "",
            id="for-env-var-and-unknown-filter",
        ),
        pytest.param("{% if m() %}T{% else %}F{% endif %} {% if v.flag %}T{% else %}F{% endif %}", "F F", id="if"),
        pytest.param("{{ v(1, a=2) }} {{ m()() }} {{ v.f('x') }}", "{{ v() }} {{ m()() }} {{ v.f() }}", id="called"),
        pytest.param(
            "[{{ m() | join(', ') }}] [{{ v | map(attribute='name') | join(',') }}] {{ v | list }}",
            "[] [] []",
            id="join",
        ),
        pytest.param(
            "{{ m() == 'a' }} {{ m() != 'a' }} {{ m() > 0 }} {{ 0 < m() }} {{ v <= 1 }}",
            "False True False False False",
            id="compared",
        ),
        pytest.param("{{ v == v }} {{ v == w }} {{ 'a' in v }}", "True False False", id="equal-only-to-itself"),
        pytest.param("{{ m() is not none }} {{ v is none }} {{ v is defined }}", "True False False", id="tests"),
        pytest.param("{{ m() | length }} {{ v | count }} {{ v | int }} {{ v | default('d') }}", "0 0 0 d", id="length"),
        pytest.param(
            "{{ v + 1 }} {{ 2 * v }} {{ -v }} {{ v ~ '_x' }}", "{{ v }} {{ v }} {{ v }} {{ v }}_x", id="arithmetic"
        ),
        pytest.param("{{ env_var('DB') }}.t {{ var('y') }}", "{{ env_var('DB') }}.t {{ y }}", id="env-var-and-var"),
    ],
)
def test_an_unknown_value_is_safe_in_every_jinja_context(template: str, expected: str) -> None:
    out = render_jinja(template, {})
    assert not [message for _, message in out.warnings if message.startswith("cannot render Jinja")]
    assert out.text == expected


def test_a_dbt_model_using_unknown_columns_every_way_still_harvests() -> None:
    sql = (
        "{% set cols = adapter.get_columns_in_relation(ref('src')) %}\n"  # 1
        "insert into mart.t\n"  # 2
        "select id{% for c in cols if c.name != 'id' %}, {{ c.name }}{% endfor %}\n"  # 3
        "{% if cols | length > 0 %}, {{ cols | join(', ') }}{% endif %}\n"  # 4
        "from {{ ref('src') }}{% if cols[0] is not none and cols.first > 1 %} where 1 = 1{% endif %}\n"  # 5
    )
    assert messages(sql) == [
        (1, "warning", "unknown Jinja macro adapter.get_columns_in_relation: rendered as a placeholder")
    ]
    assert statements(sql) == [(2, ["mart.t"], ["default.src"])]


def test_a_template_jinja_cannot_read_is_reported_and_its_placeholders_still_filled() -> None:
    sql = "INSERT INTO ${db}.t\nSELECT * FROM {{ src }}.s -- {% if %}\n;"
    issues = messages(sql, variables={"db": "dwh", "src": "stg"})
    assert [(line, level) for line, level, _ in issues] == [(2, "warning")]
    assert issues[0][2].startswith("cannot render Jinja:")
    assert statements(sql, variables={"db": "dwh", "src": "stg"}) == [(1, ["dwh.t"], ["stg.s"])]


def test_dbt_functions_in_plain_sql() -> None:
    sql = (
        "{{ config(materialized='table') }}\nINSERT INTO {{ var('target_db', 'mart') }}.t\n"
        "SELECT * FROM {{ ref('orders') }} o JOIN {{ source('raw', 'customers') }} c ON c.id = o.cid\n"
        "{% if is_incremental() %}WHERE o.ts > (SELECT MAX(ts) FROM {{ this }}){% endif %}"
    )
    assert statements(sql) == [(2, ["mart.t"], ["default.orders", "raw.customers"])]
    assert statements(sql, variables={"target_db": "dwh"})[0][1] == ["dwh.t"]
    relations = {"ref:orders": '"db"."stg"."orders"', "source:raw.customers": "db.raw.customers"}
    assert statements(sql, "postgres", relations=relations)[0][2] == ["db.raw.customers", "db.stg.orders"]


# ----------------------------------------------------------------------------- placeholders without a value


def test_every_placeholder_style_survives_in_a_name() -> None:
    sql = (
        "INSERT INTO ${hivevar:out}.t SELECT * FROM #src_schema#.t_orders a "
        "JOIN ${hiveconf:db}.b ON a.k = b.k JOIN ${db2}.c ON c.k = a.k JOIN {{ dim }}.d ON d.k = a.k"
    )
    assert statements(sql) == [
        (1, ["${hivevar:out}.t"], ["#src_schema#.t_orders", "${db2}.c", "${hiveconf:db}.b", "{{ dim }}.d"])
    ]


def test_a_postgres_extension_schema_placeholder_without_a_value_stays_in_the_names() -> None:
    sql = "CREATE TABLE @extschema@.jobs (id int, payload text);\n"
    sql += "INSERT INTO @extschema@.job_log (id) SELECT j.id FROM @extschema@.jobs j WHERE j.payload <> '';"
    result = parse_sql(sql, dialect="postgres")
    assert result["errors"] == [] and result["warnings"] == []
    assert statements(sql, "postgres") == [(2, ["@extschema@.job_log"], ["@extschema@.jobs"])]
    assert {(c["source"], c["target"]) for c in result["statements"][0]["columns"]} == {
        ("@extschema@.jobs.id", "@extschema@.job_log.id"),
        ("@extschema@.jobs.payload", "@extschema@.job_log"),
    }


def test_at_sign_placeholders_are_only_read_where_the_profile_has_the_at_style() -> None:
    assert render("SELECT * FROM @s@.t", {"s": "x"}, styles=["at"]).text == "SELECT * FROM x.t"
    assert render("SELECT * FROM @s@.t", {"s": "x"}).text == "SELECT * FROM @s@.t"  # T-SQL, MySQL: @ is theirs


def test_a_query_that_writes_nothing_names_what_it_reads_with_its_placeholders() -> None:
    sql = "SELECT a FROM {{ p.s }}.t;\nSELECT a FROM ${db}.t JOIN #src#.u ON t.k = u.k;"
    assert statements(sql) == [(1, [], ["{{ p.s }}.t"]), (2, [], ["#src#.u", "${db}.t"])]


def test_dbt_type_macros_render_as_types_every_dialect_parses() -> None:
    sql = "CREATE TABLE o AS SELECT id::{{ dbt.type_string() }} AS id, CAST(n AS {{ dbt_utils.type_int() }}) AS n"
    sql += " FROM s"
    for dialect in ("databricks", "spark", "trino", "snowflake", "bigquery", "postgres"):
        result = parse_sql(sql, dialect=dialect)
        assert result["errors"] == [] and result["warnings"] == [], dialect
        assert [len(s["columns"]) for s in result["statements"]] == [2], dialect


def test_dbt_utils_surrogate_key_and_star_keep_their_columns_lineage() -> None:
    sql = "CREATE TABLE mart.f AS SELECT {{ dbt_utils.generate_surrogate_key(['o.id', 'o.line']) }} AS k, o.amount"
    sql += " FROM {{ ref('stg_orders') }} o;\nCREATE TABLE mart.g AS SELECT {{ dbt_utils.star(ref('s')) }} FROM s;\n"
    sql += "CREATE TABLE mart.h AS SELECT {{ dbt_utils.star(from=ref('s'), relation_alias='s') }}"
    sql += " FROM s JOIN u USING (a)"
    result = parse_sql(sql, dialect="postgres", schema={"public.s": ["a", "b"]})
    assert result["warnings"] == [] and result["errors"] == []
    edges = {(c["source"], c["target"], c["subtype"]) for s in result["statements"] for c in s["columns"]}
    assert edges == {
        ("public.stg_orders.id", "mart.f.k", "TRANSFORMATION_MASKING"),
        ("public.stg_orders.line", "mart.f.k", "TRANSFORMATION_MASKING"),
        ("public.stg_orders.amount", "mart.f.amount", "IDENTITY"),
        ("public.s.a", "mart.g.a", "IDENTITY"),
        ("public.s.b", "mart.g.b", "IDENTITY"),
        ("public.s.a", "mart.h.a", "IDENTITY"),
        ("public.s.b", "mart.h.b", "IDENTITY"),
        ("public.s.a", "mart.h", "JOIN"),
        ("public.u.a", "mart.h", "JOIN"),
    }


def test_a_dbt_snapshot_block_makes_its_table_from_its_query() -> None:
    sql = (
        "{% snapshot customers_snapshot %}\n"
        "{{ config(unique_key='id', strategy='check', check_cols='all') }}\n"
        "select id, name from {{ source('crm', 'customers') }}\n"
        "{% endsnapshot %}\n"
    )
    assert statements(sql) == [(1, ["default.customers_snapshot"], ["crm.customers"])]
    assert messages(sql) == []


def harvest_one(folder: Path, sql: str, **options) -> Graph:
    (folder / "x.sql").write_text(sql)
    return harvest([folder], "hive", **options).graph


def test_parameterized_datasets_are_nodes_of_their_own_kind(tmp_path) -> None:
    graph = harvest_one(tmp_path, "INSERT INTO dwh.t SELECT s.a FROM #src#.s s")
    assert graph.kinds["#src#.s"] is NodeKind.PARAMETERIZED and graph.kinds["#src#.s.a"] is NodeKind.COLUMN
    assert graph.kinds["dwh.t"] is NodeKind.TABLE and graph.containers["#src#.s.a"] == "#src#.s"


def test_a_value_placeholder_gives_no_edge_and_no_warning() -> None:
    sql = "INSERT INTO dwh.t SELECT s.a FROM stg.s s JOIN stg.u u ON u.k = s.k WHERE s.b > ${low} AND u.c < #high#"
    result = parse_sql(sql, dialect="hive")
    assert result["warnings"] == []
    assert {(c["source"], c["target"]) for c in result["statements"][0]["columns"]} == {
        ("stg.s.a", "dwh.t.a"),
        ("stg.s.b", "dwh.t"),
        ("stg.s.k", "dwh.t"),
        ("stg.u.c", "dwh.t"),
        ("stg.u.k", "dwh.t"),
    }


def test_a_table_created_under_a_placeholder_is_known_to_other_files(tmp_path) -> None:
    (tmp_path / "a.sql").write_text("CREATE TABLE #db#.base AS SELECT s.id, s.amount FROM stg.s s")
    (tmp_path / "b.sql").write_text("INSERT INTO mart.r SELECT * FROM #db#.base")
    result = harvest([tmp_path], "hive")
    assert not [i for i in result.issues if i.level == "warning"]
    projections = {(s, t) for (s, t, k, _) in result.graph.edges if k is EdgeType.PROJECTION}
    assert ("#db#.base.amount", "mart.r.amount") in projections


# ----------------------------------------------------------------------------- defaults


def test_defaults_link_parameterized_tables_and_columns_to_the_real_ones(tmp_path) -> None:
    graph = harvest_one(
        tmp_path,
        "INSERT INTO dwh.t SELECT s.a FROM #src#.s s JOIN ${lookup} l ON l.k = s.k",
        defaults={"src": "STG", "lookup": "ref.lookup"},
    )
    defaults = {(s, t) for (s, t, k, _) in graph.edges if k is EdgeType.DEFAULT}
    assert defaults == {
        ("#src#.s", "stg.s"),
        ("#src#.s.a", "stg.s.a"),
        ("#src#.s.k", "stg.s.k"),
        ("default.${lookup}", "ref.lookup"),
        ("default.${lookup}.k", "ref.lookup.k"),
    }
    assert graph.kinds["stg.s"] is NodeKind.TABLE and graph.containers["stg.s.a"] == "stg.s"


def test_a_value_beats_a_default_and_the_vars_file_holds_both(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "load.sql").write_text("INSERT INTO ${out}.t SELECT s.a FROM #src#.s s")
    (tmp_path / "vars.yaml").write_text("out: dwh\ndefaults:\n  src: stg\n  out: never_used\n")
    outcome = CliRunner().invoke(cli, ["harvest", "load.sql", "--vars", "vars.yaml", "--dialect", "hive", "-q"])
    assert outcome.exit_code == 0, outcome.output
    view = read_store(tmp_path / ".lineage" / "graph.lin")
    assert view.table_edges() == ["#src#.s -> dwh.t", "#src#.s -> stg.s DEFAULT"]


def test_render_maps_lines_and_tokens_back() -> None:
    out = render("{% if a %}\nX\n{% endif %}\nSELECT * FROM #s#.t", {})
    assert out.source_line(2) == 4 and out.placeholders.restore(out.text.splitlines()[1]) == "SELECT * FROM #s#.t"


# ----------------------------------------------------------------------------- the render budget

# Each bomb sits on line 2, after a statement; (template, the limit it must be stopped by).
JINJA_BOMBS = {
    "nested loops": (
        "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
        "limit of 1,000,000 loop iterations",
    ),
    "power": ("{{ 7 ** (7 ** 12) }}", "limit of 4,096-bit numbers"),
    "squaring": (
        "{% set ns = namespace(n=3) %}{% for i in range(64) %}{% set ns.n = ns.n * ns.n %}{% endfor %}",
        "limit of 4,096-bit numbers",
    ),
    "string repeat": ('{{ "x" * 3000000000 }}', "limit of 16,777,216 characters for a value"),
    "list repeat": ("{{ [0] * 3000000000 }}", "limit of 1,000,000 items for a list"),
    "doubling ~": (
        '{% set ns = namespace(s="x") %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}',
        "limit of 16,777,216 characters for a value",
    ),
    "doubling +": (
        '{% set ns = namespace(s="x") %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}',
        "limit of 16,777,216 characters for a value",
    ),
    "padding method": ('{{ "x".ljust(3000000000) }}', "limit of 16,777,216 characters for a value"),
    "padding filter": ('{{ "x" | center(3000000000) }}', "limit of 16,777,216 characters for a value"),
    "printf width": ('{{ "%3000000000s" % "x" }}', "limit of 16,777,216 characters for a value"),
    "format width": ('{{ "{:>3000000000}".format("x") }}', "limit of 16,777,216 characters for a value"),
    "replace": ('{{ ("x" * 10000000) | replace("x", "xx") }}', "limit of 16,777,216 characters for a value"),
    "join": ('{{ ("y" * 1000).join(["x"] * 100000) }}', "limit of 16,777,216 characters for a value"),
    "a buffer behind the output": (
        '{% set big = "x" * 10000000 %}{% set t %}{% for i in range(1000) %}{{ big }}{% endfor %}{% endset %}',
        "limit of 16,777,216 characters of output",
    ),
    "literal text in a macro": (
        "{% macro m() %}{% for i in range(100000) %}" + "x" * 200 + "{% endfor %}{% endmacro %}{% set t = m() %}",
        "limit of 16,777,216 characters of output",
    ),
    "a printed list of shared lists": (
        "{% set a = [1] * 1000 %}{% set b = [a] * 1000 %}{% set c = [b] * 1000 %}{{ c }}",
        "limit of 16,777,216 characters of output",
    ),
}


def test_template_bombs_stop_at_their_limit_quickly_with_bounded_memory() -> None:
    code = (
        "import json, sys, time\nfrom lineage_cli.harvest.templates.jinja import render_jinja\n"
        "for name, template in json.loads(sys.stdin.read()).items():\n"
        "    start = time.monotonic()\n"
        "    out = render_jinja('SELECT 1;\\n' + template + '\\nSELECT 2;', {})\n"
        "    print(json.dumps([name, time.monotonic() - start, out.warnings, out.text]), flush=True)\n"
    )
    templates = {name: template for name, (template, _) in JINJA_BOMBS.items()}
    run = run_bounded(code, stdin=json.dumps(templates), memory_mb=1024)
    results = {
        name: (seconds, warnings, text) for name, seconds, warnings, text in map(json.loads, run.stdout.splitlines())
    }
    assert set(results) == set(JINJA_BOMBS), run.stderr
    for name, (_, limit) in JINJA_BOMBS.items():
        seconds, warnings, text = results[name]
        assert warnings == [[2, f"template exceeded its {limit}: Jinja not rendered, only placeholders substituted"]], (
            name
        )
        assert seconds < 4, name  # each stopped by its own limit, well before the time limit
        assert text.startswith("SELECT 1;\n") and text.endswith("\nSELECT 2;"), name  # read as written
    assert run.peak_mb < 400


def test_a_template_past_its_time_limit_is_stopped_even_without_loops() -> None:
    # 2**40 macro calls, each producing nothing: only the clock stops it, in the macro (line 1)
    sql = "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}\nSELECT {{ f(40) }};"
    start = time.monotonic()
    out = render_jinja(sql, {}, limits=Limits(seconds=0.3))
    assert time.monotonic() - start < 2
    assert out.warnings == [
        (1, "template exceeded its time limit of 0.3 s: Jinja not rendered, only placeholders substituted")
    ]


def test_a_harvest_reports_a_template_bomb_at_its_line_and_goes_on(tmp_path) -> None:
    (tmp_path / "bomb.sql").write_text(
        "INSERT INTO dwh.before SELECT a FROM stg.s;\n" + JINJA_BOMBS["nested loops"][0] + "\n"
        "INSERT INTO dwh.after SELECT a FROM stg.s;\n"
    )
    (tmp_path / "other.sql").write_text("INSERT INTO dwh.other SELECT a FROM stg.s;\n")
    code = (
        "from lineage_cli.cli import cli\n"
        "cli(['harvest', '.', '--store', 'g.lin', '--no-cache', '--jobs', '1'], standalone_mode=False)\n"
    )
    run = run_bounded(code, cwd=tmp_path)
    assert "bomb.sql:2: warning: template exceeded its limit of 1,000,000 loop iterations" in run.stderr
    assert run.seconds < 10 and run.peak_mb < 400
    edges = read_store(tmp_path / "g.lin").table_edges()
    assert {"stg.s -> dwh.before", "stg.s -> dwh.other"} <= set(edges)


# ----------------------------------------------------------------------------- variables from YAML


def test_an_alias_bomb_in_a_vars_file_is_refused_at_once(tmp_path) -> None:
    (tmp_path / "load.sql").write_text("INSERT INTO ${l8}.t SELECT a FROM stg.s")
    (tmp_path / "vars.yaml").write_text(yaml_bomb())
    code = (
        "from lineage_cli.cli import cli\n"
        "cli(['harvest', 'load.sql', '--vars', 'vars.yaml', '--store', 'g.lin', '--no-cache'], standalone_mode=False)\n"
    )
    run = run_bounded(code, cwd=tmp_path, seconds=30)
    assert "error: vars.yaml:6:5: YAML aliases expand to more than 100,000 nodes: refused" in run.stderr
    assert run.returncode == 2 and not (tmp_path / "g.lin").exists()
    assert run.seconds < 2 and run.peak_mb < 300


@pytest.mark.parametrize(
    ("text", "key", "kind"),
    [
        ("db: [ods, dwh]\n", "db", "list"),
        ("db: ods\nsettings: {a: 1}\n", "settings", "mapping"),
        ("db: ods\ndefaults:\n  src: [stg]\n", "src", "list"),
    ],
)
def test_a_variable_must_be_a_single_value(tmp_path, monkeypatch, text, key, kind) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "load.sql").write_text("INSERT INTO ${db}.t SELECT a FROM stg.s")
    (tmp_path / "vars.yaml").write_text(text)
    outcome = CliRunner().invoke(cli, ["harvest", "load.sql", "--vars", "vars.yaml", "-q"])
    assert outcome.exit_code == 2
    assert f"variable '{key}': expected a single value (text, number, true/false, date or null), got a {kind}" in (
        outcome.output
    )


def test_a_vars_file_that_cannot_be_read_is_a_vars_error_with_the_systems_words(tmp_path) -> None:
    with pytest.raises(VarsError, match=r"^\[Errno 2\] No such file or directory: '.*missing\.yaml'$"):
        read_vars_file(tmp_path / "missing.yaml")
    (tmp_path / "latin.yaml").write_bytes("db: größe\n".encode("latin-1"))
    with pytest.raises(VarsError, match="can't decode byte 0xf6"):
        read_vars_file(tmp_path / "latin.yaml")
    outcome = CliRunner().invoke(cli, ["harvest", str(tmp_path), "--var", "novalue"])
    assert (outcome.exit_code, outcome.stderr) == (2, "error: --var expects NAME=VALUE, got 'novalue'\n")


def test_single_values_of_every_yaml_type_are_variables(tmp_path) -> None:
    (tmp_path / "vars.yaml").write_text("db: ods\nday: 2024-01-31\nn: 7\nrate: 0.5\nflag: true\nnone: null\n")
    values, _ = read_vars_file(tmp_path / "vars.yaml")
    assert values == {"db": "ods", "day": "2024-01-31", "n": "7", "rate": "0.5", "flag": "True", "none": ""}
