"""The sqlglot boundary: the only package that imports sqlglot.

``split.py`` cuts a script into statements and parses each (after ``rewrites.py`` has made what sqlglot
cannot read as written readable), ``statements/`` finds what a statement
writes and reads, ``columns/`` its column-level edges, ``script.py`` runs a whole script through them
with a schema catalog that learns as it goes (``observe.py``), ``api.py`` is ``parse_sql``.
"""
