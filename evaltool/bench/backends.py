"""Search backends: where the queries go and how their answers come back.

``make_backend(spec)`` picks one by the look of ``spec``:

* ``http://...`` or ``https://...``: an HTTP endpoint (through ``httpx``, see :class:`HttpBackend`).
  Without ``request_template`` it is a GET; ``{query}``, ``{limit}`` and query fields
  in the URL are filled in (URL-encoded), and a URL without placeholders gets
  ``?q=QUERY&limit=N``. With ``request_template`` (a JSON text) it is a POST of that
  JSON, where a string ``"{limit}"`` becomes the value itself (a number) and
  placeholders inside longer strings are replaced by text. ``response_path`` says where
  the ids are in the JSON answer: dotted keys, list indexes and ``*`` for every element
  (``hits.*.id``); by default the whole answer is the list. The body is decoded in the
  charset its ``Content-Type`` declares, if that is a text encoding (else UTF-8/16/32,
  as JSON allows), and may hold at most ``max_response_bytes``, as bytes and as decoded
  characters; it is parsed only as far as the ids that are read
  (:mod:`evaltool.bench.answers`).
* an existing file: a TREC run, replayed (every query gets its ranking from the file,
  ordered by trec_eval's rule; a query the run lacks gets no results).
* ``module:function``: a Python callable, sync or async. It gets the query text as its
  first argument, ``limit=N`` if it has a ``limit`` parameter (or ``**kwargs``), and any
  other parameter named like a field of the query (``version``, ``category``, a free
  field), never the expected ids. A sync callable runs in a daemon thread, so one that
  hangs past ``--timeout`` is abandoned rather than waited for.

A backend answers with ranked ids, or ``(id, score)`` / ``(id, score, text)`` items; only
the first ``limit`` distinct ids are read. ``text`` is a string (the document's snippet) or a
mapping with ``title`` and ``snippet`` (or ``text``); it is kept with the ranking so that the
history can show what the search returned (cut to :data:`TITLE_CHARS` / :data:`SNIPPET_CHARS`).
Raising :class:`TransientError` (or a ``ConnectionError``; for HTTP also a
408/425/429/5xx status, a refused or reset connection, a body cut off mid-way) asks for
a retry; any other exception fails the query. A callable may carry a ``corpus_ids`` attribute (a
function returning every id it can return: ``search.corpus_ids = ...``, or a method of a
callable object) for the check that the expected ids exist.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import math
import numbers
import os
import re
import sys
import threading
import time
import urllib.parse
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

from evaltool.errors import EvaltoolError
from evaltool.bench.answers import AnswerText, BackendResultError, ResponseTooLarge, read_answer
from evaltool.bench.queries import BenchQuery, id_problem

PLACEHOLDER = re.compile(r"\{(\w+)\}")
TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
# what a failure says when the answer holds no list of ids where evaltool looked (see --response-path)
SHAPE_ERRORS = (
    "BackendResultError: the backend returned ",
    "BackendResultError: the response has no ",
    "must be a string or an integer, not an object",
    "must be a string or an integer, not a list",
)
TITLE_CHARS, SNIPPET_CHARS = 300, 1000  # of a returned document's text kept with the ranking
_CALLABLE_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class TransientError(Exception):
    """Raise from a backend for a failure worth retrying (overload, a dropped connection)."""


@dataclass
class Retrieved:
    """A backend's ranking after cleaning: ids in order, scores if it gave any."""

    ids: list[str]
    scores: list[float] | None
    duplicates: int = 0
    texts: list[dict] | None = None  # per id: {"title", "snippet"} (None values when not given)


def document_text(text, position: int) -> dict:
    """``{"title", "snippet"}`` of the third part of a result item (see the module docstring).

    >>> document_text({"title": "Crust", "text": "Bake it hot"}, 1)
    {'title': 'Crust', 'snippet': 'Bake it hot'}
    >>> document_text("a snippet", 1)
    {'title': None, 'snippet': 'a snippet'}
    """
    if text is None or isinstance(text, str):
        title, snippet = None, text
    elif isinstance(text, dict):
        title, snippet = text.get("title"), text.get("snippet", text.get("text"))
    else:
        raise BackendResultError(
            f"result {position}: its text is {type(text).__name__}; expected a string or "
            "an object with title and snippet"
        )
    for name, value in (("title", title), ("snippet", snippet)):
        if value is not None and not isinstance(value, str):
            raise BackendResultError(f"result {position}: its {name} is {type(value).__name__}; expected a string")
    return {
        "title": title[:TITLE_CHARS] if title else title,
        "snippet": snippet[:SNIPPET_CHARS] if snippet else snippet,
    }


