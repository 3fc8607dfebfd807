"""TREC qrels and run files.

qrels: ``query_id iteration doc_id grade`` (exactly four fields, integer grade).
run:   ``query_id iteration doc_id rank score tag [ignored ...]``; the rank column is
read and ignored: order comes from the score (see :mod:`evaltool.ranking`).

Both readers are tolerant where trec_eval is (comment lines starting with ``#``, blank
lines, tabs or several spaces, CRLF, no final newline, gzip by magic bytes) and precise
where they fail: every error names the file, the line, the text and what was expected.
Fields are split on ASCII whitespace only, like C's ``isspace``; ids are exact strings.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "q.txt")
>>> _ = open(path, "w").write("# judged\\n1 0 d1 2\\n1 0 d2 0\\r\\n")
>>> qrels = read_qrels(path)
>>> qrels.doc_vocab, qrels.grades.tolist()
(['d1', 'd2'], [2, 0])
"""

from __future__ import annotations

import math
import os

import numpy as np

from evaltool.data import Qrels, Run
from evaltool.io import columnar
from evaltool.errors import ParseError
from evaltool.io.common import GRADE_MAX, GRADE_MIN, GRADE_RANGE, Encoder, decode, read_bytes, resolve_duplicates

QRELS_EXPECTED = "4 fields 'query_id iteration doc_id grade'"
RUN_EXPECTED = "6 fields 'query_id iteration doc_id rank score run_tag'"


def _content_lines(data: bytes):
    """Yield (line number, fields) for every line that is not blank or a comment."""
    for number, raw in enumerate(data.split(b"\n"), 1):
        fields = raw.split()
        if not fields or fields[0][:1] == b"#":
            continue
        yield number, raw, fields


def _text(raw: bytes) -> str:
    return decode(raw.rstrip(b"\r"))


def _parse_grade(token: bytes) -> int | None:
    body = token[1:] if token[:1] in (b"+", b"-") else token
    if not body.isdigit():
        return None
    return int(token)


def _parse_score(token: bytes) -> float | None:
    if b"_" in token:
        return None
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _duplicate_error(path: str, data_lines: list[bytes], kind: str, lines: np.ndarray, qids, docs):
    def raise_error(first: int, repeated: int) -> None:
        line = int(lines[repeated])
        raise ParseError(
            path,
            line,
            _text(data_lines[line - 1]),
            f"each ({kind}) pair once; query {qids[first]!r} document {docs[first]!r} "
            f"was already given at line {int(lines[first])} "
            "(use --on-duplicate first|max to accept duplicates)",
        )

    return raise_error


def read_qrels(path: str | os.PathLike, *, on_duplicate: str = "error") -> Qrels:
    """Read a TREC qrels file into a :class:`~evaltool.data.Qrels`."""
    if columnar.wanted(path):
        table = columnar.read_qrels(path)
        if table is not None:
            return table
    name, data = read_bytes(path)
    qids, docs = Encoder(), Encoder()
    qid_codes, doc_codes, grades, lines = [], [], [], []
    for number, raw, fields in _content_lines(data):
        if len(fields) != 4:
            raise ParseError(name, number, _text(raw), QRELS_EXPECTED)
        grade = _parse_grade(fields[3])
        if grade is None:
            raise ParseError(name, number, _text(raw), f"an integer grade in field 4, not {decode(fields[3])!r}")
        if not GRADE_MIN <= grade <= GRADE_MAX:
            raise ParseError(name, number, _text(raw), f"an integer grade {GRADE_RANGE} in field 4")
        qid_codes.append(qids(fields[0]))
        doc_codes.append(docs(fields[2]))
        grades.append(grade)
        lines.append(number)
    if not lines:
        raise ParseError(name, None, None, f"at least one judgment line ({QRELS_EXPECTED}); the file has none")
    qrels = Qrels(
        qids.vocab,
        np.asarray(qid_codes, dtype=np.int64),
        docs.vocab,
        np.asarray(doc_codes, dtype=np.int64),
        np.asarray(grades, dtype=np.int64),
        np.asarray(lines, dtype=np.int64),
        path=name,
    )
    return _apply_duplicates(qrels, qrels.grades, on_duplicate, data, "query, document")


def read_run(path: str | os.PathLike, *, on_duplicate: str = "error") -> Run:
    """Read a TREC run file into a :class:`~evaltool.data.Run`; ``-`` reads stdin."""
    if columnar.wanted(path):
        table = columnar.read_run(path)
        if table is not None:
            return table
    name, data = read_bytes(path, allow_stdin=True)
    qids, docs = Encoder(), Encoder()
    qid_codes, doc_codes, scores, lines = [], [], [], []
    runid = b""
    for number, raw, fields in _content_lines(data):
        if len(fields) < 6:
            raise ParseError(name, number, _text(raw), RUN_EXPECTED)
        score = _parse_score(fields[4])
        if score is None:
            raise ParseError(name, number, _text(raw), f"a finite number as the score in field 5, not {decode(fields[4])!r}")
        qid_codes.append(qids(fields[0]))
        doc_codes.append(docs(fields[2]))
        scores.append(score)
        lines.append(number)
        runid = fields[5]
    if not lines:
        raise ParseError(name, None, None, f"at least one result line ({RUN_EXPECTED}); the file has none")
    run = Run(
        qids.vocab,
        np.asarray(qid_codes, dtype=np.int64),
        docs.vocab,
        np.asarray(doc_codes, dtype=np.int64),
        np.asarray(scores, dtype=np.float64),
        np.asarray(lines, dtype=np.int64),
        runid=decode(runid),
        path=name,
    )
    return _apply_duplicates(run, run.scores, on_duplicate, data, "query, document")


def _apply_duplicates(table, values, policy, data, kind):
    data_lines = data.split(b"\n") if policy == "error" else []
    keep, dropped = resolve_duplicates(
        policy,
        table.qid_codes,
        table.doc_codes,
        values,
        len(table.doc_vocab),
        _duplicate_error(
            table.path, data_lines, kind, table.lines,
            _Lazy(table.qid_vocab, table.qid_codes), _Lazy(table.doc_vocab, table.doc_codes),
        ),
    )
    if dropped:
        table.qid_codes = table.qid_codes[keep]
        table.doc_codes = table.doc_codes[keep]
        table.lines = table.lines[keep]
        if isinstance(table, Qrels):
            table.grades = table.grades[keep]
        else:
            table.scores = table.scores[keep]
        table.duplicates_resolved = dropped
    return table


class _Lazy:
    """Row index -> decoded id, without building a list for every row."""

    def __init__(self, vocab, codes):
        self.vocab, self.codes = vocab, codes

    def __getitem__(self, row):
        return self.vocab[int(self.codes[row])]
