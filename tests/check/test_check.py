"""``lineage check`` on a temporary git repository: a small warehouse committed, harvested, then changed."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from markdown_it import MarkdownIt

from lineage_cli.check.findings import Finding
from lineage_cli.check.gate import CheckError, check
from lineage_cli.check.impact import impact_section, nearest
from lineage_cli.check.report import escape_data, escape_property, github_command, markdown_summary
from lineage_cli.check.rules import narrower
from lineage_cli.cli import cli
from lineage_cli.harvest.schema import SchemaCatalog
from lineage_cli.store.reader import open_store
from lineage_cli.walk.result import LineageResult, ResultEdge, ResultNode
from tests.conftest import REPO, check_formats
from tests.emit.test_mermaid import read_with_mermaid

ODS = """\
CREATE TABLE stg.orders (id INT, amount DECIMAL(18,2), customer VARCHAR(100), ok BOOLEAN);

INSERT INTO ods.orders (id, amount, customer)
SELECT o.id, o.amount, o.customer
FROM stg.orders o
WHERE o.ok;
"""
MART = """\
INSERT INTO mart.revenue (customer, total)
SELECT customer, SUM(amount)
FROM ods.orders
GROUP BY customer;
"""
RPT = """\
CREATE VIEW rpt.top AS
SELECT customer, total FROM mart.revenue WHERE total > 100;
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A warehouse of three files committed on `main`, its store harvested (and git-ignored)."""
    root = tmp_path / "warehouse"
    (root / "sql").mkdir(parents=True)
    for name, text in (("ods.sql", ODS), ("mart.sql", MART), ("rpt.sql", RPT)):
        (root / "sql" / name).write_text(text)
    (root / ".gitignore").write_text(".lineage/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Check Test")
    git(root, "config", "user.email", "check@example.com")
    git(root, "config", "commit.gpgsign", "false")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base warehouse")
    monkeypatch.chdir(root)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("LINEAGE_STORE", raising=False)
    assert CliRunner().invoke(cli, ["harvest", "sql", "-q"]).exit_code == 0
    return root


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["check", *args])


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_dropping_a_column_read_downstream_is_breaking(repo: Path) -> None:
    edit(repo / "sql" / "ods.sql", "(id, amount, customer)\nSELECT o.id, o.amount,", "(id, customer)\nSELECT o.id,")
    warn_only = run("--fail-on", "never")
    assert warn_only.exit_code == 0, warn_only.output
    outcome = run()  # the default --fail-on error: a column still read downstream breaks its readers
    assert outcome.exit_code == 1
    assert (
        "sql/ods.sql:3: error: [LIN101 column-removed] ods.orders.amount is no longer written "
        "but mart.revenue.total read it"
    ) in outcome.output
    assert "- stg.orders.amount -> ods.orders.amount (projection)" in outcome.output
    assert "downstream: 2 tables/views, 4 columns: mart.revenue, rpt.top" in outcome.output


def test_the_readme_example_is_real(repo: Path) -> None:
    edit(repo / "sql" / "ods.sql", "(id, amount, customer)\nSELECT o.id, o.amount,", "(id, customer)\nSELECT o.id,")
    readme = (REPO / "README.md").read_text(encoding="utf-8").split("## `lineage check`", 1)[1]
    example = readme.split("```console\n", 1)[1].split("```", 1)[0]
    for block in example.split("$ lineage check ")[1:]:
        arguments, expected = block.split("\n", 1)
        assert run(*arguments.split()).output == expected


def test_a_harmless_change_lists_the_diff_and_passes(repo: Path) -> None:
    edit(repo / "sql" / "mart.sql", "GROUP BY customer;", "GROUP BY customer\nHAVING SUM(amount) > 0;")
    outcome = run("--fail-on", "breaking")
    assert outcome.exit_code == 0, outcome.output
    assert "sql/mart.sql:1: notice: [LIN201 lineage-changed] mart.revenue: changed" in outcome.output
    assert "+ ods.orders.amount -> mart.revenue (predicate)" in outcome.output
    assert "checked 1 changed file: 0 errors, 0 warnings, 1 notice" in outcome.output
    assert run("--fail-on", "change").exit_code == 1


def test_a_syntax_error_is_annotated_at_its_line(repo: Path) -> None:
    (repo / "sql" / "mart.sql").write_text(MART + "\nINSERT INTO mart.x SELECT FROM WHERE;\n")
    outcome = run("--format", "github")
    assert outcome.exit_code == 1
    assert "::error file=sql/mart.sql,line=6,col=32,title=LIN001 parse-error::Expected table name" in outcome.output


def test_a_statement_that_no_longer_parses_is_not_a_removed_table(repo: Path) -> None:
    edit(repo / "sql" / "mart.sql", "FROM ods.orders", "FROM")
    outcome = run("--format", "json")
    assert outcome.exit_code == 1
    assert [f["rule_id"] for f in json.loads(outcome.output)["findings"]] == ["LIN001"]


def test_a_removed_file_reports_its_targets_and_their_readers(repo: Path) -> None:
    git(repo, "rm", "-q", "sql/mart.sql")
    outcome = run("--format", "json")
    findings = json.loads(outcome.output)["findings"]
    assert outcome.exit_code == 1  # the default --fail-on error: rpt.top no longer gets its rows
    by_rule = {f["rule_id"]: f for f in findings}
    assert by_rule["LIN102"]["level"] == "error"
    assert by_rule["LIN102"]["message"] == "mart.revenue is no longer written but rpt.top read it"
    assert by_rule["LIN201"]["message"].startswith("mart.revenue: removed\n- ods.orders -> mart.revenue")
    assert {f["file"] for f in findings} == {"sql/mart.sql"}


def test_untracked_and_committed_changes_both_count_against_the_base(repo: Path) -> None:
    (repo / "sql" / "new.sql").write_text("INSERT INTO mart.fresh (c) SELECT customer FROM ods.orders;\n")
    git(repo, "checkout", "-q", "-b", "feature")
    edit(repo / "sql" / "rpt.sql", "total > 100", "total > 1000")
    git(repo, "commit", "-q", "-am", "raise the bar")
    outcome = run("--format", "json")
    files = json.loads(outcome.output)["files"]
    assert files == 2  # new.sql (untracked) and rpt.sql (committed on the branch; unchanged lineage)
    assert "mart.fresh: added" in outcome.output


def test_a_narrowed_column_type_is_reported(repo: Path) -> None:
    edit(
        repo / "sql" / "ods.sql",
        "CREATE TABLE stg.orders (id INT, amount DECIMAL(18,2), customer VARCHAR(100)",
        "-- narrower\nCREATE TABLE stg.orders (id INT, amount DECIMAL(18,2), customer VARCHAR(20)",
    )
    outcome = run("--fail-on", "breaking")
    assert outcome.exit_code == 1
    assert (
        "sql/ods.sql:2: warning: [LIN103 type-narrowed] stg.orders.customer: VARCHAR(100) -> VARCHAR(20)"
        in outcome.output
    )


def test_a_narrowed_type_is_reported_at_its_own_tables_statement(repo: Path) -> None:
    # Two tables named orders in one file, the second one's header split over lines: a search of the text
    # for "create ... table ... orders" found stg.orders' line 1.
    ddl = (
        "CREATE TABLE stg.orders (id INT, note VARCHAR(100));\n\n"
        "CREATE TABLE\n  ods.orders (id INT, note VARCHAR({}));\n"
    )
    (repo / "sql" / "ddl.sql").write_text(ddl.format(100))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "ddl")
    (repo / "sql" / "ddl.sql").write_text(ddl.format(20))
    outcome = run("--fail-on", "breaking")
    assert "sql/ddl.sql:3: warning: [LIN103 type-narrowed] ods.orders.note: VARCHAR(100) -> VARCHAR(20)" in (
        outcome.output
    ), outcome.output


def test_a_table_still_written_by_another_file_is_not_removed(repo: Path) -> None:
    (repo / "sql" / "backfill.sql").write_text("INSERT INTO mart.revenue (customer, total) SELECT 'x', 0;\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "backfill")
    assert CliRunner().invoke(cli, ["harvest", "sql", "-q"]).exit_code == 0
    git(repo, "rm", "-q", "sql/mart.sql")
    outcome = run("--fail-on", "breaking")
    assert outcome.exit_code == 0, outcome.output
    assert "mart.revenue: removed" in outcome.output and "LIN102" not in outcome.output


def test_a_branch_behind_its_base_is_compared_with_the_merge_base(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    edit(repo / "sql" / "rpt.sql", "total > 100", "total > 1000")
    git(repo, "commit", "-q", "-am", "on the branch")
    git(repo, "checkout", "-q", "main")
    (repo / "sql" / "later.sql").write_text("INSERT INTO mart.later (c) SELECT customer FROM ods.orders;\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "main moves on")
    git(repo, "checkout", "-q", "feature")
    outcome = run("--base", "main", "--format", "json")
    assert json.loads(outcome.output) == {"findings": [], "files": 1}  # rpt.sql only; later.sql is main's


def test_staged_sees_the_deletion_of_a_tables_only_writer(repo: Path) -> None:
    git(repo, "rm", "-q", "sql/mart.sql")  # pre-commit would name no file at all: the deleted one does not exist
    outcome = run("--staged")
    assert outcome.exit_code == 1, outcome.output
    assert "sql/mart.sql:1: error: [LIN102 table-removed] mart.revenue is no longer written but rpt.top read it" in (
        outcome.output
    )
    assert "checked 1 changed file" in outcome.output


def test_staged_checks_the_index_not_the_working_tree(repo: Path) -> None:
    ods = repo / "sql" / "ods.sql"
    edit(ods, "(id, amount, customer)\nSELECT o.id, o.amount,", "(id, customer)\nSELECT o.id,")
    (repo / "sql" / "untracked.sql").write_text("INSERT INTO mart.x SELECT FROM WHERE;\n")
    unstaged = run("--staged")
    assert unstaged.exit_code == 0 and "checked 0 changed files" in unstaged.output, unstaged.output
    git(repo, "add", "sql/ods.sql")
    ods.write_text(ods.read_text() + "\nSELECT FROM WHERE;\n")  # a later, unstaged edit: not in the commit
    staged = run("--staged", "--format", "json")
    assert [f["rule_id"] for f in json.loads(staged.output)["findings"]] == ["LIN101", "LIN201"], staged.output
    assert staged.exit_code == 1


def test_staged_in_a_repository_without_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "first.sql").write_text("INSERT INTO a.b SELECT x FROM c.d;\n")
    git(tmp_path, "add", "first.sql")
    monkeypatch.chdir(tmp_path)
    outcome = run("--staged", "--store", "none.lin")
    assert outcome.exit_code == 0 and "first.sql:1: notice: [LIN201 lineage-changed] a.b: added" in outcome.output


def test_staged_takes_no_base(repo: Path) -> None:
    outcome = run("--staged", "--base", "main")
    assert outcome.exit_code == 2 and "--staged compares the index with HEAD; it takes no --base" in outcome.output


def test_the_pre_commit_hook_checks_the_staged_change_as_a_whole() -> None:
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["entry"] == "lineage check --staged"
    # pre-commit's file names leave out deletions, and a commit that only deletes SQL names none at all.
    assert hook["pass_filenames"] is False and hook["always_run"] is True and "files" not in hook
    assert hook["require_serial"] is True  # one store, one index: no parallel batches


def test_sql_that_is_not_utf8_in_git_is_checked_against_every_kind_of_base(repo: Path) -> None:
    (repo / "sql" / "rpt.sql").write_bytes(RPT.encode() + b"-- caf\xe9\n")
    git(repo, "commit", "-q", "-am", "a Latin-1 comment")
    (repo / "sql" / "rpt.sql").write_text(RPT.replace("total > 100", "total > 1000"))
    outcome = run("sql/rpt.sql")
    assert outcome.exit_code == 0, outcome.output
    assert run("--base", "HEAD").exit_code == 0 and run("--staged").exit_code == 0


def test_named_paths_and_no_changes(repo: Path) -> None:
    clean = run()
    assert clean.exit_code == 0 and "checked 0 changed files" in clean.output
    named = run("sql/rpt.sql")
    assert named.exit_code == 0 and "checked 1 changed file: 0 errors, 0 warnings, 0 notices" in named.output


def shallow_clone(repo: Path, into: Path, *options: str) -> Path:
    """A clone as actions/checkout makes it by default: one commit deep (file://, or git ignores --depth)."""
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", *options, repo.as_uri(), str(into)], check=True, capture_output=True
    )
    return into


