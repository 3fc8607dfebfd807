"""Metrics on plain Python lists, for people who hold rankings in memory rather than in files.

Two shapes, both scored by evaltool's core (the same :func:`evaltool.evaluate`, kernels
and measure names as the files; nothing is computed a second way here):

* relevance vectors (the textbook way to teach the measures): the grades of the
  retrieved documents in rank order, ``[0, 1, 0, 1]`` or graded ``[3, 0, 2]``; booleans
  (``[True, False]``) and whole floats (``[1.0, 0.0]``, as a NumPy mask or a model's
  labels come) are the grades 1 and 0. Each position becomes a document judged with that
  grade; a grade >= 1 is relevant.
* document ids, as a benchmark script holds them: ``MetricsCalculator.calculate_all(retrieved, expected)`` with
  the ranked ids and the ids that should have been found, into an :class:`IRMetrics`
  record; :class:`ReportAggregator` takes means, medians and per-category or
  per-difficulty groups of such records. One query's record costs microseconds: small
  lists take a plain-Python path (:func:`_small_record`) that the tests hold equal, value
  for value, to the core's.

An empty list is a query that retrieved nothing: every measure is 0.0 there, and an
:class:`~evaltool.errors.EvaltoolWarning` says which lists were empty.

>>> average_precision([0, 1, 0, 1, 1, 1, 1])
0.5961904761904762
>>> m = MetricsCalculator.calculate_all(["mod1", "mod2", "mod3", "mod4", "mod5"], ["mod1", "mod3", "mod6"])
>>> round(m.precision_at_3, 3), m.mrr, m.hits_in_top_3, m.first_relevant_position
(0.667, 1.0, 2, 1)
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import median

import numpy as np

from evaltool.aggregate import summarize
from evaltool.errors import EvaltoolWarning
from evaltool.inputs import Qrels, Run
from evaltool.evaluation import evaluate
from evaltool.measures.base import Agg

PLACEHOLDER = "-"  # a judged non-relevant document nobody retrieves: every query is then in the qrels


def _score(
    retrieved_grades: Sequence[Sequence[int]], missed_grades: Sequence[Sequence[int]], measures: list[str]
) -> list[dict]:
    """Per query (in the order given), the value of each measure.

    Query i retrieved documents whose grades are ``retrieved_grades[i]`` in rank order,
    and has further judged documents, never retrieved, of grades ``missed_grades[i]``.
    Every query is scored, one with nothing retrieved as trec_eval scores it with ``-c``.
    """
    n = len(retrieved_grades)
    depth = max((len(g) for g in retrieved_grades), default=0)
    extra = max((len(g) for g in missed_grades), default=0)
    positions = [str(j) for j in range(depth)]
    doc_vocab = positions + [f"x{j}" for j in range(extra)] + [PLACEHOLDER]
    qid_vocab = [str(i) for i in range(n)]
    lengths = np.array([len(g) for g in retrieved_grades], dtype=np.int64)
    run_q = np.repeat(np.arange(n), lengths)
    run_pos = np.arange(len(run_q)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    missed = np.array([len(g) for g in missed_grades], dtype=np.int64)
    missed_q = np.repeat(np.arange(n), missed)
    missed_pos = np.arange(len(missed_q)) - np.repeat(np.cumsum(missed) - missed, missed)
    qrels = Qrels(
        qid_vocab,
        np.concatenate((run_q, missed_q, np.arange(n))),
        doc_vocab,
        np.concatenate((run_pos, depth + missed_pos, np.full(n, depth + extra))),
        np.array([g for grades in (*retrieved_grades, *missed_grades) for g in grades] + [0] * n, dtype=np.int64),
        np.arange(1, len(run_q) + len(missed_q) + n + 1),
        path="<lists>",
    )
    run = Run(
        qid_vocab,
        run_q,
        positions,
        run_pos,
        (depth - run_pos).astype(np.float64),
        np.arange(1, len(run_q) + 1),
        runid="lists",
        path="<lists>",
    )
    warn_empty([len(g) for g in retrieved_grades])
    with warnings.catch_warnings():  # the core's warnings speak of files and -c; warn_empty speaks of lists
        warnings.simplefilter("ignore", EvaltoolWarning)
        table = evaluate(qrels, run, measures, per_query=True, complete=True).per_query
    return [table[qid] for qid in qid_vocab]


def warn_empty(lengths: Sequence[int]) -> None:
    """An :class:`~evaltool.errors.EvaltoolWarning` naming the empty lists (1-based), which score 0.0."""
    empty = [i + 1 for i, n in enumerate(lengths) if n == 0]
    if not empty:
        return
    if len(lengths) == 1:
        text = "the list is empty (nothing retrieved): every metric of it is 0.0"
    else:
        shown = ", ".join(map(str, empty[:10])) + (", ..." if len(empty) > 10 else "")
        text = (
            f"{len(empty)} of the {len(lengths)} lists {'is' if len(empty) == 1 else 'are'} empty (nothing "
            f"retrieved; list {shown}): every metric of {'it' if len(empty) == 1 else 'them'} is 0.0"
        )
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_code.co_filename == __file__:  # to the caller's line, outside this module
        frame, level = frame.f_back, level + 1
    warnings.warn(text, EvaltoolWarning, stacklevel=level)


def _grade(value) -> int:
    """One relevance grade: a non-negative whole number; True and False are 1 and 0."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(value) and value >= 0 and value == int(value):
        return int(value)
    raise ValueError(f"relevance grades must be non-negative whole numbers or booleans, not {value!r}")


