"""The lineage server stage (``lineage serve``): a local, read-only HTTP server over one store.

``api.py`` answers the ``/api/...`` questions from query parameters (the same walks and the same JSON text
as ``lineage up`` / ``down`` / ``path --format json``), ``live.py`` keeps the store open and reopens it when
a harvest has replaced it, ``server.py`` is the standard library's threading HTTP server around them: routes,
methods, refusals, and the viewer page at ``/``.  It sits above ``walk`` and ``emit`` and prints nothing: the
command (``commands/serve.py``) says what it listens on and picks the exit code.
"""