def test_a_shallow_clone_without_a_base_fails_instead_of_checking_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "sql" / "mart.sql").write_text(MART + "\nINSERT INTO mart.x SELECT FROM WHERE;\n")
    git(repo, "commit", "-q", "-am", "a parse error on main")
    monkeypatch.chdir(shallow_clone(repo, tmp_path / "ci"))
    outcome = run()
    assert outcome.exit_code == 2, outcome.output  # it used to say "checked 0 changed files" and pass
    assert (
        "error: no base to compare with: tried origin/HEAD (HEAD itself), main (HEAD itself), "
        "master (no such revision); this shallow clone lacks the history before HEAD"
    ) in outcome.output
    assert "`fetch-depth: 0` in actions/checkout" in outcome.output and "pass --base REV" in outcome.output
    assert run("--base", "main").exit_code == 2
    assert run("sql/mart.sql").exit_code == 1  # named files are still checked, against HEAD's version


def test_a_shallow_branch_with_no_history_in_common_with_its_base_fails(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "sql" / "mart.sql").write_text(MART + "\nINSERT INTO mart.x SELECT FROM WHERE;\n")
    git(repo, "commit", "-q", "-am", "a parse error on the branch")
    monkeypatch.chdir(shallow_clone(repo, tmp_path / "ci", "--no-single-branch", "--branch", "feature"))
    outcome = run("--base", "origin/main")
    assert outcome.exit_code == 2, outcome.output
    assert "error: --base origin/main (no history in common with HEAD); this shallow clone" in outcome.output


