"""``lineage export --to``: pushing OpenLineage events to a consumer.

The consumer is a real HTTP server on a free local port (``http.server`` in a thread) that records every
request and answers as the test scripts it; what it received is checked against the vendored OpenLineage
schemas by the shared checker.  Kafka is tested with a fake producer in place of confluent-kafka's.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.emit.push import Policy, message_key, push, target
from lineage_cli.store.reader import open_store
from tests.conftest import assert_valid_format

FAST = ("--retry-delay", "0")  # retries without waiting: the backoff itself is tested on Policy


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def event(self) -> dict:
        return json.loads(self.body)


# Answer = (status, body) for a request, given the request and how many came before it.
Answer = Callable[[Received, int], tuple[int, bytes]]


@dataclass
class Consumer:
    url: str
    received: list[Received] = field(default_factory=list)

    def events(self) -> list[dict]:
        return [request.event for request in self.received]


@contextmanager
def consumer(
    answer: Answer = lambda request, before: (200, b""), hang_up: bool = False, tls: tuple[Path, Path] | None = None
) -> Iterator[Consumer]:
    """A local OpenLineage consumer that records each POST and answers it with ``answer``; one that ``hang_up``s
    closes each connection after its answer without saying so, as a consumer closing idle connections does; with
    ``tls`` (certificate, key) it speaks HTTPS."""
    lock = threading.Lock()
    server_side = Consumer("")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real consumer

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            request = Received(self.path, dict(self.headers.items()), body)
            with lock:
                before = len(server_side.received)
                server_side.received.append(request)
            status, text = answer(request, before)
            self.send_response(status)
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)
            self.close_connection = hang_up

        def log_message(self, *args: object) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls:
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server_side.url = f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    try:
        yield server_side
    finally:
        server.shutdown()
        server.server_close()


def export_to(store: Path, url: str, *options: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, ["export", "--store", str(store), "--to", url, *FAST, *options], env=env)


def statements_of(store: Path) -> int:
    opened = open_store(store)
    return sum(1 for kind in opened.kinds if kind == 4)  # NodeKind.TRANSFORMATION


def assert_valid_events(events: list[dict], folder: Path) -> None:
    path = folder / "received.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")
    assert_valid_format("openlineage", path)


def test_every_event_reaches_the_consumer_valid_one_per_request(flow_store, tmp_path) -> None:
    with consumer() as server:
        outcome = export_to(flow_store, server.url, "--event-time", "2024-01-31T06:00:00Z")
    count = statements_of(flow_store)
    assert outcome.exit_code == 0, outcome.output
    assert f"{count} sent, 0 failed, 0 retried" in outcome.output
    assert len(server.received) == count and {r.path for r in server.received} == {"/api/v1/lineage"}
    assert all(r.headers["Content-Type"] == "application/json" and "Authorization" not in r.headers
               for r in server.received)  # fmt: skip
    events = server.events()
    assert_valid_events(events, tmp_path)
    exported = tmp_path / "exported.jsonl"
    CliRunner().invoke(cli, ["export", "--store", str(flow_store), "-o", str(exported), "--event-time",
                             "2024-01-31T06:00:00Z"])  # fmt: skip
    by_run = {e["run"]["runId"]: e for e in map(json.loads, exported.read_text().splitlines())}
    assert {e["run"]["runId"]: e for e in events} == by_run  # what was pushed is what -o writes


def test_a_batch_posts_a_json_array_to_the_path_given(flow_store) -> None:
    with consumer() as server:
        outcome = export_to(flow_store, server.url + "/custom/lineage", "--batch", "4")
    count = statements_of(flow_store)
    assert outcome.exit_code == 0, outcome.output
    bodies = [json.loads(r.body) for r in server.received]
    assert all(isinstance(body, list) for body in bodies) and sum(map(len, bodies)) == count
    assert len(bodies) == -(-count // 4) and {r.path for r in server.received} == {"/custom/lineage"}


def test_a_kept_alive_connection_the_consumer_closed_is_replaced_without_an_attempt(flow_store) -> None:
    with consumer(hang_up=True) as server:
        outcome = export_to(flow_store, server.url, "--connections", "1", "--retries", "0")
    count = statements_of(flow_store)
    assert outcome.exit_code == 0, outcome.output
    assert f"{count} sent, 0 failed, 0 retried" in outcome.output and len(server.received) == count


def test_a_long_answer_is_quoted_short_and_costs_only_its_connection(flow_store) -> None:
    def answer(request: Received, before: int) -> tuple[int, bytes]:
        return (500, b"x" * 200_000) if before == 0 else (200, b"")

    with consumer(answer) as server:
        outcome = export_to(flow_store, server.url, "--connections", "1", "--retries", "0")
    (reason,) = [line for line in outcome.output.splitlines() if line.startswith("error: event")]
    assert outcome.exit_code == 1 and f"{statements_of(flow_store) - 1} sent, 1 failed" in outcome.output
    assert reason.endswith("HTTP 500 Internal Server Error: " + "x" * 200)


def test_https_verifies_the_consumers_certificate_against_ssl_cert_file(flow_store, tmp_path) -> None:
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        from tests.conftest import skip_for_want_of

        skip_for_want_of("openssl (to make the test consumer's certificate)")
    certificate, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(certificate)],
                   check=True, capture_output=True)  # fmt: skip
    with consumer(tls=(certificate, key)) as server:
        untrusted = export_to(flow_store, server.url, env={"SSL_CERT_FILE": str(tmp_path / "none")})
        trusted = export_to(flow_store, server.url, env={"SSL_CERT_FILE": str(certificate)})
    count = statements_of(flow_store)
    assert untrusted.exit_code == 1 and "CERTIFICATE_VERIFY_FAILED" in untrusted.output
    assert f"0 sent, {count} failed, 0 retried" in untrusted.output  # a certificate that fails is not tried again
    assert trusted.exit_code == 0 and f"{count} sent, 0 failed" in trusted.output and len(server.received) == count


def test_503_twice_then_200_is_retried_and_delivered(flow_store) -> None:
    def answer(request: Received, before: int) -> tuple[int, bytes]:
        return (503, b"busy") if before < 2 else (200, b"")

    with consumer(answer) as server:
        outcome = export_to(flow_store, server.url, "--connections", "1")
    count = statements_of(flow_store)
    assert outcome.exit_code == 0, outcome.output
    assert f"{count} sent, 0 failed, 2 retried" in outcome.output
    assert len(server.received) == count + 2
    assert len({r.event["run"]["runId"] for r in server.received}) == count


def test_events_that_always_fail_exit_1_with_counts_and_reasons(flow_store) -> None:
    def answer(request: Received, before: int) -> tuple[int, bytes]:
        return (500, b"boom") if request.event["job"]["name"].startswith("wf_sales/") else (200, b"")

    with consumer(answer) as server:
        outcome = export_to(flow_store, server.url, "--retries", "2")
    failing = len({e["run"]["runId"] for e in server.events() if e["job"]["name"].startswith("wf_sales/")})
    count = statements_of(flow_store)
    assert failing > 0 and outcome.exit_code == 1
    assert f"{count - failing} sent, {failing} failed, {2 * failing} retried" in outcome.output
    reasons = [line for line in outcome.output.splitlines() if line.startswith("error: event ")]
    assert len(reasons) == failing
    assert all("(job lineage/wf_sales/" in line and "HTTP 500" in line and "boom (after 3 attempts)" in line
               for line in reasons)  # fmt: skip


def test_4xx_is_not_retried(flow_store) -> None:
    with consumer(lambda request, before: (400, b'{"error": "bad event"}')) as server:
        outcome = export_to(flow_store, server.url)
    count = statements_of(flow_store)
    assert outcome.exit_code == 1 and len(server.received) == count
    assert f"0 sent, {count} failed, 0 retried" in outcome.output and 'HTTP 400 Bad Request: {"error"' in outcome.output


def test_the_api_key_is_sent_as_bearer_and_printed_nowhere(flow_store) -> None:
    secret = "s3cr3t-key-0123456789"

    def echoing(request: Received, before: int) -> tuple[int, bytes]:  # a consumer that echoes what it got
        return (500 if before == 0 else 200), json.dumps(request.headers).encode()

    with consumer(echoing) as server:
        outcome = export_to(flow_store, server.url, "--api-key-env", "OL_KEY", "--retries", "0",
                            env={"OL_KEY": secret})  # fmt: skip
    assert {r.headers["Authorization"] for r in server.received} == {f"Bearer {secret}"}
    assert outcome.exit_code == 1 and "HTTP 500" in outcome.output and "Bearer ***" in outcome.output
    assert secret not in outcome.output


def test_a_missing_key_variable_and_credentials_in_the_url_are_refused(flow_store) -> None:
    unset = export_to(flow_store, "http://127.0.0.1:9", "--api-key-env", "NO_SUCH_VARIABLE_SET", env={})
    assert unset.exit_code == 2 and "NO_SUCH_VARIABLE_SET: that environment variable is not set" in unset.output
    inline = export_to(flow_store, "https://user:hunter2@example.com/api/v1/lineage")
    assert inline.exit_code == 2 and "--api-key-env" in inline.output and "hunter2" not in inline.output
    both = CliRunner().invoke(cli, ["export", "--store", str(flow_store), "-o", "x.json", "--to", "file://y"])
    assert both.exit_code == 2 and "not both" in both.output
    for bad in ("ftp://host/x", "kafka://broker", "http:///nohost"):
        outcome = export_to(flow_store, bad)
        assert outcome.exit_code == 2 and "--to" in outcome.output, bad


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_connection_refused_is_retried_then_failed(flow_store) -> None:
    outcome = export_to(flow_store, f"http://127.0.0.1:{free_port()}", "--retries", "2")
    count = statements_of(flow_store)
    assert outcome.exit_code == 1
    assert f"0 sent, {count} failed, {2 * count} retried" in outcome.output
    assert "connection failed: Connection refused (ConnectionRefusedError) (after 3 attempts)" in outcome.output


def test_file_target_writes_what_o_writes(flow_store, tmp_path) -> None:
    pushed, written = tmp_path / "pushed.jsonl", tmp_path / "written.jsonl"
    outcome = export_to(flow_store, f"file://{pushed}")
    assert outcome.exit_code == 0 and f"{statements_of(flow_store)} sent" in outcome.output
    CliRunner().invoke(cli, ["export", "--store", str(flow_store), "-o", str(written)])
    assert pushed.read_bytes() == written.read_bytes()


def test_backoff_doubles_up_to_its_bound() -> None:
    policy = Policy(delay=1.0, max_delay=5.0)
    pauses = [policy.backoff(attempt) for attempt in range(5)]
    assert [0.75 <= p / bound <= 1.0 for p, bound in zip(pauses, [1, 2, 4, 5, 5], strict=True)] == [True] * 5


class FakeError:
    def __init__(self, text: str, retriable: bool) -> None:
        self.text, self.can_retry = text, retriable

    def retriable(self) -> bool:
        return self.can_retry

    def __str__(self) -> str:
        return self.text


class FakeProducer:
    """confluent-kafka's Producer as ``push`` uses it: delivery reports come on flush, failing as scripted."""

    def __init__(self, settings: dict[str, str], fail: Callable[[dict, int], FakeError | None]) -> None:
        self.settings, self.fail = settings, fail
        self.full, self.unknown = 0, ""  # polls until a full queue drains; a job whose events produce() refuses
        self.produced: list[tuple[str, str | None, dict]] = []
        self.queued: list[tuple[Callable, dict, int]] = []

    def produce(self, topic: str, value: bytes, key: str | None, on_delivery: Callable) -> None:
        event = json.loads(value)
        if self.full > 0:  # the local queue is full: poll() drains it
            raise BufferError("Local: Queue full")
        if event["job"]["name"] == self.unknown:
            raise RuntimeError("KafkaError{code=_UNKNOWN_TOPIC}")
        tries = sum(1 for _, _, seen in self.produced if seen["run"]["runId"] == event["run"]["runId"])
        self.produced.append((topic, key, event))
        self.queued.append((on_delivery, event, tries))

    def poll(self, timeout: float) -> int:
        self.full -= 1
        return 0

    def flush(self, timeout: float) -> int:
        for on_delivery, event, tries in self.queued:
            on_delivery(self.fail(event, tries), None)
        self.queued.clear()
        return 0


