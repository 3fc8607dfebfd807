"""trec_eval's ``-Z``: per-query values as standard deviations from a reference mean.

The reference table (``qid measure mean stddev`` lines) is read by
:func:`evaltool.io.zscores.read_zscores`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

MISSING_ZSCORE = -1000000.0


def to_zscores(values: np.ndarray, qids: list[str], name: str, table: Mapping) -> np.ndarray:
    """Deviation from the reference mean in standard deviations; -1000000 where unknown (trec_eval's ``-Z``).

    >>> to_zscores(np.array([0.5, 0.2, 0.3]), ["a", "b", "c"], "map", {("a", "map"): (0.3, 0.1), ("b", "map"): (0.2, 0)})
    array([ 2.e+00,  0.e+00, -1.e+06])
    """
    out = np.empty(len(values))
    for i, (qid, value) in enumerate(zip(qids, values)):
        ref = table.get((qid, name))
        if ref is None:
            out[i] = MISSING_ZSCORE
        elif ref[1]:
            out[i] = (value - ref[0]) / ref[1]
        else:
            out[i] = 0.0 if value == ref[0] else MISSING_ZSCORE
    return out
