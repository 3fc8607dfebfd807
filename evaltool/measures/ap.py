"""Average precision and its relatives: map, gm_map, map_cut, yaap, infAP, bpref, binG; AP, Bpref, infAP.

``recip_rank`` is trec_eval's spelling of ``RR`` and lives with it in :mod:`evaltool.measures.rr`."""

from __future__ import annotations

import numpy as np

from evaltool.measures.base import (
    CUTOFF,
    INFAP_EPSILON,
    JUDGED_ONLY,
    MIN_GEO_MEAN,
    PYTREC,
    REL,
    Agg,
    Params,
    log2_int,
    measure,
    safe_div,
)
from evaltool.measures.precision import CUTOFFS
from evaltool.measures.restrict import view
from evaltool.ranking import RELVALUE_UNJUDGED


def precision_at_relevant(batch) -> np.ndarray:
    """For every stored row: relevant so far / (rank + 1); used only at relevant rows."""
    return batch.rel_so_far / (batch.rank + 1.0)


def sum_of_precision_at_relevant(batch) -> np.ndarray:
    """Per query, the sum of precision at each relevant retrieved row, added in rank order: the
    i-th relevant row of a query (from 1) at 0-based rank r adds i / (r + 1). Computed on the
    relevant rows alone (what ``batch.total(precision_at_relevant(batch), batch.is_rel)`` gives)."""
    rows, seg = batch.rel_rows, batch.rel_seg
    nth = np.arange(1, len(rows) + 1) - batch.rel_first[seg]
    return np.bincount(seg, weights=nth / (batch.rank[rows] + 1.0), minlength=batch.n_queries)


def average_precision(batch) -> np.ndarray:
    total = sum_of_precision_at_relevant(batch)
    return np.where(batch.num_rel_ret > 0, safe_div(total, batch.num_rel), 0.0)


@measure("map", same_as="AP")
def mean_average_precision(batch, params):
    """Average precision: sum of precision at each relevant retrieved document / R.

    Edge cases: 0 when R = 0 or nothing relevant is retrieved; a relevant document never retrieved
    adds 0 to the sum. (Harman 1992; trec_eval 10.0, ``m_map.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1, "c": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["map"]).summary
    {'map': 0.5555555555555555}
    """
    return average_precision(batch)


@measure("gm_map", agg=Agg.GEOMETRIC, per_query=False)
def geometric_map(batch, params):
    """Geometric mean of average precision over queries; AP floored at 0.00001.

    Edge cases: an AP below 0.00001 (0 included) counts as 0.00001, so the logarithm stays finite; a
    summary only. (Robertson 2006, "On GMAP"; trec_eval 10.0, ``m_gm_map.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}, "r": {"b": 1}}, {"q": {"a": 1.0}, "r": {"x": 1.0, "b": 0.5}}, ["gm_map"]).summary
    {'gm_map': 0.7071067811865476}
    """
    return np.log(np.maximum(average_precision(batch), MIN_GEO_MEAN))


@measure("map_cut", params=Params.CUTOFFS, default=CUTOFFS, same_as="AP")
def map_at_cutoff(batch, cutoffs):
    """Average precision over the top k only: sum of precision at relevant documents ranked above k / R.

    Edge cases: 0 when R = 0; the divisor stays R however small k is. (Harman 1992; trec_eval 10.0,
    ``m_map_cut.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["map_cut.1,3"]).summary
    {'map_cut_1': 0.5, 'map_cut_3': 0.8333333333333333}
    """
    prec = precision_at_relevant(batch)
    columns = [safe_div(batch.total(prec, batch.is_rel & (batch.rank < k)), batch.num_rel) for k in cutoffs]
    return np.column_stack(columns)


@measure("yaap")
def yet_another_ap(batch, params):
    """Robertson's YAAP: log((1 + s) / (1 + R - s)), s = sum of precision at relevant retrieved.

    Edge cases: log(1 / (1 + R)) when nothing relevant is retrieved, 0 when also R = 0. (Robertson
    2008; trec_eval 10.0, ``m_yaap.c``.)

    >>> from evaltool import evaluate
    >>> round(evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["yaap"]).summary["yaap"], 6)
    0.693147
    """
    s = batch.total(precision_at_relevant(batch), batch.is_rel)
    return np.log((1.0 + s) / ((1.0 + batch.num_rel) - s))


def _bpref(batch) -> np.ndarray:
    nonrel = (batch.rel >= 0) & ~batch.is_rel
    nonrel_before = batch.running_count(nonrel)
    num_rel = batch.num_rel[batch.seg]
    denom = np.minimum(batch.num_nonrel, batch.num_rel)[batch.seg]
    penalty = safe_div(np.minimum(nonrel_before, num_rel), denom)
    score = np.where(nonrel_before > 0, 1.0 - penalty, 1.0)
    return safe_div(batch.total(score, batch.is_rel), batch.num_rel)


@measure("bpref", same_as="Bpref")
def bpref(batch, params):
    """Binary preference: for each relevant retrieved document, 1 - min(n, R) / min(N, R).

    n = judged non-relevant documents above it, N = judged non-relevant documents in
    the qrels; averaged over R. Unjudged documents are ignored. (Buckley & Voorhees 2004.)

    Edge cases: 0 when R = 0; a relevant document with no judged non-relevant document above it adds
    1 (so does every one when N = 0). (trec_eval 10.0, ``m_bpref.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1, "n": 0}}, {"q": {"n": 3.0, "a": 2.0, "b": 1.0}}, ["bpref"]).summary
    {'bpref': 0.0}
    """
    return _bpref(batch)


