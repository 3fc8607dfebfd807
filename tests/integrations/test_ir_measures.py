"""evaltool as an ir_measures provider gives pytrec_eval's numbers (ties aside).

For every measure both providers offer, per-query values of ``provider='evaltool'`` equal
those of ir_measures' own pytrec_eval provider on the DL19 and DL20 runs of
../shared/realdata, except on queries with tied scores, where pytrec_eval orders ties its
own way and evaltool follows trec_eval.
"""

from __future__ import annotations

import math
from collections import defaultdict

import pytest

ir_measures = pytest.importorskip("ir_measures")

import evaltool.integrations.ir_measures as integration  # noqa: E402
from tests.support.helpers import require_shared  # noqa: E402

M = ir_measures
BOTH = [
    M.P @ 5, M.P(rel=2) @ 10, M.RR, M.RR(rel=2), M.Rprec, M.AP, M.AP @ 100, M.AP(rel=2), M.nDCG, M.nDCG @ 10,
    M.nDCG(judged_only=True) @ 10, M.nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7}) @ 10, M.R @ 100, M.R @ 1000, M.Bpref,
    M.NumRet, M.NumRet(rel=1), M.NumQ, M.NumRel, M.SetAP, M.SetF, M.SetP, M.SetP(relative=True), M.SetR,
    M.Success @ 10, M.IPrec @ 0.5, M.infAP,
]
PAIRS = [("qrels.dl19-passage.txt", "BM25.trec_results_dl19.txt"),
         ("qrels.dl19-passage.txt", "SPLADE_P_P_ENSEMBLE_DISTIL.trec_results_dl19.txt"),
         ("qrels.dl19-passage.txt", "REP_LLAMA.trec_results_dl19.txt"),
         ("qrels.dl20-passage.txt", "BM25_RM3.trec_results_dl20.txt")]


def _tied_queries(run) -> set[str]:
    scores = defaultdict(list)
    for doc in run:
        scores[doc.query_id].append(doc.score)
    return {qid for qid, values in scores.items() if len(set(values)) < len(values)}


def test_the_provider_is_registered_and_reads_ir_measures_spellings():
    provider = ir_measures.providers.registry["evaltool"]
    assert provider is integration.PROVIDER and provider.NAME == "evaltool"
    assert all(provider.supports(m) for m in BOTH)
    assert not provider.supports(M.BPM(T=1, min_rel=2))  # not an evaltool measure: left to other providers


@pytest.mark.parametrize("qrels_name,run_name", PAIRS, ids=[r for _, r in PAIRS])
def test_per_query_values_equal_pytrec_eval(qrels_name, run_name):
    base = require_shared("realdata")
    qrels = list(ir_measures.read_trec_qrels(str(base / "qrels" / qrels_name)))
    run = list(ir_measures.read_trec_run(str(base / "runs" / run_name)))
    tied = _tied_queries(run)
    ours = {(m.query_id, str(m.measure)): m.value for m in integration.PROVIDER.iter_calc(BOTH, qrels, run)}
    theirs = {(m.query_id, str(m.measure)): m.value
              for m in ir_measures.providers.registry["pytrec_eval"].iter_calc(BOTH, qrels, run)}
    assert ours.keys() == theirs.keys()
    compared = 0
    for key, value in theirs.items():
        if key[0] in tied and not key[1].startswith(("Set", "Num", "R@", "Rprec", "Success")):
            continue
        assert math.isclose(ours[key], value, rel_tol=1e-9, abs_tol=1e-12), (key, ours[key], value)
        compared += 1
    assert compared >= 400  # most values: the untied queries, and the tie-insensitive measures of the rest


def test_aggregates_equal_pytrec_eval_on_a_run_without_ties():
    base = require_shared("realdata")
    qrels = list(ir_measures.read_trec_qrels(str(base / "qrels" / "qrels.dl20-passage.txt")))
    run = list(ir_measures.read_trec_run(str(base / "runs" / "BM25_RM3.trec_results_dl20.txt")))
    untied = [doc for doc in run if doc.query_id not in _tied_queries(run)]
    ours = integration.PROVIDER.calc_aggregate(BOTH, qrels, untied)
    theirs = ir_measures.providers.registry["pytrec_eval"].calc_aggregate(BOTH, qrels, untied)
    for measure in BOTH:
        assert math.isclose(ours[measure], theirs[measure], rel_tol=1e-9), (measure, ours[measure], theirs[measure])


def test_use_by_default_routes_ir_measures_calls_through_evaltool(monkeypatch):
    pipeline = list(ir_measures.DefaultPipeline.providers)
    monkeypatch.setattr(ir_measures.DefaultPipeline, "providers", pipeline)
    calls = []
    original = integration.EvaltoolEvaluator._iter_calc

    def counting(self, run):
        calls.append(len(run))
        yield from original(self, run)

    monkeypatch.setattr(integration.EvaltoolEvaluator, "_iter_calc", counting)
    integration.use_by_default()
    integration.use_by_default()  # idempotent
    assert pipeline.count(integration.PROVIDER) == 1 and pipeline[0] is integration.PROVIDER
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 0.5, "b": 0.9}}
    values = ir_measures.calc_aggregate([M.RR, M.P @ 1], qrels, run)
    assert calls, "ir_measures did not call the evaltool provider"
    # q1: a at rank 2 (RR 0.5, P@1 0); q2 has no results and takes the default 0, as with every provider
    assert values == {M.RR: 0.25, M.P @ 1: 0.0}
