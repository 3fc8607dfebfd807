"""The ASGI app: every view at its JSON address and its page, the static assets, recording over HTTP.

Security, in one place:

* every response carries a Content-Security-Policy that runs only this server's own
  scripts (no inline script at all: data travels as JSON in attributes), forbids
  framing and any other origin, plus ``nosniff`` and ``no-referrer``;
* static files are a fixed list of names read from the installed packages (plotly.js
  from plotly, the page script and style from evaltool): no path is ever joined, so
  there is nothing to traverse;
* request bodies are limited to ``max_body`` bytes (413 beyond, counted as they arrive
  whatever Content-Length says);
* ``POST /api/executions`` records only with the bearer token configured (``--token``
  or ``EVALTOOL_TOKEN``); with none configured it is off (403);
* bad parameters are 400 and unknown ids or addresses 404, with a JSON body
  ``{"error": message}`` (an HTML page for the pages); anything unexpected is a 500
  whose body says so without a traceback.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from evaltool.errors import EvaltoolError
from evaltool.report.html import content_security_policy
from evaltool.server import pages
from evaltool.server.params import RequestError, parse
from evaltool.server.views import VIEWS

MAX_BODY = 32 * 1024 * 1024  # a recorded result with every per-query value of a large run fits well within
CACHE_SIZE = 64  # answers kept (a year's report of 10 nightly suites is about 0.7 MB)
STATIC = {"plotly.min.js": "text/javascript", "evaltool.js": "text/javascript", "evaltool.css": "text/css"}
# scripts: this server's own files only; styles may be inline because plotly.js sets style attributes as it draws
POLICY = content_security_policy("'self'", "'self' 'unsafe-inline'", header=True)
SECURITY_HEADERS = {"content-security-policy": POLICY, "x-content-type-options": "nosniff",
                    "referrer-policy": "no-referrer", "x-frame-options": "DENY"}
log = logging.getLogger("evaltool.server")


def _json_bytes(data) -> bytes:
    from evaltool.report.json import dump_json

    return dump_json(data, indent=None).encode()  # the one JSON writer: the CLI's -o json, on one line


def _json(data, status: int = 200) -> Response:
    return Response(_json_bytes(data), status_code=status, media_type="application/json")


def _error(request: Request, status: int, message: str) -> Response:
    if request.url.path.startswith("/api/"):
        return _json({"error": message}, status)
    return HTMLResponse(pages.error_page(status, message), status_code=status)


class ResponseCache:
    """Answers kept until the history changes: a report of a year of nightly executions takes the
    history about a second to compute, and every viewer of the dashboard asks for the same few.

    An entry is valid while :func:`evaltool.history.queries.state` (number of executions,
    highest id) is what it was when the entry was made: executions are never changed in
    place, so any record or prune changes it. The state is read before the answer is
    computed, so an answer is never older than the state it is filed under. One lock per
    address and parameters: concurrent askers wait for one computation instead of each doing it.
    """

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict = OrderedDict()
        self._guard = threading.Lock()
        self._locks: dict = {}

    def get(self, key, state, produce) -> bytes:
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._guard:
                hit = self._entries.get(key)
                if hit is not None and hit[0] == state:
                    self._entries.move_to_end(key)
                    return hit[1]
            body = produce()
            with self._guard:
                self._entries[key] = (state, body)
                self._entries.move_to_end(key)
                while len(self._entries) > self.size:
                    evicted, _ = self._entries.popitem(last=False)
                    self._locks.pop(evicted, None)
            return body


@dataclass
class Settings:
    history: object  # an open evaltool.history.History
    token: str | None = None
    max_body: int = MAX_BODY
    cache: ResponseCache | None = None
    backends: dict = field(default_factory=dict)  # name -> evaltool.server.backends.DeclaredBackend
    worker: object = None  # the evaltool.server.worker.JobWorker that runs queued suites (None: no runs)


def _key(view, page: bool, args: dict) -> tuple:
    return view.name, page, tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in args.items()))


def _endpoint(view, page: bool):
    """One view at one address: parse the parameters, call the view, answer JSON or HTML
    (from the cache while the history has not changed, with an ETag for conditional requests)."""
    media = "text/html; charset=utf-8" if page else "application/json"

    def answer(request: Request) -> Response:
        from evaltool.history.queries import state

        settings: Settings = request.app.state.settings
        args = parse(request.query_params, view.params, path=request.path_params)

        def produce() -> bytes:
            data = view.compute(settings.history, args)
            return pages.render(view, data, args).encode() if page else _json_bytes(data)

        if not (view.cached and settings.cache):
            return Response(produce(), media_type=media)
        key, now = _key(view, page, args), state(settings.history)
        tag = '"' + hashlib.sha256(repr((key, now)).encode()).hexdigest()[:32] + '"'
        if request.headers.get("if-none-match") == tag:
            return Response(status_code=304, headers={"etag": tag})
        return Response(settings.cache.get(key, now, produce), media_type=media,
                        headers={"etag": tag, "cache-control": "no-cache"})

    answer.__name__ = f"{view.name}_{'page' if page else 'api'}"
    answer.__doc__ = view.summary
    return answer


def _asset(request: Request) -> Response:
    from evaltool.report.html import asset

    name = request.path_params["name"]
    if name not in STATIC:
        raise RequestError(f"no static file {name!r}", status=404)
    text = asset(name)
    tag = f'"{hashlib.sha256(text.encode()).hexdigest()[:32]}"'
    if request.headers.get("if-none-match") == tag:
        return Response(status_code=304, headers={"etag": tag})
    return Response(text, media_type=STATIC[name], headers={"etag": tag, "cache-control": "public, max-age=3600"})


async def _body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestError(f"request body of {declared} bytes; the limit is {limit}", status=413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestError(f"request body over the limit of {limit} bytes", status=413)
        chunks.append(chunk)
    return b"".join(chunks)



async def _record(request: Request) -> Response:
    """Record a result JSON (``evaltool ... -q -o json``) sent by a remote job: bearer token required."""
    from starlette.concurrency import run_in_threadpool

    from evaltool.history import record
    from evaltool.server.params import NAME, TAG, Param

    settings: Settings = request.app.state.settings
    if not settings.token:
        raise RequestError("recording over HTTP is off: start 'evaltool serve' with --token (or EVALTOOL_TOKEN)",
                           status=403)
    given = request.headers.get("authorization", "")
    scheme, _, credential = given.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(credential.strip().encode(), settings.token.encode()):
        return JSONResponse({"error": "a valid 'Authorization: Bearer TOKEN' header is required"}, status_code=401,
                            headers={"www-authenticate": "Bearer"})
    args = parse(request.query_params, (NAME, TAG, Param("note", "string", "a note"),
                                        Param("at", "date", "when (ISO-8601; default now)")))
    body = await _body(request, settings.max_body)
    try:
        result = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RequestError(f"the body is not JSON ({exc}); send the output of 'evaltool ... -q -o json'") from None
    if not isinstance(result, dict) or not isinstance(result.get("summary"), dict):
        raise RequestError("the body must be an evaltool result JSON object with a \"summary\" "
                           "(the output of 'evaltool QRELS RUN -q -o json')")
    tags = dict(tag.split("=", 1) for tag in args["tag"])
    execution_id = await run_in_threadpool(record, result, settings.history, name=args["name"], note=args["note"],
                                           tags=tags or None, at=args["at"], fingerprints={}, commit=None)
    return _json({"id": execution_id, "url": f"/api/executions/{execution_id}"}, 201)


def _openapi(request: Request) -> Response:
    from evaltool.server.openapi import describe

    return _json(describe(VIEWS))


async def _evaltool_error(request: Request, exc: EvaltoolError) -> Response:
    return _error(request, getattr(exc, "status", 400), str(exc))


async def _http_error(request: Request, exc: HTTPException) -> Response:
    message = {404: f"nothing at {request.url.path}", 405: f"{request.method} is not allowed here"}.get(
        exc.status_code, str(exc.detail))
    return _error(request, exc.status_code, message)


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("unexpected error answering %s %s", request.method, request.url.path)
    return _error(request, 500, "internal error (the server's log has the details)")


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every response (pages, API, assets, errors)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def sending(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.decode().lower() not in SECURITY_HEADERS]
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)


def create_app(history, *, token: str | None = None, max_body: int = MAX_BODY,
               cache_size: int = CACHE_SIZE, backends: dict | None = None, worker=None) -> Starlette:
    """The dashboard over an open history (:func:`evaltool.history.open_history`);
    ``cache_size`` answers are kept (:class:`ResponseCache`; 0: none). ``backends``: the search
    systems the operator declared (:func:`evaltool.server.backends.parse_backends`), the only ones
    suites may run here; ``worker``: the started :class:`~evaltool.server.worker.JobWorker`."""
    from evaltool.server import workbench
    from starlette.middleware import Middleware

    routes = []
    for view in VIEWS:
        routes.append(Route(view.api, _endpoint(view, page=False), methods=["GET"]))
        if view.page:
            routes.append(Route(view.page, _endpoint(view, page=True), methods=["GET"]))
    routes += workbench.routes()
    routes += [Route("/api/executions", _record, methods=["POST"]),
               Route("/api/openapi.json", _openapi, methods=["GET"]),
               Route("/static/{name}", _asset, methods=["GET"])]
    app = Starlette(routes=routes, middleware=[Middleware(SecurityHeaders)],
                    exception_handlers={EvaltoolError: _evaltool_error, HTTPException: _http_error,
                                        Exception: _unexpected})
    app.state.settings = Settings(history, token or None, max_body, ResponseCache(cache_size) if cache_size else None,
                                  dict(backends or {}), worker)
    return app
