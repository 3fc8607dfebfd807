"""Subtopic qrels, the TREC Web track's diversity judgments that ndeval reads.

One line per judgment: ``query_id subtopic doc_id grade``, the layout of ordinary TREC
qrels with the second field naming the subtopic (intent) the judgment is for. A document
judged for several subtopics has several lines. The reader is as tolerant as the qrels
reader (comment lines, blank lines, tabs or several spaces, CRLF, gzip) and as precise.

It returns a :class:`~evaltool.inputs.Qrels` with one row per (query, document) whose
grade is the document's highest grade over the subtopics, so every ordinary measure
reads the file as ndeval counts relevant documents (relevant to any subtopic is
relevant); the judgments per subtopic ride along in ``qrels.subtopics`` for the
diversity measures (:mod:`evaltool.measures.diversity`).

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "qrels.div")
>>> _ = open(path, "w").write("1 1 d1 1\\n1 2 d1 0\\n1 2 d2 2\\n")
>>> qrels = read_subtopic_qrels(path)
>>> qrels.doc_vocab, qrels.grades.tolist(), qrels.subtopics.subtopic_vocab
(['d1', 'd2'], [1, 2], ['1', '2'])
"""

from __future__ import annotations

import os

import numpy as np

from evaltool.errors import InputError, ParseError, quote
from evaltool.inputs import Qrels, SubtopicJudgments
from evaltool.io.common import check_policy, decode, read_bytes, resolve_duplicates
from evaltool.io.trec import content_lines, judgment_grade, line_text

SUBTOPIC_EXPECTED = "4 fields 'query_id subtopic doc_id grade'"


def _codes(tokens: list) -> tuple[list[str], np.ndarray]:
    """Ids (bytes, or text) dictionary-encoded in byte order (a larger code is a larger id)."""
    if not tokens or isinstance(tokens[0], str):
        tokens = [t.encode("utf-8", "surrogateescape") for t in tokens]
    unique, codes = np.unique(np.array(tokens, dtype=object), return_inverse=True)
    return [decode(t) for t in unique.tolist()], codes.reshape(-1).astype(np.int64)


def subtopic_qrels_from_dict(qrels: dict, *, diversity: bool = False) -> Qrels:
    """``{qid: {subtopic: {docid: grade}}}`` as :func:`read_subtopic_qrels` reads a file.

    >>> subtopic_qrels_from_dict({"q": {"1": {"a": 1}, "2": {"a": 0, "b": 2}}}).grades.tolist()
    [1, 2]
    """
    qids, subtopics, docs, grades = [], [], [], []
    for qid, by_subtopic in qrels.items():
        if not isinstance(by_subtopic, dict) or not all(isinstance(v, dict) for v in by_subtopic.values()):
            raise InputError(
                f"subtopic qrels as a dict are {{qid: {{subtopic: {{docid: grade}}}}}}; query {qid!r} "
                f"holds {by_subtopic!r}"
            )
        for subtopic, by_doc in by_subtopic.items():
            for doc, grade in by_doc.items():
                if isinstance(grade, bool) or not isinstance(grade, (int, np.integer)):
                    raise InputError(
                        f"query {qid!r} subtopic {subtopic!r} document {doc!r}: the grade must be an "
                        f"integer, not {grade!r}"
                    )
                qids.append(str(qid))
                subtopics.append(str(subtopic))
                docs.append(str(doc))
                grades.append(int(grade))
    if not grades:
        raise InputError("the subtopic qrels dict holds no judgment")
    lines = np.arange(1, len(grades) + 1, dtype=np.int64)
    judgments = _judgments(qids, subtopics, docs, grades, lines)
    if diversity:
        _require_subtopics(judgments, "<dict>", None, None)
    return _per_document(judgments, "<dict>", 0)


def _judgments(qids, subtopics, docs, grades, lines) -> SubtopicJudgments:
    qid_vocab, qid_codes = _codes(qids)
    subtopic_vocab, subtopic_codes = _codes(subtopics)
    doc_vocab, doc_codes = _codes(docs)
    return SubtopicJudgments(
        qid_vocab,
        qid_codes,
        subtopic_vocab,
        subtopic_codes,
        doc_vocab,
        doc_codes,
        np.asarray(grades, dtype=np.int64),
        np.asarray(lines, dtype=np.int64),
    )


