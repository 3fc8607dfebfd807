"""Text document ids of a DataFrame's run, left as the frame's Arrow text and never encoded.

Every trec_eval measure depends on the ranks of the judged documents and on how many
documents each query retrieved, so a run's other ids are needed only to refuse a pair given
twice and to break exact ties. Encoding them all (a hash table as large as the run: seconds
at ten million rows) is replaced by a 64-bit fingerprint of every id, computed from the
Arrow buffers eight bytes at a time (:func:`fingerprints`):

* a repeated (query, document) pair has a repeated fingerprint inside its query, so a query
  whose fingerprints are all distinct has no repeated pair (:func:`repeats_within_queries`);
  a repeated fingerprint sends the frame back to the exact check, which names the pair;
* the judged documents are found by looking their fingerprints up, and every match is
  confirmed by comparing the texts (:meth:`TextDocRun.rows_with_ids`), so a collision can
  cost time, never a wrong value.

>>> import pyarrow as pa
>>> prints = fingerprints(pa.array(["d1", "d2", "d1", ""]))
>>> bool(prints[0] == prints[2]), len(set(prints.tolist()))
(True, 3)
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from evaltool.inputs import Run
from evaltool.io.common import RECENT_LISTS
from evaltool.io.columnar import (
    FINGERPRINT_ROWS,
    ArrowDocRun,
    NumericDocRun,
    bool_column,
    canonical_int64,
    comment_like,
    fingerprints,
    kernels,
    numeric_ids,
    numpy_column,
    query_bounds,
    repeats_in_groups,
    string_array,
)


def take_text(column, rows: np.ndarray):
    """The ids at ``rows`` of an Arrow text array, as ``string`` or ``large_string`` (a
    ``string_view`` array, which Arrow's ``take`` does not read, through its views: the rows'
    views gathered, the data buffers shared, the few ids then cast).

    >>> import pyarrow as pa
    >>> ids = pa.array(["a", "a_long_document_identifier", "b"], pa.string_view())
    >>> take_text(ids.slice(1), np.array([1, 0])).to_pylist()
    ['b', 'a_long_document_identifier']
    """
    import pyarrow as pa

    if not pa.types.is_string_view(column.type):
        return column.take(_indices(rows))
    buffers = column.buffers()
    views = np.frombuffer(buffers[1], dtype=np.uint8, count=16 * len(column), offset=16 * column.offset)
    picked = views.reshape(-1, 16)[np.asarray(rows, dtype=np.int64)]
    gathered = pa.Array.from_buffers(pa.string_view(), len(picked), [None, pa.py_buffer(picked), *buffers[2:]])
    return gathered.cast(pa.string())


def query_runs(qids) -> tuple[np.ndarray, list]:
    """(bounds, ids): the start of every run of equal query ids, then the row count
    (:func:`~evaltool.io.columnar.query_bounds`), and each run's id.

    >>> import pyarrow as pa
    >>> bounds, ids = query_runs(pa.array(["q1", "q1", "q2", "q1"]))
    >>> bounds.tolist(), ids
    ([0, 2, 3, 4], ['q1', 'q2', 'q1'])
    """
    bounds = query_bounds(qids)
    return bounds, take_text(qids, bounds[:-1]).to_pylist()


def repeats_within_queries(prints: np.ndarray, bounds: np.ndarray) -> bool:
    """Whether a fingerprint repeats inside one query (rows ``bounds[i]:bounds[i + 1]``): False
    proves that no (query, document) pair repeats.

    >>> prints = np.array([5, 7, 5, 9], dtype=np.uint64)
    >>> repeats_within_queries(prints, np.array([0, 2, 4])), repeats_within_queries(prints, np.array([0, 4]))
    (False, True)
    """
    if len(prints) < 2:
        return False
    return repeats_in_groups((prints >> np.uint64(1)).view(np.int64), bounds)


SLOTS_PER_ID = 8  # slots of :class:`_Judged`'s table per id: 1 in 8 of other ids reaches a comparison


class _Judged:
    """The fingerprints of a list of distinct ids (a qrels' document ids; ``texts``: as Arrow),
    laid out for lookups: a table of ``2**bits`` slots indexed by a fingerprint's high bits,
    holding the position of the one id whose fingerprint falls there (-1: none, -2: several,
    then looked up among the sorted fingerprints). A run's id is one read from the table and,
    for the few that land on a taken slot, one comparison.

    None (see :class:`_LastJudged`) when two of the ids share a fingerprint: the exact path answers then.
    """

    __slots__ = ("prints", "sorted", "position", "table", "shift", "texts")

    def __init__(self, texts):
        self.texts = texts
        self.prints = fingerprints(texts)
        self.position = np.argsort(self.prints, kind="stable")
        self.sorted = self.prints[self.position]
        bits = max(16, (SLOTS_PER_ID * max(len(texts), 1) - 1).bit_length())
        self.shift = np.uint64(64 - bits)
        self.table = np.full(1 << bits, -1, dtype=np.int32)
        slots = (self.prints >> self.shift).astype(np.intp)
        self.table[slots] = np.arange(len(slots), dtype=np.int32)
        ordered = np.sort(slots)
        self.table[ordered[1:][ordered[1:] == ordered[:-1]]] = -2

    def lookup(self, prints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(indices, positions): which of ``prints`` equal a fingerprint of the ids, and that id's position."""
        slot = self.table[(prints >> self.shift).view(np.int64)]
        taken = np.flatnonzero(slot != -1)
        position = slot[taken].astype(np.int64)
        several = position == -2
        if several.any():
            at = np.minimum(np.searchsorted(self.sorted, prints[taken[several]]), len(self.sorted) - 1)
            position[several] = self.position[at]
        hit = self.prints[position] == prints[taken]
        return taken[hit], position[hit]


class _LastJudged:
    """:class:`_Judged` of the last :data:`~evaltool.io.common.RECENT_LISTS` lists of ids, kept
    while the same lists (a qrels' ids; a few qrels in turn) come run after run; the ids' Arrow
    text when their reader had it (:meth:`remember`), else built from the list."""

    def __init__(self):
        self.recent: tuple = ()
        self.known = (None, None)

    def remember(self, docids: list[str], texts) -> None:
        """``texts``: the Arrow array ``docids`` was read from (a qrels frame's dictionary)."""
        self.known = (docids, texts)

    def __call__(self, docids: list[str]) -> _Judged | None:
        for ids, judged in self.recent:
            if ids is docids:
                return judged
        known, texts = self.known
        judged = _Judged(texts if known is docids else string_array(docids))
        if len(judged.sorted) > 1 and np.any(judged.sorted[1:] == judged.sorted[:-1]):
            judged = None
        self.recent = ((docids, judged), *self.recent[: RECENT_LISTS - 1])
        return judged


_judged = _LastJudged()
remember_texts = _judged.remember


class TextDocRun(ArrowDocRun):
    """A run from a frame's columns whose document ids stay Arrow text (``docs``) with their
    fingerprints (``prints``); rows grouped by query (``bounds``: where each query starts).

    Ranking finds the judged documents through :meth:`rows_with_ids` and reads the texts of
    tied rows only (:meth:`doc_text`, :meth:`doc_keys`); ``doc_codes`` and the dictionary
    (:class:`ArrowDocRun`'s) are built on first use by anything else.

    >>> import pyarrow as pa
    >>> docs = pa.array(["a", "b", "c", "a"])
    >>> run = TextDocRun(["q1", "q2"], np.array([0, 0, 1, 1]), docs, fingerprints(docs), np.array([2.0, 1.0, 3.0, 1.0]))
    >>> [r.tolist() for r in run.rows_with_ids(["a", "z", "c"])], run.doc_codes.tolist(), run.doc_text(np.array([3, 1]))
    ([[0, 2, 3], [0, 2, 0]], [0, 1, 2, 0], ['a', 'b'])
    """

    def __init__(
        self,
        qids: list[str],
        qid_codes: np.ndarray,
        docs,
        prints: np.ndarray,
        scores: np.ndarray,
        runid: str = "",
        path: str = "<run DataFrame>",
    ):
        self.qid_vocab, self.qid_codes, self.scores = qids, qid_codes, scores
        self.docs, self.prints = docs, prints
        self.lines = None
        self.runid, self.path = runid, path
        self.duplicates_resolved = 0

    @cached_property
    def _encoded(self):
        import pyarrow as pa

        encoded = kernels().call_function("dictionary_encode", [self.docs])
        if hasattr(encoded, "combine_chunks"):
            encoded = encoded.combine_chunks()
        dictionary = encoded.dictionary  # as text Arrow's take and index_in read (ArrowDocRun's)
        if pa.types.is_string_view(dictionary.type):
            dictionary = dictionary.cast(pa.string())
        return numpy_column(encoded.indices, np.int32).astype(np.int64), dictionary

    @property
    def doc_codes(self) -> np.ndarray:  # type: ignore[override]
        return self._encoded[0]

    @cached_property
    def extra(self) -> dict:  # type: ignore[override]
        return {"dictionary": self._encoded[1]}

    @property
    def doc_vocab(self) -> list[str]:  # type: ignore[override]
        return []  # as ArrowDocRun's: its ids are read through doc_text and keys_for

    def doc_text(self, rows: np.ndarray) -> list[str]:
        return take_text(self.docs, rows).to_pylist()

    def doc_keys(self, rows: np.ndarray) -> np.ndarray:
        index: dict[str, int] = {}
        return np.array([index.setdefault(text, len(index)) for text in self.doc_text(rows)], dtype=np.int64)

    def rows_with_ids(self, docids: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """(rows, which): every row whose document id is one of ``docids``, and its position in
        ``docids`` (a qrels' document ids, distinct). Each row's fingerprint is looked up in a
        table of the ids' fingerprints (:class:`_Judged`), then among them, and every match is
        confirmed by its text. None when two of ``docids`` share a fingerprint."""
        judged = _judged(docids)
        if judged is None:
            return None
        found, which = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
        for begin in range(0, len(self.prints), FINGERPRINT_ROWS):
            rows, positions = judged.lookup(self.prints[begin : begin + FINGERPRINT_ROWS])
            found.append(rows + begin)
            which.append(positions)
        rows, positions = np.concatenate(found), np.concatenate(which)
        if len(rows):  # every match confirmed by its text
            texts = take_text(self.docs, rows)
            same = kernels().call_function("equal", [texts, take_text(judged.texts, positions).cast(texts.type)])
            confirmed = bool_column(same)
            rows, positions = rows[confirmed], positions[confirmed]
        return rows, positions


def run_from_text_columns(qids, docs, scores: np.ndarray, runid: str, path: str) -> Run | None:
    """A Run from Arrow id columns (``string``, ``large_string`` or ``string_view``; no nulls) and scores whose
    rows are grouped by query, or None for the general reader
    (:func:`evaltool.io.columnar.run_from_columns`) to decide: a query whose rows are apart,
    a query id that reads as a comment line, or a document repeated inside a query (a pair
    given twice, or a fingerprint collision: the exact check tells which).

    Document ids that are all canonical integers become integer keys
    (:class:`~evaltool.io.columnar.NumericDocRun`, as the general reader keeps them), others
    stay text (:class:`TextDocRun`). Queries are told apart where the id changes from one
    row to the next (:func:`query_bounds`): no hash table of query ids.

    >>> import pyarrow as pa
    >>> run = run_from_text_columns(pa.array(["q1", "q1", "q2"]), pa.array(["a", "b", "a"]), np.ones(3), "r", "<run>")
    >>> type(run).__name__, run.qid_vocab, run.qid_codes.tolist()
    ('TextDocRun', ['q1', 'q2'], [0, 0, 1])
    >>> run = run_from_text_columns(pa.array(["q1", "q1"]), pa.array(["10", "9"]), np.ones(2), "r", "<run>")
    >>> type(run).__name__, run.doc_codes.tolist()
    ('NumericDocRun', [10, 9])
    >>> run_from_text_columns(pa.array(["q1", "q2", "q1"]), pa.array(["a", "b", "c"]), np.ones(3), "r", "<run>") is None
    True
    """
    import pyarrow as pa

    bounds, vocab = query_runs(qids)
    if len(set(vocab)) != len(vocab) or comment_like(vocab):
        return None
    codes = np.repeat(np.arange(len(vocab), dtype=np.int32), np.diff(bounds))
    first = docs[0].as_py() if len(docs) else ""
    if first.isascii() and first.isdigit():
        if pa.types.is_string_view(docs.type):  # the integer reader reads offsets
            docs = docs.cast(pa.string())
        keys = numeric_ids(docs, jobs=1) if hasattr(docs, "chunks") else canonical_int64(docs)
        if keys is None or repeats_in_groups(keys, bounds):
            return None
        return NumericDocRun(vocab, codes, [], keys, scores, None, runid=runid, path=path)
    prints = fingerprints(docs)
    if repeats_within_queries(prints, bounds):
        return None
    return TextDocRun(vocab, codes, docs, prints, scores, runid, path)


def _indices(rows: np.ndarray):
    """Row numbers as an Arrow int64 array, from the numpy buffer (``pa.array`` would import pandas)."""
    import pyarrow as pa

    values = np.ascontiguousarray(rows, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])
