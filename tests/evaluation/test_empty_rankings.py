"""A dict run's ``{}``: a query the system answered with nothing, scored as pytrec_eval and
ir_measures score it (the peers run here, as oracles)."""

from __future__ import annotations

import math

import pytest

from evaltool import evaluate

QRELS = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"c": 2, "d": 1}, "q3": {"e": 1}}
MIXED = {"q1": {"a": 1.0, "b": 0.5, "x": 0.2}, "q2": {}, "q3": {"e": 3.0, "z": 1.0}}
ALL_EMPTY = {"q1": {}, "q2": {}, "q3": {}}
# pytrec_eval computes these with trec_eval 9's code: recall cutoffs as int(x * R + 0.9) where
# trec_eval 10 rounds, and 0 where trec_eval 10 divides 0 by 0 on an empty ranking (nan, kept here)
TREC_EVAL_9 = ("iprec_at_recall", "11pt_avg")


@pytest.mark.parametrize("run", [MIXED, ALL_EMPTY], ids=["mixed", "all-empty"])
def test_empty_rankings_score_as_pytrec_eval(run):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    expected = pytrec_eval.RelevanceEvaluator(QRELS, pytrec_eval.supported_measures).evaluate(run)
    assert set(expected) == set(run)  # the peer scores every query the run names, {} included
    result = evaluate(QRELS, run, ["all_trec"], per_query=True)
    assert set(result.per_query) == set(run)
    compared = 0
    for qid, values in expected.items():
        for name, value in values.items():
            ours = result.per_query[qid].get(name)
            if not isinstance(ours, (int, float)) or name.startswith(TREC_EVAL_9):
                continue  # gm_* are summaries here; runid / relstring are not numbers
            compared += 1
            assert ours == pytest.approx(value, abs=1e-9, nan_ok=True), (qid, name)
    assert compared > 100
    # the geometric means, which pytrec_eval reports per query as logs
    for name in ("gm_map", "gm_bpref"):
        logs = [expected[q][name] for q in expected]
        assert result.summary[name] == pytest.approx(math.exp(sum(logs) / len(logs)), rel=1e-9)
    assert result.meta["counts"]["queries_missing_from_run"] == 0
    assert not result.meta.get("skipped_queries")


@pytest.mark.parametrize("run", [MIXED, ALL_EMPTY], ids=["mixed", "all-empty"])
def test_empty_rankings_score_as_ir_measures(run):
    ir_measures = pytest.importorskip("ir_measures")
    measures = [ir_measures.parse_measure(m) for m in ("nDCG@10", "AP", "P@5", "RR", "R@100", "Bpref", "Rprec",
                                                       "NumRet", "NumRelRet", "nDCG")]
    expected = ir_measures.calc_aggregate(measures, QRELS, run)
    result = evaluate(QRELS, run, [str(m) for m in measures])
    summary = {name.lower(): value for name, value in result.summary.items()}
    for measure, value in expected.items():
        assert summary[str(measure).lower()] == pytest.approx(value, abs=1e-9), measure


def test_a_query_the_run_does_not_name_is_still_missing():
    """Only {} is 'answered with nothing': a query absent from the dict is skipped (scored under -c)."""
    run = {"q1": {"a": 1.0}, "q2": {}}
    with pytest.warns(UserWarning, match=r"1 of the 3 qrels queries have no results .* \(q3\)"):
        result = evaluate(QRELS, run, ["map", "num_ret"], per_query=True)
    assert sorted(result.per_query) == ["q1", "q2"]
    assert result.per_query["q2"] == {"num_ret": 0, "map": 0.0}
    assert result.summary["map"] == pytest.approx((1 / 2 + 0) / 2)
    complete = evaluate(QRELS, run, ["map"], per_query=True, complete=True)
    assert complete.summary["map"] == pytest.approx((1 / 2) / 3)
    assert complete.meta["counts"]["queries_missing_from_run"] == 1


def test_a_run_of_empty_rankings_for_unjudged_queries_only_is_still_refused():
    from evaltool.errors import InputError

    with pytest.raises(InputError, match="no query of <run dict> has judgments"):
        evaluate(QRELS, {"x1": {}, "x2": {}}, ["map"])
