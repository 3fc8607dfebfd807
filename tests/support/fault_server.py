"""A fault-injecting search service for the `evaltool bench` tests and the benchmark harness.

Standard library only (``http.server``), bound to 127.0.0.1, HTTP/1.1 with keep-alive.
It stops by itself after ``lifetime`` seconds, answers at most ``max_requests`` requests,
and every loop that waits (a hang, a slow drip) ends after ``HOLD_SECONDS`` or as soon
as the client has gone. The query text (``?q=``) says what to do:

=================  ===========================================================================
``ok``             200, ``{"hits": [{"id": ...}, ...]}`` (``x1 rel1 rel2``)
``hang``           sends nothing until the client closes the connection
``drip``           200 with a Content-Length, then one byte every 50 ms
``status-N``       HTTP N every time (``status-500``, ``status-404``)
``throttle-N-S``   HTTP N with ``Retry-After: S`` the first time, then ``ok``
``throttle-N``     HTTP N without Retry-After every time
``cut``            the first time, a Content-Length of 4096 and 40 bytes, then the connection
                   closes; afterwards ``ok``
``big-N``          N hits (``{"hits": [{"id": "d0"}, ...]}``; ``big-2900000`` is ~50 MB)
``chunked-N``      the same body in 64 KB chunks, without a Content-Length
``latin1``         ``charset=iso-8859-1`` and ids with é in that encoding
``charset-NAME``   ``charset=NAME``, the ``ok`` answer encoded by the codec NAME (``bz2``, ``hex``...)
``undeclared``     the same bytes without a charset (invalid UTF-8)
``surrogate``      ``["ok1", "bad-\\ud800-id"]`` (a lone surrogate as a JSON escape)
``escape``         ``["ok1", "bad-\\udcff-id"]``
``notjson``        200 ``oops``
``shape``          200 ``{"results": ...}`` (no ``hits``)
=================  ===========================================================================

``server.connections`` counts the connections open now, ``server.peak`` the most open
at once; ``server.times[text]`` the arrival times (``time.monotonic()``) of each request.
"""

from __future__ import annotations

import codecs
import json
import select
import socket
import threading
import time
import urllib.parse
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOLD_SECONDS = 10.0
HITS = [{"id": "x1", "score": 3.0}, {"id": "rel1", "score": 2.0}, {"id": "rel2", "score": 1.0}]
_BIG: dict[int, bytes] = {}


def big_body(n: int) -> bytes:
    """``{"hits": [{"id": "d0", "score": n}, ...]}`` with ``n`` hits (json.dumps' layout), made once per ``n``."""
    if n not in _BIG:
        hits = ", ".join(f'{{"id": "d{i}", "score": {n - i}}}' for i in range(n))
        _BIG[n] = ('{"hits": [' + hits + "]}").encode()
    return _BIG[n]