def test_kafka_delivers_with_keys_and_retries_retriable_errors(flow) -> None:
    from lineage_cli.emit.openlineage import to_events

    events = to_events(flow, "hive://cluster", "lineage")
    flaky, broken = events[0]["run"]["runId"], events[1]["run"]["runId"]

    def fail(event: dict, tries: int) -> FakeError | None:
        if event["run"]["runId"] == flaky and tries == 0:
            return FakeError("Broker: Not enough in-sync replicas", retriable=True)
        if event["run"]["runId"] == broken:
            return FakeError("Broker: Message size too large", retriable=False)
        return None

    made: list[FakeProducer] = []

    def producer(settings: dict[str, str]) -> FakeProducer:
        made.append(FakeProducer(settings, fail))
        return made[0]

    to = target("kafka://b1:9092,b2:9092/openlineage?acks=all")
    delivery = push(events, to, Policy(delay=0), producer=producer)
    assert made[0].settings == {"bootstrap.servers": "b1:9092,b2:9092", "client.id": "lineage-cli", "acks": "all"}
    assert (delivery.sent, delivery.failed, delivery.retries) == (len(events) - 1, 1, 1)
    assert delivery.failures[0].index == 2 and "Message size too large" in delivery.failures[0].reason
    assert {topic for topic, _, _ in made[0].produced} == {"openlineage"}
    assert all(key == message_key(event) for _, key, event in made[0].produced)
    parented = [event for event in events if "parent" in event["run"]["facets"]]
    assert parented and message_key(parented[0]).startswith("run:lineage/wf_")  # a flow's events share a key


