"""From outcomes to numbers: every value comes from :func:`evaltool.evaluate`.

The queries that got an answer become a qrels dict (``expected_modules`` and
``relevant_ids`` are grade 1, ``qrels`` as given) and a run dict whose scores are
``n - position`` (so any tool ranks the ids exactly as the backend returned them); both
go to one ``evaluate(..., complete=True)`` call, so a query that returned nothing scores
0 rather than being skipped. Failed queries have no metrics and are left out of the
averages, which the report says. The same two dicts are written as TREC files, so
``evaltool -c -m ... QRELS RUN`` prints the report's numbers again.

Measures are named as written (``precision@3``, ``recall@10``, ``mrr`` by
default; ``-m ndcg_cut.10`` reports ``ndcg_cut_10``). Every query's ``hits_in_top_3``,
``hits_in_top_5`` and ``first_relevant_position`` are evaltool's ``hits@3``, ``hits@5``
and ``first_relevant_position``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from evaltool.measures import DEFAULT_SETS
from evaltool.measures.base import Measure
from evaltool.names import parse_measures
from evaltool.bench.checkpoint import Outcome
from evaltool.bench.queries import BenchQuery

HIT_CUTOFFS = (3, 5)
FIRST_RELEVANT = "first_relevant_position"
HELPER_MEASURES = (*(f"hits@{k}" for k in HIT_CUTOFFS), FIRST_RELEVANT)
GROUP_FIELDS = ("category", "difficulty")


@dataclass
class MeasurePlan:
    """The measures asked for (``-m`` or the defaults): output names in the order asked, and
    the registry measure behind each (``P``, ``recall``, ``RR``...: its declaration says, for
    instance, whether the report shows it as a percentage)."""

    specs: list[str]
    names: list[str]
    kinds: dict[str, Measure]

    @property
    def eval_specs(self) -> list[str]:
        return [*self.specs, *HELPER_MEASURES]


def plan_measures(specs) -> MeasurePlan:
    """Check the measure names now (MeasureError), before any query is sent."""
    specs = list(specs) or list(DEFAULT_SETS["bench"])
    kinds: dict[str, Measure] = {}
    for spec in specs:
        for request in parse_measures([spec]):
            for name in request.names:
                kinds.setdefault(name, request.measure)
    return MeasurePlan(specs, list(kinds), kinds)


def run_dict(queries: list[BenchQuery], outcomes: dict[str, Outcome]) -> dict[str, dict[str, float]]:
    """``{qid: {id: n - position}}`` of every query that got an answer, in the queries' order."""
    out = {}
    for query in queries:
        outcome = outcomes.get(query.qid)
        if outcome is not None and outcome.error is None:
            n = len(outcome.ids)
            out[query.qid] = {doc: float(n - i) for i, doc in enumerate(outcome.ids)}
    return out


def trec_run_text(run: dict[str, dict[str, float]], tag: str) -> str:
    lines = [
        f"{qid} Q0 {doc} {rank} {score:g} {tag}"
        for qid, docs in run.items()
        for rank, (doc, score) in enumerate(docs.items(), 1)
    ]
    return "".join(line + "\n" for line in lines)


def trec_qrels_text(queries: list[BenchQuery], run: dict) -> str:
    return "".join(f"{q.qid} 0 {doc} {grade}\n" for q in queries if q.qid in run for doc, grade in q.judgments.items())


def _evaluate(qrels: dict, run: dict, plan: MeasurePlan, relevance_level: int, runid: str, topics=None):
    """``evaluate()`` of the answered queries; one answered with nothing is a ranking of none: it scores 0.

    Its warnings are not passed on: they speak of a qrels file and a run that do not match
    ("are these judgments for this run?" when most queries retrieved nothing), and here
    both are built from the same queries.
    """
    import warnings

    from evaltool.errors import EvaltoolWarning
    from evaltool.inputs import Run
    from evaltool.evaluation import evaluate

    if not any(run.values()):  # nothing retrieved at all: a Run that names every query and holds no row
        zeros = np.zeros(0, dtype=np.int64)
        run = Run(list(run), zeros, [], zeros, np.zeros(0), zeros, runid=runid, path="<bench>")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaltoolWarning)
        return evaluate(
            qrels,
            run,
            plan.eval_specs,
            complete=True,
            relevance_level=relevance_level,
            runid=runid,
            group_by=GROUP_FIELDS if topics else (),
            topics=topics,
        )


@dataclass
class Scores:
    """Evaluated values: per query (by qid), the summary and per group, all by evaltool output name."""

    per_query: dict[str, dict]
    summary: dict
    groups: dict[str, dict[str, dict]]


