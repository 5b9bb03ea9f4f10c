"""Where Jinja starts in a text: what ``placeholders.py`` checks before it pays for jinja2, and where
``jinja.py`` cuts a template into statements.  A module of its own so that neither imports the other."""

from __future__ import annotations

import re

JINJA_OPEN = re.compile(r"\{\{|\{%|\{#")
