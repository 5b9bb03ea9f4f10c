"""``lineage serve`` over real HTTP: a server on a free port in a thread of the test, asked with http.client.

The answers of /api/up, /api/down and /api/path are compared, as text, with what ``lineage up/down/path
--format json`` prints for the same options; then the refusals (404, 405, traversal, a foreign Host, bad
parameters), concurrent requests, and a store replaced under a running server.
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner

from lineage_cli.cli import cli
from lineage_cli.serve.live import LiveStore
from lineage_cli.serve.server import VIEWER, LineageServer
from tests.conftest import skip_for_want_of


class Served:
    """A running server and a client of it: ``get`` returns (status, headers, body text)."""

    def __init__(self, server: LineageServer) -> None:
        self.server = server
        self.host, self.port = server.server_address[0], server.server_address[1]

    def request(
        self, method: str, target: str, headers: dict[str, str] | None = None
    ) -> tuple[int, http.client.HTTPMessage, str]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request(method, target, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.headers, response.read().decode("utf-8")
        finally:
            connection.close()

    def get(self, route: str, **parameters: str) -> tuple[int, http.client.HTTPMessage, str]:
        query = urlencode(parameters)
        return self.request("GET", f"{route}?{query}" if query else route)


@contextmanager
def serving(store_path: Path, host: str = "127.0.0.1", **options: object) -> Iterator[Served]:
    server = LineageServer(str(store_path), host, 0, **options)  # type: ignore[arg-type]
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)  # (a quick shutdown)
    thread.start()
    try:
        yield Served(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture(scope="module")
def served(warehouse_store: Path) -> Iterator[Served]:
    with serving(warehouse_store) as server:
        yield server


@pytest.fixture(scope="module")
def flow_served(flow_store: Path) -> Iterator[Served]:
    with serving(flow_store) as server:
        yield server


def cli_json(store_path: Path, *arguments: str) -> tuple[int, str]:
    outcome = CliRunner().invoke(cli, [*arguments, "--store", str(store_path), "--format", "json"])
    return outcome.exit_code, outcome.stdout  # (`lineage path` may say on stderr that it cut the paths short)


# (route, parameters, the same question on the command line)
SAME_ANSWERS = [
    ("/api/up", {"name": "mart.sales_daily"}, ["up", "mart.sales_daily"]),
    (
        "/api/up",
        {"name": "mart.sales_daily", "depth": "2", "level": "schema"},
        ["up", "mart.sales_daily", "--depth", "2", "--level", "schema"],
    ),
    ("/api/down", {"name": "stg.pos_sales", "walkplan": "impact"}, ["down", "stg.pos_sales", "--walkplan", "impact"]),
    (
        "/api/up",
        {"name": "mart.sales_daily.revenue_usd", "predicates": "true"},
        ["up", "mart.sales_daily.revenue_usd", "--predicates"],
    ),
    ("/api/down", {"name": "stg.%", "show-transformations": ""}, ["down", "stg.%", "--show-transformations"]),
    (
        "/api/up",
        {"name": "SALES_DAILY", "exact": "1", "level": "table"},
        ["up", "SALES_DAILY", "--exact", "--level", "table"],
    ),
    (
        "/api/down",
        {"name": "stg.pos_sales_line.unit_price", "depth": "3"},
        ["down", "stg.pos_sales_line.unit_price", "--depth", "3"],
    ),
    ("/api/path", {"from": "stg.pos_sales", "to": "mart.sales_daily"}, ["path", "stg.pos_sales", "mart.sales_daily"]),
    (
        "/api/path",
        {"from": "stg.pos_sales", "to": "mart.sales_daily", "all": "yes", "max-paths": "2"},
        ["path", "stg.pos_sales", "mart.sales_daily", "--all", "--max-paths", "2"],
    ),
    (
        "/api/path",
        {"from": "stg.pos_sales_line.unit_price", "to": "mart.sales_daily.revenue_usd", "level": "table"},
        ["path", "stg.pos_sales_line.unit_price", "mart.sales_daily.revenue_usd", "--level", "table"],
    ),
]


@pytest.mark.parametrize(("route", "parameters", "command"), SAME_ANSWERS)
def test_walks_answer_exactly_the_json_of_the_command_line(served, warehouse_store, route, parameters, command) -> None:
    status, headers, body = served.get(route, **parameters)
    code, printed = cli_json(warehouse_store, *command)
    assert (status, code) == (200, 0), body
    assert headers["Content-Type"] == "application/json; charset=utf-8"
    assert body == printed
    assert json.loads(body)["nodes"]


def test_a_flows_walk_rolled_up_to_modules_and_workflows_is_the_command_lines(flow_served, flow_store) -> None:
    for level in ("module", "workflow"):
        status, _, body = flow_served.get("/api/up", name="dwh.sales_stats", level=level)
        code, printed = cli_json(flow_store, "up", "dwh.sales_stats", "--level", level)
        assert (status, code, body) == (200, 0, printed), level
        assert any(node["kind"] == level for node in json.loads(body)["nodes"])


def test_a_cut_short_path_enumeration_says_so_in_headers(served) -> None:
    _, everything, _ = served.get("/api/path", **{"from": "stg.pos_sales", "to": "mart.sales_daily", "all": "1"})
    cut_short = {"from": "stg.pos_sales", "to": "mart.sales_daily", "all": "1", "max-paths": "1"}
    status, cut, _ = served.get("/api/path", **cut_short)
    assert status == 200 and int(everything["X-Lineage-Paths"]) > 1 and everything["X-Lineage-Complete"] == "true"
    assert (cut["X-Lineage-Paths"], cut["X-Lineage-Complete"]) == ("1", "false")


def test_unknown_names_and_missing_paths_are_404_with_the_command_lines_message(served, warehouse_store) -> None:
    for route, parameters, command in (
        ("/api/up", {"name": "mart.sales_dayly"}, ["up", "mart.sales_dayly"]),
        (
            "/api/path",
            {"from": "mart.sales_daily", "to": "stg.pos_sales"},
            ["path", "mart.sales_daily", "stg.pos_sales"],
        ),
        ("/api/node", {"name": "no.such_table"}, ["up", "no.such_table"]),
    ):
        status, _, body = served.get(route, **parameters)
        outcome = CliRunner().invoke(cli, [*command, "--store", str(warehouse_store)])
        assert status == 404 and outcome.exit_code == 1
        assert f"error: {json.loads(body)['error']}\n" == outcome.output


def test_search_lists_like_matches_in_name_order_up_to_the_limit(served, store) -> None:
    expected = [store.name(n) for n in store.like("mart.sales_daily.%")]
    status, _, body = served.get("/api/search", q="mart.sales_daily.%")
    found = json.loads(body)
    assert status == 200 and found["query"] == "mart.sales_daily.%" and not found["truncated"]
    assert [m["name"] for m in found["matches"]] == expected and {m["kind"] for m in found["matches"]} == {"column"}
    _, _, body = served.get("/api/search", q="MART.%", limit="3")  # names are folded: matched in lower case too
    limited = json.loads(body)
    assert len(limited["matches"]) == 3 and limited["truncated"] and limited["matches"][0]["kind"] == "table"
    _, _, body = served.get("/api/search", q="no.such_%")
    assert json.loads(body) == {"query": "no.such_%", "matches": [], "truncated": False}


def test_node_gives_kind_role_container_provenance_and_degrees(served, store) -> None:
    _, _, body = served.get("/api/search", q="mart.sales_daily.%", limit="1000")
    columns = [m["name"] for m in json.loads(body)["matches"]]
    status, _, body = served.get("/api/node", name="MART.SALES_DAILY")  # read as `lineage up` reads a name
    table = json.loads(body)
    assert status == 200 and (table["name"], table["kind"], table["container"]) == ("mart.sales_daily", "table", None)
    assert table["degrees"]["out"]["contains"] == len(columns)
    _, _, body = served.get("/api/node", name=columns[0])
    column = json.loads(body)
    assert (column["kind"], column["container"]) == ("column", "mart.sales_daily")
    assert column["degrees"]["in"]["contains"] == 1
    statement = next(name for name in store.names() if name.endswith("sales_daily.sql:4"))
    _, _, body = served.get("/api/node", name=statement)  # any kind, by its exact name
    found = json.loads(body)
    assert found["kind"] == "transformation" and f"{found['file']}:{found['line']}" == statement
    assert found["sql"] == dict(zip(("query", "dialect"), store.sql(store.names().index(statement)), strict=True))
    assert found["sql"]["query"].startswith("INSERT") and "sql" not in table  # a statement's text; a table has none
    _, _, body = served.get("/api/node", name="stg.pos_sales")
    assert json.loads(body)["role"] == "source"
    status, _, body = served.get("/api/node", name="stg.%")
    assert status == 400 and "names" in json.loads(body)["error"]


@pytest.mark.parametrize(
    ("route", "parameters", "says"),
    [
        ("/api/up", {}, "'name' is required"),
        ("/api/up", {"name": " "}, "'name' is required"),
        ("/api/up", {"name": "mart.sales_daily", "depth": "0"}, "at least 1"),
        ("/api/up", {"name": "mart.sales_daily", "depth": "two"}, "at least 1"),
        ("/api/up", {"name": "mart.sales_daily", "depth": "²"}, "at least 1"),
        ("/api/up", {"name": "mart.sales_daily", "level": "galaxy"}, "'level' is one of column"),
        ("/api/up", {"name": "mart.sales_daily", "walkplan": "../../etc/plan.yaml"}, "reads no plan file"),
        ("/api/up", {"name": "mart.sales_daily", "walkplan": "impact", "predicates": "1"}, "walkplan replaces"),
        ("/api/up", {"name": "mart.sales_daily", "exact": "maybe"}, "true or false"),
        ("/api/up", {"name": "mart.sales_daily", "format": "dot"}, "unknown parameter 'format'"),
        ("/api/up", {"name": "mart.sales_daily", "level": "datamart"}, "needs --datamarts"),
        ("/api/down", {"name": "store_id"}, "ambiguous"),
        ("/api/path", {"from": "stg.pos_sales"}, "'to' is required"),
        ("/api/path", {"from": "stg.pos_sales", "to": "mart.sales_daily", "max-paths": "-1"}, "at least 1"),
        ("/api/search", {"q": "%", "limit": "0"}, "at least 1"),
        ("/api/search", {"q": "%", "limit": "10001"}, "at most 10000"),
        ("/api/search", {"q": "%", "depth": "2"}, "unknown parameter 'depth'; this question takes limit, q"),
    ],
)
def test_a_bad_question_is_400_saying_what_is_wrong(served, route, parameters, says) -> None:
    status, _, body = served.get(route, **parameters)
    assert status == 400 and says in json.loads(body)["error"]


def test_a_parameter_given_twice_is_400(served) -> None:
    status, _, body = served.request("GET", "/api/up?name=mart.sales_daily&name=stg.pos_sales")
    assert status == 400 and "given 2 times" in json.loads(body)["error"]


def test_other_methods_are_405_with_allow_and_head_is_get_without_a_body(served) -> None:
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"):
        status, headers, body = served.request(method, "/api/up?name=mart.sales_daily")
        assert (status, headers["Allow"]) == (405, "GET, HEAD"), method
        assert "read-only" in json.loads(body)["error"]
    _, got, text = served.get("/api/up", name="mart.sales_daily")
    status, headers, body = served.request("HEAD", "/api/up?name=mart.sales_daily")
    assert (status, body, headers["Content-Length"]) == (200, "", str(len(text.encode())))
    assert headers["Cache-Control"] == "no-store" == got["Cache-Control"]


@pytest.mark.parametrize(
    "target",
    [
        "/../etc/passwd",
        "/api/../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/%2E%2E%2Fetc%2Fpasswd",
        "/api/./up?name=x",
        "/..%5c..%5cetc%5cpasswd",
        "/api\\up",
        "/api//up",
        "/%00",
        "http://127.0.0.1/api/up?name=x",
        "*",
    ],
)
def test_path_traversal_and_targets_that_are_no_path_are_refused(served, target) -> None:
    status, _, body = served.request("GET", target)
    assert status == 400 and json.loads(body)["error"].startswith("refused")


@pytest.mark.parametrize(
    "target", ["/etc/passwd", "//etc/passwd", "/api", "/api/", "/api/up/", "/index.html", "/api%2fup"]
)
def test_unknown_paths_are_404_naming_the_known_ones(served, target) -> None:
    status, _, body = served.request("GET", target)
    assert status == 404 and "/api/up" in json.loads(body)["error"]


def test_a_host_header_naming_another_machine_is_refused(served) -> None:
    route = "/api/search?q=stg.%25"
    for host in ("evil.example", "127.0.0.1.evil.example", "10.0.0.1:8765"):
        status, _, body = served.request("GET", route, {"Host": host})
        assert status == 403 and "refused" in json.loads(body)["error"], host
    for host in (f"localhost:{served.port}", "127.0.0.1", "[::1]:80", "app.localhost"):
        assert served.request("GET", route, {"Host": host})[0] == 200, host


def test_sixteen_threads_asking_at_once_get_the_answers_one_at_a_time_gets(served) -> None:
    questions = [(route, parameters) for route, parameters, _ in SAME_ANSWERS]
    alone = {index: served.get(route, **parameters)[2] for index, (route, parameters) in enumerate(questions)}

    def ask(index: int) -> tuple[int, int, str]:
        route, parameters = questions[index % len(questions)]
        status, _, body = served.get(route, **parameters)
        return index % len(questions), status, body

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(ask, range(16 * 8)))
    assert all(status == 200 and body == alone[index] for index, status, body in answers)


def test_a_kept_alive_connection_answers_one_request_after_another(served) -> None:
    connection = http.client.HTTPConnection(served.host, served.port, timeout=30)
    try:
        for name in ("mart.sales_daily", "stg.pos_sales", "mart.sales_dayly"):
            connection.request("GET", f"/api/up?name={name}")
            response = connection.getresponse()
            assert json.loads(response.read()) and response.status in (200, 404)
    finally:
        connection.close()


def harvest_into(path: Path, sql: str, folder: Path) -> None:
    from lineage_cli.harvest.batch import harvest
    from lineage_cli.store.writer import write_store

    folder.mkdir(exist_ok=True)
    (folder / "etl.sql").write_text(sql)
    write_store(harvest([folder]).graph, path, {"default_schema": None})  # written beside, renamed over


def test_a_store_replaced_by_a_harvest_is_answered_without_a_restart(tmp_path) -> None:
    path = tmp_path / "graph.lin"
    harvest_into(path, "INSERT INTO a.t SELECT x FROM a.s;\n", tmp_path / "one")
    with serving(path) as served:
        _, _, before = served.get("/api/up", name="a.t")
        assert [n["name"] for n in json.loads(before)["nodes"]] == ["a.s", "a.t"]
        harvest_into(path, "INSERT INTO a.t SELECT x FROM a.s;\nINSERT INTO a.s SELECT x FROM a.r;\n", tmp_path / "two")
        _, _, after = served.get("/api/up", name="a.t")
        assert [n["name"] for n in json.loads(after)["nodes"]] == ["a.r", "a.s", "a.t"]
        path.unlink()
        status, _, body = served.get("/api/up", name="a.t")
        assert status == 503 and "no lineage store here" in json.loads(body)["error"]


def test_requests_while_the_store_is_replaced_again_and_again_get_the_old_answer_or_the_new(tmp_path) -> None:
    path, versions = tmp_path / "graph.lin", {}
    sqls = (
        "INSERT INTO a.t SELECT x FROM a.s;\n",
        "INSERT INTO a.t SELECT x FROM a.s;\nINSERT INTO a.s SELECT x FROM a.r;\n",
    )
    for index, sql in enumerate(sqls):  # each version's file, and its answer from a server of its own
        harvest_into(tmp_path / f"v{index}.lin", sql, tmp_path / f"sql{index}")
        versions[index] = (tmp_path / f"v{index}.lin").read_bytes()
    path.write_bytes(versions[0])
    expected = {cli_json(tmp_path / f"v{index}.lin", "up", "a.t")[1] for index in versions}
    with serving(path) as served:
        done = threading.Event()

        def ask() -> set[tuple[int, str]]:
            seen = set()
            while not done.is_set():
                status, _, body = served.get("/api/up", name="a.t")
                seen.add((status, body))
            return seen

        with ThreadPoolExecutor(8) as pool:
            asking = [pool.submit(ask) for _ in range(8)]
            for round_ in range(1, 21):  # written beside and renamed over, as a harvest does
                (tmp_path / "next.lin").write_bytes(versions[round_ % 2])
                (tmp_path / "next.lin").replace(path)
                time.sleep(0.01)  # (some requests in between)
            done.set()
            answers = set().union(*(future.result() for future in asking))
    assert answers == {(200, body) for body in expected}  # both versions, and nothing else (no error)


def test_a_replaced_store_is_reopened_once_and_the_old_one_still_answers(tmp_path) -> None:
    path = tmp_path / "graph.lin"
    harvest_into(path, "INSERT INTO a.t SELECT x FROM a.s;\n", tmp_path / "one")
    live = LiveStore(str(path))
    first = live.current()
    assert live.current() is first  # unchanged: no reopening
    harvest_into(path, "INSERT INTO a.u SELECT x FROM a.t;\n", tmp_path / "two")
    second = live.current()
    assert second is not first and live.current() is second
    assert "a.s" in first.names() and "a.u" in second.names()  # a request still walking the old store goes on


def test_the_viewer_page_is_the_view_modules_or_a_503_while_it_is_missing(served) -> None:
    status, headers, body = served.get("/")
    if importlib.util.find_spec(VIEWER) is None:
        assert status == 503 and VIEWER in json.loads(body)["error"]
    else:
        from lineage_cli.emit.view import view_html

        assert (status, headers["Content-Type"]) == (200, "text/html; charset=utf-8")
        assert (
            "default-src 'none'" in headers["Content-Security-Policy"]
            and "connect-src 'self'" in headers["Content-Security-Policy"]
        )
        assert body == view_html(None, api="/api", title=served.server.title)


def test_without_the_viewer_module_the_page_is_a_503_and_the_api_still_answers(warehouse_store, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, VIEWER, None)  # what an import of a module that is not there meets
    with serving(warehouse_store) as served:
        status, _, body = served.get("/")
        assert status == 503 and "viewer page is not installed" in json.loads(body)["error"]
        assert served.get("/api/up", name="mart.sales_daily")[0] == 200


def test_a_question_that_fails_inside_is_a_500_and_the_server_goes_on(warehouse_store, monkeypatch) -> None:
    logged: list[str] = []
    with serving(warehouse_store, log=logged.append) as served:
        monkeypatch.setattr("lineage_cli.serve.api.json_reply", lambda _document: 1 / 0)
        status, _, body = served.get("/api/search", q="stg.%")
        assert status == 500 and "ZeroDivisionError" in json.loads(body)["error"]
        assert any("ZeroDivisionError" in line for line in logged)
        assert served.get("/api/up", name="mart.sales_daily")[0] == 200


def test_datamarts_of_the_server_roll_up_as_the_command_lines(warehouse_store, tmp_path) -> None:
    marts = tmp_path / "marts.yaml"
    marts.write_text("'mart.%': marts\n'dwh.%': core\n")
    with serving(warehouse_store, datamarts=str(marts)) as served:
        _, _, body = served.get("/api/up", name="mart.sales_daily", level="datamart")
        command = ["up", "mart.sales_daily", "--level", "datamart", "--datamarts", str(marts)]
        code, printed = cli_json(warehouse_store, *command)
        assert (code, body) == (0, printed) and "core" in body


def test_the_examples_of_docs_server_md_are_what_the_server_answers(served) -> None:
    from tests.conftest import REPO

    text = (REPO / "docs" / "server.md").read_text(encoding="utf-8")
    examples = re.findall(r"^`(/api/[^`]+)`(?:(?!```).)*?:\n\n```json\n(.*?)```", text, re.DOTALL | re.MULTILINE)
    assert len(examples) == 2
    for target, shown in examples:
        status, _, body = served.request("GET", target)
        assert (status, json.loads(body)) == (200, json.loads(shown)), target


def test_an_ipv6_loopback_address_is_served_as_loopback(warehouse_store) -> None:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        skip_for_want_of("an IPv6 loopback address (::1) on this machine")
    with serving(warehouse_store, "::1") as served:
        assert served.server.loopback and served.server.url.startswith("http://[::1]:")
        status, _, body = served.get("/api/node", name="stg.pos_sales")
        assert status == 200 and json.loads(body)["role"] == "source"


def test_a_request_with_a_body_is_answered_and_its_connection_closed_not_read_on(served) -> None:
    connection = http.client.HTTPConnection(served.host, served.port, timeout=30)
    try:
        connection.request("POST", "/api/up?name=mart.sales_daily", body=b"GET /api/up?name=x HTTP/1.1\r\n\r\n")
        response = connection.getresponse()
        assert (response.status, response.headers["Connection"]) == (405, "close")
        assert "read-only" in json.loads(response.read())["error"]
    finally:
        connection.close()


def test_a_switch_given_bare_is_on(served, warehouse_store) -> None:
    status, _, body = served.request("GET", "/api/down?name=stg.pos_sales&show-transformations&exact")
    assert status == 200
    assert body == cli_json(warehouse_store, "down", "stg.pos_sales", "--show-transformations", "--exact")[1]
    assert body != served.get("/api/down", name="stg.pos_sales")[2]
