"""A language model judging a task from the dashboard: only the models the operator declared.

``evaltool serve --llm NAME=URL,MODEL[,KEY_VARIABLE]`` (repeatable) declares, at start, the
OpenAI-compatible endpoints and models the dashboard may use, by name; a key is read from the
environment variable named there, once, at start. A request names a declared model by NAME
and nothing else: the server never reaches a URL or a model that a request names.

* ``POST /api/judging/{id}/llm`` (an operator; a form with the session's CSRF token, or JSON):
  ``model`` = a declared NAME. The model grades every pair of task ``id``, in a thread of the
  server, through :func:`evaltool.judgments.llm.judge_pairs` (the pairs people graded too: those
  are what the calibration compares), with the document texts of ``serve --corpus`` (else
  the title and snippet the task kept); its checkpoint and answer cache live in the jobs
  folder, so asking again after a stopped server sends only what is missing. The grades are
  written as one version of the task's set by the rater ``llm:MODEL`` when the run ends. The
  start is audited with its author.
* ``GET /api/judging/{id}/llm``: the run's state (``running``, ``done``, ``failed``), its
  counts, and the address of the calibration page for the task's set (its ``llm:`` raters
  against its people), to read before anyone trusts the result.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import asdict, dataclass, field

from evaltool.errors import EvaltoolError


@dataclass(frozen=True)
class DeclaredModel:
    """A model the operator declared: its endpoint, its name there, the key read at start (never shown)."""

    name: str
    url: str
    model: str
    key: str | None = field(default=None, repr=False)

    def public(self) -> dict:
        from evaltool.judgments.llm import shown_url

        return {"name": self.name, "endpoint": shown_url(self.url), "model": self.model}


def parse_models(specs, environ=None) -> dict[str, DeclaredModel]:
    """``NAME=URL,MODEL[,KEY_VARIABLE]`` specs (``--llm``) as declared models, by name.

    >>> parse_models(["local=http://127.0.0.1:11434/v1,qwen2.5:7b"])["local"].model
    'qwen2.5:7b'
    """
    from evaltool.judgments.llm import chat_url

    environ = os.environ if environ is None else environ
    declared: dict[str, DeclaredModel] = {}
    for spec in specs:
        name, eq, rest = spec.partition("=")
        parts = rest.split(",")
        if not eq or not name.strip() or len(parts) not in (2, 3) or not all(p.strip() for p in parts):
            raise EvaltoolError(f"--llm {spec[:200]!r}: expected NAME=URL,MODEL or NAME=URL,MODEL,KEY_VARIABLE")
        name = name.strip()
        if name in declared:
            raise EvaltoolError(f"--llm: the name {name!r} is declared twice")
        key = None
        if len(parts) == 3:
            variable = parts[2].strip()
            key = environ.get(variable)
            if not key:
                raise EvaltoolError(f"--llm {name}: the environment variable {variable} holding its key is not set")
        chat_url(parts[0].strip())  # a bad URL is refused at start
        declared[name] = DeclaredModel(name, parts[0].strip(), parts[1].strip(), key)
    return declared


@dataclass
class ModelRun:
    task: int
    model: str  # the declared name
    rater: str
    set: str
    author: str
    state: str = "running"  # running | done | failed
    pairs: int = 0
    settled: int = 0
    judged: int = 0
    unparsed: int = 0
    failed: int = 0
    error: str | None = None
    started: float = field(default_factory=time.time)

    def to_dict(self) -> dict:
        return asdict(self)


class ModelRuns:
    """The model runs of one server: at most one per task at a time, each in a daemon thread."""

    def __init__(self, history, models: dict[str, DeclaredModel], folder: str, corpus: dict | None = None):
        self.history, self.models, self.folder, self.corpus = history, models, folder, corpus or {}
        self.runs: dict[int, ModelRun] = {}
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []

    def start(self, task_id: int, name: str, author: str) -> ModelRun:
        """Start model ``name`` on task ``task_id`` (EvaltoolError: an undeclared name, a run going on)."""
        from evaltool.judgments.tasks import get_task

        if name not in self.models:
            known = ", ".join(sorted(self.models)) or "none (evaltool serve --llm NAME=URL,MODEL declares one)"
            raise EvaltoolError(f"model {name[:100]!r} is not declared on this server; declared: {known}")
        task = get_task(self.history, task_id)
        declared = self.models[name]
        with self.lock:
            running = self.runs.get(task.id)
            if running is not None and running.state == "running":
                raise EvaltoolError(f"task {task.id} is being judged by {running.model} already")
            run = ModelRun(task.id, name, f"llm:{declared.model}", task.set_name, author)
            self.runs[task.id] = run
        thread = threading.Thread(
            target=self._run, args=(run, declared), name=f"evaltool-llm-task-{task.id}", daemon=True
        )
        self.threads.append(thread)
        thread.start()
        return run

    def state(self, task_id: int) -> ModelRun | None:
        return self.runs.get(task_id)

    def _run(self, run: ModelRun, declared: DeclaredModel) -> None:
        from evaltool.bench.checkpoint import checkpoint_path
        from evaltool.judgments.llm import ChatEndpoint, JudgeSettings, judge_pairs, pairs_to_judge, save_judgments
        from evaltool.judgments.prompting import DEFAULT_PROMPT
        from evaltool.judgments.sets import get_set

        try:
            pairs, _ = pairs_to_judge(str(run.task), db=self.history, texts=self.corpus)
            run.pairs = len(pairs)
            path = checkpoint_path(self.folder, "", f"llm-task-{run.task}-{declared.name}")
            settings = JudgeSettings(
                endpoint=ChatEndpoint(declared.url, declared.model, api_key=declared.key),
                prompt=DEFAULT_PROMPT,
                scale=get_set(self.history, run.set).scale,
                set_name=run.set,
                checkpoint_path=path,
                cache_dir=os.path.join(self.folder, "llm-cache"),
                resume=os.path.exists(path),
            )

            def settled(outcome) -> None:
                run.settled += 1
                setattr(run, outcome.status, getattr(run, outcome.status) + 1)

            result = judge_pairs(pairs, settings, on_outcome=settled)
            run.judged, run.unparsed, run.failed = (result.counts[k] for k in ("judged", "unparsed", "failed"))
            run.settled = len(result.outcomes)
            save_judgments(self.history, result, settings, author=run.author)
            run.state = "done"
        except Exception as exc:  # the run's end, shown on its state; the server goes on
            run.error = f"{type(exc).__name__}: {exc}"[:500] if not isinstance(exc, EvaltoolError) else str(exc)[:500]
            run.state = "failed"

    def wait(self, timeout: float = 30.0) -> None:
        """Wait for the runs started so far (tests)."""
        for thread in list(self.threads):
            thread.join(timeout)


# ---------------------------------------------------------------- the HTTP face


def _task_id(request) -> int:
    from evaltool.server.params import RequestError

    text = request.path_params["id"]
    if not text.isdigit() or int(text) < 1:
        raise RequestError(f"task id {text[:40]!r}: expected a whole number from 1 up")
    return int(text)


def _answer(data: dict, status: int = 200):
    from starlette.responses import Response

    from evaltool.report.json import dump_json

    return Response(dump_json(data, indent=None).encode(), status_code=status, media_type="application/json")


async def _fields(request) -> tuple[dict, bool]:
    """(the request's fields, whether they came as a form): a URL-encoded form, else a JSON object."""
    from evaltool.server.auth import form_of
    from evaltool.server.params import json_object

    form = await form_of(request)
    if form:
        return form, True
    return json_object(await request.body() or b"{}"), False


def _state(request, run: ModelRun | None, task_id: int) -> dict:
    from evaltool.server.links import calibration_link

    runs: ModelRuns = request.app.state.model_runs
    out = {
        "task": task_id,
        "models": [m.public() for m in runs.models.values()],
        "run": run.to_dict() if run is not None else None,
    }
    if run is not None:
        out["calibration"] = calibration_link(run.set, run.set, "en")
    return out


async def start_run(request):
    """``POST /api/judging/{id}/llm``: an operator starts a declared model on a task."""
    from starlette.responses import RedirectResponse

    from evaltool.errors import NotFoundError
    from evaltool.history.audit import log_write
    from evaltool.server.auth import require
    from evaltool.server.links import link
    from evaltool.server.params import RequestError

    who = await require(request, "operator")
    fields, form = await _fields(request)
    task_id = _task_id(request)
    name = fields.get("model")
    if not isinstance(name, str) or not name:
        raise RequestError("model: the name of a model declared with 'evaltool serve --llm'")
    runs: ModelRuns = request.app.state.model_runs
    try:
        run = runs.start(task_id, name, who.name)
    except NotFoundError as exc:
        raise RequestError(str(exc), status=404) from None
    except EvaltoolError as exc:
        raise RequestError(str(exc), status=409 if "already" in str(exc) else 400) from None
    with runs.history.writing() as conn:
        log_write(
            conn,
            actor=who.name,
            role=who.role,
            action="llm_judge",
            subject_kind="task",
            subject=str(task_id),
            detail={"model": name, "rater": run.rater},
        )
    if form:
        lang = "es" if fields.get("lang") == "es" else "en"
        return RedirectResponse(link("/judging", lang), status_code=303)
    return _answer(_state(request, run, task_id), status=202)


async def run_state(request):
    """``GET /api/judging/{id}/llm``: the task's model run (an operator's reading)."""
    from evaltool.server.auth import identity
    from evaltool.server.params import RequestError

    who = identity(request)
    if who is not None and not who.may("operator"):
        raise RequestError("the model's run is an operator's matter", status=403)
    task_id = _task_id(request)
    return _answer(_state(request, request.app.state.model_runs.state(task_id), task_id))


def routes() -> list:
    """Before the judging routes (``/api/judging/{id}/...``)."""
    from starlette.routing import Route

    return [
        Route("/api/judging/{id}/llm", start_run, methods=["POST"]),
        Route("/api/judging/{id}/llm", run_state, methods=["GET"]),
    ]


def model_form(data: dict, frame):
    """On the judging overview, for an operator: per task, its model run (with the address of its
    calibration when done) and a form starting a declared model on it; nothing for anyone else."""
    from evaltool.report.html import Markup, escape, join, tag
    from evaltool.report.i18n import t
    from evaltool.server.links import calibration_link

    if not (frame.writable and frame.who is not None and frame.who.may("operator")):
        return None
    lang = frame.lang
    body = [tag("h2", t("llm.title", lang))]
    if not data.get("models"):
        body.append(tag("p", t("llm.none_declared", lang), class_="note"))
        return join(body)
    body.append(tag("p", t("llm.about", lang), class_="note"))
    options = [
        Markup(f'<option value="{escape(m["name"])}">{escape(m["name"])} ({escape(m["model"])})</option>')
        for m in data["models"]
    ]
    items = []
    for task in data["tasks"]:
        run = task.get("model_run")
        shown = None
        if run is not None:
            counts = t(
                "llm.counts",
                lang,
                settled=run["settled"],
                pairs=run["pairs"],
                judged=run["judged"],
                unparsed=run["unparsed"],
                failed=run["failed"],
            )
            calibration = (
                tag("a", t("llm.calibration", lang), href=calibration_link(run["set"], run["set"], lang))
                if run["state"] == "done"
                else None
            )
            shown = tag(
                "span",
                f"{run['rater']}: {t('llm.' + run['state'], lang)}, {counts} ",
                calibration,
                f" {run['error']}" if run["error"] else None,
                class_="model-run",
            )
        form = tag(
            "form",
            Markup(f'<input type="hidden" name="csrf_token" value="{escape(frame.csrf or "")}">'),
            Markup(f'<input type="hidden" name="lang" value="{escape(lang)}">'),
            Markup('<select name="model">'),
            options,
            Markup("</select>"),
            " ",
            tag("button", t("llm.start", lang), type="submit"),
            method="post",
            action=f"/api/judging/{int(task['id'])}/llm",
            class_="inline",
            data_form="llm-judge",
        )
        items.append(tag("li", f"#{task['id']} {task['name']} ", form, " ", shown))
    body.append(tag("ul", items, class_="model-runs"))
    return join(body)
