"""Reciprocal rank (ir_measures' ``RR``, trec_eval's ``recip_rank``, ``MRR@K`` with a cutoff) and the
position of the first relevant document."""

from __future__ import annotations

import numpy as np

from evaltool.measures.base import (
    Better,
    CUTOFF,
    JUDGED_ONLY,
    PYTREC,
    REL,
    Agg,
    Option,
    Settings,
    measure,
)
from evaltool.measures.restrict import view

BEYOND = Option(
    "beyond",
    str,
    "zero",
    choices=("zero", "k+1"),
    doc="a first relevant document past the cutoff k scores 0 ('zero') or 1/(k+1) ('k+1')",
    needs_at=True,
)


def first_relevant_rank(batch) -> np.ndarray:
    """0-based rank of each query's first relevant retrieved document, -1 if none: the rank of the
    query's first of the batch's relevant rows (:attr:`~evaltool.ranking.RankedBatch.rel_rows`)."""
    rows = batch.rel_rows
    if not len(rows):
        return np.full(batch.n_queries, -1, dtype=np.int64)
    return np.where(batch.num_rel_ret > 0, batch.rank[rows[np.minimum(batch.rel_first, len(rows) - 1)]], -1)


RR_OPTIONS = (CUTOFF, REL, JUDGED_ONLY, BEYOND)
RR_DEFAULTS = Settings.defaults(RR_OPTIONS)  # recip_rank's: read, never changed, by the kernel


@measure("RR", options=RR_OPTIONS, aliases=("MRR", "mrr", "mrr_at_k"), oracle=PYTREC)
def named_reciprocal_rank(batch, p):
    """Reciprocal rank: 1 / rank of the first relevant document; the mean over queries is MRR.

    With a cutoff k the search stops at rank k (ir_measures' ``RR@k``, MS MARCO's
    MRR@10): a first relevant document past k, or none at all, scores 0. With
    ``beyond='k+1'`` it scores 1/(k+1) instead, as if it were at rank k+1: the
    ``MRR@K = mean of 1 / min(rank, K+1)`` some RAG benchmarks define,
    which gives a first relevant document at rank 7 with K = 5 the value 1/6; a query with
    no relevant document retrieved also scores 1/(k+1) (min(inf, K+1)). Without a cutoff,
    trec_eval's ``recip_rank``. (Kantor & Voorhees 2000.)

    Edge cases: 0 when no relevant document is retrieved (within k), unless ``beyond='k+1'``.

    >>> from evaltool import evaluate
    >>> qrels, run = {"q": {"b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}
    >>> evaluate(qrels, run, ["RR", "RR@2", "RR(beyond='k+1')@2", "mrr"]).summary
    {'RR': 0.3333333333333333, 'RR@2': 0.0, "RR(beyond='k+1')@2": 0.3333333333333333, 'mrr': 0.3333333333333333}
    """
    rank = first_relevant_rank(view(batch, p))
    found = rank >= 0
    if p.cutoff is not None:
        found &= rank < p.cutoff
    out = np.where(found, 1.0 / (np.maximum(rank, 0) + 1.0), 0.0)
    if p.beyond == "k+1":
        out = np.where(found, out, 1.0 / (p.cutoff + 1.0))
    return out


@measure("recip_rank", same_as="RR")
def reciprocal_rank(batch, params):
    """1 / rank of the first relevant retrieved document: trec_eval's spelling of ``RR``, computed by its kernel.

    Edge cases: 0 when no relevant document is retrieved (or the query has none).
    (Kantor & Voorhees 2000; trec_eval 10.0, ``m_recip_rank.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"b": 1}}, {"q": {"a": 3.0, "b": 2.0}}, ["recip_rank"]).summary
    {'recip_rank': 0.5}
    """
    return named_reciprocal_rank(batch, RR_DEFAULTS)


@measure(
    "FirstRelPos",
    options=(REL, JUDGED_ONLY),
    better=Better.LOWER,
    agg=Agg.MEAN_DEFINED,
    integer=True,
    aliases=("first_relevant_position",),
    oracle="none: evaltool's own (1 / RR)",
)
def first_relevant_position(batch, p):
    """1-based rank of the first relevant retrieved document, an integer; no value when none is retrieved.

    A query without one has no value: nan in Python, printed ``-nan`` as trec_eval prints
    a value that does not exist (its 0/0 cases), ``null`` in JSON. The summary is the mean
    rank over the queries that have one, a float (nan if none does): a query with nothing
    relevant retrieved has no rank to average, and counting it as any number would invent
    one (RR, which scores it 0, is the measure that penalises it). Neither trec_eval nor
    ir_measures defines the measure. 1 / this value is the reciprocal rank. Also spelt
    ``first_relevant_position``, as RAG evaluation notebooks name it.

    Edge cases: nan when no relevant document is retrieved; the summary leaves such queries out, nan
    if all are. (Kantor & Voorhees 2000, the reciprocal of RR.)

    >>> from evaltool import evaluate
    >>> result = evaluate({"q": {"b": 1}, "r": {"c": 1}, "s": {"e": 1}},
    ...                   {"q": {"a": 2.0, "b": 1.0}, "r": {"d": 1.0}, "s": {"e": 1.0}},
    ...                   ["first_relevant_position"], per_query=True)
    >>> result.per_query
    {'q': {'first_relevant_position': 2}, 'r': {'first_relevant_position': nan}, 's': {'first_relevant_position': 1}}
    >>> result.summary
    {'first_relevant_position': 1.5}
    """
    rank = first_relevant_rank(view(batch, p))
    return np.where(rank >= 0, rank + 1.0, np.nan)