def _unwritable(doc: str) -> bool:
    """True for an id holding a lone surrogate (JSON's ``"\\ud800"``): no UTF-8 file can hold it."""
    if doc.isascii():
        return False
    try:
        doc.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def normalize(raw, limit: int) -> Retrieved:
    """Check and clean a backend's answer: the first ``limit`` distinct ids (the first of a repeat stays).

    Items after the ``limit``-th distinct id are neither read nor checked.

    >>> normalize(["a", "b", "a", "c", "d"], 3)
    Retrieved(ids=['a', 'b', 'c'], scores=None, duplicates=1, texts=None)
    >>> normalize(["ok", "bad-\\ud800-id"], 5)
    Traceback (most recent call last):
    ...
    evaltool.bench.answers.BackendResultError: result 2: id 'bad-\\ud800-id' is not valid Unicode (a lone surrogate); it cannot be written as UTF-8
    """
    if isinstance(raw, (str, bytes, dict)) or not hasattr(raw, "__iter__"):
        shown = repr(raw)[:60]
        raise BackendResultError(f"the backend returned {shown}; expected a list of ids or (id, score[, text]) items")
    ids: list[str] = []
    scores: list[float] = []
    texts: list[dict] = []
    seen: set[str] = set()
    with_scores = None
    duplicates = 0
    for position, item in enumerate(raw, 1):
        if len(ids) >= limit:
            break
        scored = isinstance(item, (tuple, list))
        if scored:
            if not 2 <= len(item) <= 3:
                raise BackendResultError(f"result {position} has {len(item)} parts; expected (id, score[, text])")
            doc, score = item[0], item[1]
            text = document_text(item[2], position) if len(item) == 3 else {"title": None, "snippet": None}
            if isinstance(score, bool) or not isinstance(score, numbers.Real) or not math.isfinite(score):
                raise BackendResultError(f"result {position}: score {score!r} is not a finite number")
        else:
            doc, score, text = item, None, {"title": None, "snippet": None}
        if with_scores is None:
            with_scores = scored
        elif with_scores != scored:
            raise BackendResultError(f"result {position}: the results mix bare ids and (id, score) items")
        problem = id_problem(doc, f"result {position}: id")
        if problem:
            raise BackendResultError(problem)
        doc = str(doc)
        if _unwritable(doc):
            raise BackendResultError(
                f"result {position}: id {doc!r} is not valid Unicode (a lone surrogate); it cannot be written as UTF-8"
            )
        if doc in seen:
            duplicates += 1
            continue
        seen.add(doc)
        ids.append(doc)
        scores.append(float(score) if scored else 0.0)
        texts.append(text)
        if len(ids) == limit:  # not one item more: a lazily read answer is parsed no further
            break
    given = any(t["title"] is not None or t["snippet"] is not None for t in texts)
    return Retrieved(ids, scores if with_scores else None, duplicates, texts if given else None)


def in_daemon_thread(call) -> asyncio.Future:
    """Run ``call()`` in a daemon thread; a future of its result, resolved on the running loop.

    A daemon thread, not an executor: a backend that never returns must not keep the
    process alive after the run has given up on it.
    """
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def settle(ok: bool, value) -> None:
        if not future.done():
            (future.set_result if ok else future.set_exception)(value)

    def target() -> None:
        try:
            outcome = (True, call())
        except Exception as exc:  # handed to the waiting coroutine
            outcome = (False, exc)
        try:
            loop.call_soon_threadsafe(settle, *outcome)
        except RuntimeError:
            pass  # the loop has closed: nobody waits for this answer any more

    threading.Thread(target=target, name="evaltool-bench-call", daemon=True).start()
    return future


