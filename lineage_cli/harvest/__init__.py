"""Harvest stage: SQL files -> statements -> lineage graph.  The only stage that imports sqlglot."""
