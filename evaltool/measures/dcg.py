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
============  =====================  ==========================================================

Negative grades and documents outside the qrels gain 0. Which spelling gives a peer's
numbers: scikit-learn's ``ndcg_score(y_true, y_score, k=k)`` is ``nDCG(ideal='ranking')@k``
and ``dcg_score(..., log_base=b)`` is ``DCG(log_base=b)@k`` on rankings without tied
scores (scikit-learn averages the gains of tied documents by default; evaltool breaks
ties by trec_eval's rule, as ``ignore_ties=True`` would on the ordered list); gdeval's
nDCG@20 is ``nDCG(dcg='exp-log2')@20`` and its ERR@20 ``ERR@20``; Elasticsearch's
``precision`` over the returned hits is ``SetP`` (``P@k`` divides by k instead).
"""

from __future__ import annotations

import numpy as np

from evaltool.measures.base import (
    CUTOFF, JUDGED_ONLY, Option, Params, Settings, gain_function, log2_int, measure, safe_div,
)
from evaltool.measures.precision import CUTOFFS
from evaltool.measures.restrict import judged_only as judged_view

GAIN_FORM = Option("dcg", str, "log2", choices=("log2", "exp-log2"),
                   doc="gain = grade ('log2') or 2^grade - 1 ('exp-log2')")
GAINS = Option("gains", dict, (), doc="{grade: gain}: the gain of these grades; other grades gain their grade")
DISCOUNT = Option("discount", str, "log2", choices=("log2", "jarvelin"),
                  doc="rank i divides by log2(i + 1) ('log2') or log2(max(i, 2)) ('jarvelin')")
IDEAL = Option("ideal", str, "qrels", choices=("qrels", "ranking"),
               doc="ideal ranking from every judged document ('qrels') or from the retrieved ones ('ranking')")


def rank_discount(rank: np.ndarray, kind: str) -> np.ndarray:
    """The divisor of a gain at 0-based ``rank``: log2(rank + 2), or log2(max(rank + 1, 2)) for 'jarvelin'."""
    rank = np.asarray(rank, dtype=np.int64)
    return log2_int(rank + 2) if kind == "log2" else log2_int(np.maximum(rank + 1, 2))


def _discounted_sum(seg, pos, gains, kind, cutoff, n_queries, log_base: float = 2.0) -> np.ndarray:
    keep = gains != 0 if cutoff is None else (gains != 0) & (pos < cutoff)
    divisor = rank_discount(pos[keep], kind)
    if log_base != 2.0:
        divisor = divisor / np.log2(log_base)   # log_b(x) = log2(x) / log2(b)
    return np.bincount(seg[keep], weights=gains[keep] / divisor, minlength=n_queries)


def dcg_columns(batch, p, cutoffs, ideal_from: str | None):
    """(DCG, ideal DCG) per query (rows) and cutoff (columns); no ideal when ``ideal_from`` is None.

    A cutoff of None means the whole ranking (and every judged document for the ideal).
    """
    if p.judged_only:
        batch = judged_view(batch)
    gain_of = gain_function(p.gains, exponential=p.dcg == "exp-log2")
    gains = gain_of(batch.rel)
    base = getattr(p, "log_base", 2.0)
    got = np.column_stack([_discounted_sum(batch.seg, batch.rank, gains, p.discount, k, batch.n_queries, base)
                           for k in cutoffs])
    if ideal_from is None:
        return got, None
    if ideal_from == "qrels":
        offsets, best = batch.ideal_csr(gain_of)
        seg = np.repeat(np.arange(batch.n_queries), np.diff(offsets))
    else:
        positive = gains > 0
        seg = batch.seg[positive]
        order = np.lexsort((-gains[positive], seg))
        seg, best = seg[order], gains[positive][order]
        offsets = np.concatenate(([0], np.cumsum(np.bincount(seg, minlength=batch.n_queries))))
    pos = np.arange(len(best)) - offsets[seg]
    ideal = np.column_stack([_discounted_sum(seg, pos, best, p.discount, k, batch.n_queries) for k in cutoffs])
    return got, ideal


def normalised_dcg(batch, p, cutoffs) -> np.ndarray:
    """nDCG per query (rows) at each cutoff (columns): DCG / ideal DCG, 0 where the ideal DCG is 0."""
    got, ideal = dcg_columns(batch, p, cutoffs, p.ideal)
    return safe_div(got, ideal)


LOG_BASE = Option("log_base", float, 2.0, above=1, doc="base of the discount's logarithm (scikit-learn's dcg_score)")


@measure("DCG", options=(CUTOFF, GAIN_FORM, GAINS, JUDGED_ONLY, DISCOUNT, LOG_BASE), aliases=("dcg", "dcg_at_k"), oracle="trec_eval 10.0 (dcg)")
def named_dcg(batch, p):
    """Discounted cumulative gain of the top k: sum over ranks i <= k of gain(i) / discount(i).

    Parameters as in the module table; without a cutoff, the whole ranking (trec_eval's
    ``dcg``). Worked example, grades
    [4, 4, 3, 0, 0, 1, 3, 3, 3, 0] at k = 6 with the Järvelin discount log2(max(i, 2)):
    4/1 + 4/1 + 3/log2(3) + 0 + 0 + 1/log2(6) = 10.2796...; with trec_eval's log2(i + 1):
    4/1 + 4/log2(3) + 3/2 + 1/log2(7) = 8.3799...; exponential gains with log2(i + 1):
    15/1 + 15/log2(3) + 7/2 + 1/log2(7) = 28.320... (Järvelin & Kekäläinen 2002.)

    Edge cases: 0 for an empty ranking; negative grades and documents outside the qrels gain 0.

    >>> from evaltool import evaluate
    >>> grades = [4, 4, 3, 0, 0, 1, 3, 3, 3, 0]
    >>> qrels, run = {"q": {f"d{i}": g for i, g in enumerate(grades)}}, {"q": {f"d{i}": 10.0 - i for i in range(10)}}
    >>> evaluate(qrels, run, ["DCG(discount='jarvelin')@6", "dcg@6", "DCG(dcg='exp-log2')@6"]).summary
    {"DCG(discount='jarvelin')@6": 10.279642067948915, 'dcg@6': 8.379926201393854, "DCG(dcg='exp-log2')@6": 28.320153490679886}
    """
    return dcg_columns(batch, p, [p.cutoff], None)[0][:, 0]


NDCG_OPTIONS = (CUTOFF, GAIN_FORM, GAINS, JUDGED_ONLY, DISCOUNT, IDEAL)


@measure("nDCG", options=NDCG_OPTIONS, aliases=("NDCG", "ndcg", "ndcg_at_k"), oracle="ir_measures (pytrec_eval; gdeval with dcg='exp-log2')")
def named_ndcg(batch, p):
    """Normalised DCG: DCG of the top k / DCG of the ideal top k; 0 when the ideal DCG is 0.

    Defaults give trec_eval's ``ndcg_cut.k`` (``ndcg`` without a cutoff) and ir_measures'
    ``nDCG@k``; ``dcg='exp-log2'`` gives gdeval's nDCG@k (TREC Web track); ``gains``
    ir_measures' gain mapping; ``discount='jarvelin'`` the original discount;
    ``ideal='ranking'`` scikit-learn's ``ndcg_score`` (the ideal is the retrieved grades
    sorted, so documents never retrieved do not lower the score).

    Worked example: grades [4, 4, 3, 0, 0, 1, 3, 3, 3, 0], k = 6, Järvelin
    discount, ideal from the ranking [4, 4, 3, 3, 3, 3]: 10.2796 / 13.8454 = 0.74246...
    With ideal='qrels' a relevant document the ranking missed lowers the score: below, a
    grade-2 document 'z' is judged but not retrieved: 1 / (2 + 1/log2(3)) = 0.3800...
    (Järvelin & Kekäläinen 2002.)

    Edge cases: 0 when the ideal DCG is 0 (no judged document with a positive gain); negative grades
    gain 0.

    >>> from evaltool import evaluate
    >>> grades = [4, 4, 3, 0, 0, 1, 3, 3, 3, 0]
    >>> qrels, run = {"q": {f"d{i}": g for i, g in enumerate(grades)}}, {"q": {f"d{i}": 10.0 - i for i in range(10)}}
    >>> evaluate(qrels, run, ["nDCG(discount='jarvelin',ideal='ranking')@6"]).summary
    {"nDCG(discount='jarvelin',ideal='ranking')@6": 0.7424602308163405}
    >>> evaluate({"q": {"a": 1, "z": 2}}, {"q": {"a": 1.0}}, ["nDCG@2", "nDCG(ideal='ranking')@2"]).summary
    {'nDCG@2': 0.38009376671593426, "nDCG(ideal='ranking')@2": 1.0}
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
    return normalised_dcg(batch, Settings.defaults(NDCG_OPTIONS), cutoffs)
