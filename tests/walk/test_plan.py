"""Walkplans: loading from YAML, JSON and XML into one model, and errors that name file and line."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.model import EdgeType
from lineage_cli.walk.walkplan import PlanError, builtin_plans, load_plan, resolve_plan
from tests.bounded import run_bounded, yaml_bomb
from tests.conftest import REPO

YAML_PLAN = """\
name: filtered
description: values, and joins only when asked
edges:
  - edge: projection
    direction: forward
  - edge: predicate
    direction: both
    collect_edge: false
    when_arg: joins
    conditions:
      subtype: [JOIN]
      schema: [dwh, mart]
      max_depth: 3
      target_kind: [column]
  - edge: read
    collect_node: [table, view]
    follow: false
    conditions:
      node_kind: [transformation]
      name_like: "etl/%"
"""

XML_PLAN = """\
<?xml version="1.0"?>
<lineageServerPlan name="filtered" description="values, and joins only when asked">
  <useEdge name="projection" direction="forward"/>
  <useEdge name="predicate" direction="both" collectEdge="false" conditionalOnArg="joins">
    <condition subtype="JOIN" schema="dwh,mart" maxDepth="3" targetKind="column"/>
  </useEdge>
  <useEdge name="read" collectNode="table,view" follow="false">
    <condition nodeKind="transformation" nameLike="etl/%"/>
  </useEdge>
