"""The ASGI app: every view at its JSON address and its page, the static assets, logging in, recording over HTTP.

Security, in one place:

* every response, errors and 500s included, carries a Content-Security-Policy that runs
  only this server's own scripts (no inline script at all: data travels as JSON in
  attributes), forbids framing and any other origin, plus ``nosniff`` and ``no-referrer``;
* a request naming a ``Host`` other than an IP address, ``localhost`` or one of the
  configured host names is refused (400) before anything else: a page served from
  another name that DNS rebinding points at this machine cannot read the dashboard;
* request bodies are limited to ``max_body`` bytes (413 beyond, counted as they arrive
  whatever Content-Length says);
* writing needs a token (:mod:`evaltool.server.auth`: bearer header or a session cookie
  with its CSRF token); without any token configured the dashboard is read-only, and
  with tokens reading needs one too unless ``public_read``;
* static files are a fixed list of names read from the installed packages (plotly.js
  from plotly, the page script and style from evaltool): no path is ever joined, so
  there is nothing to traverse;
* bad parameters are 400 and unknown ids or addresses 404, with a JSON body
  ``{"error": message}`` (an HTML page for the pages) that never names a server path;
  anything unexpected is a 500 whose body says so without a traceback.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from evaltool.errors import EvaltoolError
from evaltool.report.i18n import LANGUAGES, t
from evaltool.report.html import content_security_policy
from evaltool.server import auth, pages
from evaltool.server.params import RequestError, parse
from evaltool.server.views import VIEWS

MAX_BODY = 32 * 1024 * 1024  # a recorded result with every per-query value of a large run fits well within
MAX_NESTING = 64  # levels of JSON nesting a recorded result may have (it needs 3)
CACHE_SIZE = 64  # answers kept (a year's report of 10 nightly suites is about 0.7 MB)
STATIC = {"plotly.min.js": "text/javascript", "evaltool.js": "text/javascript", "evaltool.css": "text/css"}
OPEN_PATHS = ("/login", "/static/")  # reachable without a token even when reading needs one
# scripts: this server's own files only; styles may be inline because plotly.js sets style attributes as it draws
POLICY = content_security_policy("'self'", "'self' 'unsafe-inline'", header=True)
SECURITY_HEADERS = {
    "content-security-policy": POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
LOOPBACK_NAMES = ("localhost",)
log = logging.getLogger("evaltool.server")


def _json_bytes(data) -> bytes:
    from evaltool.report.json import dump_json

    return dump_json(data, indent=None).encode()  # the one JSON writer: the CLI's -o json, on one line


def _json(data, status: int = 200, headers: dict | None = None) -> Response:
    return Response(_json_bytes(data), status_code=status, media_type="application/json", headers=headers)


def request_lang(request: Request) -> str:
    """The page language a request asks for (``lang=es``), English when it asks for none it knows."""
    lang = request.query_params.get("lang", "en")
    return lang if lang in LANGUAGES else "en"


def _scrubbed(request: Request, message: str) -> str:
    """``message`` without the server's own paths (the history's file and its folder)."""
    settings = getattr(request.app.state, "settings", None)
    where = getattr(getattr(settings, "history", None), "where", None)
    if where:
        message = message.replace(where, "the history")
        folder = os.path.dirname(where)
        if folder and folder != os.sep:
            message = message.replace(folder, "...")
    return message


def _error(request: Request, status: int, message: str, headers: dict | None = None) -> Response:
    message = _scrubbed(request, message)
    if request.url.path.startswith("/api/") or request.url.path.endswith(".csv"):
        return _json({"error": message}, status, headers)
    return HTMLResponse(pages.error_page(status, message, pages.Frame.of(request)), status_code=status, headers=headers)


class ResponseCache:
    """Answers kept until the history changes: a report of a year of nightly executions takes the
    history about a second to compute, and every viewer of the dashboard asks for the same few.

    An entry is valid while :func:`evaltool.history.queries.state` (the history's counter of
    write transactions) is what it was when the entry was made: every record, prune or suite
    change moves it, and it never returns to an earlier value (a count and a highest id did,
    when a prune and a record balanced). The state is read before the answer is computed,
    so an answer is never older than the state it is filed under. One lock per
    address and parameters: concurrent askers wait for one computation instead of each doing it.
    """

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict = OrderedDict()
        self._guard = threading.Lock()
        self._locks: dict = {}

    def get(self, key, state, produce):
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
    access: auth.Access = field(default_factory=auth.Access)
    max_body: int = MAX_BODY
    cache: ResponseCache | None = None
    hosts: frozenset = frozenset()  # host names served besides IP addresses and localhost
    backends: dict = field(default_factory=dict)  # name -> evaltool.server.backends.DeclaredBackend
    worker: object = None  # the evaltool.server.worker.JobWorker that runs queued suites (None: no runs)
    corpus: dict = field(default_factory=dict)  # document id -> (title, text) shown to raters (serve --corpus)


def _key(view, page: bool, args: dict) -> tuple:
    return view.name, page, tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in args.items()))


def _endpoint(view, page: bool):
    """One view at one address: parse the parameters, call the view, answer JSON or HTML (the view's
    answer from the cache while the history has not changed, with an ETag for conditional requests;
    a page is drawn per request, since its frame shows who is signed in)."""
    media = "text/html; charset=utf-8" if page else "application/json"

    def answer(request: Request) -> Response:
        from evaltool.history.queries import state

        settings: Settings = request.app.state.settings
        args = parse(request.query_params, view.params, path=request.path_params)
        frame = pages.Frame.of(request) if page else None

        def produce():
            data = view.compute(settings.history, args)
            return data if page else _json_bytes(data)

        def body(produced) -> bytes:
            return pages.render(view, produced, args, frame).encode() if page else produced

        if not (view.cached and settings.cache):
            return Response(body(produce()), media_type=media)
        key, now = _key(view, page, args), state(settings.history)
        tag = '"' + hashlib.sha256(repr((key, now, frame and frame.identity_key())).encode()).hexdigest()[:32] + '"'
        if request.headers.get("if-none-match") == tag:
            return Response(status_code=304, headers={"etag": tag})
        return Response(
            body(settings.cache.get(key, now, produce)),
            media_type=media,
            headers={"etag": tag, "cache-control": "no-cache"},
        )

    answer.__name__ = f"{view.name}_{'page' if page else 'api'}"
    answer.__doc__ = view.summary
    return answer


def _report_csv(request: Request) -> Response:
    """The comparative report as CSV: the bytes of ``evaltool history report --labels -o csv`` (with
    ``--lang``) for the same filters."""
    from evaltool.history import report
    from evaltool.report.history import comparative_report
    from evaltool.report.table import render

    report_view = next(v for v in VIEWS if v.name == "report")
    args = parse(request.query_params, report_view.params)
    out = report(
        request.app.state.settings.history,
        args["date_from"],
        args["date_to"],
        name=args["name"],
        tags=args["tag"] or None,
        measures=args["measure"] or None,
        labels=args["labels"],
        lang=args["lang"],
    )
    return Response(
        render(comparative_report(out, args["lang"]), "csv").encode(),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": 'attachment; filename="report.csv"'},
    )


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


async def _body(request: Request) -> bytes:
    chunks = []
    async for chunk in request.stream():  # counted against the limit by Guard as it arrives
        chunks.append(chunk)
    return b"".join(chunks)


def _depth(value, limit: int) -> int:
    """How deeply ``value`` nests (lists and dicts), counted without recursion up to ``limit`` + 1."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _number_or_null(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def check_result_json(result) -> None:
    """RequestError (400) unless ``result`` has the shape of ``evaltool ... -o json``: an object with
    ``summary`` {measure: number or null}, optional ``per_query`` {query: {measure: number or null}}
    and optional ``meta`` (an object), nested at most :data:`MAX_NESTING` levels."""
    expected = "(the output of 'evaltool QRELS RUN -q -o json')"
    if not isinstance(result, dict) or not isinstance(result.get("summary"), dict):
        raise RequestError(f'the body must be an evaltool result JSON object with a "summary" {expected}')
    if _depth(result, MAX_NESTING) > MAX_NESTING:
        raise RequestError(f"the body nests deeper than {MAX_NESTING} levels; a result has 3 {expected}")
    bad = next((m for m, v in result["summary"].items() if not _number_or_null(v)), None)
    if bad is not None:
        raise RequestError(f"summary[{bad[:200]!r}]: expected a number or null {expected}")
    per_query = result.get("per_query")
    if per_query is not None:
        if not isinstance(per_query, dict):
            raise RequestError(f"per_query: expected an object of queries, found {type(per_query).__name__} {expected}")
        for qid, values in per_query.items():
            if not isinstance(values, dict) or not all(_number_or_null(v) for v in values.values()):
                raise RequestError(
                    f"per_query[{qid[:200]!r}]: expected an object of measures to numbers or null {expected}"
                )
    meta = result.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise RequestError(f"meta: expected an object, found {type(meta).__name__} {expected}")
    counts = (meta or {}).get("counts")
    if counts is not None and not (isinstance(counts, dict) and _number_or_null(counts.get("queries_evaluated"))):
        raise RequestError(f"meta.counts: expected an object with a number as queries_evaluated {expected}")
    options = (meta or {}).get("options")
    if options is not None and not isinstance(options, dict):
        raise RequestError(f"meta.options: expected an object {expected}")


