"""Tests of lineage_cli's check stage."""
