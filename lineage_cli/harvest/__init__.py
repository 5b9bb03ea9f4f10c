"""Harvest stage: SQL files -> statements -> lineage graph.  The only stage that imports sqlglot."""

from __future__ import annotations

import logging


def quiet_sqlglot() -> None:
    """Keep sqlglot's warnings about statements it reads as opaque commands (a GRANT, a CALL) off the
    terminal, for the commands that parse: such a statement has no lineage, which their summaries
    already account for, and the message is not in the file:line form of every other problem.
    (Here, not beside the parser: a harvest that finds its store up to date imports no sqlglot.)"""
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
