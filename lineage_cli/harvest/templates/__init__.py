"""Templated SQL made readable by the parser, lines kept: placeholders (``${var}``, ``#var#``, ``:var``),
Jinja rendering under a budget, and the placeholders left without a value.
"""
