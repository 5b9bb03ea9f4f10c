"""OpenLineage vocabulary shared by the export (``emit/openlineage.py``) and the import
(``imports/openlineage_events.py``): facet names and schemas, and how our node kinds and edge subtypes map
to OpenLineage's dataset types and transformation subtypes.  Constants only, so that both stages can
import it without importing each other.
"""

from __future__ import annotations

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