</lineageServerPlan>
"""


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_yaml_and_xml_forms_load_into_the_same_plan(tmp_path) -> None:
    from_yaml = load_plan(write(tmp_path, "p.yaml", YAML_PLAN))
    from_xml = load_plan(write(tmp_path, "p.xml", XML_PLAN))
    assert from_yaml.rules == from_xml.rules
    assert (from_yaml.name, from_yaml.description) == (from_xml.name, from_xml.description)
    predicate = from_yaml.rules[1]
    assert predicate.edge is EdgeType.PREDICATE and predicate.direction == "both"
    assert predicate.conditions.subtypes == {"JOIN"} and predicate.conditions.schemas == {"dwh", "mart"}
    assert predicate.conditions.max_depth == 3 and predicate.collect_edge is False
    assert predicate.conditions.target_kinds == {"column"}
    assert from_yaml.rules[2].collects("view") and not from_yaml.rules[2].collects("transformation")


def test_when_arg_rules_are_active_only_with_their_argument(tmp_path) -> None:
    plan = load_plan(write(tmp_path, "p.yaml", YAML_PLAN))
    assert [r.edge for r in plan.active()] == [EdgeType.PROJECTION, EdgeType.READ]
    assert [r.edge for r in plan.active(frozenset({"joins"}))] == [
        EdgeType.PROJECTION,
        EdgeType.PREDICATE,
        EdgeType.READ,
    ]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("name: x\nedges:\n  - edge: teleport\n", 3, "`edge`: expected one of"),
        ("name: x\nedges:\n  - edge: read\n    direction: sideways\n", 4, "forward, backward or both"),
        ("name: x\nedges:\n  - edge: read\n    collect_edge: maybe\n", 4, "true or false"),
        ("name: x\nedges:\n  - edge: read\n    follow: maybe\n", 4, "true, false or a list of node kinds"),
        ("name: x\nedges:\n  - edge: read\n    colour: red\n", 4, "unknown rule field `colour`"),
        ("name: x\nedges:\n  - edge: read\n    conditions:\n      node_kind: [planet]\n", 5, "'planet' is not one of"),
        ("name: x\nedges:\n  - edge: read\n    conditions:\n      target_kind: moon\n", 5, "`target_kind`: 'moon'"),
        (
            "name: x\nedges:\n  - edge: read\n    conditions:\n      schema: [a]\n      depth: 2\n",
            6,
            "unknown condition",
        ),
        ("name: x\nedges: nope\n", 2, "a list of rules"),
        ("name: x\nedges:\n  - edge: [read\n", 3, "not valid YAML"),
    ],
)
def test_bad_yaml_plans_are_reported_with_file_line_and_expectation(tmp_path, text, line, words) -> None:
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(PlanError) as caught:
        load_plan(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}:") and words in message


def test_bad_xml_plans_are_reported_with_file_and_line(tmp_path) -> None:
    path = write(
        tmp_path, "bad.xml", '<lineageServerPlan>\n  <useEdge name="read"\n   weight="2"/>\n</lineageServerPlan>\n'
    )
    with pytest.raises(PlanError, match=rf"^{path}:\d: unknown attribute weight="):
        load_plan(path)
    path = write(tmp_path, "root.xml", "<plan/>")
    with pytest.raises(PlanError, match="expected a <lineageServerPlan> root element"):
        load_plan(path)


def test_builtin_plans_load_and_resolve_by_name() -> None:
    plans = builtin_plans()
    assert {"tables", "columns", "columns-with-predicates", "impact", "transformations", "workflows"} <= set(plans)
    assert all(plan.description for plan in plans.values())
    assert resolve_plan("impact").name == "impact"
    with pytest.raises(PlanError, match="built-in plans are"):
        resolve_plan("nonesuch")


def test_json_plans_load_like_yaml_and_their_mistakes_are_located(tmp_path) -> None:
    text = '{"name": "j", "edges": [\n  {"edge": "projection"},\n  {"edge": "predicate", "follow": ["column"]}\n]}\n'
    plan = load_plan(write(tmp_path, "j.json", text))
    assert plan == load_plan(write(tmp_path, "j.yaml", text))._replace(origin=plan.origin)
    assert plan.rules[1].follows("column") and not plan.rules[1].follows("table")
    bad = write(tmp_path, "bad.json", '{"name": "j", "edges": [\n  {"edge": "read",\n   "follow": "sometimes"}\n]}\n')
    with pytest.raises(PlanError, match=rf"^{bad}:3: `follow`: expected true, false or a list of node kinds"):
        load_plan(bad)
    with pytest.raises(PlanError, match=rf"^{bad}:3: not valid JSON"):
        load_plan(write(tmp_path, "bad.json", '{"name": "j",\n "edges": [\n {"edge": }]}'))


def test_the_docs_plan_reads_the_same_in_yaml_and_xml(tmp_path) -> None:
    docs = (REPO / "docs" / "walkplans.md").read_text()
    yaml_text = re.search(r"```yaml\n(.*?)```", docs, re.DOTALL)[1]
    xml_text = re.search(r"```xml\n(.*?)```", docs, re.DOTALL)[1]
    from_yaml, from_xml = load_plan(write(tmp_path, "p.yaml", yaml_text)), load_plan(write(tmp_path, "p.xml", xml_text))
    assert (from_yaml.name, from_yaml.description, from_yaml.rules) == (
        from_xml.name,
        from_xml.description,
        from_xml.rules,
    )
    shown = re.search(r"```json\n(.*?)```", docs, re.DOTALL)[1]
    assert shown == (REPO / "lineage_cli" / "walk" / "plans" / "tables.json").read_text()


def test_walkplans_command_lists_and_prints_the_builtin_plans() -> None:
    runner = CliRunner()
    listed = runner.invoke(cli, ["walkplans"])
    assert listed.exit_code == 0
    assert [line.split()[0] for line in listed.output.splitlines()] == sorted(builtin_plans())
    shown = runner.invoke(cli, ["walkplans", "impact"])
    assert shown.exit_code == 0 and json.loads(shown.output)["name"] == "impact"
    assert runner.invoke(cli, ["walkplans", "nonesuch"]).exit_code == 1


def test_walkplan_replaces_the_shortcut_flags(tmp_path) -> None:
    outcome = CliRunner().invoke(cli, ["up", "x", "--walkplan", "tables", "--predicates"])
    assert outcome.exit_code == 2 and "--walkplan replaces" in outcome.output


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("name: x\nedges:\n  - edge: read\n    conditions:\n      schema: !!python/object/apply:os.system [id]\n", 5),
        ("name: !!python/name:os.system\nedges:\n  - edge: read\n", 1),
        ("name: x\nedges:\n  - edge: read\n    when_arg: !!python/object/new:os.system [id]\n", 4),
    ],
)
def test_a_yaml_tag_that_would_build_an_object_is_an_error_at_its_line(tmp_path, warehouse_store, text, line) -> None:
    path = write(tmp_path, "evil.yaml", text)
    with pytest.raises(PlanError, match=rf"^{re.escape(str(path))}:{line}:\d+: the YAML tag !!python/\S+ is not plain"):
        load_plan(path)
    outcome = CliRunner().invoke(cli, ["up", "dwh.fct_sales", "--walkplan", str(path), "--store", str(warehouse_store)])
    assert outcome.exit_code == 1  # one line, not a traceback
    assert re.match(
        rf"error: {re.escape(str(path))}:{line}:\d+: the YAML tag !!python/\S+ is not plain data", outcome.output
    )
    assert outcome.output.count("\n") == 1


def test_an_alias_bomb_in_a_plans_conditions_is_refused_at_once(tmp_path) -> None:
    plan = yaml_bomb() + "name: bomb\nedges:\n  - edge: read\n    conditions:\n      schema: *l8\n"
    path = write(tmp_path, "bomb.yaml", plan)
    code = (
        "from lineage_cli.walk.walkplan import PlanError, load_plan\n"
        f"try:\n    load_plan({str(path)!r})\nexcept PlanError as error:\n    print(error)\n"
    )
    run = run_bounded(code)
    assert run.stdout.strip() == f"{path}:6:5: YAML aliases expand to more than 100,000 nodes: refused (an alias bomb?)"
    assert run.seconds < 2 and run.peak_mb < 200
