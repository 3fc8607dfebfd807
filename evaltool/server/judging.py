"""Judging in the dashboard: the tasks, a rater's page per task, the agreement of a set, its qrels.

Reading addresses (each page has its JSON twin under ``/api``):

* ``/judging``: the tasks with their progress, the judgment sets;
* ``/judging/{id}``: the signed-in rater's page of a task (``?query=QID`` picks the query; by
  default the one of their first pair not graded yet): the query with its description and
  narrative, each pooled document with its text (from ``evaltool serve --corpus``, else the title
  and snippet the search returned), a button (and a key) per grade, the rater's own grade of each
  and never another's, their progress and the task's;
* ``/judging/sets/{name}``: the set's agreement (Cohen's, Fleiss', Krippendorff's) and the pairs
  the raters graded differently; a rater sees only the pairs they graded themselves;
* ``/judging/sets/{name}/qrels.txt?consensus=majority|median|RATER``: the consensus qrels.

Writing (a token: rater or operator for judging; operator for making tasks; forms carry the
session's CSRF token; each write audited with its author in the same transaction):

* ``POST /api/judging/{id}/judge``: ``query_id``, ``doc_id``, ``grade`` (a grade or label of the
  set's scale), optional ``note``: saved at once as a new version of the set (a form asking for
  ``Accept: application/json``, as the page's script does, gets the JSON answer);
* ``POST /api/executions/{id}/judging``: ``set`` (made, graded 0-3, when new), ``ratings``
  (raters wanted per pair): "judge what nobody judged", a task of the documents the execution
  returned that neither its ground truth nor the set judges.

A form's answer is a redirect (303) to the page that shows the result; JSON's the object.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from evaltool.errors import EvaltoolError, NotFoundError
from evaltool.server.judging_pages import task_link
from evaltool.server.params import RequestError, json_object

FORM = "application/x-www-form-urlencoded"


def _json(data, status: int = 200) -> Response:
    from evaltool.report.json import dump_json

    return Response(dump_json(data, indent=None).encode(), status_code=status, media_type="application/json")


async def _body(request: Request) -> tuple[dict, bool]:
    """(the fields of a form or JSON object body, whether it was a form)."""
    from evaltool.server.auth import form_of

    if request.headers.get("content-type", "").split(";")[0].strip().lower() == FORM:
        return await form_of(request), True
    body = await request.body()
    if not body.strip():
        return {}, False
    return json_object(body), False


def _failed(exc: EvaltoolError):
    status = 404 if isinstance(exc, NotFoundError) else getattr(exc, "status", 400)
    raise RequestError(str(exc), status=status) from None


def _audited(who, action: str, kind: str, subject, detail=None):
    from evaltool.history.audit import log_write

    def record(conn, made=None):
        log_write(
            conn,
            actor=who.name,
            role=who.role,
            action=action,
            subject_kind=kind,
            subject=str(made if subject is None else subject)[:200],
            detail=detail,
        )

    return record


def _number(text: str, what: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise RequestError(f"{what} {text[:40]!r}: expected a whole number from 1 up")
    return int(text)


def _lang(request: Request, fields: dict | None = None) -> str:
    lang = (fields or {}).get("lang") or request.query_params.get("lang", "en")
    return "es" if lang == "es" else "en"


# ---------------------------------------------------------------- the views: one dict per page


def overview(request: Request) -> dict:
    """The tasks (newest first) with their progress, and the judgment sets."""
    from evaltool.judgments.sets import list_sets
    from evaltool.judgments.tasks import list_tasks, progress

    history = request.app.state.settings.history
    tasks = []
    for task in list_tasks(history):
        done = progress(history, task.id)
        tasks.append(
            {
                **task.to_dict(),
                "pairs": done["pairs"],
                "done": done["done"],
                "ratings": done["ratings"],
                "raters": done["raters"],
            }
        )
    runs = request.app.state.model_runs
    for entry in tasks:
        run = runs.state(entry["id"])
        entry["model_run"] = run.to_dict() if run is not None else None
    return {
        "tasks": tasks,
        "sets": [s.to_dict() for s in list_sets(history)],
        "models": [m.public() for m in runs.models.values()],
    }


def rater_page_data(request: Request, who) -> dict:
    """A rater's view of a task (:func:`evaltool.judgments.tasks.rater_view`), the query shown with its
    documents' texts, the task's progress, the next query to go to."""
    from evaltool.judgments.tasks import progress, rater_view

    settings = request.app.state.settings
    task_id = _number(request.path_params["id"], "task id")
    try:
        view = rater_view(settings.history, task_id, who.name)
        overall = progress(settings.history, task_id)
    except EvaltoolError as exc:
        _failed(exc)
    queries = view["queries"]
    wanted = request.query_params.get("query")
    if wanted is not None and wanted not in {q["query_id"] for q in queries}:
        raise RequestError(f"task {task_id} has no query {wanted[:100]!r}", status=404)
    shown = wanted or (view["next"][0] if view["next"] else queries[0]["query_id"])
    index = next(i for i, q in enumerate(queries) if q["query_id"] == shown)
    corpus = getattr(settings, "corpus", None) or {}
    query = queries[index]
    for doc in query["documents"]:
        title, text = corpus.get(doc["doc_id"], (None, None))
        doc["title"] = title or doc["title"]
        doc["text"] = text if text is not None else doc.pop("snippet", None)
        doc.pop("snippet", None)
    later = [q for q in queries[index + 1 :] + queries[:index] if q["mine"] < len(q["documents"])]
    return {
        **view,
        "query": query,
        "next_query": later[0]["query_id"] if later else None,
        "queries": [{k: q[k] for k in ("query_id", "text", "mine")} | {"pairs": len(q["documents"])} for q in queries],
        "progress": {k: overall[k] for k in ("pairs", "done", "ratings", "ratings_wanted")},
    }


def agreement_data(request: Request, who) -> dict:
    """The agreement of a set; a rater's: over the pairs they graded only."""
    from evaltool.judgments.reliability import set_agreement
    from evaltool.judgments.sets import read_judgments

    history = request.app.state.settings.history
    name = request.path_params["name"]
    try:
        pairs = None
        if who is not None and not who.may("operator"):
            pairs = {(j.query_id, j.doc_id) for j in read_judgments(history, name, rater=who.name)}
        figures = set_agreement(history, name, pairs=pairs)
    except EvaltoolError as exc:
        _failed(exc)
    figures["only_mine"] = pairs is not None
    return figures


