"""One benchmark run from start to finish: the library call behind ``evaltool bench``.

Order: validate the queries file and the measures, open the backend, check the corpus,
open (or resume) the checkpoint, send the pending queries, score everything once,
write the TREC run, the qrels and the report as one step (a temporary folder, then
renames, the report last), delete the checkpoint. A run killed while writing leaves at
most a temporary folder, or a run and qrels without their report; the next run in that
folder deletes the first, and ``--resume`` writes over the second (same names).
Nothing here prints; a :class:`Listener` hears each step (the console is one).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import signal
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from evaltool.errors import EvaltoolError
from evaltool.bench.backends import DEFAULT_MAX_RESPONSE_BYTES, Backend, make_backend
from evaltool.bench.checkpoint import Checkpoint, Outcome, checkpoint_path
from evaltool.bench.execute import TIMEOUT, Interrupted, run_queries
from evaltool.bench.queries import BenchQuery, parse_queries
from evaltool.bench.scoring import (
    MeasurePlan,
    detailed_result,
    group_table,
    latency,
    plan_measures,
    redirect_counts,
    query_metrics,
    run_dict,
    score,
    trec_qrels_text,
    trec_run_text,
)

STAMP = "%Y%m%d_%H%M%S"


@dataclass
class BenchSettings:
    """Everything ``evaltool bench`` takes; the defaults are the command's."""

    queries_path: str
    backend: str
    measures: tuple[str, ...] = ()
    limit: int = 10
    out_dir: str = "results"
    timeout: float = 30.0
    concurrency: int = 4
    retries: int = 2
    resume: bool = False
    restart: bool = False
    corpus: str | None = None
    relevance_level: int = 1
    run_name: str | None = None
    request_template: str | None = None
    response_path: str | None = None
    headers: tuple[str, ...] = field(default_factory=tuple)
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    follow_cross_origin_redirects: bool = False
    checkpoint_name: str | None = None  # a run with a name of its own (a suite): its own checkpoint file

    @property
    def checkpoint_path(self) -> str:
        return checkpoint_path(self.out_dir, self.queries_path, self.checkpoint_name)


class Listener:
    """Hears a run's steps; this one ignores them all (the library's default)."""

    def loaded(self, queries: list[BenchQuery], backend: Backend, plan: MeasurePlan) -> None:
        """The queries file and the measures are valid and the backend is ready."""

    def corpus_checked(self, unknown: dict[str, list[str]], corpus_size: int | None) -> None:
        """Expected ids missing from the corpus, by query (``corpus_size`` None: no corpus to check)."""

    def checkpoint_opened(self, path: str, resumed: int, discarded: int) -> None:
        """The checkpoint is open: ``resumed`` finished queries read back from it (``--resume``), or
        ``discarded`` finished queries of an unfinished run written over (``--restart``)."""

    def started(self, total: int, pending: list[BenchQuery], resumed: int) -> None:
        """``pending`` queries are about to be sent; ``resumed`` came from the checkpoint."""

    def finished(self, query: BenchQuery, outcome: Outcome) -> None:
        """A query finished (and is in the checkpoint)."""

    def completed(self, result: BenchResult) -> None:
        """The report and the TREC files are written."""


@dataclass
class BenchResult:
    report: dict
    report_path: str
    run_path: str
    qrels_path: str
    plan: MeasurePlan
    queries: list[BenchQuery]
    outcomes: dict[str, Outcome]


def _read_queries(path: str) -> tuple[list[BenchQuery], str]:
    from evaltool.io.common import read_bytes

    name, data = read_bytes(path)
    return parse_queries(name, data), hashlib.sha256(data).hexdigest()


