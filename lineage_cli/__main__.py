"""The ``lineage`` console script and ``python -m lineage_cli``: a plain ``up`` / ``down`` query is answered
without importing click (``commands/quick.py``); everything else goes to the click command line."""

from __future__ import annotations

import sys


def main() -> None:
    from lineage_cli.commands.quick import finish, quick_walk

    code = quick_walk(sys.argv[1:])
    if code is not None:
        finish(code)
    from lineage_cli.cli import main as command_line

    command_line()


if __name__ == "__main__":
    main()
