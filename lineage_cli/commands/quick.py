"""``lineage up`` / ``lineage down`` answered without importing click, when every argument is one it knows.

click and what it imports (``inspect``, ``typing``'s users, its types) cost a cold query about 35 ms, half of what
a ``python + sqlite3`` script takes to answer the same question.  A plain query, a name and the walk options
below, is parsed here and run by the same ``run_walk_options`` the click command calls; anything else (help, an
option this table does not hold, a value click would refuse, a combination it forbids) returns None, and the
click command line takes over, with its own messages.  ``tests/test_cli.py`` checks that this table reads argument
lists using each of its options as click does, and that its options are click's own.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence

from lineage_cli.commands.options import DEFAULT_STORE, FORMATS, GROUP_BYS, LEVELS, RANKDIRS

# option -> (parameter, what it takes): None for a flag, a tuple of choices, "int" (at least 1), "file" (an
# existing file), "output" (not a folder), "text"; repeatable options are listed in REPEATED
OPTIONS: dict[str, tuple[str, object]] = {
    "--depth": ("depth", "int"),
    "--show-transformations": ("show_transformations", None),
    "--predicates": ("predicates", None),
    "--walkplan": ("walkplan", "text"),
    "--arg": ("plan_args", "text"),
    "--exact": ("exact", None),
    "--level": ("level", LEVELS),
    "--datamarts": ("datamarts", "file"),
    "--group-by": ("group_by", GROUP_BYS),
    "--rankdir": ("rankdir", RANKDIRS),
    "--store": ("store", "output"),
    "--format": ("fmt", FORMATS),
    "-o": ("output", "output"),
    "--output": ("output", "output"),
}
REPEATED = frozenset({"plan_args"})
COMMANDS = ("up", "down")


def parsed(arguments: Sequence[str]) -> tuple[str, dict[str, object]] | None:
    """The command and its parameters as click would pass them, or None where click should read them."""
    if not arguments or arguments[0] not in COMMANDS:
        return None
    options: dict[str, object] = _defaults()
    names: list[str] = []
    pending = list(arguments[1:])
    while pending:
        argument = pending.pop(0)
        if not argument.startswith("-") or argument == "-":
            names.append(argument)
            continue
        option, given, value = argument.partition("=")
        if option not in OPTIONS:
            return None  # --help, --, an option of another command or a new one: click's
        parameter, takes = OPTIONS[option]
        if takes is None:
            if given:
                return None
            options[parameter] = True
            continue
        if not given:
            if not pending:
                return None
            value = pending.pop(0)
        checked = _value(value, takes)
        if checked is None:
            return None
        if parameter in REPEATED:
            options[parameter] = (*options[parameter], checked)  # type: ignore[misc]
        else:
            options[parameter] = checked
    if len(names) != 1 or (options["walkplan"] and (options["show_transformations"] or options["predicates"])):
        return None  # (click says what is wrong with these)
    options["name"] = names[0]
    return arguments[0], options


def quick_walk(arguments: Sequence[str]) -> int | None:
    """Run ``arguments`` if they are a plain ``up`` / ``down`` query: its exit code; None to leave it to click."""
    query = parsed(arguments)
    if query is None:
        return None
    from lineage_cli.commands.walk import run_walk_options

    direction, options = query
    try:
        return run_walk_options(direction, options)
    except BrokenPipeError:  # a reader that left early (`| head`): click's status for it, and no traceback
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - what is left to flush goes nowhere
        return 1
    except KeyboardInterrupt:
        print("\nAborted!", file=sys.stderr)  # as click says it
        return 1


def finish(code: int) -> None:
    """Flush the standard streams and end the process with ``code``, without tearing the interpreter down: all
    that is left is freeing the answer's objects and every module one by one, which costs a cold query more
    than its walk."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):  # a reader that left early (`| head`), or closed
            stream.flush()
    os._exit(code)


def _defaults() -> dict[str, object]:
    options: dict[str, object] = {parameter: None for parameter, _ in OPTIONS.values()}
    options.update(show_transformations=False, predicates=False, exact=False, plan_args=())
    options["store"] = os.environ.get("LINEAGE_STORE") or DEFAULT_STORE
    return options


def _value(value: str, takes: object) -> object | None:
    """``value`` as click's type for the option gives it, or None where click would refuse it (or might)."""
    if isinstance(takes, tuple):
        return value if value in takes else None
    if takes == "int":
        return int(value) if value.isascii() and value.isdigit() and int(value) >= 1 else None  # ("²" is a digit)
    if takes == "file":
        return value if os.path.isfile(value) else None
    if takes == "output":
        return value if value and not os.path.isdir(value) else None
    return value
