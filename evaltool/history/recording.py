"""Recording one evaluation: every value, how it was computed, and fingerprints of the inputs.

An execution stores its name, date, note and tags; every summary value and every
per-query value; the options the values were computed with (``-l``, ``-c``, ``-M``...);
the label thresholds in force (so old executions keep theirs); the evaltool version;
and fingerprints: the sha256 of the qrels, of the run and (for a benchmark) of the
queries file, and the git commit of the current directory when it is in a repository.
A benchmark or suite execution also keeps what the search returned: per query its text,
the ground truth it was scored against, the latency, the error if any, and the returned
ids in order with their scores (and title / snippet when the backend gave text), at most
:data:`MAX_RETURNED_ROWS` ids per execution (each query's list is cut evenly beyond that).
All of it is written in one transaction: a crash or Ctrl-C leaves no half execution.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
from collections.abc import Iterable, Mapping

from evaltool.errors import HistoryError

AUTO = object()  # "find it out": the fingerprints from the result's files, the commit from git
KINDS = ("eval", "compare", "bench", "suite")
MAX_RETURNED_ROWS = 200_000  # returned ids stored per execution (1,000 queries at --limit 200)


def sha256_file(path) -> str | None:
    """The sha256 of a file's bytes; None when it is not a readable regular file (stdin, a dict)."""
    try:
        if not os.path.isfile(path):
            return None
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except (OSError, TypeError, ValueError):
        return None


def git_commit(folder: str | None = None) -> str | None:
    """The commit checked out in ``folder`` (default: the current directory), None outside git."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "-q", "HEAD"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) in (40, 64) else None


def parse_tags(specs: Iterable[str]) -> dict[str, str]:
    """``K=V`` texts (``--tag``) as a dict; a key given twice keeps the last value.

    >>> parse_tags(["model=bm25", "split=dev"])
    {'model': 'bm25', 'split': 'dev'}
    """
    out: dict[str, str] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip():
            raise HistoryError(f"--tag {spec!r}: expected KEY=VALUE such as model=bm25")
        out[key.strip()] = value.strip()
    return out


def _storable_text(text) -> str:
    """Ids read as bytes that are not UTF-8 (kept as surrogates) are stored with backslash escapes."""
    text = str(text)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _number(value) -> float | None:
    """A stored value: a finite or infinite float; None for nan and for what is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _parts(result) -> tuple[dict, dict, dict, dict]:
    """Summary, per-query values, meta and the aggregate of each measure, from a result's JSON
    (:meth:`~evaltool.evaluation.result.EvalResult.to_dict`: the aggregates are in
    ``meta["measures"]``) or an object with ``summary``, ``per_query`` and ``meta``."""
    if isinstance(result, Mapping):
        summary, per_query, meta = result.get("summary"), result.get("per_query") or {}, result.get("meta") or {}
    else:
        summary = getattr(result, "summary", None)
        per_query, meta = getattr(result, "per_query", None) or {}, getattr(result, "meta", None) or {}
    if not isinstance(summary, Mapping):
        raise HistoryError(
            "record(): the result has no summary values to record (expected an EvalResult "
            "or its JSON: {'summary': {measure: value}, 'per_query': ..., 'meta': ...})"
        )
    facts = meta.get("measures") if isinstance(meta, Mapping) else None
    aggregates = {}
    if isinstance(facts, Mapping):
        aggregates = {
            name: fact.get("aggregate")
            for name, fact in facts.items()
            if isinstance(fact, Mapping) and isinstance(fact.get("aggregate"), str)
        }
    return dict(summary), dict(per_query), dict(meta), aggregates


