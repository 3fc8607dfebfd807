"""The dashboard's views: one function per view, parameters in, a JSON-ready dict out.

Each view serves both faces of the server (a page and its data are one): its API address returns the
dict as JSON, its page renders the same dict as HTML (:mod:`evaltool.server.pages`).
A view only calls :mod:`evaltool.history`; nothing is computed here that the history's
own functions (and so ``evaltool history ...``) do not compute the same way.

:data:`VIEWS` is the registry: name, addresses, parameters (which also describe the API
in OpenAPI), the function, and a one-line summary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from evaltool.server import params as p
from evaltool.server.params import RequestError


@dataclass(frozen=True)
class View:
    name: str
    api: str  # the JSON address
    page: str | None  # the HTML address (None: the API alone)
    params: tuple
    compute: Callable[[Any, dict], dict]  # (history, arguments) -> dict
    summary: str
    title: str = ""
    cached: bool = True  # its answer changes only when the history is written (see app.ResponseCache)


def query_string(arguments: dict, **changes) -> str:
    """The query string of ``arguments`` with ``changes`` (None, [] and the default language left out)."""
    merged = {**arguments, **changes}
    pairs = []
    for key, value in merged.items():
        if value is None or value == [] or key == "id" or (key == "lang" and value == p.LANG.default):
            continue
        for item in value if isinstance(value, list) else [value]:
            pairs.append((key, str(item).lower() if isinstance(item, bool) else str(item)))
    return urlencode(pairs)


def _not_found(exc: Exception):
    """The history's 'no execution with id' as an HTTP 404; other history errors are 400."""
    from evaltool.errors import NotFoundError

    if isinstance(exc, NotFoundError):
        raise RequestError(str(exc), status=404) from None
    raise RequestError(str(exc)) from None


def report(history, args: dict) -> dict:
    """The comparative report: exactly ``evaltool history report --labels -o json`` for the same filters."""
    from evaltool.history import report as history_report

    return history_report(
        history,
        args["date_from"],
        args["date_to"],
        name=args["name"],
        tags=args["tag"] or None,
        measures=args["measure"] or None,
        labels=args["labels"],
        lang=args["lang"],
    )


def executions(history, args: dict) -> dict:
    """A page of executions (without per-query values), oldest first, and the addresses of its neighbours;
    ``series``: each measure's shown name and every spelling it was recorded under (one trend each)."""
    from evaltool.history import list_executions
    from evaltool.history.series import series

    limit, offset = args["limit"], args["offset"]
    found = list_executions(
        history, args["date_from"], args["date_to"], args["name"], args["tag"] or None, limit=limit + 1, offset=offset
    )
    more = len(found) > limit
    return {
        "executions": [e.to_dict() for e in found[:limit]],
        "series": series(found[:limit]),
        "limit": limit,
        "offset": offset,
        "next": f"?{query_string(args, offset=offset + limit)}" if more else None,
        "previous": f"?{query_string(args, offset=max(0, offset - limit))}" if offset else None,
    }


def execution(history, args: dict) -> dict:
    """One execution with every per-query value and what its search returned, each returned document
    judged (relevant with its grade / not relevant / unjudged) and each query's missed ids."""
    from evaltool.server.workbench_views import execution_results

    return execution_results(history, args)


def diff(history, args: dict) -> dict:
    """Two executions: means, the paired test and interval per measure, the queries that moved most
    (``evaltool history diff A B -o json``)."""
    from evaltool.errors import HistoryError
    from evaltool.history import diff as history_diff

    try:
        return history_diff(
            history, args["a"], args["b"], args["measure"] or None, test=args["test"], correction=args["correction"]
        )
    except HistoryError as exc:
        _not_found(exc)


def side_by_side(history, args: dict) -> dict:
    """Two or more executions: each with its per-query values, the diff of each against the first, and
    ``series``: each measure's shown name and every spelling it was recorded under (one row each)."""
    from evaltool.errors import HistoryError
    from evaltool.history import diff as history_diff
    from evaltool.history import get_executions
    from evaltool.history.series import series

    ids = list(dict.fromkeys(args["ids"]))
    if not 2 <= len(ids) <= MAX_SIDE_BY_SIDE:
        raise RequestError(
            f"ids: give 2 to {MAX_SIDE_BY_SIDE} different execution ids (ids=3,7 or ids=3&ids=7), not {len(ids)}"
        )
    try:
        found = get_executions(history, ids)
        diffs = [
            history_diff(
                history, ids[0], other, args["measure"] or None, test=args["test"], correction=args["correction"]
            )
            for other in ids[1:]
        ]
    except HistoryError as exc:
        _not_found(exc)
    return {"executions": [e.to_dict() for e in found], "diffs": diffs, "series": series(found)}