def test_usage_errors_exit_2(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run("--base", "no-such-ref").exit_code == 2
    assert run("--dialect", "klingon").exit_code == 2
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    monkeypatch.chdir(outside)
    outcome = run()
    assert outcome.exit_code == 2
    assert "not inside a git repository" in outcome.output


def test_a_checked_file_that_cannot_be_read_is_a_check_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read_bytes = Path.read_bytes

    def locked(path: Path) -> bytes:
        if path.name == "ods.sql":
            raise PermissionError(13, "Permission denied", str(path))
        return read_bytes(path)

    edit(repo / "sql" / "ods.sql", "WHERE o.ok", "WHERE NOT o.ok")
    monkeypatch.setattr(Path, "read_bytes", locked)
    for named in (["sql/ods.sql"], []):  # named on the command line, or changed since the base
        with pytest.raises(CheckError, match=r"^\[Errno 13\] Permission denied: '.*ods\.sql'$"):
            check(named, None, None, None, SchemaCatalog())
        outcome = run(*named)
        assert outcome.exit_code == 2
        assert re.fullmatch(r"error: \[Errno 13\] Permission denied: '.*ods\.sql'\n", outcome.output)


def test_without_a_store_only_parse_errors_and_diffs(repo: Path) -> None:
    edit(repo / "sql" / "ods.sql", "(id, amount, customer)\nSELECT o.id, o.amount,", "(id, customer)\nSELECT o.id,")
    outcome = run("--store", "missing.lin", "--fail-on", "breaking")
    assert outcome.exit_code == 0
    assert "no store at missing.lin" in outcome.output
    assert "LIN101" not in outcome.output


def test_sarif_is_valid_with_stable_rules_and_fingerprints(repo: Path, tmp_path: Path) -> None:
    edit(repo / "sql" / "ods.sql", "(id, amount, customer)\nSELECT o.id, o.amount,", "(id, customer)\nSELECT o.id,")
    (repo / "sql" / "mart.sql").write_text(MART + "\nINSERT INTO mart.x SELECT FROM WHERE;\n")
    outcome = run("--format", "sarif")
    path = tmp_path / "check.sarif"
    path.write_text(outcome.output)
    checked = check_formats("sarif", path)
    assert checked.returncode == 0, checked.stdout
    sarif = json.loads(outcome.output)
    rules = [rule["id"] for rule in sarif["runs"][0]["tool"]["driver"]["rules"]]
    assert rules == ["LIN001", "LIN101", "LIN102", "LIN103", "LIN201"]
    results = sarif["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["LIN001", "LIN101", "LIN201"]
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 6, "startColumn": 32}
    assert json.loads(run("--format", "sarif").output) == sarif  # fingerprints are stable run to run


HOSTILE = "sql/we,ird: 100%\r\nname.sql"


def test_github_escaping_matches_actions_core(tmp_path: Path) -> None:
    item = Finding(HOSTILE, 3, 7, "LIN001", "error", "50% done\r\nnext: a,b", "parse-error")
    command = github_command(item)
    assert command == (
        "::error file=sql/we%2Cird%3A 100%25%0D%0Aname.sql,line=3,col=7,title=LIN001 parse-error"
        "::50%25 done%0D%0Anext: a,b"
    )
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25" and escape_data("a:b,c%\n") == "a:b,c%25%0A"
    path = tmp_path / "annotations.txt"
    path.write_text(command + "\n")
    checked = check_formats("github-annotations", path)
    assert checked.returncode == 0, checked.stdout


def test_github_output_of_a_hostile_file_name_is_valid(repo: Path, tmp_path: Path, monkeypatch) -> None:
    weird = repo / "sql" / "we,ird: 100%.sql"
    weird.write_text("INSERT INTO mart.bad SELECT FROM WHERE;\n")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    outcome = run("--format", "github")
    assert "::error file=sql/we%2Cird%3A 100%25.sql,line=1," in outcome.output
    path = tmp_path / "annotations.txt"
    path.write_text(outcome.output)
    checked = check_formats("github-annotations", path)
    assert checked.returncode == 0, checked.stdout
    assert summary.read_text().startswith("## lineage check\n\nchecked 1 changed file: 1 error")


def test_markdown_summary_keeps_table_cells_intact() -> None:
    item = Finding("a|b.sql", 1, None, "LIN201", "notice", "x | y\nz", "lineage-changed")
    assert "| notice | `a\\|b.sql:1` | LIN201 lineage-changed | x \\| y<br>z |" in markdown_summary([item], 1)


def test_markdown_summary_shows_names_as_written() -> None:
    message = "<i>t</i> is *no* longer [written](x) ~~a~~ &amp; $x$ \\ | y\r\nnext_line_"
    item = Finding("sql/<i>`odd`|x.sql", 7, None, "LIN102", "error", message, "table-removed")
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown_summary([item], 1))
    assert re.findall(r"<td>(.*?)</td>", html.split("<tbody>")[1]) == [
        "error",
        "<code>sql/&lt;i&gt;`odd`|x.sql:7</code>",
        "LIN102 table-removed",
        "&lt;i&gt;t&lt;/i&gt; is *no* longer [written](x) ~~a~~ &amp;amp; $x$ \\ | y<br>next_line_",
    ]
    assert "\\$x\\$" in markdown_summary([item], 1)  # GitHub renders $...$ as math


