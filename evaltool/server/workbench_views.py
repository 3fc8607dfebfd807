"""The workbench's views: a suite with its queries, versions, executions and jobs; the job queue;
what an execution's search returned, alone or beside another's. Each is one function, its JSON
at ``/api/...`` and its page rendered from the same dict (:mod:`evaltool.server.workbench_pages`).
"""

from __future__ import annotations

from evaltool.server.params import Param, RequestError

SUITE_NAME = Param("name", "string", "a suite's name", where="path")
VERSION = Param("version", "integer", "a version of the suite's queries (default: the current one)", minimum=1)
JOB_ID = Param("id", "integer", "a job id", where="path", minimum=1)
SUITE_FILTER = Param("suite", "string", "only jobs of this suite")
RECENT = 50  # executions and jobs shown on a suite's page


def _found(call, *args, **kwargs):
    from evaltool.errors import HistoryError, NotFoundError

    try:
        return call(*args, **kwargs)
    except NotFoundError as exc:
        raise RequestError(str(exc), status=404) from None
    except HistoryError as exc:
        raise RequestError(str(exc)) from None


def shown_suite(suite) -> dict:
    """A suite as the server shows it: HTTP header values given to the runner (API keys, say) are
    replaced by ``***``; their names stay."""
    out = suite.to_dict()
    headers = out["settings"].get("headers")
    if headers:
        out["settings"]["headers"] = [f"{str(h).partition(':')[0]}: ***" for h in headers]
    return out


def suite(history, args: dict) -> dict:
    """A suite with the queries of a version, its versions, its recent executions (newest first) with
    each query's values in them (the query's history), its jobs and its audit trail."""
    import sqlalchemy as sa

    from evaltool.history import list_executions, schema, suite_versions
    from evaltool.history.jobs import list_jobs
    from evaltool.history.suites import get_suite

    shown = _found(get_suite, history, args["name"], args.get("version"))
    executions = list_executions(history, name=shown.name, limit=RECENT, newest_first=True)
    per_query: dict[str, list] = {}
    ids = [e.id for e in executions]
    if ids:
        q = schema.query_values
        with history.reading() as conn:
            rows = conn.execute(sa.select(q).where(q.c.execution_id.in_(ids))).all()
        values: dict[tuple, dict] = {}
        for r in rows:
            values.setdefault((r.query_id, r.execution_id), {})[r.measure] = r.value
        for e in executions:
            for query in shown.queries:
                if (query.query_id, e.id) in values:
                    per_query.setdefault(query.query_id, []).append(
                        {
                            "execution_id": e.id,
                            "recorded_at": e.recorded_at,
                            "suite_version": e.suite_version,
                            "values": values[(query.query_id, e.id)],
                        }
                    )
    try:
        from evaltool.history.audit import list_audit

        audit = [a.to_dict() for a in list_audit(history, "suite", shown.name, limit=RECENT)]
    except ImportError:
        audit = []
    return {
        "suite": shown_suite(shown),
        "versions": suite_versions(history, shown.name, args.get("lang", "en")),
        "executions": [
            {"id": e.id, "recorded_at": e.recorded_at, "suite_version": e.suite_version, "summary": e.summary}
            for e in executions
        ],
        "query_history": per_query,
        "jobs": [j.to_dict() for j in list_jobs(history, shown.name, limit=RECENT)],
        "audit": audit,
    }


def jobs(history, args: dict) -> dict:
    """The newest jobs (of one suite), their state and progress."""
    from evaltool.history.jobs import list_jobs

    return {"jobs": [j.to_dict() for j in list_jobs(history, args["suite"], limit=100)]}


def job(history, args: dict) -> dict:
    """One job: its state, progress (done / total, failures, elapsed) and, once done, its execution."""
    from evaltool.history.jobs import get_job

    return _found(get_job, history, args["id"]).to_dict()


def judged_results(execution) -> list[dict]:
    """An execution's results (``get_execution(..., results=True)``), each query's documents marked
    (relevant with grade / not relevant / unjudged), its missed ids and its values."""
    from evaltool.history.returned import judged, relevance_level

    level = relevance_level(execution)
    per_query = execution.per_query or {}
    out = []
    for result in execution.results or ():
        seen = judged(result, level)
        for doc, (_, mark, grade) in zip(seen["documents"], seen["marks"]):
            doc["judgment"], doc["grade"] = mark, grade
        seen.pop("marks")
        seen["values"] = per_query.get(result["query_id"], {})
        out.append(seen)
    return out


def execution_results(history, args: dict) -> dict:
    """One execution with every per-query value and what its search returned, judged."""
    from evaltool.history import get_execution

    execution = _found(get_execution, history, args["id"], results=True)
    out = execution.to_dict()
    out["results"] = judged_results(execution)
    return out


def compare_results(history, args: dict) -> dict:
    """Two executions' returned lists query by query: B's documents marked new / moved / same against A's,
    and A's documents B lost; each side judged by its own ground truth."""
    from evaltool.history import get_executions
    from evaltool.history.returned import changes

    first, second = _found(get_executions, history, [args["a"], args["b"]], results=True)
    a, b = judged_results(first), judged_results(second)
    by_id = {r["query_id"]: r for r in b}
    queries = []
    for left in a:
        right = by_id.pop(left["query_id"], None)
        before = [d["doc_id"] for d in left["documents"]]
        after = [d["doc_id"] for d in right["documents"]] if right else []
        moved = changes(before, after)
        if right:
            for doc, (_, change, was) in zip(right["documents"], moved["marks"]):
                doc["change"], doc["was"] = change, was
        queries.append(
            {
                "query_id": left["query_id"],
                "text": left["text"],
                "a": left,
                "b": right,
                "lost": moved["lost"] if right else [],
            }
        )
    queries += [{"query_id": r["query_id"], "text": r["text"], "a": None, "b": r, "lost": []} for r in by_id.values()]
    about = [
        {k: e.to_dict()[k] for k in ("id", "name", "recorded_at", "suite_version", "summary")} for e in (first, second)
    ]
    return {"a": about[0], "b": about[1], "queries": queries}
