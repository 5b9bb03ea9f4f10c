"""OpenLineage vocabulary shared by the export (``emit/openlineage.py``) and the import
(``imports/openlineage_events.py``): facet names and schemas, how our node kinds and edge subtypes map
to OpenLineage's dataset types and transformation subtypes, and how a dataset's node name maps to its
OpenLineage namespace and name and back (``address`` and ``node_name``, inverses of each other).  Constants
and two pure functions, so that both stages can import it without importing each other.

Naming follows OpenLineage's naming spec (spec/Naming.md): a file location's namespace is its scheme and
authority (``s3://bucket``, ``hdfs://nn:8020``; ``file`` for a local path), its name the path (without the
leading slash in an object store: ``s3://bucket`` + ``raw/in.csv``).  A table's namespace is configured
(``--namespace``): its node name carries no namespace, except where an import kept one that is not a
default namespace -- then it reads ``NAMESPACE/name`` for a namespace with an authority
(``postgres://db:5432/shop.orders``, the URI the spec defines) and ``NAMESPACE:name`` for one without
(``bigquery:proj.ds.orders``), and an export gives that namespace back.
"""

from __future__ import annotations

import re

from lineage_cli import __version__
from lineage_cli.model import PREDICATE_SUBTYPES, NodeKind, Subtype

PRODUCER = f"https://pypi.org/project/lineage-cli/{__version__}/"
EVENT_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
# The epoch says "no time known": a store records no harvest time, and a constant keeps exports diffable.
DEFAULT_EVENT_TIME = "1970-01-01T00:00:00Z"
STATEMENT_FACET = "lineage_statement"
EDGE_FACET = "lineage_edge"
FACET_SCHEMAS = {
    "schema": "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
    "columnLineage": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json"
    "#/$defs/ColumnLineageDatasetFacet",
    "datasetType": "https://openlineage.io/spec/facets/1-0-0/DatasetTypeDatasetFacet.json"
    "#/$defs/DatasetTypeDatasetFacet",
    "parent": "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet",
    "jobType": "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet",
    "sourceCodeLocation": "https://openlineage.io/spec/facets/1-0-1/SourceCodeLocationJobFacet.json"
    "#/$defs/SourceCodeLocationJobFacet",
    "sql": "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet",
    STATEMENT_FACET: f"{PRODUCER}#/$defs/LineageStatementRunFacet",
    EDGE_FACET: f"{PRODUCER}#/$defs/LineageEdgeFacet",
}
# Projection subtype -> (OpenLineage DIRECT subtype, masking)
DIRECT_SUBTYPES = {
    Subtype.IDENTITY: ("IDENTITY", False),
    Subtype.TRANSFORMATION: ("TRANSFORMATION", False),
    Subtype.TRANSFORMATION_MASKING: ("TRANSFORMATION", True),
    Subtype.AGGREGATION: ("AGGREGATION", False),
    Subtype.AGGREGATION_MASKING: ("AGGREGATION", True),
}
INDIRECT_SUBTYPES = PREDICATE_SUBTYPES  # OpenLineage's INDIRECT subtypes are exactly our predicate subtypes
# A parameterized dataset is a table whose name keeps a template placeholder.
DATASET_TYPES = {
    NodeKind.VIEW: {"datasetType": "VIEW"},
    NodeKind.PARAMETERIZED: {"datasetType": "TABLE", "subType": "PARAMETERIZED"},
}

