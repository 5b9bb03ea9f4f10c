"""Tests of lineage_cli's serve stage: the lineage server over real HTTP, and the ``lineage serve`` command."""
