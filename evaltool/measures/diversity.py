"""Diversity (intent-aware) measures, as the TREC Web track's ``ndeval`` computes them.

They read judgments per subtopic (intent): the qrels ``query_id subtopic doc_id grade``
of :mod:`evaltool.io.subtopics`. Per subtopic, relevance is binary: a grade >= ``rel``
(default ``-l``, which defaults to 1) is relevant to that subtopic (ndeval counts any
positive judgment as 1). A query's subtopics are those with at least one relevant
document (ndeval's "actual subtopics", A); every measure is 0 for a query with none.

Novelty: a document relevant to subtopic s gains (1 - alpha)^c for s, where c is the
number of documents above it relevant to s; a document's gain is the sum over its
subtopics. The measures discount these gains by rank.

Normalisations, as ndeval's: "collection-independent" measures (``alpha_DCG``,
``ERR_IA``, ``NRBP``) divide by the value of an ideal ideal ranking, one in which every
document is relevant to every subtopic (at rank i it gains A(1 - alpha)^(i - 1));
"collection-dependent" ones (``alpha_nDCG``, ``nERR_IA``, ``nNRBP``) divide by the value
of the ideal ranking built greedily from the qrels: at each rank the judged document with
the largest gain given the documents already placed, ties to the larger document id (byte
order). Finding the true ideal is NP-hard (Clarke et al. 2008); the greedy one is the
Web track's.

Differences from ndeval: cutoffs are not limited to 20; at k = 1 ndeval leaves
alpha-DCG and ERR-IA undivided by the ideal ideal (its loop starts at rank 2, so
ERR-IA@1 reaches A), where evaltool divides at every k; nNRBP of a query without
relevant documents is 0 (ndeval divides 0 by 0). Ties in the run follow evaltool's rule
(score descending, then document id descending); ndeval sorts by rank, pyndeval by score
then document id ascending.

The docstrings' example: subtopic 1 has documents a and b, subtopic 2 a and c, subtopic 3 d
(A = 3); the run ranks b, a, x (not judged), c. With alpha = 0.5 the run's gains are
b: 1, a: 0.5 + 1 = 1.5, x: 0, c: 0.5. The greedy ideal ranking is a (2), d (1), then c
and b tie at 0.5 and c, the larger id, comes first (0.5), then b (0.5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaltool.errors import InputError, MeasureError
from evaltool.measures.base import (
    CUTOFF_REQUIRED,
    REL,
    Option,
    discount,
    measure,
    powers,
    safe_div,
)


class Fraction(Option):
    """A parameter between 0 and 1."""

    __slots__ = ()

    def check(self, value, owner: str, whole: str):
        value = super().check(value, owner, whole)
        if value > 1:
            raise MeasureError(f"measure '{whole}': {self.name} of {owner} must be at most 1, not {value!r}")
        return value


ALPHA = Fraction(
    "alpha",
    float,
    0.5,
    minimum=0,
    doc="redundancy intolerance: a document relevant to a subtopic already covered c times gains "
    "(1 - alpha)^c for it (ndeval's -alpha)",
)
ORACLE = "ir_measures (pyndeval)"
BETA = Fraction("beta", float, 0.5, minimum=0, doc="patience: rank i is weighted beta^(i - 1) (ndeval's -beta)")


@dataclass
class _Judged:
    """What a query's subtopic judgments say at one relevance level."""

    n_queries: int
    n_subtopics: int  # subtopic codes in use (a bound for (query, subtopic) keys)
    pairs: np.ndarray  # sorted (query, subtopic) keys with a relevant document
    relevant: np.ndarray  # relevant documents per pair
    actual: np.ndarray  # A: subtopics with a relevant document, per query