def _require_subtopics(judgments: SubtopicJudgments, name: str, line: int | None, text: str | None) -> None:
    """Refuse judgments with one subtopic id in all: ordinary qrels, read for a diversity measure."""
    if len(judgments.subtopic_vocab) == 1:
        raise ParseError(
            name,
            line,
            text,
            f"subtopic judgments ({SUBTOPIC_EXPECTED}, ndeval's qrels) for a diversity measure; "
            f"the subtopic (field 2) is {quote(judgments.subtopic_vocab[0])} everywhere, so these are "
            "ordinary qrels without subtopics",
        )


def read_subtopic_qrels(path: str | os.PathLike, *, on_duplicate: str = "error", diversity: bool = False) -> Qrels:
    """Read ``query_id subtopic doc_id grade`` lines into a :class:`~evaltool.inputs.Qrels` with subtopics.

    A (query, subtopic, document) given twice follows ``on_duplicate`` (``error``, ``first``,
    ``max``). With ``diversity`` (a diversity measure asked for) a file whose second field
    has one value on every line is refused: it is ordinary qrels (that field is their
    iteration column), and every query would have one subtopic.
    """
    check_policy(on_duplicate)
    name, data = read_bytes(path)
    first_raw = b""
    qids, subtopics, docs, grades, lines = [], [], [], [], []
    for number, raw, fields in content_lines(data):
        grade = judgment_grade(name, number, raw, fields, SUBTOPIC_EXPECTED)
        qids.append(fields[0])
        subtopics.append(fields[1])
        docs.append(fields[2])
        grades.append(grade)
        lines.append(number)
        first_raw = first_raw or raw
    if not lines:
        raise ParseError(name, None, None, f"at least one judgment line ({SUBTOPIC_EXPECTED}); the file has none")
    every = _judgments(qids, subtopics, docs, grades, lines)
    if diversity:
        _require_subtopics(every, name, lines[0], line_text(first_raw))
    pair = every.qid_codes * len(every.subtopic_vocab) + every.subtopic_codes

    def duplicate(first: int, repeated: int) -> None:
        raw = data.split(b"\n")[lines[repeated] - 1]
        raise ParseError(
            name,
            lines[repeated],
            line_text(raw),
            f"each (query, subtopic, document) once; query {quote(every.qid_vocab[every.qid_codes[first]])} "
            f"subtopic {quote(every.subtopic_vocab[every.subtopic_codes[first]])} document "
            f"{quote(every.doc_vocab[every.doc_codes[first]])} was already given at line {lines[first]} "
            "(use --on-duplicate first|max to accept duplicates)",
        )

    keep, dropped = resolve_duplicates(
        on_duplicate, pair, every.doc_codes, every.grades, len(every.doc_vocab), duplicate
    )
    judgments = SubtopicJudgments(
        every.qid_vocab,
        every.qid_codes[keep],
        every.subtopic_vocab,
        every.subtopic_codes[keep],
        every.doc_vocab,
        every.doc_codes[keep],
        every.grades[keep],
        every.lines[keep],
    )
    return _per_document(judgments, name, dropped)


def _per_document(judgments: SubtopicJudgments, name: str, dropped: int) -> Qrels:
    """One row per (query, document): its highest grade over the subtopics, at the line of its first judgment."""
    key = judgments.qid_codes * len(judgments.doc_vocab) + judgments.doc_codes
    order = np.lexsort((judgments.lines, key))
    first = np.ones(len(order), dtype=bool)
    first[1:] = key[order][1:] != key[order][:-1]
    starts = np.flatnonzero(first)
    rows = order[starts]
    best = np.maximum.reduceat(judgments.grades[order], starts)
    return Qrels(
        judgments.qid_vocab,
        judgments.qid_codes[rows],
        judgments.doc_vocab,
        judgments.doc_codes[rows],
        best,
        judgments.lines[rows],
        path=name,
        duplicates_resolved=dropped,
        subtopics=judgments,
    )
