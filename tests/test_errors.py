"""The one error family (``lineage_cli/errors.py``): every error a stage reports is a ``LineageError`` that
carries its exit status; the internal ones that never reach a user stay apart."""

from __future__ import annotations

import pytest

from lineage_cli.check.gate import CheckError
from lineage_cli.check.git import GitError
from lineage_cli.emit.formats import RenderError, output_format
from lineage_cli.emit.openlineage import event_time
from lineage_cli.errors import InputError, LineageError, QueryError, StoreError
from lineage_cli.harvest.inputs.dbt import DbtError
from lineage_cli.harvest.inputs.files import MissingPathError
from lineage_cli.harvest.inputs.manifest import ManifestError
from lineage_cli.harvest.outcome import CacheDataError
from lineage_cli.harvest.schema import SchemaError
from lineage_cli.harvest.templates.budget import BudgetExceeded
from lineage_cli.harvest.templates.placeholders import VarsError
from lineage_cli.imports.builder import ImportError_
from lineage_cli.profiles import ProfileError
from lineage_cli.store.layout import StoreWriteError
from lineage_cli.store.lock import StoreLockError
from lineage_cli.walk.levels import LevelError
from lineage_cli.walk.paths import NoPath
from lineage_cli.walk.query import AmbiguousName, NameNotFound
from lineage_cli.walk.walkplan import PlanError
from lineage_cli.walk.workflow_io import StepNotFound

FAMILY = {
    InputError: (LineageError, 2),
    StoreError: (LineageError, 2),
    QueryError: (LineageError, 1),
    RenderError: (LineageError, 2),
    ProfileError: (InputError, 2),
    SchemaError: (InputError, 2),
    VarsError: (InputError, 2),
    ManifestError: (InputError, 2),
    DbtError: (InputError, 2),
    MissingPathError: (InputError, 2),
    ImportError_: (InputError, 2),
    CheckError: (InputError, 2),
    GitError: (InputError, 2),
    StoreWriteError: (StoreError, 2),
    StoreLockError: (StoreError, 2),
    NameNotFound: (QueryError, 1),
    AmbiguousName: (QueryError, 1),
    NoPath: (QueryError, 1),
    StepNotFound: (QueryError, 1),
    PlanError: (QueryError, 1),
    LevelError: (QueryError, 1),
}


@pytest.mark.parametrize("error", FAMILY, ids=lambda error: error.__name__)
def test_every_error_a_user_meets_is_a_lineage_error_with_its_exit_code(error: type[LineageError]) -> None:
    base, exit_code = FAMILY[error]
    assert issubclass(error, base) and error.exit_code == exit_code


def test_builtin_bases_stay_where_code_catches_them() -> None:
    # The cache takes a ValueError as a miss (a schema read back), a manifest entry's checks catch one (template
    # values), readers of YAML catch one; a missing PATH was a FileNotFoundError and still is.
    from lineage_cli.yamlsafe import YamlError

    assert all(issubclass(error, ValueError) for error in (SchemaError, VarsError, YamlError))
    assert issubclass(YamlError, InputError) and issubclass(MissingPathError, FileNotFoundError)


def test_internal_control_flow_stays_out_of_the_family() -> None:
    from lineage_cli.imports.openlineage_events import _Unusable

    assert not any(issubclass(error, LineageError) for error in (CacheDataError, BudgetExceeded, _Unusable))


def test_bad_options_of_the_emitters_are_input_errors() -> None:
    with pytest.raises(InputError, match="cannot tell the format of out.xml"):
        output_format("out.xml")
    with pytest.raises(InputError, match="needs a time zone"):
        event_time("2024-01-31T06:00:00")