def _judged(batch, p) -> tuple:
    """(the batch's intents, the relevance level, _Judged); InputError without subtopic judgments."""
    intents = batch.intents
    if intents is None:
        raise InputError(
            "diversity measures need judgments per subtopic: qrels read as subtopic qrels "
            "('query_id subtopic doc_id grade', --qrels-format subtopics)"
        )
    level = batch.relevance_level if p.rel is None else p.rel
    n_sub = int(max(intents.judged_subtopic.max(initial=-1), intents.subtopic.max(initial=-1))) + 1
    relevant = intents.judged_grade >= level
    pairs, counts = np.unique(
        intents.judged_seg[relevant] * n_sub + intents.judged_subtopic[relevant], return_counts=True
    )
    actual = np.bincount(pairs // max(n_sub, 1), minlength=batch.n_queries)
    return intents, level, _Judged(batch.n_queries, n_sub, pairs, counts, actual)


def _retrieved(intents, level: int, judged: _Judged):
    """Retrieved (document, subtopic) entries relevant at ``level``: query, rank, pair key and the
    number of documents above relevant to the same subtopic, in (query, rank) order."""
    keep = intents.grade >= level
    seg, rank = intents.seg[keep], intents.rank[keep]
    pair = seg * judged.n_subtopics + intents.subtopic[keep]
    order = np.lexsort((rank, pair))
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = pair[order][1:] != pair[order][:-1]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(len(order)), 0))
    seen = np.empty(len(order), dtype=np.int64)
    seen[order] = np.arange(len(order)) - group_start
    return seg, rank, pair, seen


def _novelty_gain(seen: np.ndarray, alpha: float) -> np.ndarray:
    """(1 - alpha)^seen by repeated multiplication, as ndeval accumulates it."""
    return powers(1.0 - alpha, int(seen.max(initial=0)))[seen]


def _ideal_gains(intents, level: int, judged: _Judged, alpha: float, depth: int | None) -> np.ndarray:
    """Gains of the greedy ideal ranking, per query (rows) and rank (columns), ``depth`` ranks (None: all)."""
    keep = intents.judged_grade >= level
    seg, doc = intents.judged_seg[keep], intents.judged_doc[keep]
    pair = seg * judged.n_subtopics + intents.judged_subtopic[keep]
    n_docs = int(doc.max(initial=0)) + 1
    # candidate documents of each query, larger ids first: the first of equal gains is the one ndeval takes
    docs, doc_of = np.unique(seg * n_docs + (n_docs - 1 - doc), return_inverse=True)
    doc_query = docs // n_docs
    doc_pos = np.arange(len(docs)) - np.searchsorted(doc_query, doc_query)
    sub_pos = np.searchsorted(judged.pairs, pair) - np.searchsorted(judged.pairs, seg * judged.n_subtopics)
    width = int(doc_pos.max(initial=-1)) + 1
    steps = width if depth is None else min(depth, width)
    out = np.zeros((judged.n_queries, steps if depth is None else depth))
    if steps == 0:
        return out
    covers = np.zeros((judged.n_queries, width, int(judged.actual.max())), dtype=bool)
    covers[seg, doc_pos[doc_of.reshape(-1)], sub_pos] = True
    left = np.zeros((judged.n_queries, width), dtype=bool)
    left[doc_query, doc_pos] = True
    subtopic_gain = np.ones(covers.shape[::2])
    queries = np.arange(judged.n_queries)
    for step in range(steps):
        score = np.where(left, (covers * subtopic_gain[:, None, :]).sum(axis=2), -1.0)
        pick = score.argmax(axis=1)
        best = score[queries, pick]
        has = best >= 0
        out[has, step] = best[has]
        left[queries[has], pick[has]] = False
        subtopic_gain[has] *= np.where(covers[queries[has], pick[has]], 1.0 - alpha, 1.0)
    return out


def _ideal_ideal(actual: np.ndarray, alpha: float, weight: np.ndarray) -> np.ndarray:
    """Per query, the value of the ranking in which every document is relevant to all A subtopics."""
    return actual * float(np.sum(powers(1.0 - alpha, len(weight) - 1) * weight))


