"""The statistics of ``evaltool compare`` against scipy, statsmodels and enumeration.

Expected values come from scipy.stats / statsmodels run here on the same arrays, from
enumerating every sign vector, or from hand calculation; never from evaltool itself.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.stats

from evaltool.compare import adjust, bootstrap_test, paired_test, randomization_test, t_test, wilcoxon_test


def _pairs(seed: int, n: int, ties: bool = False):
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    other = np.clip(base + rng.normal(0.03, 0.1, n), 0, 1)
    if ties:  # values on a grid, as P@10 or RR give: equal pairs and tied |differences|
        base, other = np.round(base * 10) / 10, np.round(other * 10) / 10
    return base, other


@pytest.mark.parametrize("seed,n,ties", [(1, 43, False), (2, 50, True), (3, 8, False), (4, 200, True)])
def test_t_test_equals_scipy_ttest_rel(seed, n, ties):
    base, other = _pairs(seed, n, ties)
    expected = scipy.stats.ttest_rel(other, base)
    ci = expected.confidence_interval(0.95)
    p, (low, high) = t_test(other - base, 0.95)
    assert p == pytest.approx(expected.pvalue, rel=1e-12, abs=0)
    assert (low, high) == pytest.approx((ci.low, ci.high), rel=1e-12)


@pytest.mark.parametrize("seed,n,ties", [(1, 43, False), (2, 50, True), (3, 12, False), (5, 30, True), (6, 120, False)])
def test_wilcoxon_equals_scipy(seed, n, ties):
    base, other = _pairs(seed, n, ties)
    expected = scipy.stats.wilcoxon(other, base).pvalue
    assert wilcoxon_test(other - base) == pytest.approx(expected, rel=1e-12, abs=0)


def _exact_randomization_p(d: np.ndarray) -> float:
    """Share of all 2^n sign vectors whose |sum| reaches the observed |sum| (enumeration)."""
    observed = abs(d.sum())
    extreme = sum(1 for signs in itertools.product((-1, 1), repeat=len(d))
                  if abs(np.dot(signs, d)) >= observed - 1e-12)
    return extreme / 2 ** len(d)


@pytest.mark.parametrize("d", [
    [0.10, 0.25, -0.05, 0.30, 0.12, -0.20, 0.08, 0.15, 0.0, 0.22],  # exact p 0.0820
    [0.5, -0.5, 0.25, -0.25, 0.1, 0.2, -0.1, 0.3, 0.05, -0.4, 0.15],  # ties in |d|, exact p 0.8076
])
def test_randomization_converges_to_the_exact_permutation_p_value(d):
    d = np.array(d)
    exact = _exact_randomization_p(d)
    trials = 400_000
    p = randomization_test(d, trials, seed=7)
    # Monte Carlo standard error sqrt(p(1-p)/trials) is below 0.0008 here; allow 5 of them
    assert abs(p - exact) < 5 * math.sqrt(exact * (1 - exact) / trials) + 2 / trials, (p, exact)


def test_randomization_is_seeded_and_never_zero():
    d = np.linspace(0.1, 0.5, 30)  # every difference positive: only the identity and its mirror reach |sum|
    assert randomization_test(d, 1000, seed=3) == randomization_test(d, 1000, seed=3)
    assert randomization_test(d, 1000, seed=3) == pytest.approx(1 / 1001)  # (0 + 1) / (trials + 1)


def test_bootstrap_interval_and_p_value_from_scipys_resamples():
    base, other = _pairs(11, 43)
    d = other - base
    trials = 5000
    res = scipy.stats.bootstrap((d,), np.mean, n_resamples=trials, confidence_level=0.9, method="BCa",
                                rng=np.random.default_rng(5), vectorized=True)
    centred = np.abs(res.bootstrap_distribution - d.mean())
    expected_p = (np.count_nonzero(centred >= abs(d.mean())) + 1) / (trials + 1)
    p, (low, high) = bootstrap_test(d, trials, seed=5, level=0.9)
    assert (low, high) == (res.confidence_interval.low, res.confidence_interval.high)
    assert p == pytest.approx(expected_p)
    assert low < d.mean() < high


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomization", "bootstrap"])
def test_identical_runs_have_p_one_and_a_zero_interval(test):
    p, ci = paired_test(np.zeros(20), test, trials=200, seed=0)
    assert p == 1.0
    assert ci == (0.0, 0.0)


def test_non_t_tests_report_the_bootstrap_interval():
    base, other = _pairs(21, 43)
    d = other - base
    _, expected = bootstrap_test(d, 3000, 9, 0.95)
    for test in ("wilcoxon", "randomization"):
        assert paired_test(d, test, trials=3000, seed=9, level=0.95)[1] == expected


def _pvalue_families():
    rng = np.random.default_rng(0)
    return [
        rng.random(12) ** 3,
        np.array([0.01, 0.04, 0.03, 0.04, 0.2, 0.001, 0.5, 0.04]),  # ties
        np.array([0.9, 0.95, 0.99]),                                 # caps at 1
        np.array([0.003]),
    ]


@pytest.mark.parametrize("method,statsmodels_name", [("holm", "holm"), ("bh", "fdr_bh"), ("bonferroni", "bonferroni")])
@pytest.mark.parametrize("family", range(4))
def test_adjusted_p_values_match_statsmodels(method, statsmodels_name, family):
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    p = _pvalue_families()[family]
    expected = multipletests(p, method=statsmodels_name)[1]
    np.testing.assert_allclose(adjust(p, method), expected, rtol=1e-12, atol=0)


def test_holm_by_hand_and_nan_left_out():
    # sorted 0.01, 0.03, 0.04: 3*0.01 = 0.03, 2*0.03 = 0.06, max(0.06, 1*0.04) = 0.06; the nan is no test
    adjusted = adjust([0.01, float("nan"), 0.04, 0.03], "holm")
    assert adjusted[[0, 2, 3]] == pytest.approx([0.03, 0.06, 0.06])
    assert math.isnan(adjusted[1])
    assert adjust([0.2, 0.3], "none").tolist() == [0.2, 0.3]


def test_wins_follow_the_measures_direction():
    """ARP (the grade-weighted mean rank of the relevant retrieved) is better lower: q1's relevant document
    moving from rank 2 to 1 is a win, q2's from 1 to 3 and q3's from 1 to 2 losses (by hand: ARP 2, 1, 1
    -> 1, 3, 2); P@1 on the same rankings agrees (0, 1, 1 -> 1, 0, 0)."""
    from evaltool import compare_runs

    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    base = {"q1": {"x": 2.0, "a": 1.0}, "q2": {"b": 3.0, "y": 2.0, "z": 1.0}, "q3": {"c": 1.0}}
    new = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"y": 3.0, "z": 2.0, "b": 1.0}, "q3": {"w": 2.0, "c": 1.0}}
    cmp = compare_runs(qrels, {"base": base, "new": new}, measures=["ARP", "P.1", "num_ret"])
    cell = cmp.cells["new"]["ARP"]
    assert (cell.delta, cell.wins, cell.ties, cell.losses) == (pytest.approx(2 / 3), 1, 0, 2)
    p1 = cmp.cells["new"]["P_1"]
    assert (p1.wins, p1.ties, p1.losses) == (1, 0, 2)
    assert "num_ret" not in cmp.measures  # a count has no per-query mean to compare


def test_a_measure_averaged_over_the_queries_with_a_value_is_compared(tmp_path):
    """FirstRelPos has no value where nothing relevant was returned; its summary is the mean over the
    queries with one, and compare shows it (it used to be left out as 'not compared').

    By hand: A finds q1's relevant at 1, q2's at 3, nothing for q3 -> mean (1 + 3) / 2 = 2;
    B at 2, 1 and 4 -> 7 / 3. Paired on q1, q2: differences +1, -2; lower is better: one win, one loss."""
    from evaltool.compare import compare_runs

    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 r1 1\nq2 0 r2 1\nq3 0 r3 1\n")
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_text("q1 Q0 r1 1 9 a\nq2 Q0 x1 1 9 a\nq2 Q0 x2 2 8 a\nq2 Q0 r2 3 7 a\nq3 Q0 x3 1 9 a\n")
    b.write_text("q1 Q0 y1 1 9 b\nq1 Q0 r1 2 8 b\nq2 Q0 r2 1 9 b\n"
                 "q3 Q0 y1 1 9 b\nq3 Q0 y2 2 8 b\nq3 Q0 y3 3 7 b\nq3 Q0 r3 4 6 b\n")
    cmp = compare_runs(str(qrels), [str(a), str(b)], measures=["FirstRelPos"])
    assert cmp.measures == ["FirstRelPos"] and cmp.ignored_measures == []
    base, other = cmp.cells[cmp.names[0]]["FirstRelPos"], cmp.cells[cmp.names[1]]["FirstRelPos"]
    assert base.mean == 2.0 and other.mean == pytest.approx(7 / 3)
    assert other.delta == pytest.approx(1 / 3)
    assert (other.wins, other.ties, other.losses, other.pairs) == (1, 0, 1, 2)
