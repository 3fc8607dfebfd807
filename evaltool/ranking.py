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

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, repeat
from operator import attrgetter, gt, itemgetter
from typing import NamedTuple

import numpy as np

from evaltool.arrays import Membership, distinct, pair_order
from evaltool.inputs import Qrels, Run
from evaltool.errors import InputError, quote

RELVALUE_NONPOOL = -1
RELVALUE_UNJUDGED = -2


# RankOptions, Intents and Ranking are not dataclasses: every evaluation imports this module,
# and creating a dataclass costs its start-up about a millisecond (a NamedTuple a tenth of that)
class RankOptions(NamedTuple):
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
    ``judged_grades``: every non-negative grade in the qrels of ``q``, descending. ``ties``
    tells, on request, which positions each row shares with documents of equal score.
    """

    qids: list[str]
    num_ret: np.ndarray
    offsets: np.ndarray
    rank: np.ndarray
    rel: np.ndarray
    judged_offsets: np.ndarray
    judged_grades: np.ndarray
    missing: np.ndarray
    ties: TieGroups
    relevance_level: int = 1
    num_docs_in_coll: int = 0
    intents: Intents | None = None  # judgments per subtopic, when the qrels have them
    # what functions of the judged grades alone gave (see judged): rank() hands the batches of one
    # qrels and set of evaluated queries the same dict, so the runs of an Evaluator share it
    judged_memo: dict = field(default_factory=dict, repr=False)

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    def judged(self, key: tuple, compute):
        """``compute()``, a function of ``judged_offsets`` and ``judged_grades`` alone named by
        ``key`` with every parameter it reads, computed once per qrels and set of evaluated
        queries (views of the batch share it too); the arrays it returns are made read-only.

        >>> from evaltool.io.frames import qrels_from_dict, run_from_dict
        >>> qrels = qrels_from_dict({"q": {"a": 2, "b": 1}})
        >>> first, second = (rank(qrels, run_from_dict({"q": {"a": s}})).batch for s in (1.0, 2.0))
        >>> first.num_rel is second.num_rel, first.num_rel.flags.writeable
        (True, False)
        """
        value = self.judged_memo.get(key)
        if value is None:
            value = compute()
            for array in value if isinstance(value, tuple) else (value,):
                array.flags.writeable = False
            self.judged_memo[key] = value
        return value

    @cached_property
    def seg(self) -> np.ndarray:
        """Query index of every stored row."""
        return np.repeat(np.arange(self.n_queries), np.diff(self.offsets))

    @cached_property
    def judged_seg(self) -> np.ndarray:
        return self.judged(("seg",), lambda: np.repeat(np.arange(self.n_queries), np.diff(self.judged_offsets)))

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
        level = self.relevance_level
        return self.judged(
            ("num_rel", level),
            lambda: np.bincount(self.judged_seg[self.judged_grades >= level], minlength=self.n_queries),
        )

    @cached_property
    def num_nonrel(self) -> np.ndarray:
        """Judged non-relevant documents in the qrels (grade in [0, level))."""
        judged = np.diff(self.judged_offsets)
        return judged - self.num_rel

    @cached_property
    def rel_rows(self) -> np.ndarray:
        """The stored rows of relevant documents, in order (by query, then rank)."""
        return np.flatnonzero(self.is_rel)

    @cached_property
    def rel_seg(self) -> np.ndarray:
        """The query of each of :attr:`rel_rows`."""
        return self.seg[self.rel_rows]

    @cached_property
    def rel_first(self) -> np.ndarray:
        """Where each query's relevant rows start in :attr:`rel_rows` (the next query's start when it has none)."""
        return np.cumsum(self.num_rel_ret) - self.num_rel_ret

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return np.bincount(self.rel_seg, minlength=self.n_queries)

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
        counts = np.bincount(seg, minlength=self.n_queries)
        offsets = np.concatenate(([0], np.cumsum(counts)))
        rising = gains[1:] > gains[:-1]
        starts = offsets[1:-1]
        rising[starts[(starts > 0) & (starts < len(gains))] - 1] = False  # one query's last, the next one's first
        if rising.any():  # gains that do not follow the grades' order (a gain table): sorted per query
            gains = gains[np.lexsort((-gains, seg))]
        return offsets, gains


class TieGroups:
    """The group of equal scores of every stored row: positions [start, end) of its query's
    ranking (0-based), the positions its group occupies in the tie rule's order.

    Computed on first use of :attr:`bounds` only, so ranking costs nothing more for the
    measures that never ask (scikit-learn's tie-averaged DCG asks). Every document of the
    ranking is in a group, stored or not: a group may hold documents outside the qrels.

    >>> from evaltool.io.frames import qrels_from_dict, run_from_dict
    >>> qrels = qrels_from_dict({"q": {"a": 1, "b": 1, "c": 2}})
    >>> batch = rank(qrels, run_from_dict({"q": {"a": 2.0, "b": 1.0, "z": 2.0, "c": 1.0}})).batch
    >>> batch.rank.tolist(), [bound.tolist() for bound in batch.ties.bounds]
    ([1, 2, 3], [[0, 2, 2], [2, 4, 4]])
    >>> [bound.tolist() for bound in batch.ties.cut(batch.rank < 3, 3).bounds]
    [[0, 2], [2, 3]]
    >>> [bound.tolist() for bound in batch.ties.take(np.array([2, 0])).bounds]
    [[2, 0], [4, 2]]
    """

    def __init__(self, compute):
        self.compute = compute

    @cached_property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(start, end) of every stored row's group."""
        return self.compute()

    def take(self, index: np.ndarray) -> TieGroups:
        """The groups of the rows ``index`` picks (an order of the rows, or some of them)."""
        return TieGroups(lambda: (self.bounds[0][index], self.bounds[1][index]))

    def cut(self, kept: np.ndarray, limit: int | None) -> TieGroups:
        """The groups of the rows ``kept`` when the ranking stops after ``limit`` documents (None: never)."""

        def compute():
            start, end = self.bounds
            return start[kept], end[kept] if limit is None else np.minimum(end[kept], limit)

        return TieGroups(compute)

    def judged(self, kept: np.ndarray, seg: np.ndarray, offsets: np.ndarray) -> TieGroups:
        """The groups when only the rows ``kept`` remain, ranked anew (``-J``): every remaining
        document is stored, so a group is the kept rows of one query that shared a group."""

        def compute():
            start = self.bounds[0][kept]
            opens = np.ones(len(start), dtype=bool)
            opens[1:] = (seg[1:] != seg[:-1]) | (start[1:] != start[:-1])
            group = np.cumsum(opens) - 1
            first = np.flatnonzero(opens)
            after = np.append(first[1:], len(start))
            return first[group] - offsets[seg], after[group] - offsets[seg]

        return TieGroups(compute)


def tie_groups(run: Run, rows: np.ndarray) -> TieGroups:
    """The groups of equal scores of the run ``rows`` (computed when first asked for)."""
    codes, scores = run.qid_codes, run.scores

    def compute():
        if len(rows) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if _in_query_order(codes, scores)[0]:
            first, low, high = _score_groups(codes, scores, rows)
        else:
            order, inverse = _query_score_order(codes, scores)
            first, low, high = _score_groups(codes[order], scores[order], inverse[rows])
        return low - first, high - first

    return TieGroups(compute)


class Intents(NamedTuple):
    """Judgments per subtopic of the evaluated queries, for the diversity measures.

    Retrieved: one entry per (retrieved document, subtopic it is judged for), ordered by
    (query, rank): ``seg``, ``rank`` (0-based, as the batch's), ``subtopic``, ``grade``.
    Judged: every subtopic judgment of the evaluated queries: ``judged_seg``,
    ``judged_doc`` (a code that is larger for a larger document id in byte order, the
    only thing the ideal ranking's tie rule needs), ``judged_subtopic``, ``judged_grade``.
    Subtopic codes are shared by all queries; a (query, subtopic) pair names an intent.
    """

    seg: np.ndarray
    rank: np.ndarray
    subtopic: np.ndarray
    grade: np.ndarray
    judged_seg: np.ndarray
    judged_doc: np.ndarray
    judged_subtopic: np.ndarray
    judged_grade: np.ndarray


def _intents(judgments, run: Run, qids: list[str], seg: np.ndarray, ranks: np.ndarray, rows: np.ndarray) -> Intents:
    """Join the subtopic judgments with the stored rows (query ``seg``, run row ``rows``) of a batch."""
    index = {qid: i for i, qid in enumerate(qids)}
    entry_q = np.array([index.get(q, -1) for q in judgments.qid_vocab], dtype=np.int64)[judgments.qid_codes]
    judged = entry_q >= 0
    entry_key = run.keys_for(judgments.doc_vocab)[judgments.doc_codes]
    width = int(max(run.doc_codes.max(initial=0), entry_key.max(initial=0))) + 1
    row_pair = seg * width + run.doc_codes[rows]
    by_pair = np.argsort(row_pair, kind="stable")
    entry_pair = entry_q * width + entry_key
    at = np.minimum(np.searchsorted(row_pair[by_pair], entry_pair), max(len(rows) - 1, 0))
    hit = judged & (entry_key >= 0)
    if len(rows):
        hit &= row_pair[by_pair][at] == entry_pair
    else:
        hit[:] = False
    row = by_pair[at[hit]]
    order = np.lexsort((judgments.subtopic_codes[hit], ranks[row], seg[row]))
    return Intents(
        seg[row][order],
        ranks[row][order],
        judgments.subtopic_codes[hit][order],
        judgments.grades[hit][order],
        entry_q[judged],
        judgments.doc_codes[judged],
        judgments.subtopic_codes[judged],
        judgments.grades[judged],
    )


def byte_key(text: str) -> bytes:
    """The bytes an id had on disk: trec_eval compares ids with strcmp (byte order)."""
    return text.encode("utf-8", "surrogateescape")


def str_order_is_byte_order(texts: list[str]) -> bool:
    """Whether comparing these ids as str orders them as their bytes: Python compares str by code
    point, which is UTF-8's byte order; only ids that came from undecodable bytes (surrogate
    escapes) differ."""
    try:
        "".join(texts).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def byte_order(texts: list[str]) -> np.ndarray:
    """Position of each of the distinct ``texts`` when they are sorted in byte order.

    Ids are compared as str unless :func:`str_order_is_byte_order` says their bytes must be.

    >>> byte_order(["b", "a", "\u00e9", "ab"]).tolist()
    [2, 0, 3, 1]
    """
    key = texts.__getitem__ if str_order_is_byte_order(texts) else lambda i: byte_key(texts[i])
    position = np.empty(len(texts), dtype=np.int64)
    position[sorted(range(len(texts)), key=key)] = np.arange(len(texts))
    return position


def id_order(run: Run, *row_sets: np.ndarray) -> list[np.ndarray]:
    """For each array of run rows, integer keys whose order is the byte order of the rows' document ids."""
    rows = np.concatenate(row_sets)
    if run.codes_in_byte_order:
        keys = run.doc_codes[rows]
    else:
        _, first, inverse = np.unique(run.doc_keys(rows), return_index=True, return_inverse=True)
        keys = byte_order(run.doc_text(rows[first]))[inverse.reshape(-1)]
    return np.split(keys, np.cumsum([len(r) for r in row_sets])[:-1])


class Ranking:
    """A batch plus the bookkeeping of which queries were evaluated or left out."""

    __slots__ = ("batch", "skipped_qrels_queries", "unjudged_run_queries", "runid")

    def __init__(
        self,
        batch: RankedBatch,
        skipped_qrels_queries: list[str] | None = None,
        unjudged_run_queries: list[str] | None = None,
        runid: str = "",
    ):
        self.batch, self.runid = batch, runid
        self.skipped_qrels_queries = [] if skipped_qrels_queries is None else skipped_qrels_queries
        self.unjudged_run_queries = [] if unjudged_run_queries is None else unjudged_run_queries


def _tie_counts(
    run: Run, pos_rows: np.ndarray, starts: np.ndarray, lengths: np.ndarray, order: np.ndarray | None
) -> np.ndarray:
    """For each row, how many rows of its tie group have a larger document id (byte order).

    Every tie group is ordered once by (group, id): a row's count is the number of keys of
    its group above its own.
    """
    out = np.zeros(len(pos_rows), dtype=np.int64)
    tied = np.flatnonzero(lengths > 1)
    if len(tied) == 0:
        return out
    group_start, first, group = np.unique(starts[tied], return_index=True, return_inverse=True)
    group = group.reshape(-1)
    group_length = lengths[tied][first]
    members = np.repeat(group_start, group_length) + (
        np.arange(group_length.sum()) - np.repeat(np.cumsum(group_length) - group_length, group_length)
    )
    as_rows = (lambda p: order[p]) if order is not None else (lambda p: p)
    member_keys, own_keys = id_order(run, as_rows(members), as_rows(pos_rows[tied]))
    width = int(member_keys.max()) + 1
    composite = np.sort(np.repeat(np.arange(len(group_start), dtype=np.int64), group_length) * width + member_keys)
    above = np.searchsorted(composite, (group + 1) * width)
    out[tied] = above - np.searchsorted(composite, group * width + own_keys, side="right")
    return out


def _in_query_order(codes: np.ndarray, scores: np.ndarray) -> tuple[bool, np.ndarray]:
    """Whether rows come grouped by query with non-increasing scores; the query starts."""
    starts = np.concatenate(([0], np.flatnonzero(codes[1:] != codes[:-1]) + 1))
    if len(distinct(codes[starts])) != len(starts):
        return False, starts
    rising = scores[1:] > scores[:-1]
    rising[starts[1:] - 1] = False
    return not rising.any(), starts


PASSES = 8  # judged rows per query up to which an unsorted run is ranked without sorting


def _continuing(codes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """The positions of a (query, score)-ordered sequence that continue the group of equal scores
    of the position before (same query, same score): few, where ties are."""
    return np.flatnonzero((codes[1:] == codes[:-1]) & (scores[1:] == scores[:-1])) + 1


def _score_groups(codes, scores, pos) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For positions ``pos`` of a (query, score)-ordered sequence: where the query starts, and
    [low, high), the run of equal scores inside the query around each position."""
    starts = np.concatenate(([0], np.flatnonzero(codes[1:] != codes[:-1]) + 1))
    first = starts[np.searchsorted(starts, pos, side="right") - 1]
    # a group is a position outside _continuing's and the run of them after it
    tied = _continuing(codes, scores)
    if len(tied) == 0:
        return first, pos, pos + 1
    opens = np.ones(len(tied), dtype=bool)
    opens[1:] = tied[1:] != tied[:-1] + 1
    run_of = np.cumsum(opens) - 1
    run_first, run_last = tied[opens], tied[np.append(opens[1:], True)]

    def run_around(p):
        """For each position, the run of ``tied`` holding it (any run if none) and whether one does."""
        at = np.minimum(np.searchsorted(tied, p), len(tied) - 1)
        return run_of[at], tied[at] == p

    run, inside = run_around(pos)
    low = np.where(inside, run_first[run] - 1, pos)
    run, inside = run_around(pos + 1)
    return first, low, np.where(inside, run_last[run] + 1, pos + 1)


def _rank_in_sequence(run: Run, codes, scores, pos, order) -> np.ndarray:
    """Ranks of the rows at sequence positions ``pos`` of a (query, score)-ordered sequence.

    ``order`` maps sequence positions to run rows (None: the run itself is the sequence).
    """
    first, low, high = _score_groups(codes, scores, pos)
    return (low - first) + _tie_counts(run, pos, low, high - low, order)


def _query_score_order(codes, scores, subset: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The run's rows (or ``subset`` of them, holding whole queries) sorted by (query, score
    descending), and the sequence position of every row of the run."""
    if subset is not None:
        order = subset[np.lexsort((-scores[subset], codes[subset]))]
    else:
        order = np.lexsort((-scores, codes))
    inverse = np.empty(len(scores), dtype=np.int64)
    inverse[order] = np.arange(len(order))
    return order, inverse


def _rank_sorted(run: Run, rows: np.ndarray, subset: np.ndarray | None = None) -> np.ndarray:
    """Sort the rows (or ``subset`` of them, holding whole queries) by (query, score), then rank."""
    codes, scores = run.qid_codes, run.scores
    order, inverse = _query_score_order(codes, scores, subset)
    return _rank_in_sequence(run, codes[order], scores[order], inverse[rows], order)


def _rank_by_passes(run: Run, rows: np.ndarray) -> np.ndarray:
    """Ranks without sorting: one vectorised pass over the run per judged row of a query.

    Pass j compares every row with the j-th judged row of its query: rows scoring higher
    are counted, rows scoring the same are tied and compared by document id.
    """
    codes, scores = run.qid_codes, run.scores
    n_codes = len(run.qid_vocab)
    row_codes = codes[rows]
    by_query = np.lexsort((rows, row_codes))
    slot = np.empty(len(rows), dtype=np.int64)
    group_start = np.concatenate(([True], row_codes[by_query][1:] != row_codes[by_query][:-1]))
    first = np.maximum.accumulate(np.where(group_start, np.arange(len(rows)), 0))
    slot[by_query] = np.arange(len(rows)) - first
    higher = np.zeros(len(rows), dtype=np.int64)
    owners, others = [], []
    for j in range(int(slot.max()) + 1):
        mine = np.flatnonzero(slot == j)
        threshold = np.full(n_codes, np.nan)
        threshold[row_codes[mine]] = scores[rows[mine]]
        judged_row = np.full(n_codes, -1, dtype=np.int64)
        judged_row[row_codes[mine]] = mine
        against = threshold[codes]
        higher[mine] = np.bincount(codes[scores > against], minlength=n_codes)[row_codes[mine]]
        tied = np.flatnonzero(scores == against)
        owner = judged_row[codes[tied]]
        keep = tied != rows[owner]
        owners.append(owner[keep])
        others.append(tied[keep])
    owner, other = np.concatenate(owners), np.concatenate(others)
    if len(owner):
        mine, theirs = id_order(run, rows[owner], other)
        np.add.at(higher, owner[theirs > mine], 1)
    return higher


def _rank_grouped(run: Run, rows: np.ndarray, starts: np.ndarray) -> np.ndarray | None:
    """Ranks of ``rows`` in a run whose queries are contiguous but not in score order (a
    DataFrame's rows, say), by counting the scores of each row's query (:func:`_count_above`)
    and comparing ids inside the groups of equal scores; None when the queries are not
    contiguous (``starts``: where the query code changes), or when sorting costs less."""
    codes, scores = run.qid_codes, run.scores
    if len(distinct(codes[starts])) != len(starts):
        return None
    segment_of_code = np.zeros(len(run.qid_vocab), dtype=np.int64)
    segment_of_code[codes[starts]] = np.arange(len(starts))
    bounds = np.append(starts, len(codes))
    segment = segment_of_code[codes[rows]]
    counted = _count_above(scores, bounds, np.diff(bounds), segment, scores[rows])
    if counted is None:
        return None
    higher, equal = counted
    tied = np.flatnonzero(equal > 1)
    if len(tied):
        pair, member = _tied_members(scores, bounds, np.diff(bounds), segment[tied], scores[rows[tied]])
        owner = tied[pair]
        keep = member != rows[owner]
        owner, member = owner[keep], member[keep]
        mine, theirs = id_order(run, rows[owner], member)
        np.add.at(higher, owner[theirs > mine], 1)
    return higher


def _tied_members(
    scores: np.ndarray, query_start: np.ndarray, lengths: np.ndarray, codes: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(pair, row) for every row of query ``codes[pair]`` (rows grouped by query) whose score
    is ``values[pair]``, a block of pairs at a time as :func:`_count_above` compares them.

    >>> _tied_members(np.array([2.0, 1.0, 2.0, 7.0]), np.array([0, 3, 4]), np.array([3, 1]), np.array([0, 1]),
    ...               np.array([2.0, 7.0]))
    (array([0, 0, 1]), array([0, 2, 3]))
    """
    pairs, rows = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for pick, width in _blocks(lengths[codes]):
        starts = query_start[codes[pick]]
        cells, inside = _windows(scores, starts, lengths[codes[pick]], width)
        same = cells == values[pick][:, None]
        if inside is not None:
            same &= inside
        which, where = np.nonzero(same)
        pairs.append(pick[which])
        rows.append(np.minimum(starts, len(scores) - width)[which] + where)
    pair, row = np.concatenate(pairs), np.concatenate(rows)
    order = np.argsort(pair, kind="stable")  # in the order of the pairs, whatever the blocks
    return pair[order], row[order]


def rank_rows(run: Run, rows: np.ndarray) -> np.ndarray:
    """0-based rank of each of ``rows`` within its query, by trec_eval's rule.

    Only the requested rows are ranked. A run already grouped by query with scores
    non-increasing (how systems write them) needs no sort: a row's rank is its position
    in its query, corrected inside its group of equal scores by comparing document ids.
    A run grouped by query in another order (a DataFrame's) counts each row's query's
    scores above it when that costs less than a sort. In any other run, queries with few
    judged rows are ranked by a few vectorised passes (no sort); queries with many are
    sorted by (query, score).
    """
    codes, scores = run.qid_codes, run.scores
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64)
    in_order, starts = _in_query_order(codes, scores)
    if in_order:
        return _rank_in_sequence(run, codes, scores, rows, None)
    counted = _rank_grouped(run, rows, starts)
    if counted is not None:
        return counted
    per_query = np.bincount(codes[rows], minlength=len(run.qid_vocab))
    heavy = per_query > PASSES
    out = np.empty(len(rows), dtype=np.int64)
    heavy_rows = heavy[codes[rows]]
    if heavy_rows.all():
        return _rank_sorted(run, rows)
    if heavy_rows.any():
        out[heavy_rows] = _rank_sorted(run, rows[heavy_rows], np.flatnonzero(heavy[codes]))
    out[~heavy_rows] = _rank_by_passes(run, rows[~heavy_rows])
    return out


_member = Membership()  # np.isin, its lookup table kept for the last qrels' document keys


class _QrelsSide:
    """The qrels' half of :func:`_judge_rows`' join, kept for the last (qrels, document keys,
    evaluated query of each qrels row): runs of one Evaluator or command line meet the same
    three run after run (numeric document ids: one key array per qrels). The entry holds
    its qrels and keys, so their ids cannot be reused while it lives; it is read and
    replaced whole, so runs scored in threads never mix two entries."""

    def __init__(self):
        self.last = None

    def __call__(self, qrels: Qrels, doc_keys: np.ndarray | None, qrels_q: np.ndarray):
        """(sorted distinct joinable keys, sorted (query, key index) pairs, their grades);
        ``doc_keys`` None: each document's key is its own code in the qrels."""
        last = self.last
        if last is not None and last[0] is qrels and last[1] is doc_keys and np.array_equal(last[2], qrels_q):
            return last[3]
        qrels_key = qrels.doc_codes if doc_keys is None else doc_keys[qrels.doc_codes]
        joinable = (qrels_q >= 0) & (qrels_key >= 0)
        keys = distinct(qrels_key[joinable])
        qrels_pair = qrels_q[joinable] * (len(keys) + 1) + np.searchsorted(keys, qrels_key[joinable])
        pair_order = np.argsort(qrels_pair, kind="stable")
        side = keys, qrels_pair[pair_order], qrels.grades[joinable][pair_order]
        self.last = (qrels, doc_keys, qrels_q.copy(), side)
        return side


_qrels_side = _QrelsSide()


class _QrelsByDocument:
    """The qrels' half of :func:`_judge_by_document`, kept for the last (qrels, evaluated query
    of each qrels row), which runs of one Evaluator or command line share whatever their
    document keys: the rows of evaluated queries in (document, query, row) order, where each
    document's rows start, how many it has and the most any document has. Read and replaced
    whole, as :class:`_QrelsSide`."""

    def __init__(self):
        self.last = None

    def __call__(self, qrels: Qrels, qrels_q: np.ndarray, documents: int):
        """``documents``: how many documents the qrels name (its vocabulary's length)."""
        last = self.last
        if last is not None and last[0] is qrels and np.array_equal(last[1], qrels_q):
            return last[2]
        rows = np.flatnonzero(qrels_q >= 0)
        rows = rows[pair_order(qrels.doc_codes[rows], qrels_q[rows])]  # stable: a repeated pair in row order
        per_doc = np.bincount(qrels.doc_codes[rows], minlength=documents)
        side = np.cumsum(per_doc) - per_doc, per_doc, qrels_q[rows], qrels.grades[rows], int(per_doc.max(initial=0))
        self.last = (qrels, qrels_q.copy(), side)
        return side


_qrels_by_document = _QrelsByDocument()

# a run's document keys are looked up in a table (key -> judged document) when the table is at
# most this many times as long as the qrels' documents (a run's dictionary codes: text ids),
# and no document is judged for more than JUDGED_IN_QUERIES_MAX evaluated queries
KEY_TABLE_FACTOR = 8
JUDGED_IN_QUERIES_MAX = 8


def _judge_rows(qrels: Qrels, run: Run, code_q: np.ndarray, qrels_q: np.ndarray):
    """(query, rank, grade, run row) of every retrieved judged document: the run's rows joined with
    the qrels of the evaluated queries (``code_q``: evaluated query of each run query code, or -1;
    ``qrels_q``: of each qrels row).

    The run's rows whose document the qrels name come from the run itself when it finds ids
    its own way (:meth:`~evaltool.inputs.Run.rows_with_ids`: the row, the id's position in the
    qrels' vocabulary). Runs keyed by small integers (dictionary codes) go through a table from
    key to judged document (:func:`_judge_by_document`, no search per row); others (integer
    document ids as keys, up to millions) through sorted keys and binary searches."""
    ids = run.judged_ids(qrels)
    found = run.rows_with_ids(ids)
    if found is None:
        doc_keys = run.keys_for(ids)
        bound = max(int(run.doc_codes.max(initial=-1)), int(doc_keys.max(initial=-1))) + 1
        if 0 < bound <= KEY_TABLE_FACTOR * len(doc_keys) and run.doc_codes.min() >= 0:
            joined = _judge_by_document(qrels, run, code_q, qrels_q, doc_keys, bound)
            if joined is not None:
                return joined
        keys, qrels_pair, qrels_grade = _qrels_side(qrels, doc_keys, qrels_q)
        candidates = np.flatnonzero(_member(run.doc_codes, keys))
        candidate_keys = run.doc_codes[candidates]
    else:
        rows, doc = found
        query = code_q[run.qid_codes[rows]]
        evaluated = query >= 0
        joined = _judge_found(qrels, run, qrels_q, len(ids), rows[evaluated], doc[evaluated], query[evaluated])
        if joined is not None:
            return joined
        keys, qrels_pair, qrels_grade = _qrels_side(qrels, None, qrels_q)
        candidates, candidate_keys = found
    evaluated = code_q[run.qid_codes[candidates]] >= 0
    candidates, candidate_keys = candidates[evaluated], candidate_keys[evaluated]
    candidate_q = code_q[run.qid_codes[candidates]]
    width = len(keys) + 1
    key_at = np.searchsorted(keys, candidate_keys)
    run_pair = candidate_q * width + key_at
    at = np.minimum(np.searchsorted(qrels_pair, run_pair), max(len(qrels_pair) - 1, 0))
    hit = qrels_pair[at] == run_pair if len(qrels_pair) else np.zeros(len(run_pair), dtype=bool)
    if found is not None:  # a document judged only in queries not evaluated is not among the keys
        hit &= keys[np.minimum(key_at, max(len(keys) - 1, 0))] == candidate_keys if len(keys) else False
    rows = candidates[hit]
    grade = qrels_grade[at[hit]]
    return candidate_q[hit], rank_rows(run, rows), grade, rows


class JudgedLists(NamedTuple):
    """The judgments grouped by query as flat lists: query code ``c`` (``qrels.qid_vocab``'s)
    holds ``docs[starts[c]:ends[c]]`` with ``grades[starts[c]:ends[c]]``; ``code`` maps each
    query id to its code."""

    code: dict[str, int]
    starts: np.ndarray
    ends: np.ndarray
    docs: list[str]
    grades: np.ndarray


def judged_lists(qrels: Qrels) -> JudgedLists:
    """The :class:`JudgedLists` of ``qrels``, made on first use and kept in ``qrels.memo``.

    >>> from evaltool.io.frames import qrels_from_dict
    >>> lists = judged_lists(qrels_from_dict({"q2": {"a": 1, "b": 3}, "q1": {"c": -1}}))
    >>> lists.code, lists.starts.tolist(), lists.ends.tolist(), lists.docs, lists.grades.tolist()
    ({'q2': 0, 'q1': 1}, [0, 2], [2, 3], ['a', 'b', 'c'], [1, 3, -1])
    """
    lists = qrels.memo.get("lists")
    if lists is None:
        code, starts, ends, order, grades = judged_spans(qrels)
        docs = getattr(qrels, "row_docs", None)  # a dict's judgments: every row's id, rows grouped by query
        if docs is None or order is not None:
            doc_codes = qrels.doc_codes if order is None else qrels.doc_codes[order]
            docs = list(map(qrels.doc_vocab.__getitem__, doc_codes.tolist()))
        lists = JudgedLists(code, starts, ends, docs, grades)
        qrels.memo["lists"] = lists
    return lists


def judged_spans(qrels: Qrels) -> tuple:
    """:func:`judged_lists` without the document ids, kept in ``qrels.memo``: (code, starts,
    ends, the order that groups the rows by query or None when they are, grades in that order).
    What every run's query side needs; the ids (text, to be decoded for judgments read as
    bytes) only a run looked up by id needs.

    >>> from evaltool.io.frames import qrels_from_dict
    >>> code, starts, ends, order, grades = judged_spans(qrels_from_dict({"q2": {"a": 1, "b": 3}, "q1": {"c": -1}}))
    >>> code, starts.tolist(), ends.tolist(), order, grades.tolist()
    ({'q2': 0, 'q1': 1}, [0, 2], [2, 3], None, [1, 3, -1])
    """
    spans = qrels.memo.get("spans")
    if spans is None:
        codes, grades, order = qrels.qid_codes, qrels.grades, None
        if len(codes) > 1 and (codes[1:] < codes[:-1]).any():
            order = np.argsort(codes, kind="stable")
            codes, grades = codes[order], grades[order]
        every = np.arange(len(qrels.qid_vocab))
        spans = (
            dict(zip(qrels.qid_vocab, range(len(qrels.qid_vocab)))),
            np.searchsorted(codes, every, side="left"),
            np.searchsorted(codes, every, side="right"),
            order,
            grades,
        )
        qrels.memo["spans"] = spans
    return spans


def judged_rows(qrels: Qrels) -> dict[str, dict[str, int]]:
    """Each judged query's ``{document id: index in judged_lists(qrels)}``, kept in ``qrels.memo``.

    >>> from evaltool.io.frames import qrels_from_dict
    >>> judged_rows(qrels_from_dict({"q2": {"a": 1, "b": 3}, "q1": {"c": -1}}))
    {'q2': {'a': 0, 'b': 1}, 'q1': {'c': 2}}
    """
    rows = qrels.memo.get("rows")
    if rows is None:
        lists = judged_lists(qrels)
        rows = {
            qid: dict(zip(lists.docs[start:end], range(start, end)))
            for qid, start, end in zip(qrels.qid_vocab, lists.starts.tolist(), lists.ends.tolist())
            if end > start
        }
        qrels.memo["rows"] = rows
    return rows


def _judge_by_document(qrels: Qrels, run: Run, code_q: np.ndarray, qrels_q: np.ndarray, doc_keys, bound: int):
    """:func:`_judge_rows` through a table of the run's document keys (all below ``bound``):
    each row's judged document, then its judgments (:class:`_QrelsByDocument`) compared with
    the row's query, one pass per judgment a document has at most. None when a document is
    judged for more than :data:`JUDGED_IN_QUERIES_MAX` evaluated queries (binary searches then)."""
    if _qrels_by_document(qrels, qrels_q, len(doc_keys))[4] > JUDGED_IN_QUERIES_MAX:
        return None
    judged = np.flatnonzero(doc_keys >= 0)
    document = np.full(bound, -1, dtype=np.int64)
    document[doc_keys[judged]] = judged
    row_doc = document[run.doc_codes]
    row_q = code_q[run.qid_codes]
    candidates = np.flatnonzero((row_doc >= 0) & (row_q >= 0))
    return _judge_found(qrels, run, qrels_q, len(doc_keys), candidates, row_doc[candidates], row_q[candidates])


def _judge_found(qrels: Qrels, run: Run, qrels_q: np.ndarray, documents: int, candidates, doc, query):
    """The join of :func:`_judge_by_document` once each candidate row (in row order) has its judged
    document (``doc``: its code in the qrels, of ``documents``) and evaluated query: each row's
    judgments (:class:`_QrelsByDocument`) compared with its query, one pass per judgment a
    document has at most. None when that is more than :data:`JUDGED_IN_QUERIES_MAX`."""
    first, per_doc, pair_q, pair_grade, most = _qrels_by_document(qrels, qrels_q, documents)
    if most > JUDGED_IN_QUERIES_MAX:
        return None
    start, count = first[doc], per_doc[doc]
    at = np.full(len(candidates), -1, dtype=np.int64)
    active = np.flatnonzero(count > 0)  # rows whose query may still be among their document's judgments
    for k in range(most):  # the k-th judgment of each row's document: the first of the row's query wins
        row = start[active] + k
        found = pair_q[row] == query[active]
        at[active[found]] = row[found]
        active = active[~found & (count[active] > k + 1)]
        if not len(active):
            break
    hit = at >= 0
    rows = candidates[hit]
    return query[hit], rank_rows(run, rows), pair_grade[at[hit]], rows


def _judge_rankings(qrels: Qrels, run: Run, side: QuerySide):
    """(query, rank, grade, tie groups, in order) of every retrieved judged document of a dict run
    (``run.rankings``); a row's group is [start, end) of its query's positions (:class:`TieGroups`);
    ``in order``: the entries are known to come by query and rank already.

    Documents are looked up by id: each retrieved document among its query's judgments when the
    run holds fewer rows than the judgments of its queries, or when its queries come in score
    order (then a rank is a position, and the lookup is kept for the next run listing the same
    ids: :func:`_judged_rows_of`); else each judged document in its query's dict, which gives
    its score, and no other id is read unless it ties with a judged one. A document's rank is
    the number of scores of its query above it, plus, inside its group of equal scores, the
    number of larger ids (the tie rule). The run is not sorted: a run whose queries come in
    score order is ranked by position, any other by comparing each judged score with its
    query's scores (:func:`_count_above`), or by a sort where that costs less.
    """
    code_q, query_start, codes = side.code_q, side.query_start, side.judged_codes
    rows_per_code = run.query_lengths()
    starts, ends = side.list_starts, side.list_ends
    lists = judged_lists(qrels)
    counts = ends - starts
    total = int(counts.sum())
    hit_rows = None
    by_row = len(run.scores) < total or run.rankings_made_when_read
    descending, tied = _score_steps(run.scores, query_start)
    if by_row or descending:  # look the retrieved rows up
        hit_rows, judged_code, grade, query, first = _judged_rows_of(qrels, run, side)
        if descending:
            ranks, ties, in_order = _rank_by_position(run, hit_rows, first, tied)
            return query, ranks, grade, ties, in_order
        score = run.scores[hit_rows]

        def ids_of(entries: np.ndarray) -> list[str]:  # every row's id is listed by _judged_rows_of
            return list(map(run.doc_vocab.__getitem__, hit_rows[entries].tolist()))

    else:
        docs = map(lists.docs.__getitem__, map(slice, starts.tolist(), ends.tolist()))
        getters = map(attrgetter("get"), map(run.rankings.__getitem__, codes.tolist()))
        found = np.fromiter(
            chain.from_iterable(map(map, getters, docs, repeat(repeat(np.nan)))), dtype=np.float64, count=total
        )
        hit = ~np.isnan(found)  # scores are finite: nan marks a judged document the query did not retrieve
        before = np.cumsum(counts) - counts
        index = (np.arange(total) + np.repeat(starts - before, counts))[hit]  # in the judged lists
        judged_code = np.repeat(codes, counts)[hit]
        score = found[hit]
        grade = lists.grades[index]

        def ids_of(entries: np.ndarray) -> list[str]:
            return list(map(lists.docs.__getitem__, index[entries].tolist()))

    counted = _count_above(run.scores, query_start, rows_per_code, judged_code, score)
    if counted is None:
        return (*_rank_by_sort(run, ids_of, judged_code, score, grade, code_q, rows_per_code), False)
    higher, equal = counted
    ranks, ties = higher.copy(), TieGroups(lambda: (higher, higher + equal))
    tied = np.flatnonzero(equal > 1)
    if len(tied):
        ranks[tied] += _larger_in_groups(run, judged_code[tied], score[tied], ids_of(tied))
    return code_q[judged_code], ranks, grade, ties, False


_NOT_JUDGED = {}.get  # the lookup of a run query without judgments: every document outside the qrels


def _judged_rows_of(qrels: Qrels, run: Run, side: QuerySide):
    """(rows, query code, grade, evaluated query, where that query starts) of the rows of a dict
    run whose document is judged for its query (``side``: the run's :class:`QuerySide`), each
    retrieved document looked up among its query's judgments; rows by evaluated query, in row
    order within each (a run in the tie rule's order: by query and rank already).

    The last answer is kept with the qrels with what it depends on, the run's queries, the
    evaluated index of each and every row's id: a run that lists the same documents for the
    same queries in the same order (a reranker's candidates scored anew, epoch after epoch)
    gets it back after a comparison of ids, without a lookup. Read and replaced whole, as
    :class:`_QrelsSide`.
    """
    ids, lengths = run.doc_vocab, run.query_lengths()
    evaluated = side.code_q.tobytes()
    last = qrels.memo.get("judged rows of the last dict run")
    if (
        last is not None
        and last[0] == run.qid_vocab
        and last[1] == lengths.tobytes()
        and last[4] == evaluated
        and (last[2] is ids or last[2] == ids)
    ):
        return last[3]
    by_query = judged_rows(qrels)
    getters = [_NOT_JUDGED] * len(run.qid_vocab)
    for code, q in zip(side.judged_codes.tolist(), side.code_q[side.judged_codes].tolist()):
        getters[code] = by_query[side.qids[q]].get
    bounds = side.query_start.tolist()
    each_query = map(ids.__getitem__, map(slice, bounds[:-1], bounds[1:]))  # a query's ids, as its dict lists them
    found = np.fromiter(
        chain.from_iterable(map(map, getters, each_query, repeat(repeat(-1)))), dtype=np.int64, count=len(run)
    )
    rows = np.flatnonzero(found >= 0)
    codes = run.qid_codes[rows]
    by_query = np.argsort(side.code_q[codes], kind="stable")
    rows, codes = rows[by_query], codes[by_query]
    joined = (
        rows,
        codes,
        judged_lists(qrels).grades[found[rows]],
        side.code_q[codes],
        side.query_start[codes],
    )
    for array in joined:  # shared by the runs that find them here
        array.flags.writeable = False
    qrels.memo["judged rows of the last dict run"] = (list(run.qid_vocab), lengths.tobytes(), ids, joined, evaluated)
    return joined


def _score_steps(scores: np.ndarray, query_start: np.ndarray) -> tuple[bool, np.ndarray]:
    """For rows grouped by query (``query_start``: where each query starts, then the row count):
    whether the scores of every query never rise, and the rows that tie with the row before
    them in their query (:func:`_continuing`'s positions), from one comparison of neighbours each.

    >>> descending, tied = _score_steps(np.array([3.0, 3.0, 1.0, 1.0, 1.0, 2.0]), np.array([0, 3, 5, 6]))
    >>> descending, tied.tolist()
    (True, [1, 4])
    >>> _score_steps(np.array([1.0, 2.0]), np.array([0, 2]))[0]
    False
    """
    earlier, later = scores[:-1], scores[1:]
    rising = later > earlier
    same = later == earlier
    crossing = query_start[1:-1]  # from one query's last row to the next query's first
    crossing = crossing[(crossing > 0) & (crossing < len(scores))] - 1  # (empty queries at either end hold no row)
    rising[crossing] = False
    same[crossing] = False
    return not rising.any(), np.flatnonzero(same) + 1


def _rank_by_position(
    run: Run, rows: np.ndarray, first: np.ndarray, tied: np.ndarray
) -> tuple[np.ndarray, TieGroups, bool]:
    """(rank, tie groups, in order) of ``rows`` of a dict run whose queries come in score order
    (``first``: the row where each one's query starts; ``tied``: the rows that tie with the row
    before them in their query, :func:`_score_steps`): a row's rank is its position in a run in
    the tie rule's order, else where its group of equal scores starts plus the larger ids of the
    group, which is a slice of the run's rows. The groups are found when asked for, in the first
    case; ``in order``: whether ranks ascend with the rows inside each query (the first case)."""
    if len(tied) == 0 or _ties_in_id_order(run.doc_vocab, tied):
        return rows - first, TieGroups(lambda: _position_groups(len(run.scores), tied, rows, first)[:2]), True
    group_start, group_end, low, high = _position_groups(len(run.scores), tied, rows, first)
    ranks = group_start.copy()
    within = np.flatnonzero(high - low > 1)
    docs = list(map(run.doc_vocab.__getitem__, rows[within].tolist()))
    ranks[within] += _larger_tied_ids(run, None, docs, low[within], high[within])
    return ranks, TieGroups(lambda: (group_start, group_end)), False


def _position_groups(n: int, tied: np.ndarray, rows: np.ndarray, first: np.ndarray):
    """The groups of equal scores of ``rows`` of a sequence of ``n`` grouped by query in score order
    (``tied``: :func:`_continuing`'s positions; ``first``: where each row's query starts): their
    start and end within the query, then in the sequence."""
    opens = np.ones(n, dtype=bool)
    opens[tied] = False
    group_first = np.flatnonzero(opens)
    group = (np.cumsum(opens) - 1)[rows]
    low, high = group_first[group], np.append(group_first[1:], n)[group]
    return low - first, high - first, low, high


def _ties_in_id_order(ids: list[str], tied: np.ndarray) -> bool:
    """Whether every row ``tied`` (that ties with the row before it, :func:`_continuing`) has a
    smaller document id (byte order; ``ids``: every row's) than the row before it: the run is
    then in the tie rule's order (how runs sorted as trec_eval sorts them come), and a row's
    rank is its position."""
    if len(tied) == 1:
        later, earlier = [ids[int(tied[0])]], [ids[int(tied[0]) - 1]]
    else:
        later, earlier = list(itemgetter(*tied.tolist())(ids)), list(itemgetter(*(tied - 1).tolist())(ids))
    if not str_order_is_byte_order(later + earlier):
        later, earlier = list(map(byte_key, later)), list(map(byte_key, earlier))
    return all(map(gt, earlier, later))


BLOCK_CELLS = 1 << 16  # (judged document x query position) comparisons made at a time: a block stays in cache
COMPARISONS_PER_SORT_STEP = 4  # what one step of sorting the run costs, in comparisons of _count_above


def _blocks(depth: np.ndarray):
    """Blocks of pairs of similar depths, each about :data:`BLOCK_CELLS` cells: (pairs, width)
    with ``pairs`` indices into ``depth`` and ``width`` the deepest of them."""
    order = np.argsort(depth, kind="stable")
    ordered = depth[order]
    first = 0
    while first < len(order):
        last = min(first + max(BLOCK_CELLS // max(int(ordered[first]), 1), 1), len(order))
        width = int(ordered[last - 1])
        last = min(last, first + max(BLOCK_CELLS // max(width, 1), 1))
        yield order[first:last], int(ordered[last - 1])
        first = last


def _windows(scores: np.ndarray, starts: np.ndarray, lengths: np.ndarray, width: int):
    """The rows ``[starts[i], starts[i] + lengths[i])`` of ``scores`` as one matrix ``width`` wide
    (a copy of whole windows, no index matrix), and where each row holds its own positions:
    None when every row is exactly its window, else a mask."""
    if width == 0:
        return np.zeros((len(starts), 0), dtype=scores.dtype), None
    at = np.minimum(starts, len(scores) - width)  # a window past the end is taken earlier, shifted
    cells = np.lib.stride_tricks.sliding_window_view(scores, width)[at]
    shift = starts - at
    if not shift.any() and lengths.min() == width:
        return cells, None
    positions = np.arange(width)
    return cells, (positions >= shift[:, None]) & (positions < (shift + lengths)[:, None])


def _count_above(
    scores: np.ndarray, query_start: np.ndarray, lengths: np.ndarray, codes: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """For each (query code, score) pair: how many rows of that query score higher, and how
    many score the same (itself included), for rows grouped by query (``query_start``).

    Each pair is compared with every row of its query, a block of pairs at a time as a
    matrix (pairs x the longest of their queries, :func:`_windows`): no sort, and the work
    is the judged documents times the depth of their queries. None when a sort of the run
    costs less (many judged documents per query against few queries, as in TREC DL's qrels).

    >>> scores = np.array([3.0, 1.0, 2.0, 2.0, 0.5, 0.4, 0.3, 0.2, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0, -1.0, -2.0])
    >>> higher, equal = _count_above(scores, np.array([0, 8, 16]), np.array([8, 8]), np.array([0, 1]),
    ...                              np.array([2.0, 5.0]))
    >>> higher.tolist(), equal.tolist()
    ([1, 0], [2, 1])
    >>> _count_above(scores, np.array([0, 8, 16]), np.array([8, 8]), np.array([0] * 8), np.full(8, 2.0)) is None
    True
    """
    if len(codes) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    depth = lengths[codes]
    if int(depth.sum()) * COMPARISONS_PER_SORT_STEP > len(scores) * max(len(scores), 2).bit_length():
        return None
    higher = np.empty(len(codes), dtype=np.int64)
    equal = np.empty(len(codes), dtype=np.int64)
    for pick, width in _blocks(depth):
        cells, inside = _windows(scores, query_start[codes[pick]], depth[pick], width)
        value = values[pick][:, None]
        above, same = cells > value, cells == value
        if inside is not None:
            above &= inside
            same &= inside
        higher[pick] = np.count_nonzero(above, axis=1)
        equal[pick] = np.count_nonzero(same, axis=1)
    return higher, equal


def _larger_in_groups(run: Run, codes: np.ndarray, scores: np.ndarray, docs: list[str]) -> np.ndarray:
    """For each judged document ``docs[i]`` of query code ``codes[i]`` (a dict run) with score
    ``scores[i]``, how many documents of its query have the same score and a larger id (byte order).

    Each query's dict is read once, keeping the ids of the scores asked about.
    """
    wanted: dict[int, set[float]] = {}
    for code, value in zip(codes.tolist(), scores.tolist()):
        wanted.setdefault(code, set()).add(value)
    groups: dict[tuple[int, float], list] = {}
    for code, values in wanted.items():
        for doc, value in run.rankings[code].items():
            if value in values:
                groups.setdefault((code, value), []).append(doc)
    texts = [doc for group in groups.values() for doc in group]
    if not str_order_is_byte_order(texts + docs):
        groups = {key: list(map(byte_key, group)) for key, group in groups.items()}
        docs = list(map(byte_key, docs))
    for group in groups.values():
        group.sort()
    return np.array(
        [
            len(group) - bisect_right(group, doc)
            for group, doc in zip((groups[key] for key in zip(codes.tolist(), scores.tolist())), docs)
        ],
        dtype=np.int64,
    )


def _rank_by_sort(run: Run, ids_of, judged_code, score, grade, code_q, rows_per_code):
    """:func:`_judge_rankings`' ranks by sorting the run's (query, -score) pairs, for runs where
    :func:`_count_above` would compare too much (``ids_of``: the ids of some of the judged entries)."""
    key = run.qid_codes + 1j * -run.scores
    order = None if _in_query_order(run.qid_codes, run.scores)[0] else np.argsort(key, kind="stable")
    if order is not None:
        key = key[order]
    low = np.searchsorted(key, judged_code + 1j * -score, side="left")
    # the end of each group of equal (query, score) pairs, for every position of the sequence
    group_starts = np.flatnonzero(key[1:] != key[:-1]) + 1
    group_of = np.zeros(len(key), dtype=np.int64)
    group_of[group_starts] = 1
    high = np.append(group_starts, len(key))[np.cumsum(group_of)[low]]
    query_start = np.concatenate(([0], np.cumsum(rows_per_code)))
    ranks = low - query_start[judged_code]
    group_start = ranks.copy()  # before the ids inside the groups are counted
    ties = TieGroups(lambda: (group_start, high - query_start[judged_code]))
    tied = np.flatnonzero(high - low > 1)
    if len(tied):
        ranks[tied] += _larger_tied_ids(run, order, ids_of(tied), low[tied], high[tied])
    return code_q[judged_code], ranks, grade, ties


def _larger_tied_ids(
    run: Run, order: np.ndarray | None, docs: list[str], low: np.ndarray, high: np.ndarray
) -> np.ndarray:
    """For each of ``docs``, whose group of equal scores is [low, high) of the (query, score)
    sequence (``order``: its run rows, None: the run itself), how many of the group have a larger id."""
    ids = run.doc_vocab
    groups: dict[int, list[str]] = {}
    for start, end in zip(low.tolist(), high.tolist()):
        if start not in groups:
            groups[start] = ids[start:end] if order is None else [ids[r] for r in order[start:end].tolist()]
    if not str_order_is_byte_order([text for group in groups.values() for text in group] + docs):
        groups = {start: list(map(byte_key, group)) for start, group in groups.items()}
        docs = list(map(byte_key, docs))
    for group in groups.values():
        group.sort()
    return np.array(
        [len(groups[start]) - bisect_right(groups[start], doc) for start, doc in zip(low.tolist(), docs)],
        dtype=np.int64,
    )


def _subset(index: np.ndarray, *columns: np.ndarray | None) -> list[np.ndarray | None]:
    """The same rows (an index or a mask) of every column; None (no such column) stays None."""
    return [None if column is None else column[index] for column in columns]


class QrelsOrder(NamedTuple):
    """What ranking derives from the judgments alone, once per :class:`Qrels` (kept in its ``memo``).

    ``qids``: the queries with a judgment, in byte order (trec_eval's); ``position``: each
    one's index there; ``row_position``: the index of every qrels row's query; ``offsets``
    slices ``grades``: every non-negative grade of each query of ``qids``, descending.
    """

    qids: list[str]
    position: dict[str, int]
    row_position: np.ndarray
    offsets: np.ndarray
    grades: np.ndarray


def qrels_order(qrels: Qrels) -> QrelsOrder:
    """The :class:`QrelsOrder` of ``qrels``, computed on first use and kept in ``qrels.memo``.

    >>> from evaltool.io.frames import qrels_from_dict
    >>> order = qrels_order(qrels_from_dict({"q2": {"a": 1, "b": 3}, "q1": {"c": -1, "d": 0}}))
    >>> order.qids, order.row_position.tolist(), order.offsets.tolist(), order.grades.tolist()
    (['q1', 'q2'], [1, 1, 0, 0], [0, 1, 3], [0, 3, 1])
    """
    order = qrels.memo.get("ranking")
    if order is None:
        qids = qrels.queries_with()
        qids = sorted(qids) if str_order_is_byte_order(qids) else sorted(qids, key=byte_key)
        position = {qid: i for i, qid in enumerate(qids)}
        row_position = np.fromiter(map(position.get, qrels.qid_vocab, repeat(-1)), np.int64, len(qrels.qid_vocab))
        row_position = row_position[qrels.qid_codes]
        nonneg = qrels.grades >= 0
        jq, jg = row_position[nonneg], qrels.grades[nonneg]
        offsets = np.concatenate(([0], np.cumsum(np.bincount(jq, minlength=len(qids))))).astype(np.int64)
        order = QrelsOrder(qids, position, row_position, offsets, jg[np.lexsort((-jg, jq))].astype(np.int64))
        for shared in order[2:]:  # handed to every batch: read-only, so no kernel can change them
            shared.flags.writeable = False
        qrels.memo["ranking"] = order
    return order


class QuerySide(NamedTuple):
    """What ranking derives from the judgments and the run's queries alone (their ids and the
    number of rows of each), kept in ``qrels.memo`` for the last run (:func:`_query_side`).

    ``qids``: the evaluated queries (byte order); ``skipped``: judged queries the run lacks
    (left out without ``-c``); ``unjudged``: run queries with rows but no judgments;
    ``named_any``: whether the run names a judged query; ``eval_index``: the evaluated index
    of every judged query (-1: not evaluated); ``code_q``: that of every run query code;
    ``num_ret``: rows per evaluated query (1 for a missing one, as trec_eval counts it);
    ``missing``; ``query_start``: the run row where each run query code starts;
    ``judged_offsets`` / ``judged_grades``: the evaluated queries' non-negative grades,
    descending, and ``judged_memo`` what the measures derive from them
    (:meth:`RankedBatch.judged`); ``judged_codes``: the run query codes with judgments, and
    where their judgments start and end in :func:`judged_lists`. Every array is read-only.
    """

    qids: tuple
    skipped: tuple
    unjudged: tuple
    named_any: bool
    eval_index: np.ndarray
    code_q: np.ndarray
    num_ret: np.ndarray
    missing: np.ndarray
    query_start: np.ndarray
    judged_offsets: np.ndarray
    judged_grades: np.ndarray
    judged_memo: dict
    judged_codes: np.ndarray
    list_starts: np.ndarray
    list_ends: np.ndarray


def _query_side(qrels: Qrels, run: Run, complete: bool) -> QuerySide:
    """The :class:`QuerySide` of ``run`` against ``qrels`` (``complete``: ``-c``), computed anew
    unless the last run ranked against ``qrels`` had the same query ids, in the same order,
    with as many rows each (an Evaluator's runs, one after another). Read and replaced whole,
    as :class:`_QrelsSide`."""
    rows_per_code = run.query_lengths()
    last = qrels.memo.get("queries of the last run")
    if last is not None and last[0] == run.qid_vocab and last[1] == complete and last[2] == rows_per_code.tobytes():
        return last[3]
    judged_side = qrels_order(qrels)
    qrels_qids, position = judged_side.qids, judged_side.position
    run_used = np.flatnonzero(rows_per_code)
    run_code_pos = np.fromiter(map(position.get, run.qid_vocab, repeat(-1)), np.int64, len(run.qid_vocab))
    # the run names the query, with results or with an empty ranking (a dict's {}: answered with nothing,
    # scored as pytrec_eval and ir_measures score it: nothing retrieved); only queries it never names are missing
    named = np.zeros(len(qrels_qids), dtype=bool)
    named[run_code_pos[run_code_pos >= 0]] = True
    evaluated = np.flatnonzero(named | complete)
    n_q = len(evaluated)
    eval_index = np.full(len(qrels_qids), -1, dtype=np.int64)
    eval_index[evaluated] = np.arange(n_q)
    code_q = np.where(run_code_pos >= 0, eval_index[np.maximum(run_code_pos, 0)], -1)
    evaluated_codes = code_q >= 0
    num_ret = np.zeros(n_q, dtype=np.int64)
    num_ret[code_q[evaluated_codes]] = rows_per_code[evaluated_codes]
    missing = ~named[evaluated]
    num_ret[missing] = 1  # trec_eval scores a missing query as one non-pool document
    judged_codes = np.flatnonzero(code_q >= 0)
    list_code, list_starts, list_ends = judged_spans(qrels)[:3]  # no document ids: a run of bytes never needs them
    qids = tuple(qrels_qids) if n_q == len(qrels_qids) else tuple(map(qrels_qids.__getitem__, evaluated.tolist()))
    qrels_code = np.fromiter(
        map(list_code.__getitem__, map(qids.__getitem__, code_q[judged_codes].tolist())), np.int64, len(judged_codes)
    )
    # the judged grades of these queries are the same for every run: so is what is derived from them
    memo_key, judged_memo = qrels.memo.get("judged", (None, None))
    if memo_key != evaluated.tobytes():
        memo_key, judged_memo = evaluated.tobytes(), {}
        qrels.memo["judged"] = memo_key, judged_memo
    side = QuerySide(
        qids,
        () if complete else tuple(map(qrels_qids.__getitem__, np.flatnonzero(~named).tolist())),
        tuple(sorted(map(run.qid_vocab.__getitem__, run_used[run_code_pos[run_used] < 0].tolist()))),
        bool(named.any()),
        eval_index,
        code_q,
        num_ret,
        missing,
        np.concatenate(([0], np.cumsum(rows_per_code))),
        *_segments(judged_side.offsets, judged_side.grades, evaluated),
        judged_memo,
        judged_codes,
        list_starts[qrels_code],
        list_ends[qrels_code],
    )
    for array in side[4:11] + side[12:]:
        array.flags.writeable = False
    qrels.memo["queries of the last run"] = (list(run.qid_vocab), complete, rows_per_code.tobytes(), side)
    return side


def _segments(offsets: np.ndarray, values: np.ndarray, picked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CSR segments ``picked`` (ascending indices) of ``(offsets, values)``, as a CSR of their own."""
    if len(picked) == len(offsets) - 1:
        return offsets, values
    lengths = offsets[picked + 1] - offsets[picked]
    new_offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    gather = np.arange(int(new_offsets[-1])) + np.repeat(offsets[picked] - new_offsets[:-1], lengths)
    return new_offsets, values[gather]


def rank(
    qrels: Qrels, run: Run, options: RankOptions = RankOptions(), num_docs_in_coll: int = 0, *, must_share: bool = True
) -> Ranking:
    """Sort, truncate and judge every query of ``run`` that ``qrels`` knows.

    A query that ``run`` names without a row (a dict's ``{}``) was answered with nothing and
    is scored so (no document retrieved), as pytrec_eval and ir_measures score it; a query it
    never names is missing: skipped, or under ``options.complete`` scored as trec_eval's
    ``-c`` scores it. ``must_share``: a run naming no judged query is an InputError (False: a
    run standing in for the queries missing from the pieces of a streamed run, which names none).
    """
    side = _query_side(qrels, run, options.complete)
    if must_share and not side.named_any:
        # the first ids in byte order: the same whichever reader (or engine) read the run
        run_sample = sorted(run.qid_vocab, key=byte_key)[:3]
        raise InputError(
            f"no query of {run.path} has judgments in {qrels.path} "
            f"(run queries such as {', '.join(map(quote, run_sample))}; "
            f"qrels queries such as {', '.join(map(quote, qrels_order(qrels).qids[:3]))})"
        )
    n_q, code_q, num_ret = len(side.qids), side.code_q, side.num_ret
    in_order = False
    if run.rankings is not None and qrels.subtopics is None:
        sq, ranks, grade, ties, in_order = _judge_rankings(qrels, run, side)
        rows = None
    else:
        sq, ranks, grade, rows = _judge_rows(qrels, run, code_q, side.eval_index[qrels_order(qrels).row_position])
        ties = None
    # (query, rank) pairs are distinct: one key sorts them (a run in query and score order comes sorted)
    by_query_rank = None if in_order else sq * (int(ranks.max(initial=0)) + 1) + ranks
    if by_query_rank is not None and (by_query_rank[1:] < by_query_rank[:-1]).any():
        by_rank = np.argsort(by_query_rank, kind="stable")  # timsort: the runs of one query in rank order merge
        sq, ranks, grade, rows = _subset(by_rank, sq, ranks, grade, rows)
        ties = None if ties is None else ties.take(by_rank)
    if ties is None:
        ties = tie_groups(run, rows)
    if options.max_ret is not None:
        kept = ranks < options.max_ret
        sq, ranks, grade, rows = _subset(kept, sq, ranks, grade, rows)
        num_ret = np.minimum(num_ret, max(options.max_ret, 0))
        ties = ties.cut(kept, max(options.max_ret, 0))
    rel = np.where(grade < 0, RELVALUE_UNJUDGED, grade)
    if options.judged_only:
        kept = rel >= 0
        sq, rel, rows = _subset(kept, sq, rel, rows)
        num_ret = np.bincount(sq, minlength=n_q).astype(np.int64)
        starts = np.concatenate(([0], np.cumsum(num_ret)))
        ranks = np.arange(len(sq)) - starts[sq]
        ties = ties.judged(kept, sq, starts)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(np.bincount(sq, minlength=n_q), out=offsets[1:])

    qids = list(side.qids)
    batch = RankedBatch(
        judged_memo=side.judged_memo,
        qids=qids,
        num_ret=num_ret,
        offsets=offsets,
        rank=ranks.astype(np.int64),
        rel=rel.astype(np.int64),
        judged_offsets=side.judged_offsets,
        judged_grades=side.judged_grades,
        missing=side.missing,
        ties=ties,
        relevance_level=options.relevance_level,
        num_docs_in_coll=num_docs_in_coll,
        intents=None if qrels.subtopics is None else _intents(qrels.subtopics, run, qids, sq, ranks, rows),
    )
    batch.__dict__["seg"] = sq.astype(np.int64, copy=False)  # the rows' queries, in query order: the batch's seg
    return Ranking(batch, list(side.skipped), list(side.unjudged), run.runid)
