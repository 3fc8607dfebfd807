"""The local engine: the run scored in this process, whole or (``--stream``) chunk by chunk.

A whole run is read at once (:func:`evaltool.io.load.load_results`), each query judged by
the first source that applies (:func:`evaltool.relevance.resolve.resolve`), ranked and
scored as one batch. A streamed run is a TREC run file read in chunks of whole queries
(grouped by query, else partitioned on disk first), each chunk ranked and scored alone:
memory stays bounded by one chunk and, query values being independent, the merged
result is identical.
"""

from __future__ import annotations

import os
import time

from evaltool.errors import EvaltoolError
from evaltool.evaluation.scoring import ChunkedScores, Scored, batch_columns, score_chunk
from evaltool.inputs import Qrels
from evaltool.ranking import rank


def score(plan, judgments, run) -> Scored:
    """Score ``run`` against ``judgments`` (Qrels or Queries) under ``plan``."""
    if plan.engine.stream:
        return _streamed(plan, judgments, run)
    return _whole(plan, judgments, run)


def _whole(plan, judgments, run) -> Scored:
    from evaltool.io.load import load_results
    from evaltool.relevance.resolve import resolve

    clock = time.perf_counter()
    inputs, relevance, scoring = plan.inputs, plan.relevance, plan.scoring
    results, run_kind = load_results(run, inputs.on_duplicate, inputs.runid, inputs.run_format, inputs.jobs)
    resolution = resolve(
        judgments,
        results,
        mode=relevance.mode,
        packs=relevance.packs,
        f1_threshold=relevance.f1_threshold,
        relevance_level=scoring.ranking.relevance_level,
        f1_depth=relevance.f1_depth,
    )
    qrels_t, run_t = resolution.qrels, resolution.run
    if inputs.runid is not None:
        run_t.runid = inputs.runid
    timings = {"parse": time.perf_counter() - clock}
    clock = time.perf_counter()
    ranking = rank(qrels_t, run_t, scoring.ranking, scoring.num_docs_in_coll)
    batch = ranking.batch
    timings["rank"] = time.perf_counter() - clock
    clock = time.perf_counter()
    pieces = [(batch.qids, batch_columns(scoring.requests, batch, scoring.ztable))]
    timings["measures"] = time.perf_counter() - clock
    counts = {
        "runid": ranking.runid,
        "path": run_t.path,
        "rows": len(run_t),
        "duplicates": run_t.duplicates_resolved,
        "skipped": ranking.skipped_qrels_queries,
        "unjudged": ranking.unjudged_run_queries,
        "missing": int(batch.missing.sum()),
    }
    return Scored(pieces, counts, qrels_t, run_kind, resolution, timings)


def _streamed(plan, judgments, run) -> Scored:
    """A grouped run chunk by chunk; memory stays bounded by one chunk."""
    from evaltool.io.kinds import streamed_format
    from evaltool.io.stream import NotGroupedError, iter_partitions, iter_run_chunks

    run_kind = plan.inputs.run_format or streamed_format(run)
    if not isinstance(judgments, Qrels) or plan.relevance.mode not in ("auto", "qrels") or run_kind != "trec":
        raise EvaltoolError(
            "--stream reads a TREC run scored against TREC qrels; "
            "queries files, JSONL results and --relevance need it off"
        )
    if not isinstance(run, (str, os.PathLike)):
        raise EvaltoolError("--stream reads a run file; give a path")
    clock = time.perf_counter()
    path = os.fspath(run)
    on_duplicate, jobs = plan.inputs.on_duplicate, plan.inputs.jobs

    def consume(chunks) -> ChunkedScores:
        scores = ChunkedScores()
        for chunk in chunks:
            scores.add(
                score_chunk(judgments, chunk, plan.scoring),
                rows=len(chunk),
                duplicates=chunk.duplicates_resolved,
                tag=chunk.runid,
            )
        return scores

    try:
        scores = consume(iter_run_chunks(run, on_duplicate=on_duplicate, jobs=jobs))
    except NotGroupedError:
        scores = consume(iter_partitions(run, on_duplicate=on_duplicate, jobs=jobs))
    pieces, counts = scores.finish(judgments, plan.scoring, path, plan.inputs.runid)
    return Scored(pieces, counts, judgments, run_kind, timings={"stream": time.perf_counter() - clock})