async def _record(request: Request) -> Response:
    """Record a result JSON (``evaltool ... -q -o json``) sent by a remote job: an operator's token required."""
    from starlette.concurrency import run_in_threadpool

    from evaltool.history import record
    from evaltool.server.params import NAME, TAG, Param

    who = await auth.require(request, "operator")
    args = parse(
        request.query_params,
        (NAME, TAG, Param("note", "string", "a note"), Param("at", "date", "when (ISO-8601; default now)")),
    )
    if args["at"] is not None:  # refused under the API's own parameter name, before the body is read
        from evaltool.history.dates import recording_date

        recording_date(args["at"], "at")
    body = await _body(request)
    try:
        result = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RequestError(f"the body is not JSON ({exc}); send the output of 'evaltool ... -q -o json'") from None
    except RecursionError:
        raise RequestError(f"the body nests deeper than {MAX_NESTING} levels; a result has 3") from None
    check_result_json(result)
    tags = dict(tag.split("=", 1) for tag in args["tag"])
    audit = {"actor": who.name, "role": who.role, "detail": {"name": args["name"]} if args["name"] else None}
    execution_id = await run_in_threadpool(
        record,
        result,
        settings_of(request).history,
        name=args["name"],
        note=args["note"],
        tags=tags or None,
        at=args["at"],
        fingerprints={},
        commit=None,
        audit=audit,
    )
    return _json({"id": execution_id, "url": f"/api/executions/{execution_id}"}, 201)