class Stopwatch:
    """One query's latency clock: it starts when the query's first request is sent.

    What happens before the send is the client's warm-up, not the backend's latency:
    building the HTTP client and its pool (an SSL context: some 100 ms), the libraries
    it imports on first use, opening a connection; counted in, they would show a
    backend that answers in under 1 ms as a slow one for its first ``--concurrency``
    queries. A backend calls :meth:`sent` as its request leaves (HTTP:
    when the request headers are written; a Python callable: when it is called); a
    retry does not restart the clock, so the time includes the retries and the pauses
    between them. (A failed query's time is the time it had before it gave up, counted
    from its start as ``--timeout`` is.)

    >>> ticks = iter([10.0, 12.0])  # a retry sends again: the clock keeps its start
    >>> watch = Stopwatch(lambda: next(ticks)); watch.sent(); watch.sent()
    >>> watch.elapsed_ms(since=0.0)
    2000.0
    """

    def __init__(self, now: Callable[[], float] | None = None):
        self.now = now or time.perf_counter
        self.started: float | None = None
        self.redirects: list[dict] = []  # what the query's requests met on the way (HTTP), for the report

    def sent(self) -> None:
        if self.started is None:
            self.started = self.now()

    def elapsed_ms(self, since: float) -> float:
        """Milliseconds since the first send (since ``since``, the query's start, if nothing was sent)."""
        return round((self.now() - (since if self.started is None else self.started)) * 1000, 3)


class Backend(ABC):
    """Answers one query at a time; says which of its failures are worth a retry."""

    kind = ""
    label = ""

    async def open(self) -> None:
        """Get ready before any query's clock starts (an HTTP client and its pool); called once."""

    @abstractmethod
    async def search(self, query: BenchQuery, limit: int, timeout: float, watch: Stopwatch):
        """The raw answer to ``query``; ``timeout`` is what is left of the query's time.

        ``watch.sent()`` is called as the request leaves (see :class:`Stopwatch`).
        """

    def is_transient(self, exc: BaseException) -> bool:
        return isinstance(exc, (TransientError, ConnectionError))

    def is_timeout(self, exc: BaseException) -> bool:
        return isinstance(exc, TimeoutError)

    def corpus_ids(self) -> set[str] | None:
        return None

    async def close(self) -> None:
        """Release what the run opened (connections); called once, when the run ends."""


