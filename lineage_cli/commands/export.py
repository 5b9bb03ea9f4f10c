"""``lineage export``: the store, or one node's lineage, as OpenLineage events, to a file, standard output, or
pushed to a consumer (``--to``: HTTP(S), Kafka, a file) with a summary and an exit code that says whether
everything was delivered.

Tables' namespaces come from ``--namespace`` over the flow manifest's setting, which a harvest keeps in the
store's meta (``namespaces``); the repository of ``sourceCodeLocation`` is ``--repo-url`` or the git checkout
the command runs in.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lineage_cli.emit.naming import Repository, namespaces, public_url, web_url
from lineage_cli.emit.openlineage import event_time, to_events, to_json_lines
from lineage_cli.errors import InputError, LineageError
from lineage_cli.store.reader import open_store
from lineage_cli.walk.scope import Scope, scoped_statements

if TYPE_CHECKING:
    from lineage_cli.emit.push import Delivery, Policy, Target

LISTED_FAILURES = 10  # failures named one by one in the summary; the rest are counted
PROGRESS_EVERY = 10.0  # seconds between the progress lines of a push whose standard error is no terminal


@dataclass(frozen=True, slots=True)
class PushSettings:
    """``--to``, the variable holding its API key, and how hard to try (None: ``Policy``'s defaults)."""

    to: str | None = None
    api_key_env: str | None = None
    policy: Policy | None = None


def run_export(
    store_path: str,
    output: str | None,
    namespace: str | tuple[str, ...],
    job_namespace: str,
    time_text: str | None,
    scope: Scope | None = None,
    settings: PushSettings | None = None,
    repo_url: str | None = None,
) -> int:
    settings = settings or PushSettings()
    try:
        if output and settings.to:
            raise InputError("give -o FILE or --to URL, not both")
        target, api_key = _target(settings)
        time = event_time(time_text)
        store = open_store(store_path)
        options = (namespace,) if isinstance(namespace, str) else namespace
        spaces = namespaces(options, store.meta.get("namespaces"))
        only = scoped_statements(store, scope) if scope else None
        events = to_events(store, spaces, job_namespace, time, only, _repository(repo_url))
        if target is not None:
            return _push(events, target, settings, api_key)
    except LineageError as error:  # bad options, --event-time or store (2), an unknown or ambiguous NAME (1)
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    text = to_json_lines(events)
    if not output:
        sys.stdout.write(text)
        return 0
    with open(output, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    print(f"{len(events)} OpenLineage events -> {output}", file=sys.stderr)
    return 0


def _target(settings: PushSettings) -> tuple[Target | None, str | None]:
    """Where to push, and the API key from the environment variable ``--api-key-env`` names."""
    if settings.to is None:
        if settings.api_key_env:
            raise InputError("--api-key-env is for --to URL")
        return None, None
    from lineage_cli.emit.push import target

    pushed_to = target(settings.to)
    if not settings.api_key_env:
        return pushed_to, None
    if pushed_to.kind != "http":
        raise InputError(f"--api-key-env is for --to http(s)://; {pushed_to.kind} takes none")
    key = os.environ.get(settings.api_key_env)
    if not key:
        raise InputError(f"--api-key-env {settings.api_key_env}: that environment variable is not set")
    return pushed_to, key


def _repository(repo_url: str | None) -> Repository:
    """``--repo-url`` (the files named as the store has them), else the checkout the command runs in."""
    from lineage_cli.check.git import checkout

    found = checkout(Path.cwd())
    root, remote, version = found if found else (None, None, None)
    url = public_url(repo_url or remote) if (repo_url or remote) else None
    return Repository(url, web_url(url) if url else None, version, root)


def _push(events: list[dict], to: Target, settings: PushSettings, api_key: str | None) -> int:
    from lineage_cli.emit.push import push

    policy = settings.policy
    if not sys.stderr.isatty():  # a log (CI, cron): a line every PROGRESS_EVERY seconds of a long push
        delivery = push(events, to, policy, api_key, _progress_lines(len(events)))
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from lineage_cli.terminal import plain_console

        columns = (TextColumn("push"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=plain_console(stderr=True), transient=True) as progress:
            task = progress.add_task("push", total=len(events))
            delivery = push(events, to, policy, api_key, lambda done: progress.update(task, advance=done))
    _report(delivery, to)
    return 1 if delivery.failed else 0


def _progress_lines(total: int) -> Callable[[int], None]:
    settled, last = 0, time.monotonic()
    lock = threading.Lock()

    def advance(done: int) -> None:
        nonlocal settled, last
        with lock:
            settled += done
            if time.monotonic() - last >= PROGRESS_EVERY and settled < total:
                last = time.monotonic()
                print(f"pushing: {settled:,} of {total:,} events settled", file=sys.stderr, flush=True)

    return advance


def _report(delivery: Delivery, to: Target) -> None:
    for failure in delivery.failures[:LISTED_FAILURES]:
        print(f"error: event {failure.index} (job {failure.job}): {failure.reason}", file=sys.stderr)
    if delivery.failed > LISTED_FAILURES:
        print(f"error: {delivery.failed - LISTED_FAILURES:,} more events not delivered", file=sys.stderr)
    rate = delivery.total / delivery.seconds if delivery.seconds else 0.0
    print(
        f"pushed {delivery.total:,} OpenLineage events to {to.shown()} in {delivery.seconds:.2f}s "
        f"({rate:,.0f} events/s): {delivery.sent:,} sent, {delivery.failed:,} failed, {delivery.retries:,} retried",
        file=sys.stderr,
    )
