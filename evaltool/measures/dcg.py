"""DCG and nDCG with named variants: gain, gain mapping, discount, and where the ideal ranking comes from.

Every variant is a parameter of the one kernel, so ``nDCG@10`` (trec_eval's ``ndcg_cut.10``),
gdeval's ``nDCG(dcg='exp-log2')@10`` and the variants of textbooks and notebooks are the
same code with other settings:

============  =====================  ==========================================================
parameter     value                  meaning
============  =====================  ==========================================================
``dcg``       ``'log2'`` (default)   gain = grade (after ``gains``)
              ``'exp-log2'``         gain = 2^grade - 1 (Burges et al. 2005; gdeval)
``gains``     ``{grade: gain}``      gain of a grade, others gain their grade (ir_measures)
``discount``  ``'log2'`` (default)   rank i (1-based) divides by log2(i + 1) (trec_eval)
              ``'jarvelin'``         rank i divides by log2(max(i, 2)): ranks 1 and 2 undiscounted
                                     (Järvelin & Kekäläinen 2002 with base 2)
``ideal``     ``'qrels'`` (default)  ideal ranking: every judged document of the query, best first
              ``'ranking'``          ideal ranking: the retrieved documents, best first
                                     (scikit-learn's ``ndcg_score``)
``log_base``  ``2`` (default)        DCG only: the discount's logarithm base (scikit-learn's
                                     ``dcg_score``; in nDCG the base cancels out)
``ties``      ``'trec_eval'``        (default) documents with equal scores are ordered by
                                     trec_eval's rule: score descending, then document id descending
              ``'average'``          every document of a group of equal scores gains the mean
                                     gain of its group (scikit-learn's default,
                                     ``ignore_ties=False``; McSherry & Najork 2008)
============  =====================  ==========================================================

Negative grades and documents outside the qrels gain 0. Which spelling gives a peer's
numbers: scikit-learn's ``ndcg_score(y_true, y_score, k=k)`` is
``nDCG(ideal='ranking',ties='average')@k`` and ``dcg_score(..., k=k, log_base=b)`` is
``DCG(log_base=b,ties='average')@k``; with ``ignore_ties=True`` (or on scores without ties)
drop ``ties='average'``. scikit-learn scores a dense vector over the documents it is given;
evaltool's inputs map onto it this way: the documents given are the query's retrieved
documents (after ``-M`` and ``-J`` or ``judged_only``), ``y_true`` is their gain (0 for a
document outside the qrels or with a negative grade; scikit-learn refuses negative
``y_true``) and ``y_score`` their score. A judged document the run never retrieved is not
among them: it changes nothing with ``ideal='ranking'``, and with ``ideal='qrels'`` (the
default) it enters the ideal ranking only. gdeval's nDCG@20 is ``nDCG(dcg='exp-log2')@20``
and its ERR@20 ``ERR@20``; Elasticsearch's ``precision`` over the returned hits is ``SetP``
(``P@k`` divides by k instead).

Averaging tied scores (``ties='average'``): a group of g documents with equal scores that
occupies positions s+1 .. s+g of the ranking contributes (sum of its gains / g) times the
sum of the discounts of those of its positions that are <= k. A group straddling k thus
counts every member's gain, averaged, at the positions above the cut; ``-M`` is another
matter: it ends the ranking, so the documents it drops are not retrieved and leave their
group (trec_eval's order decides which stay). The ideal ranking is untouched: tied grades
in it can be permuted without changing its DCG.
"""

from __future__ import annotations

import numpy as np

from evaltool.measures.base import (
    CUTOFF,
    JUDGED_ONLY,
    Option,
    Params,
    Settings,
    gain_function,
    log2_int,
    measure,
    safe_div,
    stack_columns,
)
from evaltool.measures.precision import CUTOFFS
from evaltool.measures.restrict import judged_only as judged_view

GAIN_FORM = Option(
    "dcg", str, "log2", choices=("log2", "exp-log2"), doc="gain = grade ('log2') or 2^grade - 1 ('exp-log2')"
)
GAINS = Option("gains", dict, (), doc="{grade: gain}: the gain of these grades; other grades gain their grade")
DISCOUNT = Option(
    "discount",
    str,
    "log2",
    choices=("log2", "jarvelin"),
    doc="rank i divides by log2(i + 1) ('log2') or log2(max(i, 2)) ('jarvelin')",
)
TIES = Option(
    "ties",
    str,
    "trec_eval",
    choices=("trec_eval", "average"),
    doc="tied scores ordered by trec_eval's rule ('trec_eval': score descending, then document id "
    "descending) or each given the mean gain of its group ('average', scikit-learn's default)",
)
IDEAL = Option(
    "ideal",
    str,
    "qrels",
    choices=("qrels", "ranking"),
    doc="ideal ranking from every judged document ('qrels') or from the retrieved ones ('ranking')",
)


