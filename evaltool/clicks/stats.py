"""Means over impressions (micro) or queries (macro), and percentile bootstrap intervals.

Micro: the mean of the defined per-impression values, so a query searched often weighs
more (the usual MRR from clicks: one reciprocal rank per impression, averaged).
Macro: each query's mean over its impressions first, then the mean over the queries that
have a defined value, so every distinct query weighs the same.

The interval is the percentile bootstrap (Efron & Tibshirani 1993, ch. 13): resample the
values with replacement ``n_resamples`` times, take the mean of each resample, and report
the (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of those means — what
``scipy.stats.bootstrap(..., method='percentile')`` computes. It is vectorised: a resample
of n values drawn from K distinct values is a multinomial draw of how often each appears,
so the cost is resamples × K rather than resamples × n (most click metrics take a few
distinct values); with many distinct values the resamples are drawn as indices in chunks.

>>> lo, hi = bootstrap_interval(np.array([0.0, 1.0, 0.5, 1.0, 0.0, 1.0]), seed=1)
>>> 0.0 <= lo < hi <= 1.0
True
>>> bootstrap_interval(np.array([0.25, 0.25])), bootstrap_interval(np.array([]))
((0.25, 0.25), (None, None))
"""

from __future__ import annotations

import math

import numpy as np

MULTINOMIAL_MAX_DISTINCT = 4096
GATHER_CHUNK = 1 << 23


def bootstrap_interval(
    values: np.ndarray, *, confidence: float = 0.95, n_resamples: int = 2000, seed: int | None = 0
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of the mean of the finite ``values``; (None, None) without any."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    n = len(values)
    if n == 0:
        return None, None
    distinct, counts = np.unique(values, return_counts=True)
    if len(distinct) == 1:
        return float(distinct[0]), float(distinct[0])
    rng = np.random.default_rng(seed)
    if len(distinct) <= MULTINOMIAL_MAX_DISTINCT:
        draws = rng.multinomial(n, counts / n, size=n_resamples)
        means = draws @ distinct / n
    else:
        means = np.empty(n_resamples)
        step = max(1, GATHER_CHUNK // n)
        for start in range(0, n_resamples, step):
            size = min(step, n_resamples - start)
            means[start : start + size] = values[rng.integers(0, n, size=(size, n))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def defined_mean(values: np.ndarray) -> float | None:
    """Mean of the finite values; None when there are none ("no impressions" is null, not 0)."""
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    return float(math.fsum(finite) / len(finite)) if len(finite) else None


def per_query_means(values: np.ndarray, imp_query: np.ndarray, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """Each query's mean over its impressions with a defined value (nan if none), and how many there were."""
    defined = np.isfinite(values)
    codes = imp_query[defined]
    counts = np.bincount(codes, minlength=n_queries)
    sums = np.bincount(codes, weights=values[defined], minlength=n_queries)
    means = np.divide(sums, counts, out=np.full(n_queries, np.nan), where=counts > 0)
    return means, counts


def summarise(
    values: np.ndarray,
    imp_query: np.ndarray,
    n_queries: int,
    *,
    average: str,
    confidence: float,
    n_resamples: int,
    seed: int | None,
) -> dict:
    """Micro and macro means, the interval of the chosen one, the impressions and queries behind it.

    ``query_means`` holds each query's mean (nan where it has no defined value).
    """
    query_means, counts = per_query_means(values, imp_query, n_queries)
    micro, macro = defined_mean(values), defined_mean(query_means)
    sample = values if average == "micro" else query_means
    low, high = bootstrap_interval(sample, confidence=confidence, n_resamples=n_resamples, seed=seed)
    return {
        "value": micro if average == "micro" else macro,
        "micro": micro,
        "macro": macro,
        "ci": [low, high],
        "impressions": int(np.isfinite(values).sum()),
        "queries": int((counts > 0).sum()),
        "query_means": query_means,
    }
