"""Set and cutoff measures: precision, recall, their relatives, utility, unjudged share."""

from __future__ import annotations

import numpy as np

from evaltool.errors import MeasureError
from evaltool.measures.base import Params, measure, safe_div

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


def rel_in_top(batch, k) -> np.ndarray:
    """Relevant documents ranked above ``k`` (``k`` scalar or one per query)."""
    k = np.asarray(k)
    limit = k[batch.seg] if k.ndim else k
    return batch.count(batch.is_rel & (batch.rank < limit))


def _per_cutoff(batch, cutoffs, value):
    return np.column_stack([value(k, rel_in_top(batch, k)) for k in cutoffs]) if cutoffs else np.zeros((batch.n_queries, 0))


@measure("P", params=Params.CUTOFFS, default=CUTOFFS)
def precision(batch, cutoffs):
    """Precision at cutoff k: relevant in the top k / k.

    A ranking shorter than k counts as padded with non-relevant documents.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["P.1,2,5"]).summary
    {'P_1': 1.0, 'P_2': 0.5, 'P_5': 0.4}
    """
    return _per_cutoff(batch, cutoffs, lambda k, hits: hits / k)


@measure("relative_P", params=Params.CUTOFFS, default=CUTOFFS)
def relative_precision(batch, cutoffs):
    """Relative precision at k: relevant in the top k / min(k, R), R = relevant documents.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["relative_P.2"]).summary
    {'relative_P_2': 1.0}
    """
    return _per_cutoff(batch, cutoffs, lambda k, hits: safe_div(hits, np.minimum(k, batch.num_rel)))


@measure("success", params=Params.CUTOFFS, default=(1, 5, 10))
def success(batch, cutoffs):
    """Success at k: 1 if any relevant document is in the top k, else 0.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"b": 1}}, {"q": {"a": 3.0, "b": 2.0}}, ["success.1,2"]).summary
    {'success_1': 0.0, 'success_2': 1.0}
    """
    return _per_cutoff(batch, cutoffs, lambda k, hits: (hits > 0).astype(np.float64))


@measure("recall", params=Params.CUTOFFS, default=CUTOFFS)
def recall(batch, cutoffs):
    """Recall at k: relevant in the top k / R (0 when R = 0).

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["recall.1,5"]).summary
    {'recall_1': 0.5, 'recall_5': 0.5}
    """
    return _per_cutoff(batch, cutoffs, lambda k, hits: safe_div(hits, batch.num_rel))


@measure("Rprec")
def r_precision(batch, params):
    """R-precision: precision after R documents (R = relevant documents for the query).

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["Rprec"]).summary
    {'Rprec': 0.5}
    """
    depth = np.minimum(batch.num_ret, batch.num_rel)
    return np.where(depth > 0, safe_div(rel_in_top(batch, depth), batch.num_rel), 0.0)


@measure("Rprec_mult", params=Params.FRACTIONS, default=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0))
def r_precision_multiples(batch, fractions):
    """Precision at multiples m of R: precision at cutoff int(m * R + 0.9).

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["Rprec_mult.0.5,2.0"]).summary
    {'Rprec_mult_0.50': 1.0, 'Rprec_mult_2.00': 0.5}
    """
    columns = []
    for fraction in fractions:
        depth = (fraction * batch.num_rel + 0.9).astype(np.int64)
        columns.append(safe_div(rel_in_top(batch, depth), depth))
    return np.column_stack(columns)


@measure("set_P")
def set_precision(batch, params):
    """Precision of the whole retrieved set: relevant retrieved / retrieved.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["set_P"]).summary
    {'set_P': 0.5}
    """
    return safe_div(batch.num_rel_ret, batch.num_ret)


@measure("set_relative_P")
def set_relative_precision(batch, params):
    """Relevant retrieved / min(retrieved, R).

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["set_relative_P"]).summary
    {'set_relative_P': 1.0}
    """
    return safe_div(batch.num_rel_ret, np.minimum(batch.num_ret, batch.num_rel))


@measure("set_recall")
def set_recall(batch, params):
    """Recall of the whole retrieved set: relevant retrieved / R.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0}}, ["set_recall"]).summary
    {'set_recall': 0.5}
    """
    return safe_div(batch.num_rel_ret, batch.num_rel)


@measure("set_map")
def set_map(batch, params):
    """Set precision times set recall: relevant retrieved^2 / (retrieved * R).

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0}}, ["set_map"]).summary
    {'set_map': 0.5}
    """
    hits = batch.num_rel_ret.astype(np.float64)
    return safe_div(hits * hits, batch.num_ret.astype(np.float64) * batch.num_rel)


@measure("set_F", params=Params.NUMBERS, default=(1.0,), arity=1)
def set_f(batch, params):
    """F-measure of the retrieved set: (beta + 1) P R / (beta P + R); parameter beta (default 1).

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

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["utility.2,-1,0,0"]).summary
    {'utility_2,-1,0,0': 1.0}
    """
    if len(params) != 4:
        raise MeasureError(f"utility takes exactly 4 coefficients, got {len(params)}")
    a = batch.num_rel_ret
    ret, rel = batch.num_ret, batch.num_rel
    return (params[0] * a + params[1] * (ret - a) + params[2] * (rel - a)
            + params[3] * (batch.num_docs_in_coll + a - ret - rel))


@measure("unj", params=Params.CUTOFFS, default=(5, 10, 20), on_missing=0.0)
def unjudged(batch, cutoffs):
    """Share of unjudged documents in the top k (not in the qrels, or a negative grade) / k.

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