def rank_discount(rank: np.ndarray, kind: str) -> np.ndarray:
    """The divisor of a gain at 0-based ``rank``: log2(rank + 2), or log2(max(rank + 1, 2)) for 'jarvelin'."""
    rank = np.asarray(rank, dtype=np.int64)
    return log2_int(rank + 2) if kind == "log2" else log2_int(np.maximum(rank + 1, 2))


def _discounted_sum(seg, pos, gains, kind, cutoff, n_queries, log_base: float = 2.0) -> np.ndarray:
    keep = gains != 0 if cutoff is None else (gains != 0) & (pos < cutoff)
    divisor = rank_discount(pos[keep], kind)
    if log_base != 2.0:
        divisor = divisor / np.log2(log_base)  # log_b(x) = log2(x) / log2(b)
    return np.bincount(seg[keep], weights=gains[keep] / divisor, minlength=n_queries)


def _tie_averaged_sum(batch, gains, kind, cutoff, log_base: float = 2.0) -> np.ndarray:
    """DCG with every document of a group of equal scores gaining the group's mean gain.

    A row's gain is spread evenly over the positions [start, end) of its group, of which
    only those above ``cutoff`` count: gain / (end - start) * (sum of their 1 / discount).
    """
    start, end = batch.ties.bounds
    keep = gains != 0 if cutoff is None else (gains != 0) & (start < cutoff)
    start, end = start[keep], end[keep]
    counted = end if cutoff is None else np.minimum(end, cutoff)
    reach = int(counted.max(initial=0))
    weight = np.log2(log_base) / rank_discount(np.arange(reach), kind)
    before = np.concatenate(([0.0], np.cumsum(weight)))  # before[i]: the weights of positions < i
    spread = gains[keep] / (end - start) * (before[counted] - before[start])
    return np.bincount(batch.seg[keep], weights=spread, minlength=batch.n_queries)


def dcg_columns(batch, p, cutoffs, ideal_from: str | None):
    """(DCG, ideal DCG) per query (rows) and cutoff (columns); no ideal when ``ideal_from`` is None.

    A cutoff of None means the whole ranking (and every judged document for the ideal).
    """
    if p.judged_only:
        batch = judged_view(batch)
    gain_of = gain_function(p.gains, exponential=p.dcg == "exp-log2")
    gains = gain_of(batch.rel)
    base = getattr(p, "log_base", 2.0)
    if p.ties == "average":
        got = np.column_stack([_tie_averaged_sum(batch, gains, p.discount, k, base) for k in cutoffs])
    else:
        got = stack_columns(
            [_discounted_sum(batch.seg, batch.rank, gains, p.discount, k, batch.n_queries, base) for k in cutoffs]
        )
    if ideal_from is None:
        return got, None
    if ideal_from == "qrels":  # the judgments' alone: computed once for an Evaluator's runs

        def from_qrels():
            offsets, best = batch.ideal_csr(gain_of)
            return _ideal_dcg(batch.n_queries, offsets, best, p.discount, cutoffs)

        return got, batch.judged(("ideal dcg", p.gains, p.dcg, p.discount, tuple(cutoffs)), from_qrels)
    positive = gains > 0
    seg = batch.seg[positive]
    order = np.lexsort((-gains[positive], seg))
    best = gains[positive][order]
    offsets = np.concatenate(([0], np.cumsum(np.bincount(seg, minlength=batch.n_queries))))
    return got, _ideal_dcg(batch.n_queries, offsets, best, p.discount, cutoffs)


def _ideal_dcg(n_queries: int, offsets: np.ndarray, best: np.ndarray, discount: str, cutoffs) -> np.ndarray:
    """DCG per query (rows) and cutoff (columns) of the ideal gains ``best`` (CSR by ``offsets``, descending)."""
    seg = np.repeat(np.arange(n_queries), np.diff(offsets))
    pos = np.arange(len(best)) - offsets[seg]
    return stack_columns([_discounted_sum(seg, pos, best, discount, k, n_queries) for k in cutoffs])