def test_github_annotations_of_names_holding_escape_characters(tmp_path: Path) -> None:
    names = ["a%0Ab.sql", "c%25d.sql", "line\nbreak.sql", "cr\rlf.sql", "x::y.sql", "p,q:r.sql"]
    items = [Finding(name, 1, 2, "LIN001", "error", f"{name} %0D: a,b::c", "parse-error") for name in names]
    commands = [github_command(item) for item in items]
    assert all("\n" not in command and "\r" not in command for command in commands)
    files = [command.split(",", 1)[0] for command in commands]
    assert files == [
        "::error file=a%250Ab.sql",  # a literal "%0A" must not turn into a line break
        "::error file=c%2525d.sql",
        "::error file=line%0Abreak.sql",
        "::error file=cr%0Dlf.sql",
        "::error file=x%3A%3Ay.sql",
        "::error file=p%2Cq%3Ar.sql",
    ]
    assert commands[0].endswith("::a%250Ab.sql %250D: a,b::c")  # the message escapes only %, CR and LF
    path = tmp_path / "annotations.txt"
    path.write_text("".join(command + "\n" for command in commands))
    checked = check_formats("github-annotations", path)
    assert checked.returncode == 0, checked.stdout


@pytest.mark.parametrize(
    ("old", "new", "narrowed"),
    [
        ("VARCHAR(100)", "VARCHAR(50)", True),
        ("VARCHAR(50)", "VARCHAR(100)", False),
        ("DECIMAL(18, 2)", "DECIMAL(10, 2)", True),
        ("DECIMAL(18, 2)", "DECIMAL(18, 4)", True),  # fewer integer digits
        ("DECIMAL(18, 2)", "DECIMAL(20, 2)", False),
        ("BIGINT", "INT", True),
        ("INTEGER", "INT", False),
        ("DOUBLE", "FLOAT", True),
        ("INT", "STRING", False),
        (None, "INT", False),
    ],
)
def test_narrower(old: str | None, new: str, narrowed: bool) -> None:
    assert narrower(old, new) is narrowed