# ---------------------------------------------------------------- reading: JSON and pages


async def _reader(request: Request):
    """Who reads a rater's page: anyone signed in (a rater or an operator); 401 otherwise."""
    from evaltool.server.auth import require

    return await require(request, "rater")


def _page(request: Request, title: str, body) -> HTMLResponse:
    from evaltool.server import pages

    return HTMLResponse(pages.page(pages.Frame.of(request), title, body, current="judging"))


async def overview_api(request: Request) -> Response:
    return _json(overview(request))


async def overview_page(request: Request) -> Response:
    from evaltool.report.i18n import t
    from evaltool.server import pages
    from evaltool.server.judging_pages import overview_page as draw

    frame = pages.Frame.of(request)
    return _page(request, t("judge.title", frame.lang), draw(overview(request), frame))


async def task_api(request: Request) -> Response:
    return _json(rater_page_data(request, await _reader(request)))


async def task_page(request: Request) -> Response:
    from evaltool.report.i18n import t
    from evaltool.server import pages
    from evaltool.server.judging_pages import task_page as draw

    frame = pages.Frame.of(request)
    if frame.who is None and frame.writable:
        from evaltool.server.links import link

        here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(link("/login", frame.lang, next=here), status_code=303)
    data = rater_page_data(request, await _reader(request))
    return _page(
        request, t("judge.task_title", frame.lang, id=data["task"]["id"], name=data["task"]["name"]), draw(data, frame)
    )


async def agreement_api(request: Request) -> Response:
    from evaltool.server.auth import identity

    return _json(agreement_data(request, identity(request)))


async def agreement_page(request: Request) -> Response:
    from evaltool.report.i18n import t
    from evaltool.server import pages
    from evaltool.server.judging_pages import agreement_page as draw

    frame = pages.Frame.of(request)
    data = agreement_data(request, frame.who)
    return _page(request, t("judge.agreement_title", frame.lang, name=data["set"]), draw(data, frame))


