"""The harness's ranx workload at ranx's published size (benchmarks/drivers/ranx_workload.py).

At 1,000,000 x 100 each tool is timed in a process of its own on data built there from the
same seeded arrays: dicts for evaltool and pytrec_eval, and for ranx the arrays its
``evaluate`` takes, made without the dicts (ranx's ``Qrels`` / ``Run`` of 100M rows do not
fit in memory). The ratios mean something only if every process sees the same judgments
and the same ranking: here, on the same builders at a small size, ranx's arrays are exactly
what ranx's own ``python_dict_to_typed_list`` makes of the dicts, the dicts have the
workload's shape, and evaltool's values equal pytrec_eval's.
"""

from __future__ import annotations

import functools
import importlib.util
import statistics
import sys

import numpy as np
import pytest

from tests.support.helpers import ROOT

QUERIES, VOCABULARY = 250, 20_000  # two chunks of the builders: CHUNK is set to 200 below


@functools.cache
def _driver():
    spec = importlib.util.spec_from_file_location("ranx_workload", ROOT / "benchmarks" / "drivers" / "ranx_workload.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.CHUNK = 200
    return module


@pytest.fixture(scope="module")
def dicts():
    return _driver().large_dicts(QUERIES, vocabulary=VOCABULARY)


def test_ranx_arrays_are_what_ranx_makes_of_the_dicts(dicts):
    from ranx.utils import python_dict_to_typed_list

    qrels, run = dicts
    qrels_arrays, run_array = _driver().large_ranx_arrays(QUERIES, vocabulary=VOCABULARY)
    expected_qrels, expected_run = python_dict_to_typed_list(qrels), python_dict_to_typed_list(run)
    assert run_array.shape == (QUERIES, 100, 2)
    assert len(qrels_arrays) == len(expected_qrels) == QUERIES
    for got, expected in zip(qrels_arrays, expected_qrels):
        np.testing.assert_array_equal(got, expected)
    for got, expected in zip(run_array, expected_run):
        np.testing.assert_array_equal(got, expected)


def test_the_dicts_have_the_workloads_shape(dicts):
    qrels, run = dicts
    assert list(run) == list(qrels) == [f"q_{i}" for i in range(QUERIES)]
    for docs in run.values():
        assert len(docs) == 100 and len(set(docs.values())) == 100  # distinct scores
        assert all(int(doc[2:]) < VOCABULARY for doc in docs)
    assert all(1 <= len(judged) <= 9 and set(judged.values()) <= {1, 2, 3} for judged in qrels.values())
    judged = sum(map(len, qrels.values()))
    retrieved = sum(doc in run[q] for q, docs in qrels.items() for doc in docs)
    assert 0.35 < retrieved / judged < 0.65  # about half of the judged documents are retrieved
    shared = {id(doc) for docs in run.values() for doc in docs}
    assert len(shared) < sum(map(len, run.values()))  # one str object per collection id


@pytest.mark.parametrize("measure", ["map", "recip_rank", "ndcg"])
def test_evaltool_gives_pytrec_evals_values_on_the_large_builders_dicts(dicts, measure):
    import pytrec_eval

    import evaltool

    qrels, run = dicts
    expected = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    got = evaltool.Evaluator(qrels, [measure]).evaluate(run, per_query=True)
    assert got.per_query.keys() == expected.keys()
    for qid, values in expected.items():
        assert got.per_query[qid][measure] == pytest.approx(values[measure], abs=1e-12)
    assert got.summary[measure] == pytest.approx(statistics.fmean(v[measure] for v in expected.values()), abs=1e-12)


def test_the_floors_read_every_entry_of_the_dicts_and_nothing_else(dicts):
    driver = _driver()
    _, run = dicts
    assert list(driver.FLOORS["scores"](run)) == [score for docs in run.values() for score in docs.values()]
    assert list(driver.FLOORS["(id, score) pairs"](run)) == [pair for docs in run.values() for pair in docs.items()]
    floors = driver.dict_floors(run, 3)
    assert [f["read"] for f in floors] == list(driver.FLOORS)
    assert all(f["calls"] == 3 and f["entries"] == QUERIES * 100 and f["median_s"] > 0 for f in floors)
