"""sqllineage's own SQL test suite answered by our engine, and what it needs to run."""
