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
from dataclasses import dataclass

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
STATIC = {"plotly.min.js": "text/javascript", "evaltool.js": "text/javascript", "evaltool.css": "text/css"}
POLICY = content_security_policy("'self'", "'self' 'unsafe-inline'", header=True)
SECURITY_HEADERS = {"content-security-policy": POLICY, "x-content-type-options": "nosniff",
                    "referrer-policy": "no-referrer", "x-frame-options": "DENY"}
log = logging.getLogger("evaltool.server")


@dataclass
class Settings:
    history: object  # an open evaltool.history.History
    token: str | None = None
    max_body: int = MAX_BODY


def _json(data, status: int = 200) -> Response:
    from evaltool.report.json import _finite

    body = json.dumps(_finite(data), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return Response(body, status_code=status, media_type="application/json")


def _error(request: Request, status: int, message: str) -> Response:
    if request.url.path.startswith("/api/"):
        return _json({"error": message}, status)
    return HTMLResponse(pages.error_page(status, message), status_code=status)


def _endpoint(view, page: bool):
    """One view at one address: parse the parameters, call the view, answer JSON or HTML."""

    def answer(request: Request) -> Response:
        args = parse(request.query_params, view.params, path=request.path_params)
        data = view.compute(request.app.state.settings.history, args)
        if page:
            return HTMLResponse(pages.render(view, data, args))
        return _json(data)

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


def create_app(history, *, token: str | None = None, max_body: int = MAX_BODY) -> Starlette:
    """The dashboard over an open history (:func:`evaltool.history.open_history`)."""
    from starlette.middleware import Middleware

    routes = []
    for view in VIEWS:
        routes.append(Route(view.api, _endpoint(view, page=False), methods=["GET"]))
        if view.page:
            routes.append(Route(view.page, _endpoint(view, page=True), methods=["GET"]))
    routes += [Route("/api/executions", _record, methods=["POST"]),
               Route("/api/openapi.json", _openapi, methods=["GET"]),
               Route("/static/{name}", _asset, methods=["GET"])]
    app = Starlette(routes=routes, middleware=[Middleware(SecurityHeaders)],
                    exception_handlers={EvaltoolError: _evaltool_error, HTTPException: _http_error,
                                        Exception: _unexpected})
    app.state.settings = Settings(history, token or None, max_body)
    return app
