"""Expected reciprocal rank (Chapelle et al. 2009), as the TREC Web track's gdeval computes it."""

from __future__ import annotations

import numpy as np

from evaltool.measures.base import CUTOFF, Option, measure, segment_cumsum


@measure(
    "ERR",
    options=(CUTOFF, Option("max_grade", int, 4, doc="the top of the grade scale, g_max", minimum=1)),
    oracle="ir_measures (gdeval)",
)
def expected_reciprocal_rank(batch, p):
    """Expected reciprocal rank over the top k: sum over ranks i of R_i / i * prod over j < i of (1 - R_j).

    R_i = (2^g - 1) / 2^g_max is the chance that the user stops at a document of grade g
    (negative grades and documents outside the qrels: g = 0). g_max is ``max_grade``,
    4 as in gdeval; a query with a higher grade uses its own highest grade instead, so R
    stays a probability (gdeval refuses such qrels, and numeric query ids only; evaltool
    takes any). Without a cutoff, the whole ranking. (Chapelle, Metzler, Zhang & Grinspan
    2009; gdeval, TREC 2010 Web track.)

    Worked example, grades [2, 0, 4] with g_max = 4: R = 3/16, 0, 15/16;
    ERR = 3/16 + (13/16) * (15/16) / 3 = 0.4414...

    Edge cases: 0 for an empty ranking or a query without positive grades.

    >>> from evaltool import evaluate
    >>> summary = evaluate({"q": {"a": 2, "b": 0, "c": 4}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, ["ERR", "ERR@2"]).summary
    >>> {name: round(value, 12) for name, value in summary.items()}
    {'ERR': 0.44140625, 'ERR@2': 0.1875}
    """
    top = np.zeros(batch.n_queries, dtype=np.int64)
    judged = np.diff(batch.judged_offsets) > 0
    top[judged] = batch.judged_grades[batch.judged_offsets[:-1][judged]]
    g_max = np.maximum(top, p.max_grade).astype(np.float64)
    grade = np.where(batch.rel > 0, batch.rel, 0).astype(np.float64)
    stop = (np.exp2(grade) - 1.0) / np.exp2(g_max[batch.seg])
    if p.cutoff is not None:
        stop = np.where(batch.rank < p.cutoff, stop, 0.0)
    # chance of reaching each row: the product of (1 - R) over the rows above it
    log_pass = np.log1p(-stop)
    reach = np.exp(segment_cumsum(log_pass, batch.offsets) - log_pass)
    return batch.total(stop * reach / (batch.rank + 1.0))
