"""Reproducibility measures (evaltool.reproducibility, ``evaltool reproduce``) checked against repro_eval,
run here as the oracle on DL19 runs (BM25 and SPLADE as the originals, BM25+RM3 and TAS-B standing
in for their reproductions)."""

from __future__ import annotations

import json

import pytest

from evaltool.reproducibility import kendall_tau_union, rank_biased_overlap, reproduce
from tests.support.helpers import assert_fails, invoke, require_shared, write

repro_eval = pytest.importorskip("repro_eval", reason="repro_eval is the oracle: pip install -e '.[test]'")

# evaltool's names and ir_measures' (repro_eval scores with ir_measures)
MEASURES = {"ndcg_cut_10": "nDCG@10", "map": "AP", "P_10": "P@10", "recip_rank": "RR"}


@pytest.fixture(scope="module")
def case():
    qrels = str(require_shared("realdata", "qrels", "qrels.dl19-passage.txt"))
    run = {name: str(require_shared("realdata", "runs", f"{name}.trec_results_dl19.txt"))
           for name in ("BM25", "SPLADE_P_P_ENSEMBLE_DISTIL", "BM25_RM3", "D_BERT_KD_TASB")}
    ours = reproduce(qrels, [run["BM25"], run["SPLADE_P_P_ENSEMBLE_DISTIL"]],
                     [run["BM25_RM3"], run["D_BERT_KD_TASB"]], ["ndcg_cut.10", "map", "P.10", "recip_rank"])
    from repro_eval.Evaluator import RpdEvaluator

    oracle = RpdEvaluator(qrels_orig_path=qrels, run_b_orig_path=run["BM25"],
                          run_a_orig_path=run["SPLADE_P_P_ENSEMBLE_DISTIL"], run_b_rep_path=run["BM25_RM3"],
                          run_a_rep_path=run["D_BERT_KD_TASB"])
    oracle.trim()
    oracle.evaluate()
    return ours, oracle


def test_ktu_and_rbo_per_topic_equal_repro_eval(case):
    ours, oracle = case
    ktu, rbo = oracle.ktu(per_topic=True), oracle.rbo(per_topic=True)
    for pair, key in zip(ours.pairs, ("baseline", "advanced")):
        assert set(pair.ktu) == set(ktu[key]) and len(pair.ktu) == 43
        for q in ktu[key]:
            assert pair.ktu[q] == pytest.approx(ktu[key][q], abs=1e-12), q
            assert pair.rbo[q] == pytest.approx(rbo[key][q], abs=1e-12), q
    means_ktu, means_rbo = oracle.ktu(), oracle.rbo()
    assert ours.pairs[0].ktu_mean == pytest.approx(means_ktu["baseline"], abs=1e-12)
    assert ours.pairs[1].rbo_mean == pytest.approx(means_rbo["advanced"], abs=1e-12)


def test_rmse_and_paired_p_equal_repro_eval(case):
    ours, oracle = case
    rmse, p = oracle.rmse(), oracle.ttest()
    for pair, key in zip(ours.pairs, ("baseline", "advanced")):
        for name, theirs in MEASURES.items():
            assert pair.rmse[name] == pytest.approx(rmse[key][theirs], rel=1e-9), (key, name)
            assert pair.p_value[name] == pytest.approx(p[key][theirs], rel=1e-9), (key, name)


def test_effect_ratio_and_delta_ri_equal_repro_eval(case):
    ours, oracle = case
    er, dri = oracle.er(), oracle.dri()
    (effect,) = ours.effects
    for name, theirs in MEASURES.items():
        assert effect.effect_ratio[name] == pytest.approx(er[theirs], rel=1e-9), name
        assert effect.delta_ri[name] == pytest.approx(dri[theirs], rel=1e-9, abs=1e-12), name


def test_identical_rankings_agree_fully():
    assert kendall_tau_union(list("abcd"), list("abcd")) == 1.0
    assert rank_biased_overlap(list("abcd"), list("abcd"), p=0.9, depth=4) == pytest.approx(1.0)
    assert kendall_tau_union(list("abc"), list("cba")) == -1.0


def test_a_run_reproduced_by_itself(tmp_path):
    qrels = write(tmp_path / "qrels", "q1 0 d1 1\nq2 0 d3 1\n")
    a = write(tmp_path / "a.txt", "q1 Q0 d1 1 2.0 A\nq1 Q0 d2 2 1.0 A\nq2 Q0 d3 1 1.0 A\nq2 Q0 d4 2 0.5 A\n")
    b = write(tmp_path / "b.txt", "q1 Q0 d2 1 2.0 B\nq1 Q0 d1 2 1.0 B\nq2 Q0 d3 1 1.0 B\nq2 Q0 d4 2 0.5 B\n")
    result = invoke("reproduce", a, b, a, b, "--qrels", qrels, "-m", "recip_rank", "-o", "json", "--per-topic",
                    "--depth", 2)
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    first = out["pairs"][0]
    assert first["ktu"] == 1.0 and first["rbo"] == 1.0 and first["rmse"]["recip_rank"] == 0.0
    assert first["p_value"]["recip_rank"] == 1.0
    # b loses q1 (1 -> 1/2) in the originals and in the reproduction alike: ER 1, DeltaRI 0
    assert out["effects"][0]["effect_ratio"]["recip_rank"] == 1.0
    assert out["effects"][0]["delta_ri"]["recip_rank"] == 0.0
    table = invoke("reproduce", a, b, a, b, "--qrels", qrels, "-m", "recip_rank", "-o", "markdown",
                   "--depth", 2).stdout
    assert "| a.txt | a.txt (reproduced) | 1.0000 | 1.0000 |" in table
    # deeper than the rankings, the truncated RBO keeps dividing the 2 shared documents by i + 1
    deep = json.loads(invoke("reproduce", a, b, a, b, "--qrels", qrels, "-m", "recip_rank", "-o", "json").stdout)
    weights = [0.95 ** i for i in range(1000)]
    expected = sum(w * min(i + 1, 2) / (i + 1) for i, w in enumerate(weights)) / sum(weights)
    assert deep["pairs"][0]["rbo"] == pytest.approx(expected, rel=1e-12)


def test_an_odd_number_of_runs_is_one_message(tmp_path):
    qrels = write(tmp_path / "qrels", "q1 0 d1 1\n")
    a = write(tmp_path / "a.txt", "q1 Q0 d1 1 2.0 A\n")
    assert_fails(invoke("reproduce", a, a, a, "--qrels", qrels), "as many of each; got 3 runs")
    assert_fails(invoke("reproduce", a, a, "--qrels", qrels, "--depth", "0"), "--depth", one_line=False)
