"""`evaltool bench --backend http://...` against a real HTTP server on 127.0.0.1.

The server (http.server in a thread) answers at most MAX_REQUESTS requests and stops by
itself after DEADLINE seconds even if a test fails; nothing leaves the loopback interface.
What it answers depends on the query text:

  "flaky"      503 the first time, then the normal answer
  "missing"    404 with the body "no such thing"
  "slow"       the normal answer after 1.5 s (the tests' --timeout is 0.4 s)
  "notjson"    200 with the body "oops"
  otherwise    200 {"hits": [{"id": "x1", "score": 3.0}, {"id": "rel1", "score": 2.0}, {"id": "rel2", ...}]}

GET /list answers a bare JSON list of [id, score] pairs.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.helpers import bench, only_report, query, rescore, write_queries

MAX_REQUESTS = 40
DEADLINE = 30.0
HITS = [{"id": "x1", "score": 3.0}, {"id": "rel1", "score": 2.0}, {"id": "rel2", "score": 1.0}]


class Handler(BaseHTTPRequestHandler):
    def _answer(self, text: str) -> None:
        counts = self.server.counts
        counts[text] += 1
        if text == "flaky" and counts[text] == 1:
            return self._send(503, b'{"error": "busy"}')
        if text == "missing":
            return self._send(404, b"no such thing")
        if text == "slow":
            time.sleep(1.5)
        if text == "notjson":
            return self._send(200, b"oops")
        if self.path.startswith("/list"):
            return self._send(200, json.dumps([[h["id"], h["score"]] for h in HITS]).encode())
        self._send(200, json.dumps({"took": 1, "hits": HITS}).encode())

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        params = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        self.server.seen.append(("GET", self.path, dict(self.headers), None))
        self._answer((params.get("q") or params.get("query") or [""])[0])

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append(("POST", self.path, dict(self.headers), body))
        self._answer(body["q"])

    def log_message(self, *args):
        pass


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that gave up (timeout) closed the socket: nothing to report


@pytest.fixture
def server():
    srv = LoopbackServer(("127.0.0.1", 0), Handler)
    srv.timeout = 0.1
    srv.seen, srv.counts = [], Counter()
    stop = threading.Event()
    deadline = time.monotonic() + DEADLINE

    def serve():
        while not stop.is_set() and time.monotonic() < deadline and len(srv.seen) < MAX_REQUESTS:
            srv.handle_request()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}"
    yield srv
    stop.set()
    thread.join(5)
    srv.server_close()


def test_post_with_a_request_template_and_a_response_path(server, tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "q ok", ("rel1", "rel2"), lang="en")])
    result = bench(path, f"{server.url}/search", tmp_path / "out", "--limit", "5",
                   "--request-template", '{"q": "{query}", "k": "{limit}", "lang": "{lang}-x", "fixed": [1, "{id}"]}',
                   "--response-path", "hits.*.id", "--header", "Authorization: Bearer t0k")
    assert result.exit_code == 0, result.stderr
    [(method, url, headers, body)] = server.seen
    assert (method, url) == ("POST", "/search")
    assert body == {"q": "q ok", "k": 5, "lang": "en-x", "fixed": [1, 1]}
    assert headers["Authorization"] == "Bearer t0k" and headers["Content-Type"] == "application/json"
    report, _ = only_report(tmp_path / "out")
    entry = report["detailed_results"][0]
    assert entry["returned_ids"] == ["x1", "rel1", "rel2"] and "returned_scores" not in entry
    # x1 rel1 rel2 against {rel1, rel2}: P@3 = 2/3, P@5 = 2/5, R@10 = 1, RR = 1/2
    assert entry["metrics"]["precision@3"] == pytest.approx(2 / 3) and entry["metrics"]["mrr"] == 0.5
    assert report["metadata"]["backend_kind"] == "http" and report["metadata"]["run_name"] == "http"
    scored = rescore(report)
    assert scored["summary"]["precision@5"] == entry["metrics"]["precision@5"] == pytest.approx(0.4)


def test_get_fills_url_placeholders_url_encoded(server, tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "two words & more")])
    result = bench(path, server.url + "/search?query={query}&n={limit}", tmp_path / "out",
                   "--response-path", "hits.1.id")
    assert result.exit_code == 2, result.stderr  # the only query failed
    assert "hint: " in result.stderr and "--response-path" in result.stderr
    [(method, url, _, _)] = server.seen
    assert (method, url) == ("GET", "/search?query=two%20words%20%26%20more&n=10")
    report, _ = only_report(tmp_path / "out")
    assert report["detailed_results"][0]["error"] == (
        "BackendResultError: the backend returned 'rel1'; expected a list of ids or (id, score[, text]) items")


def test_plain_get_url_and_a_bare_list_of_pairs(server, tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "q list", ("rel2",))])
    result = bench(path, server.url + "/list", tmp_path / "out", "--limit", "7")
    assert result.exit_code == 0, result.stderr
    assert server.seen[0][1] == "/list?q=q+list&limit=7"
    entry = only_report(tmp_path / "out")[0]["detailed_results"][0]
    assert entry["returned_ids"] == ["x1", "rel1", "rel2"] and entry["returned_scores"] == [3.0, 2.0, 1.0]
    assert entry["metrics"]["first_relevant_position"] == 3


def test_status_errors_timeouts_and_bad_bodies(server, tmp_path):
    queries = [query(1, "flaky"), query(2, "missing"), query(3, "slow"), query(4, "notjson"), query(5, "fine")]
    path = write_queries(tmp_path / "q.json", queries)
    result = bench(path, f"{server.url}/search", tmp_path / "out", "--request-template", '{"q": "{query}"}',
                   "--response-path", "hits.*.id", "--timeout", "0.4", "--retries", "2")
    assert result.exit_code == 1, result.stderr
    report, _ = only_report(tmp_path / "out")
    got = {e["query"]: (e["error"], e["attempts"]) for e in report["detailed_results"]}
    assert got == {
        "flaky": (None, 2),  # 503 is transient: retried once
        "missing": ("HttpStatusError: HTTP 404 Not Found: no such thing", 1),  # 404 is not
        "slow": ("timeout", 1),
        "notjson": ("BackendResultError: the response is not JSON: 'oops'", 1),
        "fine": (None, 1),
    }
    assert server.counts["flaky"] == 2 and server.counts["missing"] == 1
    assert report["metadata"]["failed_queries"] == 3 and report["metadata"]["timeouts"] == 1


def test_a_missing_key_on_the_response_path_is_named(server, tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "fine")])
    bench(path, f"{server.url}/search", tmp_path / "out", "--response-path", "results.*.id")
    entry = only_report(tmp_path / "out")[0]["detailed_results"][0]
    assert entry["error"].startswith("BackendResultError: the response has no 'results' at the top level "
                                     '(found {"took": 1, "hits": [{"id": "x1"')


def test_connection_refused_is_retried_then_recorded(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = write_queries(tmp_path / "q.json", [query(1, "anything")])
    result = bench(path, f"http://127.0.0.1:{port}/search", tmp_path / "out", "--retries", "1")
    assert result.exit_code == 2, result.stderr
    entry = only_report(tmp_path / "out")[0]["detailed_results"][0]
    assert entry["error"] == "ConnectError: All connection attempts failed" and entry["attempts"] == 2


def test_latency_counts_the_request_not_the_client_warm_up(server, tmp_path, monkeypatch):
    """The latency clock (time.perf_counter, made to jump here) runs from the request's send to the
    parsed answer: building the client and opening its connections (the server closes each one, so
    every query opens its own) happen outside it, the backend's work inside. Each jump is far longer
    than the real run, so no real timing decides the test; one query at a time, so that no other
    query's jump lands inside a query's window (the clock is the process's)."""
    import anyio
    import httpx

    jumped = {"seconds": 0.0}
    real_clock = time.perf_counter
    monkeypatch.setattr(time, "perf_counter", lambda: real_clock() + jumped["seconds"])

    def jump(seconds):
        jumped["seconds"] += seconds

    real_client_init, real_connect, real_send = httpx.AsyncClient.__init__, anyio.connect_tcp, Handler._send

    def slow_client(self, *args, **kwargs):  # warm-up: the client, its pool, its SSL context
        real_client_init(self, *args, **kwargs)
        jump(1000.0)

    async def slow_connect(*args, **kwargs):  # warm-up: a new connection
        stream = await real_connect(*args, **kwargs)
        jump(1000.0)
        return stream

    def slow_answer(self, status, body):  # the backend's own time: the request is in, the answer not yet out
        if self.server is server:  # not a late answer of an earlier test's server (its "slow" query)
            jump(1.0)
        real_send(self, status, body)

    monkeypatch.setattr(httpx.AsyncClient, "__init__", slow_client)
    monkeypatch.setattr(anyio, "connect_tcp", slow_connect)
    monkeypatch.setattr(Handler, "_send", slow_answer)
    path = write_queries(tmp_path / "q.json", [query(i, f"q{i}") for i in range(1, 7)])
    result = bench(path, f"{server.url}/search", tmp_path / "out", "--response-path", "hits.*.id",
                   "--concurrency", "1", "--timeout", "100000")
    assert result.exit_code == 0, result.stderr
    report, _ = only_report(tmp_path / "out")
    # every query waited for its 1 s answer; none carries a 1000 s warm-up (before: the first one had
    # the client's 1000 s and every one its connection's)
    # (the real time around the jumps is allowed up to 100 s: a loaded machine took 1004 ms once, and
    # a warm-up inside the clock would add 1,000,000 ms)
    times = [entry["execution_time_ms"] for entry in report["detailed_results"]]
    assert all(1000 <= t < 101_000 for t in times), times
    assert 1000 <= report["metadata"]["latency_ms"]["p50"] < 101_000
