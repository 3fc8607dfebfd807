"""Search backends: where the queries go and how their answers come back.

``make_backend(spec)`` picks one by the look of ``spec``:

* ``http://...`` or ``https://...``: an HTTP endpoint (standard library ``urllib``).
  Without ``request_template`` it is a GET; ``{query}``, ``{limit}`` and query fields
  in the URL are filled in (URL-encoded), and a URL without placeholders gets
  ``?q=QUERY&limit=N``. With ``request_template`` (a JSON text) it is a POST of that
  JSON, where a string ``"{limit}"`` becomes the value itself (a number) and
  placeholders inside longer strings are replaced by text. ``response_path`` says where
  the ids are in the JSON answer: dotted keys, list indexes and ``*`` for every element
  (``hits.*.id``); by default the whole answer is the list.
* an existing file: a TREC run, replayed (every query gets its ranking from the file,
  ordered by trec_eval's rule; a query the run lacks gets no results).
* ``module:function``: a Python callable, sync or async. It gets the query text as its
  first argument, ``limit=N`` if it has a ``limit`` parameter (or ``**kwargs``), and any
  other parameter named like a field of the query (``version``, ``category``, a free
  field), never the expected ids. A sync callable runs in a daemon thread, so one that
  hangs past ``--timeout`` is abandoned rather than waited for.

A backend answers with ranked ids, or ``(id, score)`` / ``(id, score, text)`` items
(text is accepted and not stored). Raising :class:`TransientError` (or a
``ConnectionError``; for HTTP also a 408/425/429/5xx status) asks for a retry; any
other exception fails the query. A callable may carry a ``corpus_ids`` attribute (a
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
import urllib.error
import urllib.parse
import urllib.request
from abc import ABC, abstractmethod
from dataclasses import dataclass

from evaltool.errors import EvaltoolError
from evaltool.bench.queries import BenchQuery, id_problem

PLACEHOLDER = re.compile(r"\{(\w+)\}")
TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
_CALLABLE_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class TransientError(Exception):
    """Raise from a backend for a failure worth retrying (overload, a dropped connection)."""


class BackendResultError(Exception):
    """A backend answered with something that is not a ranking (never retried)."""


@dataclass
class Retrieved:
    """A backend's ranking after cleaning: ids in order, scores if it gave any."""

    ids: list[str]
    scores: list[float] | None
    duplicates: int = 0


def normalize(raw, limit: int) -> Retrieved:
    """Check and clean a backend's answer: drop repeated ids (the first stays), keep the top ``limit``."""
    if isinstance(raw, (str, bytes, dict)) or not hasattr(raw, "__iter__"):
        shown = repr(raw)[:60]
        raise BackendResultError(f"the backend returned {shown}; expected a list of ids or (id, score[, text]) items")
    ids: list[str] = []
    scores: list[float] = []
    seen: set[str] = set()
    with_scores = None
    duplicates = 0
    for position, item in enumerate(raw, 1):
        scored = isinstance(item, (tuple, list))
        if scored:
            if not 2 <= len(item) <= 3:
                raise BackendResultError(f"result {position} has {len(item)} parts; expected (id, score[, text])")
            doc, score = item[0], item[1]
            if isinstance(score, bool) or not isinstance(score, numbers.Real) or not math.isfinite(score):
                raise BackendResultError(f"result {position}: score {score!r} is not a finite number")
        else:
            doc, score = item, None
        if with_scores is None:
            with_scores = scored
        elif with_scores != scored:
            raise BackendResultError(f"result {position}: the results mix bare ids and (id, score) items")
        problem = id_problem(doc, f"result {position}: id")
        if problem:
            raise BackendResultError(problem)
        doc = str(doc)
        if doc in seen:
            duplicates += 1
            continue
        seen.add(doc)
        ids.append(doc)
        scores.append(float(score) if scored else 0.0)
    return Retrieved(ids[:limit], scores[:limit] if with_scores else None, duplicates)


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


class Backend(ABC):
    """Answers one query at a time; says which of its failures are worth a retry."""

    kind = ""
    label = ""

    @abstractmethod
    async def search(self, query: BenchQuery, limit: int, timeout: float):
        """The raw answer to ``query``; ``timeout`` is what is left of the query's time."""

    def is_transient(self, exc: BaseException) -> bool:
        return isinstance(exc, (TransientError, ConnectionError))

    def is_timeout(self, exc: BaseException) -> bool:
        return isinstance(exc, TimeoutError)

    def corpus_ids(self) -> set[str] | None:
        return None


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

    async def search(self, query: BenchQuery, limit: int, timeout: float):
        kwargs = self._arguments(query, limit)
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