def record(
    result,
    db=None,
    *,
    name: str | None = None,
    note: str | None = None,
    tags: Mapping[str, str] | None = None,
    at=None,
    kind: str = "eval",
    thresholds: Mapping[str, float] | None = None,
    options: Mapping | None = None,
    sources: Mapping[str, str] | None = None,
    fingerprints=AUTO,
    commit=AUTO,
    results: list[dict] | None = None,
    suite_version: int | None = None,
    audit: Mapping | None = None,
) -> int:
    """Store one evaluation in the history ``db`` and return its id.

    ``result`` is an :class:`~evaltool.evaluation.result.EvalResult` (or its ``to_dict()`` JSON).
    ``name`` defaults to the run's file name (as ``compare`` names runs), else its run tag; ``at`` (ISO-8601 text, a
    date or a datetime from 1970 to a day from now; default now) backfills an old result. ``thresholds`` are the
    label thresholds in force (default: the result's ``thresholds``, else
    :data:`evaltool.evaluation.labels.DEFAULT_THRESHOLDS`);
    ``options`` default to ``meta["options"]``; ``sources`` to the qrels and run paths
    of ``meta``. ``fingerprints`` maps ``qrels`` / ``run`` / ``queries`` to sha256 digests
    (default: the digests of the files in ``sources``); ``commit`` is the git commit
    (default: that of the current directory, if any). ``results`` is what the search returned, a
    dict per query: ``query_id``, ``text``, ``judgments`` ({id: grade}), ``latency_ms``, ``error``
    and ``returned`` (a list of ``{"doc_id", "score", "title", "snippet"}`` in rank order);
    ``suite_version`` the version of the suite named ``name`` that was run. ``audit`` (``actor``,
    ``role`` and optionally ``action`` and ``detail``, as :func:`evaltool.history.audit.log_write`
    takes them) adds an audit entry for the new execution in the same transaction (a server's write).

    >>> import tempfile, os
    >>> from evaltool import evaluate
    >>> from evaltool.history import record, get_execution
    >>> folder = tempfile.mkdtemp()
    >>> db = os.path.join(folder, "history.sqlite")
    >>> result = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 2.0}, "q2": {"a": 1.0, "b": 0.5}},
    ...                            ["recip_rank", "P.5"])
    >>> execution_id = record(result, db=db, name="bm25", at="2025-01-28", tags={"split": "dev"})
    >>> execution = get_execution(db, execution_id)
    >>> execution.name, execution.recorded_at, execution.summary, execution.per_query["q2"]
    ('bm25', '2025-01-28T00:00:00Z', {'recip_rank': 0.75, 'P_5': 0.2}, {'recip_rank': 0.5, 'P_5': 0.2})
    """
    from evaltool import __version__
    from evaltool.history import schema
    from evaltool.history.dates import now, recording_date, stamp
    from evaltool.history.store import open_history
    from evaltool.evaluation.labels import DEFAULT_THRESHOLDS

    if kind not in KINDS:
        raise HistoryError(f"record(): kind {kind!r}; expected one of {', '.join(KINDS)}")
    if not isinstance(result, Mapping) and callable(getattr(result, "to_dict", None)):
        result = result.to_dict(per_query=True)  # the one contract, as -o json and POST /api/executions send it
    summary, per_query, meta, aggregates = _parts(result)
    labelled = result.get("thresholds") if isinstance(result, Mapping) else getattr(result, "thresholds", None)
    recorded_at = stamp(recording_date(at, "--at") if at is not None else now())
    if sources is None:
        sources = {side: meta[side] for side in ("qrels", "run") if isinstance(meta.get(side), str)}
    sources = {key: str(value) for key, value in sources.items() if value is not None}
    if name is None:  # the run's file name, as compare names runs; else its tag (a dict, stdin)
        runid = meta.get("runid")
        run_file = sources.get("run", "")
        name = (os.path.basename(run_file) if run_file not in ("", "-") else "") or (
            runid if isinstance(runid, str) and runid else "run"
        )
    if not str(name).strip():
        raise HistoryError("--name: an execution needs a non-empty name")
    if fingerprints is AUTO:
        fingerprints = {
            side: sha256_file(path) for side, path in sources.items() if side in ("qrels", "run", "queries")
        }
    fingerprints = dict(fingerprints or {})
    if commit is AUTO:
        commit = git_commit()
    summary_rows = [
        {
            "position": i,
            "measure": _storable_text(measure),
            "value": _number(value),
            "aggregate": aggregates.get(measure),
        }
        for i, (measure, value) in enumerate(summary.items())
        if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))
    ]
    if not summary_rows:
        raise HistoryError("record(): the result has no summary value of a measure to record")
    query_rows = [
        {"query_id": _storable_text(qid), "measure": _storable_text(measure), "value": _number(value)}
        for qid, values in per_query.items()
        for measure, value in values.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    ]
    counts = meta.get("counts") or {}
    query_count = counts.get("queries_evaluated", len(per_query) or None)
    row = {
        "name": _storable_text(name).strip(),
        "recorded_at": recorded_at,
        "kind": kind,
        "note": note,
        "evaltool_version": __version__,
        "query_count": query_count,
        "options": json.dumps(dict(options if options is not None else meta.get("options") or {}), sort_keys=True),
        "thresholds": json.dumps(dict(thresholds if thresholds is not None else labelled or DEFAULT_THRESHOLDS)),
        "sources": json.dumps(sources, sort_keys=True),
        "qrels_sha256": fingerprints.get("qrels"),
        "run_sha256": fingerprints.get("run"),
        "queries_sha256": fingerprints.get("queries"),
        "git_commit": commit,
        "suite_version": suite_version,
    }
    outcome_rows, returned_rows = _result_rows(results or [])
    history = open_history(db, create=True)
    try:
        with history.writing() as conn:
            execution_id = conn.execute(schema.executions.insert().values(**row)).inserted_primary_key[0]
            conn.execute(schema.summary_values.insert(), [dict(r, execution_id=execution_id) for r in summary_rows])
            if query_rows:
                conn.execute(schema.query_values.insert(), [dict(r, execution_id=execution_id) for r in query_rows])
            if tags:
                conn.execute(
                    schema.tags.insert(),
                    [
                        {"execution_id": execution_id, "key": _storable_text(k), "value": _storable_text(v)}
                        for k, v in tags.items()
                    ],
                )
            for table, rows in ((schema.query_outcomes, outcome_rows), (schema.returned, returned_rows)):
                for start in range(0, len(rows), 5000):
                    conn.execute(
                        table.insert(), [dict(r, execution_id=execution_id) for r in rows[start : start + 5000]]
                    )
            if audit is not None:
                from evaltool.history.audit import log_write

                log_write(conn, **{"action": "record", **audit}, subject_kind="execution", subject=execution_id)
    finally:
        if history is not db:
            history.close()
    return int(execution_id)


