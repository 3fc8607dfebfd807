"""How far raters agree: Cohen's kappa per pair of raters, Fleiss' kappa, Krippendorff's alpha.

All three compare the agreement observed with the agreement chance would give, from the
grades themselves (a pair of raters who give almost only zeros agree a lot by chance).
A value is 1 for perfect agreement, 0 for chance, below 0 for worse than chance, and None
when it is undefined (fewer than two rated items, or every grade the same, so that chance
already agrees perfectly).

* Cohen's kappa (Cohen 1960), for two raters over the pairs both graded:
  ``kappa = 1 - sum(w * O) / sum(w * E)``, ``O`` the matrix of observed grade pairs, ``E`` the
  one expected from each rater's grade frequencies (outer product over the count), ``w`` the
  disagreement weights: 1 off the diagonal (unweighted), ``|a - b|`` (linear) or ``(a - b)**2``
  (quadratic) for grades a and b (Cohen 1968). Weighted forms are given for scales of more than
  two grades. This is scikit-learn's ``cohen_kappa_score`` with ``labels`` the scale's grades.
* Fleiss' kappa (Fleiss 1971), over every rater: per pair ``P_i = (sum_j n_ij**2 - n_i) /
  (n_i (n_i - 1))`` with ``n_ij`` the raters who gave grade j, ``p_j`` each grade's share of all
  ratings, ``kappa = (mean P_i - sum p_j**2) / (1 - sum p_j**2)``, over the pairs at least two
  raters graded; when every pair has the same number of raters this is statsmodels'
  ``fleiss_kappa``; otherwise the usual generalisation to varying counts.
* Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"),
  ordinal: ``alpha = 1 - (n - 1) sum(o_ck d_ck) / sum(n_c n_k d_ck)`` with ``o`` the coincidence
  matrix of grades within a pair, ``n_c`` its margins, and the ordinal distance ``d_ck = (sum of
  n_g for g from c to k - (n_c + n_k) / 2) ** 2``; pairs graded by one rater do not count. On two
  grades it is the nominal alpha. This is the ``krippendorff`` package's ``alpha(...,
  level_of_measurement="ordinal")`` with the scale's grades as ``value_domain``.

>>> from evaltool.judgments.sets import Judgment
>>> a = [2, 0, 1, 3, 0, 1]
>>> b = [2, 0, 2, 3, 0, 0]
>>> grades = [Judgment("q", f"d{i}", "ana", x) for i, x in enumerate(a)] + \\
...          [Judgment("q", f"d{i}", "ben", y) for i, y in enumerate(b)]
>>> figures = agreement(grades, grades=(0, 1, 2, 3))
>>> [(k["weights"], round(k["kappa"], 4)) for k in figures["cohen_kappa"]]
[(None, 0.5556), ('linear', 0.7391), ('quadratic', 0.8723)]
>>> round(figures["fleiss_kappa"], 4), round(figures["krippendorff_alpha"], 4)
(0.5294, 0.8696)
>>> figures["disagreements"]
[{'query_id': 'q', 'doc_id': 'd2', 'grades': {'ana': 1, 'ben': 2}}, {'query_id': 'q', 'doc_id': 'd5', 'grades': {'ana': 1, 'ben': 0}}]
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from evaltool.judgments.adjudication import by_pair

WEIGHTS = (None, "linear", "quadratic")


def _defined(value: float) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def cohen_kappa(first, second, grades, weights: str | None = None) -> float | None:
    """Cohen's kappa of two raters' grades of the same items (see the module docstring).

    >>> round(cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0], (0, 1)), 4)
    0.5
    """
    index = {g: i for i, g in enumerate(grades)}
    size = len(grades)
    observed = np.zeros((size, size))
    np.add.at(observed, ([index[g] for g in first], [index[g] for g in second]), 1)
    total = observed.sum()
    if total == 0:
        return None
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / total
    values = np.asarray(grades, dtype=float)
    distance = np.abs(values[:, None] - values[None, :])
    w = {None: (distance > 0).astype(float), "linear": distance, "quadratic": distance**2}[weights]
    chance = (w * expected).sum()
    if chance == 0:
        return None
    return _defined(1 - (w * observed).sum() / chance)


def fleiss_kappa(counts: np.ndarray) -> float | None:
    """Fleiss' kappa of an items x grades table of counts (rows with fewer than two ratings ignored).

    >>> round(fleiss_kappa(np.array([[2, 0], [0, 2], [1, 1]])), 4)
    0.3333
    """
    counts = np.asarray(counts, dtype=float)
    raters = counts.sum(axis=1)
    counts, raters = counts[raters >= 2], raters[raters >= 2]
    if len(counts) < 1:
        return None
    per_item = ((counts**2).sum(axis=1) - raters) / (raters * (raters - 1))
    shares = counts.sum(axis=0) / raters.sum()
    chance = (shares**2).sum()
    if chance == 1:
        return None
    return _defined((per_item.mean() - chance) / (1 - chance))


def krippendorff_alpha(counts: np.ndarray, grades) -> float | None:
    """Krippendorff's ordinal alpha of an items x grades table of counts (``grades`` ascending).

    >>> round(krippendorff_alpha(np.array([[2, 0], [0, 2], [1, 1]]), (0, 1)), 4)
    0.4444
    """
    counts = np.asarray(counts, dtype=float)
    raters = counts.sum(axis=1)
    counts, raters = counts[raters >= 2], raters[raters >= 2]
    if len(counts) == 0:
        return None
    # coincidences within each item: o_ck = sum_u n_uc (n_uk - [c == k]) / (m_u - 1)
    coincidence = np.einsum("uc,uk->ck", counts / (raters - 1)[:, None], counts)
    coincidence -= np.diag((counts / (raters - 1)[:, None]).sum(axis=0))
    margins = coincidence.sum(axis=1)
    total = margins.sum()
    cumulative = np.cumsum(margins)
    size = len(grades)
    low, high = np.minimum.outer(np.arange(size), np.arange(size)), np.maximum.outer(np.arange(size), np.arange(size))
    between = cumulative[high] - np.where(low > 0, cumulative[np.maximum(low - 1, 0)], 0)
    distance = (between - (margins[low] + margins[high]) / 2) ** 2
    expected = (np.outer(margins, margins) * distance).sum()
    if expected == 0:
        return None
    return _defined(1 - (total - 1) * (coincidence * distance).sum() / expected)


def _table(pairs: dict, grades) -> np.ndarray:
    index = {g: i for i, g in enumerate(grades)}
    table = np.zeros((len(pairs), len(grades)), dtype=np.int64)
    for row, by_rater in enumerate(pairs.values()):
        for grade in by_rater.values():
            table[row, index[grade]] += 1
    return table


def _cohen(pairs: dict, raters: list[str], grades) -> list[dict]:
    out = []
    for first, second in combinations(raters, 2):
        both = [(g[first], g[second]) for g in pairs.values() if first in g and second in g]
        for weights in WEIGHTS if len(grades) > 2 else (None,):
            kappa = cohen_kappa([a for a, _ in both], [b for _, b in both], grades, weights) if both else None
            out.append({"raters": [first, second], "kappa": kappa, "weights": weights, "pairs": len(both)})
    return out


def agreement(judgments, grades) -> dict:
    """The agreement figures of ``judgments`` (:class:`~evaltool.judgments.sets.Judgment` s) on a
    scale of ``grades`` (ascending): ``raters``, ``pairs`` (judged pairs), ``rated_twice`` (pairs at
    least two raters graded), ``cohen_kappa`` (per pair of raters, per weighting), ``fleiss_kappa``,
    ``krippendorff_alpha``, ``disagreements`` (``query_id``, ``doc_id``, ``grades`` by rater) and
    ``queries`` (per query: ``query_id``, ``pairs``, ``fleiss_kappa``, ``krippendorff_alpha``,
    ``disagreements``, the count)."""
    grades = tuple(sorted(grades))
    pairs = by_pair(judgments)
    raters = sorted({r for g in pairs.values() for r in g})
    table = _table(pairs, grades)
    disagreements = [
        {"query_id": q, "doc_id": d, "grades": dict(sorted(g.items()))}
        for (q, d), g in pairs.items()
        if len(set(g.values())) > 1
    ]
    queries = []
    keys = list(pairs)
    for query in dict.fromkeys(q for q, _ in keys):
        rows = [i for i, (q, _) in enumerate(keys) if q == query]
        queries.append(
            {
                "query_id": query,
                "pairs": len(rows),
                "fleiss_kappa": fleiss_kappa(table[rows]),
                "krippendorff_alpha": krippendorff_alpha(table[rows], grades),
                "disagreements": sum(1 for d in disagreements if d["query_id"] == query),
            }
        )
    return {
        "raters": raters,
        "grades": list(grades),
        "pairs": len(pairs),
        "rated_twice": int((table.sum(axis=1) >= 2).sum()) if len(pairs) else 0,
        "cohen_kappa": _cohen(pairs, raters, grades),
        "fleiss_kappa": fleiss_kappa(table),
        "krippendorff_alpha": krippendorff_alpha(table, grades),
        "disagreements": disagreements,
        "queries": queries,
    }


def set_agreement(db, name: str, version: int | None = None, *, pairs=None) -> dict:
    """:func:`agreement` of judgment set ``name`` as of ``version`` (default: the current), with
    ``set``, ``version`` and ``scale`` added; ``pairs`` (a set of (query, document)) keeps those
    pairs only (a task's)."""
    from evaltool.history.queries import opened
    from evaltool.judgments.sets import judgments_of, read_set

    with opened(db) as history, history.reading() as conn:
        judgment_set = read_set(conn, name)
        shown = judgment_set.version if version is None else int(version)
        judged = judgments_of(conn, name, shown)
    if pairs is not None:
        judged = [jd for jd in judged if (jd.query_id, jd.doc_id) in pairs]
    return {
        "set": name,
        "version": shown,
        "scale": judgment_set.scale.describe(),
        **agreement(judged, judgment_set.scale.grades),
    }