def _grades(relevance) -> list[int]:
    return [_grade(value) for value in relevance]


def _cutoff(k) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k <= 0:
        raise ValueError(f"k should be an integer greater than 0, not {k!r}")
    return int(k)


def _one(relevance, measure: str, missed: Sequence[int] = ()) -> float:
    [values] = _score([_grades(relevance)], [list(missed)], [measure])
    return values[measure]


# ---------------------------------------------------------------- relevance vectors


def precision(relevance) -> float:
    """Share of the documents in the list that are relevant (grade >= 1); 0.0 for an empty list.

    ``P@n`` with n the length of the list.

    >>> precision([0, 0, 0, 1])
    0.25
    """
    return _one(relevance, f"P@{max(len(relevance), 1)}")


def precision_at_k(relevance, k: int) -> float:
    """Relevant documents among the first k / k (``P@k``).

    A list shorter than k counts as padded with non-relevant documents: the denominator is
    always k, as in trec_eval's P (some tutorials divide by the length of a shorter list
    instead, which rewards returning fewer documents). k must be at least 1.

    >>> precision_at_k([0, 0, 0, 1], 1), precision_at_k([1, 0, 1], 5)
    (0.0, 0.4)
    """
    return _one(relevance, f"P@{_cutoff(k)}")


def recall_at_k(relevance, number_relevant_documents: int, k: int) -> float:
    """Relevant documents among the first k / number_relevant_documents (``R@k``).

    ``number_relevant_documents`` counts the relevant documents of the whole collection,
    retrieved or not. When it is 0 or less there is nothing to recall: 0.0 (rather than a
    division by zero). Otherwise it cannot be fewer than the relevant documents in the
    list (a ValueError says so).

    >>> recall_at_k([0, 0, 0, 1], 4, 1), recall_at_k([1, 0, 1, 1], 6, 3), recall_at_k([1, 1], 0, 2)
    (0.0, 0.3333333333333333, 0.0)
    """
    grades = _grades(relevance)
    k = _cutoff(k)
    number = number_relevant_documents
    if isinstance(number, (bool, np.bool_)) or not isinstance(number, numbers.Real) or number != int(number):
        raise ValueError(f"number_relevant_documents must be a whole number, not {number!r}")
    if number <= 0:
        return 0.0
    found = sum(g >= 1 for g in grades)
    if number < found:
        raise ValueError(
            f"number_relevant_documents ({number!r}) must be at least the {found} relevant documents in the list"
        )
    return _one(grades, f"R@{k}", [1] * (int(number) - found))