async def qrels_text(request: Request) -> Response:
    """A set's consensus qrels as a file (``consensus``: majority, median or a rater; ``rater``: one's)."""
    from evaltool.judgments.adjudication import consensus
    from evaltool.judgments.exchange import qrels_text as text_of
    from evaltool.judgments.sets import read_judgments
    from evaltool.server.auth import identity

    who = identity(request)
    if who is not None and not who.may("operator"):
        raise RequestError("a rater may not download the consensus of other raters' grades", status=403)
    name = request.path_params["name"]
    try:
        agreed = consensus(
            read_judgments(request.app.state.settings.history, name),
            request.query_params.get("consensus", "majority"),
            rater=request.query_params.get("rater"),
        )
    except EvaltoolError as exc:
        _failed(exc)
    return Response(
        text_of(agreed).encode(),
        media_type="text/plain; charset=utf-8",
        headers={"content-disposition": 'attachment; filename="qrels.txt"'},
    )


# ---------------------------------------------------------------- writing


async def judge(request: Request) -> Response:
    """``POST /api/judging/{id}/judge``: the signed-in rater's grade of one pair, saved now."""
    from evaltool.judgments.tasks import judge_in_task, progress
    from evaltool.server.auth import require

    who = await require(request, "rater")
    fields, form = await _body(request)
    task_id = _number(request.path_params["id"], "task id")
    query_id, doc_id, grade = fields.get("query_id"), fields.get("doc_id"), fields.get("grade")
    if not isinstance(query_id, str) or not isinstance(doc_id, str) or grade in (None, ""):
        raise RequestError("query_id, doc_id and grade are required")
    note = fields.get("note") or None
    settings = request.app.state.settings
    try:
        saved = judge_in_task(
            settings.history,
            task_id,
            who.name,
            query_id,
            doc_id,
            grade,
            note=note,
            audit=_audited(who, "judge", "task", task_id, {"query": query_id[:100], "doc": doc_id[:100]}),
        )
        grade_value, label = saved.scale.judge(grade)
        done = progress(settings.history, task_id, who.name)
    except EvaltoolError as exc:
        _failed(exc)
    if form and "application/json" not in request.headers.get("accept", ""):
        return RedirectResponse(task_link(task_id, _lang(request, fields), query_id), status_code=303)
    mine = sum(q["mine"] for q in done["queries"])
    return _json(
        {
            "task": task_id,
            "query_id": query_id,
            "doc_id": doc_id,
            "grade": grade_value,
            "label": label,
            "version": saved.version,
            "mine": mine,
            "pairs": done["pairs"],
            "done": done["done"],
        }
    )


async def judge_unjudged(request: Request) -> Response:
    """``POST /api/executions/{id}/judging``: a task of what the execution returned that nobody judged."""
    from evaltool.judgments.tasks import unjudged_task
    from evaltool.server.auth import require

    who = await require(request, "operator")
    fields, form = await _body(request)
    execution_id = _number(request.path_params["id"], "execution id")
    set_name = fields.get("set")
    if not isinstance(set_name, str) or not set_name.strip():
        raise RequestError("set is required: the judgment set the task's judgments go to")
    try:
        ratings = int(fields.get("ratings") or 1)
    except (TypeError, ValueError):
        raise RequestError(
            f"ratings {str(fields.get('ratings'))[:40]!r}: expected a whole number from 1 to 20"
        ) from None
    try:
        task = unjudged_task(
            request.app.state.settings.history,
            execution_id,
            set_name.strip(),
            ratings_wanted=ratings,
            author=who.name,
            audit=_audited(who, "create", "task", None, {"execution": execution_id, "set": set_name.strip()[:200]}),
        )
    except EvaltoolError as exc:
        _failed(exc)
    if form:
        return RedirectResponse(task_link(task.id, _lang(request, fields)), status_code=303)
    return _json(task.to_dict(), 201)


def routes() -> list:
    from starlette.routing import Route

    get, post = ["GET"], ["POST"]
    return [
        Route("/judging", overview_page, methods=get),
        Route("/api/judging", overview_api, methods=get),
        Route("/judging/{id}", task_page, methods=get),
        Route("/api/judging/{id}", task_api, methods=get),
        Route("/api/judging/{id}/judge", judge, methods=post),
        Route("/judging/sets/{name}", agreement_page, methods=get),
        Route("/api/judging/sets/{name}", agreement_api, methods=get),
        Route("/judging/sets/{name}/qrels.txt", qrels_text, methods=get),
        Route("/api/executions/{id}/judging", judge_unjudged, methods=post),
    ]
