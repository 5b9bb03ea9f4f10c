"""Harvest stage: SQL files -> statements -> lineage graph.

``inputs/`` finds what to read (SQL files, flow manifests, dbt projects) and plans the units, ``templates/``
makes templated SQL readable, ``sql/`` is the sqlglot boundary (the only package that imports sqlglot)
that analyses a unit, ``schema.py`` is the catalog of known columns the analysis consults, and
``batch.py`` runs the units in a process pool, through the cache (``cache.py``, ``outcome.py``), into one
graph (``assemble.py``, ``flows.py``).
"""

from __future__ import annotations


def quiet_sqlglot() -> None:
    """Keep sqlglot's warnings about statements it reads as opaque commands (a GRANT, a CALL) off the
    terminal, for the commands that parse: such a statement has no lineage, which their summaries
    already account for, and the message is not in the file:line form of every other problem.
    (Here, not beside the parser: a harvest that finds its store up to date imports no sqlglot.)"""
    import logging  # here: `import lineage_cli` imports this package, and a query needs no logging

    logging.getLogger("sqlglot").setLevel(logging.ERROR)