def _discounted(batch, p, weight_of_rank) -> tuple:
    """(run value, ideal ideal, greedy ideal value) of sum over ranks i <= k of gain(i) * weight(i)."""
    intents, level, judged = _judged(batch, p)
    seg, rank, _, seen = _retrieved(intents, level, judged)
    inside = rank < p.cutoff
    weight = weight_of_rank(np.arange(p.cutoff))
    got = np.bincount(
        seg[inside], weights=_novelty_gain(seen, p.alpha)[inside] * weight[rank[inside]], minlength=batch.n_queries
    )
    ideal = _ideal_gains(intents, level, judged, p.alpha, p.cutoff) @ weight
    return got, _ideal_ideal(judged.actual, p.alpha, weight), ideal


def _dcg_weight(rank: np.ndarray) -> np.ndarray:
    return 1.0 / discount(rank)


def _err_weight(rank: np.ndarray) -> np.ndarray:
    return 1.0 / (rank + 1.0)


@measure("alpha_DCG", options=(CUTOFF_REQUIRED, ALPHA, REL), subtopics=True, oracle=f"{ORACLE} for k ≥ 2")
def alpha_dcg(batch, p):
    """alpha-DCG@k over its ideal ideal: sum over ranks i <= k of gain(i) / log2(i + 1), divided by the same sum for A(1 - alpha)^(i - 1).

    gain(i) = sum over the subtopics s of the document at rank i of (1 - alpha)^c(s),
    c(s) the documents above it relevant to s; A is the number of the query's subtopics
    with a relevant document. This is ndeval's "alpha-DCG" (collection-independent
    normalisation).

    Worked example (below, k = 2, A = 3): the gains of b, a are 1 and 0.5 + 1 (a is the
    second document for subtopic 1): (1 + 1.5/log2 3) / (3 (1 + 0.5/log2 3)) = 0.49320...

    Edge cases: 0 for a query without relevant subtopics; at k = 1 ndeval does not divide
    (evaltool does: ndeval's value is A times this). (Clarke et al., SIGIR 2008; ndeval.)

    >>> from evaltool import evaluate
    >>> qrels = {"q": {"1": {"a": 1, "b": 1}, "2": {"a": 1, "c": 1}, "3": {"d": 1}}}
    >>> run = {"q": {"b": 4.0, "a": 3.0, "x": 2.0, "c": 1.0}}
    >>> round(evaluate(qrels, run, ["alpha_DCG@2"]).summary["alpha_DCG@2"], 12)
    0.493208311045
    """
    got, ideal_ideal, _ = _discounted(batch, p, _dcg_weight)
    return safe_div(got, ideal_ideal)


@measure(
    "alpha_nDCG",
    options=(CUTOFF_REQUIRED, ALPHA, REL),
    aliases=("alpha_ndcg", "alpha_ndcg_at_k"),
    subtopics=True,
    oracle=ORACLE,
)
def alpha_ndcg(batch, p):
    """alpha-nDCG@k: alpha-DCG of the top k / alpha-DCG of the greedy ideal top k.

    Gains as for ``alpha_DCG``; the ideal ranking is ndeval's greedy one: at each rank the
    judged document with the largest gain given those above it, ties to the larger
    document id. ``alpha=0`` gives no novelty penalty (every subtopic of every
    document counts); ``alpha=1`` counts each subtopic once.

    Worked example (below, k = 2): run gains b 1, a 1.5; the greedy ideal is a (2), d (1):
    (1 + 1.5/log2 3) / (2 + 1/log2 3) = 0.73981...

    Edge cases: 0 for a query without relevant subtopics or when nothing relevant is in
    the top k. (Clarke, Kolla, Cormack, Vechtomova, Ashkan, Büttcher & MacKinnon,
    "Novelty and diversity in information retrieval evaluation", SIGIR 2008; ndeval.)

    >>> from evaltool import evaluate
    >>> qrels = {"q": {"1": {"a": 1, "b": 1}, "2": {"a": 1, "c": 1}, "3": {"d": 1}}}
    >>> run = {"q": {"b": 4.0, "a": 3.0, "x": 2.0, "c": 1.0}}
    >>> round(evaluate(qrels, run, ["alpha_nDCG@2"]).summary["alpha_nDCG@2"], 12)
    0.739812466568
    """
    got, _, ideal = _discounted(batch, p, _dcg_weight)
    return safe_div(got, ideal)