# The jobType facet of every exported job: a batch query run by this tool's integration
JOB_TYPE = {"processingType": "BATCH", "integration": "lineage", "jobType": "QUERY"}
FILE_TYPE = {"datasetType": "FILE"}
LOCAL_NAMESPACE = "file"  # the namespace of a local path, as the naming spec has it
# Schemes of object stores: the name is the key, without a leading slash (s3://bucket + raw/in.csv)
OBJECT_STORES = frozenset({"s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "wasb", "wasbs", "oss", "cos", "r2"})
# Schemes of file systems: the name is the path, leading slash kept (hdfs://nn:8020 + /data/in)
FILE_SYSTEMS = frozenset({"file", "hdfs", "viewfs", "webhdfs", "maprfs", "dbfs", "ftp", "sftp", "o3fs", "ofs"})
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_BARE_NAMESPACE = re.compile(r"([A-Za-z][A-Za-z0-9+._-]+):(?!//)(.+)", re.DOTALL)  # bigquery:proj.ds.t


def address(name: str) -> tuple[str | None, str, bool]:
    """A dataset node's (namespace, name, whether it is a file); the namespace is None for a table whose
    namespace the configuration gives.

    >>> address("s3://bucket/raw/in.csv"), address("hdfs://nn:8020/data/in"), address("/tmp/x.csv")
    (('s3://bucket', 'raw/in.csv', True), ('hdfs://nn:8020', '/data/in', True), ('file', '/tmp/x.csv', True))
    >>> address("postgres://db:5432/shop.orders"), address("bigquery:p.ds.t"), address("dwh.sales")
    (('postgres://db:5432', 'shop.orders', False), ('bigquery', 'p.ds.t', False), (None, 'dwh.sales', False))
    >>> address("file:///tmp/x.csv"), address("@stage/in/"), address("@t")
    (('file', '/tmp/x.csv', True), (None, '@stage/in/', True), (None, '@t', False))
    """
    scheme, separator, rest = name.partition("://")
    if separator and _SCHEME.fullmatch(scheme):
        authority, _, path = rest.partition("/")
        lowered = scheme.lower()
        if lowered in OBJECT_STORES:
            return f"{scheme}://{authority}", path or "/", True
        if lowered in FILE_SYSTEMS:
            namespace = LOCAL_NAMESPACE if lowered == "file" and not authority else f"{scheme}://{authority}"
            return namespace, f"/{path}", True
        return f"{scheme}://{authority}", path or "/", _is_stage(path)  # a warehouse's namespace an import kept
    if name.startswith("/"):
        return LOCAL_NAMESPACE, name, True
    bare = None if name.startswith("@") else _BARE_NAMESPACE.fullmatch(name)
    if bare:
        return bare[1], bare[2], _is_stage(bare[2])
    return None, name, _is_stage(name)


def _is_stage(name: str) -> bool:
    """Whether a name is a file in a warehouse's stage (Snowflake's ``@stage/in/``, ``@~/x``, ``@%t``), in the
    warehouse's namespace; a T-SQL table variable (``@t``) is a table.

    >>> _is_stage("@stage/in/"), _is_stage("@~"), _is_stage("@t"), _is_stage("dwh.t")
    (True, True, False, False)
    """
    return name.startswith("@") and ("/" in name or name[1:2] in ("~", "%"))


def node_name(namespace: str, name: str, plain: frozenset[str]) -> str:
    """The node name of an OpenLineage dataset: ``name`` alone in one of the ``plain`` namespaces, else the
    name that ``address`` reads back as (``namespace``, ``name``).

    >>> node_name("s3://bucket", "raw/in.csv", frozenset()), node_name("file", "/tmp/x", frozenset())
    ('s3://bucket/raw/in.csv', '/tmp/x')
    >>> node_name("hive://c", "dwh.t", frozenset({"hive://c"})), node_name("hive://c", "dwh.t", frozenset())
    ('dwh.t', 'hive://c/dwh.t')
    >>> node_name("hdfs://nn", "/data", frozenset()), node_name("bigquery", "p.d.t", frozenset())
    ('hdfs://nn/data', 'bigquery:p.d.t')
    """
    scheme, separator, _ = namespace.partition("://")
    files = scheme.lower() in OBJECT_STORES | FILE_SYSTEMS if separator else namespace == LOCAL_NAMESPACE
    if files:  # a location is its own name, whatever is plain
        if namespace == LOCAL_NAMESPACE:
            return name if name.startswith("/") else f"{namespace}:{name}"
        return namespace + name if name.startswith("/") else f"{namespace}/{name}"
    if namespace in plain:
        return name
    return f"{namespace}/{name}" if separator else f"{namespace}:{name}"
