"""BigQuery's job history: ``region-REGION.INFORMATION_SCHEMA.JOBS`` (``JOBS_BY_USER``, ``JOBS_BY_PROJECT``)
exported as JSON lines, a JSON array (``bq query --format=json``) or CSV.

Columns read: ``query`` (required), ``default_dataset`` (the job's default dataset: a record of
``project_id`` / ``dataset_id`` -- or the API's ``projectId`` / ``datasetId`` --, or ``project.dataset``
text; without one, ``project_id`` is the default project and there is no default dataset), ``user_email``,
``creation_time``, ``state`` and ``error_result`` (a job not ``DONE``, or done with an error, failed).  A job of
another ``job_type`` than ``QUERY`` (a load, an extract, a copy) runs no SQL and is passed over, as is the child
job of a script (one with a ``parent_job_id``): the script's own row holds its statements, with the variables
they use.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

from lineage_cli.harvest.inputs.querylog.rows import LogFile, LogRow, Record, each_row, records, sql_text, text
from lineage_cli.model import Issue

DIALECT = "bigquery"


def rows(log: LogFile) -> Iterator[LogRow | Issue]:
    return each_row(records(log, ("query",)), log.display, row)


def row(display: str, line: int, record: Record) -> LogRow | Issue | None:
    if (text(record, "job_type") or "QUERY").upper() != "QUERY" or text(record, "parent_job_id") is not None:
        return None
    sql = sql_text(record, "query")
    if sql is None:
        return Issue(display, line, "no query in this row")
    project, dataset = _default_dataset(record.get("default_dataset"))
    state = (text(record, "state") or "DONE").upper()
    return LogRow(
        line,
        sql,
        project or text(record, "project_id"),
        dataset,
        text(record, "user_email"),
        text(record, "creation_time", "start_time"),
        failed=state != "DONE" or _has_error(record.get("error_result")),
    )


def _default_dataset(value: object) -> tuple[str | None, str | None]:
    """(project, dataset) of a job's default dataset, in any of the forms an export gives it.

    >>> _default_dataset({"project_id": "p", "dataset_id": "d"}), _default_dataset("p:d"), _default_dataset("d")
    (('p', 'd'), ('p', 'd'), (None, 'd'))
    """
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value)  # a record, as a CSV export writes it
        except ValueError:
            return None, None
    if isinstance(value, Mapping):
        project = value.get("project_id") or value.get("projectId")
        dataset = value.get("dataset_id") or value.get("datasetId")
        return (str(project) if project else None), (str(dataset) if dataset else None)
    if not isinstance(value, str) or not value.strip():
        return None, None
    project, _, dataset = value.strip().replace(":", ".").rpartition(".")
    return project or None, dataset or None


def _has_error(value: object) -> bool:
    """Whether ``error_result`` holds an error (a record, or its JSON text; null and ``{}`` hold none)."""
    if isinstance(value, str):
        return value.strip() not in ("", "null", "{}")
    return bool(value)