def _result_rows(results: list[dict]) -> tuple[list[dict], list[dict]]:
    """The rows of ``query_outcomes`` and ``returned`` for :func:`record`'s ``results``, cut to
    :data:`MAX_RETURNED_ROWS` returned ids (the same number per query)."""
    total = sum(len(r.get("returned") or ()) for r in results)
    per_query = None
    if total > MAX_RETURNED_ROWS:
        per_query = max(1, MAX_RETURNED_ROWS // max(1, len(results)))
    outcomes, returned = [], []
    for position, r in enumerate(results):
        qid = _storable_text(r["query_id"])
        listed = list(r.get("returned") or ())
        judgments = r.get("judgments")
        outcomes.append(
            {
                "query_id": qid,
                "position": position,
                "text": r.get("text"),
                "judgments": None if judgments is None else json.dumps(judgments),
                "latency_ms": _number(r.get("latency_ms")),
                "error": r.get("error"),
                "returned": len(listed),
            }
        )
        for rank, doc in enumerate(listed[:per_query] if per_query else listed, 1):
            returned.append(
                {
                    "query_id": qid,
                    "rank": rank,
                    "doc_id": _storable_text(doc["doc_id"]),
                    "score": _number(doc.get("score")),
                    "title": doc.get("title"),
                    "snippet": doc.get("snippet"),
                }
            )
    return outcomes, returned


def bench_results(bench) -> list[dict]:
    """What the search returned in a benchmark run (:class:`evaltool.bench.BenchResult`), as
    :func:`record`'s ``results``."""
    out = []
    for query in bench.queries:
        outcome = bench.outcomes[query.qid]
        texts = outcome.texts or [{}] * len(outcome.ids)
        scores = outcome.scores or [None] * len(outcome.ids)
        out.append(
            {
                "query_id": query.qid,
                "text": query.text,
                "judgments": dict(query.judgments),
                "latency_ms": outcome.execution_time_ms,
                "error": outcome.error,
                "returned": [
                    {"doc_id": doc, "score": score, "title": text.get("title"), "snippet": text.get("snippet")}
                    for doc, score, text in zip(outcome.ids, scores, texts)
                ],
            }
        )
    return out


def record_bench(bench, db=None, *, name: str | None = None, kind: str = "bench", **details) -> int:
    """Store a benchmark run (:class:`evaltool.bench.BenchResult`): its report's aggregate and
    per-query metrics, its settings, and fingerprints of the queries file and of the TREC run and
    qrels it wrote. ``name`` defaults to the run name; ``details`` are :func:`record`'s keywords."""
    metadata = bench.report["metadata"]
    names = list(bench.plan.names)
    per_query = {
        query.qid: {m: entry["metrics"][m] for m in names if m in entry["metrics"]}
        for query, entry in zip(bench.queries, bench.report["detailed_results"])
        if entry["metrics"]
    }
    options = {
        key: metadata.get(key)
        for key in ("limit", "relevance_level", "backend", "backend_kind", "concurrency", "timeout_seconds", "retries")
    }
    values = {
        "summary": {m: bench.report["aggregate_metrics"].get(m) for m in names},
        "per_query": per_query,
        "meta": {
            "options": dict(options, complete=True),
            "counts": {"queries_evaluated": metadata["evaluated_queries"]},
        },
    }
    sources = {
        "queries": metadata["queries_file"],
        "qrels": bench.qrels_path,
        "run": bench.run_path,
        "backend": metadata["backend"],
    }
    return record(
        values,
        db=db,
        name=name or metadata["run_name"],
        kind=kind,
        sources=sources,
        results=bench_results(bench),
        **details,
    )