@measure("ERR_IA", options=(CUTOFF_REQUIRED, ALPHA, REL), subtopics=True, oracle=f"{ORACLE} for k ≥ 2")
def err_ia(batch, p):
    """Intent-aware ERR@k over its ideal ideal: sum over ranks i <= k of gain(i) / i, divided by the same sum for A(1 - alpha)^(i - 1).

    With binary relevance per subtopic, sum over i of gain(i) / i is A times the mean over
    subtopics of ERR with stopping probability alpha at a relevant document (up to the
    factor alpha, which the normalisation cancels); ndeval's "ERR-IA"
    (collection-independent normalisation). ``alpha`` is ndeval's -alpha (ir_measures fixes
    it at 0.5).

    Worked example (below, k = 2, A = 3): gains b 1, a 1.5: (1 + 1.5/2) / (3 (1 + 0.5/2)) = 0.46666...

    Edge cases: 0 for a query without relevant subtopics; at k = 1 ndeval does not divide
    (evaltool does: ndeval's value is A times this). (Chapelle, Metzler, Zhang & Grinspan,
    CIKM 2009, with Agrawal et al.'s intent-aware average, WSDM 2009; ndeval.)

    >>> from evaltool import evaluate
    >>> qrels = {"q": {"1": {"a": 1, "b": 1}, "2": {"a": 1, "c": 1}, "3": {"d": 1}}}
    >>> run = {"q": {"b": 4.0, "a": 3.0, "x": 2.0, "c": 1.0}}
    >>> round(evaluate(qrels, run, ["ERR_IA@2"]).summary["ERR_IA@2"], 12)
    0.466666666667
    """
    got, ideal_ideal, _ = _discounted(batch, p, _err_weight)
    return safe_div(got, ideal_ideal)


@measure("nERR_IA", options=(CUTOFF_REQUIRED, ALPHA, REL), subtopics=True, oracle=ORACLE)
def n_err_ia(batch, p):
    """Intent-aware ERR@k over the greedy ideal: sum over ranks i <= k of gain(i) / i, divided by the same sum for the greedy ideal ranking.

    ndeval's "nERR-IA" (collection-dependent normalisation): the ideal ranking is the
    greedy one of ``alpha_nDCG``.

    Worked example (below, k = 2): gains b 1, a 1.5; greedy ideal a 2, d 1: (1 + 1.5/2) / (2 + 1/2) = 0.7.

    Edge cases: 0 for a query without relevant subtopics or when nothing relevant is in
    the top k. (Chapelle et al., CIKM 2009; Agrawal et al., WSDM 2009; ndeval.)

    >>> from evaltool import evaluate
    >>> qrels = {"q": {"1": {"a": 1, "b": 1}, "2": {"a": 1, "c": 1}, "3": {"d": 1}}}
    >>> run = {"q": {"b": 4.0, "a": 3.0, "x": 2.0, "c": 1.0}}
    >>> round(evaluate(qrels, run, ["nERR_IA@2"]).summary["nERR_IA@2"], 12)
    0.7
    """
    got, _, ideal = _discounted(batch, p, _err_weight)
    return safe_div(got, ideal)


