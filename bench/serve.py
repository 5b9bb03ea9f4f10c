"""``make bench``, server part: ``lineage serve`` answering the graph bench's deep queries over loopback.

A ``lineage serve --port 0`` process over the store ``bench/graph.py`` built in ``bench-out/`` (the 1M-node /
5M-edge graph; ``--small`` the 100k-node one) is asked the deep-mart and hub questions, a neighbourhood
of two hops as the viewer asks for one, the deep mart's first column up and down, a search and a node;
then 16 connections ask for that neighbourhood at once (the median latency, and requests answered a second).
Each question is asked once (``first``: the server's first time, what a user's first click costs), then
``--repeat`` times on one kept-alive connection: the median is the wall time from sending the request to
having read the whole JSON body.  ``in-process`` is the same answer and its JSON text computed in this
process (warm), so ``server - in-process`` is what HTTP costs; the bodies are checked to be that text.
"""

from __future__ import annotations

import http.client
import json
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from processes import ENV, REPO, graph_bench_store  # bench/ is the script's folder, so on sys.path

if str(REPO) not in sys.path:  # run as a script: import the working tree's package
    sys.path.insert(0, str(REPO))

from lineage_cli.emit.formats import emit  # noqa: E402
from lineage_cli.store.reader import Store  # noqa: E402
from lineage_cli.walk.questions import Shaping, walk_answer  # noqa: E402

CLIENTS = 16  # connections asking at once, in the concurrent part


@dataclass(frozen=True, slots=True)
class Question:
    label: str
    route: str
    parameters: dict[str, str] = field(default_factory=dict)

    @property
    def target(self) -> str:
        return f"{self.route}?{urlencode(self.parameters)}"

    def in_process(self, store: Store) -> Callable[[], str] | None:
        """The same answer's JSON computed here, for ``/api/up`` and ``/api/down``; None for the others."""
        direction = self.route.removeprefix("/api/")
        if direction not in ("up", "down"):
            return None
        name, depth = self.parameters["name"], self.parameters.get("depth")
        depth_hops = int(depth) if depth else None
        return lambda: emit(walk_answer(store, direction, name, depth_hops, False, False, Shaping()), "json")


@dataclass(frozen=True, slots=True)
class Latency:
    question: Question
    status: int
    nodes: int | None
    size: int  # bytes of the body
    first: float
    median: float
    in_process: float | None


def questions(mart: str, hub: str) -> list[Question]:
    column = f"{mart}.c00"  # the deepest mart's first column, as bench/graph.py's leaf queries
    return [
        Question("up deep mart, tables", "/api/up", {"name": mart}),
        Question("down hub, tables", "/api/down", {"name": hub}),
        Question("up deep mart, 2 hops (the viewer)", "/api/up", {"name": mart, "depth": "2"}),
        Question("up leaf column", "/api/up", {"name": column}),
        Question("down leaf column", "/api/down", {"name": column}),
        Question("search the mart's name", "/api/search", {"q": f"%{mart.split('.')[-1]}%"}),
        Question("search the mart's schema", "/api/search", {"q": f"{mart.split('.')[0]}.%"}),
        Question("node: the deep mart", "/api/node", {"name": mart}),
    ]


def start_server(store: Path) -> tuple[subprocess.Popen[str], str, int]:
    """A ``lineage serve`` process on a free port, and the host and port it says it listens on."""
    command = [sys.executable, "-m", "lineage_cli", "serve", "--store", str(store), "--port", "0", "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    line = process.stdout.readline()  # type: ignore[union-attr]
    if not line.startswith("serving "):
        process.kill()
        raise SystemExit(f"lineage serve did not start: {line}{process.stderr.read()}")  # type: ignore[union-attr]
    address = urlsplit(line.split(" on ", 1)[1].split()[0])
    return process, address.hostname or "127.0.0.1", address.port or 0


def stop_server(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)


def latency(connection: http.client.HTTPConnection, question: Question, store: Store, repeat: int) -> Latency:
    def ask() -> tuple[int, bytes]:
        connection.request("GET", question.target)
        response = connection.getresponse()
        return response.status, response.read()

    started = time.perf_counter()
    status, body = ask()
    first = time.perf_counter() - started
    times = [_timed(ask) for _ in range(repeat)]
    compute = question.in_process(store) if status == 200 else None
    here = None
    if compute is not None:
        if compute() != body.decode("utf-8"):
            raise AssertionError(f"{question.label}: the server's JSON is not the command line's")
        here = statistics.median(_timed(compute) for _ in range(repeat))
    document = json.loads(body)
    listed = document.get("nodes", document.get("matches"))  # (a node's description lists neither)
    return Latency(
        question, status, None if listed is None else len(listed), len(body), first, statistics.median(times), here
    )


def _timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def server_latencies(store_path: Path, asked: list[Question], repeat: int) -> list[Latency]:
    """Each question's latency from a fresh ``lineage serve`` over ``store_path``."""
    process, host, port = start_server(store_path)
    try:
        connection = http.client.HTTPConnection(host, port, timeout=300)
        store = Store(store_path)
        return [latency(connection, question, store, repeat) for question in asked]
    finally:
        stop_server(process)


def at_once(store_path: Path, question: Question, clients: int, repeat: int) -> tuple[float, float]:
    """``clients`` connections asking ``question`` ``repeat`` times each, all at once (threads of this process,
    each connected and answered once before they start together): the median latency of a request (seconds),
    and the requests answered per second."""
    process, host, port = start_server(store_path)
    started: list[float] = []
    together = threading.Barrier(clients, action=lambda: started.append(time.perf_counter()))

    def client() -> list[float]:
        connection = http.client.HTTPConnection(host, port, timeout=300)

        def ask() -> None:
            connection.request("GET", question.target)
            connection.getresponse().read()

        ask()
        together.wait()
        return [_timed(ask) for _ in range(repeat)]

    try:
        with ThreadPoolExecutor(clients) as pool:
            times = [seconds for each in pool.map(lambda _: client(), range(clients)) for seconds in each]
        return statistics.median(times), len(times) / (time.perf_counter() - started[0])
    finally:
        stop_server(process)


def header() -> str:
    columns = f"{'status':>7}{'nodes':>8}{'KB':>9}{'first':>9}{'median':>9}{'in-process':>12}{'HTTP':>8}"
    return f"{'lineage serve over loopback, ms':<36}{columns}"


def line(measured: Latency) -> str:
    def ms(seconds: float | None) -> str:
        return "-" if seconds is None else f"{seconds * 1000:.2f}"

    http_cost = None if measured.in_process is None else measured.median - measured.in_process
    nodes = "-" if measured.nodes is None else str(measured.nodes)
    return (
        f"{measured.question.label:<36}{measured.status:>7}{nodes:>8}{measured.size / 1024:>9.1f}"
        f"{ms(measured.first):>9}{ms(measured.median):>9}{ms(measured.in_process):>12}{ms(http_cost):>8}"
    )


def main(argv: list[str] | None = None) -> None:
    args, path, nodes = graph_bench_store(__doc__, argv)
    asked = questions(nodes["deep_mart"]["name"], nodes["hub_source"]["name"])
    print(header())
    for measured in server_latencies(path, asked, args.repeat):
        print(line(measured))
    viewer = asked[2]  # the neighbourhood a click asks for
    median, rate = at_once(path, viewer, CLIENTS, 4 * args.repeat)
    print(f"{viewer.label}, {CLIENTS} clients at once: {median * 1000:.2f} ms median, {rate:.0f} requests/s")


if __name__ == "__main__":
    main()
