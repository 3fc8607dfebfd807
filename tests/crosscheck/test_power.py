"""Power and topic set size (evaltool.power, ``evaltool power``): published G*Power sample sizes,
statsmodels' TTestPower as the oracle on DL19 runs, and the variance estimate by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from evaltool.compare import compare_runs
from evaltool.power import analyse, detectable_difference, paired_power, topics_needed
from tests.support.helpers import assert_fails, invoke, require_shared, write

DL19 = ["BM25", "D_BERT_KD_TASB", "SPLADE_P_P_ENSEMBLE_DISTIL"]


# G*Power 3 ("Means: difference between two dependent means (matched pairs)", a priori, two tails,
# alpha 0.05, power 0.80; Faul, Erdfelder, Lang and Buchner 2007): total sample size per effect size dz
@pytest.mark.parametrize(("effect", "topics"), [(0.2, 199), (0.5, 34), (0.8, 15)])
def test_topics_needed_equal_the_published_gpower_sizes(effect, topics):
    assert topics_needed(effect, 1.0, alpha=0.05, beta=0.2) == topics
    assert topics_needed(effect * 0.3, 0.3) == topics   # only the ratio delta / sd matters


def test_the_normal_approximation_start_is_corrected_to_the_exact_size():
    # Nagata's first guess ((z_a/2 + z_b) / effect)^2 + z_a/2^2 / 2 for effect 0.5: 33.3 -> 34
    z = 1.959963984540054, 0.8416212335729143
    assert math.ceil(((z[0] + z[1]) / 0.5) ** 2 + z[0] ** 2 / 2) == 34
    assert paired_power(33, 0.5, 1.0) < 0.8 <= paired_power(34, 0.5, 1.0)


@pytest.fixture(scope="module")
def dl19():
    qrels = str(require_shared("realdata", "qrels", "qrels.dl19-passage.txt"))
    runs = [str(require_shared("realdata", "runs", f"{name}.trec_results_dl19.txt")) for name in DL19]
    return qrels, runs


def test_design_and_power_equal_statsmodels_on_dl19(dl19):
    from statsmodels.stats.power import TTestPower

    qrels, runs = dl19
    cmp = compare_runs(qrels, runs, ["bm25", "tasb", "splade"], ["ndcg_cut.10", "map"], complete=True,
                       relevance_level=2)
    analysis = analyse(cmp.names, cmp.measures, cmp.values, alpha=0.05, beta=0.2, min_deltas=[0.05, 0.1])
    oracle = TTestPower()
    for m in analysis.measures:
        assert m.topics == 43
        for delta, needed in m.needed.items():
            assert needed == math.ceil(oracle.solve_power(effect_size=delta / m.sd, alpha=0.05, power=0.8))
        assert m.detectable / m.sd == pytest.approx(oracle.solve_power(nobs=43, alpha=0.05, power=0.8), rel=1e-6)
    for pair in analysis.pairs:
        d = cmp.values[pair.b][pair.measure] - cmp.values[pair.a][pair.measure]
        assert pair.delta == pytest.approx(d.mean(), abs=1e-15) and pair.sd == pytest.approx(d.std(ddof=1))
        assert pair.power == pytest.approx(oracle.power(effect_size=d.mean() / d.std(ddof=1), nobs=43, alpha=0.05),
                                           rel=1e-9)


def test_with_two_runs_the_variance_estimate_is_that_of_their_differences():
    x = np.array([0.2, 0.5, 0.9, 0.4, 0.7])
    y = np.array([0.3, 0.4, 0.95, 0.6, 0.65])
    analysis = analyse(["x", "y"], ["m"], {"x": {"m": x}, "y": {"m": y}})
    assert analysis.measures[0].sd == pytest.approx(np.std(y - x, ddof=1), rel=1e-12)


def test_detectable_difference_is_where_the_power_reaches_one_minus_beta():
    d = detectable_difference(50, 0.2, alpha=0.05, beta=0.2)
    assert paired_power(50, d, 0.2) == pytest.approx(0.8, abs=1e-9)


def test_power_on_the_command_line(dl19):
    qrels, runs = dl19
    result = invoke("power", qrels, *runs, "-c", "-m", "ndcg_cut.10", "--min-delta", "0.05", "--min-delta", "0.1",
                    "-o", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert set(out["measures"]["ndcg_cut_10"]["topics_needed"]) == {"0.05", "0.1"}
    assert len(out["pairs"]) == 3
    text = invoke("power", qrels, *runs, "-c", "-m", "ndcg_cut.10").stdout
    assert "topics for 0.05" in text and "achieved power of each comparison" in text
    rows = invoke("power", qrels, *runs, "-c", "-m", "ndcg_cut.10", "--min-delta", "0.1", "-o", "csv").stdout
    assert rows.splitlines()[0] == "measure,topics,residual_variance,sd,min_delta,topics_needed,detectable_difference"


def test_bad_requests_are_one_message(tmp_path):
    qrels = write(tmp_path / "qrels", "q1 0 d1 1\nq2 0 d2 1\n")
    a = write(tmp_path / "a.txt", "q1 Q0 d1 1 2.0 A\nq2 Q0 d2 1 1.0 A\n")
    b = write(tmp_path / "b.txt", "q1 Q0 d2 1 2.0 B\nq2 Q0 d2 1 1.0 B\n")
    assert_fails(invoke("power", qrels, a, b, "--min-delta", "0"), "--min-delta must be above 0")
    assert_fails(invoke("power", qrels, a), "at least 2 runs")
    bad = write(tmp_path / "bad.txt", "q1 Q0 d1 1 high B\n")
    assert_fails(invoke("power", qrels, a, bad), f"{bad}:1")
