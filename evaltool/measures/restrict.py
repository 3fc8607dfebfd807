"""Views of a ranked batch that the named parameters ask for: another relevance level,
judged documents only, the top k only. Each returns a new batch; the original is untouched.

These apply to one measure what the options ``-l``, ``-J`` and ``-M`` apply to all:
``P(rel=2)@5`` scores as ``-l 2 -m P.5`` would, ``nDCG(judged_only=True)@10`` as
``-J -m ndcg_cut.10`` would.

>>> from evaltool.io.frames import qrels_from_dict, run_from_dict
>>> from evaltool.ranking import rank
>>> batch = rank(qrels_from_dict({"q": {"a": 2, "b": 1}}), run_from_dict({"q": {"x": 3.0, "a": 2.0, "b": 1.0}})).batch
>>> judged_only(batch).rank.tolist(), judged_only(batch).num_ret.tolist()
([0, 1], [2])
>>> at_level(batch, 2).num_rel.tolist()
[1]
>>> top(batch, 2).rank.tolist(), top(batch, 2).num_ret.tolist()
([1], [2])
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np


def at_level(batch, rel: int | None):
    """The batch with ``rel`` as the minimum relevant grade (None: unchanged)."""
    if rel is None or rel == batch.relevance_level:
        return batch
    return replace(batch, relevance_level=rel)


def judged_only(batch):
    """The batch with every retrieved document lacking a judgment dropped and the rest ranked anew.

    As trec_eval's ``-J``: documents outside the qrels and those with a negative grade go.
    """
    kept = batch.rel >= 0
    seg = batch.seg[kept]
    counts = np.bincount(seg, minlength=batch.n_queries).astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return replace(
        batch,
        num_ret=counts,
        offsets=offsets,
        rank=np.arange(len(seg), dtype=np.int64) - offsets[seg],
        rel=batch.rel[kept],
        ties=batch.ties.judged(kept, seg, offsets),
    )


def top(batch, k: int | None):
    """The batch cut after rank ``k`` (None: unchanged), as trec_eval's ``-M k``."""
    if k is None:
        return batch
    kept = batch.rank < k
    counts = np.bincount(batch.seg[kept], minlength=batch.n_queries)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return replace(
        batch,
        num_ret=np.minimum(batch.num_ret, k),
        offsets=offsets,
        rank=batch.rank[kept],
        rel=batch.rel[kept],
        ties=batch.ties.cut(kept, k),
    )


def view(batch, settings):
    """The batch a measure's ``judged_only`` and ``rel`` settings ask for (either may be absent)."""
    if getattr(settings, "judged_only", False):
        batch = judged_only(batch)
    return at_level(batch, getattr(settings, "rel", None))