@measure("gm_bpref", agg=Agg.GEOMETRIC, per_query=False)
def geometric_bpref(batch, params):
    """Geometric mean of bpref over queries; bpref floored at 0.00001.

    Edge cases: a bpref below 0.00001 (0 included) counts as 0.00001; a summary only. (Robertson
    2006, "On GMAP"; trec_eval 10.0, ``m_gm_bpref.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["gm_bpref"]).summary
    {'gm_bpref': 1.0}
    """
    return np.log(np.maximum(_bpref(batch), MIN_GEO_MEAN))


@measure("infAP", same_as="infAP")
def inferred_ap(batch, params):
    """Inferred AP (Yilmaz & Aslam 2006) for sampled judgments.

    At a relevant document at 0-based rank k > 0 with r relevant, n judged non-relevant and
    u pooled-unjudged documents above it (r counting itself):
    1/(k+1) + k/(k+1) * ((r - 1 + n + u) / k) * ((r - 1 + e) / (r - 1 + n + 2e)), e = 0.00001;
    1 at rank 0. Documents outside the pool count in k only. Averaged over R.

    Edge cases: 0 when R = 0; a relevant document at rank 1 adds 1. (trec_eval 10.0, ``m_infap.c``.)

    >>> from evaltool import evaluate
    >>> round(evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "b": 1.0}}, ["infAP"]).summary["infAP"], 6)
    0.999998
    """
    nonrel = (batch.rel >= 0) & ~batch.is_rel
    n = batch.running_count(nonrel)
    u = batch.running_count(batch.rel == RELVALUE_UNJUDGED)
    r = batch.rel_so_far
    k = batch.rank.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        later = 1.0 / (k + 1.0) + (k / (k + 1.0)) * ((r - 1 + n + u) / k) * (
            (r - 1 + INFAP_EPSILON) / (r - 1 + n + 2 * INFAP_EPSILON)
        )
    score = np.where(batch.rank == 0, 1.0, later)
    return safe_div(batch.total(score, batch.is_rel), batch.num_rel)


@measure("binG")
def binary_g(batch, params):
    """Binary G: sum over relevant retrieved of 1 / log2(2 + non-relevant above it), / R.

    Edge cases: 0 when R = 0 or nothing relevant is retrieved. (Kishida 2005; trec_eval 10.0,
    ``m_binG.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"b": 1}}, {"q": {"a": 3.0, "b": 2.0}}, ["binG"]).summary
    {'binG': 0.6309297535714575}
    """
    weight = 1.0 / log2_int(3 + batch.rank - batch.rel_so_far)
    total = batch.total(weight, batch.is_rel)
    return np.where(batch.num_rel_ret > 0, safe_div(total, batch.num_rel), 0.0)


# ---------------------------------------------------------------- named-parameter measures (ir_measures' names)


@measure("AP", options=(CUTOFF, REL, JUDGED_ONLY), aliases=("MAP", "map", "map_at_k"), oracle=PYTREC)
def named_average_precision(batch, p):
    """Average precision: sum of P@rank over the relevant retrieved documents / R; the mean is MAP.

    With a cutoff k only the relevant documents in the top k add (the divisor stays R):
    trec_eval's ``map_cut.k``; without, trec_eval's ``map``. 0 when R = 0. (Harman 1992.)

    Edge cases: 0 when R = 0 or nothing relevant is retrieved (in the top k).

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1, "c": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["AP", "AP@1", "map@2"]).summary
    {'AP': 0.5555555555555555, 'AP@1': 0.3333333333333333, 'map@2': 0.3333333333333333}
    """
    b = view(batch, p)
    return average_precision(b) if p.cutoff is None else map_at_cutoff(b, (p.cutoff,))[:, 0]


@measure("Bpref", options=(REL,), aliases=("BPref",), oracle=PYTREC)
def named_bpref(batch, p):
    """Binary preference: for each relevant retrieved document, 1 - min(n, R) / min(N, R), summed / R.

    n = judged non-relevant documents above it, N = judged non-relevant documents of the
    query; unjudged documents are ignored. (Buckley & Voorhees 2004.)

    Edge cases: 0 when R = 0; a relevant document with no judged non-relevant document above it adds
    1.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1, "n": 0}}, {"q": {"a": 3.0, "n": 2.0, "b": 1.0}}, ["Bpref"]).summary
    {'Bpref': 0.5}
    """
    return _bpref(view(batch, p))


@measure("infAP", options=(REL,), oracle=PYTREC)
def named_inferred_ap(batch, p):
    """Inferred AP (Yilmaz & Aslam 2006): AP estimated from sampled judgments; see ``infAP``.

    Documents with a negative grade are "pooled but unjudged" and are inferred; documents
    outside the qrels count as non-relevant. Below, with rel=2 'a' is judged non-relevant
    and 'b' relevant at rank 2: 1/2 + 1/2 * (0 + 1 + 0)/1 * (0 + e)/(0 + 1 + 2e) = 0.500005.

    Edge cases: 0 when R = 0; a relevant document at rank 1 adds 1. (Yilmaz & Aslam 2006.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 2}}, {"q": {"a": 3.0, "b": 1.0}}, ["infAP(rel=2)"]).summary
    {'infAP(rel=2)': 0.500004999900002}
    """
    return inferred_ap(view(batch, p), ())