def settings_of(request: Request) -> Settings:
    return request.app.state.settings


def _login_page(
    request: Request, status: int = 200, message: str | None = None, next_path: str | None = None
) -> Response:
    import secrets

    nonce = request.cookies.get(auth.LOGIN_COOKIE) or secrets.token_urlsafe(24)
    frame = pages.Frame.of(request)
    target = auth.safe_next(next_path if next_path is not None else request.query_params.get("next"))
    response = HTMLResponse(pages.login_page(frame, nonce, target, message), status_code=status)
    response.set_cookie(
        auth.LOGIN_COOKIE,
        nonce,
        max_age=3600,
        path="/login",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


async def _login(request: Request) -> Response:
    """GET: the form; POST: a token in, a session cookie out (and back to where the user was)."""
    import hmac

    settings = settings_of(request)
    if request.method == "GET":
        return _login_page(request)
    if not settings.access.writable:
        raise RequestError(t("login.read_only"), status=403)
    if auth.cross_site(request):
        raise RequestError("a request from another site is refused", status=403)
    form = await auth.form_of(request)
    nonce, given = request.cookies.get(auth.LOGIN_COOKIE, ""), form.get(auth.CSRF_FIELD, "")
    if not nonce or not hmac.compare_digest(nonce.encode(), given.encode("utf-8", "surrogatepass")):
        raise RequestError(
            "the form's security token (CSRF) is missing or stale: reload the page and try again", status=403
        )
    token = settings.access.find(form.get("token"))
    if token is None:
        return _login_page(request, 401, t("login.wrong", request_lang(request)), form.get("next"))
    key, _ = settings.access.open_session(token)
    target, lang = auth.safe_next(form.get("next")), request_lang(request)
    if lang != "en" and "lang=" not in target:  # the user logged in in a language: stay in it
        target += ("&" if "?" in target else "?") + f"lang={lang}"
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        auth.SESSION_COOKIE,
        key,
        max_age=auth.SESSION_SECONDS,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    response.delete_cookie(auth.LOGIN_COOKIE, path="/login")
    return response


async def _logout(request: Request) -> Response:
    """End the session (a POST with its CSRF token) and go back to the report."""
    await auth.require(request, "rater")
    settings_of(request).access.close_session(request.cookies.get(auth.SESSION_COOKIE))
    lang = request_lang(request)
    response = RedirectResponse("/" + ("?lang=" + lang if lang != "en" else ""), status_code=303)
    response.delete_cookie(auth.SESSION_COOKIE, path="/")
    return response


def _openapi(request: Request) -> Response:
    from evaltool.server.openapi import describe

    return _json(describe(VIEWS))


async def _evaltool_error(request: Request, exc: EvaltoolError) -> Response:
    status = getattr(exc, "status", 400)
    headers = {"www-authenticate": "Bearer"} if status == 401 else None
    if status == 401 and request.method in auth.SAFE_METHODS and not request.url.path.startswith("/api/"):
        return _to_login(request)
    message = exc.localized(request_lang(request)) if isinstance(exc, RequestError) else str(exc)
    return _error(request, status, message, headers)


async def _http_error(request: Request, exc: HTTPException) -> Response:
    lang = request_lang(request)
    message = {
        404: t("error.nothing_at", lang, path=request.url.path),
        405: f"{request.method} is not allowed here",
    }.get(exc.status_code, str(exc.detail))
    return _error(request, exc.status_code, message)


def _to_login(request: Request) -> Response:
    from urllib.parse import urlencode

    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    query = {"next": target, **({"lang": request_lang(request)} if request_lang(request) != "en" else {})}
    return RedirectResponse(f"/login?{urlencode(query)}", status_code=303)


def host_allowed(host_header: str | None, names: frozenset) -> bool:
    """Whether a request's ``Host`` is one this server answers for: an IP address (no DNS name, so
    nothing to rebind), ``localhost``, or one of ``names`` (the configured host names); any port.

    >>> [host_allowed(h, frozenset({"dash.example.org"})) for h in
    ...  ("127.0.0.1:8000", "[::1]:80", "localhost", "dash.example.org", "evil.example", None)]
    [True, True, True, True, False, False]
    """
    if not host_header:
        return False
    host = host_header.strip().lower()
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    host = host.rstrip(".")
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return host in LOOPBACK_NAMES or host in names


class Guard:
    """Before any route: the ``Host`` check, the body limit, reading behind a token when asked;
    after: any unexpected exception turned into a 500 answer here (inside :class:`SecurityHeaders`,
    so it carries the same headers as every other answer)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        settings: Settings = scope["app"].state.settings
        started = False

        async def sending(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        async def answer(response: Response):
            await response(scope, receive, sending)

        try:
            if not host_allowed(request.headers.get("host"), settings.hosts):
                shown = (request.headers.get("host") or "")[:100]
                return await answer(
                    _error(
                        request,
                        400,
                        f"this server does not answer for the host {shown!r}; "
                        "use its address or a name given to --allowed-host",
                    )
                )
            declared = request.headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > settings.max_body:
                return await answer(
                    _error(request, 413, f"request body of {declared} bytes; the limit is {settings.max_body}")
                )
            if (
                not settings.access.public_read
                and request.method in auth.SAFE_METHODS
                and not any(request.url.path.startswith(p) for p in OPEN_PATHS)
                and auth.identity(request) is None
            ):
                if request.url.path.startswith("/api/"):
                    return await answer(
                        _error(
                            request,
                            401,
                            "reading needs a token here: send the header "
                            "'Authorization: Bearer TOKEN' (or log in at /login)",
                            {"www-authenticate": "Bearer"},
                        )
                    )
                return await answer(_to_login(request))
            await self.app(scope, _limited(receive, settings.max_body), sending)
        except Exception:
            log.exception("unexpected error answering %s %s", request.method, request.url.path)
            if not started:
                await answer(_error(request, 500, t("error.internal", request_lang(request))))


def _limited(receive, limit: int):
    size = 0

    async def receiving():
        nonlocal size
        message = await receive()
        if message["type"] == "http.request":
            size += len(message.get("body", b""))
            if size > limit:
                raise RequestError(f"request body over the limit of {limit} bytes", status=413)
        return message

    return receiving


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


def create_app(
    history,
    *,
    access: auth.Access | None = None,
    token: str | None = None,
    public_read: bool = False,
    hosts=(),
    max_body: int = MAX_BODY,
    cache_size: int = CACHE_SIZE,
    backends: dict | None = None,
    worker=None,
    corpus: dict | None = None,
    models: dict | None = None,
    models_dir: str | None = None,
) -> Starlette:
    """The dashboard over an open history (:func:`evaltool.history.open_history`).

    ``access``: the tokens and whether reading is public (:class:`evaltool.server.auth.Access`);
    ``token`` is a shortcut for one operator token named ``default`` (with ``public_read``).
    ``hosts``: host names served besides IP addresses and ``localhost`` (the name users type,
    behind a proxy or on a network). ``cache_size`` answers are kept (:class:`ResponseCache`; 0: none).
    ``backends``: the search systems the operator declared (:func:`evaltool.server.backends.parse_backends`),
    the only ones suites may run here; ``worker``: the started :class:`~evaltool.server.worker.JobWorker`;
    ``corpus``: document id -> (title, text), the texts raters read (:func:`evaltool.judgments.corpus.read_corpus`).
    ``models``: the language models the operator declared (:func:`evaltool.server.model_runs.parse_models`), the
    only ones a task may be judged by here; their checkpoints and cache go to ``models_dir``.
    """
    from evaltool.server import calibration, judging, model_runs, workbench
    from starlette.middleware import Middleware

    if access is None:
        access = auth.Access([auth.Token(auth.DEFAULT_NAME, token)] if token else [], public_read)
    routes = []
    for view in VIEWS:
        routes.append(Route(view.api, _endpoint(view, page=False), methods=["GET"]))
        if view.page:
            routes.append(Route(view.page, _endpoint(view, page=True), methods=["GET"]))
    routes += workbench.routes()
    routes += calibration.routes() + model_runs.routes()  # before /judging/{id}
    routes += judging.routes()
    routes += [
        Route("/api/executions", _record, methods=["POST"]),
        Route("/api/openapi.json", _openapi, methods=["GET"]),
        Route("/report.csv", _report_csv, methods=["GET"]),
        Route("/login", _login, methods=["GET", "POST"]),
        Route("/logout", _logout, methods=["POST"]),
        Route("/static/{name}", _asset, methods=["GET"]),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(SecurityHeaders), Middleware(Guard)],
        exception_handlers={EvaltoolError: _evaltool_error, HTTPException: _http_error},
    )
    names = frozenset(h.strip().lower().rstrip(".") for h in hosts if h and h.strip())
    app.state.settings = Settings(
        history,
        access,
        max_body,
        ResponseCache(cache_size) if cache_size else None,
        names,
        dict(backends or {}),
        worker,
        dict(corpus or {}),
    )
    app.state.model_runs = model_runs.ModelRuns(
        history, dict(models or {}), models_dir or os.path.abspath("evaltool-jobs"), corpus
    )
    return app
