"""Every worked example of the specification documents (../shared/seeds), as a test.

The expected numbers are the documents' own (their printed outputs and their test
suites), or a hand calculation where a document's arithmetic is wrong (a comment says
why). Each example is computed through evaltool's core: the list API
(:mod:`evaltool.lists`), which builds a batch and calls ``evaluate``, or ``evaluate`` on
dicts with the measure names of the issue.
"""

from __future__ import annotations

import math

import pytest

from evaltool import evaluate
from evaltool.lists import (
    IRMetrics, MetricsCalculator, ReportAggregator, average_precision, dcg_at_k, mean_average_precision, ndcg_at_k,
    precision, precision_at_k, recall_at_k,
)

calc = MetricsCalculator


def ranking(docs):
    """A run dict that ranks ``docs`` in the order given."""
    return {doc: float(len(docs) - i) for i, doc in enumerate(docs)}


# ---------------------------------------------------------------- seed 001: the relevance-vector notebook


def test_seed001_notebook_outputs():
    assert precision([0, 0, 0, 1]) == 0.25
    assert precision_at_k([0, 0, 0, 1], 1) == 0.0
    assert recall_at_k([0, 0, 0, 1], 4, 1) == 0.0
    assert average_precision([0, 1, 0, 1, 1, 1, 1]) == 0.5961904761904762
    assert dcg_at_k([4, 4, 3, 0, 0, 1, 3, 3, 3, 0], 6) == 10.279642067948915
    assert ndcg_at_k([4, 4, 3, 0, 0, 1, 3, 3, 3, 0], 6) == 0.7424602308163405


def test_seed001_through_measure_names():
    grades = [4, 4, 3, 0, 0, 1, 3, 3, 3, 0]
    qrels = {"q": {f"d{i}": g for i, g in enumerate(grades)}}
    run = {"q": ranking([f"d{i}" for i in range(len(grades))])}
    summary = evaluate(qrels, run, ["DCG(discount='jarvelin')@6", "nDCG(discount='jarvelin',ideal='ranking')@6"]).summary
    assert summary == {"DCG(discount='jarvelin')@6": 10.279642067948915,
                       "nDCG(discount='jarvelin',ideal='ranking')@6": 0.7424602308163405}
    ap = evaluate({"q": {f"d{i}": g for i, g in enumerate([0, 1, 0, 1, 1, 1, 1])}},
                  {"q": ranking([f"d{i}" for i in range(7)])}, ["AP"]).summary["AP"]
    assert ap == 0.5961904761904762


def test_seed001_rules():
    """The notebook's edge rules: k must be positive; an empty list scores 0.0; MAP of no queries is 0.0."""
    for function, args in [(precision_at_k, ([1], 0)), (recall_at_k, ([1], 1, 0)), (dcg_at_k, ([1], 0)),
                           (ndcg_at_k, ([1], -1))]:
        with pytest.raises(ValueError, match="k should be"):
            function(*args)
    assert precision([]) == precision_at_k([], 3) == average_precision([]) == dcg_at_k([], 3) == ndcg_at_k([], 3) == 0.0
    assert recall_at_k([0, 0], 0, 2) == 0.0
    assert mean_average_precision([]) == 0.0
    # MAP: the mean of (1/2 + 2/4 + 3/5 + 4/6 + 5/7) / 5 and 1/1 (hand calculation)
    assert mean_average_precision([[0, 1, 0, 1, 1, 1, 1], [1]]) == pytest.approx((0.5961904761904762 + 1) / 2, abs=1e-15)


# ---------------------------------------------------------------- seed 000: SPEC-003 and its test suite


def test_seed000_docstring_example():
    metrics = calc.calculate_all(retrieved=["mod1", "mod2", "mod3", "mod4", "mod5"], expected=["mod1", "mod3", "mod6"])
    assert round(metrics.precision_at_3, 3) == 0.667   # the document prints 0.667 for 2/3
    assert metrics.precision_at_3 == 2 / 3
    assert metrics.mrr == 1.0


def test_seed000_formula_examples():
    assert calc.precision_at_k(["A", "B", "C", "D", "E"], ["A", "C", "F"], 3) == 2 / 3
    assert calc.precision_at_k(["A", "B", "C", "D", "E"], ["A", "C", "F"], 5) == 0.40
    assert calc.recall_at_k(["A", "B", "C", "D", "E"], ["A", "C", "F"], 5) == 2 / 3
    assert calc.mrr(["A", "B", "C"], ["A"]) == 1.0
    assert calc.mrr(["A", "B", "C", "D"], ["C"]) == 1 / 3
    assert calc.mrr(["A", "B", "C"], ["D"]) == 0.0