def normalised_dcg(batch, p, cutoffs) -> np.ndarray:
    """nDCG per query (rows) at each cutoff (columns): DCG / ideal DCG, 0 where the ideal DCG is 0."""
    got, ideal = dcg_columns(batch, p, cutoffs, p.ideal)
    return safe_div(got, ideal)


LOG_BASE = Option("log_base", float, 2.0, above=1, doc="base of the discount's logarithm (scikit-learn's dcg_score)")


@measure(
    "DCG",
    options=(CUTOFF, GAIN_FORM, GAINS, JUDGED_ONLY, DISCOUNT, LOG_BASE, TIES),
    aliases=("dcg", "dcg_at_k"),
    oracle="trec_eval 10.0 (dcg); scikit-learn dcg_score(ignore_ties=False) with ties='average'",
)
def named_dcg(batch, p):
    """Discounted cumulative gain of the top k: sum over ranks i <= k of gain(i) / discount(i).

    Parameters as in the module table; without a cutoff, the whole ranking (trec_eval's
    ``dcg``). Worked example, grades
    [4, 4, 3, 0, 0, 1, 3, 3, 3, 0] at k = 6 with the Järvelin discount log2(max(i, 2)):
    4/1 + 4/1 + 3/log2(3) + 0 + 0 + 1/log2(6) = 10.2796...; with trec_eval's log2(i + 1):
    4/1 + 4/log2(3) + 3/2 + 1/log2(7) = 8.3799...; exponential gains with log2(i + 1):
    15/1 + 15/log2(3) + 7/2 + 1/log2(7) = 28.320... (Järvelin & Kekäläinen 2002.)

    With ``ties='average'`` (scikit-learn's ``dcg_score``, whose default ``ignore_ties=False``
    it reproduces) a group of g tied documents at positions s+1 .. s+g adds
    (sum of its gains / g) * sum over its positions i <= k of 1 / discount(i). Worked
    example: scores a 3, b 2, c 2, x 2, d 1 with grades a 2, b 0, c 1, d 1 (x unjudged).
    trec_eval's order is a, x, c, b, d: DCG@3 = 2/1 + 0 + 1/log2(4) = 2.5. Averaged, the
    group {b, c, x} holds positions 2 .. 4 and gains 1/3 each; at k = 3 two of its positions
    count: 2 + 1/3 * (1/log2(3) + 1/log2(4)) = 2.37697...; without a cutoff
    2 + 1/3 * (1/log2(3) + 1/log2(4) + 1/log2(5)) + 1/log2(6) = 2.90738...
    (McSherry & Najork 2008.)

    Edge cases: 0 for an empty ranking; negative grades and documents outside the qrels gain
    0 (and still share their group's positions under ``ties='average'``).

    >>> from evaltool import evaluate
    >>> grades = [4, 4, 3, 0, 0, 1, 3, 3, 3, 0]
    >>> qrels, run = {"q": {f"d{i}": g for i, g in enumerate(grades)}}, {"q": {f"d{i}": 10.0 - i for i in range(10)}}
    >>> evaluate(qrels, run, ["DCG(discount='jarvelin')@6", "dcg@6", "DCG(dcg='exp-log2')@6"]).summary
    {"DCG(discount='jarvelin')@6": 10.279642067948915, 'dcg@6': 8.379926201393854, "DCG(dcg='exp-log2')@6": 28.320153490679886}
    >>> qrels, run = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "x": 2.0, "d": 1.0}}
    >>> evaluate(qrels, run, ["DCG@3", "DCG(ties='average')@3", "DCG(ties='average')"]).summary
    {'DCG@3': 2.5, "DCG(ties='average')@3": 2.376976584523819, "DCG(ties='average')": 2.907388244449492}
    """
    return dcg_columns(batch, p, [p.cutoff], None)[0][:, 0]


NDCG_OPTIONS = (CUTOFF, GAIN_FORM, GAINS, JUDGED_ONLY, DISCOUNT, IDEAL, TIES)
NDCG_DEFAULTS = Settings.defaults(NDCG_OPTIONS)  # ndcg_cut's: read, never changed, by the kernel


