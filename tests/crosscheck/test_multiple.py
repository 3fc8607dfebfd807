"""Many runs at once (evaltool.multiple, ``compare --all-pairs``): the two-way ANOVA and Tukey's HSD
checked against statsmodels and scipy on DL19 runs, the randomised Tukey HSD against its exact
permutation distribution, the letters against their definition."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from evaltool.compare import compare_runs
from evaltool.multiple import compact_letters, effect_sizes, randomised_tukey, tukey_hsd, two_way_anova
from tests.support.helpers import assert_fails, invoke, require_shared, write

DL19 = ["BM25", "BM25_RM3", "D_BERT_KD_TASB", "SPLADE_P_P_ENSEMBLE_DISTIL", "OPEN_AI_ADA2"]
NAMES = ["bm25", "rm3", "tasb", "splade", "ada2"]


@pytest.fixture(scope="module")
def dl19():
    qrels = str(require_shared("realdata", "qrels", "qrels.dl19-passage.txt"))
    runs = [str(require_shared("realdata", "runs", f"{name}.trec_results_dl19.txt")) for name in DL19]
    return qrels, runs


@pytest.fixture(scope="module")
def matrix(dl19):
    qrels, runs = dl19
    cmp = compare_runs(qrels, runs, NAMES, ["ndcg_cut.10"], complete=True)
    return np.column_stack([cmp.values[name]["ndcg_cut_10"] for name in NAMES])


@pytest.fixture(scope="module")
def ols(matrix):
    pd = pytest.importorskip("pandas")
    smf = pytest.importorskip("statsmodels.formula.api")
    n, m = matrix.shape
    frame = pd.DataFrame({"score": matrix.reshape(-1), "topic": np.repeat(np.arange(n), m).astype(str),
                          "system": np.tile(np.arange(m), n).astype(str)})
    return smf.ols("score ~ C(system) + C(topic)", data=frame).fit()


def test_two_way_anova_equals_statsmodels(matrix, ols):
    import statsmodels.api as sm

    table = sm.stats.anova_lm(ols, typ=2)
    anova = two_way_anova(matrix)
    assert anova.ss_system == pytest.approx(table.loc["C(system)", "sum_sq"], rel=1e-9)
    assert anova.ss_topic == pytest.approx(table.loc["C(topic)", "sum_sq"], rel=1e-9)
    assert anova.ss_residual == pytest.approx(table.loc["Residual", "sum_sq"], rel=1e-9)
    assert anova.df_residual == table.loc["Residual", "df"] == 168
    assert anova.f_system == pytest.approx(table.loc["C(system)", "F"], rel=1e-9)
    assert anova.p_system == pytest.approx(table.loc["C(system)", "PR(>F)"], rel=1e-6)
    assert anova.f_topic == pytest.approx(table.loc["C(topic)", "F"], rel=1e-9)
    assert anova.residual_variance == pytest.approx(ols.mse_resid, rel=1e-9)


def test_tukey_hsd_and_effect_sizes_use_the_residual_variance_of_statsmodels(matrix, ols):
    from scipy.stats import studentized_range

    n, m = matrix.shape
    p, moe = tukey_hsd(matrix, alpha=0.05)
    scale = np.sqrt(ols.mse_resid / n)
    means = matrix.mean(axis=0)
    for i, j in itertools.combinations(range(m), 2):
        q = abs(means[i] - means[j]) / scale
        assert p[i, j] == pytest.approx(studentized_range.sf(q, m, (m - 1) * (n - 1)), rel=1e-9, abs=1e-12)
        es, d = effect_sizes(matrix, i, j, two_way_anova(matrix).residual_variance)
        assert es == pytest.approx((means[j] - means[i]) / np.sqrt(ols.mse_resid), rel=1e-9)
        diff = matrix[:, j] - matrix[:, i]
        assert d == pytest.approx(diff.mean() / diff.std(ddof=1), rel=1e-12)
    assert moe == pytest.approx(studentized_range.ppf(0.95, m, (m - 1) * (n - 1)) * scale, rel=1e-9)


def test_randomised_tukey_converges_to_the_exact_permutation_p_values():
    x = np.array([[0.2, 0.5, 0.6], [0.1, 0.3, 0.7], [0.4, 0.4, 0.9], [0.3, 0.6, 0.5]])
    n, m = x.shape
    means = x.mean(axis=0)
    ranges = []
    for perms in itertools.product(list(itertools.permutations(range(m))), repeat=n):
        shuffled = np.array([x[t, list(perm)] for t, perm in enumerate(perms)]).mean(axis=0)
        ranges.append(shuffled.max() - shuffled.min())
    ranges = np.array(ranges)   # all 6^4 = 1296 equally likely shuffles
    p = randomised_tukey(x, trials=100_000, seed=3)
    for i, j in itertools.combinations(range(m), 2):
        exact = np.mean(ranges >= abs(means[i] - means[j]) - 1e-12)
        assert p[i, j] == pytest.approx(exact, abs=0.01), (i, j)


def test_randomised_tukey_is_seeded_and_counts_the_observed_data():
    x = np.array([[0.1, 0.9], [0.2, 0.8]])
    assert np.array_equal(randomised_tukey(x, 500, seed=1), randomised_tukey(x, 500, seed=1))
    assert randomised_tukey(x, 999, seed=0)[0, 1] >= 1 / 1000


def _groups_respected(names, significant, letters):
    for a, b in itertools.combinations(names, 2):
        share = bool(set(letters[a]) & set(letters[b]))
        assert share != significant[frozenset((a, b))], (a, b, letters)


def test_compact_letters_share_a_letter_exactly_when_no_test_separates_two_runs():
    rng = np.random.default_rng(7)
    for _ in range(200):
        m = int(rng.integers(2, 8))
        names = [f"r{k}" for k in range(m)]
        means = rng.random(m)
        order = np.argsort(-means)
        # significance that grows with the distance in rank, as tests of sorted means give
        significant = {frozenset((names[a], names[b])): bool(abs(int(np.flatnonzero(order == a)[0])
                                                                 - int(np.flatnonzero(order == b)[0]))
                                                             > rng.integers(0, m))
                       for a, b in itertools.combinations(range(m), 2)}
        letters = compact_letters(names, means, significant)
        _groups_respected(names, significant, letters)
        assert "a" in letters[names[order[0]]]   # the best run has the first letter


def test_compact_letters_of_a_textbook_case():
    # four runs, 1-2 and 3-4 significantly apart only: two overlapping groups
    names = ["w", "x", "y", "z"]
    significant = {frozenset(p): p in {("w", "y"), ("w", "z"), ("x", "z")}
                   for p in itertools.combinations(names, 2)}
    assert compact_letters(names, [4, 3, 2, 1], significant) == {"w": "a", "x": "ab", "y": "bc", "z": "c"}
    assert compact_letters(names, [1, 2, 3, 4], significant, lower_better=True) == \
        {"w": "a", "x": "ab", "y": "bc", "z": "c"}


def test_all_pairs_on_the_command_line_gives_the_paper_table(dl19):
    qrels, runs = dl19
    names = [a for n in NAMES for a in ("--name", n)]
    result = invoke("compare", qrels, *runs, *names, "-c", "-m", "ndcg_cut.10", "--all-pairs", "--test", "tukey",
                    "-o", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)["all_pairs"]
    assert len(out["pairs"]) == 10 and out["test"] == "tukey"
    letters = out["letters"]["ndcg_cut_10"]
    significant = {frozenset((p["a"], p["b"])): p["p_adjusted"] < 0.05 for p in out["pairs"]}
    _groups_respected(NAMES, significant, letters)
    assert letters["splade"] == "a" and letters["bm25"] == "b"   # the dense and learned sparse runs beat BM25
    latex = invoke("compare", qrels, *runs, *names, "-c", "-m", "ndcg_cut.10", "--all-pairs", "--test", "tukey",
                   "-o", "latex").stdout
    assert "splade & 0.7308 a \\\\" in latex and "\\begin{tabular}" in latex
    rows = invoke("compare", qrels, *runs, *names, "-c", "-m", "ndcg_cut.10", "-m", "map", "--all-pairs",
                  "-o", "csv").stdout.splitlines()
    assert len(rows) == 1 + 2 * 10 and rows[0].startswith("measure,a,b,mean_a,mean_b,delta,p_value,p_adjusted")


def test_all_pairs_with_a_paired_test_corrects_over_every_pair_and_measure(dl19):
    qrels, runs = dl19
    cmp = compare_runs(qrels, runs[:3], NAMES[:3], ["ndcg_cut.10", "map"], complete=True, all_pairs=True,
                       correction="bonferroni")
    pairs = cmp.pairs.pairs
    assert len(pairs) == 6
    for pair in pairs:
        assert pair.p_adjusted == pytest.approx(min(1.0, pair.p_value * 6))
    from scipy.stats import ttest_rel

    first = pairs[0]
    assert first.p_value == pytest.approx(ttest_rel(cmp.values["rm3"]["ndcg_cut_10"],
                                                    cmp.values["bm25"]["ndcg_cut_10"]).pvalue, rel=1e-12)


def test_tukey_without_all_pairs_gives_the_baseline_its_family_wise_p(dl19):
    qrels, runs = dl19
    cmp = compare_runs(qrels, runs, NAMES, ["ndcg_cut.10"], complete=True, test="hsd")
    p, moe = tukey_hsd(np.column_stack([cmp.values[name]["ndcg_cut_10"] for name in NAMES]))
    for j, name in enumerate(NAMES[1:], start=1):
        cell = cmp.cells[name]["ndcg_cut_10"]
        assert cell.p_adjusted == pytest.approx(p[0, j], rel=1e-12)
        assert cell.ci[1] - cell.ci[0] == pytest.approx(2 * moe, rel=1e-12)


def test_all_pairs_html_draws_the_intervals(dl19, tmp_path):
    pytest.importorskip("plotly")
    qrels, runs = dl19
    out = tmp_path / "pairs.html"
    result = invoke("compare", qrels, *runs[:3], "-m", "ndcg_cut.10", "--all-pairs", "--test", "hsd", "-o", "html",
                    "--output", out)
    assert result.exit_code == 0, result.stderr
    assert "simultaneous Tukey HSD intervals" in out.read_text()


def test_a_constant_run_pair_has_no_spread_but_no_traceback(tmp_path):
    qrels = write(tmp_path / "qrels", "q1 0 d1 1\nq2 0 d2 1\n")
    a = write(tmp_path / "a.txt", "q1 Q0 d1 1 2.0 A\nq2 Q0 d2 1 1.0 A\n")
    b = write(tmp_path / "b.txt", "q1 Q0 d1 1 2.0 B\nq2 Q0 d2 1 1.0 B\n")
    result = invoke("compare", qrels, a, b, "-m", "recip_rank", "--all-pairs", "--test", "hsd", "-o", "json")
    assert result.exit_code == 0, result.stderr
    pair = json.loads(result.stdout)["all_pairs"]["pairs"][0]
    assert pair["p_value"] == 1.0 and pair["cohens_d"] == 0.0


def test_an_unknown_test_is_one_message(tmp_path):
    qrels = write(tmp_path / "qrels", "q1 0 d1 1\n")
    a = write(tmp_path / "a.txt", "q1 Q0 d1 1 2.0 A\n")
    assert_fails(invoke("compare", qrels, a, a, "--test", "anova"), "'anova' is not one of", one_line=False)
