"""The calibration page: a model's judgments against people's, before anyone trusts them.

``/judging/calibration?model=SET&human=SET[&executions=ID,ID...][&measure=M]`` (JSON twin
under ``/api``) shows :func:`evaltool.judgments.calibration.calibrate`'s figures: Cohen's
kappa, the confusion matrix (rows: the people's grade, columns: the model's), and with
stored executions the systems ranked under each set, side by side, with Kendall's tau,
tau-AP and the largest swaps. The model's side of a set is its ``llm:...`` raters, the
people's side the others, so one set the model filled can be calibrated against itself.

Who reads it: anyone on a dashboard without tokens; on one with tokens, an operator (a
rater who has not judged yet must not see people's grades, even in aggregate). Nothing is
written; the page only reads the history.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from evaltool.errors import EvaltoolError, NotFoundError
from evaltool.report.html import Markup, escape, join, table, tag
from evaltool.report.i18n import t
from evaltool.server.params import RequestError

PATH = "/judging/calibration"
MAX_EXECUTIONS = 50


def _executions(text: str) -> list[int]:
    ids = [part.strip() for part in text.split(",") if part.strip()]
    if len(ids) > MAX_EXECUTIONS:
        raise RequestError(f"executions: at most {MAX_EXECUTIONS} ids")
    if not all(part.isdigit() for part in ids):
        raise RequestError(f"executions {text[:100]!r}: expected execution ids separated by commas")
    return [int(part) for part in ids]


def calibration_data(request: Request) -> dict:
    """The sets to choose from and, when ``model`` and ``human`` are given, the calibration."""
    from evaltool.judgments.calibration import DEFAULT_MEASURE, calibrate, set_grades
    from evaltool.judgments.sets import list_sets
    from evaltool.server.auth import identity

    who = identity(request)
    if who is not None and not who.may("operator"):
        raise RequestError("the calibration shows people's grades: it is for operators", status=403)
    history = request.app.state.settings.history
    params = request.query_params
    model, human = params.get("model") or None, params.get("human") or None
    measure = params.get("measure") or DEFAULT_MEASURE
    ids = _executions(params.get("executions", ""))
    try:
        names = [s.name for s in list_sets(history)]
    except EvaltoolError:
        names = []
    data: dict = {"sets": names, "model": model, "human": human, "executions": ids, "measure": measure, "figures": None}
    if model is None or human is None:
        return data
    try:
        model_grades, scale = set_grades(history, model, model=True)
        human_grades, _ = set_grades(history, human, model=False)
        runs = None
        if ids:
            if len(ids) < 2:
                raise EvaltoolError("a ranking needs two executions or more")
            from evaltool.history import get_executions
            from evaltool.judgments.rescoring import stored_run

            runs = {f"{e.name} #{e.id}": stored_run(e) for e in get_executions(history, ids, results=True)}
        data["figures"] = calibrate(human_grades, model_grades, scale, runs=runs, measure=measure)
    except NotFoundError as exc:
        raise RequestError(str(exc), status=404) from None
    except EvaltoolError as exc:
        raise RequestError(str(exc), status=400) from None
    return data


def _value(x, lang: str):
    return t("judge.undefined", lang) if x is None else x


def _chooser(data: dict, lang: str) -> Markup:
    def select(name: str, chosen: str | None) -> Markup:
        options = [
            Markup(f'<option value="{escape(s)}"{" selected" if s == chosen else ""}>{escape(s)}</option>')
            for s in data["sets"]
        ]
        return tag(
            "label",
            t(f"cal.{name}_set", lang),
            " ",
            Markup(f'<select name="{name}" required>'),
            options,
            Markup("</select>"),
        )

    executions = ",".join(str(i) for i in data["executions"])
    return tag(
        "form",
        Markup(f'<input type="hidden" name="lang" value="{escape(lang)}">'),
        select("model", data["model"]),
        " ",
        select("human", data["human"]),
        " ",
        tag(
            "label",
            t("cal.executions", lang),
            Markup(
                f' <input type="text" name="executions" size="16" value="{escape(executions)}" placeholder="12,15,19">'
            ),
        ),
        " ",
        tag("button", t("cal.show", lang), type="submit"),
        method="get",
        action=PATH,
        class_="inline",
    )


def calibration_page(data: dict, frame) -> Markup:
    lang = frame.lang
    body = [tag("h1", t("cal.title", lang)), tag("p", t("cal.about", lang), class_="note"), _chooser(data, lang)]
    figures = data["figures"]
    if figures is None:
        return join(body)
    weights = {None: t("judge.unweighted", lang), "linear": t("judge.linear", lang)}[figures["weights"]]
    overall = [
        [t("cal.pairs", lang), figures["pairs"]],
        [t("cal.human_only", lang), figures["human_only"]],
        [t("cal.model_only", lang), figures["model_only"]],
        [f"Cohen's kappa ({weights})", _value(figures["cohen_kappa"], lang)],
        [t("cal.exact", lang), _value(figures["exact_agreement"], lang)],
        [t("cal.difference", lang), _value(figures["mean_difference"], lang)],
    ]
    if "rankings" in figures:
        on = t("cal.on_all" if figures["ranked_on"] == "all pairs" else "cal.on_both", lang)
        overall += [
            [t("cal.measure", lang), figures["measure"]],
            [t("cal.ranked_on", lang), on],
            ["Kendall's tau", _value(figures["kendall_tau"], lang)],
            ["tau-AP", _value(figures["tau_ap"], lang)],
        ]
    body.append(tag("h2", t("cal.heading", lang, model=data["model"], human=data["human"])))
    body.append(table([t("judge.figure", lang), t("column.value", lang)], overall, name="calibration"))
    grades = figures["grades"]
    body.append(tag("h2", t("cal.confusion", lang)))
    rows = [[str(g), *row] for g, row in zip(grades, figures["confusion"])]
    body.append(
        table(
            [t("cal.corner", lang), *map(str, grades)], rows, name="confusion", numeric=[False] + [True] * len(grades)
        )
    )
    body.append(tag("p", t("cal.confusion_note", lang), class_="note"))
    if "rankings" in figures:
        human, model = figures["rankings"]["human"], figures["rankings"]["model"]
        body.append(tag("h2", t("cal.rankings", lang, measure=figures["measure"])))
        rows = [[h["rank"], h["system"], h["score"], m["system"], m["score"]] for h, m in zip(human, model)]
        body.append(
            table(
                [
                    t("cal.rank", lang),
                    t("cal.by_people", lang),
                    figures["measure"],
                    t("cal.by_model", lang),
                    figures["measure"],
                ],
                rows,
                name="rankings",
                numeric=[True, False, True, False, True],
            )
        )
        if figures["swaps"]:
            body.append(tag("h2", t("cal.swaps", lang)))
            body.append(
                table(
                    [
                        t("cal.system", lang),
                        t("cal.rank_people", lang),
                        t("cal.rank_model", lang),
                        t("cal.shift", lang),
                    ],
                    [[s["system"], s["human_rank"], s["model_rank"], s["shift"]] for s in figures["swaps"]],
                    name="swaps",
                    numeric=[False, True, True, True],
                )
            )
    query = request_query(data)
    body.append(tag("p", tag("a", t("page.json", lang), href=f"/api{PATH}?{query}"), class_="meta"))
    return join(body)


def request_query(data: dict) -> str:
    from urllib.parse import urlencode

    fields = {"model": data["model"], "human": data["human"], "measure": data["measure"]}
    if data["executions"]:
        fields["executions"] = ",".join(str(i) for i in data["executions"])
    return urlencode(fields)


async def calibration_api(request: Request) -> Response:
    from evaltool.report.json import dump_json

    return Response(dump_json(calibration_data(request), indent=None).encode(), media_type="application/json")


async def calibration_html(request: Request) -> Response:
    from evaltool.server import pages

    frame = pages.Frame.of(request)
    data = calibration_data(request)
    return HTMLResponse(pages.page(frame, t("cal.title", frame.lang), calibration_page(data, frame), current="judging"))


def routes() -> list:
    """Before the judging routes: ``/judging/{id}`` would take ``/judging/calibration`` otherwise."""
    from starlette.routing import Route

    return [Route(PATH, calibration_html, methods=["GET"]), Route(f"/api{PATH}", calibration_api, methods=["GET"])]
