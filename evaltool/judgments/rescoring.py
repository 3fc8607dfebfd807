"""A stored execution scored again under a judgment set, without running the search again.

The execution's stored result lists (what a bench or suite run returned, in its order) become
a run whose scores are ``n - position`` (so every tool ranks them as returned, as
``evaltool bench`` writes its run file); the set's consensus becomes the qrels, kept to the
queries the execution answered; both go to :func:`evaltool.evaluate` with the execution's
measures, ``complete`` and relevance level. The new execution has the original's name, kind,
suite version, options and result lists (now marked against the new ground truth), is
recorded now, and is marked: tags ``rescored_from`` (the original id) and ``judgments``
(``SET@VERSION``), and a note saying both. Running ``evaltool -c -m ... QRELS RUN`` on the
exported qrels and the stored lists gives the same numbers.
"""

from __future__ import annotations

from evaltool.errors import EvaltoolError


def stored_run(execution) -> dict[str, dict[str, float]]:
    """``{query: {doc: n - position}}`` of the queries an execution answered, in its order."""
    run = {}
    for result in execution.results or ():
        if result.get("error"):
            continue
        docs = [d["doc_id"] for d in sorted(result.get("documents") or (), key=lambda d: d["rank"])]
        run[result["query_id"]] = {doc: float(len(docs) - i) for i, doc in enumerate(docs)}
    return run


def rescore(
    db,
    execution_id,
    set_name: str,
    *,
    consensus: str = "majority",
    rater: str | None = None,
    version: int | None = None,
) -> int:
    """Score execution ``execution_id`` under judgment set ``set_name`` (``version``: default the
    current; ``consensus`` / ``rater`` as :func:`~evaltool.judgments.adjudication.consensus` takes them)
    and record the result as a new execution; its id."""
    import warnings

    from evaltool.errors import EvaltoolWarning
    from evaltool.evaluation import evaluate
    from evaltool.history import get_execution, record
    from evaltool.history.queries import opened
    from evaltool.judgments.adjudication import consensus as agree
    from evaltool.judgments.sets import judgments_of, read_set

    with opened(db) as history:
        execution = get_execution(history, execution_id, results=True)
        if not execution.results:
            raise EvaltoolError(
                f"execution {execution.id} has no stored result lists to score again (only bench "
                "and suite executions keep what the search returned)"
            )
        with history.reading() as conn:
            judgment_set = read_set(conn, set_name)
            shown = judgment_set.version if version is None else int(version)
            judged = judgments_of(conn, set_name, shown)
        run = stored_run(execution)
        qrels = {q: docs for q, docs in agree(judged, consensus, rater=rater).qrels.items() if q in run}
        if not qrels:
            raise EvaltoolError(
                f"judgment set {set_name!r} (version {shown}) judges none of the queries execution "
                f"{execution.id} answered"
            )
        options = execution.options or {}
        level = options.get("relevance_level", 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EvaltoolWarning)
            result = evaluate(
                qrels,
                {q: run[q] for q in run if q in qrels} or run,
                list(execution.summary),
                complete=bool(options.get("complete", True)),
                relevance_level=level,
                runid=execution.name,
            )
        results = [
            {
                **r,
                "judgments": qrels.get(r["query_id"], {}),
                "returned": sorted(r.get("documents") or (), key=lambda d: d["rank"]),
            }
            for r in execution.results
        ]
        marked = f"{set_name}@{shown}"
        via = f"rater {rater}" if rater else f"consensus {consensus}"
        return record(
            result,
            history,
            name=execution.name,
            kind=execution.kind,
            note=f"re-scored from execution {execution.id} under judgments {marked} ({via})",
            tags={**execution.tags, "rescored_from": str(execution.id), "judgments": marked},
            options=options,
            sources={**execution.sources, "judgments": marked},
            fingerprints={},
            commit=None,
            results=results,
            suite_version=execution.suite_version,
        )


def apply_to_suite(
    db,
    set_name: str,
    suite_name: str,
    *,
    consensus: str = "majority",
    rater: str | None = None,
    version: int | None = None,
    author: str | None = None,
):
    """Make judgment set ``set_name`` (its consensus, or one ``rater``'s grades, as of ``version``) the ground
    truth of suite ``suite_name``: each suite query the set judges gets the set's grades (as ``qrels``,
    grade 0 kept as judged not relevant); the others keep theirs. A new version of the suite when anything
    changed; returns the suite."""
    from dataclasses import replace

    from evaltool.history.queries import opened
    from evaltool.history.suites import get_suite, save_queries
    from evaltool.judgments.adjudication import consensus as agree
    from evaltool.judgments.sets import judgments_of, read_set

    with opened(db) as history:
        with history.reading() as conn:
            shown = read_set(conn, set_name).version if version is None else int(version)
            qrels = agree(judgments_of(conn, set_name, shown), consensus, rater=rater).qrels
        suite = get_suite(history, suite_name)
        queries = [
            replace(q, expected_field="qrels", judgments=dict(qrels[q.query_id])) if q.query_id in qrels else q
            for q in suite.queries or ()
        ]
        if not any(q.query_id in qrels for q in suite.queries or ()):
            raise EvaltoolError(
                f"judgment set {set_name!r} (version {shown}) judges none of suite {suite_name}'s queries"
            )
        return save_queries(
            history, suite_name, queries, author=author, change={"what": "judgments", "set": set_name, "version": shown}
        )
