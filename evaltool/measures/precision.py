"""Set and cutoff measures: precision, recall, their relatives, utility, unjudged share, judged share, hits."""

from __future__ import annotations

import numpy as np

from evaltool.errors import MeasureError
from evaltool.measures.base import (
    Better,
    CUTOFF,
    CUTOFF_REQUIRED,
    JUDGED_ONLY,
    PYTREC,
    REL,
    Option,
    Params,
    measure,
    safe_div,
    stack_columns,
)
from evaltool.measures.restrict import view

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


def rel_in_top(batch, k) -> np.ndarray:
    """Relevant documents ranked above ``k`` (``k`` scalar or one per query)."""
    k = np.asarray(k)
    if not k.ndim and k >= batch.num_ret.max(initial=0):  # no ranking reaches k (recall.1000 of a top 100)
        return batch.num_rel_ret.copy()
    limit = k[batch.seg] if k.ndim else k
    return batch.count(batch.is_rel & (batch.rank < limit))


def _per_cutoff(batch, cutoffs, value):
    return (
        stack_columns([value(k, rel_in_top(batch, k)) for k in cutoffs]) if cutoffs else np.zeros((batch.n_queries, 0))
    )


@measure("P", params=Params.CUTOFFS, default=CUTOFFS, percent=True, same_as="P")
def precision(batch, cutoffs):
    """Precision at cutoff k: relevant in the top k / k.

    A ranking shorter than k counts as padded with non-relevant documents.

    Edge cases: 0 for an empty ranking or a query without relevant documents retrieved. (van
    Rijsbergen 1979; trec_eval 10.0, ``m_P.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["P.1,2,5"]).summary
    {'P_1': 1.0, 'P_2': 0.5, 'P_5': 0.4}
    """
    return _per_cutoff(batch, cutoffs, lambda k, hits: hits / k)


@measure("relative_P", params=Params.CUTOFFS, default=CUTOFFS)
def relative_precision(batch, cutoffs):
    """Relative precision at k: relevant in the top k / min(k, R), R = relevant documents.

    Edge cases: 0 when R = 0. (trec_eval 10.0, ``m_rel_P.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["relative_P.2"]).summary
    {'relative_P_2': 1.0}
    """
    return _per_cutoff(batch, cutoffs, lambda k, hits: safe_div(hits, np.minimum(k, batch.num_rel)))


@measure("success", params=Params.CUTOFFS, default=(1, 5, 10), same_as="Success")
def success(batch, cutoffs):
    """Success at k: 1 if any relevant document is in the top k, else 0.

    Edge cases: 0 when nothing relevant is retrieved in the top k, or R = 0. (Voorhees 1999;
    trec_eval 10.0, ``m_success.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"b": 1}}, {"q": {"a": 3.0, "b": 2.0}}, ["success.1,2"]).summary
    {'success_1': 0.0, 'success_2': 1.0}
    """
    return _per_cutoff(batch, cutoffs, lambda k, hits: (hits > 0).astype(np.float64))


@measure("recall", params=Params.CUTOFFS, default=CUTOFFS, percent=True, same_as="R")
def recall(batch, cutoffs):
    """Recall at k: relevant in the top k / R (0 when R = 0).

    Edge cases: a ranking shorter than k counts as it is. (Manning, Raghavan & Schütze 2008, section
    8.3; trec_eval 10.0, ``m_recall.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["recall.1,5"]).summary
    {'recall_1': 0.5, 'recall_5': 0.5}
    """
    return _per_cutoff(batch, cutoffs, lambda k, hits: safe_div(hits, batch.num_rel))


@measure("Rprec", same_as="Rprec")
def r_precision(batch, params):
    """R-precision: precision after R documents (R = relevant documents for the query).

    Edge cases: 0 when R = 0; a ranking shorter than R counts as padded with non-relevant documents.
    (Buckley & Voorhees 2005; trec_eval 10.0, ``m_Rprec.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["Rprec"]).summary
    {'Rprec': 0.5}
    """
    depth = np.minimum(batch.num_ret, batch.num_rel)
    return np.where(depth > 0, safe_div(rel_in_top(batch, depth), batch.num_rel), 0.0)


