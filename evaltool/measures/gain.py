"""Graded measures with trec_eval's gain parameters: ndcg, ndcg_rel, Rndcg, dcg, ideal_dcg, G, RBP (and ir_measures' RBP).

``ndcg_cut`` is trec_eval's spelling of ``nDCG@k`` and lives with it in :mod:`evaltool.measures.dcg`.

Gains default to the grade; ``-m ndcg.1=3,2=9`` overrides the gain of grades 1 and 2.
The discount is log2(rank + 1) for 1-based ranks. ``-l`` does not change graded measures.
"""

from __future__ import annotations

import math

import numpy as np

from evaltool.measures import restrict
from evaltool.measures.base import (
    Better,
    CUTOFF,
    Option,
    Params,
    discount,
    gain_function,
    log2_int,
    measure,
    pair_gains,
    pair_value,
    powers,
    safe_div,
    segment_cumsum,
)

INT_MIN = -(2**31)


def _c_gain_compare(a: float, b: float) -> int:
    """trec_eval's ``comp_rel_gain``: the double ``a - b`` returned as a C ``int``.

    The conversion truncates toward zero, so gains less than 1 apart compare equal
    (0.5 vs 0 is "equal", 2.5 vs 2 too). Out-of-range differences give INT_MIN, as
    x86-64's cvttsd2si does.
    """
    diff = a - b
    if not math.isfinite(diff) or not INT_MIN <= diff < 2**31:
        return INT_MIN
    return math.trunc(diff)


