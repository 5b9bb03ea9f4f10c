"""sqllineage.core stand-in."""