class TestSeed000PrecisionAtK:
    def test_perfect_precision(self):
        assert calc.precision_at_k(["A", "B", "C"], ["A", "B", "C", "D"], k=3) == 1.0

    def test_zero_precision(self):
        assert calc.precision_at_k(["A", "B", "C"], ["D", "E", "F"], k=3) == 0.0

    def test_partial_precision(self):
        assert calc.precision_at_k(["A", "B", "C", "D", "E"], ["A", "C", "F"], k=3) == 2 / 3
        assert calc.precision_at_k(["A", "B", "C", "D", "E"], ["A", "C", "F"], k=5) == 2 / 5

    def test_empty_retrieved(self):
        assert calc.precision_at_k([], ["A"], k=3) == 0.0

    def test_empty_expected(self):
        assert calc.precision_at_k(["A"], [], k=3) == 0.0

    def test_k_larger_than_retrieved(self):
        assert calc.precision_at_k(["A", "B"], ["A"], k=5) == 1 / 5


class TestSeed000RecallAtK:
    def test_perfect_recall(self):
        assert calc.recall_at_k(["A", "B", "C", "D"], ["A", "B"], k=4) == 1.0

    def test_zero_recall(self):
        assert calc.recall_at_k(["A", "B", "C"], ["D", "E"], k=3) == 0.0

    def test_partial_recall(self):
        assert calc.recall_at_k(["A", "B", "C"], ["A", "C", "D", "E"], k=3) == 2 / 4

    def test_empty_expected(self):
        assert calc.recall_at_k(["A"], [], k=3) == 0.0


class TestSeed000MRR:
    def test_first_result_relevant(self):
        assert calc.mrr(["A", "B"], ["A"]) == 1.0

    def test_second_result_relevant(self):
        assert calc.mrr(["A", "B"], ["B"]) == 1 / 2

    def test_third_result_relevant(self):
        assert calc.mrr(["A", "B", "C"], ["C"]) == 1 / 3

    def test_no_relevant(self):
        assert calc.mrr(["A", "B"], ["C"]) == 0.0

    def test_multiple_relevant(self):
        assert calc.mrr(["A", "B", "C", "D"], ["B", "D"]) == 1 / 2

    def test_empty_retrieved(self):
        assert calc.mrr([], ["A"]) == 0.0


class TestSeed000CalculateAll:
    def test_calculate_all_comprehensive(self):
        metrics = calc.calculate_all(["A", "B", "C", "D", "E", "F", "G", "H", "I", "J"], ["A", "C", "F", "K"])
        assert metrics.precision_at_3 == 2 / 3
        assert metrics.precision_at_5 == 2 / 5
        assert metrics.recall_at_10 == 3 / 4
        assert metrics.mrr == 1.0
        assert metrics.hits_in_top_3 == 2
        assert metrics.hits_in_top_5 == 2
        assert metrics.first_relevant_position == 1
        # binary nDCG@10 (log2(i + 1) discount): gains at ranks 1, 3, 6; ideal: 4 relevant (hand calculation)
        dcg = 1 + 1 / math.log2(4) + 1 / math.log2(7)
        ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5)
        assert metrics.ndcg_at_10 == pytest.approx(dcg / ideal, abs=1e-15)

    def test_calculate_all_no_results(self):
        metrics = calc.calculate_all(retrieved=["A", "B", "C"], expected=["D", "E"])
        assert metrics.precision_at_3 == 0.0
        assert metrics.precision_at_5 == 0.0
        assert metrics.recall_at_10 == 0.0
        assert metrics.mrr == 0.0
        assert metrics.hits_in_top_3 == 0
        assert metrics.first_relevant_position is None


class TestSeed000EdgeCases:
    def test_case_sensitivity(self):
        assert calc.precision_at_k(["module_A", "module_b"], ["module_a", "module_B"], k=2) == 0.0

    def test_duplicates_in_retrieved(self):
        # "Cada A cuenta como hit individual": both A's are hits
        assert calc.precision_at_k(["A", "A", "B"], ["A"], k=3) == 2 / 3
        metrics = calc.calculate_all(["A", "A", "B"], ["A"])
        assert (metrics.hits_in_top_3, metrics.mrr, metrics.first_relevant_position) == (2, 1.0, 1)
        # ... but A is found once: recall and nDCG stay within [0, 1]
        assert (metrics.recall_at_10, metrics.ndcg_at_10) == (1.0, 1.0)

    def test_duplicates_in_expected(self):
        # "expected es un set conceptualmente": A counts once
        metrics = calc.calculate_all(["A", "B"], ["A", "A"])
        assert (metrics.precision_at_3, metrics.recall_at_10, metrics.hits_in_top_3) == (1 / 3, 1.0, 1)
        assert calc.recall_at_k(["B", "A"], ["A", "A", "C"], k=1) == 0.0
        assert calc.recall_at_k(["B", "A"], ["A", "A", "C"], k=2) == 1 / 2


