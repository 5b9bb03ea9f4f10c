"""The rich consoles the CLI prints through, made to print what they are given as it is.

rich reads ``:100:`` as the emoji code for 💯 and ``[red]`` as markup, so a location such as
``emoji.sql:100:9`` or a file named ``x[1].sql`` would not print as written (or a ``[/x]`` in a
name would raise).  Every console is made here, with emoji codes, markup and highlighting off:
styles are given as ``Text`` spans or ``style=``, never inside the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def plain_console(**options: Any) -> Console:  # noqa: ANN401 - rich's Console options, passed on
    """A rich ``Console`` with ``options`` that prints text verbatim: no emoji codes, no markup, no highlighting."""
    from rich.console import Console  # rich: only what prints through it pays for it

    return Console(emoji=False, markup=False, highlight=False, **options)