def extract(body, path: str | None):
    """The items at ``path`` (dotted keys, list indexes, ``*`` for every element) of a JSON answer."""
    values, trail = [body], []
    spread = False
    for part in path.split(".") if path else []:
        found = []
        for value in values:
            if part == "*" and isinstance(value, list):
                found.extend(value)
            elif isinstance(value, list) and re.fullmatch(r"-?\d+", part) and -len(value) <= int(part) < len(value):
                found.append(value[int(part)])
            elif isinstance(value, dict) and part in value:
                found.append(value[part])
            else:
                where = ".".join(trail) or "the top level"
                shown = json.dumps(value, ensure_ascii=False)[:80]
                raise BackendResultError(f"the response has no {part!r} at {where} (found {shown})")
        spread = spread or part == "*"
        values = found
        trail.append(part)
    return values if spread else values[0]


class HttpStatusError(Exception):
    """An HTTP answer with an error status."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class HttpBackend(Backend):
    kind = "http"

    def __init__(self, url: str, queries: list[BenchQuery], request_template: str | None = None,
                 response_path: str | None = None, headers: tuple[str, ...] = ()):
        self.label = url
        self.url = url
        self.response_path = response_path
        self.headers = {"Accept": "application/json", "User-Agent": "evaltool-bench"}
        for header in headers:
            name, sep, value = header.partition(":")
            if not sep or not name.strip():
                raise EvaltoolError(f"--header {header!r}: expected 'Name: value'")
            self.headers[name.strip()] = value.strip()
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
        for name in sorted(used - {"query", "limit"}):
            lacking = [q.qid for q in queries if name not in q.backend_fields()]
            if lacking:
                raise EvaltoolError(f"backend {url}: placeholder {{{name}}} is not a field of every query "
                                    f"(not of {', '.join(lacking[:5])}); known: query, limit and the query fields")

    def request(self, query: BenchQuery, limit: int) -> urllib.request.Request:
        values = {**query.backend_fields(), "query": query.text, "limit": limit}
        if self.plain_get:
            joiner = "&" if "?" in self.url else "?"
            url = self.url + joiner + urllib.parse.urlencode({"q": query.text, "limit": limit})
        else:
            url = PLACEHOLDER.sub(lambda m: urllib.parse.quote(str(values[m.group(1)]), safe=""), self.url)
        if self.template is None:
            return urllib.request.Request(url, headers=self.headers, method="GET")
        body = json.dumps(_fill(self.template, values), ensure_ascii=False).encode()
        return urllib.request.Request(url, data=body, headers=self.headers, method="POST")

    def _fetch(self, request: urllib.request.Request, timeout: float):
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                payload = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace").strip()
            message = f"HTTP {exc.code} {exc.reason}" + (f": {detail}" if detail else "")
            raise HttpStatusError(exc.code, message) from None
        try:
            body = json.loads(payload)
        except ValueError:
            shown = payload[:80].decode("utf-8", "replace")
            raise BackendResultError(f"the response is not JSON: {shown!r}") from None
        return extract(body, self.response_path)

    async def search(self, query: BenchQuery, limit: int, timeout: float):
        request = self.request(query, limit)
        return await in_daemon_thread(lambda: self._fetch(request, timeout))

    def is_transient(self, exc: BaseException) -> bool:
        if isinstance(exc, HttpStatusError):
            return exc.status in TRANSIENT_STATUS
        if isinstance(exc, urllib.error.URLError):
            return isinstance(exc.reason, OSError) and not isinstance(exc.reason, TimeoutError)
        return super().is_transient(exc)

    def is_timeout(self, exc: BaseException) -> bool:
        return super().is_timeout(exc) or (isinstance(exc, urllib.error.URLError)
                                           and isinstance(exc.reason, TimeoutError))


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

    async def search(self, query: BenchQuery, limit: int, timeout: float):
        return self.rankings.get(query.qid, [])


def make_backend(spec: str, queries: list[BenchQuery], *, request_template: str | None = None,
                 response_path: str | None = None, headers: tuple[str, ...] = ()) -> Backend:
    """The backend ``spec`` names; see the module docstring."""
    http = spec.startswith(("http://", "https://"))
    if not http and (request_template or response_path or headers):
        raise EvaltoolError("--request-template, --response-path and --header are for an http(s):// backend")
    if http:
        return HttpBackend(spec, queries, request_template, response_path, headers)
    if os.path.isfile(spec):
        return RunFileBackend(spec)
    if _CALLABLE_SPEC.match(spec):
        return PythonBackend(spec)
    raise EvaltoolError(f"backend {spec!r}: expected module:function (a Python callable), an http(s):// URL "
                        "or an existing TREC run file")
