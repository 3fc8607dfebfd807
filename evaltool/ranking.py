"""The one place that orders documents and turns document ids into grades.

Tie rule (trec_eval's ``comp_sim_docno``): score descending, then document id
descending by byte order. The rank column of the run file is never consulted.

The result is a :class:`RankedBatch` for all evaluated queries at once. It is sparse:
only the retrieved documents that appear in the judgments are stored (their 0-based
rank and grade); every other retrieved document is "not in the pool" and is
accounted for by ``num_ret``. Measures never see a document id.

>>> from evaltool.io.frames import qrels_from_dict, run_from_dict
>>> qrels = qrels_from_dict({"q1": {"a": 1, "b": 0, "c": 2}})
>>> run = run_from_dict({"q1": {"a": 1.0, "b": 1.0, "z": 3.0}})
>>> batch = rank(qrels, run).batch
>>> batch.num_ret.tolist(), batch.rank.tolist(), batch.rel.tolist()
([3], [1, 2], [0, 1])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from evaltool.data import Qrels, Run
from evaltool.errors import InputError

RELVALUE_NONPOOL = -1
RELVALUE_UNJUDGED = -2


@dataclass(frozen=True)
class RankOptions:
    """trec_eval's ranking options: ``-l``, ``-M``, ``-J``, ``-c``."""

    relevance_level: int = 1
    max_ret: int | None = None
    judged_only: bool = False
    complete: bool = False


