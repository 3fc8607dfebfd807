"""The library entry point: inputs in, :class:`EvalResult` out. No printing, no exit codes.

:func:`evaluate` and :class:`Evaluator` only orchestrate, in one direction:

1. the options become one :class:`~evaltool.evaluation.plan.EvalPlan`, checked once;
2. the judgments are read (:func:`evaltool.io.load.load_judgments`) and the topics to
   group by found (:func:`evaltool.io.topics.resolve_topics`);
3. an engine (:mod:`evaltool.engines`) reads the run, ranks and scores it, in pieces of
   whole queries (:mod:`evaltool.evaluation.scoring`);
4. the pieces are merged in trec_eval's query order and summarised
   (:mod:`evaltool.evaluation.result`);
5. warnings, groups and labels are added (:func:`finish`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence

from evaltool.errors import EvaltoolError
from evaltool.evaluation.groups import (
    field_order,
    field_values,
    group_queries,
    group_summaries,
    summary_series,
    ungrouped_note,
)
from evaltool.evaluation.labels import row_labels
from evaltool.evaluation.plan import OPTIONS, EvalPlan
from evaltool.evaluation.result import EvalResult, summarize_columns
from evaltool.evaluation.scoring import Scored, merge
from evaltool.evaluation.warnings import evaluation_warnings, warn
from evaltool.io.kinds import columnar_for_many
from evaltool.io.load import Loaded, load_judgments, read_run_ahead

__all__ = ["EvalPlan", "EvalResult", "Evaluator", "evaluate"]


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
    K the largest cutoff of ``measures`` (the relevant items are then those found in the
    top K; default ``"retrieved"``: those found among all retrieved items).
    ``relevance`` (``auto``, ``qrels``, ``pack``, ``token-f1``) allows
    one source only; ``meta["relevance"]`` records what judged the queries.

    ``engine="dask"`` scores a run file on a Dask cluster (``scheduler``: its address;
    default a local cluster), cut into ``partitions`` by query (:mod:`evaltool.engines.dask`);
    the result is identical to the local engine's.

    After the kernels come (see :class:`EvalResult`) groups (:mod:`evaltool.evaluation.groups`),
    labels (:mod:`evaltool.evaluation.labels`) and warnings (:mod:`evaltool.evaluation.warnings`):
    ``group_by`` (a field or several) summarises each group of queries sharing a value of
    the field in ``topics`` (a topics file, :class:`~evaltool.io.topics.Topics` or
    ``{qid: {field: value}}``; a queries file is its own topics); ``thresholds`` labels
    every row good / fair / poor: True for the defaults, a mapping ``{measure: value}``,
    or ``["NAME=VALUE", "NAME=off"]`` changing the defaults. Queries left out are
    reported in ``result.warnings`` and as :class:`~evaltool.errors.EvaltoolWarning`.

    ``measures`` may instead be an :class:`~evaltool.evaluation.plan.EvalPlan` holding the
    measures and every option (``EvalPlan.build(measures, **options)``), built once and
    reused; the keyword options are then left at their defaults.

    Parameters
    ----------
    qrels : path, dict, DataFrame, pyarrow Table or Qrels
        The judgments: a TREC qrels file, ``{qid: {docid: grade}}``, a DataFrame (pandas,
        polars) or a pyarrow Table or RecordBatch with ``query_id, doc_id, relevance`` (or
        PyTerrier's ``qid, docno, label``), or a queries
        file (JSON / JSONL) whose queries carry their judgments or expected answers.
    run : path, dict, DataFrame, pyarrow Table or Run
        The ranking: a TREC run file (``-`` is stdin), ``{qid: {docid: score}}``, a DataFrame
        or a pyarrow Table or RecordBatch with ``query_id, doc_id, score`` (or ``qid, docno,
        score``), or JSONL results.
    measures : list of str, str, EvalPlan or None
        Measure names in any accepted spelling; None: trec_eval's default set.
    per_query : bool
        Whether ``to_json()`` and ``to_dict()`` include every query's values.
    relevance_level, complete, max_ret, judged_only, num_docs_in_coll, zscores : optional
        trec_eval's ``-l``, ``-c``, ``-M``, ``-J``, ``-N`` and ``-Z`` (a file of per-topic
        means and deviations).
    on_duplicate : {"error", "first", "max"}
        What a document listed twice for a query means.
    runid : str, optional
        The run's tag in the output (default: the run file's own tag).
    relevance, packs, f1_threshold, f1_total, qrels_format, run_format : optional
        How the queries of a queries file and JSONL results are judged (see above).
    group_by, topics, thresholds : optional
        Means per group of queries, and good / fair / poor labels (see above).
    stream, jobs, engine, scheduler, partitions : optional
        How a big run is read and where it is scored; the numbers are the same.

    Returns
    -------
    EvalResult
        Per-query and summary values, groups, labels, warnings and provenance.

    Raises
    ------
    InputError
        An input that cannot be read: its message names the file, the line and what was expected.
    MeasureError
        An unknown measure, or parameters it does not take.

    Examples
    --------
    >>> result = evaluate({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 2.0, "d2": 1.0}}, ["P.1", "map"])
    >>> result.summary
    {'map': 1.0, 'P_1': 1.0}
    """
    options = {name: value for name, value in locals().items() if name in OPTIONS}  # the keywords, as given
    return _evaluate(_plan(measures, options), qrels, run, per_query)