def test_kafka_waits_out_a_full_queue_and_fails_an_event_it_cannot_produce(flow) -> None:
    from lineage_cli.emit.openlineage import to_events

    events = to_events(flow, "default", "lineage")
    fake = FakeProducer({}, lambda event, tries: None)
    fake.full, fake.unknown = 3, events[-1]["job"]["name"]
    delivery = push(events, target("kafka://b:9092/t"), Policy(delay=0, retries=0), producer=lambda _: fake)
    refused = sum(1 for event in events if event["job"]["name"] == fake.unknown)
    assert (delivery.sent, delivery.failed) == (len(events) - refused, refused) and len(fake.produced) == delivery.sent
    assert all("_UNKNOWN_TOPIC" in failure.reason for failure in delivery.failures)


def test_kafka_without_confluent_kafka_says_what_to_install(flow_store) -> None:
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        outcome = export_to(flow_store, "kafka://127.0.0.1:9/openlineage")
        assert outcome.exit_code == 2 and "pip install 'lineage-cli[openlineage]'" in outcome.output
    else:
        pytest.skip("confluent-kafka is installed: the message for its absence cannot be seen")


PROBE = """
import sys
from lineage_cli.cli import cli
for arguments, status in {commands!r}:
    try:
        cli(arguments, prog_name="lineage", standalone_mode=False)
        code = 0
    except SystemExit as end:
        code = end.code
    assert code == status, (arguments, code)
    pushed = sorted(m for m in sys.modules if m.split(".")[0] in ("openlineage", "confluent_kafka"))
    assert not pushed, (arguments, pushed)
"""


