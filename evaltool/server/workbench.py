"""The workbench's writes over HTTP: suites created and edited, queries uploaded, runs queued and cancelled.

Every address here changes the history, so every one needs a writer (:func:`writer`: a
bearer token for API clients; in a browser the session cookie and its CSRF token), and each
write is audited with the writer's name in the same transaction. A request names suites,
queries and declared backends, never code or hosts: a suite made here picks its backend
among those the operator declared (``evaltool serve --backend NAME=SPEC``).

A body is JSON (``application/json``) or a form (``application/x-www-form-urlencoded``);
a form's answer is a redirect (303) to the page that shows the result, JSON's the object
written. Errors: 400 bad input, 401 no or a wrong credential, 403 a credential that may
not write (or a missing CSRF token), 404 no such suite / query / job, 409 a state that
does not allow it (a name taken, a job already queued, a job that has ended), 413 a body
over the limit.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from evaltool.errors import EvaltoolError, NotFoundError
from evaltool.server.params import RequestError, json_object

MAX_UPLOAD = 2 * 1024 * 1024  # bytes of a queries file uploaded (some 10,000 queries)
FORM = "application/x-www-form-urlencoded"


def _json(data, status: int = 200) -> Response:
    from evaltool.report.json import dump_json

    return Response(dump_json(data, indent=None).encode(), status_code=status, media_type="application/json")


def _fields(body: bytes, content_type: str) -> tuple[dict, bool]:
    """(the body's fields, whether it came from a form)."""
    kind = content_type.split(";")[0].strip().lower()
    if kind == FORM:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise RequestError("the form is not UTF-8") from None
        return {k: v[-1] for k, v in parse_qs(text, keep_blank_values=True).items()}, True
    if not body.strip():
        return {}, False
    return json_object(body), False


async def _writer(request: Request):
    """(who writes, the body's fields, whether it is a form): 401 without a valid credential, 403 for a
    server that takes no writes, a token that may not, or a browser's write without its CSRF token."""
    from evaltool.server.auth import require

    who = await require(request, "operator")
    fields, form = _fields(await request.body(), request.headers.get("content-type", ""))
    return who, fields, form


def _audit(who, action: str, kind: str, subject, detail=None):
    """A function of an open write transaction that records this write in the audit trail."""
    from evaltool.history.audit import log_write

    def record(conn, *_):
        log_write(
            conn,
            actor=who.name,
            role=who.role,
            action=action,
            subject_kind=kind,
            subject=str(subject)[:200],
            detail=detail,
        )

    return record


def _history_error(exc: EvaltoolError):
    status = 404 if isinstance(exc, NotFoundError) else getattr(exc, "status", 400)
    raise RequestError(str(exc), status=status) from None


def _settings(request: Request):
    return request.app.state.settings


def _page(path: str, fields: dict) -> str:
    lang = fields.get("lang")
    return path + (("&" if "?" in path else "?") + "lang=es" if lang == "es" else "")


def _done(data, form: bool, fields: dict, page: str, status: int = 200) -> Response:
    if form:
        return RedirectResponse(_page(page, fields), status_code=303)
    return _json(data, status)


def suite_link(name: str) -> str:
    return f"/suites/{quote(name, safe='')}"


def _text_list(value, what: str) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise RequestError(f"{what}: expected a list of texts or one text of names separated by spaces")


def query_from_fields(fields: dict) -> dict:
    """A queries-file object from a form's or a JSON body's fields: ``id``, ``query``, ``category``,
    ``difficulty`` and the ground truth as ``relevant`` (a text: ``doc doc`` or ``doc:grade doc:grade``,
    separated by spaces, commas or new lines), or as a queries file gives it (``relevant_ids``,
    ``expected_modules``, ``qrels``); other JSON fields are kept as metadata."""
    import re

    obj = {
        k: v
        for k, v in fields.items()
        if k not in ("relevant", "csrf_token", "version", "lang")
        and not (isinstance(v, str) and not v.strip() and k in ("category", "difficulty"))
    }
    for key in ("id", "query", "category", "difficulty"):
        if isinstance(obj.get(key), str):
            obj[key] = obj[key].strip()
    relevant = fields.get("relevant")
    if isinstance(relevant, str) and relevant.strip():
        parts = [p for p in re.split(r"[\s,;]+", relevant.strip()) if p]
        if any(":" in p for p in parts):
            grades = {}
            for part in parts:
                doc, sep, grade = part.rpartition(":")
                if not sep or not doc or not re.fullmatch(r"-?\d+", grade):
                    raise RequestError(
                        f"relevant {part[:200]!r}: expected doc:grade (an integer grade), or ids without grades"
                    )
                grades[doc] = int(grade)
            obj["qrels"] = grades
        else:
            obj["relevant_ids"] = parts
    return obj


def _version(fields: dict):
    value = fields.get("version")
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise RequestError(f"version {str(value)[:40]!r}: expected the suite version the change was made on") from None


async def create_suite(request: Request) -> Response:
    """``POST /api/suites``: ``name``, ``backend`` (a declared name), ``measures``, ``limit``, optional ``queries``."""
    from evaltool.history.suites import add_suite

    settings = _settings(request)
    who, fields, form = await _writer(request)
    name = fields.get("name")
    if not isinstance(name, str) or not name.strip():
        raise RequestError("name is required: the suite's name")
    backend = fields.get("backend")
    if not isinstance(backend, str) or backend not in settings.backends:
        declared = ", ".join(settings.backends) or "none (start evaltool serve with --backend NAME=SPEC)"
        raise RequestError(
            f"backend {str(backend)[:80]!r}: expected one of the backends this server declares: {declared}"
        )
    measures = _text_list(fields.get("measures"), "measures")
    limit = fields.get("limit", 10)
    try:
        limit = int(limit) if not isinstance(limit, bool) else None
    except (TypeError, ValueError):
        limit = None
    if limit is None or not 1 <= limit <= 1000:
        raise RequestError(f"limit {str(fields.get('limit'))[:40]!r}: expected a whole number from 1 to 1000")
    queries = fields.get("queries") or []
    if not isinstance(queries, list):
        raise RequestError("queries: expected a list of query objects (as in a queries file)")
    try:
        suite = add_suite(
            settings.history,
            name,
            backend=backend,
            measures=measures,
            settings={"limit": limit},
            queries=queries,
            author=who.name,
            audit=_audit(who, "create", "suite", name.strip(), {"backend": backend, "queries": len(queries)}),
        )
    except EvaltoolError as exc:
        _history_error(exc)
    return _done(suite.to_dict(), form, fields, suite_link(suite.name), 201)


async def _edit(request: Request, change) -> Response:
    """A change of a suite: ``change(history, name, fields, who)`` returns the suite."""
    settings = _settings(request)
    who, fields, form = await _writer(request)
    name = request.path_params["name"]
    try:
        suite = change(settings.history, name, fields, who)
    except EvaltoolError as exc:
        _history_error(exc)
    return _done(suite.to_dict(), form, fields, suite_link(suite.name))


async def add_query(request: Request) -> Response:
    """``POST /api/suites/{name}/queries``: add a query (a new version)."""
    from evaltool.history.suites import put_query

    def change(history, name, fields, who):
        query = query_from_fields(fields)
        return put_query(
            history,
            name,
            query,
            author=who.name,
            expected_version=_version(fields),
            audit=_audit(who, "edit", "suite", name, {"added": str(query.get("id"))[:100]}),
        )

    return await _edit(request, change)


async def edit_query(request: Request) -> Response:
    """``POST /api/suites/{name}/queries/{query_id}``: replace a query (its id may change)."""
    from evaltool.history.suites import put_query

    def change(history, name, fields, who):
        qid = request.path_params["query_id"]
        return put_query(
            history,
            name,
            query_from_fields(fields),
            author=who.name,
            replace_id=qid,
            expected_version=_version(fields),
            audit=_audit(who, "edit", "suite", name, {"edited": qid[:100]}),
        )

    return await _edit(request, change)


async def remove_query(request: Request) -> Response:
    """``POST /api/suites/{name}/queries/{query_id}/delete``: remove a query."""
    from evaltool.history.suites import remove_query as remove

    def change(history, name, fields, who):
        qid = request.path_params["query_id"]
        return remove(
            history,
            name,
            qid,
            author=who.name,
            expected_version=_version(fields),
            audit=_audit(who, "edit", "suite", name, {"removed": qid[:100]}),
        )

    return await _edit(request, change)


async def set_active(request: Request) -> Response:
    """``POST /api/suites/{name}/active``: ``active`` true or false."""
    from evaltool.history.suites import set_active as activate

    def change(history, name, fields, who):
        active = fields.get("active")
        if isinstance(active, str) and active.lower() in ("true", "false", "1", "0"):
            active = active.lower() in ("true", "1")
        if not isinstance(active, bool):
            raise RequestError("active: expected true or false")
        return activate(history, name, active, audit=_audit(who, "activate" if active else "deactivate", "suite", name))

    return await _edit(request, change)


async def upload_queries(request: Request) -> Response:
    """``POST /api/suites/{name}/upload?filename=F``: the body is a queries file (JSON, JSONL or CSV by
    the file name's ending), at most :data:`MAX_UPLOAD` bytes; it replaces the suite's queries."""
    from evaltool.history.suites import parse_queries_file, save_queries
    from evaltool.server.auth import require

    settings = _settings(request)
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_UPLOAD:
        raise RequestError(f"an upload of {declared} bytes; a queries file may have at most {MAX_UPLOAD}", status=413)
    who = await require(request, "operator")
    data = await request.body()
    if len(data) > MAX_UPLOAD:
        raise RequestError(f"an upload of {len(data)} bytes; a queries file may have at most {MAX_UPLOAD}", status=413)
    name = request.path_params["name"]
    filename = request.query_params.get("filename", "upload.json").strip() or "upload.json"
    filename = filename.replace("\\", "/").rsplit("/", 1)[-1][:200]
    try:
        queries = parse_queries_file(filename, data)
        suite = save_queries(
            settings.history,
            name,
            queries,
            author=who.name,
            change={"what": "uploaded", "file": filename, "queries": len(queries)},
            audit=_audit(who, "upload", "suite", name, {"file": filename}),
        )
    except EvaltoolError as exc:
        _history_error(exc)
    return _json(suite.to_dict())


def _queue(settings, name: str, who):
    from evaltool.history.jobs import JobConflict, enqueue
    from evaltool.history.suites import get_suite
    from evaltool.server.backends import resolve

    suite = get_suite(settings.history, name)
    if resolve(settings.backends, suite.backend) is None:
        raise JobConflict(
            f"suite {suite.name}'s backend {suite.backend!r} is not one this server declares "
            "(evaltool serve --backend NAME=SPEC), so it cannot run here"
        )
    if settings.worker is None:
        raise JobConflict("this server runs no jobs (started without a worker)")
    job = enqueue(
        settings.history,
        name,
        author=who.name,
        audit=lambda conn, job_id: _audit(who, "run", "suite", name, {"job": job_id})(conn),
    )
    settings.worker.wake()
    return job


async def run_suite(request: Request) -> Response:
    """``POST /api/suites/{name}/run``: queue a run (202 with the job)."""
    settings = _settings(request)
    who, fields, form = await _writer(request)
    try:
        job = _queue(settings, request.path_params["name"], who)
    except EvaltoolError as exc:
        _history_error(exc)
    return _done(job.to_dict(), form, fields, f"/jobs/{job.id}", 202)


async def run_all(request: Request) -> Response:
    """``POST /api/run-all``: queue a run of every active suite that has none queued or running;
    ``{"jobs": [...], "skipped": [{"suite", "reason"}]}``."""
    from evaltool.history.suites import list_suites

    settings = _settings(request)
    who, fields, form = await _writer(request)
    jobs, skipped = [], []
    for suite in list_suites(settings.history, active_only=True):
        try:
            jobs.append(_queue(settings, suite.name, who).to_dict())
        except EvaltoolError as exc:
            skipped.append({"suite": suite.name, "reason": str(exc)})
    return _done({"jobs": jobs, "skipped": skipped}, form, fields, "/jobs", 202)


async def cancel_job(request: Request) -> Response:
    """``POST /api/jobs/{id}/cancel``."""
    from evaltool.history.jobs import cancel

    settings = _settings(request)
    who, fields, form = await _writer(request)
    try:
        job = cancel(settings.history, _job_id(request), audit=lambda conn, i: _audit(who, "cancel", "job", i)(conn))
    except EvaltoolError as exc:
        _history_error(exc)
    return _done(job.to_dict(), form, fields, f"/jobs/{job.id}")


async def resume_job(request: Request) -> Response:
    """``POST /api/jobs/{id}/resume``: queue an interrupted job again (it continues from its checkpoint)."""
    from evaltool.history.jobs import resume

    settings = _settings(request)
    who, fields, form = await _writer(request)
    try:
        job = resume(settings.history, _job_id(request), audit=lambda conn, i: _audit(who, "resume", "job", i)(conn))
    except EvaltoolError as exc:
        _history_error(exc)
    if settings.worker is not None:
        settings.worker.wake()
    return _done(job.to_dict(), form, fields, f"/jobs/{job.id}", 202)


def _job_id(request: Request) -> int:
    text = request.path_params["id"]
    if not text.isdigit() or int(text) < 1:
        raise RequestError(f"job id {text[:40]!r}: expected a whole number from 1 up")
    return int(text)


# ---------------------------------------------------------------- pages (GET): the views' dicts drawn in the frame


def _drawn(request: Request, view_name: str, draw, title_key: str, **title: Any) -> Response:
    """Parse the view's parameters, compute its dict, draw it with ``draw(data, frame)`` in the dashboard's frame."""
    from starlette.responses import HTMLResponse

    from evaltool.report.i18n import t
    from evaltool.server import pages
    from evaltool.server.params import parse
    from evaltool.server.views import VIEWS

    view = next(v for v in VIEWS if v.name == view_name)
    args = parse(request.query_params, view.params, path=request.path_params)
    data = view.compute(_settings(request).history, args)
    frame = pages.Frame.of(request)
    heading = t(title_key, frame.lang, **{k: (v(data) if callable(v) else v) for k, v in title.items()})
    return HTMLResponse(pages.page(frame, heading, draw(data, frame), current="suites"))


def suites_page(request: Request) -> Response:
    from evaltool.server.workbench_pages import suites_page as draw

    backends = list(_settings(request).backends)
    return _drawn(request, "suites", lambda data, frame: draw(data, frame, backends), "suites.title")


def suite_page(request: Request) -> Response:
    from evaltool.server.backends import resolve
    from evaltool.server.workbench_pages import suite_page as draw

    settings = _settings(request)

    def drawn(data, frame):
        here = resolve(settings.backends, data["suite"]["backend"]) is not None and settings.worker is not None
        return draw(data, frame, here)

    return _drawn(request, "suite", drawn, "wb.suite_title")


def jobs_page(request: Request) -> Response:
    from evaltool.server.workbench_pages import jobs_page as draw

    return _drawn(request, "jobs", draw, "wb.jobs")


def job_page(request: Request) -> Response:
    from evaltool.server.workbench_pages import job_page as draw

    return _drawn(request, "job", draw, "wb.job_title", id=lambda data: data["id"])


def compare_results_page(request: Request) -> Response:
    from evaltool.server.workbench_pages import compare_results_page as draw

    return _drawn(request, "compare_results", draw, "wb.compare_title")


def routes() -> list:
    from starlette.routing import Route

    post, get = ["POST"], ["GET"]
    return [
        Route("/suites", suites_page, methods=get),
        Route("/suites/{name}", suite_page, methods=get),
        Route("/jobs", jobs_page, methods=get),
        Route("/jobs/{id}", job_page, methods=get),
        Route("/compare-results", compare_results_page, methods=get),
        Route("/api/suites", create_suite, methods=post),
        Route("/api/suites/{name}/queries", add_query, methods=post),
        Route("/api/suites/{name}/queries/{query_id}", edit_query, methods=post),
        Route("/api/suites/{name}/queries/{query_id}/delete", remove_query, methods=post),
        Route("/api/suites/{name}/active", set_active, methods=post),
        Route("/api/suites/{name}/upload", upload_queries, methods=post),
        Route("/api/suites/{name}/run", run_suite, methods=post),
        Route("/api/run-all", run_all, methods=post),
        Route("/api/jobs/{id}/cancel", cancel_job, methods=post),
        Route("/api/jobs/{id}/resume", resume_job, methods=post),
    ]