def suites(history, args: dict) -> dict:
    """The controlled-test suites, each with its last recorded execution (null when never run)."""
    from evaltool.history import list_executions, list_suites

    from evaltool.server.workbench_views import shown_suite

    out = []
    for suite in list_suites(history):
        last = list_executions(history, name=suite.name, limit=1, newest_first=True)
        out.append({**shown_suite(suite), "last": last[0].to_dict() if last else None})
    return {"suites": out}


def audit(history, args: dict) -> dict:
    """The audit trail of writes made through the server, oldest first: of one subject (``kind`` and
    ``subject``), of one kind, or all; the newest ``limit``."""
    from evaltool.history import list_audit

    if args["subject"] is not None and args["kind"] is None:
        raise RequestError("subject: give kind too (kind=suite&subject=panel)")
    return {"entries": [e.to_dict() for e in list_audit(history, args["kind"], args["subject"], limit=args["limit"])]}


MAX_SIDE_BY_SIDE = 8
FILTERS = (p.DATE_FROM, p.DATE_TO, p.NAME, p.TAG)
PAIR = (
    p.Param("a", "integer", "the first execution (the baseline)", required=True, minimum=1),
    p.Param("b", "integer", "the execution compared with it", required=True, minimum=1),
)
STATISTICS = (p.MEASURE, p.TEST, p.CORRECTION)

VIEWS = (
    View(
        "report",
        "/api/report",
        "/",
        (*FILTERS, p.MEASURE, p.LABELS, p.LANG),
        report,
        "The comparative report: a row per execution in the date range and a summary row",
        "Comparative report",
    ),
    View(
        "executions",
        "/api/executions",
        "/trends",
        (*FILTERS, p.LIMIT, p.OFFSET, p.LANG),
        executions,
        "Executions in the date range, paginated, oldest first; the page draws a trend per measure",
        "Trends",
    ),
    View(
        "execution",
        "/api/executions/{id}",
        "/executions/{id}",
        (p.EXECUTION_ID, p.LANG),
        execution,
        "One execution with its per-query values",
        "Execution",
    ),
    View(
        "diff",
        "/api/diff",
        "/diff",
        (*PAIR, *STATISTICS, p.LANG),
        diff,
        "Two executions compared: paired test, interval and the queries that moved most",
        "Difference",
    ),
    View(
        "compare",
        "/api/compare",
        "/compare",
        (
            p.Param(
                "ids",
                "ids",
                f"2 to {MAX_SIDE_BY_SIDE} execution ids, the first the baseline: ids=3,7,9",
                required=True,
                minimum=1,
            ),
            *STATISTICS,
            p.LANG,
        ),
        side_by_side,
        "Two or more executions side by side, each compared with the first",
        "Side by side",
    ),
    View(
        "suites",
        "/api/suites",
        None,
        (p.LANG,),
        suites,  # its page is the workbench's editor (server.workbench)
        "Controlled-test suites with their last result",
        "Suites",
        cached=False,
    ),  # suites change in place
    View(
        "audit",
        "/api/audit",
        None,
        (
            p.Param("kind", "string", "what was written: execution, suite, ..."),
            p.Param("subject", "string", "its id or name (with kind)"),
            p.Param("limit", "integer", "the newest entries kept", default=1000, minimum=1, maximum=10000),
        ),
        audit,
        "Who wrote what through the server, and when (the audit trail)",
        "Audit",
        cached=False,
    ),
)


def _workbench_views() -> tuple:
    """The workbench's views (suites, jobs, returned lists): their JSON here, their pages drawn by
    :mod:`evaltool.server.workbench` in the frame of the request (its forms need the session)."""
    from evaltool.server import workbench_views as w

    return (
        View(
            "suite",
            "/api/suites/{name}",
            None,
            (w.SUITE_NAME, w.VERSION, p.LANG),
            w.suite,
            "A suite: its queries and ground truth (of a version), versions, executions, each query's history, "
            "jobs and changes",
            "Suite",
            cached=False,
        ),
        View(
            "jobs",
            "/api/jobs",
            None,
            (w.SUITE_FILTER, p.LANG),
            w.jobs,
            "The newest runs and their progress",
            "Runs",
            cached=False,
        ),
        View(
            "job",
            "/api/jobs/{id}",
            None,
            (w.JOB_ID, p.LANG),
            w.job,
            "One run: state, progress (done / total, failures, elapsed), its execution once done",
            "Run",
            cached=False,
        ),
        View(
            "compare_results",
            "/api/compare-results",
            None,
            (*PAIR, p.LANG),
            w.compare_results,
            "Two executions' returned lists query by query: new, moved and lost documents",
            "Returned lists",
        ),
    )


VIEWS = VIEWS + _workbench_views()
