"""Imports stage: lineage that was not harvested here read into the store's arrays.  No sqlglot: an import
parses no SQL.

``reader.py`` picks the reader for a format, ``builder.py`` interns names into arrays, ``edge_lists.py``
reads csv, tsv and jsonl rows, ``hive.py`` Hive LineageLogger records, ``openlineage_events.py``
OpenLineage run and job events.
"""
