"""The library entry point: inputs in, :class:`EvalResult` out. No printing, no exit codes."""

from __future__ import annotations

import inspect
import os
import time

import numpy as np

from evaltool.errors import EvaltoolError, InputError
from evaltool.inputs import Qrels, Run
from evaltool.io.load import (
    Loaded, columnar_for_many, load_judgments, load_results, read_run_ahead, streamed_format,
)
from evaltool.io.zscores import read_zscores
from evaltool.measures.base import Agg, Params
from evaltool.names import parse_measures
from evaltool.ranking import RankOptions, byte_key, rank
from evaltool.results import (
    Column, EvalResult, check_thresholds, finish, resolve_topics, summarize_columns, threshold_request, to_zscores,
)

__all__ = ["EvalResult", "Evaluator", "evaluate"]


F1_TOTALS = ("retrieved", "top-k")  # token F1's relevant items: found among all items, or in the top K


def _cutoffs(requests) -> list[int]:
    """The rank cutoffs asked for (``P.5,10``: 5 and 10; ``nDCG@10``: 10), for ``meta.relevance.k``."""
    found = set()
    for request in requests:
        m = request.measure
        if m.params is Params.CUTOFFS:
            found.update(request.values)
        elif m.params is Params.NAMED and m.at_option is not None:
            k = dict(request.values).get(m.at_option.name)
            if k is not None:
                found.add(int(k))
    return sorted(found)


def batch_columns(requests, batch, ztable) -> list[Column]:
    """Every output of every request for one batch of queries (``-c`` and ``-Z`` applied)."""
    columns = []
    for request in requests:
        m = request.measure
        values = request.compute(batch)
        for j, name in enumerate(request.names):
            if isinstance(values, list):
                col = list(values)
                if m.on_missing is not None:
                    col = [m.on_missing if batch.missing[i] else v for i, v in enumerate(col)]
            else:
                col = values[:, j].copy()
                if m.on_missing is not None:
                    col[batch.missing] = m.on_missing
                if ztable is not None and m.agg is not Agg.RUNID:
                    col = to_zscores(col, batch.qids, name, ztable)
            columns.append(Column(name, request, col))
    return columns


def _merge(parts: list[tuple[list[str], list[Column]]]) -> tuple[list[str], list[Column]]:
    """Columns of several batches as one, queries in trec_eval's order (byte order)."""
    if len(parts) == 1:
        return parts[0]
    qids = [q for part_qids, _ in parts for q in part_qids]
    order = sorted(range(len(qids)), key=lambda i: byte_key(qids[i]))
    merged = []
    for j, column in enumerate(parts[0][1]):
        pieces = [cols[j].values for _, cols in parts]
        if isinstance(column.values, list):
            flat = [v for piece in pieces for v in piece]
            values = [flat[i] for i in order]
        else:
            values = np.concatenate(pieces)[order]
        merged.append(Column(column.name, column.request, values))
    return [qids[i] for i in order], merged


def score_chunk(qrels_t, chunk, requests, options: RankOptions, num_docs_in_coll: int, ztable):
    """Rank and score one chunk of whole queries (``-c`` off: absent queries are added at the end).

    Returns ``(qids, columns, missing, unjudged)``; ``qids`` is empty when no query of the
    chunk is judged, and ``unjudged`` names the chunk's run queries without judgments.
    """
    chunk_options = RankOptions(options.relevance_level, options.max_ret, options.judged_only, False)
    if len(chunk) == 0:
        return [], [], np.zeros(0, dtype=bool), set()
    try:
        ranking = rank(qrels_t, chunk, chunk_options, num_docs_in_coll)
    except InputError:
        return [], [], np.zeros(0, dtype=bool), set(chunk.qid_vocab)
    batch = ranking.batch
    return batch.qids, batch_columns(requests, batch, ztable), batch.missing, set(ranking.unjudged_run_queries)