def test_seed000_report_aggregator():
    results = [calc.calculate_all(["A", "B", "C"], ["A"]),          # P@3 1/3, mrr 1
               calc.calculate_all(["A", "B", "C"], ["B", "C"]),     # P@3 2/3, mrr 1/2
               calc.calculate_all(["A", "B", "C"], ["Z"])]          # P@3 0, mrr 0
    summary = ReportAggregator.aggregate_metrics(results)
    assert summary["precision@3"] == pytest.approx(1 / 3, abs=1e-15)
    assert summary["mrr"] == pytest.approx(1 / 2, abs=1e-15)
    assert summary["median_precision@3"] == 1 / 3
    assert summary["median_mrr"] == 1 / 2
    assert set(summary) == {"precision@3", "precision@5", "recall@10", "mrr", "ndcg@10", "median_precision@3",
                            "median_mrr"}
    detailed = [{"category": c, "difficulty": d, "metrics": m.as_dict()}
                for c, d, m in zip(["sales", "accounting", "sales"], ["easy", "hard", "easy"], results)]
    assert ReportAggregator.group_by_category(detailed, "precision@3") == {
        "sales": pytest.approx(1 / 6, abs=1e-15), "accounting": pytest.approx(2 / 3, abs=1e-15)}
    by_difficulty = ReportAggregator.group_by_difficulty(detailed)
    assert list(by_difficulty) == ["easy", "hard"]
    assert by_difficulty["easy"]["count"] == 2
    assert by_difficulty["easy"]["mrr"] == 0.5
    assert by_difficulty["hard"] == {"count": 1, "precision@3": 2 / 3, "precision@5": 2 / 5, "mrr": 0.5}
    with pytest.raises(ValueError, match="no results"):
        ReportAggregator.aggregate_metrics([])


# ---------------------------------------------------------------- seed 003: SPEC-002, the benchmark script


def test_seed003_metric_examples():
    assert calc.precision_at_k(["mod1", "mod2", "mod3", "mod4"], ["mod1", "mod3"], k=3) == 2 / 3   # printed 0.667
    assert calc.precision_at_k(["mod1", "mod2", "mod3", "mod4"], ["mod1", "mod3", "mod5"], k=3) == 2 / 3
    assert calc.precision_at_k(["mod1", "mod2", "mod3", "mod4"], ["mod1", "mod3", "mod5"], k=5) == 0.4
    assert calc.recall_at_k(["mod1", "mod2", "mod3"], ["mod1", "mod3", "mod5"], k=3) == 2 / 3
    assert calc.mrr(["mod1", "mod2", "mod3", "mod4"], ["mod3", "mod5"]) == 1 / 3   # printed 0.333
    assert calc.mrr(["mod1", "mod2"], ["mod1"]) == 1.0
    assert calc.mrr(["mod1", "mod2", "mod3"], ["mod3"]) == 1 / 3
    assert calc.mrr(["mod1", "mod2"], ["mod3"]) == 0.0


def test_seed003_detailed_result():
    metrics = calc.calculate_all(
        ["l10n_es_facturae", "l10n_es_aeat", "l10n_es_vat_book", "account_invoice", "l10n_es"],
        ["l10n_es_facturae", "l10n_es_aeat"])
    reported = metrics.as_dict()
    expected = {"precision@3": 0.667, "precision@5": 0.40, "recall@10": 1.0, "mrr": 1.0, "hits_in_top_3": 2,
                "hits_in_top_5": 2, "first_relevant_position": 1}
    for key, value in expected.items():
        assert round(reported[key], 3) == value, key


# ---------------------------------------------------------------- seed 004: metrics for semantic search


def test_seed004_precision_and_recall():
    assert precision([1, 1, 0, 1, 1, 0, 1, 0, 1, 1]) == 0.70          # 7 of 10 relevant
    retrieved = ["HAW001", "HAW002", "HAW003", "HAW004", "HAW005"]
    relevant = ["HAW001", "HAW003", "HAW005"]
    values = [calc.precision_at_k(retrieved, relevant, k) for k in (1, 3, 5)]
    assert [round(v, 2) for v in values] == [1.00, 0.67, 0.60]
    assert values == [1.0, 2 / 3, 0.6]
    assert recall_at_k([1, 1, 0, 1, 1, 0, 1, 0, 1, 1], 25, 10) == 0.28  # 7 of 25 relevant


