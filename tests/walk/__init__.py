"""Tests of lineage_cli's walk stage."""
