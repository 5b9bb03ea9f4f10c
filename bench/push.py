"""``make bench``: OpenLineage events pushed a second to a local consumer (``lineage export --to``).

Harvests the generated warehouse at column level (``bench-out/``, as ``bench/harvest.py`` makes it), builds its
events once, and pushes them over HTTP to a consumer on a free local port: a process of its own
(``http.server``, answering 200 to each POST after reading it, keep-alive), so that the consumer does not
share the pusher's interpreter.  One event per request, as Marquez takes them, with 1 and 4 connections, and
a batch of 50 events per request for a consumer that takes arrays.  Prints events/s and MB/s of JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from harvest import generate  # bench/ is the script's folder, so on sys.path
from processes import OUT, warehouse_parser

CONSUMER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def events_of(warehouse: Path, dialect: str) -> list[dict]:
    from lineage_cli.emit.openlineage import to_events
    from lineage_cli.harvest.batch import harvest
    from lineage_cli.harvest.schema import SchemaCatalog
    from lineage_cli.store.reader import open_store
    from lineage_cli.store.writer import write_store

    store = OUT / f"push_{warehouse.name}.lin"
    if not store.is_file():
        schema = SchemaCatalog.from_file(warehouse / "schema.json")
        write_store(harvest([warehouse / "sql"], dialect=dialect, schema=schema).graph, store, {})
    return to_events(open_store(store), "hive://bench", "lineage", "2024-01-31T06:00:00Z")


def main() -> None:
    from lineage_cli.emit.push import Policy, push, target

    arguments = warehouse_parser(__doc__).parse_args()
    events = events_of(generate(arguments.tables, arguments.dialect), arguments.dialect)
    megabytes = sum(len(json.dumps(event, separators=(",", ":"))) for event in events) / 1e6
    consumer = subprocess.Popen([sys.executable, "-c", CONSUMER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(consumer.stdout.readline())  # type: ignore[union-attr]
        to = target(f"http://127.0.0.1:{port}")
        print(f"push {len(events):,} OpenLineage events ({megabytes:.1f} MB of JSON) to a local consumer")
        for label, policy in (
            ("1 connection, 1 event a request", Policy(connections=1)),
            ("4 connections, 1 event a request", Policy(connections=4)),
            ("4 connections, 50 events a request", Policy(connections=4, batch=50)),
        ):
            started = time.perf_counter()
            delivery = push(events, to, policy)
            seconds = time.perf_counter() - started
            assert delivery.sent == len(events), delivery.failures[:3]
            rate = len(events) / seconds
            print(f"  {label:36s} {seconds:6.2f} s  {rate:8,.0f} events/s  {megabytes / seconds:6.1f} MB/s")
    finally:
        consumer.terminate()
        consumer.wait()


if __name__ == "__main__":
    main()