def average_precision(relevance) -> float:
    """Average precision: sum of P@i at each relevant position i / relevant documents in the list (``AP``).

    The list is taken to hold every relevant document of the query (a grade vector knows
    no others); 0.0 when it holds none. For example [0, 1, 0, 1, 1, 1, 1] gives
    (1/2 + 2/4 + 3/5 + 4/6 + 5/7) / 5 = 0.5961904761904762.

    >>> average_precision([0, 1, 0, 1, 1, 1, 1])
    0.5961904761904762
    """
    return _one(relevance, "AP")


def mean_average_precision(queries_relevances) -> float:
    """Mean of :func:`average_precision` over the lists, one list per query; 0.0 for no lists.

    >>> mean_average_precision([[1, 0], [0, 1]])
    0.75
    """
    return _mean_over_lists(queries_relevances, "AP")


def _mean_over_lists(queries_relevances, measure: str) -> float:
    """The summary mean of ``measure`` over relevance vectors, one per query; 0.0 for none."""
    lists = [_grades(r) for r in queries_relevances]
    if not lists:
        return 0.0
    values = [v[measure] for v in _score(lists, [[]] * len(lists), [measure])]
    return summarize(Agg.MEAN, np.array(values), len(values))


def reciprocal_rank(relevance) -> float:
    """1 / position of the first relevant document (grade >= 1), 0.0 if the list has none (``RR``).

    >>> reciprocal_rank([0, 0, 1, 1]), reciprocal_rank([False, True]), reciprocal_rank([0, 0])
    (0.3333333333333333, 0.5, 0.0)
    """
    return _one(relevance, "RR")


def mean_reciprocal_rank(queries_relevances) -> float:
    """Mean of :func:`reciprocal_rank` over the lists, one list per query (MRR); 0.0 for no lists.

    >>> mean_reciprocal_rank([[1, 0], [0, 1], [0, 0]])
    0.5
    """
    return _mean_over_lists(queries_relevances, "RR")


def dcg_at_k(relevance, k: int, discount: str = "jarvelin") -> float:
    """DCG of the first k: sum of grade_i / log2(max(i, 2)) (``DCG(discount='jarvelin')@k``).

    The discount of Järvelin & Kekäläinen's original DCG (ACM TOIS 2002): ranks 1 and 2
    undiscounted; ``discount='log2'`` divides by log2(i + 1) as trec_eval. For example
    [4, 4, 3, 0, 0, 1, 3, 3, 3, 0] at k = 6 gives 10.279642067948915.

    >>> dcg_at_k([4, 4, 3, 0, 0, 1, 3, 3, 3, 0], 6)
    10.279642067948915
    """
    return _one(relevance, f"DCG(discount={discount!r})@{_cutoff(k)}")


def ndcg_at_k(relevance, k: int, discount: str = "jarvelin") -> float:
    """DCG@k / DCG@k of the same grades sorted best first (``nDCG(discount='jarvelin',ideal='ranking')@k``).

    The ideal ranking is the list's own grades sorted (as scikit-learn's ``ndcg_score``:
    a grade vector knows no other relevant documents); 0.0 when it has no positive grade.
    For example
    [4, 4, 3, 0, 0, 1, 3, 3, 3, 0] at k = 6 gives 0.7424602308163405.

    >>> ndcg_at_k([4, 4, 3, 0, 0, 1, 3, 3, 3, 0], 6)
    0.7424602308163405
    """
    return _one(relevance, f"nDCG(discount={discount!r},ideal='ranking')@{_cutoff(k)}")


# ---------------------------------------------------------------- document ids


@dataclass
class IRMetrics:
    """The metrics of one query, as a benchmark report keeps them."""

    precision_at_3: float
    precision_at_5: float
    recall_at_10: float
    mrr: float
    ndcg_at_10: float | None = None
    hits_in_top_3: int = 0
    hits_in_top_5: int = 0
    first_relevant_position: int | None = None

    def as_dict(self) -> dict:
        """The keys of ``evaltool bench``'s reports: ``precision@3``, ..., ``first_relevant_position``."""
        return {
            "precision@3": self.precision_at_3,
            "precision@5": self.precision_at_5,
            "recall@10": self.recall_at_10,
            "mrr": self.mrr,
            "ndcg@10": self.ndcg_at_10,
            "hits_in_top_3": self.hits_in_top_3,
            "hits_in_top_5": self.hits_in_top_5,
            "first_relevant_position": self.first_relevant_position,
        }


