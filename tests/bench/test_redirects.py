"""`evaltool bench` and HTTP redirects: a redirect to another origin (scheme, host, port) is not
followed unless --follow-cross-origin-redirects asks, the --header headers never go to another
origin, and the report says which redirects were followed or refused.

Two servers on 127.0.0.1 (two ports: two origins), each in a thread, each answering at most
MAX_REQUESTS requests and stopping after DEADLINE seconds; nothing leaves the loopback interface.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.helpers import bench, only_report, query, write_queries

MAX_REQUESTS = 20
DEADLINE = 30.0
HITS = {"hits": [{"id": "x1"}, {"id": "rel1"}]}
TEMPLATE = '{"q": "{query}"}'
SECRET = "X-Api-Key: s3cret"


class Handler(BaseHTTPRequestHandler):
    """/search answers HITS; /moved-N answers N with a Location of the server's ``target``."""

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        self.server.seen.append((method, self.path, dict(self.headers), body and json.loads(body)))
        if self.path.startswith("/moved-"):
            self.send_response(int(self.path.split("-")[1]))
            self.send_header("Location", self.server.target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        answer = json.dumps(HITS).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def log_message(self, *args):
        pass


def serve():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.timeout = 0.1
    srv.seen, srv.target = [], ""
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}"
    stop = threading.Event()
    deadline = time.monotonic() + DEADLINE

    def loop():
        while not stop.is_set() and time.monotonic() < deadline and len(srv.seen) < MAX_REQUESTS:
            srv.handle_request()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return srv, stop, thread


@pytest.fixture
def servers():
    started = [serve(), serve()]
    yield started[0][0], started[1][0]
    for srv, stop, thread in started:
        stop.set()
        thread.join(5)
        srv.server_close()


def run(tmp_path, url, *args):
    path = write_queries(tmp_path / "q.json", [query(1, "q one")])
    result = bench(path, url, tmp_path / "out", "--request-template", TEMPLATE, "--response-path", "hits.*.id",
                   "--header", SECRET, *args)
    report, _ = only_report(tmp_path / "out")
    return result, report, report["detailed_results"][0]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_is_refused_and_reported(servers, tmp_path, status):
    home, other = servers
    home.target = other.url + "/search"
    result, report, entry = run(tmp_path, f"{home.url}/moved-{status}")
    assert result.exit_code == 2, result.stderr
    assert other.seen == [], "nothing reaches the other origin"
    assert entry["error"] == (f"RedirectRefused: HTTP {status} redirect to {other.url}/search, another origin: "
                              "not followed (--follow-cross-origin-redirects follows it, without the --header "
                              "headers)")
    assert entry["attempts"] == 1
    assert entry["redirects"] == [{"status": status, "from": f"{home.url}/moved-{status}", "to": f"{other.url}/search",
                                   "cross_origin": True, "followed": False}]
    assert report["metadata"]["redirects"] == {"followed_same_origin": 0, "followed_cross_origin": 0, "refused": 1}
    assert "REDIRECTS: 0 followed to another origin (without the --header headers), 1 refused" in result.stdout


def test_followed_to_another_origin_on_request_without_the_users_headers(servers, tmp_path):
    home, other = servers
    home.target = other.url + "/search"
    result, report, entry = run(tmp_path, f"{home.url}/moved-307", "--follow-cross-origin-redirects")
    assert result.exit_code == 0, result.stderr
    assert entry["returned_ids"] == ["x1", "rel1"] and entry["error"] is None
    [(method, path, headers, body)] = home.seen
    assert (method, path, headers["X-Api-Key"], body) == ("POST", "/moved-307", "s3cret", {"q": "q one"})
    [(method, path, headers, body)] = other.seen
    assert (method, path, body) == ("POST", "/search", {"q": "q one"}), "a 307 repeats the request, body and all"
    assert "X-Api-Key" not in headers and "x-api-key" not in {name.lower() for name in headers}
    assert entry["redirects"] == [{"status": 307, "from": f"{home.url}/moved-307", "to": f"{other.url}/search",
                                   "cross_origin": True, "followed": True}]
    assert report["metadata"]["redirects"] == {"followed_same_origin": 0, "followed_cross_origin": 1, "refused": 0}
    assert "REDIRECTS: 1 followed to another origin (without the --header headers), 0 refused" in result.stdout


def test_a_redirect_within_the_origin_is_followed_with_the_headers(servers, tmp_path):
    home, other = servers
    home.target = "/search"  # relative: the same origin
    result, report, entry = run(tmp_path, f"{home.url}/moved-303")
    assert result.exit_code == 0, result.stderr
    assert [(m, p, h["X-Api-Key"], b) for m, p, h, b in home.seen] == [
        ("POST", "/moved-303", "s3cret", {"q": "q one"}), ("GET", "/search", "s3cret", None)]  # 303: a GET
    assert entry["redirects"][0]["followed"] and not entry["redirects"][0]["cross_origin"]
    assert report["metadata"]["redirects"] == {"followed_same_origin": 1, "followed_cross_origin": 0, "refused": 0}
    assert "REDIRECTS" not in result.stdout and other.seen == []


def test_a_redirect_loop_ends(servers, tmp_path):
    home, _ = servers
    home.target = "/moved-302"
    result, report, entry = run(tmp_path, f"{home.url}/moved-302")
    assert entry["error"] == "RedirectRefused: more than 10 redirects in a row" and len(home.seen) == 11
