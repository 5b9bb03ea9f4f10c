"""Tests of lineage_cli's store stage."""