def score(
    queries: list[BenchQuery],
    outcomes: dict[str, Outcome],
    plan: MeasurePlan,
    relevance_level: int = 1,
    runid: str = "bench",
    with_groups: bool = True,
) -> Scores:
    """One ``evaluate()`` over every query that got an answer (see the module docstring)."""
    run = run_dict(queries, outcomes)
    if not run:
        return Scores({}, {}, {field: {} for field in GROUP_FIELDS})
    topics = {q.qid: {field: getattr(q, field) for field in GROUP_FIELDS} for q in queries} if with_groups else None
    result = _evaluate({q.qid: q.judgments for q in queries if q.qid in run}, run, plan, relevance_level, runid, topics)
    return Scores(result.per_query, result.summary, result.groups)


def query_metrics(values: dict | None, plan: MeasurePlan) -> dict | None:
    """The report's ``metrics`` of one query: asked measures, hits, first relevant position."""
    if values is None:
        return None
    metrics = {name: values[name] for name in plan.names if name in values}
    for k in HIT_CUTOFFS:
        metrics[f"hits_in_top_{k}"] = int(values[f"hits@{k}"])
    first = values[FIRST_RELEVANT]
    metrics[FIRST_RELEVANT] = None if math.isnan(first) else int(first)
    return metrics


def score_one(query: BenchQuery, outcome: Outcome, plan: MeasurePlan, relevance_level: int = 1) -> dict | None:
    """The metrics of one finished query (for ``--verbose``), by the same ``evaluate()``."""
    scores = score([query], {query.qid: outcome}, plan, relevance_level, with_groups=False)
    return query_metrics(scores.per_query.get(query.qid), plan)


def group_table(
    queries: list[BenchQuery], outcomes: dict[str, Outcome], scores: Scores, plan: MeasurePlan, field: str
) -> dict[str, dict]:
    """``{value: {"count", "failed", metric...}}`` for one field; a group whose queries all failed has nulls.

    ``count`` is the group's queries that got an answer (the ones its means are over).
    """
    from evaltool.evaluation.groups import group_queries

    qids = [q.qid for q in queries]
    table: dict[str, dict] = {}
    for value, positions in group_queries(qids, {q.qid: getattr(q, field) for q in queries}).items():
        summary = scores.groups.get(field, {}).get(value, {})
        table[value] = {
            "count": summary.get("count", 0),
            "failed": sum(outcomes[qids[i]].error is not None for i in positions),
            **{name: summary.get(name) for name in plan.names},
        }
    return table


def latency(outcomes: list[Outcome]) -> dict:
    """p50, p95, mean and max execution time (ms) of the queries that got an answer."""
    times = np.array([o.execution_time_ms for o in outcomes if o.error is None])
    if len(times) == 0:
        return {"p50": None, "p95": None, "mean": None, "max": None}
    return {
        "p50": round(float(np.percentile(times, 50)), 3),
        "p95": round(float(np.percentile(times, 95)), 3),
        "mean": round(float(times.mean()), 3),
        "max": round(float(times.max()), 3),
    }


def redirect_counts(outcomes: list[Outcome]) -> dict:
    """How many redirects the queries met: followed within the origin, followed to another origin
    (without the ``--header`` headers), refused (to another origin, not asked to follow)."""
    met = [r for o in outcomes for r in (o.redirects or ())]
    return {
        "followed_same_origin": sum(r["followed"] and not r["cross_origin"] for r in met),
        "followed_cross_origin": sum(r["followed"] and r["cross_origin"] for r in met),
        "refused": sum(not r["followed"] for r in met),
    }


def detailed_result(query: BenchQuery, outcome: Outcome, metrics: dict | None) -> dict:
    """One entry of ``detailed_results``: the query, what was expected and returned, its metrics and latency
    (plus error, attempts, duplicates, HTTP status)."""
    entry = {"query_id": query.id, "query": query.text}
    if query.version is not None:
        entry["version"] = query.version
    entry.update(
        {
            "category": query.category,
            "difficulty": query.difficulty,
            query.expected_field: query.expected,
            query.returned_field: outcome.ids,
        }
    )
    if outcome.scores is not None:
        entry["returned_scores"] = outcome.scores
    entry.update(
        {
            "metrics": metrics,
            "execution_time_ms": outcome.execution_time_ms,
            "error": outcome.error,
            "attempts": outcome.attempts,
            "duplicates_removed": outcome.duplicates_removed,
            "http_status": outcome.http_status,
        }
    )
    if outcome.redirects:
        entry["redirects"] = outcome.redirects
    if query.fields:
        entry["fields"] = query.fields
    return entry