def test_no_command_but_a_kafka_push_imports_openlineage_or_kafka_clients(flow_store, tmp_path) -> None:
    """openlineage-python costs about a second to import, confluent-kafka a native library: an export to a file,
    to standard output or over HTTP, and every query, import neither."""
    import subprocess
    import sys

    store = ["--store", str(flow_store)]
    commands = [
        (["export", *store, "-o", str(tmp_path / "e.json")], 0),
        (["export", *store], 0),
        (["export", *store, "--to", f"file://{tmp_path / 'f.json'}"], 0),
        (["export", *store, "--to", f"http://127.0.0.1:{free_port()}", "--retries", "0"], 1),  # refused
        (["up", "dwh.sales_stats", *store, "--format", "json"], 0),
        (["down", "ods.orders", *store, "--format", "json"], 0),
        (["path", "ods.orders", "dwh.sales_stats", *store, "--format", "json"], 0),
        (["io", "wf_sales", *store, "--format", "json"], 0),
        (["stats", *store], 0),
    ]
    run = subprocess.run([sys.executable, "-c", PROBE.format(commands=commands)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]


def test_a_long_push_to_a_log_says_how_far_it_got(flow_store, monkeypatch) -> None:
    from lineage_cli.commands import export as command

    monkeypatch.setattr(command, "PROGRESS_EVERY", 0.0)  # every event is a long time
    with consumer() as server:
        outcome = export_to(flow_store, server.url, "--connections", "1")
    count = statements_of(flow_store)
    lines = [line for line in outcome.output.splitlines() if line.startswith("pushing: ")]
    assert outcome.exit_code == 0 and len(server.received) == count
    assert lines == [f"pushing: {n} of {count} events settled" for n in range(1, count)]
