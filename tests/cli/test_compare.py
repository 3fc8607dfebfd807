"""``evaltool compare``: layout, alignment, the query-set policy, real DL19 runs, bad input.

Hand-made data: four queries with one relevant document each. Reciprocal ranks by hand:
run A ranks it 1, 2, 4, 1 (q1..q4) -> 1, 0.5, 0.25, 1, mean 0.6875;
run B ranks it 1, 1, 2, 2 -> 1, 1, 0.5, 0.5, mean 0.75;
B - A = 0, +0.5, +0.25, -0.5: 2 wins, 1 tie, 1 loss, delta 0.0625.
Run C answers q1..q3 only (ranks 1, 1, 1).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.stats

from evaltool.evaluation import evaluate
from tests.support.helpers import RANKS, assert_fails, invoke, require_shared, write_run

@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 dq{i} 1\n" for i in range(1, 5)))
    runs = {name: write_run(tmp_path / f"{name}.run", name, ranks) for name, ranks in RANKS.items()}
    return str(qrels), runs


def test_json_layout_and_hand_computed_cell(files):
    qrels, runs = files
    result = invoke("compare", qrels, runs["A"], runs["B"], "-m", "recip_rank", "-m", "P.5", "-o", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert list(out) == ["baseline", "test", "correction", "queries", "runs"]
    assert out["baseline"] == "A.run" and out["test"] == "t" and out["correction"] == "holm"
    assert out["queries"] == 4
    assert out["runs"]["A.run"] == {"recip_rank": {"mean": 0.6875}, "P_5": {"mean": pytest.approx(0.2)}}
    cell = out["runs"]["B.run"]["recip_rank"]
    assert set(cell) == {"mean", "delta", "p_value", "p_adjusted", "ci", "wins", "ties", "losses"}
    assert cell["mean"] == 0.75 and cell["delta"] == 0.0625
    assert (cell["wins"], cell["ties"], cell["losses"]) == (2, 1, 1)
    d = np.array([0, 0.5, 0.25, -0.5])
    assert cell["p_value"] == pytest.approx(scipy.stats.ttest_rel(d, np.zeros(4)).pvalue, rel=1e-12)
    # P_5 is 0.2 everywhere: identical, p = 1; Holm over the two cells: min(1, 2 * p_min) for the smaller
    assert out["runs"]["B.run"]["P_5"]["p_value"] == 1.0
    assert cell["p_adjusted"] == pytest.approx(min(1.0, 2 * cell["p_value"]))
    assert cell["ci"] == pytest.approx(list(scipy.stats.ttest_1samp(d, 0).confidence_interval(0.95)))


def test_table_marks_significant_cells_and_states_the_policy(files, tmp_path):
    qrels, runs = files
    # run D: the relevant document at rank 5 everywhere (RR 0.2); B beats it on every query
    worse = write_run(tmp_path / "D.run", "D", {f"q{i}": 5 for i in range(1, 5)})
    result = invoke("compare", qrels, worse, runs["B"], "-m", "recip_rank", "-c")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["run", "recip_rank"]
    assert lines[1].split() == ["D.run", "0.2000"]
    assert lines[2].split() == ["B.run", "0.7500", "(+0.5500)*"]  # t = 0.55 / (0.2887 / 2) = 3.81, 3 df: p = 0.032
    assert "4 queries: every query judged in" in result.stdout and "(-c:" in result.stdout
    assert "paired t-test" in result.stdout and "Holm" in result.stdout


def test_queries_are_aligned_and_the_left_out_ones_named(files):
    qrels, runs = files
    result = invoke("compare", qrels, runs["A"], runs["C"], "-m", "recip_rank", "-o", "json")
    out = json.loads(result.stdout)
    assert "1 judged query left out of the comparison" in result.stderr and "(q4)" in result.stderr
    # q4 is missing from C: compared on q1..q3; A's mean over those is (1 + 0.5 + 0.25) / 3
    assert out["queries"] == 3
    assert out["runs"]["A.run"]["recip_rank"]["mean"] == pytest.approx(1.75 / 3)
    assert out["runs"]["C.run"]["recip_rank"]["mean"] == 1.0
    text = invoke("compare", qrels, runs["A"], runs["C"], "-m", "recip_rank").stdout
    assert "3 queries: judged in" in text and "1 of A.run's (q4)" in text and "-c scores them" in text
    # with -c all four count, q4 scoring 0 for C as trec_eval scores a missing query
    out = json.loads(invoke("compare", qrels, runs["A"], runs["C"], "-m", "recip_rank", "-c", "-o", "json").stdout)
    assert out["queries"] == 4 and out["runs"]["C.run"]["recip_rank"]["mean"] == 0.75


def test_names_and_measure_defaults(files):
    qrels, runs = files
    out = json.loads(invoke("compare", qrels, runs["A"], runs["B"], "--name", "base", "--name", "new",
                            "-o", "json").stdout)
    assert list(out["runs"]) == ["base", "new"]
    assert list(out["runs"]["base"]) == ["map", "recip_rank", "P_10", "ndcg_cut_10"]


@pytest.mark.parametrize("test", ["randomization", "bootstrap", "wilcoxon"])
def test_seeded_tests_repeat_exactly(files, test):
    qrels, runs = files
    args = ["compare", qrels, runs["A"], runs["B"], "-m", "recip_rank", "--test", test, "--trials", "500", "-o", "json"]
    first, again = invoke(*args, "--seed", "4").stdout, invoke(*args, "--seed", "4").stdout
    assert first == again
    cell = json.loads(first)["runs"]["B.run"]["recip_rank"]
    assert cell["ci"][0] <= 0.0625 <= cell["ci"][1]
    if test != "wilcoxon":  # p = (c + 1) / (trials + 1)
        assert round(cell["p_value"] * 501) == pytest.approx(cell["p_value"] * 501)


# ---------------------------------------------------------------- real data: TREC DL 2019 passage

DL19_RUNS = ["BM25", "BM25_RM3", "SPLADE_P_P_ENSEMBLE_DISTIL"]
DL19_MEASURES = ["map", "recip_rank", "ndcg_cut_10"]


@pytest.fixture(scope="module")
def dl19():
    folder = require_shared("realdata")
    qrels = folder / "qrels" / "qrels.dl19-passage.txt"
    runs = [folder / "runs" / f"{name}.trec_results_dl19.txt" for name in DL19_RUNS]
    singles = [evaluate(qrels, run, ["ndcg_cut.10", "map", "recip_rank"], complete=True) for run in runs]
    return qrels, runs, singles


def _compare_json(qrels, runs, *options):
    result = invoke("compare", qrels, *runs, "-c", "-m", "ndcg_cut.10", "-m", "map", "-m", "recip_rank",
                    "-o", "json", *options)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _per_query(single, measure):
    return np.array([single.per_query[q][measure] for q in single.qids])


def test_dl19_means_are_those_of_single_run_evaluation(dl19):
    qrels, runs, singles = dl19
    out = _compare_json(qrels, runs)
    assert out["queries"] == 43
    for run, single in zip(runs, singles):
        for measure in DL19_MEASURES:
            assert out["runs"][run.name][measure]["mean"] == single.summary[measure]


@pytest.mark.parametrize("test,scipy_test", [("t", scipy.stats.ttest_rel), ("wilcoxon", scipy.stats.wilcoxon)])
def test_dl19_p_values_are_scipys_on_the_per_query_values(dl19, test, scipy_test):
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    qrels, runs, singles = dl19
    out = _compare_json(qrels, runs, "--test", test)
    assert all(s.qids == singles[0].qids for s in singles)
    p_values = []
    for run, single in zip(runs[1:], singles[1:]):
        for measure in DL19_MEASURES:
            expected = scipy_test(_per_query(single, measure), _per_query(singles[0], measure)).pvalue
            assert out["runs"][run.name][measure]["p_value"] == pytest.approx(expected, rel=1e-12)
            p_values.append(expected)
    adjusted = multipletests(p_values, method="holm")[1]
    got = [out["runs"][run.name][m]["p_adjusted"] for run in runs[1:] for m in DL19_MEASURES]
    np.testing.assert_allclose(got, adjusted, rtol=1e-12)


def test_dl19_pinned_p_values(dl19):
    """scipy 1.17's values on these files, pinned so that a change of data or alignment shows."""
    qrels, runs, _ = dl19
    t = _compare_json(qrels, runs)["runs"]
    wilcoxon = _compare_json(qrels, runs, "--test", "wilcoxon")["runs"]
    rm3, splade = runs[1].name, runs[2].name
    assert t[rm3]["map"]["p_value"] == pytest.approx(0.000625517, rel=1e-5)
    assert t[rm3]["ndcg_cut_10"]["p_value"] == pytest.approx(0.364120, rel=1e-5)
    assert t[splade]["ndcg_cut_10"]["p_value"] == pytest.approx(2.26914e-06, rel=1e-5)
    assert wilcoxon[rm3]["recip_rank"]["p_value"] == pytest.approx(0.528738, rel=1e-5)
    assert wilcoxon[splade]["map"]["p_value"] == pytest.approx(1.65101e-05, rel=1e-5)
    assert (t[rm3]["map"]["wins"], t[rm3]["map"]["ties"], t[rm3]["map"]["losses"]) == (26, 1, 16)


# ---------------------------------------------------------------- bad input


def test_fewer_than_two_runs(files):
    qrels, runs = files
    assert_fails(invoke("compare", qrels, runs["A"]), "compare needs at least 2 runs", "got 1")
    assert_fails(invoke("compare", qrels), "compare needs at least 2 runs", "got 0")


def test_missing_run_file_is_named(files, tmp_path):
    qrels, runs = files
    missing = tmp_path / "nope.run"
    assert_fails(invoke("compare", qrels, runs["A"], missing), f"cannot read {missing}")


def test_bad_run_line_is_named(files, tmp_path):
    qrels, runs = files
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 x tag\n")
    assert_fails(invoke("compare", qrels, runs["A"], bad), f"{bad}:1:", "finite number")


def test_no_comparable_measure(files):
    qrels, runs = files
    assert_fails(invoke("compare", qrels, runs["A"], runs["B"], "-m", "num_ret"), "compare needs such a measure")


def test_run_given_twice_and_name_count(files):
    qrels, runs = files
    assert_fails(invoke("compare", qrels, runs["A"], runs["A"]), "given twice")
    assert_fails(invoke("compare", qrels, runs["A"], runs["B"], "--name", "x"), "1 names for 2 runs")
