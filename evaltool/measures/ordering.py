"""How well the order of a ranking agrees with the judgments: Compat and Accuracy.

Compat compares the ranking with an ideal ranking by rank-biased overlap; Accuracy
counts the (relevant, non-relevant) pairs the ranking puts in the right order.
"""

from __future__ import annotations

import numpy as np

from evaltool.measures.base import CUTOFF, REL, Agg, Option, measure, powers
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


@measure("Compat", options=(Option("p", float, 0.95, minimum=0, maximum=1, doc="persistence of the rank-biased "
                                                                                  "overlap"),
                            Option("normalize", bool, True, doc="divide by the overlap of the ideal ranking with "
                                                                "itself (finite ideal rankings)")),
         oracle="ir_measures (compat)")
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
    weight = powers(p.p, top_depth)                      # p^0 .. p^top_depth
    norm = np.concatenate(([0.0], np.cumsum(weight[:top_depth])))          # norm[d] = sum_{t<d} p^t
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