def _evaluate(plan: EvalPlan, qrels, run, per_query: bool) -> EvalResult:
    """:func:`evaluate` once its options are a plan (what :meth:`Evaluator.evaluate` calls)."""
    clock = time.perf_counter()
    judgments, qrels_kind = load_judgments(
        qrels, plan.inputs.on_duplicate, plan.inputs.qrels_format, subtopics=plan.subtopics, jobs=plan.inputs.jobs
    )
    topics_table = None
    if plan.grouping.fields or plan.grouping.topics is not None:
        from evaltool.io.topics import resolve_topics

        _, topics_table = resolve_topics(plan.grouping.fields, plan.grouping.topics, judgments)
    reading = time.perf_counter() - clock
    from evaltool.engines import engine as engine_named

    scored = engine_named(plan.engine.name).score(plan, judgments, run)
    first_stage = next(iter(scored.timings))  # the first stage's time counts reading the judgments, as it always has
    scored.timings[first_stage] += reading
    return _result(plan, scored, qrels_kind, per_query, topics=topics_table)


def _plan(measures, options: Mapping) -> EvalPlan:
    """The plan given (``measures`` is one) or the plan of the measures and keyword options."""
    if isinstance(measures, EvalPlan):
        changed = sorted(name for name, value in options.items() if value != OPTIONS[name])
        if changed:
            raise TypeError(
                f"evaluate() was given an EvalPlan and the option(s) {', '.join(changed)}; "
                "put every option in the plan (EvalPlan.build(measures, **options))"
            )
        return measures
    return EvalPlan.build(measures, **options)


def _result(plan: EvalPlan, scored: Scored, qrels_kind: str, per_query: bool, topics) -> EvalResult:
    """The pieces merged and summarised, with meta, warnings, groups and labels."""
    from evaltool.relevance.resolve import relevance_meta

    clock = time.perf_counter()
    qids, columns = merge(scored.pieces)
    qrels_t, counts, ranking = scored.qrels, scored.run, plan.ranking
    summary = summarize_columns(
        columns,
        len(qids),
        counts["runid"],
        zscores=plan.scoring.ztable is not None,
        qrels_if_complete=qrels_t if ranking.complete else None,
    )
    timings = scored.timings
    timings["measures"] = timings.get("measures", 0.0) + time.perf_counter() - clock
    meta = {
        "qrels": qrels_t.path,
        "run": counts["path"],
        "runid": counts["runid"],
        "options": plan.options_meta(),
        "counts": {
            "queries_evaluated": len(qids),
            "queries_missing_from_run": counts["missing"] + len(counts["skipped"]),
            "queries_skipped": len(counts["skipped"]),
            "qrels_rows": len(qrels_t),
            "run_rows": counts["rows"],
            "qrels_duplicates_resolved": qrels_t.duplicates_resolved,
            "run_duplicates_resolved": counts["duplicates"],
        },
        "skipped_queries": counts["skipped"],
        "run_queries_without_judgments": counts["unjudged"],
    }
    relevance = plan.relevance
    meta["relevance"] = relevance_meta(
        scored.resolution,
        qids,
        qrels_t,
        mode=relevance.mode,
        relevance_level=ranking.relevance_level,
        cutoffs=plan.cutoffs,
        f1_threshold=relevance.f1_threshold,
        inputs={"qrels": qrels_kind, "run": scored.run_kind},
    )
    meta["relevance"]["f1_total"] = relevance.f1_total
    resolution = scored.resolution
    if resolution is None or resolution.qrels_only:
        strategies = dict.fromkeys(qids, "qrels")
    else:
        strategies = {q: resolution.strategies.get(q, "qrels") for q in qids}
    result = EvalResult(
        qids,
        columns,
        summary,
        meta,
        zscores=plan.scoring.ztable is not None,
        timings=timings,
        per_query_requested=per_query,
        strategies=strategies,
    )
    return finish(result, fields=plan.grouping.fields, topics=topics, thresholds=plan.grouping.thresholds)


