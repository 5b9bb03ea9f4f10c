"""Entry point for ``python -m lineage_cli``."""

from lineage_cli.cli import main

main()
