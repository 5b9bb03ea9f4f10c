"""The one YAML reader: plain data only, aliases bounded, errors one line with file, line and column."""

from __future__ import annotations

import re

import pytest
import yaml

from lineage_cli import yamlsafe
from lineage_cli.yamlsafe import MAX_ALIAS_NODES, YamlError, load
from tests.bounded import yaml_bomb
from tests.conftest import REPO


@pytest.fixture(params=["libyaml", "python"])
def loader(request, monkeypatch) -> str:
    """Both parsers behave alike: libyaml's when it is installed, PyYAML's own otherwise."""
    if request.param == "python":
        monkeypatch.setattr(yamlsafe, "_Loader", yaml.SafeLoader)
    elif not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML is built without libyaml here")
    return request.param


def test_anchors_aliases_and_merge_keys_still_read(loader) -> None:
    text = "base: &base {a: 1, b: 2}\nuses: [*base, *base]\nmerged: {<<: *base, b: 3}\n"
    assert load(text, "f.yaml") == {
        "base": {"a": 1, "b": 2},
        "uses": [{"a": 1, "b": 2}, {"a": 1, "b": 2}],
        "merged": {"a": 1, "b": 3},
    }
    assert load("", "f.yaml") is None and load("# only a comment\n", "f.yaml") is None


def test_aliases_may_add_up_to_the_limit_and_not_one_node_more(loader) -> None:
    block = "[" + ", ".join(["x"] * 999) + "]"  # 1,000 nodes with the sequence itself

    def document(aliases: int) -> str:
        return f"a: &a {block}\nb: [{', '.join(['*a'] * aliases)}]\n"

    assert len(load(document(MAX_ALIAS_NODES // 1000), "f.yaml")["b"]) == MAX_ALIAS_NODES // 1000
    with pytest.raises(YamlError, match=r"^f\.yaml:2:4: YAML aliases expand to more than 100,000 nodes: refused"):
        load(document(MAX_ALIAS_NODES // 1000 + 1), "f.yaml")


def test_a_billion_laughs_is_refused_where_it_passes_the_limit(loader) -> None:
    with pytest.raises(YamlError, match=r"^bomb\.yaml:6:5: YAML aliases expand to more than 100,000 nodes"):
        load(yaml_bomb(30), "bomb.yaml")  # 9 ** 30 strings: the check does not expand them


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: &a [1, *a]\n", "f.yaml:1:4: a YAML alias refers to a node it is inside of"),
        (
            "a: !!python/object/apply:os.system [id]\n",
            "f.yaml:1:4: the YAML tag !!python/object/apply:os.system is not",
        ),
        ("a: !custom x\n", "f.yaml:1:4: the YAML tag !custom is not plain data"),
        ("a: 1\n b: 2\n", "f.yaml:2:3: not valid YAML: mapping values are not allowed"),
        ("a: [1, 2\n", "f.yaml:1:4: not valid YAML: "),  # never closed: where it opened
        ("a: *nowhere\n", "f.yaml:1:4: not valid YAML: found undefined alias"),
        ("a: 1\nb: [c, d\x01]\n", "f.yaml:2:9: not valid YAML: unacceptable character #x0001"),
        ("a: !!int x\n", "f.yaml:1:4: not valid YAML: not a !!int value"),
        ('a: [!!int ""]\n', "f.yaml:1:5: not valid YAML: not a !!int value"),
        ("a: {b: !!bool maybe}\n", "f.yaml:1:8: not valid YAML: not a !!bool value"),
        ("a: !!timestamp x\n", "f.yaml:1:4: not valid YAML: not a !!timestamp value"),
    ],
)
def test_what_is_not_plain_yaml_is_one_line_with_its_place(loader, text, message) -> None:
    with pytest.raises(YamlError) as caught:
        load(text, "f.yaml")
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_nesting_too_deep_is_an_error_not_a_crash(loader) -> None:
    with pytest.raises(YamlError, match=r"^f\.yaml:\d+(:\d+)?: not valid YAML: .*(nest|depth)"):
        load("[" * 5000 + "]" * 5000, "f.yaml")


def test_every_yaml_the_tool_reads_goes_through_the_safe_reader() -> None:
    direct = re.compile(r"\byaml\.(safe_load|load|full_load|unsafe_load|compose|safe_load_all|load_all)\b|Loader=")
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted((REPO / "lineage_cli").rglob("*.py"))
        if path.name != "yamlsafe.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if direct.search(line)
    ]
    assert offenders == []