@measure("Rprec_mult", params=Params.FRACTIONS, default=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0))
def r_precision_multiples(batch, fractions):
    """Precision at multiples m of R: precision at cutoff int(m * R + 0.9).

    Edge cases: 0 when R = 0 (the cutoff is then 0); a ranking shorter than the cutoff counts as
    padded with non-relevant documents. (Buckley & Voorhees 2005; trec_eval 10.0,
    ``m_Rprec_mult.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["Rprec_mult.0.5,2.0"]).summary
    {'Rprec_mult_0.50': 1.0, 'Rprec_mult_2.00': 0.5}
    """
    columns = []
    for fraction in fractions:
        depth = (fraction * batch.num_rel + 0.9).astype(np.int64)
        columns.append(safe_div(rel_in_top(batch, depth), depth))
    return np.column_stack(columns)


@measure("set_P", same_as="SetP")
def set_precision(batch, params):
    """Precision of the whole retrieved set: relevant retrieved / retrieved.

    Edge cases: 0 for an empty ranking. (Manning, Raghavan & Schütze 2008, section 8.3; trec_eval
    10.0, ``m_set_P.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["set_P"]).summary
    {'set_P': 0.5}
    """
    return safe_div(batch.num_rel_ret, batch.num_ret)


@measure("set_relative_P", same_as=("SetP", {"relative": True}))
def set_relative_precision(batch, params):
    """Relevant retrieved / min(retrieved, R).

    Edge cases: 0 when R = 0 or nothing is retrieved. (trec_eval 10.0, ``m_set_rel_P.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["set_relative_P"]).summary
    {'set_relative_P': 1.0}
    """
    return safe_div(batch.num_rel_ret, np.minimum(batch.num_ret, batch.num_rel))


@measure("set_recall", same_as="SetR")
def set_recall(batch, params):
    """Recall of the whole retrieved set: relevant retrieved / R.

    Edge cases: 0 when R = 0. (Manning, Raghavan & Schütze 2008, section 8.3; trec_eval 10.0,
    ``m_set_recall.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0}}, ["set_recall"]).summary
    {'set_recall': 0.5}
    """
    return safe_div(batch.num_rel_ret, batch.num_rel)


@measure("set_map", same_as="SetAP")
def set_map(batch, params):
    """Set precision times set recall: relevant retrieved^2 / (retrieved * R).

    Edge cases: 0 when R = 0 or nothing is retrieved. (trec_eval 10.0, ``m_set_map.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0}}, ["set_map"]).summary
    {'set_map': 0.5}
    """
    hits = batch.num_rel_ret.astype(np.float64)
    return safe_div(hits * hits, batch.num_ret.astype(np.float64) * batch.num_rel)


@measure("set_F", params=Params.NUMBERS, default=(1.0,), arity=1)
def set_f(batch, params):
    """F-measure of the retrieved set: (beta + 1) P R / (beta P + R); parameter beta (default 1).

    Edge cases: 0 when nothing relevant is retrieved; a negative beta that zeroes the denominator
    gives inf, as trec_eval prints. (van Rijsbergen 1979; trec_eval 10.0, ``m_set_F.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0}}, ["set_F"]).summary
    {'set_F': 0.6666666666666666}
    """
    beta = params[0] if params else 1.0
    hits = batch.num_rel_ret
    p = safe_div(hits, batch.num_ret)
    r = safe_div(hits, batch.num_rel)
    num, den = (beta + 1.0) * p * r, beta * p + r
    # a negative beta can make the denominator 0: trec_eval then prints inf (0/0 stays 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(den != 0, num / np.where(den != 0, den, 1.0), np.where(num != 0, num * np.inf, 0.0))
    return np.where(hits > 0, value, 0.0)


@measure("utility", params=Params.NUMBERS, default=(1.0, -1.0, 0.0, 0.0), on_missing_bare=0.0, arity=4)
def utility(batch, params):
    """Linear set utility p1*a + p2*b + p3*c + p4*d over the contingency table.

    a = relevant retrieved, b = non-relevant retrieved, c = relevant missed,
    d = non-relevant missed (needs ``-N``, the collection size). Exactly four numbers.
    With ``-c`` a query missing from the run scores 0, but only under the bare name: with
    parameters given, trec_eval keeps the value of its one-document stand-in ranking.

    Edge cases: without ``-N`` the collection size is 0, so d is negative: give p4 = 0 then. (Lewis
    1995; trec_eval 10.0, ``m_utility.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["utility.2,-1,0,0"]).summary
    {'utility_2,-1,0,0': 1.0}
    """
    if len(params) != 4:
        raise MeasureError(f"utility takes exactly 4 coefficients, got {len(params)}")
    a = batch.num_rel_ret
    ret, rel = batch.num_ret, batch.num_rel
    return (
        params[0] * a
        + params[1] * (ret - a)
        + params[2] * (rel - a)
        + params[3] * (batch.num_docs_in_coll + a - ret - rel)
    )


