"""Golden cases: fixtures/sql/ SQL in, edges out."""
