"""The HTTP server of ``lineage serve``: the standard library's ``ThreadingHTTPServer``, one thread a request.

Routes are exact paths: ``/`` (the viewer page, ``emit/view.py``'s, fetching from ``/api``) and the API's
(``api.py``).  Nothing else is served and no file is read for a request, so there is no file system to walk:
a path with a ``.`` or ``..`` segment (raw or percent-encoded), a backslash, a NUL or an empty segment, and a
request target that is not a path, are refused (400) before routing; any other path is a 404; a method
other than GET and HEAD a 405 with ``Allow``.  Bound to a loopback address, the server also refuses (403) a
request whose ``Host`` names another machine: a web page cannot reach it by pointing a name of its own at
127.0.0.1 (DNS rebinding).  Every reply says ``Cache-Control: no-store``: a re-harvest changes the answers.
"""

from __future__ import annotations

import ipaddress
import socket
import socketserver
import sys
import traceback
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

from lineage_cli import __version__
from lineage_cli.serve.api import Questions, Reply, error_reply
from lineage_cli.serve.live import LiveStore

ALLOWED_METHODS = "GET, HEAD"
VIEWER = "lineage_cli.emit.view"  # the module of the viewer page, imported on the first request for it
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
# The viewer page's script and style are inline and it fetches from this server only: nothing else may load,
# and no other site may frame it
PAGE_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
Log = Callable[[str], None]


class LineageServer(ThreadingHTTPServer):
    """A read-only lineage server over the store at ``store_path``, listening on ``host``:``port`` (0: any
    free port); ``log`` receives a line per request (None: silent); ``datamarts`` is ``--datamarts``."""

    daemon_threads = True  # a request in flight does not hold up Ctrl-C

    def __init__(
        self,
        store_path: str,
        host: str = "127.0.0.1",
        port: int = 8765,
        *,
        datamarts: str | None = None,
        log: Log | None = None,
        title: str | None = None,
    ) -> None:
        family, address = _address(host, port)
        self.address_family = family  # (read by the base class as it makes the socket)
        self.store = LiveStore(store_path)
        self.questions = Questions(datamarts)
        self.log, self.title = log, title or f"lineage: {store_path}"
        self._viewer_page: str | None = None
        super().__init__(address, _Handler)
        self.loopback = ipaddress.ip_address(self.server_address[0]).is_loopback  # only this machine reaches it

    def server_bind(self) -> None:
        # HTTPServer's own looks the host's full name up in the DNS, which may take seconds; the name is not used
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[0], self.server_address[1]

    def prepare(self) -> None:
        """Import what answering imports (the walk, the JSON emitter, numpy), so that the first question costs
        about what the others do: a server starts once and answers many times."""
        from importlib import import_module

        for module in ("lineage_cli.walk.questions", "lineage_cli.walk.query", "lineage_cli.emit.jsonfmt", "numpy"):
            import_module(module)

    @property
    def url(self) -> str:
        host, port = self.server_address[0], self.server_address[1]
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/"

    def viewer(self) -> Reply:
        """The viewer page, made once; a 503 saying so while the viewer module is not installed."""
        if self._viewer_page is None:
            try:
                from lineage_cli.emit.view import view_html
            except ModuleNotFoundError as error:
                if error.name != VIEWER:
                    raise
                return error_reply(503, f"the viewer page is not installed ({VIEWER} is missing); /api/ answers")
            self._viewer_page = view_html(None, api="/api", title=self.title)
        return Reply(200, self._viewer_page, "text/html; charset=utf-8", {"Content-Security-Policy": PAGE_POLICY})

    def handle_error(self, request: object, client_address: object) -> None:
        # a client that went away mid-reply is no error of ours; anything else goes to the log, not to stderr
        if self.log is not None and not isinstance(sys.exc_info()[1], ConnectionError):
            self.log(f"{client_address}: {traceback.format_exc().strip()}")


class _Handler(BaseHTTPRequestHandler):
    server: LineageServer
    protocol_version = "HTTP/1.1"  # keep-alive: the viewer asks for one neighbourhood after another
    server_version = f"lineage/{__version__}"
    timeout = 60  # seconds a kept-alive connection may idle before its thread lets it go
    # headers and body go out as two writes: with Nagle's algorithm the body of a small reply would wait for
    # the client's delayed acknowledgement of the headers, 40 ms on Linux, longer than most answers take
    disable_nagle_algorithm = True

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        self._send(self._reply())

    def do_HEAD(self) -> None:  # noqa: N802
        self._send(self._reply(), body=False)

    def __getattr__(self, name: str) -> Callable[[], None]:
        """Every other method (``do_POST``, ``do_PUT``, ``do_DELETE``, ... any name a client sends): a 405."""
        if name.startswith("do_"):
            return self._refuse_method
        raise AttributeError(name)

    def _refuse_method(self) -> None:
        message = f"method {self.command} not allowed: the lineage server is read-only ({ALLOWED_METHODS})"
        self._send(error_reply(405, message, {"Allow": ALLOWED_METHODS}))

    def _reply(self) -> Reply:
        refused = self._refusal()
        if refused is not None:
            return refused
        route, _, query = self.path.partition("?")
        try:
            if route == "/":
                return self.server.viewer()
            if route in self.server.questions.routes:
                return self.server.questions.answer(route, query, self.server.store.current)
        except Exception as error:  # noqa: BLE001 - one request's failure must not end the server
            self.server.handle_error(self.request, self.client_address)
            return error_reply(500, f"internal error answering this request (please report): {type(error).__name__}")
        known = ", ".join(["/", *self.server.questions.routes])
        return error_reply(404, f"no such path {route!r}; the server answers {known}")

    def _refusal(self) -> Reply | None:
        """A 400 for a request target that is not a plain path, a 403 for a Host of another machine."""
        # (http.server has already made a target starting with // a path with one /)
        target = urlsplit(self.path)
        if not self.path.startswith("/") or target.scheme or target.netloc:
            return error_reply(400, "refused: the request target must be a path (/api/...)")
        path = unquote(target.path)
        segments = path.split("/")[1:]
        if any(segment in (".", "..") for segment in segments) or "\\" in path or "\x00" in path:
            return error_reply(400, "refused: the path leaves the server's root (no file is served)")
        if "" in segments[:-1]:
            return error_reply(400, "refused: an empty path segment (//)")
        if self.server.loopback and not _loopback_host(self.headers.get("Host")):
            message = "refused: this server answers requests addressed to this machine only (Host is not loopback)"
            return error_reply(403, message)
        return None

    def _send(self, reply: Reply, body: bool = True) -> None:
        data = reply.body.encode("utf-8")
        self.send_response(reply.status)
        if "Content-Length" in self.headers or "Transfer-Encoding" in self.headers:
            # a request body is never read: the connection ends with this reply rather than read it as a request
            self.close_connection = True
            self.send_header("Connection", "close")
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        if self.server.log is not None:
            self.server.log(f"{self.address_string()} {format % args}")


def _address(host: str, port: int) -> tuple[socket.AddressFamily, tuple[str, int]]:
    """The address family and socket address for ``host``, a name or an IPv4 or IPv6 address; of a name with
    both, the IPv4 one (``localhost``: 127.0.0.1, as the default, whatever order the resolver gives)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _, _, _, address = min(found, key=lambda entry: entry[0] != socket.AF_INET)
    return family, (address[0], address[1])


def _loopback_host(header: str | None) -> bool:
    """Whether a request's ``Host`` header (name, address, port) names this machine's loopback; an HTTP/1.0
    request without one passes."""
    if header is None:
        return True
    host = urlsplit(f"//{header}").hostname or ""
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
