"""The ``lineage serve`` command as a user runs it: a process that says where it listens, warns when other
machines can reach it, stops on Ctrl-C with exit 0, and says why it cannot start without a traceback."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from tests.conftest import REPO

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


@contextmanager
def serve_process(*arguments: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A running ``lineage serve`` and the URL its first line of output gives."""
    command = [sys.executable, "-m", "lineage_cli", "serve", "--port", "0", *arguments]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("serving "), line + process.stderr.read()  # type: ignore[union-attr]
        yield process, line.split(" on ", 1)[1].split()[0]
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)


def interrupted(process: subprocess.Popen[str], how: signal.Signals = signal.SIGINT) -> tuple[int, str]:
    """Ctrl-C (or another signal): the exit code and all the process wrote on standard error."""
    process.send_signal(how)
    _, errors = process.communicate(timeout=20)
    return process.returncode, errors


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_serve_says_where_it_listens_answers_and_stops_on_ctrl_c_with_0(warehouse_store, how) -> None:
    with serve_process("--store", str(warehouse_store)) as (process, url):
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{url}api/up?name=mart.sales_daily", timeout=30) as response:
            assert json.loads(response.read())["roots"] == ["mart.sales_daily"]
        code, errors = interrupted(process, how)
    assert code == 0 and "stopped" in errors and "Traceback" not in errors
    assert '"GET /api/up?name=mart.sales_daily HTTP/1.1" 200' in errors  # a line per request
    assert "WARNING" not in errors


def test_serve_bound_beyond_loopback_warns_loudly(warehouse_store) -> None:
    with serve_process("--store", str(warehouse_store), "--host", "0.0.0.0", "--quiet") as (process, url):
        port = url.rsplit(":", 1)[1].rstrip("/")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/search?q=stg.%25", timeout=30) as response:
            assert json.loads(response.read())["matches"]
        code, errors = interrupted(process)
    assert code == 0 and errors.startswith("!!!!") and "WARNING: lineage serve listens on http://0.0.0.0:" in errors
    assert "no authentication" in errors and "GET /api" not in errors  # --quiet: no request lines


def test_a_port_in_use_is_an_error_not_a_traceback(warehouse_store) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        outcome = CliRunner().invoke(cli, ["serve", "--store", str(warehouse_store), "--port", str(port)])
    assert outcome.exit_code == 2 and "Traceback" not in outcome.output
    assert f"error: cannot listen on 127.0.0.1:{port}: the port is in use" in outcome.output


def test_an_unknown_host_is_an_error_not_a_traceback(warehouse_store) -> None:
    outcome = CliRunner().invoke(cli, ["serve", "--store", str(warehouse_store), "--host", "no.such.host.invalid"])
    assert (
        outcome.exit_code == 2 and "error: cannot listen on no.such.host.invalid:8765: unknown host" in outcome.output
    )


def test_serve_without_a_store_says_so_and_exits_2(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(cli, ["serve", "--store", str(tmp_path / "none.lin")])
    assert outcome.exit_code == 2 and "no lineage store here; run `lineage harvest PATH` first" in outcome.output


SERVE_AND_ASK = """
import sys, threading, urllib.request
from lineage_cli.serve.server import LineageServer
server = LineageServer(sys.argv[1], "127.0.0.1", 0)
server.prepare()
threading.Thread(target=server.serve_forever, daemon=True).start()
for asked in ("up?name=mart.sales_daily&level=schema", "path?from=stg.pos_sales&to=mart.sales_daily",
              "search?q=stg.%25", "node?name=stg.pos_sales", "down?name=stg.pos_sales.%25&walkplan=impact"):
    urllib.request.urlopen(f"http://127.0.0.1:{server.server_address[1]}/api/{asked}").read()
print(sorted(m for m in ("sqlglot", "click", "rich") if m in sys.modules))
"""


def test_the_server_answers_without_importing_sqlglot_click_or_rich(warehouse_store) -> None:
    run = subprocess.run(
        [sys.executable, "-c", SERVE_AND_ASK, str(warehouse_store)], capture_output=True, text=True, env=ENV
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_a_datamart_mapping_that_cannot_be_used_is_said_at_start(warehouse_store, tmp_path: Path) -> None:
    marts = tmp_path / "marts.yaml"
    marts.write_text("- not a mapping\n")
    outcome = CliRunner().invoke(cli, ["serve", "--store", str(warehouse_store), "--datamarts", str(marts)])
    assert outcome.exit_code == 1 and "expected a mapping of table name patterns to datamart names" in outcome.output