# how calculate_all names its measures; see MetricsCalculator for the grades 1 and 2
_FIELDS = {
    "precision_at_3": "P@3",
    "precision_at_5": "P@5",
    "recall_at_10": "R(rel=2)@10",
    "mrr": "RR",
    "ndcg_at_10": "nDCG(gains={1:0,2:1})@10",
    "hits_in_top_3": "hits@3",
    "hits_in_top_5": "hits@5",
    "first_relevant_position": "first_relevant_position",
}


SMALL_LISTS = 2000  # retrieved ids per call up to which calculate_all / calculate_many take the plain-Python path
_DISCOUNTS = [math.log2(rank + 2) for rank in range(10)]  # the core's log2 (base.log2_int: math.log2 too)


def _small_record(grades: list[int], missed: list[int]) -> IRMetrics:
    """:meth:`MetricsCalculator.calculate_all` of one query in plain Python, from its judged grades
    (:meth:`MetricsCalculator._judge`), for lists too small for the core's set-up to pay.

    Each value is the core's measure of :data:`_FIELDS` computed the way its kernel adds it
    up (the same divisions, the same left-to-right sums, the same log2), so the two paths
    agree exactly; tests/test_lists.py holds them equal on random lists with repeats and
    empty ones.
    """
    first, hits_3, hits_5, found, expected, dcg = None, 0, 0, 0, len(missed), 0.0
    for rank, g in enumerate(grades):  # one pass, ranks ascending: the kernels' order of addition
        if g:  # P, hits, RR, first position: grade >= 1
            if first is None:
                first = rank
            if rank < 5:
                hits_5 += 1
                hits_3 += rank < 3
        if g == 2:  # R(rel=2) and nDCG's gain {1: 0, 2: 1}: grade 2 only
            expected += 1
            if rank < 10:
                found += 1
                dcg += 1.0 / _DISCOUNTS[rank]
    ideal = 0.0
    for rank in range(min(expected, 10)):
        ideal += 1.0 / _DISCOUNTS[rank]
    return IRMetrics(
        precision_at_3=hits_3 / 3,
        precision_at_5=hits_5 / 5,
        recall_at_10=found / expected if expected else 0.0,
        mrr=1.0 / (first + 1) if first is not None else 0.0,
        ndcg_at_10=dcg / ideal if ideal else 0.0,
        hits_in_top_3=hits_3,
        hits_in_top_5=hits_5,
        first_relevant_position=None if first is None else first + 1,
    )


