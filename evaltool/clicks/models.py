"""Click models: clicks become graded judgments (TREC qrels) that every evaltool measure reads.

For each (query, document) the log showed, a model gives a score; thresholds turn the
score into a grade: the grade is the number of thresholds the score reaches
(``grades=(0.1, 0.3, 0.5)``: below 0.1 → 0, [0.1, 0.3) → 1, [0.3, 0.5) → 2, ≥ 0.5 → 3).
Counts are taken per impression, each document once (its top-most position), and a
(query, document) pair with less evidence than ``min_impressions`` is left unjudged.

``ctr``
    clicks(q, d) / impressions(q, d). Blind to position: results shown high collect
    clicks because they are high (Joachims et al., SIGIR 2005).
``coec`` — clicks over expected clicks (Zhang & Jones, 2007; Chapelle & Zhang, WWW 2009)
    A position prior is estimated from the whole log: ctr(p) = clicks at position p /
    results shown at position p, over all queries. Then
    COEC(q, d) = clicks(q, d) / Σ ctr(p_i) over the impressions i that showed d for q at
    position p_i. 1 means "clicked as often as an average result at those positions";
    a pair whose positions were never clicked by anyone (expected 0) has no clicks
    either and scores 0. Default thresholds (0.5, 1, 2).
``sdbn`` — the simplified dynamic Bayesian network (Chuklin, Markov & de Rijke,
    *Click Models for Web Search*, 2015, §3.8 and §4.2)
    The user examines results from the top down to the last clicked one (the lowest-ranked
    click) and stops there, satisfied. Over the impressions with a click:
    attractiveness α(q, d) = clicks / times examined (shown at or above the last click),
    satisfaction σ(q, d) = times d was the last click / clicks (0 without clicks),
    score = α · σ, the probability that examining d satisfies the user. Impressions
    without a click say nothing about where examination stopped and are left out; a
    pair never examined is unjudged. Default thresholds (0.1, 0.3, 0.5).

The ``ctr`` model's default thresholds are (0.1, 0.3, 0.5).

>>> from evaltool.io.clicks import read_click_log
>>> log = read_click_log([{"query": "q", "results": ["a", "b"], "clicks": ["b"]},
...                       {"query": "q", "results": ["b", "a"], "clicks": ["b"]}])
>>> table = click_judgments(log, "coec")
>>> [(j.doc_id, round(j.score, 4), j.grade) for j in table.rows]
[('a', 0.0, 0), ('b', 2.0, 3)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from evaltool.errors import EvaltoolError, InputError

MODELS = ("ctr", "coec", "sdbn")
DEFAULT_GRADES = {"ctr": (0.1, 0.3, 0.5), "coec": (0.5, 1.0, 2.0), "sdbn": (0.1, 0.3, 0.5)}
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Judgment:
    query_id: str
    doc_id: str
    score: float
    grade: int
    impressions: int  # sdbn: times examined
    clicks: int


@dataclass
class ClickJudgments:
    """Scores and grades per (query, document), with the model and thresholds that made them."""

    model: str
    grades: tuple[float, ...]
    rows: list[Judgment]
    prior: dict[int, float] | None = None  # coec: click-through rate per position

    def to_qrels_dict(self) -> dict[str, dict[str, int]]:
        """``{query_id: {doc_id: grade}}``, which :func:`evaltool.evaluate` takes as qrels."""
        out: dict[str, dict[str, int]] = {}
        for row in self.rows:
            out.setdefault(qrels_id(row.query_id), {})[row.doc_id] = row.grade
        return out

    def to_trec(self) -> str:
        """TREC qrels lines ``query_id 0 doc_id grade`` (query ids with whitespace get ``_``)."""
        lines, owners = [], {}
        for row in self.rows:
            qid = qrels_id(row.query_id)
            if owners.setdefault(qid, row.query_id) != row.query_id:
                raise InputError(
                    f"queries {owners[qid]!r} and {row.query_id!r} both become the qrels id {qid!r}; "
                    "give the log query_id values"
                )
            if _WHITESPACE.search(row.doc_id):
                raise InputError(f"document id {row.doc_id!r} has whitespace, which TREC qrels cannot hold")
            lines.append(f"{qid} 0 {row.doc_id} {row.grade}\n")
        return "".join(lines)


def qrels_id(query_id: str) -> str:
    """A query id as a TREC qrels field: runs of whitespace become ``_`` (``envíos a Quito`` → ``envíos_a_Quito``)."""
    return _WHITESPACE.sub("_", query_id.strip())


def parse_grades(text: str | None, model: str) -> tuple[float, ...]:
    """``"0.1,0.3,0.5"`` → thresholds, ascending and finite; None gives the model's defaults.

    >>> parse_grades("0.2, 0.6", "ctr"), parse_grades(None, "coec")
    ((0.2, 0.6), (0.5, 1.0, 2.0))
    """
    from evaltool.names import finite_float

    if text is None:
        return DEFAULT_GRADES[model]
    values = [finite_float(part) for part in text.split(",")]
    if not values or any(v is None for v in values) or any(b <= a for a, b in pairwise(values)):
        raise EvaltoolError(
            f"grades {text!r}: expected increasing numbers separated by commas, such as 0.1,0.3,0.5 "
            "(the score a document needs for grade 1, 2, 3...)"
        )
    return tuple(values)


def _rows(log):
    """Shown rows, each (impression, document) once at its top-most position, and whether it was clicked."""
    imp = np.repeat(np.arange(log.n_impressions), log.n_shown)
    doc, pos = log.shown_doc, log.shown_pos
    n_docs = max(len(log.doc_ids), 1)
    pair = imp.astype(np.int64) * n_docs + doc
    _, first = np.unique(pair, return_index=True)  # rows are in position order within an impression
    keep = np.sort(first)
    imp, doc, pos, pair = imp[keep], doc[keep], pos[keep], pair[keep]
    click_imp = np.repeat(np.arange(log.n_impressions), log.n_clicks)
    clicked = np.isin(pair, click_imp.astype(np.int64) * n_docs + log.click_doc)
    return imp, doc, pos, clicked


def _grade(scores: np.ndarray, grades: tuple[float, ...]) -> np.ndarray:
    return np.searchsorted(np.asarray(grades), scores, side="right")


def click_judgments(
    log, model: str = "coec", grades: tuple[float, ...] | None = None, min_impressions: int = 1
) -> ClickJudgments:
    """Score and grade every (query, document) of ``log`` with ``model`` (see the module docstring)."""
    if model not in MODELS:
        raise EvaltoolError(f"click model {model!r}: expected one of {', '.join(MODELS)}")
    grades = DEFAULT_GRADES[model] if grades is None else tuple(grades)
    if min_impressions < 1:
        raise EvaltoolError(f"min_impressions {min_impressions}: expected 1 or more")
    imp, doc, pos, clicked = _rows(log)
    query = log.imp_query[imp].astype(np.int64)
    prior = None
    if model == "sdbn":
        last = np.zeros(log.n_impressions, np.int64)
        np.maximum.at(last, imp[clicked], pos[clicked])
        examined = pos <= last[imp]  # impressions without a click: last 0, nothing examined
        evidence_rows = examined
        satisfied = clicked & (pos == last[imp])
    else:
        evidence_rows = np.ones(len(imp), bool)
    n_docs = max(len(log.doc_ids), 1)
    pair = query * n_docs + doc
    keys, inverse = np.unique(pair[evidence_rows], return_inverse=True)
    evidence = np.bincount(inverse, minlength=len(keys))
    clicks = np.bincount(inverse, weights=clicked[evidence_rows], minlength=len(keys))
    if model == "ctr":
        scores = clicks / evidence
    elif model == "coec":
        width = int(pos.max(initial=0)) + 1
        shown_at = np.bincount(pos, minlength=width)
        clicked_at = np.bincount(pos[clicked], minlength=width)
        position_ctr = np.divide(clicked_at, shown_at, out=np.zeros(width), where=shown_at > 0)
        expected = np.bincount(inverse, weights=position_ctr[pos], minlength=len(keys))
        scores = np.divide(clicks, expected, out=np.zeros(len(keys)), where=expected > 0)
        prior = {int(p): float(position_ctr[p]) for p in np.flatnonzero(shown_at)}
    else:
        last_clicks = np.bincount(inverse, weights=satisfied[evidence_rows], minlength=len(keys))
        attractiveness = clicks / evidence
        satisfaction = np.divide(last_clicks, clicks, out=np.zeros(len(keys)), where=clicks > 0)
        scores = attractiveness * satisfaction
    enough = evidence >= min_impressions
    keys, scores, evidence, clicks = keys[enough], scores[enough], evidence[enough], clicks[enough]
    grade = _grade(scores, grades)
    q_codes, d_codes = keys // n_docs, keys % n_docs
    doc_ids = log.doc_ids.take(d_codes).to_pylist()
    rows = [
        Judgment(log.query_ids[q], d, float(s), int(g), int(e), int(c))
        for q, d, s, g, e, c in zip(
            q_codes.tolist(), doc_ids, scores.tolist(), grade.tolist(), evidence.tolist(), clicks.tolist()
        )
    ]
    rows.sort(
        key=lambda r: (
            qrels_id(r.query_id).encode("utf-8", "surrogateescape"),
            r.doc_id.encode("utf-8", "surrogateescape"),
        )
    )
    return ClickJudgments(model, grades, rows, prior)