@measure(
    "nDCG",
    options=NDCG_OPTIONS,
    aliases=("NDCG", "ndcg", "ndcg_at_k"),
    oracle="ir_measures (pytrec_eval; gdeval with dcg='exp-log2'); scikit-learn ndcg_score(ignore_ties=False) with ideal='ranking',ties='average'",
)
def named_ndcg(batch, p):
    """Normalised DCG: DCG of the top k / DCG of the ideal top k; 0 when the ideal DCG is 0.

    Defaults give trec_eval's ``ndcg_cut.k`` (``ndcg`` without a cutoff) and ir_measures'
    ``nDCG@k``; ``dcg='exp-log2'`` gives gdeval's nDCG@k (TREC Web track); ``gains``
    ir_measures' gain mapping; ``discount='jarvelin'`` the original discount;
    ``ideal='ranking'`` scikit-learn's ``ndcg_score`` (the ideal is the retrieved grades
    sorted, so documents never retrieved do not lower the score); ``ties='average'`` its
    treatment of tied scores (``ignore_ties=False``, its default): the DCG gives every
    document of a group of equal scores the group's mean gain (see ``DCG``), the ideal DCG
    is unchanged. ``nDCG(ideal='ranking',ties='average')@k`` is ``ndcg_score(..., k=k)``.

    Worked example: grades [4, 4, 3, 0, 0, 1, 3, 3, 3, 0], k = 6, Järvelin
    discount, ideal from the ranking [4, 4, 3, 3, 3, 3]: 10.2796 / 13.8454 = 0.74246...
    With ideal='qrels' a relevant document the ranking missed lowers the score: below, a
    grade-2 document 'z' is judged but not retrieved: 1 / (2 + 1/log2(3)) = 0.3800...
    Tied scores averaged: a 3, {b, c, x} 2, d 1 with grades a 2, b 0, c 1, d 1 has DCG@3
    2 + 1/3 * (1/log2(3) + 1/log2(4)) (the group's mean gain 1/3 at positions 2 and 3 of its
    2 .. 4) over the ideal 2 + 1/log2(3) + 1/log2(4): 0.75919...; trec_eval's order (a, x,
    c, b) gives 2.5 / 3.13093 = 0.79848... (Järvelin & Kekäläinen 2002; McSherry & Najork 2008.)

    Edge cases: 0 when the ideal DCG is 0 (no judged document with a positive gain); negative grades
    gain 0.

    >>> from evaltool import evaluate
    >>> grades = [4, 4, 3, 0, 0, 1, 3, 3, 3, 0]
    >>> qrels, run = {"q": {f"d{i}": g for i, g in enumerate(grades)}}, {"q": {f"d{i}": 10.0 - i for i in range(10)}}
    >>> evaluate(qrels, run, ["nDCG(discount='jarvelin',ideal='ranking')@6"]).summary
    {"nDCG(discount='jarvelin',ideal='ranking')@6": 0.7424602308163405}
    >>> evaluate({"q": {"a": 1, "z": 2}}, {"q": {"a": 1.0}}, ["nDCG@2", "nDCG(ideal='ranking')@2"]).summary
    {'nDCG@2': 0.38009376671593426, "nDCG(ideal='ranking')@2": 1.0}
    >>> qrels, run = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "x": 2.0, "d": 1.0}}
    >>> evaluate(qrels, run, ["nDCG@3", "nDCG(ideal='ranking',ties='average')@3"]).summary
    {'nDCG@3': 0.7984848580994974, "nDCG(ideal='ranking',ties='average')@3": 0.7591919243197319}
    """
    return normalised_dcg(batch, p, [p.cutoff])[:, 0]


@measure("ndcg_cut", params=Params.CUTOFFS, default=CUTOFFS, same_as="nDCG")
def ndcg_cut(batch, cutoffs):
    """nDCG at each cutoff k: trec_eval's spelling of ``nDCG@k``, computed by its kernel.

    DCG of the top k / DCG of the ideal top k; gains are the grades, discount log2(i + 1).

    Edge cases: 0 when the query has no document with a positive grade; negative grades
    gain 0; a ranking shorter than k is not padded. (Järvelin & Kekäläinen 2002;
    trec_eval 10.0, ``m_ndcg_cut.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 2}}, {"q": {"a": 3.0, "b": 2.0}}, ["ndcg_cut.1,2"]).summary
    {'ndcg_cut_1': 0.5, 'ndcg_cut_2': 0.8597186998521972}
    """
    return normalised_dcg(batch, NDCG_DEFAULTS, cutoffs)
