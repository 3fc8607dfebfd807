"""Interpolated precision at recall levels, and its average (11-point); ir_measures' IPrec."""

from __future__ import annotations

import numpy as np

from evaltool.measures.base import JUDGED_ONLY, PYTREC, REL, Option, Params, measure
from evaltool.measures.restrict import view

RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _lround(x: np.ndarray) -> np.ndarray:
    """C's lround for non-negative x: halves away from zero, exact."""
    whole = np.floor(x)
    return (whole + (x - whole >= 0.5)).astype(np.int64)


def _trec9_round(x: np.ndarray) -> np.ndarray:
    """trec_eval 9's (and so pytrec_eval's) relevant-document count for a level: (long)(x + 0.9)."""
    return (np.asarray(x) + 0.9).astype(np.int64)


def interpolated_precision(batch, levels, rounding=_lround) -> np.ndarray:
    """Columns of interpolated precision at each recall level (trec_eval 10 rounding by default).

    The level is turned into a number of relevant documents c = lround(level * R); the
    value is the best precision at or after the c-th relevant document (c = 0 is treated
    as c = 1), and 0 if fewer than c relevant documents were retrieved. An empty ranking
    gives nan where c = 0, as trec_eval's 0/0 does.
    """
    rows = np.flatnonzero(batch.is_rel)
    seg = batch.seg[rows]
    prec = batch.rel_so_far[rows] / (batch.rank[rows] + 1.0)
    offsets = np.concatenate(([0], np.cumsum(np.bincount(seg, minlength=batch.n_queries))))
    padded = np.append(prec, -np.inf)
    found = batch.num_rel_ret
    out = np.zeros((batch.n_queries, len(levels)))
    for j, level in enumerate(levels):
        need = np.maximum(rounding(level * batch.num_rel), 1)
        ok = (found > 0) & (need <= found)
        q = np.flatnonzero(ok)
        if len(q) == 0:
            continue
        bounds = np.empty(2 * len(q), dtype=np.int64)
        bounds[0::2] = offsets[q] + need[q] - 1
        bounds[1::2] = offsets[q + 1]
        out[q, j] = np.maximum.reduceat(padded, bounds)[0::2]
    # trec_eval starts from precision = relevant retrieved / retrieved: 0/0 for an empty
    # ranking (-J, -M 0), which it prints as nan at the levels needing 0 relevant documents
    empty = batch.num_ret == 0
    if empty.any():
        for j, level in enumerate(levels):
            out[empty & (rounding(level * batch.num_rel) == 0), j] = np.nan
    return out


@measure("iprec_at_recall", params=Params.FRACTIONS, default=RECALL_LEVELS)
def iprec_at_recall(batch, levels):
    """Interpolated precision at recall level x: max precision at any rank with recall >= x.

    trec_eval 10 turns x into lround(x * R) relevant documents (trec_eval 9 and
    pytrec_eval add 0.9 and truncate instead).

    Edge cases: 0 at every level when R = 0, and at levels beyond the recall the ranking reaches.
    (Manning, Raghavan & Schütze 2008, section 8.4; trec_eval 10.0, ``m_iprec_at_recall.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["iprec_at_recall.0.5,1"]).summary
    {'iprec_at_recall_0.50': 1.0, 'iprec_at_recall_1.00': 0.6666666666666666}
    """
    return interpolated_precision(batch, levels)


@measure("11pt_avg", params=Params.NUMBERS, default=RECALL_LEVELS)
def eleven_point_average(batch, levels):
    """Interpolated precision averaged over recall levels (default the 11 points 0, 0.1, ..., 1).

    Levels are used in the order given, as trec_eval does (it does not sort them): it
    fills them from the last one backwards while walking up the ranking, so a level given
    before a smaller one (0.5 in ``11pt_avg.0.5,0.2``; ``11pt_avg.0.2,0.5`` is fine), a
    level of 0 relevant documents, and every level before either of them get the best
    precision of the whole ranking instead. Levels beyond the relevant documents
    retrieved count 0 only at the end of the list.

    Edge cases: 0 when R = 0; the order quirks above. (Manning, Raghavan & Schütze 2008, section
    8.4; trec_eval 10.0, ``m_11pt_avg.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"x": 3.0, "a": 2.0}}, ["11pt_avg"]).summary
    {'11pt_avg': 0.5}
    """
    levels = list(levels)
    values = interpolated_precision(batch, levels)
    top = interpolated_precision(batch, [0.0])[:, 0]
    found = batch.num_rel_ret
    started = np.zeros(batch.n_queries, dtype=bool)
    stuck = np.zeros(batch.n_queries, dtype=bool)
    previous = np.full(batch.n_queries, np.iinfo(np.int64).max)
    total = np.zeros(batch.n_queries)
    for j in reversed(range(len(levels))):
        need = _lround(levels[j] * batch.num_rel)
        started |= need <= found
        reached = started & ~stuck & (need <= previous) & (need >= 1)
        stuck |= started & ~reached
        previous = np.where(reached, need, previous)
        total += np.where(stuck, top, np.where(reached, values[:, j], 0.0))
    return total / len(levels)


@measure(
    "IPrec",
    options=(
        Option("recall", float, doc="recall level in [0, 1] (written @r; required)", at=True, required=True, minimum=0),
        REL,
        JUDGED_ONLY,
    ),
    oracle=PYTREC,
)
def named_interpolated_precision(batch, p):
    """Interpolated precision at recall level r: the best precision at any rank where recall >= r.

    As ir_measures (through pytrec_eval, trec_eval 9) computes it: level r needs
    c = (long)(r * R + 0.9) relevant documents (c = 0 counts as 1), and the value is the
    best precision at or after the c-th relevant retrieved document, 0 if fewer were
    retrieved. trec_eval 10's ``iprec_at_recall`` rounds c = lround(r * R) instead; the
    two differ when r * R has a fraction in (0.1, 0.5), e.g. r = 0.3, R = 7.
    (Manning et al. 2008, section 8.4.)

    Edge cases: 0 when R = 0 or fewer than c relevant documents are retrieved.

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["IPrec@0.5", "IPrec@1"]).summary
    {'IPrec@0.5': 1.0, 'IPrec@1': 0.6666666666666666}
    """
    return interpolated_precision(view(batch, p), [p.recall], rounding=_trec9_round)[:, 0]
