"""Columnar containers for judgments and runs.

Both files become the same shape: query ids and document ids dictionary-encoded once
(``*_vocab`` lists, ``*_codes`` int arrays), one value column (grade or score), and the
source line of every row so that later checks can still name the line they object to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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

    def __len__(self) -> int:
        return len(self.grades)


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
    lines: np.ndarray
    runid: str = ""
    path: str = "<run>"
    duplicates_resolved: int = 0
    extra: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.scores)