def _glibc_msort(items: list, compare) -> list:
    """glibc's qsort for small arrays: a top-down merge sort, left half first, ties to the left.

    Reproduced step by step because trec_eval's gain comparator is not a consistent
    order, so the result depends on the algorithm, not only on the keys.
    """
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left, right = _glibc_msort(items[:half], compare), _glibc_msort(items[half:], compare)
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if compare(left[i][1], right[j][1]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def _gain_table(pairs, n_levels: int) -> list[tuple[int, float, bool]]:
    """trec_eval's ``setup_gains`` for a query with grades 0..n_levels-1: sorted (level, gain, counted).

    Entries are the ``level=gain`` parameters in the order given, then every level below
    ``n_levels`` without a parameter (gain = level); ``counted`` marks the one entry per
    level that carries the number of judged documents at that level (the first one).
    """
    entries = []
    for key, value in pairs:
        body = key[1:] if key[:1] in "+-" else key
        if body.isdigit():
            entries.append([int(key), float(value), False])
    for level in range(n_levels):
        first = next((e for e in entries if e[0] == level), None)
        if first is not None:
            first[2] = True
        else:
            entries.append([level, float(level), True])
    return [tuple(e) for e in _glibc_msort(entries, _c_gain_compare)]


def _plain_gains(pairs) -> bool:
    """True when trec_eval's gain sort is a true sort: integral gains, one per level.

    Then the ideal ranking is simply every positive gain, descending.
    """
    levels = [int(key) for key, _ in pairs if (key[1:] if key[:1] in "+-" else key).isdigit()]
    gains = list(pair_gains(pairs).values())
    return len(levels) == len(set(levels)) and all(math.isfinite(g) and g == int(g) and abs(g) < 2**30 for g in gains)


def _gains(batch, pairs):
    """Gain of every stored row, and the ideal gains per query as trec_eval walks them.

    trec_eval sorts the gain levels with a comparator that truncates the difference to an
    int, then builds the ideal ranking by walking that list from the top: skipping empty
    levels and stopping at the first non-empty level whose gain is not positive. With
    integral gains that is the usual descending order; with fractional gains
    (``G.1=0.5,3=2.5``) the walk can visit levels out of order or stop early, and the
    values follow it.
    """
    if _plain_gains(pairs):
        gain_of = gain_function(pair_gains(pairs))
        return gain_of(batch.rel), batch.ideal_csr(gain_of)
    n = batch.n_queries
    has = np.diff(batch.judged_offsets) > 0
    n_levels = np.zeros(n, dtype=np.int64)
    n_levels[has] = batch.judged_grades[batch.judged_offsets[:-1][has]] + 1
    row_gains = np.zeros(len(batch.rel))
    row_levels = n_levels[batch.seg]
    parts_q, parts_key, parts_gain, parts_count = [], [], [], []
    for levels in np.unique(n_levels):
        levels = int(levels)
        table = _gain_table(pairs, levels)
        queries = np.flatnonzero(n_levels == levels)
        # gain of a grade: the first entry of that level in sorted order (trec_eval's get_gain)
        lookup = {}
        for level, gain, _ in table:
            lookup.setdefault(level, gain)
        rows = row_levels == levels
        for level, gain in lookup.items():
            row_gains[rows & (batch.rel == level)] = gain
        if not table or table[-1][1] <= 0 or levels == 0:
            continue
        local = np.full(n, -1, dtype=np.int64)
        local[queries] = np.arange(len(queries))
        judged_local = local[batch.judged_seg]
        inside = judged_local >= 0
        counts = np.bincount(
            judged_local[inside] * levels + batch.judged_grades[inside], minlength=len(queries) * levels
        ).reshape(len(queries), levels)
        alive = np.ones(len(queries), dtype=bool)
        for key, (level, gain, counted) in enumerate(reversed(table)):
            count = counts[:, level] if counted and level < levels else np.zeros(len(queries), dtype=np.int64)
            present = alive & (count > 0)
            if gain <= 0:
                alive &= ~present
                continue
            parts_q.append(queries[present])
            parts_key.append(np.full(int(present.sum()), key))
            parts_gain.append(np.full(int(present.sum()), gain))
            parts_count.append(count[present])
    if parts_q:
        q = np.concatenate(parts_q)
        key = np.concatenate(parts_key)
        order = np.lexsort((key, q))
        count = np.concatenate(parts_count)[order]
        seg = np.repeat(q[order], count)
        ideal = np.repeat(np.concatenate(parts_gain)[order], count)
    else:
        seg, ideal = np.zeros(0, dtype=np.int64), np.zeros(0)
    offsets = np.concatenate(([0], np.cumsum(np.bincount(seg, minlength=n)))).astype(np.int64)
    return row_gains, (offsets, ideal)


def _ideal_prefix(batch, ideal_offsets, ideal_gains):
    """Cumulative ideal DCG at each ideal position (per query, in order)."""
    seg = np.repeat(np.arange(batch.n_queries), np.diff(ideal_offsets))
    pos = np.arange(len(ideal_gains)) - ideal_offsets[seg]
    return segment_cumsum(ideal_gains / discount(pos), ideal_offsets), seg, pos


def _ideal_dcg_at(ideal_offsets, prefix, depth):
    """Ideal DCG over the first ``depth`` ideal positions (per query)."""
    n = np.diff(ideal_offsets)
    take = np.minimum(depth, n)
    out = np.zeros(len(n))
    has = take > 0
    out[has] = prefix[ideal_offsets[:-1][has] + take[has] - 1]
    return out


def _dcg_parts(batch, pairs):
    gains, (ideal_offsets, ideal_gains) = _gains(batch, pairs)
    contrib = gains / discount(batch.rank)
    dcg = batch.total(contrib)
    prefix, _, _ = _ideal_prefix(batch, ideal_offsets, ideal_gains)
    ideal = _ideal_dcg_at(ideal_offsets, prefix, np.diff(ideal_offsets))
    return dcg, ideal


@measure("dcg", params=Params.PAIRS, same_as="DCG")
def dcg(batch, pairs):
    """Discounted cumulative gain of the whole ranking: sum of gain / log2(rank + 1).

    Edge cases: 0 for an empty ranking; negative grades and documents outside the qrels gain 0
    unless a gain parameter says otherwise. (Järvelin & Kekäläinen 2002; trec_eval 10.0.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 2, "b": 1}}, {"q": {"a": 3.0, "b": 2.0}}, ["dcg"]).summary
    {'dcg': 2.6309297535714578}
    """
    return _dcg_parts(batch, pairs)[0]


@measure("ideal_dcg", params=Params.PAIRS, better=Better.NEITHER)  # a fact of the qrels
def ideal_dcg(batch, pairs):
    """DCG of the best possible ranking of every judged document with positive gain.

    Edge cases: 0 when no judged document has a positive gain; the ranking does not matter.
    (Järvelin & Kekäläinen 2002; trec_eval 10.0.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 2, "b": 1}}, {"q": {"b": 3.0}}, ["ideal_dcg"]).summary
    {'ideal_dcg': 2.6309297535714578}
    """
    return _dcg_parts(batch, pairs)[1]


@measure("ndcg", params=Params.PAIRS, same_as="nDCG")
def ndcg(batch, pairs):
    """nDCG of the whole ranking (Järvelin & Kekäläinen 2002): DCG / ideal DCG.

    Edge cases: 0 when the ideal DCG is 0; fractional gains follow trec_eval's truncating gain sort
    (see ``_gains``). (Järvelin & Kekäläinen 2002; trec_eval 10.0, ``m_ndcg_p.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["ndcg"]).summary
    {'ndcg': 0.6131471927654584}
    """
    got, ideal = _dcg_parts(batch, pairs)
    return safe_div(got, ideal)


@measure("ndcg_rel", params=Params.PAIRS)
def ndcg_rel(batch, pairs):
    """nDCG averaged over the relevant documents (positive gain).

    At each relevant retrieved document at rank i: DCG(i) / ideal DCG(min(i, n)),
    n = documents with positive gain; each relevant document not retrieved adds
    DCG(all) / ideal DCG(n). The sum is divided by n.

    Edge cases: 0 when no document has a positive gain. (Järvelin & Kekäläinen 2002; trec_eval 10.0,
    ``m_ndcg_rel.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 3.0, "x": 2.0}}, ["ndcg_rel"]).summary
    {'ndcg_rel': 0.8065735963827292}
    """
    gains, (ideal_offsets, ideal_gains) = _gains(batch, pairs)
    contrib = gains / discount(batch.rank)
    running = segment_cumsum(contrib, batch.offsets)
    prefix, _, _ = _ideal_prefix(batch, ideal_offsets, ideal_gains)
    n = np.diff(ideal_offsets)
    depth = np.minimum(batch.rank + 1, n[batch.seg])
    start = ideal_offsets[:-1][batch.seg]
    ideal_here = np.where(depth > 0, prefix[np.maximum(start + depth - 1, 0)] if len(prefix) else 0.0, 0.0)
    positive = gains > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = running / ideal_here
        total = batch.total(ratio, positive)
        dcg_all = batch.total(contrib)
        ideal_all = _ideal_dcg_at(ideal_offsets, prefix, n)
        total = total + (n - batch.count(positive)) * dcg_all / ideal_all
    return np.where(total > 0, safe_div(total, n), 0.0)


@measure("Rndcg", params=Params.PAIRS)
def r_ndcg(batch, pairs):
    """nDCG averaged at the R-levels: the ranks where the ideal gain changes.

    With 5 documents of gain 3, 3 of gain 2 and 10 of gain 1 the levels are 5, 8 and 18;
    a ranking longer than all of them adds one more point at its end (at num_retrieved).

    Edge cases: 0 when R = 0; nan when no R-level has a positive ideal DCG (trec_eval divides 0 by
    0). (Järvelin & Kekäläinen 2002; trec_eval 10.0, ``m_Rndcg.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 2, "b": 1}}, {"q": {"a": 3.0, "b": 2.0}}, ["Rndcg"]).summary
    {'Rndcg': 1.0}
    """
    gains, (ideal_offsets, ideal_gains) = _gains(batch, pairs)
    contrib = gains / discount(batch.rank)
    running = segment_cumsum(contrib, batch.offsets)
    prefix, iseg, ipos = _ideal_prefix(batch, ideal_offsets, ideal_gains)
    n = np.diff(ideal_offsets)
    # boundaries: ideal positions b in [1, n) where the gain changes, and b = n
    change = np.zeros(len(ideal_gains), dtype=bool)
    change[1:] = (ideal_gains[1:] != ideal_gains[:-1]) & (iseg[1:] == iseg[:-1])
    b_seg = np.concatenate((iseg[change], np.flatnonzero(n > 0)))
    b_at = np.concatenate((ipos[change], n[n > 0]))
    ideal_b = prefix[ideal_offsets[:-1][b_seg] + b_at - 1]
    # DCG of the ranking above min(b, num_ret): rows of the query ranked above b
    depth = np.minimum(b_at, batch.num_ret[b_seg])
    width = int(batch.rank.max()) + 2 if len(batch.rank) else 1
    row_key = batch.seg * width + batch.rank
    above = np.searchsorted(row_key, b_seg * width + np.minimum(depth, width - 1))
    has_rows = above > batch.offsets[:-1][b_seg]
    dcg_b = np.where(has_rows, running[np.maximum(above - 1, 0)] if len(running) else 0.0, 0.0)
    values = dcg_b / ideal_b
    # the extra point at num_retrieved when the ranking runs past the last level
    extra_q = np.flatnonzero((n > 0) & (batch.num_ret >= n + 2))
    dcg_all = batch.total(contrib)
    ideal_all = _ideal_dcg_at(ideal_offsets, prefix, n)
    seg_all = np.concatenate((b_seg, extra_q))
    order_key = np.concatenate((b_at, np.full(len(extra_q), np.iinfo(np.int64).max)))
    vals_all = np.concatenate((values, dcg_all[extra_q] / ideal_all[extra_q]))
    order = np.lexsort((order_key, seg_all))
    total = np.bincount(seg_all[order], weights=vals_all[order], minlength=batch.n_queries)
    count = np.bincount(seg_all, minlength=batch.n_queries)
    # no R-level with a positive ideal DCG: trec_eval divides 0 by 0 (nan)
    return np.where(batch.num_rel > 0, np.where(count > 0, safe_div(total, count), np.nan), 0.0)


@measure("G", params=Params.PAIRS)
def g_measure(batch, pairs):
    """G: gain discounted by the cost of reaching it, normalised by the total ideal gain.

    At rank i a document with gain g adds g / log2(2 + C(i) - S(i)), where C(i) sums
    max(ideal gain, 1) over ranks up to i and S(i) sums the gains retrieved so far.

    Edge cases: 0 when no judged document has a positive gain; negative grades gain 0. (Kishida
    2005; trec_eval 10.0, ``m_G.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 3.0}}, ["G"]).summary
    {'G': 1.0}
    """
    gains, (ideal_offsets, ideal_gains) = _gains(batch, pairs)
    n = np.diff(ideal_offsets)
    cost = segment_cumsum(np.maximum(ideal_gains, 1.0), ideal_offsets)
    got_so_far = segment_cumsum(gains, batch.offsets)
    depth = np.minimum(batch.rank + 1, n[batch.seg])
    start = ideal_offsets[:-1][batch.seg]
    cost_here = np.where(depth > 0, cost[np.maximum(start + depth - 1, 0)] if len(cost) else 0.0, 0.0)
    cost_here = cost_here + (batch.rank + 1 - depth)
    argument = (2 + cost_here) - got_so_far
    nonzero = gains != 0
    integral = np.all(argument[nonzero] == np.round(argument[nonzero]))
    with np.errstate(divide="ignore", invalid="ignore"):
        if integral:
            log = np.ones_like(argument)
            log[nonzero] = log2_int(argument[nonzero].astype(np.int64))
        else:
            log = np.log2(argument)
        weight = gains / log
    total = batch.total(weight, nonzero)
    ideal_total = batch_ideal_total(ideal_offsets, ideal_gains, batch.n_queries)
    return np.where(ideal_total > 0, safe_div(total, ideal_total), 0.0)


def batch_ideal_total(ideal_offsets, ideal_gains, n_queries):
    seg = np.repeat(np.arange(n_queries), np.diff(ideal_offsets))
    return np.bincount(seg, weights=ideal_gains, minlength=n_queries)


def _rbp_gains(batch, pairs) -> np.ndarray:
    """Per stored row, the gain normalised to [0, 1] per query as trec_eval does."""
    explicit = pair_gains(pairs)
    n_levels = np.zeros(batch.n_queries, dtype=np.int64)
    has = np.diff(batch.judged_offsets) > 0
    n_levels[has] = batch.judged_grades[batch.judged_offsets[:-1][has]] + 1
    low = np.zeros(batch.n_queries)
    high = np.zeros(batch.n_queries)
    for levels in np.unique(n_levels):
        entries = [explicit.get(level, float(level)) for level in range(levels)] + list(explicit.values())
        mask = n_levels == levels
        low[mask] = min(entries) if entries else 0.0
        high[mask] = max(entries) if entries else 0.0
    raw = gain_function(explicit)(batch.rel)
    known = (batch.rel >= 0) | np.isin(batch.rel, list(explicit))
    rescale = ((low < 0) | (high > 1))[batch.seg] & known
    lo, hi = low[batch.seg], high[batch.seg]
    return np.where(rescale, safe_div(raw - lo, hi - lo), raw)


@measure("rbp", params=Params.PAIRS)
def rank_biased_precision(batch, pairs):
    """Rank-biased precision (Moffat & Zobel 2008): (1 - p) * sum of gain * p^(rank - 1).

    Persistence ``p`` defaults to 0.9 (``-m rbp.p=0.8``). Gains are rescaled to [0, 1]
    per query when they leave that range.

    Edge cases: 0 for an empty ranking; unjudged documents gain 0 (their effect is ``rbp_resid``).
    (trec_eval 10.0, ``m_rbp.c``.)

    >>> from evaltool import evaluate
    >>> round(evaluate({"q": {"a": 1}}, {"q": {"x": 3.0, "a": 2.0}}, ["rbp"]).summary["rbp"], 4)
    0.09
    """
    p = pair_value(pairs, "p", 0.9)
    gains = _rbp_gains(batch, pairs)
    weight = powers(p, int(batch.rank.max()) if len(batch.rank) else 0)
    return (1.0 - p) * batch.total(gains * weight[batch.rank])


@measure("rbp_resid", params=Params.PAIRS, on_missing_bare=0.0, better=Better.NEITHER)  # judging coverage
def rbp_residual(batch, pairs):
    """RBP residual: the most RBP could still rise if every unjudged retrieved document were relevant.

    p^n + (1 - p) * sum of p^(rank - 1) over unjudged retrieved documents (n = retrieved);
    0 when every retrieved document is judged. With ``-c`` a query missing from the run
    scores 0, but only under the bare name (with ``-m rbp_resid.p=..`` trec_eval keeps the
    value of its one-document stand-in ranking, 1).

    Edge cases: as above. (Moffat & Zobel 2008; trec_eval 10.0, ``m_rbp_resid.c``.)

    >>> from evaltool import evaluate
    >>> round(evaluate({"q": {"a": 1}}, {"q": {"x": 3.0, "a": 2.0}}, ["rbp_resid"]).summary["rbp_resid"], 4)
    0.91
    """
    p = pair_value(pairs, "p", 0.9)
    top = int(batch.num_ret.max()) if batch.n_queries else 0
    weight = powers(p, top)
    seg, pos, rel = batch.dense(None)
    unjudged = rel < 0
    total = np.bincount(seg[unjudged], weights=weight[pos[unjudged]], minlength=batch.n_queries)
    any_unjudged = np.bincount(seg[unjudged], minlength=batch.n_queries) > 0
    return np.where(any_unjudged, weight[batch.num_ret] + (1 - p) * total, 0.0)


# ---------------------------------------------------------------- named-parameter measures (ir_measures' names)


@measure(
    "RBP",
    options=(
        CUTOFF,
        Option("p", float, 0.8, doc="persistence: the chance of going on to the next rank", minimum=0),
        Option(
            "rel",
            int,
            doc="binary gains: 1 for grade >= rel, else 0 (not given: graded gains, "
            "scaled to [0, 1] per query as trec_eval 10 does)",
            minimum=0,
        ),
        Option(
            "residual",
            bool,
            False,
            doc="give the residual instead: the most RBP could still rise if every unjudged document were relevant",
        ),
    ),
    oracle="ir_measures (cwl_eval) with rel; trec_eval 10.0 without",
)
def named_rank_biased_precision(batch, p):
    """Rank-biased precision: (1 - p) * sum over ranks i of gain(i) * p^(i - 1) (Moffat & Zobel 2008).

    With ``rel`` the gain is 1 for a grade >= rel and 0 otherwise (cwl_eval's RBP, as
    ir_measures computes ``RBP(rel=...)``); without, trec_eval 10's graded RBP: gains
    are the grades, scaled to [0, 1] per query (divided by the query's highest grade)
    when they leave that range. A cutoff k drops the ranks below k. ``p`` defaults to
    0.8 as in ir_measures (trec_eval's ``rbp`` defaults to 0.9).

    ``residual=True`` gives trec_eval 10's ``rbp_resid``: p^n + (1 - p) * sum of p^(i - 1)
    over the unjudged documents among the n retrieved (within the cutoff) -- what the
    unjudged documents and those past the end could still add; 0 when every retrieved
    document is judged (trec_eval's rule).

    Worked example, p = 0.5, grades [1, 0, 1]: (1 - 0.5) * (1 + 0.25) = 0.625.

    Edge cases: 0 for an empty ranking; unjudged documents gain 0.

    >>> from evaltool import evaluate
    >>> qrels, run = {"q": {"a": 1, "b": 0, "c": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "x": 0.5}}
    >>> evaluate(qrels, run, ["RBP(p=0.5)", "RBP(p=0.5,rel=1)@1", "RBP(p=0.5,residual=True)"]).summary
    {'RBP(p=0.5)': 0.625, 'RBP(p=0.5,rel=1)@1': 0.5, 'RBP(p=0.5,residual=True)': 0.125}
    """
    batch = restrict.top(batch, p.cutoff)
    pairs = (("p", p.p),)
    if p.residual:
        return rbp_residual(batch, pairs)
    if p.rel is None:
        return rank_biased_precision(batch, pairs)
    relevant = batch.rel >= p.rel
    weight = powers(p.p, int(batch.rank.max()) if len(batch.rank) else 0)
    return (1.0 - p.p) * batch.total(np.where(relevant, weight[batch.rank], 0.0))
