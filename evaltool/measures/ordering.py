"""How well the order of a ranking agrees with the judgments: Compat, Accuracy, ARP and OPA.

Compat compares the ranking with an ideal ranking by rank-biased overlap; Accuracy
counts the (relevant, non-relevant) pairs the ranking puts in the right order, OPA the
pairs of different grades; ARP averages the ranks weighted by grade.
"""

from __future__ import annotations

import numpy as np

from evaltool.measures.base import CUTOFF, REL, Agg, Better, Option, measure, powers
from evaltool.measures.restrict import at_level, top


def _ideal_positions(batch, relevant: np.ndarray) -> np.ndarray:
    """0-based position in the ideal ranking of every stored row where ``relevant`` holds.

    The ideal ranking orders the query's documents with a grade above 0 by grade,
    highest first; within a grade the retrieved ones come first, in the ranking's order.
    """
    grade = batch.rel[relevant]
    seg = batch.seg[relevant]
    judged = batch.judged_grades > 0
    top_grade = int(batch.judged_grades.max()) + 1 if len(batch.judged_grades) else 1
    # judged positive grades are stored per query, highest first: a sorted key finds the count above g
    keys = batch.judged_seg[judged] * top_grade + (top_grade - 1 - batch.judged_grades[judged])
    first = np.searchsorted(keys, seg * top_grade)
    higher = np.searchsorted(keys, seg * top_grade + (top_grade - 1 - grade)) - first
    order = np.lexsort((batch.rank[relevant], -grade, seg))
    group = seg[order] * top_grade + grade[order]
    starts = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    within = np.arange(len(order)) - np.repeat(starts, np.diff(np.append(starts, len(order))))
    out = np.empty(len(order), dtype=np.int64)
    out[order] = within
    return higher + out


@measure(
    "Compat",
    options=(
        Option("p", float, 0.95, minimum=0, maximum=1, doc="persistence of the rank-biased overlap"),
        Option(
            "normalize",
            bool,
            True,
            doc="divide by the overlap of the ideal ranking with itself (finite ideal rankings)",
        ),
    ),
    oracle="ir_measures (compat)",
)
def compatibility(batch, p):
    """Compatibility: rank-biased overlap (RBO) of the ranking with an ideal ranking of the judged documents.

    RBO(A, B) = sum_{d=1}^{D} p^(d-1) |A_d ∩ B_d| / d / sum_{d=1}^{D} p^(d-1), A_d the top d
    of A, D = max(retrieved, documents with a grade above 0). The ideal ranking holds the
    documents with a grade above 0, highest grade first; within a grade, the retrieved
    ones come first in the ranking's order (the ideal most compatible with the ranking).
    ``normalize`` divides by RBO(ideal, ideal), so a perfect ranking scores 1.

    Edge cases: 0 when the query has no document with a grade above 0, or nothing is
    retrieved; ``-l`` does not apply (any grade above 0 is in the ideal ranking).
    ir_measures breaks ties in the ideal by run score, with 0 for documents not
    retrieved, so a retrieved document with a negative score goes after the unretrieved
    ones there; here it does not. (Clarke, Vtyurina & Smucker 2021; ir_measures' Compat.)

    Worked example, p = 0.5, relevant 'a' (grade 2) and 'b' (grade 1), ranking [x, a]:
    ideal [a, b], D = 2; overlaps 0, 1: (0 + 0.5 * 1/2) / 1.5 = 1/6; ideal with itself:
    (1 + 0.5) / 1.5 = 1; Compat = 1/6.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 2, "b": 1}}, {"q": {"x": 2.0, "a": 1.0}}, ["Compat(p=0.5)"]).summary
    {'Compat(p=0.5)': 0.16666666666666666}
    """
    n = batch.n_queries
    relevant = batch.rel > 0
    n_ideal = np.bincount(batch.judged_seg[batch.judged_grades > 0], minlength=n)
    depth = np.maximum(batch.num_ret, n_ideal)
    top_depth = int(depth.max()) if n else 0
    weight = powers(p.p, top_depth)  # p^0 .. p^top_depth
    norm = np.concatenate(([0.0], np.cumsum(weight[:top_depth])))  # norm[d] = sum_{t<d} p^t
    reach = np.concatenate(([0.0], np.cumsum(weight[:top_depth] / np.arange(1, top_depth + 1))))  # S(d)
    # a document in both rankings counts at every depth past the later of its two positions
    both = np.maximum(_ideal_positions(batch, relevant), batch.rank[relevant])
    seg = batch.seg[relevant]
    raw = np.bincount(seg, weights=reach[depth[seg]] - reach[both], minlength=n)
    before = np.concatenate(([0.0], np.cumsum(reach)))  # before[L] = sum_{j<L} S(j)
    best = n_ideal * reach[depth] - before[n_ideal]
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(depth > 0, raw / norm[depth], 0.0)
        if p.normalize:
            score = np.where(best > 0, raw / best, score)
    return score


