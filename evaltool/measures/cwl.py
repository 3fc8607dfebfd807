"""User-model measures of the C/W/L framework: BPM, INST, INSQ, SDCG and NERR8 to NERR11.

In C/W/L (Moffat, Bailey, Scholer & Thomas 2017) a user reads rank 1, then goes on
from rank i to rank i + 1 with the *continuation* probability C(i). The chance of
reading rank i is prod_{j<i} C(j); normalised over the ranks, it is the weight W(i),
and the measure is the expected rate of gain, sum_i W(i) * g(i). Each measure is a
continuation function; everything else is shared (:func:`expected_rate_of_gain`).

Conventions, those of ``cwl_eval`` as ir_measures calls it (Azzopardi, Thomas & Moffat 2019):

* gains: a grade is clipped below at 0 (a negative grade is judged "unjudged"), then to
  [min_rel, max_rel], then scaled to (grade - min_rel) / (max_rel - min_rel) in [0, 1];
  a document outside the qrels gains 0 (the lower bound: cwl_eval's "worse case");
* every ranking is read to :data:`DEPTH` ranks: shorter ones are padded with gain 0,
  longer ones cut, and W is normalised over those ranks.
"""

from __future__ import annotations

import numpy as np

from evaltool.measures.base import CUTOFF_REQUIRED, Option, measure

#: ranks every C/W/L ranking is read to (cwl_eval's default, which ir_measures keeps)
DEPTH = 1000
#: queries scored at once: DEPTH x BLOCK doubles (32 MB) at a time
BLOCK = 4000
CWL_EVAL = "ir_measures (cwl_eval)"

MIN_REL = Option("min_rel", int, 0, doc="grade scaled to gain 0 (lower grades are clipped to it)")
MAX_REL = Option(
    "max_rel", int, required=True, doc="grade scaled to gain 1 (higher grades are clipped to it; required)"
)
TARGET = Option("T", float, 1.0, above=0, doc="total gain the user wants (on the scaled [0, 1] gains)")


def _rel_range(given: dict) -> str | None:
    if given["min_rel"] >= given["max_rel"]:
        return f"min_rel ({given['min_rel']}) must be below max_rel ({given['max_rel']})"
    return None


def scaled_gains(batch, min_rel: int, max_rel: int) -> np.ndarray:
    """Gain in [0, 1] of every stored row: max(grade, 0) clipped to [min_rel, max_rel], scaled."""
    grades = np.clip(np.maximum(batch.rel, 0), min_rel, max_rel).astype(np.float64)
    return (grades - min_rel) / (max_rel - min_rel)


def expected_rate_of_gain(batch, p, continuation) -> np.ndarray:
    """sum_i W(i) g(i) per query, W(i) = prod_{j<i} C(j) / sum_k prod_{j<k} C(j), over ranks 1..DEPTH.

    ``continuation(gains, ranks, p)`` gives C for a (queries x DEPTH) matrix of gains and
    the 1-based ranks (a row vector).
    """
    gains = scaled_gains(batch, p.min_rel, p.max_rel)
    ranks = np.arange(1, DEPTH + 1, dtype=np.float64)
    out = np.zeros(batch.n_queries)
    for start in range(0, batch.n_queries, BLOCK):
        stop = min(start + BLOCK, batch.n_queries)
        rows = slice(batch.offsets[start], batch.offsets[stop])
        keep = batch.rank[rows] < DEPTH
        matrix = np.zeros((stop - start, DEPTH))
        matrix[batch.seg[rows][keep] - start, batch.rank[rows][keep]] = gains[rows][keep]
        reach = np.cumprod(continuation(matrix, ranks, p)[:, :-1], axis=1)
        weights = np.concatenate((np.ones((stop - start, 1)), reach), axis=1)
        weights /= weights.sum(axis=1, keepdims=True)
        out[start:stop] = (weights * matrix).sum(axis=1)
    return out


def _insq_factor(ranks, target) -> np.ndarray:
    return ((ranks + 2.0 * target - 1.0) / (ranks + 2.0 * target)) ** 2.0


