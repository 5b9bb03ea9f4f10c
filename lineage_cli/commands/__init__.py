"""The commands layer: one module per ``lineage`` subcommand, between ``cli.py`` (options and help) and the stages.

Only this layer prints, draws progress and chooses exit codes; the stages below it (``harvest``, ``imports``,
``store``, ``walk``, ``emit``, ``check``) are libraries that return values and raise ``LineageError``.
"""