def test_a_file_not_in_utf8_is_checked_in_both_versions_with_a_warning(repo: Path) -> None:
    path = repo / "sql" / "ods.sql"
    path.write_bytes(("-- Bestellungen für den Mart\n" + ODS).encode("latin-1"))
    git(repo, "commit", "-q", "-am", "a Latin-1 comment")
    dropped = ODS.replace("amount, customer)\nSELECT o.id, o.amount, o.customer", "amount)\nSELECT o.id, o.amount")
    path.write_bytes(("-- Bestellungen für den Mart\n" + dropped).encode("latin-1"))
    outcome = run("--base", "HEAD", "--fail-on", "breaking")
    assert outcome.exit_code == 1, outcome.output
    assert "sql/ods.sql:1:18: warning: byte 0xfc is not valid utf-8" in outcome.stderr
    assert "ods.orders.customer is no longer written" in outcome.stdout
    declared = run("--base", "HEAD", "--encoding", "latin-1")
    assert "warning: byte" not in declared.stderr and "ods.orders.customer" in declared.stdout


def test_a_condition_shaping_a_column_belongs_to_its_table_not_to_a_new_target() -> None:
    from lineage_cli.check.diff import analyse

    found = analyse("CREATE TABLE t AS SELECT IF(s.c = 'x', 1, 0) AS flag FROM s", "a.sql", "spark", SchemaCatalog())
    assert list(found.targets) == ["default.t"]
    (target,) = found.targets.values()
    assert ("default.s.c", "default.t.flag", "predicate") in target.edges and target.columns == {"default.t.flag"}


