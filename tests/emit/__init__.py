"""Tests of lineage_cli's emit stage."""
