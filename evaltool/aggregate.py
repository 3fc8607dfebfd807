"""From per-query values to summary values, as trec_eval combines them.

Sums run in query order (sequentially, like trec_eval's accumulator), so summaries
agree with trec_eval to the last bit, not only to the printed digits.
"""

from __future__ import annotations

import math

import numpy as np

from evaltool.measures.base import Agg


def sequential_sum(values: np.ndarray) -> float:
    """Left-to-right float sum (numpy's pairwise sum can differ in the last bit)."""
    return float(np.cumsum(values)[-1]) if len(values) else 0.0


def summarize(agg: Agg, values: np.ndarray, n_queries: int) -> float:
    if agg is Agg.MEAN:
        return sequential_sum(values) / n_queries if n_queries else 0.0
    if agg is Agg.SUM:
        return sequential_sum(values)
    if agg is Agg.GEOMETRIC:
        return math.exp(sequential_sum(values) / n_queries) if n_queries else 0.0
    if agg is Agg.COUNT:
        return float(n_queries)
    if agg is Agg.MEAN_DEFINED:
        defined = np.asarray(values, dtype=np.float64)
        defined = defined[~np.isnan(defined)]
        return sequential_sum(defined) / len(defined) if len(defined) else math.nan
    raise ValueError(f"no numeric summary for {agg}")