def test_dropping_a_column_of_literals_read_downstream_is_breaking(repo: Path) -> None:
    edit(
        repo / "sql" / "ods.sql",
        "(id, amount, customer)\nSELECT o.id, o.amount, o.customer",
        "(id, amount, customer, origin)\nSELECT o.id, o.amount, o.customer, 'pos'",
    )
    edit(
        repo / "sql" / "rpt.sql",
        "SELECT customer, total FROM mart.revenue",
        "SELECT r.customer, r.total, o.origin FROM mart.revenue r JOIN ods.orders o ON o.customer = r.customer",
    )
    git(repo, "commit", "-q", "-am", "an origin column")
    assert CliRunner().invoke(cli, ["harvest", "sql", "-q"]).exit_code == 0
    edit(
        repo / "sql" / "ods.sql",
        "(id, amount, customer, origin)\nSELECT o.id, o.amount, o.customer, 'pos'",
        "(id, amount, customer)\nSELECT o.id, o.amount, o.customer",
    )
    outcome = run()
    assert outcome.exit_code == 1, outcome.output
    assert "[LIN101 column-removed] ods.orders.origin is no longer written but rpt.top.origin read it" in outcome.output
    assert "- ods.orders.origin (column)" in outcome.output


# ------------------------------------------------------------------ the step summary's impact flowchart


