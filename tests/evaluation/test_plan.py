"""EvalPlan: built once from evaluate()'s keyword options, checked before any input is read,
and taken by evaluate(), Evaluator and the command line alike."""

from __future__ import annotations

import pickle

import pytest

from evaltool import EvalPlan, EvaltoolError, Evaluator, evaluate

QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 1}, "q3": {"e": 1}}
RUN = {"q1": {"a": 3.0, "x": 2.5, "c": 1.0}, "q2": {"y": 2.0, "d": 1.0}}


def test_a_plan_gives_what_the_keywords_give():
    options = {"complete": True, "relevance_level": 2, "max_ret": 2}
    plan = EvalPlan.build(["map", "P.2", "ndcg_cut.3"], **options)
    by_keywords = evaluate(QRELS, RUN, ["map", "P.2", "ndcg_cut.3"], per_query=True, **options)
    assert evaluate(QRELS, RUN, plan, per_query=True).to_dict() == by_keywords.to_dict()
    assert Evaluator(QRELS, plan).evaluate(RUN, per_query=True).to_dict() == by_keywords.to_dict()
    # hand check: under -c and -l 2 only q1's 'a' is relevant; P@2 = 1/2 on q1, 0 on q2 and q3
    assert by_keywords.summary["P_2"] == pytest.approx(0.5 / 3)


def test_a_plan_is_checked_when_built():
    with pytest.raises(EvaltoolError, match="relevance level"):
        EvalPlan.build(["map"], relevance_level=-1)
    with pytest.raises(EvaltoolError, match="unknown engine 'spark'"):
        EvalPlan.build(["map"], engine="spark")
    with pytest.raises(TypeError, match="max_rte"):
        EvalPlan.build(["map"], max_rte=3)
    with pytest.raises(EvaltoolError, match="top K"):
        EvalPlan.build(["map"], f1_total="top-k")


def test_a_plan_and_keywords_together_are_refused():
    plan = EvalPlan.build(["map"])
    with pytest.raises(TypeError, match="max_ret"):
        evaluate(QRELS, RUN, plan, max_ret=3)
    with pytest.raises(TypeError, match="complete"):
        Evaluator(QRELS, plan, complete=True)


def test_a_plan_is_frozen_and_its_scoring_travels_by_name():
    plan = EvalPlan.build(["P.5", "nDCG@10"], complete=True)
    with pytest.raises(AttributeError):
        plan.zscores = "other.txt"  # type: ignore[misc]
    copy = pickle.loads(pickle.dumps(plan.scoring))  # as a Dask worker receives it
    assert copy.output_names == plan.scoring.output_names == ["P_5", "nDCG@10"]
    assert copy.ranking == plan.ranking
