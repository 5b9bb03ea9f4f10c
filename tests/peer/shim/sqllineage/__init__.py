"""Stand-in for the parts of sqllineage that its own tests import, so they run without sqllineage."""

SQLPARSE_DIALECT = "non-validating"
