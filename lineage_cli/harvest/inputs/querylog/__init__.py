"""Query logs: what a warehouse ran, exported from its history, read as units of SQL to harvest.

One small module per format reads its rows (``snowflake``, ``bigquery``, ``redshift``, ``postgres``,
``jsonl``) over ``rows.py``'s streaming of CSV and JSON; ``collect.py`` turns them into the plan's units,
identical statements once (``fingerprint.py``) with their runs (``runs.py``).  Each query is analysed with
its own row's database and schema (``batch.py``), at its row's line.
"""