def _rank_biased(batch, p) -> tuple:
    """(sum over all ranks i of gain(i) beta^(i - 1), _Judged, intents, level) of the run."""
    intents, level, judged = _judged(batch, p)
    seg, rank, _, seen = _retrieved(intents, level, judged)
    decay = powers(p.beta, int(rank.max(initial=0)))
    got = np.bincount(seg, weights=_novelty_gain(seen, p.alpha) * decay[rank], minlength=batch.n_queries)
    return got, judged, intents, level


@measure("NRBP", options=(ALPHA, BETA, REL), subtopics=True, oracle=ORACLE)
def novelty_rbp(batch, p):
    """Novelty- and rank-biased precision: (1 - (1 - alpha) beta) / A * sum over ranks i of gain(i) beta^(i - 1).

    The whole ranking counts (no cutoff); gains as for ``alpha_DCG``. The factor makes 1
    the value of the ideal ideal ranking (every document relevant to every subtopic);
    ndeval's "NRBP" (collection-independent normalisation).

    Worked example (below, alpha = beta = 0.5, A = 3): gains b 1, a 1.5, x 0, c 0.5:
    0.75 / 3 * (1 + 1.5/2 + 0.5/8) = 0.453125.

    Edge cases: 0 for a query without relevant subtopics. (Clarke, Kolla & Vechtomova,
    "An effectiveness measure for ambiguous and underspecified queries", ICTIR 2009; ndeval.)

    >>> from evaltool import evaluate
    >>> qrels = {"q": {"1": {"a": 1, "b": 1}, "2": {"a": 1, "c": 1}, "3": {"d": 1}}}
    >>> run = {"q": {"b": 4.0, "a": 3.0, "x": 2.0, "c": 1.0}}
    >>> evaluate(qrels, run, ["NRBP"]).summary["NRBP"]
    0.453125
    """
    got, judged, _, _ = _rank_biased(batch, p)
    return safe_div(got * (1.0 - (1.0 - p.alpha) * p.beta), judged.actual)


@measure("nNRBP", options=(ALPHA, BETA, REL), subtopics=True, oracle=f"{ORACLE}; 0 for its nan")
def n_novelty_rbp(batch, p):
    """NRBP over the NRBP of the greedy ideal ranking (every relevant document of the qrels, greedily ordered).

    ndeval's "nNRBP" (collection-dependent normalisation).

    Worked example (below): gains b 1, a 1.5, x 0, c 0.5; the greedy ideal a 2, d 1, then
    c and b tie at 0.5 (c, the larger id, first): 2, 1, 0.5, 0.5, so
    (1 + 1.5/2 + 0.5/8) / (2 + 1/2 + 0.5/4 + 0.5/8) = 1.8125 / 2.6875 = 0.67441...

    Edge cases: 0 for a query without relevant subtopics (ndeval divides 0 by 0 and
    reports nan). (Clarke, Kolla & Vechtomova, ICTIR 2009; ndeval.)

    >>> from evaltool import evaluate
    >>> qrels = {"q": {"1": {"a": 1, "b": 1}, "2": {"a": 1, "c": 1}, "3": {"d": 1}}}
    >>> run = {"q": {"b": 4.0, "a": 3.0, "x": 2.0, "c": 1.0}}
    >>> round(evaluate(qrels, run, ["nNRBP"]).summary["nNRBP"], 12)
    0.674418604651
    """
    got, judged, intents, level = _rank_biased(batch, p)
    ideal = _ideal_gains(intents, level, judged, p.alpha, None)
    decay = powers(p.beta, max(ideal.shape[1] - 1, 0))[: ideal.shape[1]]
    return safe_div(got, ideal @ decay)


