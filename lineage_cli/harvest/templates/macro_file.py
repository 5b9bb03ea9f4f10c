"""A file of dbt macros, as read from a project (``dbt_files``) and called by its models (``jinja.py``): a module
of its own, so that what carries it (the harvest's options, ``placeholders.render``) needs no jinja2."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MacroFile:
    """A file of dbt macros a model may call: ``package`` is "" for the project's own, else the installed
    package's name, under which its macros are called (``dbt_utils.group_by``)."""

    package: str
    display: str
    text: str