def finish(
    result: EvalResult, *, fields: Sequence[str] = (), topics=None, thresholds: Mapping[str, float] | None = None
) -> EvalResult:
    """Add warnings, groups and labels to a freshly computed result (``evaluate``'s last step).

    ``fields`` and ``topics`` come from :func:`~evaltool.io.topics.resolve_topics`,
    ``thresholds`` from :func:`~evaltool.evaluation.labels.threshold_request` (None: no labels).
    """
    for message, category in evaluation_warnings(result):
        warn(result.warnings, message, category)
    if topics is not None:
        series = summary_series(result)
        for name in fields:
            groups = group_queries(result.qids, field_values(topics, name), field_order(topics, name))
            result.groups[name] = group_summaries(series, groups)
            note = ungrouped_note(topics, name, result.qids, groups)
            if note:
                warn(result.warnings, note)
    if thresholds is not None:
        result.thresholds = dict(thresholds)
        result.labels = row_labels(result, thresholds)
    return result


class Evaluator:
    """Judgments and measures prepared once, for scoring run after run (training loops,
    ablations, ir_measures-style providers).

    ``Evaluator(qrels, measures, **options)`` takes what :func:`evaluate` takes except the
    run (``measures`` may be an :class:`~evaltool.evaluation.plan.EvalPlan`); ``ev.evaluate(run, per_query)`` returns what ``evaluate(qrels, run, measures,
    per_query, **options)`` returns, without reading the judgments or parsing the measure
    names again. An unknown measure or option fails at construction.

    Parameters
    ----------
    qrels : path, dict, DataFrame, pyarrow Table or Qrels
        The judgments, as :func:`evaluate` takes them; read once, here.
    measures : list of str, str, EvalPlan or None
        Measure names (None: trec_eval's default set), or a plan holding measures and options.
    **options
        :func:`evaluate`'s keyword options (``complete``, ``relevance_level``, ...).

    Raises
    ------
    TypeError
        An option :func:`evaluate` does not take, or options given beside an EvalPlan.
    MeasureError
        An unknown measure name.
    InputError
        Judgments that cannot be read.

    Examples
    --------
    >>> ev = Evaluator({"q1": {"d1": 1, "d2": 0}}, ["P.1", "map"])
    >>> ev.evaluate({"q1": {"d1": 2.0, "d2": 1.0}}).summary
    {'map': 1.0, 'P_1': 1.0}
    >>> ev.evaluate({"q1": {"d1": 1.0, "d2": 2.0}}).summary
    {'map': 0.5, 'P_1': 0.0}
    """

    def __init__(self, qrels, measures=None, **options):
        if isinstance(measures, EvalPlan):
            if options:
                raise TypeError(
                    f"Evaluator() was given an EvalPlan and the option(s) {', '.join(sorted(options))}; "
                    "put every option in the plan"
                )
            self.plan = measures
        else:
            unknown = sorted(set(options) - set(OPTIONS))
            if unknown:
                raise TypeError(
                    f"Evaluator() got unexpected keyword argument(s) {', '.join(unknown)}; "
                    f"it takes evaluate()'s: {', '.join(sorted(OPTIONS))}"
                )
            self.plan = EvalPlan.build(measures, **options)
        inputs = self.plan.inputs
        judgments, kind = load_judgments(
            qrels, inputs.on_duplicate, inputs.qrels_format, subtopics=self.plan.subtopics, jobs=inputs.jobs
        )
        self._judgments = Loaded(judgments, kind)

    def evaluate(self, run, per_query: bool = False) -> EvalResult:
        """Score one run (a path, dict, DataFrame, ...) against the prepared judgments.

        Parameters
        ----------
        run : path, dict, DataFrame, pyarrow Table or Run
            The ranking, as :func:`evaluate` takes it.
        per_query : bool
            Whether ``to_json()`` includes every query's values.

        Returns
        -------
        EvalResult
            What ``evaluate(qrels, run, measures, per_query, **options)`` returns.
        """
        return _evaluate(self.plan, self._judgments, run, per_query)

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
        if self.plan.engine.stream or self.plan.engine.name != "local":
            return [self.evaluate(run, per_query) for run in runs]
        inputs = self.plan.inputs
        min_bytes = columnar_for_many(runs)

        def work(run):
            return self.evaluate(
                read_run_ahead(run, inputs.on_duplicate, inputs.run_format, inputs.jobs, min_bytes), per_query
            )

        from evaltool.io.columnar import threads
        from evaltool.io.common import in_order

        return list(in_order(work, runs, max(1, min(threads(inputs.jobs), len(runs)))))