class ChunkedScores:
    """Scores of a run evaluated in pieces of whole queries (``--stream``, the Dask engine)."""

    def __init__(self):
        self.parts: list = []
        self.seen: set = set()
        self.unjudged: set = set()
        self.rows = self.duplicates = 0
        self.tag = ""

    def add(self, qids, columns, missing, unjudged, rows: int, duplicates: int, tag: str) -> None:
        """One piece: its scored queries and the counts of the rows it was read from."""
        self.tag = tag or self.tag
        self.rows += rows
        self.duplicates += duplicates
        self.unjudged.update(unjudged)
        if len(qids):
            self.seen.update(qids)
            self.parts.append((qids, columns, missing))

    def finish(self, qrels_t, requests, options: RankOptions, num_docs_in_coll: int, ztable, path: str, runid):
        """``-c``'s absent queries added, the pieces' columns and the run's counts (as ``evaluate`` uses them)."""
        qrels_qids = set(qrels_t.queries_with())
        absent = sorted(qrels_qids - self.seen, key=byte_key)
        parts = list(self.parts)
        if options.complete and absent:
            empty = Run(list(absent), np.zeros(0, np.int64), [], np.zeros(0, np.int64), np.zeros(0), None,
                        runid=self.tag)
            ranking = rank(qrels_t, empty, options, num_docs_in_coll)
            keep = np.array([q not in self.seen for q in ranking.batch.qids])
            columns = batch_columns(requests, ranking.batch, ztable)
            for column in columns:
                column.values = ([v for v, k in zip(column.values, keep) if k] if isinstance(column.values, list)
                                 else column.values[keep])
            parts.append(([q for q, k in zip(ranking.batch.qids, keep) if k], columns, ranking.batch.missing[keep]))
        if not self.seen:  # also under -c, where every judged query would score 0
            raise InputError(f"no query of {path} has judgments in {qrels_t.path}")
        missing = int(sum(p[2].sum() for p in parts))
        skipped = [] if options.complete else absent
        info = {"runid": runid if runid is not None else self.tag, "path": path, "rows": self.rows,
                "duplicates": self.duplicates, "skipped": skipped,
                "unjudged": sorted(self.unjudged - qrels_qids), "missing": missing}
        return [(q, c) for q, c, _ in parts], info


def _stream_parts(qrels_t, run, requests, options, num_docs_in_coll, ztable, on_duplicate, runid, jobs):
    """Evaluate a grouped run chunk by chunk; memory stays bounded by one chunk."""
    from evaltool.io.stream import NotGroupedError, iter_partitions, iter_run_chunks

    if not isinstance(run, (str, os.PathLike)):
        raise EvaltoolError("--stream reads a run file; give a path")
    path = os.fspath(run)

    def consume(chunks) -> ChunkedScores:
        scores = ChunkedScores()
        for chunk in chunks:
            scored = score_chunk(qrels_t, chunk, requests, options, num_docs_in_coll, ztable)
            scores.add(*scored, rows=len(chunk), duplicates=chunk.duplicates_resolved, tag=chunk.runid)
        return scores

    try:
        scores = consume(iter_run_chunks(run, on_duplicate=on_duplicate, jobs=jobs))
    except NotGroupedError:
        scores = consume(iter_partitions(run, on_duplicate=on_duplicate, jobs=jobs))
    return scores.finish(qrels_t, requests, options, num_docs_in_coll, ztable, path, runid)