@measure("BPM", options=(CUTOFF_REQUIRED, TARGET, MIN_REL, MAX_REL), check=_rel_range, oracle=CWL_EVAL)
def bejeweled_player_model(batch, p):
    """Bejeweled Player Model: the user stops at the first rank where the gain so far reaches T or the rank reaches k.

    C(i) = 1 while G(i) < T and i < k, else 0 (G the gain up to rank i), so the measure is
    the mean gain of the ranks read: (static BPM, costs of 1 per document). The user reads
    at least rank 1.

    Edge cases: a ranking shorter than k pads with gain 0 (the user reads on to k unless
    T is reached); 0 for an empty ranking. (Zhang, Liu, Li, Zhang, Xu & Ma 2017; cwl_eval.)

    Worked example, grades [0, 1, 1] with max_rel=1, T=1, k=3: the user reads ranks 1 and 2
    (G(2) = 1 reaches T), so BPM = (0 + 1) / 2 = 0.5.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 0, "b": 1, "c": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, ["BPM(max_rel=1)@3"]).summary
    {'BPM(max_rel=1)@3': 0.5}
    """

    def continuation(gains, ranks, p):
        return ((np.cumsum(gains, axis=1) < p.T) & (ranks < p.cutoff)).astype(np.float64)

    return expected_rate_of_gain(batch, p, continuation)


@measure("INST", options=(TARGET, MIN_REL, MAX_REL), check=_rel_range, oracle=CWL_EVAL)
def inst(batch, p):
    """INST: an adaptive user who wants T units of gain and reads on while it is missing.

    C(i) = ((i + T + T(i) - 1) / (i + T + T(i)))^2, T(i) = T - G(i), G(i) the gain up to
    rank i.

    Edge cases: a ranking without gain reads like INSQ with T; 0 for an empty ranking.
    (Moffat, Bailey, Scholer & Thomas 2015; cwl_eval.)

    Worked example, one document of gain 1 and T = 1: from rank 1 on, T(i) = 0 and
    C(i) = (i / (i + 1))^2, so the chance of reading rank i is 1 / i^2 and
    W(1) = 1 / sum_{i<=1000} 1/i^2 = 0.60830...

    >>> from evaltool import evaluate
    >>> round(evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["INST(max_rel=1)"]).summary["INST(max_rel=1)"], 5)
    0.6083
    """

    def continuation(gains, ranks, p):
        remaining = p.T - np.cumsum(gains, axis=1)
        return ((ranks + p.T + remaining - 1.0) / (ranks + p.T + remaining)) ** 2.0

    return expected_rate_of_gain(batch, p, continuation)


@measure("INSQ", options=(TARGET, MIN_REL, MAX_REL), check=_rel_range, oracle=CWL_EVAL)
def insq(batch, p):
    """INSQ: a user who wants T units of gain, reading on with C(i) = ((i + 2T - 1) / (i + 2T))^2.

    The continuation does not depend on the gains seen (INST's ancestor).

    Edge cases: 0 for an empty ranking. (Moffat, Scholer & Thomas 2012; cwl_eval.)

    Worked example, one document of gain 1 and T = 1: the chance of reading rank i is
    (2 / (i + 1))^2, so W(1) = 1 / sum_{i<=1000} 4 / (i + 1)^2 = 0.38824...

    >>> from evaltool import evaluate
    >>> round(evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["INSQ(max_rel=1)"]).summary["INSQ(max_rel=1)"], 5)
    0.38824
    """
    return expected_rate_of_gain(
        batch, p, lambda gains, ranks, p: np.broadcast_to(_insq_factor(ranks, p.T), gains.shape)
    )


@measure(
    "SDCG",
    options=(
        CUTOFF_REQUIRED,
        Option("dcg", str, "log2", choices=("log2",), doc="DCG discount (only 'log2')"),
        MIN_REL,
        MAX_REL,
    ),
    check=_rel_range,
    oracle=CWL_EVAL,
)
def scaled_dcg(batch, p):
    """Scaled DCG@k: DCG of the top k divided by the sum of its discounts, sum_{i<=k} g(i) / log2(i + 1) / sum_{i<=k} 1 / log2(i + 1).

    As C/W/L reads it, C(i) = log2(i + 1) / log2(i + 2) for i < k, 0 after: the weights
    are DCG's discounts, normalised. Unlike nDCG it is not divided by the ideal ranking's
    DCG, so a query with few relevant documents scores low.

    Edge cases: 0 for an empty ranking or one without gain in the top k.
    (Järvelin & Kekäläinen 2002; Moffat 2013; cwl_eval.)

    Worked example, grades [1, 0] with max_rel=1 at k = 2: 1 / (1 + 1 / log2(3)) = 0.61314...

    >>> from evaltool import evaluate
    >>> round(evaluate({"q": {"a": 1}}, {"q": {"a": 2.0, "x": 1.0}}, ["SDCG(max_rel=1)@2"]).summary["SDCG(max_rel=1)@2"], 5)
    0.61315
    """

    def continuation(gains, ranks, p):
        ratio = np.log2(ranks + 1.0) / np.log2(ranks + 2.0)
        return np.broadcast_to(np.where(ranks < p.cutoff, ratio, 0.0), gains.shape)

    return expected_rate_of_gain(batch, p, continuation)