def test_seed004_mrr_over_three_queries():
    pairs = [(["HAW001", "HAW002", "HAW003", "HAW004", "HAW005"], ["HAW002"]),
             (["HAW010", "HAW011", "HAW012"], ["HAW010"]),
             (["HAW020", "HAW021", "HAW022", "HAW023"], ["HAW023"])]
    records = calc.calculate_many(pairs)
    assert [r.mrr for r in records] == [0.5, 1.0, 0.25]
    assert round(ReportAggregator.aggregate_metrics(records)["mrr"], 2) == 0.58
    qrels = {f"q{i}": {doc: 1 for doc in relevant} for i, (_, relevant) in enumerate(pairs)}
    run = {f"q{i}": ranking(docs) for i, (docs, _) in enumerate(pairs)}
    summary = evaluate(qrels, run, ["mrr", "MRR", "recip_rank"]).summary
    assert summary["mrr"] == summary["MRR"] == summary["recip_rank"] == pytest.approx(1.75 / 3, abs=1e-15)


def test_seed004_mrr_at_k():
    """MRR@K with K = 5: a first relevant document at rank 7 counts as rank 6."""
    docs = [f"HAW{i:03d}" for i in range(1, 9)]
    qrels = {"q1": {docs[1]: 1}, "q2": {docs[6]: 1}}
    run = {"q1": ranking(docs), "q2": ranking(docs)}
    values = evaluate(qrels, run, ["RR(beyond='k+1')@5", "mrr@5"], per_query=True).per_query
    assert values["q1"]["RR(beyond='k+1')@5"] == 0.5
    assert values["q2"]["RR(beyond='k+1')@5"] == 1 / 6
    assert round(values["q2"]["RR(beyond='k+1')@5"], 2) == 0.17
    assert values["q2"]["mrr@5"] == 0.0    # the usual MRR@K (MS MARCO, ir_measures' RR@5) stops at K
    assert calc.mrr(docs, [docs[6]], k=5, beyond="k+1") == 1 / 6


def test_seed004_ndcg_example():
    """DCG@4 of [3, 1, 3, 0] with log2(i + 1) is 5.13 as the document says; its NDCG@4 is not 1.00.

    The document takes the ideal ranking [3, 3, 1, 0] but adds it up as 3.00 + 1.50 + 0.63,
    the discounts of the original order; correctly 3/1 + 3/log2(3) + 1/log2(4) = 5.3928, so
    NDCG@4 = 5.1309 / 5.3928 = 0.9514.
    """
    assert round(dcg_at_k([3, 1, 3, 0], 4, discount="log2"), 2) == 5.13
    value = ndcg_at_k([3, 1, 3, 0], 4, discount="log2")
    assert round(value, 4) == 0.9514
    by_hand = (3 + 1 / math.log2(3) + 3 / math.log2(4)) / (3 + 3 / math.log2(3) + 1 / math.log2(4))
    assert value == pytest.approx(by_hand, abs=1e-15)
    summary = evaluate({"q": {"a": 3, "b": 1, "c": 3, "d": 0}}, {"q": ranking("abcd")}, ["nDCG@4", "ndcg_cut.4"]).summary
    assert summary["nDCG@4"] == summary["ndcg_cut_4"] == pytest.approx(by_hand, abs=1e-15)


def test_seed004_comparison_table_summary():
    rows = [IRMetrics(precision_at_3=0.0, precision_at_5=0.60, recall_at_10=0.0, mrr=0.833, ndcg_at_10=0.72),
            IRMetrics(precision_at_3=0.0, precision_at_5=0.80, recall_at_10=0.0, mrr=1.000, ndcg_at_10=0.85),
            IRMetrics(precision_at_3=0.0, precision_at_5=0.20, recall_at_10=0.0, mrr=0.250, ndcg_at_10=0.41)]
    summary = ReportAggregator.aggregate_metrics(rows)
    assert (round(summary["mrr"], 2), round(summary["ndcg@10"], 2), round(summary["precision@5"], 2)) == (0.69, 0.66, 0.53)


# ---------------------------------------------------------------- seed 002: IDCG from all the qrels


def test_seed002_ideal_from_all_relevant_documents():
    """3 relevant documents in the qrels, k = 5: IDCG@5 = 1 + 0.63 + 0.5 = 2.13, whatever was retrieved."""
    qrels = {"q": {"r1": 1, "r2": 1, "r3": 1}}
    run = {"q": ranking(["r1", "x1", "x2", "x3", "x4"])}
    summary = evaluate(qrels, run, ["nDCG@5", "nDCG(ideal='ranking')@5"]).summary
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert round(ideal, 2) == 2.13
    assert summary["nDCG@5"] == pytest.approx(1 / ideal, abs=1e-15)
    assert summary["nDCG(ideal='ranking')@5"] == 1.0   # scikit-learn's ideal sees only r1
