"""Tests of lineage_cli's harvest stage."""