def _corpus(settings: BenchSettings, backend: Backend) -> set[str] | None:
    if settings.corpus is None:
        return backend.corpus_ids()
    from evaltool.io.textfiles import read_text

    _, text = read_text(settings.corpus)
    return {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


def _run_tag(settings: BenchSettings, backend: Backend) -> str:
    name = settings.run_name or (
        backend.label.rpartition(":")[2]
        if backend.kind == "python"
        else os.path.basename(backend.label)
        if backend.kind == "run"
        else "http"
    )
    return re.sub(r"\s+", "_", name.strip()) or "bench"


def unfinished_queries(settings: BenchSettings) -> int:
    """How many finished queries the checkpoint of ``settings`` holds (0: nothing to resume)."""
    previous = Checkpoint.read(settings.checkpoint_path)
    return 0 if previous is None else len(previous.done)


def _free_base(out_dir: str, started: datetime) -> str:
    """``OUT/baseline_YYYYMMDD_HHMMSS``, with ``_2``, ``_3``... if a report of that second exists.

    Only a report takes a name: a run and qrels without their report are what a kill
    while writing left behind, and are written over.
    """
    base = os.path.join(out_dir, f"baseline_{started.strftime(STAMP)}")
    candidate, n = base, 1
    while os.path.exists(candidate + ".json"):
        n += 1
        candidate = f"{base}_{n}"
    return candidate


def _rescore_command(settings: BenchSettings, plan: MeasurePlan, qrels_path: str, run_path: str) -> str:
    level = ["-l", str(settings.relevance_level)] if settings.relevance_level != 1 else []
    measures = [part for spec in plan.specs for part in ("-m", spec)]
    return shlex.join(["evaltool", "-c", *level, *measures, qrels_path, run_path])


def run_benchmark(settings: BenchSettings, listener: Listener | None = None) -> BenchResult:
    """Run, score and report a benchmark (see the module docstring); raises EvaltoolError, Interrupted."""
    from evaltool import __version__
    from evaltool.report.json import dump_json
    from evaltool.report.output import remove_partials, write_together

    listener = listener or Listener()
    if settings.resume and settings.restart:
        raise EvaltoolError("--resume and --restart: choose one (finish the unfinished run, or discard it)")
    if settings.relevance_level < 0:
        raise EvaltoolError(f"relevance level (-l) {settings.relevance_level}: expected 0 or more")
    queries, digest = _read_queries(settings.queries_path)
    plan = plan_measures(settings.measures)
    if settings.max_response_bytes < 1:
        raise EvaltoolError(f"--max-response-bytes {settings.max_response_bytes}: expected 1 or more")
    backend = make_backend(
        settings.backend,
        queries,
        request_template=settings.request_template,
        response_path=settings.response_path,
        headers=settings.headers,
        max_response_bytes=settings.max_response_bytes,
        concurrency=settings.concurrency,
        follow_cross_origin_redirects=settings.follow_cross_origin_redirects,
    )
    listener.loaded(queries, backend, plan)
    corpus = _corpus(settings, backend)
    unknown = (
        {}
        if corpus is None
        else {q.qid: missing for q in queries if (missing := [doc for doc in q.judgments if doc not in corpus])}
    )
    listener.corpus_checked(unknown, None if corpus is None else len(corpus))

    now = datetime.now(timezone.utc).replace(microsecond=0)
    header = {
        "queries_file": settings.queries_path,
        "queries_sha256": digest,
        "backend": settings.backend,
        "limit": settings.limit,
        "started": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    path = settings.checkpoint_path
    if settings.resume:
        checkpoint = Checkpoint.resume(path, header)
    else:
        checkpoint = Checkpoint.start(path, header, discard=settings.restart)

    def record(query: BenchQuery, outcome: Outcome) -> None:
        checkpoint.append(outcome)
        listener.finished(query, outcome)

    try:
        resumed = len(checkpoint.done)
        listener.checkpoint_opened(path, resumed, checkpoint.discarded)
        remove_partials(settings.out_dir)
        pending = [q for q in queries if q.qid not in checkpoint.done]
        listener.started(len(queries), pending, resumed)
        clock = time.perf_counter()
        run_queries(
            backend,
            pending,
            limit=settings.limit,
            timeout=settings.timeout,
            retries=settings.retries,
            concurrency=settings.concurrency,
            on_outcome=record,
        )
    except KeyboardInterrupt:  # Ctrl-C after the checkpoint opened, before run_queries routes the signals
        raise Interrupted(signal.SIGINT) from None
    finally:
        checkpoint.close()
    elapsed = time.perf_counter() - clock

    outcomes = checkpoint.done
    tag = _run_tag(settings, backend)
    scores = score(queries, outcomes, plan, settings.relevance_level, tag)
    started = datetime.strptime(checkpoint.header["started"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    base = _free_base(settings.out_dir, started)
    report_path, run_path, qrels_path = base + ".json", base + ".run.txt", base + ".qrels.txt"
    run = run_dict(queries, outcomes)
    failed = [outcomes[q.qid] for q in queries if outcomes[q.qid].error is not None]
    report = {
        "metadata": {
            "timestamp": checkpoint.header["started"],
            "total_queries": len(queries),
            "evaluated_queries": len(queries) - len(failed),
            "failed_queries": len(failed),
            "timeouts": sum(1 for o in failed if o.error == TIMEOUT),
            "limit": settings.limit,
            "execution_time_seconds": round(elapsed, 3),
            "resumed_queries": resumed,
            "queries_file": settings.queries_path,
            "backend": settings.backend,
            "search_mode": settings.backend,
            "backend_kind": backend.kind,
            "run_name": tag,
            "measures": plan.names,
            "relevance_level": settings.relevance_level,
            "concurrency": settings.concurrency,
            "timeout_seconds": settings.timeout,
            "retries": settings.retries,
            "max_response_bytes": settings.max_response_bytes if backend.kind == "http" else None,
            "redirects": redirect_counts(list(outcomes.values())) if backend.kind == "http" else None,
            "latency_ms": latency(list(outcomes.values())),
            "unknown_expected_ids": unknown if corpus is not None else None,
            "run_file": run_path,
            "qrels_file": qrels_path,
            "rescore": _rescore_command(settings, plan, qrels_path, run_path) if any(run.values()) else None,
            "evaltool_version": __version__,
        },
        "aggregate_metrics": {name: scores.summary.get(name) for name in plan.names},
        "per_category": group_table(queries, outcomes, scores, plan, "category"),
        "per_difficulty": group_table(queries, outcomes, scores, plan, "difficulty"),
        "detailed_results": [
            detailed_result(q, outcomes[q.qid], query_metrics(scores.per_query.get(q.qid), plan)) for q in queries
        ],
    }
    write_together(
        [
            (run_path, trec_run_text(run, tag)),
            (qrels_path, trec_qrels_text(queries, run)),
            (report_path, dump_json(report)),
        ]
    )
    checkpoint.remove()
    result = BenchResult(report, report_path, run_path, qrels_path, plan, queries, outcomes)
    listener.completed(result)
    return result
