"""Columnar containers for judgments and runs.

Both files become the same shape: query ids dictionary-encoded once (``qid_vocab``,
``qid_codes``), document ids as integer keys that are equal exactly when the ids are
equal (``doc_codes``), one value column (grade or score), and the source line of every
row so that later checks can still name the line they object to. A run read by the
columnar reader keeps its ids in Arrow and answers ``doc_text`` / ``keys_for`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np


@dataclass
class Qrels:
    """Relevance judgments: one row per (query, document) with an integer grade.

    Negative grades mean "in the pool but unjudged" (trec_eval's convention).
    """

    qid_vocab: list[str]
    qid_codes: np.ndarray
    doc_vocab: list[str]
    doc_codes: np.ndarray
    grades: np.ndarray
    lines: np.ndarray
    path: str = "<qrels>"
    duplicates_resolved: int = 0
    subtopics: SubtopicJudgments | None = None  # read from a subtopic qrels file (diversity measures)
    # what readers of these judgments derive from them once and reuse run after run (an
    # Evaluator's): ranking's query order and judged grades, the queries with a relevant document,
    # what the measures derive from the judged grades of the last set of evaluated queries
    # (not an init field: a copy made by dataclasses.replace starts with an empty one)
    memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.grades)

    def queries_with(self, rows: np.ndarray | None = None) -> list[str]:
        """The query ids that have a judgment (among ``rows``, a mask, when given), in vocabulary order.

        >>> Qrels(["q1", "q2", "q3"], np.array([2, 0, 2]), ["a"], np.array([0, 0, 0]), np.array([1, 0, 1]),
        ...       np.array([1, 2, 3])).queries_with(np.array([True, False, True]))
        ['q3']
        """
        if rows is None and "queries_with" in self.memo:
            return list(self.memo["queries_with"])
        codes = self.qid_codes if rows is None else self.qid_codes[rows]
        found = [self.qid_vocab[c] for c in np.flatnonzero(np.bincount(codes, minlength=len(self.qid_vocab))).tolist()]
        if rows is None:
            self.memo["queries_with"] = tuple(found)
        return found

    @cached_property
    def by_query(self) -> dict[str, tuple[list[str], np.ndarray]]:
        """Each query's judged document ids and their grades (in row order), grouped once.

        >>> Qrels(["q1", "q2"], np.array([1, 0, 1]), ["a", "b"], np.array([0, 1, 1]), np.array([2, 0, 1]),
        ...       np.array([1, 2, 3])).by_query
        {'q1': (['b'], array([0])), 'q2': (['a', 'b'], array([2, 1]))}
        """
        order = np.argsort(self.qid_codes, kind="stable")
        codes = self.qid_codes[order]
        docs = [self.doc_vocab[c] for c in self.doc_codes[order].tolist()]
        grades = self.grades[order]
        bounds = np.flatnonzero(np.diff(codes)) + 1
        starts, ends = np.concatenate(([0], bounds)).tolist(), np.append(bounds, len(codes)).tolist()
        return {self.qid_vocab[codes[s]]: (docs[s:e], grades[s:e]) for s, e in zip(starts, ends) if e > s}


class SubtopicJudgments:
    """Judgments per subtopic (intent): one row per (query, subtopic, document) with a grade.

    ``doc_vocab`` is sorted by byte order, so a larger ``doc_codes`` value is a larger
    document id (ndeval's greedy ideal ranking breaks ties by it). The
    :class:`Qrels` that carries these holds one row per (query, document): its highest
    grade over the subtopics. (A plain class: a dataclass costs every start-up half a millisecond.)
    """

    __slots__ = (
        "qid_vocab",
        "qid_codes",
        "subtopic_vocab",
        "subtopic_codes",
        "doc_vocab",
        "doc_codes",
        "grades",
        "lines",
    )

    def __init__(
        self,
        qid_vocab: list[str],
        qid_codes: np.ndarray,
        subtopic_vocab: list[str],
        subtopic_codes: np.ndarray,
        doc_vocab: list[str],
        doc_codes: np.ndarray,
        grades: np.ndarray,
        lines: np.ndarray,
    ):
        self.qid_vocab, self.qid_codes, self.subtopic_vocab, self.subtopic_codes = (
            qid_vocab,
            qid_codes,
            subtopic_vocab,
            subtopic_codes,
        )
        self.doc_vocab, self.doc_codes, self.grades, self.lines = doc_vocab, doc_codes, grades, lines


@dataclass
class Run:
    """A ranked result list: one row per (query, document) with a float score.

    ``runid`` is the tag of the last content line, as trec_eval reports it.
    """

    qid_vocab: list[str]
    qid_codes: np.ndarray
    doc_vocab: list[str]
    doc_codes: np.ndarray
    scores: np.ndarray
    lines: np.ndarray | None  # the file line of each row; None for runs not read from a file
    runid: str = ""
    path: str = "<run>"
    duplicates_resolved: int = 0
    extra: dict = field(default_factory=dict)

    # whether doc_codes order equals the byte order of the ids (a reader that sorts its vocabulary)
    codes_in_byte_order = False
    # a run converted from a dict (io.frames.DictRun): each query's {docid: score}, in code order,
    # rows grouped by query in the dicts' order, doc_vocab every row's id; ranking looks judged documents up by id
    rankings: list[dict] | None = None
    # whether each query's dict is made when first read (io.frames.FrameRun): ranking then looks the
    # retrieved rows up among the judgments rather than the judged documents in every query's dict
    rankings_made_when_read = False

    def __len__(self) -> int:
        return len(self.scores)

    def query_lengths(self) -> np.ndarray:
        """The number of rows of each query code (``qid_vocab``'s)."""
        from evaltool.arrays import counts

        return counts(self.qid_codes, len(self.qid_vocab))

    def doc_text(self, rows: np.ndarray) -> list[str]:
        """The document ids of ``rows``, as text (for the byte-order tie rule)."""
        return [self.doc_vocab[c] for c in self.doc_codes[rows]]

    def keys_for(self, docids: list[str]) -> np.ndarray:
        """The ``doc_codes`` value each id has in this run, -1 for ids the run never retrieved."""
        index = dict(zip(self.doc_vocab, range(len(self.doc_vocab))))
        return np.fromiter((index.get(d, -1) for d in docids), dtype=np.int64, count=len(docids))

    def judged_ids(self, qrels: Qrels):
        """The qrels' document ids in the form this run looks them up (``keys_for``,
        ``rows_with_ids``): their text, ``qrels.doc_vocab``."""
        return qrels.doc_vocab

    def doc_keys(self, rows: np.ndarray) -> np.ndarray:
        """Integer keys of the document ids of ``rows``, equal exactly when the ids are."""
        return self.doc_codes[rows]

    def rows_with_ids(self, docids: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """(rows, positions): every row whose document id is one of ``docids`` (distinct ids) and
        that id's position in ``docids``; None when ``keys_for`` and ``doc_codes`` answer it
        (a run that finds ids its own way overrides this)."""
        return None


@dataclass
class Query:
    """One query of a queries (benchmark) file, as the relevance sources see it.

    ``relevant`` holds the query's explicit judgments (``relevant_ids`` as grade 1, or the
    graded ``qrels``), None when it has none; ``answers`` the expected answer texts
    (``answer``, ``expected_text``). ``fields`` is the whole object as read, for packs
    that need a benchmark's own keys.
    """

    qid: str
    text: str | None = None
    relevant: dict[str, int] | None = None
    answers: tuple[str, ...] = ()
    category: str | None = None
    difficulty: str | None = None
    metadata: dict = field(default_factory=dict)
    fields: dict = field(default_factory=dict)
    line: int | None = None


@dataclass
class Item:
    """One retrieved item: a results line (JSONL) or a run line (TREC, without text)."""

    qid: str
    docid: str
    score: float | None = None
    rank: int | None = None
    text: str | None = None
    metadata: dict = field(default_factory=dict)
    line: int | None = None
