"""Deliver OpenLineage events to a consumer: an HTTP(S) endpoint, a Kafka topic or a file (``--to``).

``push`` sends events in batches (one event per request by default: Marquez's ``/api/v1/lineage`` takes one
event per request, as does any consumer built for OpenLineage's own HTTP transport; ``batch`` > 1 posts a
JSON array, for a consumer that accepts one) and retries a batch that met a 5xx answer or a connection error
(refused, reset, timed out) after an exponential backoff, at most ``retries`` times; a 4xx answer, any other,
or a certificate that does not verify is final.  It returns what happened (``Delivery``: sent, failed with
the reason, retries made) and raises nothing for a consumer's failure: the command reports and picks the
exit code.

Why not openlineage-python's transports: its HTTP transport sends one event per ``emit``, retries inside
(urllib3 / httpx) where the retries cannot be counted, and raises on the first failure; its Kafka transport's
delivery callback only logs an error, so an event the broker refused would count as sent.  Neither gives
the summary this command owes its user, and importing the client costs about a second.  So HTTP goes through
the standard library's ``http.client`` (one persistent connection per worker thread, the status read and
classified here) and Kafka through confluent-kafka, the producer openlineage-python's Kafka transport wraps,
with a delivery callback of our own; confluent-kafka is the optional extra ``lineage-cli[openlineage]`` and is
imported only when a ``kafka://`` target is pushed to.

The API key is passed in (the command reads it from the environment variable the user names); it goes into
the ``Authorization: Bearer`` header only, and is masked in any reason reported, should a consumer echo it.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qsl, urlsplit

from lineage_cli.errors import InputError

if TYPE_CHECKING:
    import http.client

DEFAULT_ENDPOINT = "/api/v1/lineage"  # Marquez's, and what openlineage-python's HTTP transport posts to
MAX_REASON = 200  # characters of a consumer's answer quoted in a failure's reason
MAX_ANSWER = 64 * 1024  # bytes of an answer read; a longer one costs its connection, not the memory


@dataclass(frozen=True, slots=True)
class Target:
    """Where events go: ``kind`` http (``url`` the endpoint), kafka (``url`` the brokers, ``topic``,
    ``options`` the producer's settings from the query string) or file (``url`` the path)."""

    kind: str
    url: str
    topic: str = ""
    options: tuple[tuple[str, str], ...] = ()

    def shown(self) -> str:
        """The target as a summary names it."""
        if self.kind == "kafka":
            return f"kafka://{self.url}/{self.topic}"
        return self.url


def target(text: str) -> Target:
    """The target a ``--to`` value names; a bad one is an ``InputError``.

    >>> target("http://localhost:5000"), target("kafka://b1:9092,b2:9092/lineage?acks=all").options
    (Target(kind='http', url='http://localhost:5000/api/v1/lineage', topic='', options=()), (('acks', 'all'),))
    >>> target("file:///tmp/events.json").url, target("file://events.json").url
    ('/tmp/events.json', 'events.json')
    """
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        if parts.password is not None or parts.username is not None:
            raise InputError(
                f"--to {parts.scheme}://...: credentials do not go on the command line; "
                "put the key in an environment variable and name it with --api-key-env"
            )
        if not parts.hostname:
            raise InputError(f"--to {text!r}: no host")
        path = parts.path if parts.path not in ("", "/") else DEFAULT_ENDPOINT
        query = f"?{parts.query}" if parts.query else ""
        return Target("http", f"{scheme}://{parts.netloc}{path}{query}")
    if scheme == "kafka":
        topic = parts.path.strip("/")
        if not parts.netloc or not topic or "/" in topic:
            raise InputError(f"--to {text!r}: give kafka://BROKER[,BROKER...]/TOPIC")
        return Target("kafka", parts.netloc, topic, tuple(parse_qsl(parts.query)))
    if scheme == "file":
        path = text[len("file://") :] if text.lower().startswith("file://") else ""
        if not path:
            raise InputError(f"--to {text!r}: give file://PATH")
        return Target("file", path)
    raise InputError(f"--to {text!r}: give an http(s)://, kafka:// or file:// URL")


@dataclass(frozen=True, slots=True)
class Policy:
    """How hard to try: ``retries`` more attempts of a batch after a retryable failure, the first after
    ``delay`` seconds, each next one twice as long (at most ``max_delay``), a quarter of it random so that
    workers do not retry in step; ``timeout`` per request; ``batch`` events per request; ``connections``
    requests in flight."""

    retries: int = 5
    delay: float = 0.5
    max_delay: float = 30.0
    timeout: float = 30.0
    batch: int = 1
    connections: int = 4

    def backoff(self, attempt: int) -> float:
        pause = min(self.max_delay, self.delay * 2**attempt)
        return pause * (0.75 + random.random() / 4)


@dataclass(frozen=True, slots=True)
class Failure:
    """An event that was not delivered: its place in the export (from 1), its job and why."""

    index: int
    job: str
    reason: str


@dataclass(slots=True)
class Delivery:
    """What a push did."""

    total: int = 0
    sent: int = 0
    retries: int = 0  # attempts made again after a retryable failure
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> int:
        return len(self.failures)


Progress = Callable[[int], None]  # called with the number of events just settled (sent or failed)


class _Outcome:
    """One attempt's result: done, or failed and whether to try again."""

    __slots__ = ("ok", "retryable", "reason")

    def __init__(self, ok: bool, retryable: bool = False, reason: str = "") -> None:
        self.ok, self.retryable, self.reason = ok, retryable, reason


def push(
    events: Sequence[dict[str, Any]],
    to: Target,
    policy: Policy | None = None,
    api_key: str | None = None,
    progress: Progress | None = None,
    producer: Callable[[dict[str, str]], Any] | None = None,
) -> Delivery:
    """Deliver ``events`` to ``to``; ``producer`` makes the Kafka producer from its settings (by default
    confluent-kafka's)."""
    policy = policy or Policy()
    started = time.perf_counter()
    if to.kind == "file":
        delivery = _to_file(events, to)
    elif to.kind == "kafka":
        delivery = _to_kafka(events, to, policy, producer or _confluent_producer, progress)
    else:
        delivery = _to_http(events, to, policy, api_key, progress)
    delivery.total, delivery.seconds = len(events), time.perf_counter() - started
    delivery.failures.sort(key=lambda failure: failure.index)
    if api_key:
        masked = [Failure(f.index, f.job, f.reason.replace(api_key, "***")) for f in delivery.failures]
        delivery.failures[:] = masked
    return delivery


def _job(event: dict[str, Any]) -> str:
    job = event.get("job") or {}
    return f"{job.get('namespace')}/{job.get('name')}"


def _to_file(events: Sequence[dict[str, Any]], to: Target) -> Delivery:
    from lineage_cli.emit.openlineage import to_json_lines

    try:
        Path(to.url).write_text(to_json_lines(list(events)), encoding="utf-8", newline="\n")
    except OSError as error:
        raise InputError(f"--to file://{to.url}: cannot write: {error.strerror or error}") from error
    return Delivery(sent=len(events))


def _batches(count: int, size: int) -> Iterator[range]:
    return (range(start, min(start + size, count)) for start in range(0, count, size))


class _Http:
    """POSTs to one endpoint over a persistent connection per thread.  (http.client and ssl are imported here:
    Policy and Target are read by every export, which pushes nothing.)"""

    def __init__(self, to: Target, policy: Policy, api_key: str | None) -> None:
        import http.client
        import ssl

        self.client, self.ssl = http.client, ssl
        # What a request over a kept-alive connection meets when the consumer closed it while idle: sent again at
        # once on a new connection, uncounted (as urllib3 does), since the consumer never saw it
        self.stale = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)
        parts = urlsplit(to.url)
        self.secure, self.host, self.port = parts.scheme == "https", parts.hostname or "", parts.port
        self.path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.timeout = policy.timeout
        self.headers = {"Content-Type": "application/json", "User-Agent": "lineage-cli"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self.local = threading.local()
        self.opened: list[http.client.HTTPConnection] = []
        self.lock = threading.Lock()

    def connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection, and whether it has carried a request before."""
        connection = getattr(self.local, "connection", None)
        if connection is not None:
            return connection, True
        if self.secure:
            connection = self.client.HTTPSConnection(
                self.host, self.port, timeout=self.timeout, context=self.ssl.create_default_context()
            )
        else:
            connection = self.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        self.local.connection = connection
        with self.lock:
            self.opened.append(connection)
        return connection, False

    def post(self, body: bytes) -> _Outcome:
        connection, reused = self.connection()
        try:
            connection.request("POST", self.path, body, self.headers)
            response = connection.getresponse()
            answer = response.read(MAX_ANSWER)
            if response.will_close or not response.isclosed():  # closing, or more answer than is read
                self.drop(connection)
        except (OSError, self.client.HTTPException) as error:  # refused, reset, timed out, a broken answer
            self.drop(connection)
            if reused and isinstance(error, self.stale):  # a kept-alive connection the consumer had closed: no attempt
                return self.post(body)
            # a certificate that does not verify will not verify the next time either
            final = isinstance(error, self.ssl.SSLCertVerificationError)
            return _Outcome(False, not final, _connection_reason(error))
        if 200 <= response.status < 300:
            return _Outcome(True)
        text = answer.decode("utf-8", "replace").strip().replace("\n", " ")
        reason = f"HTTP {response.status} {response.reason}" + (f": {text[:MAX_REASON]}" if text else "")
        return _Outcome(False, response.status >= 500, reason)

    def drop(self, connection: http.client.HTTPConnection) -> None:
        connection.close()
        self.local.connection = None

    def close(self) -> None:
        for connection in self.opened:
            connection.close()


def _connection_reason(error: BaseException) -> str:
    """
    >>> _connection_reason(ConnectionRefusedError(111, "Connection refused"))
    'connection failed: Connection refused (ConnectionRefusedError)'
    """
    detail = getattr(error, "strerror", None) or str(error) or "no answer"
    return f"connection failed: {detail} ({type(error).__name__})"


def _to_http(
    events: Sequence[dict[str, Any]], to: Target, policy: Policy, api_key: str | None, progress: Progress | None
) -> Delivery:
    from concurrent.futures import ThreadPoolExecutor

    client = _Http(to, policy, api_key)
    delivery = Delivery()
    lock = threading.Lock()

    def send(batch: range) -> None:
        chosen = [events[index] for index in batch]
        body = json.dumps(chosen[0] if policy.batch == 1 else chosen, separators=(",", ":")).encode()
        outcome, attempt = client.post(body), 0
        while not outcome.ok and outcome.retryable and attempt < policy.retries:
            time.sleep(policy.backoff(attempt))
            attempt += 1
            outcome = client.post(body)
        with lock:
            delivery.retries += attempt
            if outcome.ok:
                delivery.sent += len(batch)
            else:
                tried = f" (after {attempt + 1} attempts)" if attempt else ""
                delivery.failures += [Failure(i + 1, _job(events[i]), outcome.reason + tried) for i in batch]
        if progress:
            progress(len(batch))

    try:
        with ThreadPoolExecutor(max_workers=max(1, policy.connections)) as pool:
            list(pool.map(send, _batches(len(events), max(1, policy.batch))))
    finally:
        client.close()
    return delivery


class Producer(Protocol):
    """What is used of confluent-kafka's ``Producer``."""

    def produce(self, topic: str, value: bytes, key: str | None, on_delivery: Callable[[Any, Any], None]) -> None: ...

    def poll(self, timeout: float) -> int: ...

    def flush(self, timeout: float) -> int: ...


def _confluent_producer(settings: dict[str, str]) -> Producer:
    try:
        from confluent_kafka import Producer as KafkaProducer  # the extra: only a kafka:// push pays for it
    except ImportError:
        raise InputError("--to kafka:// needs confluent-kafka: pip install 'lineage-cli[openlineage]'") from None
    return KafkaProducer(settings)


def message_key(event: dict[str, Any]) -> str:
    """The Kafka key of an event, as openlineage-python's Kafka transport makes it: the parent job's (or the
    job's) ``run:namespace/name``, so that a flow's events stay in order on one partition.

    >>> message_key({"job": {"namespace": "lineage", "name": "wf/m"}, "run": {"facets": {}}})
    'run:lineage/wf/m'
    """
    parent = ((event.get("run") or {}).get("facets") or {}).get("parent") or {}
    job = parent.get("job") or event.get("job") or {}
    return f"run:{job.get('namespace')}/{job.get('name')}"


def _to_kafka(
    events: Sequence[dict[str, Any]],
    to: Target,
    policy: Policy,
    make: Callable[[dict[str, str]], Producer],
    progress: Progress | None,
) -> Delivery:
    """Produce every event, flush, and produce again those whose delivery failed with a retriable error."""
    settings = {"bootstrap.servers": to.url, "client.id": "lineage-cli", **dict(to.options)}
    producer = make(settings)
    delivery = Delivery()
    pending, attempt = list(range(len(events))), 0
    bodies = [json.dumps(event, separators=(",", ":")).encode() for event in events]
    while pending:
        reports: dict[int, Any] = {}  # event -> its delivery error, None once delivered
        for index in pending:
            _produce(producer, to.topic, bodies[index], message_key(events[index]), partial(_report, reports, index))
        producer.flush(policy.timeout)
        again = []
        for index in pending:
            error = reports.get(index, _UNANSWERED)
            if index in reports and error is None:
                delivery.sent += 1
            elif attempt < policy.retries and (error is _UNANSWERED or _retriable(error)):
                again.append(index)
            else:
                reason = "no delivery report before the timeout" if error is _UNANSWERED else f"Kafka: {error}"
                delivery.failures.append(Failure(index + 1, _job(events[index]), reason))
        if progress:
            progress(len(pending) - len(again))
        if again:
            time.sleep(policy.backoff(attempt))
            attempt += 1
            delivery.retries += len(again)
        pending = again
    return delivery


_UNANSWERED = object()  # no delivery report came for a message before the flush timed out


def _produce(producer: Producer, topic: str, body: bytes, key: str, callback: Callable[[Any, Any], None]) -> None:
    """Queue one message, serving delivery reports (``poll``) while the producer's local queue is full."""
    while True:
        try:
            producer.produce(topic, body, key, callback)
        except BufferError:  # confluent-kafka's queue is full (100,000 messages by default): let it drain
            producer.poll(0.5)
            continue
        except Exception as error:  # confluent-kafka's KafkaException (an unknown topic, ...): this event fails
            callback(error, None)
        producer.poll(0)
        return


def _report(reports: dict[int, Any], index: int, error: Any, _message: Any) -> None:
    """confluent-kafka's delivery callback (from ``poll`` or ``flush``): the event's error, None when delivered."""
    reports[index] = error


def _retriable(error: Any) -> bool:
    retriable = getattr(error, "retriable", None)
    return bool(retriable()) if callable(retriable) else False
