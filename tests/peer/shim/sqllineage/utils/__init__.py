"""sqllineage.utils stand-in."""
