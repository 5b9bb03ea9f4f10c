"""Tests of lineage_cli's imports stage."""
