"""Judgments as ordinary qrels: every relevance source ends up as rows of one Qrels.

The ranking and the measures then run unchanged, whichever source judged a query. Two
kinds of rows stand for what a source knows beyond the retrieved items:

* **unretrieved relevant items**: a pack whose ``total_relevant(query)`` exceeds the
  relevant items it found adds that many rows with document ids no run retrieved. They
  count in ``num_rel``, the ideal DCG, recall and R-precision, exactly as the relevant
  documents of a TREC qrels file that a run missed.
* **a placeholder** for a judged query with no judgment rows at all (nothing relevant
  listed, nothing retrieved): one row with grade -1 ("in the pool but unjudged", which no
  measure counts) so that the query exists: it scores 0, and ``-c`` averages it in.

Synthetic ids are checked against the run's document ids, so they never match an item.

>>> builder = QrelsBuilder("<queries>")
>>> builder.add("q1", "d1", 1, line=1)
>>> builder.add_unretrieved("q1", 2, grade=1, line=1)
>>> builder.add_placeholder("q2", line=2)
>>> qrels = builder.build(lambda ids: [False] * len(ids))
>>> rows = zip(qrels.qid_codes.tolist(), qrels.doc_codes.tolist(), qrels.grades.tolist())
>>> [(qrels.qid_vocab[q], qrels.doc_vocab[d], g) for q, d, g in rows]
[('q1', 'd1', 1), ('q1', '<unretrieved relevant 1>', 1), ('q1', '<unretrieved relevant 2>', 1), ('q2', '<no judgments>', -1)]
"""

from __future__ import annotations

import numpy as np

from evaltool.inputs import Qrels
from evaltool.io.common import Encoder

UNRETRIEVED = "<unretrieved relevant {}>"
PLACEHOLDER = "<no judgments>"


class QrelsBuilder:
    """Collects (query, document, grade, source line) rows; ``build`` makes the Qrels."""

    def __init__(self, path: str):
        self.path = path
        self.rows: list[tuple[str, str | int, int, int | None]] = []

    def add(self, qid: str, docid: str, grade: int, line: int | None) -> None:
        self.rows.append((qid, docid, grade, line))

    def add_unretrieved(self, qid: str, count: int, grade: int, line: int | None) -> None:
        """``count`` relevant items that were not retrieved (synthetic ids 1..count)."""
        self.rows.extend((qid, number, grade, line) for number in range(1, count + 1))

    def add_placeholder(self, qid: str, line: int | None) -> None:
        self.rows.append((qid, 0, -1, line))

    def _synthetic_ids(self, retrieved) -> tuple[str, str]:
        """Templates for unretrieved and placeholder ids that no run document has."""
        numbers = {d for _, d, _, _ in self.rows if isinstance(d, int)}
        pad = ""
        while True:
            unretrieved, placeholder = pad + UNRETRIEVED, pad + PLACEHOLDER
            names = [unretrieved.format(n) for n in sorted(numbers - {0})] + [placeholder] * (0 in numbers)
            if not any(retrieved(names)):
                return unretrieved, placeholder
            pad += "~"

    def build(self, retrieved) -> Qrels:
        """The Qrels; ``retrieved(ids)`` says for each id whether the run has it."""
        unretrieved, placeholder = self._synthetic_ids(retrieved)
        qids, docs = Encoder(), Encoder()
        qid_codes, doc_codes, grades, lines = [], [], [], []
        for qid, docid, grade, line in self.rows:
            if isinstance(docid, int):
                docid = unretrieved.format(docid) if docid else placeholder
            qid_codes.append(qids(qid))
            doc_codes.append(docs(docid))
            grades.append(grade)
            lines.append(-1 if line is None else line)
        return Qrels(
            qids.vocab,
            np.array(qid_codes, dtype=np.int64),
            docs.vocab,
            np.array(doc_codes, dtype=np.int64),
            np.array(grades, dtype=np.int64),
            np.array(lines, dtype=np.int64),
            path=self.path,
        )