@measure("NERR8", options=(CUTOFF_REQUIRED, MIN_REL, MAX_REL), check=_rel_range, oracle=CWL_EVAL)
def nerr_eq8(batch, p):
    """Not-but-nearly ERR, equation 8: C(i) = 1 - g(i) for i < k, 0 after.

    The ERR user who stops at a document with the chance of its gain, read to rank k
    and normalised as C/W/L requires.

    Edge cases: 0 for an empty ranking; a document of gain 1 at rank 1 gives 1.
    (Azzopardi, Mackenzie & Moffat 2021, "ERR is not C/W/L"; cwl_eval.)

    Worked example, grades [1, ...] with max_rel=1: C(1) = 0, the user reads rank 1 only: 1.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 2.0, "x": 1.0}}, ["NERR8(max_rel=1)@5"]).summary
    {'NERR8(max_rel=1)@5': 1.0}
    """

    def continuation(gains, ranks, p):
        return np.where(ranks < p.cutoff, 1.0 - gains, 0.0)

    return expected_rate_of_gain(batch, p, continuation)


@measure("NERR9", options=(CUTOFF_REQUIRED, MIN_REL, MAX_REL), check=_rel_range, oracle=CWL_EVAL)
def nerr_eq9(batch, p):
    """Not-but-nearly ERR, equation 9: C(i) = i / (i + 1) * (1 - g(i)) for i < k, 0 after.

    ERR's reciprocal-rank discount folded into the continuation.

    Edge cases: 0 for an empty ranking. (Azzopardi, Mackenzie & Moffat 2021; cwl_eval.)

    Worked example, grades [0, 1] with max_rel=1 at k = 2: C(1) = 1/2, W = (2/3, 1/3): 1/3.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"b": 1}}, {"q": {"a": 2.0, "b": 1.0}}, ["NERR9(max_rel=1)@2"]).summary
    {'NERR9(max_rel=1)@2': 0.3333333333333333}
    """

    def continuation(gains, ranks, p):
        return np.where(ranks < p.cutoff, (ranks / (ranks + 1.0)) * (1.0 - gains), 0.0)

    return expected_rate_of_gain(batch, p, continuation)


@measure(
    "NERR10",
    options=(Option("p", float, 0.9, minimum=0, maximum=1, doc="persistence, as in RBP"), MIN_REL, MAX_REL),
    check=_rel_range,
    oracle=CWL_EVAL,
)
def nerr_eq10(batch, p):
    """Not-but-nearly ERR, equation 10: C(i) = p * (1 - g(i)), read to full depth (RBP's patience).

    Edge cases: 0 for an empty ranking. (Azzopardi, Mackenzie & Moffat 2021; cwl_eval.)

    Worked example, grades [0, 1] with max_rel=1 and p = 0.5: the chances of reading
    ranks 1, 2, 3, ... are 1, 0.5, 0, ...: W = (2/3, 1/3): 1/3.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"b": 1}}, {"q": {"a": 2.0, "b": 1.0}}, ["NERR10(p=0.5,max_rel=1)"]).summary
    {'NERR10(p=0.5,max_rel=1)': 0.3333333333333333}
    """
    return expected_rate_of_gain(batch, p, lambda gains, ranks, p: p.p * (1.0 - gains))


@measure("NERR11", options=(TARGET, MIN_REL, MAX_REL), check=_rel_range, oracle=CWL_EVAL)
def nerr_eq11(batch, p):
    """Not-but-nearly ERR, equation 11 (the paper's 12): C(i) = ((i + 2T - 1) / (i + 2T))^2 * (1 - g(i)).

    INSQ's patience and ERR's satisfaction, read to full depth.

    Edge cases: 0 for an empty ranking; a gain of 1 at rank 1 gives 1.
    (Azzopardi, Mackenzie & Moffat 2021; cwl_eval.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 2.0, "x": 1.0}}, ["NERR11(max_rel=1)"]).summary
    {'NERR11(max_rel=1)': 1.0}
    """
    return expected_rate_of_gain(batch, p, lambda gains, ranks, p: _insq_factor(ranks, p.T) * (1.0 - gains))