@measure("unj", params=Params.CUTOFFS, default=(5, 10, 20), on_missing=0.0, better=Better.NEITHER)  # judging coverage
def unjudged(batch, cutoffs):
    """Share of unjudged documents in the top k (not in the qrels, or a negative grade) / k.

    Edge cases: a ranking shorter than k divides by k all the same; 0 for an empty ranking. (Buckley
    & Voorhees 2004, on incomplete judgments; trec_eval 10.0, ``m_unjudged.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["unj.2,4"]).summary
    {'unj_2': 0.5, 'unj_4': 0.25}
    """
    judged = batch.rel >= 0
    columns = []
    for k in cutoffs:
        seen = np.minimum(batch.num_ret, k)
        columns.append((seen - batch.count(judged & (batch.rank < k))) / k)
    return np.column_stack(columns)


# ---------------------------------------------------------------- named-parameter measures (ir_measures' names)


@measure(
    "P",
    options=(CUTOFF_REQUIRED, REL, JUDGED_ONLY),
    percent=True,
    aliases=("Precision", "precision", "precision_at_k"),
    oracle=PYTREC,
)
def named_precision(batch, p):
    """P@k: relevant documents in the top k / k (ir_measures' ``P``; trec_eval's ``P.k``).

    A ranking shorter than k counts as padded with non-relevant documents, so P@10 of a
    3-document ranking with 3 relevant is 0.3. ``rel`` is the minimum relevant grade,
    ``judged_only`` drops unjudged documents first. (van Rijsbergen 1979.)

    Edge cases: 0 for an empty ranking.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 2, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["P@2", "P(rel=2)@3", "precision_at_5"]).summary
    {'P@2': 0.5, 'P(rel=2)@3': 0.3333333333333333, 'precision_at_5': 0.4}
    """
    return precision(view(batch, p), (p.cutoff,))[:, 0]


@measure(
    "R",
    options=(CUTOFF_REQUIRED, REL, JUDGED_ONLY),
    percent=True,
    aliases=("Recall", "recall", "recall_at_k"),
    oracle=PYTREC,
)
def named_recall(batch, p):
    """R@k: relevant documents in the top k / all relevant documents of the query (0 when there are none).

    ir_measures' ``R`` and trec_eval's ``recall.k``. (Whether *any* relevant document is in
    the top k is ``Success@k``.) (Manning, Raghavan & Schütze 2008, section 8.3.)

    Edge cases: 0 when the query has no relevant document; a ranking shorter than k counts as it is.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1, "c": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["R@2", "recall@10"]).summary
    {'R@2': 0.3333333333333333, 'recall@10': 0.6666666666666666}
    """
    return recall(view(batch, p), (p.cutoff,))[:, 0]


@measure("Success", options=(CUTOFF_REQUIRED, REL, JUDGED_ONLY), aliases=("hit_rate", "hit_rate_at_k"), oracle=PYTREC)
def named_success(batch, p):
    """Success@k: 1 if a relevant document is in the top k, else 0; averaged, the hit rate.

    ir_measures' ``Success`` and trec_eval's ``success.k``; ``hit_rate@k`` is the same. A
    query with nothing relevant retrieved scores 0. (TREC's "success at k"; Voorhees 1999.)

    Edge cases: 0 for a query without relevant documents.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"b": 1}, "r": {"c": 1}}, {"q": {"a": 3.0, "b": 2.0}, "r": {"d": 1.0}}, ["Success@2", "hit_rate@1"]).summary
    {'Success@2': 0.5, 'hit_rate@1': 0.0}
    """
    return success(view(batch, p), (p.cutoff,))[:, 0]


@measure("Rprec", options=(REL, JUDGED_ONLY), aliases=("RPrec",), oracle=PYTREC)
def named_r_precision(batch, p):
    """Precision after R documents, R = relevant documents of the query (0 when R = 0).

    Also the recall at R. (Buckley & Voorhees 2005.)

    Edge cases: 0 when R = 0; a ranking shorter than R counts as padded with non-relevant documents.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 2}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["Rprec(rel=2)"]).summary
    {'Rprec(rel=2)': 0.0}
    """
    return r_precision(view(batch, p), ())


