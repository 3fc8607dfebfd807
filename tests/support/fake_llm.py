"""A fake OpenAI-compatible chat-completions service for the `evaltool judge` tests.

Standard library only, bound to 127.0.0.1, HTTP/1.1 with keep-alive; it stops by itself
after ``lifetime`` seconds. It reads the pair from the prompt (the test texts carry
``[q:QUERY]`` and ``[d:DOC]``) and answers deterministically ``{"grade": G}`` with
:func:`grade_of` (so a test knows every grade in advance), with ``usage.total_tokens`` =
:data:`TOKENS`. ``faults`` maps a pair to what goes wrong:

==============  ============================================================================
``429``         the first request: HTTP 429 with ``Retry-After: 0.2``; then the answer
``500``         the first request: HTTP 500; then the answer
``malformed``   the first request: 200 with a body that is not JSON; then the answer
``outside``     always ``{"grade": 7}`` (outside the 0-3 scale)
``prose``       always ``I think it is quite relevant.`` (no grade object)
``drip``        the answer, a few bytes every 20 ms (within a generous --timeout)
``hang``        nothing, until the client goes (a --timeout ends it)
==============  ============================================================================

Counters, per pair: ``calls`` (requests), ``answered`` (grades sent whole: what a pair
"judged twice" would show as 2). ``hold_after = N``: once N grades have been sent, every
further request is held unanswered (``holding`` is set) until its client goes, then
dropped without an answer: a test interrupts the client while the server holds, and knows
that no answer was lost in between. ``held`` counts the requests held now. ``authorizations`` keeps the Authorization headers seen.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler

from tests.support.fault_server import LocalServer, client_gone

TOKENS = 42
HOLD_SECONDS = 30.0
_PAIR = re.compile(r"\[q:([^\]]+)\].*?\[d:([^\]]+)\]", re.DOTALL)


def grade_of(query_id: str, doc_id: str) -> int:
    """The grade the fake model gives a pair: 0-3, from the pair's SHA-256."""
    return hashlib.sha256(f"{query_id} {doc_id}".encode()).digest()[0] % 4


def completion(content: str) -> bytes:
    return json.dumps({"id": "chatcmpl-test", "object": "chat.completion", "model": "fake",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": TOKENS - 2, "completion_tokens": 2, "total_tokens": TOKENS}}).encode()


class ChatHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = HOLD_SECONDS

    def log_message(self, *args):
        pass

    def _send(self, status: int, body: bytes, headers=()) -> bool:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            return True
        except OSError:
            self.close_connection = True
            return False

    def _hold(self) -> None:
        held = time.monotonic()
        while time.monotonic() - held < HOLD_SECONDS and not client_gone(self.connection, 0.05):
            pass
        self.close_connection = True

    def _hold_counted(self) -> None:
        with self.server.lock:
            self.server.held += 1
        try:
            self._hold()
        finally:
            with self.server.lock:
                self.server.held -= 1

    def do_POST(self):
        server = self.server
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length))
        prompt = request["messages"][-1]["content"]
        found = _PAIR.search(prompt)
        pair = (found.group(1), found.group(2)) if found else ("?", "?")
        with server.lock:
            server.calls[pair] += 1
            server.authorizations.add(self.headers.get("Authorization"))
            server.models.add(request.get("model"))
            first = server.calls[pair] == 1
            held = server.hold_after is not None and sum(server.answered.values()) >= server.hold_after
            if held:
                server.holding.set()
        if held:
            return self._hold_counted()
        fault = server.faults.get(pair)
        if fault == "hang":
            return self._hold()
        if first and fault == "429":
            return self._send(429, b'{"error": "rate limited"}', [("Retry-After", "0.2")])
        if first and fault == "500":
            return self._send(500, b'{"error": "injected"}')
        if first and fault == "malformed":
            return self._send(200, b'{"choices": [{"message": ')
        content = json.dumps({"grade": grade_of(*pair)})
        if fault == "outside":
            content = '{"grade": 7}'
        elif fault == "prose":
            content = "I think it is quite relevant."
        body = completion(content)
        if fault == "drip":
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                for start in range(0, len(body), 40):
                    self.wfile.write(body[start:start + 40])
                    self.wfile.flush()
                    time.sleep(0.02)
            except OSError:
                self.close_connection = True
                return None
            sent = True
        else:
            sent = self._send(200, body)
        if sent:
            with server.lock:
                server.answered[pair] += 1
        return None


class FakeChatServer(LocalServer):
    def __init__(self, faults: dict | None = None, lifetime: float = 120.0, hold_after: int | None = None):
        super().__init__(ChatHandler, lifetime)
        self.faults = dict(faults or {})
        self.calls: Counter = Counter()
        self.answered: Counter = Counter()
        self.authorizations: set = set()
        self.models: set = set()
        self.hold_after = hold_after
        self.holding = threading.Event()
        self.held = 0  # requests held unanswered now (hold_after)
        self.url = f"http://127.0.0.1:{self.server_address[1]}/v1"
