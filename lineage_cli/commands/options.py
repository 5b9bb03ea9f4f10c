"""The values the command line's options take, apart from click: ``cli.py`` builds its options from them, and the
click-free query path (``quick.py``) reads arguments with them."""

from __future__ import annotations

import os

DEFAULT_STORE = os.path.join(".lineage", "graph.lin")
FORMATS = ("tree", "json", "tgf", "graphml", "dot", "mermaid")
LEVELS = ("column", "table", "schema", "datamart", "module", "workflow")  # walk/levels.py's, without importing it
GROUP_BYS = ("schema", "workflow", "datamart")  # the levels walk/levels.py's groups() frames by
RANKDIRS = ("LR", "TB")
LOG_FORMATS = ("snowflake", "bigquery", "redshift", "postgres", "jsonl")  # harvest/inputs/querylog/collect.py's