def client_gone(connection, wait: float) -> bool:
    """Has the client closed ``connection`` (checked for at most ``wait`` seconds)?"""
    readable, _, _ = select.select([connection], [], [], wait)
    if not readable:
        return False
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class FaultHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = HOLD_SECONDS  # an idle keep-alive connection is closed after this

    def setup(self):
        super().setup()
        with self.server.lock:
            self.server.connections += 1
            self.server.peak = max(self.server.peak, self.server.connections)

    def finish(self):
        try:
            super().finish()
        finally:
            with self.server.lock:
                self.server.connections -= 1

    def log_message(self, *args):
        pass

    def _client_gone(self, wait: float) -> bool:
        return client_gone(self.connection, wait)

    def _send(self, status: int, body: bytes, content_type="application/json", headers=()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            self.close_connection = True  # the client stopped reading (a size cap, a timeout)

    def _send_chunked(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for start in range(0, len(body), 65536):
                piece = body[start:start + 65536]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    def do_GET(self):
        text = (urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("q") or [""])[0]
        server = self.server
        with server.lock:
            server.requests += 1
            server.counts[text] += 1
            server.times[text].append(time.monotonic())
            first = server.counts[text] == 1
            over = server.requests > server.max_requests
        if over:
            return self._send(503, b'{"error": "the test server answered its maximum of requests"}')
        kind, _, arg = text.partition("-")
        if kind == "hang":
            held = time.monotonic()
            while time.monotonic() - held < HOLD_SECONDS and not self._client_gone(0.05):
                pass
            self.close_connection = True
            return None
        if kind == "drip":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            held = time.monotonic()
            try:
                while time.monotonic() - held < HOLD_SECONDS and not self._client_gone(0.05):
                    self.wfile.write(b" ")
                    self.wfile.flush()
            except OSError:
                pass
            self.close_connection = True
            return None
        if kind == "status":
            return self._send(int(arg), b'{"error": "injected"}')
        if kind == "throttle":
            status, _, after = arg.partition("-")
            if after and not first:
                return self._send(200, json.dumps({"hits": HITS}).encode())
            return self._send(int(status), b'{"error": "slow down"}',
                              headers=[("Retry-After", after)] if after else ())
        if kind == "cut" and first:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "4096")
            self.end_headers()
            self.wfile.write(b'{"hits": [{"id": "x1"}, {"id": "rel1"}, ')
            self.wfile.flush()
            self.close_connection = True
            return None
        if kind == "big":
            return self._send(200, big_body(int(arg)))
        if kind == "chunked":
            return self._send_chunked(big_body(int(arg)))
        if kind == "charset":
            text = json.dumps({"hits": HITS})
            try:
                body = codecs.encode(text.encode(), arg)  # a bytes-to-bytes transform: bz2, zlib, hex, base64
            except TypeError:
                body = codecs.encode(text, arg)  # a text encoding, or a text transform (rot13)
                body = body if isinstance(body, bytes) else body.encode("latin-1")
            return self._send(200, body, f"application/json; charset={arg}")
        if kind in ("latin1", "undeclared"):
            body = '{"hits": [{"id": "café"}, {"id": "rel1"}]}'.encode("iso-8859-1")
            declared = "application/json; charset=iso-8859-1" if kind == "latin1" else "application/json"
            return self._send(200, body, declared)
        if kind == "surrogate":
            return self._send(200, b'{"hits": [{"id": "ok1"}, {"id": "bad-\\ud800-id"}]}')
        if kind == "escape":
            return self._send(200, b'{"hits": [{"id": "ok1"}, {"id": "bad-\\udcff-id"}]}')
        if kind == "notjson":
            return self._send(200, b"oops")
        if kind == "shape":
            return self._send(200, json.dumps({"results": HITS}).encode())
        return self._send(200, json.dumps({"hits": HITS}).encode())


class LocalServer(ThreadingHTTPServer):
    """A test server on 127.0.0.1 (a free port) serving from a thread of its own while the ``with``
    block lasts, and stopping by itself after ``lifetime`` seconds whatever happens."""

    daemon_threads = True

    def __init__(self, handler, lifetime: float):
        super().__init__(("127.0.0.1", 0), handler)
        self.lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._stopper = threading.Timer(lifetime, self.shutdown)
        self._stopper.daemon = True

    def handle_error(self, request, client_address):
        pass  # a client that gave up closed its socket: expected here

    def __enter__(self):
        self._thread.start()
        self._stopper.start()
        return self

    def __exit__(self, *exc):
        self._stopper.cancel()
        self.shutdown()
        self.server_close()
        self._thread.join(5)


class FaultServer(LocalServer):
    def __init__(self, lifetime: float = 60.0, max_requests: int = 500):
        super().__init__(FaultHandler, lifetime)
        self.connections = self.peak = self.requests = 0
        self.counts: Counter = Counter()
        self.times: dict[str, list[float]] = defaultdict(list)
        self.max_requests = max_requests
        self.url = f"http://127.0.0.1:{self.server_address[1]}/search"

    def settled_connections(self, wait: float = 2.0) -> int:
        """The connections still open once the handlers have noticed closed clients (at most ``wait`` s)."""
        end = time.monotonic() + wait
        while self.connections and time.monotonic() < end:
            time.sleep(0.02)
        return self.connections
