"""``lineage serve``: run the read-only lineage server until Ctrl-C (or SIGTERM), saying where it listens and what
it serves."""

from __future__ import annotations

import errno
import signal
import socket
import sys

from lineage_cli.errors import LineageError

# why a server cannot listen, by errno, in words a user can act on
_LISTEN_ERRORS = {
    errno.EADDRINUSE: "the port is in use (another server listens there): pick another --port, or --port 0 for any",
    errno.EACCES: "permission denied (ports below 1024 need privileges)",
    errno.EADDRNOTAVAIL: "no such address on this machine",
}


def run_serve(store_path: str, host: str, port: int, datamarts: str | None, quiet: bool) -> int:
    """Serve ``store_path`` on ``host``:``port``; 0 when stopped by Ctrl-C, 2 when the store cannot be read
    or the address cannot be listened on, 1 for a datamart mapping that cannot be used (as ``lineage up``)."""
    from lineage_cli.serve.server import LineageServer
    from lineage_cli.store.reader import open_store
    from lineage_cli.walk.levels import load_datamarts

    try:
        open_store(store_path)  # a store that is not there is said now, before listening, not on the first request
        if datamarts:
            load_datamarts(datamarts)  # and a mapping that cannot be used, not on each request for level=datamart
        server = LineageServer(store_path, host, port, datamarts=datamarts, log=None if quiet else _log)
    except LineageError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except OSError as error:
        print(f"error: cannot listen on {host}:{port}: {_listen_error(error)}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _stop)  # `kill`, a service manager's stop: as Ctrl-C, a clean exit 0
    with server:
        server.prepare()
        if not server.loopback:
            print(_exposed_warning(server.url), file=sys.stderr)
        print(f"serving {store_path} on {server.url} (read-only; Ctrl-C to stop)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("stopped", file=sys.stderr)
    return 0


def _listen_error(error: OSError) -> str:
    if isinstance(error, socket.gaierror):
        return f"unknown host ({error.strerror})"
    return _LISTEN_ERRORS.get(error.errno or 0, error.strerror or str(error))


def _exposed_warning(url: str) -> str:
    rule = "!" * 78
    return (
        f"{rule}\n"
        f"WARNING: lineage serve listens on {url}, not on this machine's loopback address.\n"
        "Anyone who can reach this host can read the whole lineage graph: table and column names, SQL file\n"
        "paths and lines. The server has no authentication; bind 127.0.0.1 (the default) unless that is meant.\n"
        f"{rule}"
    )


def _stop(_signal: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