@measure(
    "SetP",
    options=(REL, Option("relative", bool, False, doc="divide by min(retrieved, R) instead"), JUDGED_ONLY),
    aliases=(("SetRelP", {"relative": True}),),
    oracle=PYTREC,
)
def named_set_precision(batch, p):
    """Precision of the retrieved set: relevant retrieved / retrieved.

    With ``relative=True`` (``SetRelP``): relevant retrieved / min(retrieved, R), the
    best precision a set of that size could have. 0 when a denominator is 0.
    (Manning, Raghavan & Schütze 2008, section 8.3.)

    Edge cases: 0 for an empty ranking (and with ``relative``, when R = 0).

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "y": 1.0}}, ["SetP", "SetRelP"]).summary
    {'SetP': 0.3333333333333333, 'SetRelP': 0.5}
    """
    b = view(batch, p)
    return set_relative_precision(b, ()) if p.relative else set_precision(b, ())


@measure("SetR", options=(REL,), oracle=PYTREC)
def named_set_recall(batch, p):
    """Recall of the retrieved set: relevant retrieved / R (0 when R = 0).

    (Manning, Raghavan & Schütze 2008, section 8.3.)

    Edge cases: 0 when R = 0.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 2}}, {"q": {"a": 3.0}}, ["SetR", "SetR(rel=2)"]).summary
    {'SetR': 0.5, 'SetR(rel=2)': 0.0}
    """
    return set_recall(view(batch, p), ())


@measure(
    "SetF",
    options=(REL, Option("beta", float, 1.0, doc="weight of recall against precision", minimum=0), JUDGED_ONLY),
    oracle=PYTREC,
)
def named_set_f(batch, p):
    """F-measure of the retrieved set: (1 + beta) P R / (beta P + R), P and R the set precision and recall.

    trec_eval's ``set_F`` formula (beta weighs linearly, not squared as in van
    Rijsbergen's F); 0 when nothing relevant is retrieved.

    Edge cases: 0 when nothing relevant is retrieved. (van Rijsbergen 1979; trec_eval 10.0,
    ``m_set_F.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0}}, ["SetF(beta=1)", "SetF(beta=0.5)"]).summary
    {'SetF(beta=1)': 0.6666666666666666, 'SetF(beta=0.5)': 0.75}
    """
    return set_f(view(batch, p), (p.beta,))


@measure("SetAP", options=(REL, JUDGED_ONLY), oracle=PYTREC)
def named_set_ap(batch, p):
    """Unranked set AP: set precision x set recall (trec_eval's ``set_map``).

    0 when nothing is retrieved or R = 0. (trec_eval's ``set_map``; ir_measures' ``SetAP``.)

    Edge cases: 0 when nothing is retrieved or R = 0. (trec_eval 10.0, ``m_set_map.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0}}, ["SetAP"]).summary
    {'SetAP': 0.5}
    """
    return set_map(view(batch, p), ())


@measure("Judged", options=(CUTOFF,), oracle="ir_measures (judged)", better=Better.NEITHER)  # judging coverage
def judged(batch, p):
    """Judgment rate: share of the top k documents that appear in the qrels (any grade).

    Divides by min(k, retrieved), so a short ranking is not penalised; without a
    cutoff, over the whole ranking; 0 for an empty ranking. A document with a negative
    grade is in the qrels, so it counts as judged here (trec_eval's ``unj`` counts it as
    unjudged). ir_measures' ``Judged`` (MacAvaney et al., OpenNIR).

    Edge cases: 0 for an empty ranking; negative grades count as judged. (MacAvaney et al. 2020,
    OpenNIR; ir_measures.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 0, "c": -1}}, {"q": {"a": 4.0, "x": 3.0, "b": 2.0, "c": 1.0}}, ["Judged@2", "Judged"]).summary
    {'Judged@2': 0.5, 'Judged': 0.75}
    """
    k = batch.num_ret if p.cutoff is None else np.minimum(batch.num_ret, p.cutoff)
    return safe_div(batch.count(batch.rank < (k[batch.seg])), k)


@measure(
    "Hits",
    options=(CUTOFF, REL, JUDGED_ONLY),
    aliases=("hits", "hits_at_k"),
    oracle="none: evaltool's own (P@k times k)",
)
def hits(batch, p):
    """Number of relevant documents in the top k (all retrieved without a cutoff); the summary is the mean.

    P@k times k: the number of hits in the top k that RAG evaluation notebooks report
    (``hits_in_top_k``). A document is counted once (a run holds a document once per query);
    0 when nothing relevant is retrieved.

    Edge cases: 0 when nothing relevant is retrieved. (Manning, Raghavan & Schütze 2008, section
    8.3.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["hits@2", "Hits"]).summary
    {'hits@2': 1.0, 'Hits': 2.0}
    """
    b = view(batch, p)
    return (b.num_rel_ret if p.cutoff is None else rel_in_top(b, p.cutoff)).astype(np.float64)