def evaluate(
    qrels,
    run,
    measures=None,
    per_query: bool = False,
    *,
    relevance_level: int = 1,
    complete: bool = False,
    max_ret: int | None = None,
    judged_only: bool = False,
    num_docs_in_coll: int = 0,
    zscores: str | None = None,
    on_duplicate: str = "error",
    runid: str | None = None,
    stream: bool = False,
    relevance: str = "auto",
    packs=None,
    f1_threshold: float = 0.3,
    f1_total: str = "retrieved",
    qrels_format: str | None = None,
    run_format: str | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    partitions: int | None = None,
    group_by=(),
    topics=None,
    thresholds=None,
    jobs: int | None = None,
) -> EvalResult:
    """Score ``run`` against ``qrels`` with trec_eval's semantics.

    ``measures`` takes trec_eval names (``"ndcg_cut.10"``, ``"P.5,10"``, ``"official"``),
    ir_measures' (``"nDCG@10"``, ``"P(rel=2)@5"``) and the aliases of :mod:`evaltool.names`
    (``"ndcg_at_10"``, ``"mrr"``); the keyword options mirror trec_eval's ``-l``, ``-c``, ``-M``,
    ``-J``, ``-N``, ``-Z``.
    ``per_query`` (trec_eval's ``-q``) puts the per-query values into ``to_json()``;
    ``result.per_query`` is available either way. ``stream=True`` reads a run file
    grouped by query chunk by chunk, so memory stays bounded; results are identical.
    ``jobs`` is how many threads read a big TREC file (default: every core).

    ``qrels`` may also be a queries file (JSON or JSONL) and ``run`` a JSONL results file
    (:mod:`evaltool.io.jsonl`; ``qrels_format`` / ``run_format`` force a format). Each
    query is then judged by the first source that applies (:mod:`evaltool.relevance`):
    its own qrels, a pack (``packs``: names, ``module:attr`` or objects; default every
    installed pack), token F1 of its expected answer against the item texts
    (``f1_threshold``); ``f1_total="top-k"`` judges only each query's top K items by F1,
    K the largest cutoff of ``measures`` (the relevant items are those found in the top K,
    the seed's rule; default ``"retrieved"``: those found among all retrieved items).
    ``relevance`` (``auto``, ``qrels``, ``pack``, ``token-f1``) allows
    one source only; ``meta["relevance"]`` records what judged the queries.

    ``engine="dask"`` scores a run file on a Dask cluster (``scheduler``: its address;
    default a local cluster), cut into ``partitions`` by query (:mod:`evaltool.engines.dask`);
    the result is identical to the local engine's.

    After the kernels, :mod:`evaltool.results` adds (see :class:`EvalResult`):
    ``group_by`` (a field or several) summarises each group of queries sharing a value of
    the field in ``topics`` (a topics file, :class:`~evaltool.io.topics.Topics` or
    ``{qid: {field: value}}``; a queries file is its own topics); ``thresholds`` labels
    every row good / fair / poor: True for the defaults, a mapping ``{measure: value}``,
    or ``["NAME=VALUE", "NAME=off"]`` changing the defaults. Queries left out are
    reported in ``result.warnings`` and as :class:`~evaltool.errors.EvaltoolWarning`.

    >>> result = evaluate({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 2.0, "d2": 1.0}}, ["P.1", "map"])
    >>> result.summary
    {'map': 1.0, 'P_1': 1.0}
    """
    if isinstance(measures, str):
        measures = [measures]
    requests = parse_measures(measures)
    in_force, given = threshold_request(thresholds)
    if in_force is not None:
        check_thresholds(in_force, [name for r in requests for name in r.names], given)
    if relevance_level < 0:
        raise EvaltoolError(
            f"relevance level (-l) {relevance_level}: expected 0 or more (negative grades mean "
            "'in the pool but unjudged' and never count as relevant)"
        )
    if max_ret is not None and max_ret < 0:
        raise EvaltoolError(f"maximum documents per query (-M) {max_ret}: expected 0 or more")
    from evaltool.relevance.resolve import check_options, relevance_meta, resolve

    check_options(relevance, f1_threshold)
    if f1_total not in F1_TOTALS:
        raise EvaltoolError(f"f1_total {f1_total!r}: expected one of {', '.join(F1_TOTALS)}")
    f1_depth = None
    if f1_total == "top-k":
        if not _cutoffs(requests):
            raise EvaltoolError("--f1-total top-k judges the top K items; give a measure with a cutoff "
                                "(such as ndcg@10 or recall.5) to say K")
        f1_depth = max(_cutoffs(requests))
    options = RankOptions(relevance_level, max_ret, judged_only, complete)
    ztable = read_zscores(zscores) if zscores else None
    clock = time.perf_counter()
    judgments, qrels_kind = load_judgments(qrels, on_duplicate, qrels_format,
                                           subtopics=any(r.measure.subtopics for r in requests), jobs=jobs)
    fields, table = resolve_topics(group_by, topics, judgments)
    timings = {}
    resolution = None
    from evaltool.engines import ENGINES

    if engine not in ENGINES:
        raise EvaltoolError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    if engine == "dask":
        run_kind = run_format or streamed_format(run)
        if not isinstance(judgments, Qrels) or relevance not in ("auto", "qrels") or run_kind != "trec" or stream:
            raise EvaltoolError("--engine dask reads a TREC run scored against TREC qrels; queries files, "
                                "JSONL results, --relevance and --stream need the local engine")
        from evaltool.engines.dask import dask_parts

        qrels_t = judgments
        parts, info = dask_parts(qrels_t, run, requests, measures, options, num_docs_in_coll, ztable, on_duplicate,
                                 runid, scheduler=scheduler, partitions=partitions)
        timings["dask"] = time.perf_counter() - clock
        clock = time.perf_counter()
    elif stream:
        run_kind = run_format or streamed_format(run)
        if not isinstance(judgments, Qrels) or relevance not in ("auto", "qrels") or run_kind != "trec":
            raise EvaltoolError("--stream reads a TREC run scored against TREC qrels; "
                                "queries files, JSONL results and --relevance need it off")
        qrels_t = judgments
        parts, info = _stream_parts(qrels_t, run, requests, options, num_docs_in_coll, ztable, on_duplicate, runid,
                                    jobs)
        timings["stream"] = time.perf_counter() - clock
        clock = time.perf_counter()
    else:
        results, run_kind = load_results(run, on_duplicate, runid, run_format, jobs)
        resolution = resolve(judgments, results, mode=relevance, packs=packs, f1_threshold=f1_threshold,
                             relevance_level=relevance_level, f1_depth=f1_depth)
        qrels_t, run_t = resolution.qrels, resolution.run
        if runid is not None:
            run_t.runid = runid
        timings["parse"] = time.perf_counter() - clock
        clock = time.perf_counter()
        ranking = rank(qrels_t, run_t, options, num_docs_in_coll)
        batch = ranking.batch
        timings["rank"] = time.perf_counter() - clock
        clock = time.perf_counter()
        parts = [(batch.qids, batch_columns(requests, batch, ztable))]
        info = {"runid": ranking.runid, "path": run_t.path, "rows": len(run_t),
                "duplicates": run_t.duplicates_resolved, "skipped": ranking.skipped_qrels_queries,
                "unjudged": ranking.unjudged_run_queries, "missing": int(batch.missing.sum())}
    qids, columns = _merge(parts)

    n = len(qids)
    summary = summarize_columns(columns, n, info["runid"], zscores=ztable is not None,
                                qrels_if_complete=qrels_t if complete else None)
    timings["measures"] = time.perf_counter() - clock
    meta = {
        "qrels": qrels_t.path,
        "run": info["path"],
        "runid": info["runid"],
        "options": {
            "relevance_level": relevance_level,
            "complete": complete,
            "max_ret": max_ret,
            "judged_only": judged_only,
            "num_docs_in_coll": num_docs_in_coll,
            "zscores": zscores,
            "on_duplicate": on_duplicate,
        },
        "counts": {
            "queries_evaluated": n,
            "queries_missing_from_run": info["missing"] + len(info["skipped"]),
            "queries_skipped": len(info["skipped"]),
            "qrels_rows": len(qrels_t),
            "run_rows": info["rows"],
            "qrels_duplicates_resolved": qrels_t.duplicates_resolved,
            "run_duplicates_resolved": info["duplicates"],
        },
        "skipped_queries": info["skipped"],
        "run_queries_without_judgments": info["unjudged"],
    }
    meta["relevance"] = relevance_meta(resolution, qids, qrels_t, mode=relevance, relevance_level=relevance_level,
                                       cutoffs=_cutoffs(requests), f1_threshold=f1_threshold,
                                       inputs={"qrels": qrels_kind, "run": run_kind})
    meta["relevance"]["f1_total"] = f1_total
    strategies = resolution.strategies if resolution else {}
    result = EvalResult(qids, columns, summary, meta, zscores=ztable is not None, timings=timings,
                        per_query_requested=per_query, strategies={q: strategies.get(q, "qrels") for q in qids})
    return finish(result, fields=fields, topics=table, thresholds=in_force)


