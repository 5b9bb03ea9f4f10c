"""The test suite: one folder per stage of lineage_cli, plus golden/ (SQL in, edges out) and peer/ (another
tool's own suite, answered by ours)."""