@measure("P_IA", options=(CUTOFF_REQUIRED, REL), subtopics=True, oracle=ORACLE)
def precision_ia(batch, p):
    """Intent-aware precision@k: the mean over the A subtopics of P@k for that subtopic.

    That is (relevant (document, subtopic) pairs in the top k) / (k A); a ranking shorter
    than k still divides by k (as P@k).

    Worked example (below, k = 4, A = 3): b, a, a, c are relevant to 1, 1, 2, 2: 4 / (4 * 3) = 0.3333...

    Edge cases: 0 for a query without relevant subtopics. (Agrawal, Gollapudi, Halverson &
    Ieong, "Diversifying search results", WSDM 2009; ndeval's "P-IA".)

    >>> from evaltool import evaluate
    >>> qrels = {"q": {"1": {"a": 1, "b": 1}, "2": {"a": 1, "c": 1}, "3": {"d": 1}}}
    >>> run = {"q": {"b": 4.0, "a": 3.0, "x": 2.0, "c": 1.0}}
    >>> round(evaluate(qrels, run, ["P_IA@4"]).summary["P_IA@4"], 12)
    0.333333333333
    """
    intents, level, judged = _judged(batch, p)
    seg, rank, _, _ = _retrieved(intents, level, judged)
    found = np.bincount(seg[rank < p.cutoff], minlength=batch.n_queries)
    return safe_div(found, judged.actual * float(p.cutoff))


@measure("AP_IA", options=(REL,), aliases=("MAP_IA",), subtopics=True, oracle=ORACLE)
def average_precision_ia(batch, p):
    """Intent-aware average precision: the mean over the A subtopics of AP for that subtopic.

    AP of subtopic s: the sum, over the retrieved documents relevant to s, of the
    precision for s at their rank, divided by the documents relevant to s in the qrels.
    The whole ranking counts.

    Worked example (below): subtopic 1 (1/1 + 2/2) / 2 = 1, subtopic 2
    (1/2 + 2/4) / 2 = 0.5, subtopic 3 (d not retrieved) 0: 1.5 / 3 = 0.5.

    Edge cases: 0 for a query without relevant subtopics. (Agrawal et al., WSDM 2009;
    ndeval's "MAP-IA".)

    >>> from evaltool import evaluate
    >>> qrels = {"q": {"1": {"a": 1, "b": 1}, "2": {"a": 1, "c": 1}, "3": {"d": 1}}}
    >>> run = {"q": {"b": 4.0, "a": 3.0, "x": 2.0, "c": 1.0}}
    >>> evaluate(qrels, run, ["AP_IA"]).summary["AP_IA"]
    0.5
    """
    intents, level, judged = _judged(batch, p)
    seg, rank, pair, seen = _retrieved(intents, level, judged)
    relevant = judged.relevant[np.searchsorted(judged.pairs, pair)]
    total = np.bincount(seg, weights=(seen + 1.0) / (rank + 1.0) / relevant, minlength=batch.n_queries)
    return safe_div(total, judged.actual)


@measure("StRecall", options=(CUTOFF_REQUIRED, REL), aliases=("strec", "strec_at_k"), subtopics=True, oracle=ORACLE)
def subtopic_recall(batch, p):
    """Subtopic recall@k: the share of the A subtopics with a relevant document in the top k.

    Worked example (below, k = 2): b and a cover subtopics 1 and 2 of 3: 2/3.

    Edge cases: 0 for a query without relevant subtopics. (Zhai, Cohen & Lafferty,
    "Beyond independent relevance", SIGIR 2003; ndeval's "strec".)

    >>> from evaltool import evaluate
    >>> qrels = {"q": {"1": {"a": 1, "b": 1}, "2": {"a": 1, "c": 1}, "3": {"d": 1}}}
    >>> run = {"q": {"b": 4.0, "a": 3.0, "x": 2.0, "c": 1.0}}
    >>> round(evaluate(qrels, run, ["StRecall@2"]).summary["StRecall@2"], 12)
    0.666666666667
    """
    intents, level, judged = _judged(batch, p)
    seg, rank, _, seen = _retrieved(intents, level, judged)
    covered = np.bincount(seg[(rank < p.cutoff) & (seen == 0)], minlength=batch.n_queries)
    return safe_div(covered, judged.actual)