class MetricsCalculator:
    """Metrics of ranked document ids against the ids expected, one query at a time.

    Ids compare exactly (case-sensitive). Duplicates in ``expected`` count once: it is a
    set. Each occurrence of an id in ``retrieved`` is its own hit for precision and
    hits: every occurrence of an expected id counts
    (["A", "A", "B"] against ["A"] has P@3 = 2/3); for recall and nDCG an id is found once,
    at its first position, and a repeat gains nothing (so neither exceeds 1); reciprocal
    rank and first position take the first occurrence. In the core this is one judgment
    per position: grade 2 for the first occurrence of an expected id, 1 for a repeat, 0
    otherwise, and grade 2 for each expected id never retrieved; precision and hits count
    grade >= 1, recall counts grade >= 2 (``R(rel=2)@10``), nDCG gains 1 for grade 2 only.
    """

    @staticmethod
    def _judge(retrieved: Sequence[Hashable], expected: Sequence[Hashable]) -> tuple[list[int], list[int]]:
        wanted = dict.fromkeys(expected)
        seen: set = set()
        grades = []
        for doc in retrieved:
            grades.append(0 if doc not in wanted else 1 if doc in seen else 2)
            seen.add(doc)
        return grades, [2] * sum(doc not in seen for doc in wanted)

    @staticmethod
    def _values(pairs, measures: list[str]) -> list[dict]:
        judged = [MetricsCalculator._judge(retrieved, expected) for retrieved, expected in pairs]
        return _score([g for g, _ in judged], [m for _, m in judged], measures)

    @staticmethod
    def _value(retrieved, expected, measure: str) -> float:
        return MetricsCalculator._values([(retrieved, expected)], [measure])[0][measure]

    @staticmethod
    def calculate_many(pairs: Sequence[tuple[Sequence, Sequence]]) -> list[IRMetrics]:
        """:meth:`calculate_all` for many (retrieved, expected) pairs at once: up to
        :data:`SMALL_LISTS` retrieved ids in all, each pair by :func:`_small_record` (microseconds);
        beyond, in one call of the core."""
        pairs = list(pairs)
        if sum(len(retrieved) for retrieved, _ in pairs) <= SMALL_LISTS:
            warn_empty([len(retrieved) for retrieved, _ in pairs])
            return [_small_record(*MetricsCalculator._judge(retrieved, expected)) for retrieved, expected in pairs]
        out = []
        for values in MetricsCalculator._values(pairs, list(_FIELDS.values())):
            record = {field: values[name] for field, name in _FIELDS.items()}
            for field in ("hits_in_top_3", "hits_in_top_5"):
                record[field] = int(record[field])
            position = record["first_relevant_position"]
            record["first_relevant_position"] = None if math.isnan(position) else int(position)
            out.append(IRMetrics(**record))
        return out

    @staticmethod
    def calculate_all(retrieved: Sequence, expected: Sequence) -> IRMetrics:
        """Every metric of one query, as an :class:`IRMetrics` record.

        >>> metrics = MetricsCalculator.calculate_all(["mod1", "mod2", "mod3", "mod4", "mod5"], ["mod1", "mod3", "mod6"])
        >>> round(metrics.precision_at_3, 3), metrics.mrr
        (0.667, 1.0)
        """
        return MetricsCalculator.calculate_many([(retrieved, expected)])[0]

    @staticmethod
    def precision_at_k(retrieved: Sequence, expected: Sequence, k: int) -> float:
        """Occurrences of expected ids among the first k / k (``P@k``); 0.0 for an empty list.

        >>> MetricsCalculator.precision_at_k(["A", "B"], ["A"], k=5)
        0.2
        """
        return MetricsCalculator._value(retrieved, expected, f"P@{_cutoff(k)}")

    @staticmethod
    def recall_at_k(retrieved: Sequence, expected: Sequence, k: int) -> float:
        """Distinct expected ids among the first k / distinct expected ids; 0.0 when none is expected.

        >>> MetricsCalculator.recall_at_k(["A", "B", "C"], ["A", "C", "D", "E"], k=3)
        0.5
        """
        return MetricsCalculator._value(retrieved, expected, f"R(rel=2)@{_cutoff(k)}")

    @staticmethod
    def mrr(retrieved: Sequence, expected: Sequence, k: int | None = None, beyond: str = "zero") -> float:
        """1 / position of the first expected id (``RR``); 0.0 if none is retrieved.

        With ``k`` the search stops at position k (``RR@k``); ``beyond='k+1'`` scores a first
        expected id past k as if it were at k + 1, 1 / (k + 1) instead of 0 (``RR(beyond='k+1')@k``).

        >>> MetricsCalculator.mrr(["A", "B", "C"], ["C"]), MetricsCalculator.mrr(list("ABCDEFG"), ["G"], k=5, beyond="k+1")
        (0.3333333333333333, 0.16666666666666666)
        """
        if k is None:
            return MetricsCalculator._value(retrieved, expected, "RR")
        return MetricsCalculator._value(retrieved, expected, f"RR(beyond={beyond!r})@{_cutoff(k)}")

    @staticmethod
    def ndcg_at_k(retrieved: Sequence, expected: Sequence, k: int) -> float:
        """Binary nDCG@k: gain 1 at each expected id, discount log2(i + 1), ideal from all expected ids.

        >>> round(MetricsCalculator.ndcg_at_k(["A", "B"], ["B"], 10), 4)
        0.6309
        """
        return MetricsCalculator._value(retrieved, expected, f"nDCG(gains={{1:0,2:1}})@{_cutoff(k)}")

    @staticmethod
    def count_hits(retrieved: Sequence, expected: Sequence) -> int:
        """Occurrences of expected ids in ``retrieved`` (``Hits``); pass ``retrieved[:3]`` for the top 3.

        >>> MetricsCalculator.count_hits(["A", "B", "A"], ["A"])
        2
        """
        return int(MetricsCalculator._value(retrieved, expected, "Hits"))

    @staticmethod
    def first_relevant_position(retrieved: Sequence, expected: Sequence) -> int | None:
        """1-based position of the first expected id, None if none is retrieved (``first_relevant_position``).

        >>> MetricsCalculator.first_relevant_position(["A", "B", "C"], ["C"]), MetricsCalculator.first_relevant_position(["A"], ["B"])
        (3, None)
        """
        position = MetricsCalculator._value(retrieved, expected, "first_relevant_position")
        return None if math.isnan(position) else int(position)