class Evaluator:
    """Judgments and measures prepared once, for scoring run after run (training loops,
    ablations, ir_measures-style providers).

    ``Evaluator(qrels, measures, **options)`` takes what :func:`evaluate` takes except the
    run; ``ev.evaluate(run, per_query)`` returns what ``evaluate(qrels, run, measures,
    per_query, **options)`` returns, without reading the judgments or parsing the measure
    names again. An unknown measure or option fails at construction.

    >>> ev = Evaluator({"q1": {"d1": 1, "d2": 0}}, ["P.1", "map"])
    >>> ev.evaluate({"q1": {"d1": 2.0, "d2": 1.0}}).summary
    {'map': 1.0, 'P_1': 1.0}
    >>> ev.evaluate({"q1": {"d1": 1.0, "d2": 2.0}}).summary
    {'map': 0.5, 'P_1': 0.0}
    """

    def __init__(self, qrels, measures=None, **options):
        unknown = sorted(set(options) - _OPTIONS)
        if unknown:
            raise TypeError(f"Evaluator() got unexpected keyword argument(s) {', '.join(unknown)}; "
                            f"it takes evaluate()'s: {', '.join(sorted(_OPTIONS))}")
        self.measures = [measures] if isinstance(measures, str) else measures
        requests = parse_measures(self.measures)
        self.options = options
        judgments, kind = load_judgments(qrels, options.get("on_duplicate", "error"), options.get("qrels_format"),
                                         subtopics=any(r.measure.subtopics for r in requests), jobs=options.get("jobs"))
        self._judgments = Loaded(judgments, kind)

    def evaluate(self, run, per_query: bool = False) -> EvalResult:
        """Score one run (a path, dict, DataFrame, ...) against the prepared judgments."""
        return evaluate(self._judgments, run, self.measures, per_query, **self.options)

    def evaluate_many(self, runs, per_query: bool = False) -> list[EvalResult]:
        """Score several runs; each result equals ``self.evaluate(run, per_query)``.

        Runs are read and scored in threads (``jobs``, default every core; pyarrow reads
        every TREC run file when they are big together), at most that many at once; an error is that of the first
        run, in order, that fails. With ``stream`` or another engine, which read their run
        themselves, runs go one by one.

        >>> ev = Evaluator({"q1": {"d1": 1, "d2": 0}}, ["P.1"])
        >>> [r.summary for r in ev.evaluate_many([{"q1": {"d1": 2.0, "d2": 1.0}}, {"q1": {"d2": 1.0}}])]
        [{'P_1': 1.0}, {'P_1': 0.0}]
        """
        runs = list(runs)
        if sum(isinstance(run, (str, os.PathLike)) and os.fspath(run) == "-" for run in runs) > 1:
            raise EvaltoolError("standard input ('-') holds one run; it was given more than once")
        if self.options.get("stream") or self.options.get("engine", "local") != "local":
            return [self.evaluate(run, per_query) for run in runs]
        policy, fmt, jobs = (self.options.get(name) for name in ("on_duplicate", "run_format", "jobs"))
        min_bytes = columnar_for_many(runs)

        def work(run):
            return self.evaluate(read_run_ahead(run, policy or "error", fmt, jobs, min_bytes), per_query)

        from evaltool.io.columnar import threads
        from evaltool.io.common import in_order

        return list(in_order(work, runs, max(1, min(threads(jobs), len(runs)))))


_OPTIONS = frozenset(name for name, parameter in inspect.signature(evaluate).parameters.items()
                     if parameter.kind is inspect.Parameter.KEYWORD_ONLY)
