"""The README documents every subcommand, and its examples are real."""

from __future__ import annotations

import json
import re
import shlex
import shutil

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from tests.conftest import REPO, WAREHOUSE

README = (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_subcommand_has_a_readme_section_and_help(name) -> None:
    assert f"## `lineage {name}`" in README or f"`lineage {name}`" in README
    command = cli.commands[name]
    assert command.help and "Example:" in command.help


def test_quick_start_is_make_demo_and_make_test() -> None:
    quick_start = README.split("## Quick start", 1)[1].split("##", 1)[0]
    assert re.findall(r"^make \w+", quick_start, re.MULTILINE) == ["make demo", "make test"]
    ci = (REPO / ".ci" / "run").read_text()
    assert ci.rstrip().endswith("make test")


def readme_examples() -> list[tuple[str, str]]:
    """(command line, printed output) of every README example that queries a fixture store."""
    queries = "up|down|stats|path|io|walkplans"
    blocks = re.findall(rf"```console\n\$ (lineage (?:{queries})\b[^\n]*)\n(.*?)```", README, re.DOTALL)
    return [(command, output) for command, output in blocks if "sales_dayly" not in command]


@pytest.mark.parametrize(("command", "expected"), readme_examples())
def test_readme_query_examples_print_what_the_readme_shows(tmp_path, monkeypatch, command, expected) -> None:
    # The same relative paths as in the README, so provenance and store size match too; `lineage io`
    # examples query the flow fixture, harvested through its manifest as the README shows.
    arguments = shlex.split(command)[1:]
    flow = arguments[0] == "io"
    fixture = REPO / "fixtures" / "sql" / "oozie" if flow else WAREHOUSE
    shutil.copytree(fixture, tmp_path / "fixtures" / "sql" / fixture.name)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    harvest = ["--manifest", "fixtures/sql/oozie/manifest.yaml"] if flow else ["fixtures/sql/warehouse"]
    assert runner.invoke(cli, ["harvest", *harvest, "-q"]).exit_code == 0
    if arguments[0] not in ("stats", "walkplans") and "--format" not in arguments:
        arguments += ["--format", "tree"]  # what a terminal gets by default
    outcome = runner.invoke(cli, arguments)
    assert outcome.exit_code == (1 if expected.startswith("error:") else 0)
    assert outcome.output.strip() == expected.strip()


def test_readme_python_api_example_runs_and_answers_like_the_cli(tmp_path, monkeypatch, capsys) -> None:
    code = README.split("## Python API", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    shutil.copytree(WAREHOUSE, tmp_path / "fixtures" / "sql" / "warehouse")
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(cli, ["harvest", "fixtures/sql/warehouse", "-q"]).exit_code == 0
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README's own example
    answers = {
        "impact": ["down", "stg.pos_sales", "--walkplan", "impact"],
        "schemas": ["up", "mart.sales_daily", "--depth", "2", "--level", "schema"],
        "route": ["path", "stg.pos_sales", "mart.sales_daily"],
    }
    for name, command in answers.items():
        cli_json = CliRunner().invoke(cli, [*command, "--format", "json"]).output
        assert json.loads(cli_json) == namespace[name].to_dict(), name  # type: ignore[attr-defined]
    assert max(n.depth for n in namespace["result"].nodes) == 2  # type: ignore[attr-defined]
    assert "\n1 no table, view or column named 'mart.sales_dayly'; closest: mart.sales_daily" in capsys.readouterr().out
    assert namespace["harvested"].statements == 47 and namespace["harvested"].errors == []  # type: ignore[attr-defined]