def flowchart(summary: str) -> str:
    blocks = re.findall(r"```mermaid\n(.*?)```", summary, re.S)
    assert len(blocks) == 1, summary
    return blocks[0]


def test_the_summary_draws_the_changed_target_and_its_downstream(repo: Path, tmp_path: Path, monkeypatch) -> None:
    edit(repo / "sql" / "mart.sql", "FROM ods.orders\n", "FROM ods.orders\nWHERE amount > 0\n")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert run("--format", "github").exit_code == 0
    text = summary.read_text()
    assert text.startswith("## lineage check\n")
    chart = flowchart(text)
    assert chart.startswith("flowchart LR\n")
    assert re.findall(r'^  (n\d+)\W+"([^"]+)"', chart, re.M) == [("n0", "mart.revenue"), ("n1", "rpt.top")]
    assert "  n0 --> n1" in chart.splitlines() and "  class n0 queried" in chart.splitlines()
    assert "left out" not in text
    read = read_with_mermaid(chart)
    assert {node["label"] for node in read["nodes"] if "queried" in node["classes"]} == {"mart.revenue"}


def test_no_picture_without_a_store_or_for_a_new_table(repo: Path) -> None:
    store = open_store(repo / ".lineage" / "graph.lin")
    assert impact_section(None, ["mart.revenue"]) == ""
    assert impact_section(store, ["mart.brand_new"]) == ""
    assert "rpt.top" in impact_section(store, ["mart.brand_new", "mart.revenue"])


def test_the_summary_says_what_it_left_out(repo: Path) -> None:
    store = open_store(repo / ".lineage" / "graph.lin")
    section = impact_section(store, ["ods.orders"], limit=2)
    assert re.findall(r'"([^"]+)"', flowchart(section)) == ["mart.revenue", "ods.orders"]
    assert "1 more downstream table or view is left out; the 2 nearest the change are drawn." in section


def fan(width: int) -> LineageResult:
    """t feeds a0..a{width-1}, each of which feeds b{i}: a downstream walk two hops deep."""
    nodes = [ResultNode("t", "table")] + [
        ResultNode(f"{p}{i:03}", "table", 1 + (p == "b")) for p in "ab" for i in range(width)
    ]
    edges = [ResultEdge("t", f"a{i:03}", "flow") for i in range(width)]
    edges += [ResultEdge(f"a{i:03}", f"b{i:03}", "flow") for i in range(width)]
    return LineageResult("down", ["t"], nodes=nodes, edges=edges)


@pytest.mark.parametrize("limit", [1, 5, 30, 50])
def test_a_large_impact_keeps_the_nearest_nodes(limit: int) -> None:
    cut = nearest(fan(40), limit)
    names = [node.name for node in cut.nodes]
    assert len(names) == limit and names[0] == "t" and cut.roots == ["t"]
    # nearest first: no node two hops away while a one-hop node is left out
    assert not (any(n.startswith("b") for n in names) and len([n for n in names if n.startswith("a")]) < 40)
    assert all(edge.source in names and edge.target in names for edge in cut.edges)


def test_a_small_impact_is_drawn_whole() -> None:
    whole = fan(3)
    assert nearest(whole, 50) is whole