class PythonBackend(Backend):
    kind = "python"

    def __init__(self, spec: str):
        self.label = spec
        module_name, _, attribute = spec.partition(":")
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())  # as `python -m` does: the user's own modules import
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise EvaltoolError(f"backend {spec}: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
        target = module
        for part in attribute.split("."):
            target = getattr(target, part, None)
            if target is None:
                raise EvaltoolError(f"backend {spec}: {module_name} has no {attribute}")
        if not callable(target):
            raise EvaltoolError(f"backend {spec}: {attribute} is not callable")
        self.function = target
        # an async def function, or an object whose __call__ is one
        self.is_async = inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(type(target).__call__)
        self._plan_arguments()

    def _plan_arguments(self) -> None:
        try:
            parameters = list(inspect.signature(self.function).parameters.values())
        except (TypeError, ValueError):  # builtins without a signature: the query text only
            self.takes_limit, self.named = False, set()
            return
        positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
        if not positional:
            raise EvaltoolError(f"backend {self.label}: the function must take the query text as its first argument")
        by_name = [p for p in parameters[1:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        any_keyword = any(p.kind is p.VAR_KEYWORD for p in parameters)
        self.takes_limit = any_keyword or any(p.name == "limit" for p in by_name)
        self.named = {p.name for p in by_name} - {"limit"}

    def _arguments(self, query: BenchQuery, limit: int) -> dict:
        fields = query.backend_fields()
        kwargs = {name: fields[name] for name in self.named if name in fields}
        if self.takes_limit:
            kwargs["limit"] = limit
        return kwargs

    async def search(self, query: BenchQuery, limit: int, timeout: float, watch: Stopwatch):
        kwargs = self._arguments(query, limit)
        watch.sent()
        if self.is_async:
            return await self.function(query.text, **kwargs)
        result = await in_daemon_thread(lambda: self.function(query.text, **kwargs))
        if inspect.isawaitable(result):
            result = await result
        return result

    def corpus_ids(self) -> set[str] | None:
        hook = getattr(self.function, "corpus_ids", None)
        if hook is None:
            return None
        return {str(doc) for doc in hook()}


def _fill(node, values: dict):
    """The request template with its placeholders replaced (a whole-string placeholder keeps its type)."""
    if isinstance(node, str):
        whole = PLACEHOLDER.fullmatch(node)
        if whole:
            return values[whole.group(1)]
        return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), node)
    if isinstance(node, dict):
        return {key: _fill(value, values) for key, value in node.items()}
    if isinstance(node, list):
        return [_fill(value, values) for value in node]
    return node


def _placeholders(node) -> set[str]:
    if isinstance(node, str):
        return set(PLACEHOLDER.findall(node))
    if isinstance(node, dict):
        return set().union(set(), *(_placeholders(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(set(), *(_placeholders(v) for v in node))
    return set()


class HttpStatusError(Exception):
    """An HTTP answer with an error status; ``retry_after`` is its Retry-After in seconds, if any."""

    def __init__(self, status: int, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for: seconds, or an HTTP date; None when absent or unreadable.

    >>> retry_after_seconds("2"), retry_after_seconds(" 0.5 "), retry_after_seconds("soon"), retry_after_seconds(None)
    (2.0, 0.5, None, None)
    >>> retry_after_seconds("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0)
    6.0
    """
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(seconds, 0.0) if math.isfinite(seconds) else None


MAX_REDIRECTS = 10
REDIRECT_STATUS = frozenset({301, 302, 303, 307, 308})


class RedirectRefused(Exception):
    """A redirect that is not followed: to another origin (unless asked), or one too many (never retried)."""


def origin(url) -> tuple[str, str, int | None]:
    """(scheme, host, port) of an ``httpx.URL``, the port spelled out when it is the scheme's default."""
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


@dataclass
class RedirectStep:
    """Where a redirect leads, with what method, and the line the report keeps about it."""

    target: object  # httpx.URL
    method: str
    record: dict
    refusal: str = ""


def redirect_step(response, method: str, home: tuple, follow_cross_origin: bool) -> RedirectStep | None:
    """The next request a redirect asks for (None when ``response`` is not a redirect).

    A redirect within the backend's origin (scheme, host, port) is followed as a browser
    does: 303, and 301/302 after a POST, become a GET without a body; 307 and 308 repeat
    the request, body and all. A redirect to another origin is refused unless
    ``follow_cross_origin`` (``--follow-cross-origin-redirects``); followed, it never
    carries the ``--header`` headers (a key sent to the backend is not for a host it
    points to), though a 307 or 308 repeats the body (the query). Every redirect is
    recorded: status, from, to, whether it left the origin, whether it was followed.
    """
    location = response.headers.get("Location")
    if response.status_code not in REDIRECT_STATUS or location is None:
        return None
    try:
        target = response.request.url.join(location)
    except Exception:  # httpx.InvalidURL, or whatever a hostile Location makes of the parser
        return None
    cross = origin(target) != home
    followed = not cross or follow_cross_origin
    status = response.status_code
    record = {
        "status": status,
        "from": str(response.request.url),
        "to": str(target),
        "cross_origin": cross,
        "followed": followed,
    }
    if status == 303 or (status in (301, 302) and method == "POST"):
        method = "GET"
    refusal = (
        f"HTTP {status} redirect to {str(target)[:200]}, another origin: not followed "
        "(--follow-cross-origin-redirects follows it, without the --header headers)"
    )
    return RedirectStep(target, method, record, "" if followed else refusal)


def _httpx():
    try:
        import httpx
    except ImportError:
        raise EvaltoolError("an http(s):// backend needs httpx: pip install 'evaltool[http]' (or httpx)") from None
    return httpx


class HttpBackend(Backend):
    """An HTTP endpoint, through one ``httpx.AsyncClient`` per run (see the module docstring).

    httpx rather than ``urllib``: its requests are coroutines, so a query that times out
    or is interrupted is cancelled and its connection closed at once (a thread blocked
    in ``urllib`` goes on reading in the background), the body arrives in pieces that
    are counted against ``max_response_bytes`` as they come, and the pool caps the
    connections the service sees at ``max_connections`` (``--concurrency``).
    """

    kind = "http"

    def __init__(
        self,
        url: str,
        queries: list[BenchQuery],
        request_template: str | None = None,
        response_path: str | None = None,
        headers: tuple[str, ...] = (),
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_connections: int = 4,
        follow_cross_origin: bool = False,
    ):
        self.label = url
        self.url = url
        self.response_path = response_path
        self.max_response_bytes = max_response_bytes
        self.max_connections = max_connections
        self.follow_cross_origin = follow_cross_origin
        self._client = None
        self.headers = {"Accept": "application/json", "User-Agent": "evaltool-bench"}
        self.user_headers = {}  # --header: sent to the backend's own origin only
        for header in headers:
            name, sep, value = header.partition(":")
            if not sep or not name.strip():
                raise EvaltoolError(f"--header {header!r}: expected 'Name: value'")
            self.user_headers[name.strip()] = value.strip()
        self.template = None
        used = set(PLACEHOLDER.findall(url))
        if request_template is not None:
            try:
                self.template = json.loads(request_template)
            except json.JSONDecodeError as exc:
                raise EvaltoolError(f"--request-template is not valid JSON ({exc.msg} at column {exc.colno})") from None
            used |= _placeholders(self.template)
            self.headers["Content-Type"] = "application/json"
        self.plain_get = self.template is None and not used
        _httpx()  # missing: say so now, before any query is sent
        for name in sorted(used - {"query", "limit"}):
            lacking = [q.qid for q in queries if name not in q.backend_fields()]
            if lacking:
                raise EvaltoolError(
                    f"backend {url}: placeholder {{{name}}} is not a field of every query "
                    f"(not of {', '.join(lacking[:5])}); known: query, limit and the query fields"
                )

    def request(self, query: BenchQuery, limit: int) -> tuple[str, str, bytes | None]:
        """(method, URL, body) of the request for ``query``."""
        values = {**query.backend_fields(), "query": query.text, "limit": limit}
        if self.plain_get:
            joiner = "&" if "?" in self.url else "?"
            url = self.url + joiner + urllib.parse.urlencode({"q": query.text, "limit": limit})
        else:
            url = PLACEHOLDER.sub(lambda m: urllib.parse.quote(str(values[m.group(1)]), safe=""), self.url)
        if self.template is None:
            return "GET", url, None
        return "POST", url, json.dumps(_fill(self.template, values), ensure_ascii=False).encode()

    def _client_for_this_run(self):
        if self._client is None:
            httpx = _httpx()
            limits = httpx.Limits(max_connections=self.max_connections, max_keepalive_connections=self.max_connections)
            # no httpx timeout: the caller cancels the whole answer (connect, read, parse) when its time is up
            # redirects are followed by search(), which decides where the --header headers go
            self._client = httpx.AsyncClient(headers=self.headers, limits=limits, timeout=None, follow_redirects=False)
        return self._client

    async def _text(self, response) -> list[str]:
        """The answer's text, decoded as it arrives; ResponseTooLarge once past the cap (the rest is never read)."""
        cap = self.max_response_bytes
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > cap:
            raise ResponseTooLarge(
                f"the response is {int(declared)} bytes (Content-Length); --max-response-bytes is {cap}"
            )
        text, size = AnswerText(response.charset_encoding, max_chars=cap), 0
        async for piece in response.aiter_bytes():
            size += len(piece)
            if size > cap:
                raise ResponseTooLarge(f"the response exceeds --max-response-bytes ({cap} bytes)")
            text.feed(piece)
        return text.finish()

    async def open(self) -> None:
        self._client_for_this_run()

    async def search(self, query: BenchQuery, limit: int, timeout: float, watch: Stopwatch):
        """The answer to ``query``, redirects followed as :func:`redirect_step` allows."""
        method, url, body = self.request(query, limit)
        return read_answer(await self.exchange(method, url, body, watch), self.response_path)

    async def exchange(self, method: str, url: str, body: bytes | None, watch: Stopwatch) -> list[str]:
        """Send one request and read its answer's text (in pieces, as decoded): redirects followed as :func:`redirect_step`
        allows (the ``--header`` headers only to the first URL's origin), an error status raised as
        :class:`HttpStatusError` (with its Retry-After), a body past ``max_response_bytes`` refused.
        Other clients of an HTTP service (the model judging documents) send through it too."""
        httpx = _httpx()
        client = self._client_for_this_run()
        home = origin(httpx.URL(url))

        async def trace(event: str, info: dict) -> None:
            # httpcore's events: connecting, then (http11|http2).send_request_headers.started
            if event.endswith(".send_request_headers.started"):
                watch.sent()

        target = httpx.URL(url)
        for _ in range(MAX_REDIRECTS + 1):
            headers = self.user_headers if origin(target) == home else {}
            request = client.build_request(method, target, content=body, headers=headers, extensions={"trace": trace})
            response = await client.send(request, stream=True)
            try:
                step = redirect_step(response, method, home, self.follow_cross_origin)
                if step is not None:
                    watch.redirects.append(step.record)
                    if not step.record["followed"]:
                        raise RedirectRefused(step.refusal)
                    target, method = step.target, step.method
                    body = body if method == "POST" else None
                    continue
                if response.status_code >= 400:
                    raise await self._status_error(response)
                return await self._text(response)
            finally:
                await response.aclose()
        raise RedirectRefused(f"more than {MAX_REDIRECTS} redirects in a row")

    @staticmethod
    async def _status_error(response) -> HttpStatusError:
        detail = b""
        async for piece in response.aiter_bytes():
            detail += piece
            if len(detail) >= 200:
                break
        shown = detail[:200].decode("utf-8", "replace").strip()
        message = f"HTTP {response.status_code} {response.reason_phrase}" + (f": {shown}" if shown else "")
        return HttpStatusError(response.status_code, message, retry_after_seconds(response.headers.get("Retry-After")))

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def is_transient(self, exc: BaseException) -> bool:
        httpx = _httpx()
        if isinstance(exc, HttpStatusError):
            return exc.status in TRANSIENT_STATUS
        # refused or reset connections, and a body cut off mid-way (RemoteProtocolError: IncompleteRead)
        return isinstance(exc, (httpx.NetworkError, httpx.RemoteProtocolError)) or super().is_transient(exc)


class RunFileBackend(Backend):
    """Replays a TREC run: a query's answer is its ranking in the file (trec_eval's order)."""

    kind = "run"

    def __init__(self, path: str):
        import numpy as np

        from evaltool.io import read_run
        from evaltool.ranking import rank_rows

        self.label = path
        run = read_run(path)
        ranks = rank_rows(run, np.arange(len(run)))
        order = np.lexsort((ranks, run.qid_codes))
        docs = run.doc_text(order)
        self.rankings: dict[str, list[tuple[str, float]]] = {}
        for row, doc in zip(order.tolist(), docs, strict=True):
            self.rankings.setdefault(run.qid_vocab[run.qid_codes[row]], []).append((doc, float(run.scores[row])))

    async def search(self, query: BenchQuery, limit: int, timeout: float, watch: Stopwatch):
        watch.sent()
        return self.rankings.get(query.qid, [])


def make_backend(
    spec: str,
    queries: list[BenchQuery],
    *,
    request_template: str | None = None,
    response_path: str | None = None,
    headers: tuple[str, ...] = (),
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    concurrency: int = 4,
    follow_cross_origin_redirects: bool = False,
) -> Backend:
    """The backend ``spec`` names; see the module docstring."""
    http = spec.startswith(("http://", "https://"))
    given = [
        name
        for name, value in (
            ("--request-template", request_template),
            ("--response-path", response_path),
            ("--header", headers),
            ("--follow-cross-origin-redirects", follow_cross_origin_redirects),
        )
        if value
    ]
    if not http and given:
        raise EvaltoolError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for an http(s):// backend")
    if http:
        return HttpBackend(
            spec,
            queries,
            request_template,
            response_path,
            headers,
            max_response_bytes,
            concurrency,
            follow_cross_origin_redirects,
        )
    if os.path.isfile(spec):
        return RunFileBackend(spec)
    if _CALLABLE_SPEC.match(spec):
        return PythonBackend(spec)
    raise EvaltoolError(
        f"backend {spec!r}: expected module:function (a Python callable), an http(s):// URL "
        "or an existing TREC run file"
    )
