"""The one error family: ``LineageError``, whose members carry the exit status of a command that meets them.

The stages (``harvest``, ``imports``, ``store``, ``walk``, ``emit``, ``check``) raise them; the commands layer
catches ``LineageError`` once per command, prints its message and exits with its ``exit_code``.  So a library
caller writes one ``except LineageError``, and the message is the one line the CLI would print.

- ``InputError`` (exit 2): a file, an option or a mapping that cannot be used as given.  A file that cannot
  be read at all is one too: the stage that opens it wraps the ``OSError``, keeping its message.
- ``StoreError`` (exit 2): the store is missing, foreign, damaged, or cannot be locked or written.
- ``QueryError`` (exit 1): a question the store cannot answer as asked (an unknown name, no path).

The stages define their own members next to the code that raises them (``SchemaError``, ``PlanError``,
``NameNotFound`` ...), each a subclass of one of these, and some also of the builtin they were before
(``ValueError``) where code catches that builtin.  Problems inside an analysis are no errors: a statement
that does not parse is an ``Issue`` (``model.py``), and the harvest goes on.

The bottom layer: it imports nothing of ours, and costs ``import lineage_cli`` nothing it would notice.
"""

from __future__ import annotations

from typing import ClassVar


class LineageError(Exception):
    """The base of every error lineage reports to its user; the message is one line, ready to print."""

    exit_code: ClassVar[int] = 1


class InputError(LineageError):
    """Bad input: a file, an option or a mapping the tool cannot use as given (exit 2)."""

    exit_code = 2


class StoreError(LineageError):
    """The store cannot be used: missing, foreign, damaged, of another format version, or not writable (exit 2)."""

    exit_code = 2


class QueryError(LineageError):
    """A question the store cannot answer as asked; the message says why and what to do (exit 1)."""

    exit_code = 1