@measure("Accuracy", options=(CUTOFF, REL), agg=Agg.MEAN_DEFINED, oracle="ir_measures (accuracy)")
def accuracy(batch, p):
    """Accuracy: the share of (relevant, non-relevant) pairs in the top k that the ranking orders right.

    1 - (sum over relevant documents in the top k of the non-relevant documents above
    it) / (R_k * N_k), R_k and N_k the relevant and non-relevant documents in the top k
    (unjudged ones are non-relevant). Without a cutoff, the whole ranking. A diagnostic:
    only the retrieved documents count.

    Edge cases: no value (nan, left out of the mean) when the top k has no relevant or
    no non-relevant document, as ir_measures reports no value for the first (and fails
    on the second). (ir_measures' Accuracy; MacAvaney, Macdonald & Ounis 2022.)

    Worked example, ranking [n, r, n, r]: the relevant documents have 1 and 2
    non-relevant above them, of 2 * 2 pairs: 1 - 3/4 = 0.25.

    >>> from evaltool import evaluate
    >>> run = {"q": {"n1": 4.0, "r1": 3.0, "n2": 2.0, "r2": 1.0}}
    >>> evaluate({"q": {"r1": 1, "r2": 1, "n1": 0}}, run, ["Accuracy", "Accuracy@2"]).summary
    {'Accuracy': 0.25, 'Accuracy@2': 0.0}
    """
    batch = at_level(top(batch, p.cutoff), p.rel)
    relevant = batch.is_rel
    n_rel = batch.count(relevant)
    n_nonrel = batch.num_ret - n_rel
    above = batch.rank[relevant] - (batch.running_count(relevant)[relevant] - 1)
    wrong = np.bincount(batch.seg[relevant], weights=above, minlength=batch.n_queries)
    pairs = n_rel * n_nonrel
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pairs > 0, 1.0 - wrong / pairs, np.nan)


def _dense_grades(batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every retrieved position: (query, 0-based rank, grade), grade 0 outside the qrels and for negative grades."""
    seg, pos, grade = batch.dense(None)
    return seg, pos, np.maximum(grade, 0)


@measure("ARP", options=(), better=Better.LOWER, oracle="TF-Ranking's ARPMetric, by its definition")
def average_relevance_position(batch, p):
    """Average relevance position: the ranks of the retrieved documents averaged with their grades as weights.

    ARP = sum_i i * g(i) / sum_i g(i) over the retrieved documents (1-based rank i, g the
    grade). Lower is better; graded, so a grade-2 document weighs twice a grade-1 one.

    Edge cases: 0 when no retrieved document has a grade above 0 (TF-Ranking's
    divide-no-nan), so such a query looks best: filter or read with care; negative grades
    and documents outside the qrels weigh 0 and keep their ranks (TF-Ranking drops items
    with a negative label from the list). (Zhu & Klabjan 2020; TF-Ranking's ARPMetric.)

    Worked example, grades [0, 2, 1]: (2 * 2 + 3 * 1) / (2 + 1) = 7/3.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"b": 2, "c": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, ["ARP"]).summary
    {'ARP': 2.3333333333333335}
    """
    seg, pos, grade = _dense_grades(batch)
    weight = np.bincount(seg, weights=grade, minlength=batch.n_queries)
    total = np.bincount(seg, weights=(pos + 1.0) * grade, minlength=batch.n_queries)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(weight > 0, total / weight, 0.0)


@measure("OPA", options=(), agg=Agg.MEAN_DEFINED, oracle="TF-Ranking's OrderedPairAccuracy, by its definition")
def ordered_pair_accuracy(batch, p):
    """Ordered pair accuracy: of the pairs of retrieved documents with different grades, the share ranked higher-grade first.

    OPA = #{(i, j): g(i) > g(j), i ranked above j} / #{(i, j): g(i) > g(j)}, over the
    retrieved documents (grades of documents outside the qrels and negative grades: 0).

    Edge cases: no value (nan, left out of the mean) when the retrieved documents all have
    one grade. TF-Ranking compares scores, so a tied pair counts as wrong there; here ties
    are broken by trec_eval's rule first, and TF-Ranking pools the pairs of a batch of
    queries where evaltool averages per query. (TF-Ranking's OrderedPairAccuracy;
    Pasumarthi et al. 2019.)

    Worked example, grades [0, 2, 1]: pairs (2, 0), (1, 0), (2, 1); the last is ranked
    right: 1/3.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"b": 2, "c": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, ["OPA"]).summary
    {'OPA': 0.3333333333333333}
    """
    seg, _, grade = _dense_grades(batch)
    n = batch.n_queries
    right = np.zeros(n)
    pairs = np.zeros(n)
    offsets = np.concatenate(([0], np.cumsum(np.bincount(seg, minlength=n))))
    for level in np.unique(grade):
        lower = grade < level
        at_level = grade == level
        lower_total = np.bincount(seg, weights=lower, minlength=n)
        lower_before = np.cumsum(lower) - lower  # within the whole array, then made per query below
        lower_before = lower_before - np.concatenate(([0], np.cumsum(lower)))[offsets[:-1]][seg]
        below_after = lower_total[seg] - lower_before - lower
        right += np.bincount(seg[at_level], weights=below_after[at_level], minlength=n)
        pairs += np.bincount(seg[at_level], weights=lower_total[seg][at_level], minlength=n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pairs > 0, right / pairs, np.nan)
