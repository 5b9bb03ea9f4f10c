"""Imports stage: lineage that was not harvested here (edge lists, Hive LineageLogger output, OpenLineage
events) read into the store's arrays.  No sqlglot: an import parses no SQL.

``builder.py`` interns names into arrays and reads Hive's records, ``edge_lists.py`` reads csv, tsv and
jsonl rows, ``openlineage_events.py`` reads OpenLineage run and job events.
"""