def _metrics(entry) -> dict:
    metrics = entry["metrics"] if isinstance(entry, dict) else entry
    return metrics.as_dict() if isinstance(metrics, IRMetrics) else metrics


def _mean(values) -> float:
    """The mean as evaltool's summaries take it (left-to-right sum / n)."""
    values = np.asarray(list(values), dtype=np.float64)
    if len(values) == 0:
        raise ValueError("no results to aggregate")
    return summarize(Agg.MEAN, values, len(values))


class ReportAggregator:
    """Means, medians and groups (by category, by difficulty) of per-query metrics.

    The mean is evaltool's summary mean: ``aggregate_metrics`` of the records of
    :meth:`MetricsCalculator.calculate_many` equals ``evaluate(...).summary`` of the same
    queries. Detailed results are dicts with ``metrics`` (a dict with :meth:`IRMetrics.as_dict`'s keys, or
    an :class:`IRMetrics`) and ``category`` / ``difficulty``.
    """

    @staticmethod
    def aggregate_metrics(results: Sequence[IRMetrics]) -> dict:
        """Means of precision@3, precision@5, recall@10, mrr and ndcg@10; medians of precision@3 and mrr.

        >>> ReportAggregator.aggregate_metrics([IRMetrics(1.0, 0.6, 1.0, 1.0), IRMetrics(0.0, 0.2, 0.5, 0.5)])["mrr"]
        0.75
        """
        rows = [_metrics(r) for r in results]
        out = {key: _mean(row[key] for row in rows) for key in ("precision@3", "precision@5", "recall@10", "mrr")}
        ndcg = [row["ndcg@10"] for row in rows if row.get("ndcg@10") is not None]
        if ndcg:
            out["ndcg@10"] = _mean(ndcg)
        out["median_precision@3"] = median(row["precision@3"] for row in rows)
        out["median_mrr"] = median(row["mrr"] for row in rows)
        return out

    @staticmethod
    def _groups(detailed_results: Sequence[dict], field: str, keys: Sequence[str]) -> dict:
        """Each group's count and the means of ``keys`` (evaltool's one grouping, :mod:`evaltool.evaluation.groups`)."""
        from evaltool.evaluation.groups import Series, group_queries, group_summaries

        rows = [_metrics(entry) for entry in detailed_results]
        positions = [str(i) for i in range(len(rows))]
        groups = group_queries(positions, {str(i): entry[field] for i, entry in enumerate(detailed_results)})
        series = [Series(key, np.array([row[key] for row in rows], dtype=np.float64)) for key in keys]
        return group_summaries(series, groups)

    @staticmethod
    def group_by_category(detailed_results: Sequence[dict], metric_field: str) -> dict:
        """{category: mean of ``metric_field``}, categories in order of first appearance.

        >>> ReportAggregator.group_by_category([{"category": "a", "metrics": {"mrr": 1.0}},
        ...                                     {"category": "a", "metrics": {"mrr": 0.5}}], "mrr")
        {'a': 0.75}
        """
        groups = ReportAggregator._groups(detailed_results, "category", [metric_field])
        return {category: entry[metric_field] for category, entry in groups.items()}

    @staticmethod
    def group_by_difficulty(detailed_results: Sequence[dict]) -> dict:
        """{difficulty: {count, precision@3, precision@5, mrr}} with means, in order of first appearance."""
        return ReportAggregator._groups(detailed_results, "difficulty", ("precision@3", "precision@5", "mrr"))
