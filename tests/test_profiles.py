"""Dialect profiles: every sqlglot dialect has one, and choosing one imports no sqlglot."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest
from sqlglot.dialects import DIALECTS
from sqlglot.dialects.dialect import Dialect

from lineage_cli.profiles import SQLGLOT_DIALECTS, ProfileError, _profile_from_file, load_profile
from tests.conftest import REPO


def test_the_written_out_dialects_are_the_installed_sqlglots() -> None:
    assert {name.lower() for name in DIALECTS} == SQLGLOT_DIALECTS
    for name in SQLGLOT_DIALECTS:
        Dialect.get_or_raise(name)  # each parses


def test_a_sqlglot_dialect_without_a_profile_gets_the_ansi_facts_and_its_parser() -> None:
    profile = load_profile("SQLite")
    assert (profile.name, profile.sqlglot_dialect) == ("sqlite", "sqlite")
    assert profile.case_folding == load_profile("ansi").case_folding


def test_an_unknown_dialect_names_the_profiles() -> None:
    with pytest.raises(ProfileError, match=r"unknown dialect 'nosuchsql'; profiles: ansi, bigquery"):
        load_profile("nosuchsql")


def test_choosing_a_profile_imports_no_sqlglot() -> None:
    probe = "import sys; from lineage_cli.profiles import load_profile; load_profile('sqlite')\n"
    probe += "print('sqlglot' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO)
    assert run.stdout.strip() == "False"


def test_lateral_column_aliases_are_a_fact_of_the_dialect() -> None:
    lateral = {"snowflake", "redshift", "databricks", "spark", "duckdb", "teradata"}
    for name in ("ansi", "postgres", "tsql", "bigquery", "mysql", "oracle", "hive", "trino", *lateral):
        assert load_profile(name).lateral_column_aliases == (name in lateral), name


def test_mariadb_is_mysql_by_another_name() -> None:
    mariadb, mysql = load_profile("mariadb"), load_profile("mysql")
    assert mariadb.sqlglot_dialect == "mysql"
    assert replace(mariadb, name="mysql", description=mysql.description) == mysql


def test_vertica_partition_functions_name_their_source_and_target_arguments() -> None:
    vertica = load_profile("vertica")
    assert vertica.sqlglot_dialect == "postgres"
    assert dict(vertica.partition_functions)["swap_partitions_between_tables"] == (0, 3)


def test_a_malformed_partition_functions_fact_is_an_error(tmp_path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text('sqlglot_dialect: "postgres"\npartition_functions: {swap: [0]}\n', encoding="utf-8")
    with pytest.raises(ProfileError, match=r"x\.yaml: partition_functions maps function names"):
        _profile_from_file(path)


def test_a_values_column_template_with_an_unknown_field_is_a_profile_error(tmp_path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text('sqlglot_dialect: "spark"\nvalues_column_names: "col{k}"\n', encoding="utf-8")
    with pytest.raises(ProfileError, match=r"x.yaml: values_column_names takes \{n\} \(from 1\) or \{i\}"):
        _profile_from_file(path)
