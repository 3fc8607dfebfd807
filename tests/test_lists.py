"""The list API gives what the file-based core gives for the same data.

Random rankings of document ids and sets of expected ids are written as TREC qrels and
run files and scored with trec_eval's measure names; ``MetricsCalculator`` and the
relevance-vector functions must agree per query, bit for bit, and
``ReportAggregator``'s means must equal the files' summary.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaltool import evaluate, lists
from evaltool.errors import EvaltoolWarning
from evaltool.lists import (
    MetricsCalculator, ReportAggregator, average_precision, dcg_at_k, mean_average_precision, mean_reciprocal_rank,
    ndcg_at_k, precision, precision_at_k, recall_at_k, reciprocal_rank,
)


def random_pairs(seed: int, n: int = 60):
    """(retrieved, expected) id lists without duplicates; some empty, some without overlap."""
    rng = np.random.default_rng(seed)
    pairs = []
    for i in range(n):
        pool = [f"doc{j}" for j in rng.choice(500, size=40, replace=False)]
        retrieved = pool[:int(rng.integers(0 if i % 17 == 0 else 1, 25))]
        expected = list(rng.choice(pool, size=int(rng.integers(1, 8)), replace=False))
        pairs.append((retrieved, expected))
    return pairs


def write_files(tmp_path, pairs):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"q{i:03d} 0 {doc} 1\n" for i, (_, expected) in enumerate(pairs) for doc in expected))
    run.write_text("".join(f"q{i:03d} Q0 {doc} {r} {len(retrieved) - r} run\n"
                           for i, (retrieved, _) in enumerate(pairs) for r, doc in enumerate(retrieved)))
    return qrels, run


TREC_NAMES = {"precision_at_3": "P_3", "precision_at_5": "P_5", "recall_at_10": "recall_10", "mrr": "recip_rank",
              "ndcg_at_10": "ndcg_cut_10"}


@pytest.mark.parametrize("seed", [0, 1])
def test_metrics_calculator_equals_the_file_core(tmp_path, seed):
    pairs = random_pairs(seed)
    qrels, run = write_files(tmp_path, pairs)
    files = evaluate(qrels, run, ["P.3,5", "recall.10", "recip_rank", "ndcg_cut.10", "num_rel_ret", "hits@3",
                                  "first_relevant_position"], per_query=True, complete=True)
    records = MetricsCalculator.calculate_many(pairs)
    for i, record in enumerate(records):
        values = files.per_query[f"q{i:03d}"]
        for field, name in TREC_NAMES.items():
            assert getattr(record, field) == values[name], (i, field)
        assert record.hits_in_top_3 == values["hits@3"]
        position = values["first_relevant_position"]
        assert record.first_relevant_position == (None if math.isnan(position) else position)
        retrieved, expected = pairs[i]
        assert MetricsCalculator.count_hits(retrieved, expected) == values["num_rel_ret"]
        assert MetricsCalculator.calculate_all(retrieved, expected) == record
    summary = ReportAggregator.aggregate_metrics(records)
    assert summary["precision@3"] == files.summary["P_3"]
    assert summary["recall@10"] == files.summary["recall_10"]
    assert summary["mrr"] == files.summary["recip_rank"]
    assert summary["ndcg@10"] == files.summary["ndcg_cut_10"]


def test_relevance_vectors_equal_the_file_core(tmp_path):
    rng = np.random.default_rng(5)
    vectors = [[int(g) for g in rng.choice([0, 0, 1, 2, 3], size=int(rng.integers(1, 30)))] for _ in range(25)]
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"q{i:02d} 0 d{r} {g}\n" for i, v in enumerate(vectors) for r, g in enumerate(v)))
    run.write_text("".join(f"q{i:02d} Q0 d{r} {r} {100 - r} run\n" for i, v in enumerate(vectors) for r in range(len(v))))
    files = evaluate(qrels, run, ["map", "P.5", "recall.5", "ndcg_cut.5", "recip_rank", "DCG(discount='jarvelin')@5",
                                  "nDCG(discount='jarvelin',ideal='ranking')@5"], per_query=True)
    for i, v in enumerate(vectors):
        values = files.per_query[f"q{i:02d}"]
        assert reciprocal_rank(v) == values["recip_rank"]
        assert average_precision(v) == values["map"]
        assert precision_at_k(v, 5) == values["P_5"]
        assert recall_at_k(v, sum(g >= 1 for g in v), 5) == values["recall_5"]
        assert ndcg_at_k(v, 5, discount="log2") == values["ndcg_cut_5"]   # the list holds every judged document
        assert dcg_at_k(v, 5) == values["DCG(discount='jarvelin')@5"]
        assert ndcg_at_k(v, 5) == values["nDCG(discount='jarvelin',ideal='ranking')@5"]
        assert precision(v) == evaluate(qrels, run, [f"P@{len(v)}"], per_query=True).per_query[f"q{i:02d}"][f"P@{len(v)}"]
    assert mean_average_precision(vectors) == files.summary["map"]
    assert mean_reciprocal_rank(vectors) == files.summary["recip_rank"]


def test_bad_inputs_are_value_errors():
    for bad in ([1, -1], [0.5], ["1"], [float("nan")], [float("inf")], [None]):
        with pytest.raises(ValueError, match="non-negative whole numbers or booleans"):
            average_precision(bad)
    with pytest.raises(ValueError, match="number_relevant_documents"):
        recall_at_k([1, 1, 0], 1, 3)
    with pytest.raises(ValueError, match="k should be"):
        MetricsCalculator.precision_at_k(["a"], ["a"], 0)
    assert average_precision(np.array([0, 1])) == 0.5
    assert precision([1.0, 0.0]) == 0.5


# ---------------------------------------------------------------- the notebook's vectors (seed 001)

VECTOR_FUNCTIONS = [
    ("precision", lambda v: precision(v)), ("precision_at_k", lambda v: precision_at_k(v, 3)),
    ("recall_at_k", lambda v: recall_at_k(v, 5, 3)), ("average_precision", lambda v: average_precision(v)),
    ("dcg_at_k", lambda v: dcg_at_k(v, 4)), ("ndcg_at_k", lambda v: ndcg_at_k(v, 4)),
    ("reciprocal_rank", lambda v: reciprocal_rank(v)),
    ("mean_average_precision", lambda v: mean_average_precision([v, v[::-1]])),
    ("mean_reciprocal_rank", lambda v: mean_reciprocal_rank([v, v[::-1]])),
]


@pytest.mark.parametrize(("name", "function"), VECTOR_FUNCTIONS, ids=[n for n, _ in VECTOR_FUNCTIONS])
def test_booleans_and_whole_floats_are_the_grades_1_and_0(name, function):
    ints = [0, 1, 0, 1, 1]
    expected = function(ints)
    assert function([bool(g) for g in ints]) == expected
    assert function([float(g) for g in ints]) == expected
    assert function(np.array(ints, dtype=bool)) == expected
    assert function(np.array(ints, dtype=np.float64)) == expected


def test_recall_with_no_relevant_documents_is_zero_as_in_the_notebook():
    # seed 001: "if number_relevant_documents <= 0: return 0.0", whatever the list holds
    assert recall_at_k([1, 0, 1], 0, 3) == 0.0
    assert recall_at_k([1, 1], -2, 1) == 0.0
    assert recall_at_k([0, 0, 0, 1], 4, 1) == 0.0   # the notebook's example
    with pytest.raises(ValueError, match="whole number"):
        recall_at_k([1], 1.5, 1)


def test_reciprocal_rank_by_hand():
    assert reciprocal_rank([0, 0, 1]) == 1 / 3
    assert mean_reciprocal_rank([[1], [0, 1], [0, 0, 0, 1], [0]]) == (1 + 1 / 2 + 1 / 4 + 0) / 4
    assert mean_reciprocal_rank([]) == 0.0


def test_empty_lists_warn_in_terms_of_lists():
    with pytest.warns(EvaltoolWarning) as caught:
        assert precision([]) == 0.0
        assert mean_average_precision([[1], [], [0, 1], []]) == 0.375
        assert MetricsCalculator.calculate_all([], ["a"]).mrr == 0.0
    messages = [str(w.message) for w in caught]
    assert messages == ["the list is empty (nothing retrieved): every metric of it is 0.0",
                        "2 of the 4 lists are empty (nothing retrieved; list 2, 4): every metric of them is 0.0",
                        "the list is empty (nothing retrieved): every metric of it is 0.0"]
    assert all(w.filename == __file__ for w in caught)  # pointing at the caller's line


# ---------------------------------------------------------------- seed 000's calculator, small lists


def _pairs_with_repeats(seed: int, n: int = 300):
    """(retrieved, expected) with repeated ids on both sides, empty lists and lists past 10."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n):
        pool = [f"d{j}" for j in range(int(rng.integers(1, 30)))]
        retrieved = [pool[j] for j in rng.integers(0, len(pool), size=int(rng.integers(0, 25)))]
        expected = [pool[j] for j in rng.integers(0, len(pool), size=int(rng.integers(0, 6)))]
        pairs.append((retrieved, expected))
    return pairs


@pytest.mark.filterwarnings("ignore::evaltool.errors.EvaltoolWarning")
@pytest.mark.parametrize("seed", [3, 4])
def test_the_small_list_path_equals_the_core_exactly(seed, monkeypatch):
    pairs = _pairs_with_repeats(seed)
    monkeypatch.setattr(lists, "SMALL_LISTS", -1)   # every call through the core
    core = MetricsCalculator.calculate_many(pairs)
    monkeypatch.setattr(lists, "SMALL_LISTS", 2000)

    def no_core(*args, **kwargs):
        raise AssertionError("a small list went through evaluate()")

    monkeypatch.setattr(lists, "evaluate", no_core)
    for (retrieved, expected), record in zip(pairs, core):
        assert MetricsCalculator.calculate_all(retrieved, expected) == record, (retrieved, expected)
    assert MetricsCalculator.calculate_many(pairs[:50]) == core[:50]