@dataclass(eq=False)
class RankedBatch:
    """All evaluated queries, CSR layout over their judged retrieved documents.

    ``offsets[q]:offsets[q+1]`` slices ``rank`` (0-based, ascending) and ``rel`` (grade,
    or -2 for "in the pool but unjudged") of query ``q``. ``judged_offsets`` slices
    ``judged_grades``: every non-negative grade in the qrels of ``q``, descending.
    """

    qids: list[str]
    num_ret: np.ndarray
    offsets: np.ndarray
    rank: np.ndarray
    rel: np.ndarray
    judged_offsets: np.ndarray
    judged_grades: np.ndarray
    missing: np.ndarray
    relevance_level: int = 1
    num_docs_in_coll: int = 0

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @cached_property
    def seg(self) -> np.ndarray:
        """Query index of every stored row."""
        return np.repeat(np.arange(self.n_queries), np.diff(self.offsets))

    @cached_property
    def judged_seg(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_queries), np.diff(self.judged_offsets))

    @cached_property
    def judged_pos(self) -> np.ndarray:
        """Position of every judged grade within its query (0 = highest grade)."""
        return np.arange(len(self.judged_grades)) - self.judged_offsets[self.judged_seg]

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Per-query number of stored rows where ``mask`` holds."""
        return np.bincount(self.seg[mask], minlength=self.n_queries)

    def total(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Per-query sum of ``values`` over stored rows (in rank order, like trec_eval)."""
        if mask is None:
            return np.bincount(self.seg, weights=values, minlength=self.n_queries)
        return np.bincount(self.seg[mask], weights=values[mask], minlength=self.n_queries)

    def running_count(self, mask: np.ndarray) -> np.ndarray:
        """For every stored row, how many rows of its query up to and including it satisfy ``mask``."""
        cum = np.cumsum(mask, dtype=np.int64)
        before = np.concatenate(([0], cum))[self.offsets[:-1]]
        return cum - before[self.seg]

    @cached_property
    def is_rel(self) -> np.ndarray:
        return self.rel >= self.relevance_level

    @cached_property
    def rel_so_far(self) -> np.ndarray:
        """Relevant documents at or above each stored row (trec_eval's ``rel_so_far``)."""
        return self.running_count(self.is_rel)

    @cached_property
    def num_rel(self) -> np.ndarray:
        return np.bincount(
            self.judged_seg[self.judged_grades >= self.relevance_level], minlength=self.n_queries
        )

    @cached_property
    def num_nonrel(self) -> np.ndarray:
        """Judged non-relevant documents in the qrels (grade in [0, level))."""
        judged = np.diff(self.judged_offsets)
        return judged - self.num_rel

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return self.count(self.is_rel)

    @cached_property
    def num_judged_ret(self) -> np.ndarray:
        """Retrieved documents with a non-negative grade."""
        return self.count(self.rel >= 0)

    @cached_property
    def num_unjudged_in_pool(self) -> np.ndarray:
        return self.count(self.rel == RELVALUE_UNJUDGED)

    def dense(self, limit: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every retrieved position above ``limit`` (all if None): (query, 0-based rank, grade).

        Positions without a stored row are outside the pool (-1).
        """
        length = self.num_ret if limit is None else np.minimum(self.num_ret, max(limit, 0))
        seg = np.repeat(np.arange(self.n_queries), length)
        starts = np.concatenate(([0], np.cumsum(length)))
        pos = np.arange(len(seg)) - starts[seg]
        rel = np.full(len(seg), RELVALUE_NONPOOL, dtype=np.int64)
        inside = self.rank < length[self.seg]
        rel[starts[self.seg[inside]] + self.rank[inside]] = self.rel[inside]
        return seg, pos, rel

    def ideal_csr(self, gain_of) -> tuple[np.ndarray, np.ndarray]:
        """Positive ideal gains per query, descending: (offsets, gains).

        ``gain_of`` maps an array of grades to gains.
        """
        gains = gain_of(self.judged_grades).astype(np.float64)
        positive = gains > 0
        seg = self.judged_seg[positive]
        gains = gains[positive]
        order = np.lexsort((-gains, seg))
        counts = np.bincount(seg, minlength=self.n_queries)
        offsets = np.concatenate(([0], np.cumsum(counts)))
        return offsets, gains[order]


@dataclass
class Ranking:
    """A batch plus the bookkeeping of which queries were evaluated or left out."""

    batch: RankedBatch
    skipped_qrels_queries: list[str] = field(default_factory=list)
    unjudged_run_queries: list[str] = field(default_factory=list)
    runid: str = ""


def tie_order(docids: list[str]) -> np.ndarray:
    """Ranks of ``docids`` in byte order (0 = smallest).

    Python compares ``str`` by code point, which is UTF-8 byte order.
    """
    uniq, inverse = np.unique(np.asarray(docids, dtype=object), return_inverse=True)
    return inverse.reshape(-1)


def rank(qrels: Qrels, run: Run, options: RankOptions = RankOptions(), num_docs_in_coll: int = 0) -> Ranking:
    """Sort, truncate and judge every query of ``run`` that ``qrels`` knows."""
    qrels_qids = sorted(set(qrels.qid_vocab[c] for c in np.unique(qrels.qid_codes)))
    position = {qid: i for i, qid in enumerate(qrels_qids)}
    run_qids_present = [run.qid_vocab[c] for c in np.unique(run.qid_codes)]
    run_qid_to_pos = np.array([position.get(q, -1) for q in run.qid_vocab], dtype=np.int64)

    present = np.zeros(len(qrels_qids), dtype=bool)
    if len(run_qid_to_pos):
        found = run_qid_to_pos[np.unique(run.qid_codes)]
        present[found[found >= 0]] = True
    evaluated = np.flatnonzero(present | options.complete)
    if len(evaluated) == 0:
        raise InputError(
            f"no query of {run.path} has judgments in {qrels.path} "
            f"(run queries such as {', '.join(map(repr, run_qids_present[:3]))}; "
            f"qrels queries such as {', '.join(map(repr, qrels_qids[:3]))})"
        )
    eval_index = np.full(len(qrels_qids), -1, dtype=np.int64)
    eval_index[evaluated] = np.arange(len(evaluated))
    qids = [qrels_qids[i] for i in evaluated]
    skipped = [qrels_qids[i] for i in np.flatnonzero(~present)] if not options.complete else []
    unjudged = sorted(q for q in run_qids_present if q not in position)

    # run rows of evaluated queries
    row_pos = run_qid_to_pos[run.qid_codes]
    row_q = np.where(row_pos >= 0, eval_index[np.maximum(row_pos, 0)], -1)
    keep = row_q >= 0
    row_q = row_q[keep]
    scores = run.scores[keep]
    doc_codes = run.doc_codes[keep]

    # order: query, score descending, then document id descending (byte order)
    order = np.lexsort((-scores, row_q))
    sq, ss = row_q[order], scores[order]
    tied = np.zeros(len(order), dtype=bool)
    same = (sq[1:] == sq[:-1]) & (ss[1:] == ss[:-1])
    tied[1:] |= same
    tied[:-1] |= same
    if tied.any():
        tied_pos = np.flatnonzero(tied)
        group = np.cumsum(~np.concatenate(([False], same)))[tied_pos]
        names = [run.doc_vocab[c] for c in doc_codes[order[tied_pos]]]
        within = np.lexsort((-tie_order(names), group))
        order[tied_pos] = order[tied_pos[within]]
        sq = row_q[order]
    n_q = len(qids)
    counts = np.bincount(sq, minlength=n_q)
    starts = np.concatenate(([0], np.cumsum(counts)))
    ranks = np.arange(len(order)) - starts[sq]

    # grades by a join on (query, document)
    qrels_doc = {d: i for i, d in enumerate(qrels.doc_vocab)}
    run_doc_to_qrels = np.array([qrels_doc.get(d, -1) for d in run.doc_vocab], dtype=np.int64)
    qrels_q = eval_index[np.array([position[qrels.qid_vocab[c]] for c in range(len(qrels.qid_vocab))],
                                   dtype=np.int64)[qrels.qid_codes]]
    n_docs = max(len(qrels.doc_vocab), 1)
    in_eval = qrels_q >= 0
    qrels_key = qrels_q[in_eval] * n_docs + qrels.doc_codes[in_eval]
    qrels_grade = qrels.grades[in_eval]
    key_order = np.argsort(qrels_key, kind="stable")
    qrels_key, qrels_grade = qrels_key[key_order], qrels_grade[key_order]

    mapped = run_doc_to_qrels[doc_codes[order]]
    run_key = sq * n_docs + np.maximum(mapped, 0)
    at = np.searchsorted(qrels_key, run_key)
    at_c = np.minimum(at, max(len(qrels_key) - 1, 0))
    judged = (mapped >= 0) & (at < len(qrels_key))
    if len(qrels_key):
        judged &= qrels_key[at_c] == run_key
    grade = np.where(judged, qrels_grade[at_c] if len(qrels_key) else 0, RELVALUE_NONPOOL)

    num_ret = counts.astype(np.int64)
    missing = ~present[evaluated]
    num_ret[missing] = 1  # trec_eval scores a missing query as one non-pool document
    if options.max_ret is not None:
        keep_rank = ranks < options.max_ret
        sq, ranks, grade, judged = sq[keep_rank], ranks[keep_rank], grade[keep_rank], judged[keep_rank]
        num_ret = np.minimum(num_ret, max(options.max_ret, 0))
    rel = np.where(grade < 0, RELVALUE_UNJUDGED, grade)
    if options.judged_only:
        kept = judged & (grade >= 0)
        sq, rel = sq[kept], rel[kept]
        num_ret = np.bincount(sq, minlength=n_q).astype(np.int64)
        starts_j = np.concatenate(([0], np.cumsum(num_ret)))
        ranks = np.arange(len(sq)) - starts_j[sq]
    else:
        sq, ranks, rel = sq[judged], ranks[judged], rel[judged]
    offsets = np.concatenate(([0], np.cumsum(np.bincount(sq, minlength=n_q)))).astype(np.int64)

    # non-negative grades per evaluated query, descending
    nonneg = in_eval.copy()
    nonneg[in_eval] = qrels.grades[in_eval] >= 0
    jq, jg = qrels_q[nonneg], qrels.grades[nonneg]
    jorder = np.lexsort((-jg, jq))
    judged_offsets = np.concatenate(([0], np.cumsum(np.bincount(jq, minlength=n_q)))).astype(np.int64)

    batch = RankedBatch(
        qids=qids,
        num_ret=num_ret,
        offsets=offsets,
        rank=ranks.astype(np.int64),
        rel=rel.astype(np.int64),
        judged_offsets=judged_offsets,
        judged_grades=jg[jorder].astype(np.int64),
        missing=missing,
        relevance_level=options.relevance_level,
        num_docs_in_coll=num_docs_in_coll,
    )
    return Ranking(batch, skipped, unjudged, run.runid)
