"""The command line end to end: harvest, up/down in every format, stats, errors, imports."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.errors import LineageError
from tests.conftest import REPO, WAREHOUSE, assert_valid_format


@pytest.fixture()
def runner(tmp_path, monkeypatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LINEAGE_STORE", raising=False)
    return CliRunner()


def harvested(runner: CliRunner, *extra: str) -> None:
    outcome = runner.invoke(cli, ["harvest", str(WAREHOUSE), "--quiet", *extra])
    assert outcome.exit_code == 0, outcome.output


def test_harvest_writes_the_default_store_and_summarises(runner) -> None:
    outcome = runner.invoke(cli, ["harvest", str(WAREHOUSE), "--quiet"])
    assert outcome.exit_code == 0
    assert Path(".lineage/graph.lin").is_file()
    assert "harvested 16 files, 47 statements (27 with lineage" in outcome.output
    assert "0 errors" in outcome.output


def test_harvest_reports_errors_and_strict_fails(runner, tmp_path) -> None:
    sql = tmp_path / "etl.sql"
    sql.write_text("INSERT INTO a.t SELECT * FROM a.s;\nINSERT INTO a.u SELECT FROM WHERE;\n")
    outcome = runner.invoke(cli, ["harvest", str(sql), "--quiet"])
    assert outcome.exit_code == 0
    assert "etl.sql:2:" in outcome.output and "1 errors" in outcome.output
    assert runner.invoke(cli, ["harvest", str(sql), "--quiet", "--strict"]).exit_code == 1
    up = runner.invoke(cli, ["up", "a.t", "--format", "json"])
    assert json.loads(up.output)["edges"] == [{"source": "a.s", "target": "a.t", "type": "flow"}]


def test_a_statement_that_does_not_parse_is_walked_marked_and_left_out_by_exact(runner, tmp_path) -> None:
    sql = tmp_path / "etl.sql"
    sql.write_text("INSERT INTO a.m SELECT * FROM a.s;\nINSERT INTO a.t SELECT x FROM a.m WITH (HINT 7) QUALIFY ~~;\n")
    outcome = runner.invoke(cli, ["harvest", str(sql), "--quiet", "--dialect", "postgres"])
    assert "etl.sql:2:" in outcome.output and "table lineage recovered approximately" in outcome.output
    assert "(2 with lineage: 2 insert; 1 read approximately)" in outcome.output
    again = runner.invoke(cli, ["harvest", str(sql), "--quiet", "--dialect", "postgres"])  # from the cache
    assert "(2 with lineage: 2 insert; 1 read approximately)" in again.output and "up to date" in again.output
    tree = runner.invoke(cli, ["up", "a.t", "--format", "tree"]).output
    assert "a.m table [APPROXIMATE]" in tree and "a.s table" in tree
    edges = json.loads(runner.invoke(cli, ["up", "a.t", "--format", "json"]).output)["edges"]
    assert {"source": "a.m", "target": "a.t", "type": "flow", "subtypes": ["APPROXIMATE"], "approximate": True} in edges
    assert (
        '"a.m" -> "a.t" [label="APPROXIMATE", style="dotted"]'
        in runner.invoke(cli, ["down", "a.s", "--format", "dot"]).output
    )
    for command in (["up", "a.t"], ["down", "a.s"]):
        exact = json.loads(runner.invoke(cli, [*command, "--format", "json", "--exact"]).output)
        assert ("a.t" in {n["name"] for n in exact["nodes"]}) is (command[0] == "up")
        assert all(e["target"] != "a.t" for e in exact["edges"])
    assert runner.invoke(cli, ["path", "a.s", "a.t", "--format", "json"]).exit_code == 0
    missing = runner.invoke(cli, ["path", "a.s", "a.t", "--exact"])
    assert missing.exit_code == 1 and "through exact statements only" in missing.output


def test_locations_and_names_print_as_written_not_as_emoji_or_markup(runner, tmp_path) -> None:
    # rich reads `:100:` as the emoji code for 💯 (and `:1234:` as 🔢), `[red]` as markup, `[/x]` as a bad tag
    broken = "INSERT INTO a.t SELECT x FROM WHERE;\n"
    sql = "\n" * 99 + broken + "\n" * 1133 + broken
    for name in ("emoji.sql", "x[red]y.sql"):
        (tmp_path / name).write_text(sql)
    outcome = runner.invoke(cli, ["harvest", "emoji.sql", "x[red]y.sql", "--no-cache"])
    assert outcome.exit_code == 0, outcome.output
    for name in ("emoji.sql", "x[red]y.sql"):
        for line in (100, 1234):
            assert f"{name}:{line}:31: error: Expected table name but got 'WHERE'" in outcome.stderr
    (tmp_path / "m[").mkdir()
    (tmp_path / "m[" / "x].yaml").write_text("entries: [\n")
    outcome = runner.invoke(cli, ["harvest", "--manifest", "m[/x].yaml", "--no-cache"])
    assert outcome.exit_code == 2
    # the problem's wording is libyaml's or PyYAML's, whichever reads it
    assert re.fullmatch(r"error: m\[/x\]\.yaml:\d+:\d+: not valid YAML: [^\n]+\n", outcome.stderr)


def test_store_option_and_environment(runner, monkeypatch) -> None:
    harvested(runner, "--store", "custom.lin")
    assert Path("custom.lin").is_file()
    monkeypatch.setenv("LINEAGE_STORE", "custom.lin")
    assert runner.invoke(cli, ["up", "mart.sales_daily", "--format", "json"]).exit_code == 0


def test_up_json_has_nodes_and_data_flow_edges(runner) -> None:
    harvested(runner)
    data = json.loads(runner.invoke(cli, ["up", "rpt.v_sales_weekly", "--format", "json"]).output)
    assert data["roots"] == ["rpt.v_sales_weekly"]
    assert {"name": "rpt.v_sales_daily", "kind": "view", "depth": 1} in data["nodes"]
    assert {"source": "rpt.v_sales_daily", "target": "rpt.v_sales_weekly", "type": "flow"} in data["edges"]


def test_tree_is_the_terminal_format(runner) -> None:
    harvested(runner)
    outcome = runner.invoke(cli, ["down", "stg.pos_sales", "--format", "tree", "--depth", "2"])
    assert outcome.exit_code == 0
    assert outcome.output.splitlines()[0].startswith("stg.pos_sales")
    assert "ods.sales_header" in outcome.output and "mart.sales_daily" not in outcome.output


@pytest.mark.parametrize(("suffix", "checker"), [(".tgf", "tgf"), (".graphml", "graphml"), (".dot", "dot")])
def test_output_file_format_follows_its_extension_and_validates(runner, suffix, checker) -> None:
    harvested(runner)
    target = Path("out" + suffix).resolve()
    outcome = runner.invoke(cli, ["up", "mart.sales_daily", "-o", str(target)])
    assert outcome.exit_code == 0 and target.stat().st_size > 0
    options = ["--require-labels"] if checker == "graphml" else []
    assert_valid_format(checker, target, *options)


@pytest.mark.parametrize("name", ["out.xyz", "out", "out.graphml.bak"])
def test_output_file_of_unknown_extension_is_refused_listing_the_known_ones(runner, name) -> None:
    harvested(runner)
    outcome = runner.invoke(cli, ["up", "mart.sales_daily", "-o", name])
    assert outcome.exit_code == 2 and not Path(name).exists()
    assert f"cannot tell the format of {name}" in outcome.output
    assert all(suffix in outcome.output for suffix in (".json", ".tgf", ".graphml", ".dot", ".svg", "--format"))
    assert runner.invoke(cli, ["up", "mart.sales_daily", "-o", name, "--format", "json"]).exit_code == 0
    assert json.loads(Path(name).read_text())["roots"] == ["mart.sales_daily"]


def test_unknown_name_exits_1_with_suggestions(runner) -> None:
    harvested(runner)
    outcome = runner.invoke(cli, ["up", "mart.sales_dayly"])
    assert outcome.exit_code == 1
    assert "mart.sales_daily" in outcome.output


def test_missing_or_damaged_store_is_named_without_traceback(runner) -> None:
    outcome = runner.invoke(cli, ["up", "x"])
    assert outcome.exit_code == 2 and "graph.lin" in outcome.output and "Traceback" not in outcome.output
    Path("bad.lin").write_bytes(b"garbage" * 50)
    outcome = runner.invoke(cli, ["stats", "--store", "bad.lin"])
    assert outcome.exit_code == 2 and "bad.lin: not a lineage store" in outcome.output


def test_stats_counts_by_kind(runner) -> None:
    harvested(runner)
    outcome = runner.invoke(cli, ["stats", "--verify"])
    assert outcome.exit_code == 0
    assert "transformation" in outcome.output and "checksum ok" in outcome.output


def test_unknown_dialect_is_a_usage_error(runner) -> None:
    outcome = runner.invoke(cli, ["harvest", str(WAREHOUSE), "--dialect", "nosuchsql"])
    assert outcome.exit_code == 2 and "unknown dialect" in outcome.output


def test_python_m_and_queries_never_import_sqlglot(tmp_path) -> None:
    env = {**os.environ, "LINEAGE_STORE": str(tmp_path / "g.lin")}
    subprocess.run(
        [sys.executable, "-m", "lineage_cli", "harvest", str(WAREHOUSE), "-q"], check=True, env=env, capture_output=True
    )
    probe = (
        "import sys\nfrom lineage_cli.cli import cli\n"
        "cli(['up', 'mart.sales_daily', '--format', 'json'], prog_name='lineage', standalone_mode=False)\n"
        "assert 'sqlglot' not in sys.modules, 'sqlglot imported on the query path'\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["roots"] == ["mart.sales_daily"]


@pytest.mark.parametrize("command", ["parse", "harvest"])
def test_statements_sqlglot_cannot_read_leave_no_sqlglot_warning_on_stderr(tmp_path, command) -> None:
    sql = tmp_path / "grants.sql"
    sql.write_text("GRANT SELECT ON TABLE a.b TO USER bob;\nINSERT INTO a.c SELECT x FROM a.b;\n")
    args = [sys.executable, "-m", "lineage_cli", command, str(sql), "--dialect", "hive"]
    args += ["--store", str(tmp_path / "g.lin"), "-q"] if command == "harvest" else []
    run = subprocess.run(args, capture_output=True, text=True, check=True)
    assert "unsupported syntax" not in run.stderr and "Falling back" not in run.stderr, run.stderr


def test_the_console_script_keeps_exit_codes_and_whole_output_and_minds_an_early_closed_pipe(tmp_path) -> None:
    """``main`` ends the process with os._exit: what it printed must be all there, and its status right."""
    env = {**os.environ, "LINEAGE_STORE": str(tmp_path / "g.lin")}
    env.pop("PYTHONUNBUFFERED", None)  # buffered standard streams, as a user's shell has them

    def lineage(*arguments: str, **options: object) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "lineage_cli", *arguments]
        return subprocess.run(command, env=env, capture_output=True, text=True, **options)  # type: ignore[call-overload]

    edges = tmp_path / "edges.csv"
    edges.write_text("source,target\n" + "".join(f"src.t{i},dst.t{i}\n" for i in range(2000)))
    assert lineage("import", str(edges)).returncode == 0
    whole = lineage("down", "src.%", "--format", "json")  # an answer larger than a pipe's buffer
    assert whole.returncode == 0 and len(whole.stdout) > 1 << 17
    assert json.loads(whole.stdout)["direction"] == "down"
    small = lineage("up", "dst.t7", "--format", "json")  # a few hundred bytes: still in the buffer at the end
    assert json.loads(small.stdout)["roots"] == ["dst.t7"]
    assert lineage("up", "no.such_table").returncode == 1
    assert lineage("up", "x", "--store", str(tmp_path / "none.lin")).returncode == 2
    assert lineage("up").returncode == 2  # a usage error
    reader = subprocess.Popen(
        [sys.executable, "-m", "lineage_cli", "down", "src.%", "--format", "json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert reader.stdout is not None and reader.stderr is not None
    assert reader.stdout.read(10)
    reader.stdout.close()  # the reader leaves early, as `| head` does
    assert "Traceback" not in reader.stderr.read().decode()
    assert reader.wait() == 1  # click's status for a broken pipe


def test_a_harvest_that_finds_no_sql_leaves_the_store_and_exits_2(runner, tmp_path) -> None:
    harvested(runner)
    before = Path(".lineage/graph.lin").read_bytes()
    (tmp_path / "empty" / "docs").mkdir(parents=True)
    (tmp_path / "empty" / "docs" / "README.md").write_text("no SQL here")
    outcome = runner.invoke(cli, ["harvest", "empty", "--quiet"])
    assert outcome.exit_code == 2
    assert outcome.stderr.strip() == (
        "error: nothing to harvest: no *.sql file under empty (--allow-empty writes an empty store)"
    )
    assert Path(".lineage/graph.lin").read_bytes() == before, "the last harvest's store is untouched"
    allowed = runner.invoke(cli, ["harvest", "empty", "--quiet", "--allow-empty"])
    assert allowed.exit_code == 0 and "0 nodes, 0 edges" in allowed.stdout


def test_harvest_warns_of_a_folder_it_cannot_list_and_of_a_dangling_link(runner, tmp_path, monkeypatch) -> None:
    for name in ("sql/a.sql", "sql/locked/b.sql"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("INSERT INTO dwh.t SELECT x FROM stg.s")
    (tmp_path / "sql" / "moved.sql").symlink_to("elsewhere/moved.sql")
    scandir = os.scandir

    def refusing(path: str) -> object:  # as chmod 000 would, also for root, whom permissions do not stop
        if path.endswith("locked"):
            raise PermissionError(13, "Permission denied", path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    outcome = runner.invoke(cli, ["harvest", "sql"])
    assert outcome.exit_code == 0, outcome.output
    assert "sql/locked: warning: cannot read directory: Permission denied" in outcome.stderr
    assert "sql/moved.sql: warning: symbolic link to elsewhere/moved.sql, which does not exist" in outcome.stderr
    assert "harvested 1 files" in outcome.stdout and "2 warnings" in outcome.stdout


def test_jobs_beyond_the_cpus_are_capped_with_a_note(runner, tmp_path, monkeypatch) -> None:
    from lineage_cli.commands import harvest as run
    from lineage_cli.harvest import batch

    monkeypatch.setattr(batch, "usable_cpus", lambda: 2)
    monkeypatch.setattr(run, "usable_cpus", lambda: 2)
    (tmp_path / "t.sql").write_text("INSERT INTO dwh.t SELECT x FROM stg.s")
    outcome = runner.invoke(cli, ["harvest", "t.sql", "--jobs", "64"])
    assert outcome.exit_code == 0, outcome.output
    assert outcome.stderr.count("note: --jobs 64 capped at 2, the CPUs this process may use") == 1
    assert "capped" not in runner.invoke(cli, ["harvest", "t.sql", "--jobs", "2"]).stderr


def test_encoding_options_of_harvest_parse_and_check(runner, tmp_path) -> None:
    (tmp_path / "latin.sql").write_bytes("-- für\nINSERT INTO dwh.t SELECT s.x AS größe FROM stg.s s".encode("latin-1"))
    for command in (["harvest", "latin.sql"], ["parse", "latin.sql"], ["check", "latin.sql"]):
        plain = runner.invoke(cli, command)
        assert plain.exit_code == 0, plain.output
        assert "latin.sql:1:5: warning: byte 0xfc is not valid utf-8" in plain.stderr or (
            command[0] == "parse" and json.loads(plain.stdout)["warnings"][0]["line"] == 1
        ), command
        declared = runner.invoke(cli, [*command, "--encoding", "latin-1"])
        assert declared.exit_code == 0 and "warning" not in declared.stderr, declared.output
    parsed = json.loads(runner.invoke(cli, ["parse", "latin.sql", "--encoding", "latin-1"]).stdout)
    assert parsed["warnings"] == [] and parsed["statements"][0]["columns"][0]["target"] == "dwh.t.größe"
    utf16 = "INSERT INTO dwh.u SELECT x FROM stg.s".encode("utf-16")  # with its byte-order mark
    piped = runner.invoke(cli, ["parse"], input=utf16)
    assert json.loads(piped.stdout)["statements"][0]["targets"] == ["dwh.u"]
    unknown = runner.invoke(cli, ["harvest", "latin.sql", "--encoding", "klingon"])
    assert unknown.exit_code == 2 and "unknown encoding 'klingon'" in unknown.stderr


class _OddError(LineageError):
    """An error of a kind no command knows by name: it is caught as a LineageError, and exits with its code."""

    exit_code = 3


@pytest.mark.parametrize(
    ("command", "stage"),
    [
        (["harvest", "t.sql"], "lineage_cli.commands.harvest.plan_harvest"),
        (["parse", "t.sql"], "lineage_cli.commands.parse.parse_sql"),
        (["up", "a.t"], "lineage_cli.store.reader.open_store"),
        (["path", "a.s", "a.t"], "lineage_cli.store.reader.open_store"),
        (["stats"], "lineage_cli.commands.stats.open_store"),
        (["export"], "lineage_cli.commands.export.open_store"),
        (["import", "t.csv"], "lineage_cli.commands.import_.import_file"),
        (["check", "t.sql"], "lineage_cli.commands.check.check"),
        (["serve"], "lineage_cli.store.reader.open_store"),
    ],
)
def test_every_command_catches_a_lineage_error_and_exits_with_its_code(runner, monkeypatch, command, stage) -> None:
    def fails(*_args: object, **_options: object) -> None:
        raise _OddError("no answer today")

    Path("t.sql").write_text("INSERT INTO a.t SELECT x FROM a.s;\n")
    Path("t.csv").write_text("source,target\na.s,a.t\n")
    monkeypatch.setattr(stage, fails)
    outcome = runner.invoke(cli, command)
    assert outcome.exit_code == 3, outcome.output
    assert outcome.stderr.endswith("error: no answer today\n") and "Traceback" not in outcome.output


def test_a_file_that_cannot_be_read_is_bad_input_with_the_systems_words(runner, tmp_path) -> None:
    missing = runner.invoke(cli, ["parse", "missing.sql"])
    assert (missing.exit_code, missing.stderr) == (2, "error: [Errno 2] No such file or directory: 'missing.sql'\n")
    (tmp_path / "latin.yaml").write_bytes("s.t: [größe]\n".encode("latin-1"))
    (tmp_path / "t.sql").write_text("SELECT 1;\n")
    for command in (["harvest", "t.sql", "--schema"], ["harvest", "t.sql", "--vars"], ["parse", "t.sql", "--schema"]):
        outcome = runner.invoke(cli, [*command, "latin.yaml"])
        assert outcome.exit_code == 2, command
        assert outcome.stderr == "error: 'utf-8' codec can't decode byte 0xf6 in position 8: invalid start byte\n"


# -- the click-free query path (commands/quick.py) ---------------------------------------------------------------
QUICK_ARGUMENTS = [
    ["up", "mart.sales_daily"],
    ["down", "stg.pos_sales", "--format", "json", "--depth", "2"],
    ["up", "mart.sales_daily", "--walkplan=impact", "--arg", "a", "--arg=b", "--exact", "--level", "schema"],
    ["up", "mart.%", "--show-transformations", "--predicates", "--group-by", "schema", "--rankdir", "TB"],
    ["down", "x", "-o", "out.graphml", "--store", "other.lin", "--datamarts", str(REPO / "pyproject.toml")],
]
NOT_QUICK = [
    ["up", "--help"], ["up"], ["up", "a", "b"], ["up", "a", "--depth", "0"], ["up", "a", "--depth", "x"],
    ["up", "a", "--format", "svg"], ["up", "a", "--walkplan", "impact", "--predicates"], ["up", "a", "--nosuch"],
    ["up", "a", "--datamarts", "missing.yaml"], ["up", "a", "-o", str(REPO)], ["up", "a", "--exact=1"],
    ["up", "a", "--depth", "²"], ["path", "a", "b"], ["harvest", "x"], [], ["up", "a", "--store"],
]  # fmt: skip


@pytest.mark.parametrize("arguments", QUICK_ARGUMENTS, ids=" ".join)
def test_a_plain_query_is_read_without_click_as_click_reads_it(arguments) -> None:
    from lineage_cli.commands.quick import parsed

    command, options = parsed(arguments)
    assert options == cli.commands[command].make_context(command, list(arguments[1:])).params


@pytest.mark.parametrize("arguments", NOT_QUICK, ids=" ".join)
def test_anything_but_a_plain_query_is_left_to_click(arguments) -> None:
    from lineage_cli.commands.quick import parsed

    assert parsed(arguments) is None


def test_the_quick_options_are_clicks_own() -> None:
    """Each option the click-free path reads is one of the command's, with click's parameter, kind and choices."""
    from lineage_cli.commands.quick import COMMANDS, OPTIONS, REPEATED

    for command in COMMANDS:
        by_flag = {flag: option for option in cli.commands[command].params for flag in option.opts}
        for flag, (parameter, takes) in OPTIONS.items():
            option = by_flag[flag]
            assert option.name == parameter and option.is_flag == (takes is None), flag
            assert option.multiple == (parameter in REPEATED), flag
            if isinstance(takes, tuple):
                assert tuple(option.type.choices) == takes, flag


def test_the_console_script_answers_a_plain_query_without_importing_click(tmp_path) -> None:
    env = {**os.environ, "LINEAGE_STORE": str(tmp_path / "g.lin")}
    subprocess.run(
        [sys.executable, "-m", "lineage_cli", "harvest", str(WAREHOUSE), "-q"], check=True, env=env, capture_output=True
    )
    command = [sys.executable, "-X", "importtime", "-m", "lineage_cli", "up", "mart.sales_daily", "--format", "json"]
    run = subprocess.run(command, env=env, capture_output=True, text=True)
    assert run.returncode == 0 and json.loads(run.stdout)["roots"] == ["mart.sales_daily"]
    imported = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time")}
    assert "lineage_cli.walk.query" in imported and not {"click", "sqlglot"} & imported
    missing = subprocess.run([*command[:5], "up", "nosuch"], env=env, capture_output=True, text=True)
    assert missing.returncode == 1 and "no table, view or column named 'nosuch'" in missing.stderr
