"""`evaltool judgments calibrate`: a model's judgments against people's, on a constructed case.

The oracles: scikit-learn's ``cohen_kappa_score`` (kappa), scipy's ``kendalltau`` (tau-b) and
a hand computation of tau-AP (Yilmaz, Aslam and Robertson 2008) on a small ranking.
"""

from __future__ import annotations

import json

import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from evaltool.evaluation import evaluate
from evaltool.judgments.calibration import agreement_figures, calibrate, kendall_tau, tau_ap
from tests.support.helpers import assert_fails, invoke

# 24 pairs over 4 queries: the model agrees on 16, is one grade more lenient on 5, two grades harsher on 3
HUMAN = [3, 2, 1, 0, 0, 1, 2, 3, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 0, 1, 2, 3]
MODEL = [3, 2, 1, 0, 1, 2, 3, 3, 0, 0, 1, 2, 1, 3, 2, 2, 1, 0, 1, 0, 0, 1, 2, 1]
PAIRS = [(f"q{i // 6}", f"d{i}") for i in range(len(HUMAN))]


def test_kappa_confusion_and_mean_difference_on_a_constructed_case():
    human, model = dict(zip(PAIRS, HUMAN)), dict(zip(PAIRS, MODEL))
    model[("q9", "only-model")] = 2  # judged by one side only: not compared
    figures = agreement_figures(human, model, (0, 1, 2, 3))
    assert figures["pairs"] == 24 and (figures["human_only"], figures["model_only"]) == (0, 1)
    assert figures["weights"] == "linear"
    assert figures["cohen_kappa"] == pytest.approx(cohen_kappa_score(HUMAN, MODEL, labels=[0, 1, 2, 3],
                                                                      weights="linear"), abs=1e-12)
    for weights in ("linear", "quadratic"):
        assert figures["cohen_kappa_by_weights"][weights] == \
               pytest.approx(cohen_kappa_score(HUMAN, MODEL, labels=[0, 1, 2, 3], weights=weights), abs=1e-12)
    assert figures["cohen_kappa_by_weights"]["unweighted"] == pytest.approx(cohen_kappa_score(HUMAN, MODEL), abs=1e-12)
    confusion = [[0] * 4 for _ in range(4)]
    for h, m in zip(HUMAN, MODEL):
        confusion[h][m] += 1  # rows: human grade, columns: model grade
    assert figures["confusion"] == confusion
    assert figures["exact_agreement"] == pytest.approx(sum(h == m for h, m in zip(HUMAN, MODEL)) / 24)
    assert figures["exact_agreement"] == 16 / 24
    assert figures["mean_difference"] == pytest.approx((5 * 1 - 3 * 2) / 24)


def test_a_binary_scale_uses_the_unweighted_kappa():
    human = {p: g % 2 for p, g in zip(PAIRS, HUMAN)}
    model = {p: g % 2 for p, g in zip(PAIRS, MODEL)}
    figures = agreement_figures(human, model, (0, 1))
    assert figures["weights"] is None
    assert figures["cohen_kappa"] == pytest.approx(cohen_kappa_score([h % 2 for h in HUMAN], [m % 2 for m in MODEL]))


def test_tau_ap_by_hand():
    # truth A B C D E; the model says B A C E D. Reading the model's ranking from the top:
    # A: of {B} above it, 0 are above A in truth -> 0/1; C: {B, A} -> 2/2; E: {B, A, C} -> 3/3;
    # D: {B, A, C, E} -> 3/4.  tau_AP = 2/4 * (0 + 1 + 1 + 0.75) - 1 = 0.375
    assert tau_ap(list("ABCDE"), list("BACED")) == pytest.approx(0.375)
    assert tau_ap(list("ABCDE"), list("ABCDE")) == 1.0
    assert tau_ap(list("ABCDE"), list("EDCBA")) == -1.0
    # a swap at the top costs more than a swap at the bottom; Kendall's tau sees them alike
    assert tau_ap(list("ABCDE"), list("BACDE")) < tau_ap(list("ABCDE"), list("ABCED"))
    assert kendall_tau([5, 4, 3, 2, 1], [4, 5, 3, 2, 1]) == kendall_tau([5, 4, 3, 2, 1], [5, 4, 3, 1, 2])


@pytest.mark.parametrize("first, second", [
    ([0.5, 0.4, 0.3, 0.2, 0.1, 0.05], [0.45, 0.5, 0.2, 0.3, 0.1, 0.01]),
    ([0.5, 0.4, 0.4, 0.2, 0.1], [0.3, 0.3, 0.2, 0.2, 0.1]),  # ties in both
    ([1, 2, 3], [3, 2, 1]),
])
def test_kendall_tau_is_scipys_tau_b(first, second):
    assert kendall_tau(first, second) == pytest.approx(kendalltau(first, second).statistic, abs=1e-12)


def _runs(tmp_path) -> dict:
    """Five systems ranking the 24 documents differently."""
    orders = {"bm25": [0, 1, 2, 3, 4, 5], "dense": [5, 4, 3, 2, 1, 0], "mixed": [1, 0, 3, 2, 5, 4],
              "top2": [3, 1, 0, 2, 5, 4], "late": [4, 5, 0, 1, 2, 3]}
    paths = {}
    for name, order in orders.items():
        lines = []
        for q in range(4):
            for rank, k in enumerate(order):
                lines.append(f"q{q} Q0 d{q * 6 + k} {rank + 1} {10 - rank} {name}\n")
        path = tmp_path / f"{name}.txt"
        path.write_text("".join(lines))
        paths[name] = str(path)
    return paths


def test_rankings_of_the_systems_under_each_set(tmp_path):
    runs = _runs(tmp_path)
    human, model = dict(zip(PAIRS, HUMAN)), dict(zip(PAIRS, MODEL))
    figures = calibrate(human, model, (0, 1, 2, 3), runs=runs, measure="ndcg_cut_10")

    def scores(grades):
        qrels = {}
        for (q, d), g in grades.items():
            qrels.setdefault(q, {})[d] = g
        return {name: evaluate(qrels, path, ["ndcg_cut_10"]).summary["ndcg_cut_10"] for name, path in runs.items()}

    by_human, by_model = scores(human), scores(model)
    names = sorted(runs)
    assert figures["kendall_tau"] == pytest.approx(
        kendalltau([by_human[n] for n in names], [by_model[n] for n in names]).statistic, abs=1e-12)
    human_order = sorted(names, key=lambda n: (-by_human[n], n))
    model_order = sorted(names, key=lambda n: (-by_model[n], n))
    assert [r["system"] for r in figures["rankings"]["human"]] == human_order
    assert [r["system"] for r in figures["rankings"]["model"]] == model_order
    assert human_order != model_order  # the constructed case does swap systems
    assert figures["tau_ap"] == pytest.approx(tau_ap(human_order, model_order))
    moved = {s["system"]: s["shift"] for s in figures["swaps"]}
    assert moved == {n: model_order.index(n) - human_order.index(n) for n in names
                     if model_order.index(n) != human_order.index(n)}


def test_the_rankings_use_the_pairs_both_judged_unless_all_pairs(tmp_path):
    runs = _runs(tmp_path)
    human, model = dict(zip(PAIRS, HUMAN)), dict(zip(PAIRS, MODEL))
    sample = {p: g for p, g in human.items() if int(p[1][1:]) % 2 == 0}  # people judged every other document
    common = calibrate(sample, model, (0, 1, 2, 3), runs=runs)
    assert common["ranked_on"] == "pairs both judged"
    restricted = {p: g for p, g in model.items() if p in sample}
    assert common["rankings"] == calibrate(sample, restricted, (0, 1, 2, 3), runs=runs)["rankings"]
    whole = calibrate(sample, model, (0, 1, 2, 3), runs=runs, all_pairs=True)
    assert whole["ranked_on"] == "all pairs"
    assert [r["score"] for r in whole["rankings"]["model"]] != [r["score"] for r in common["rankings"]["model"]]


@pytest.fixture
def sets(tmp_path):
    db = str(tmp_path / "h.sqlite")
    people = tmp_path / "people.qrels"
    people.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in zip(PAIRS, HUMAN)))
    machine = tmp_path / "model.qrels"
    machine.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in zip(PAIRS, MODEL)))
    for path, name, rater in ((people, "people", "ana"), (machine, "model", "llm:fake")):
        result = invoke("judgments", "import", path, "--set", name, "--rater", rater, "--scale", "graded", "--db", db)
        assert result.exit_code == 0, result.stderr
    return {"db": db, "people": str(people), "tmp": tmp_path}


def test_the_command_prints_the_issues_json_keys(sets):
    runs = _runs(sets["tmp"])
    result = invoke("judgments", "calibrate", "model", "people", "--db", sets["db"], "--runs", *runs.values(),
                    "-o", "json")
    assert result.exit_code == 0, result.stderr
    figures = json.loads(result.stdout)
    assert {"cohen_kappa", "confusion", "pairs", "kendall_tau", "tau_ap", "rankings"} <= set(figures)
    assert set(figures["rankings"]) == {"human", "model"}
    assert figures["pairs"] == 24
    assert figures["cohen_kappa"] == pytest.approx(cohen_kappa_score(HUMAN, MODEL, weights="linear"), abs=1e-12)
    # a qrels file on the human side gives the same figures
    from_file = invoke("judgments", "calibrate", "model", sets["people"], "--db", sets["db"], "--runs",
                       *runs.values(), "-o", "json")
    assert json.loads(from_file.stdout) | {"human_set": "people"} == figures


def test_one_set_holding_people_and_the_model_is_split_by_rater(sets):
    model = sets["tmp"] / "model.qrels"
    assert invoke("judgments", "import", model, "--set", "people", "--rater", "llm:fake", "--db",
                  sets["db"]).exit_code == 0
    result = invoke("judgments", "calibrate", "people", "people", "--db", sets["db"], "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["cohen_kappa"] == pytest.approx(cohen_kappa_score(HUMAN, MODEL, weights="linear"))


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown", "latex"])
def test_every_output_format(sets, fmt):
    runs = _runs(sets["tmp"])
    result = invoke("judgments", "calibrate", "model", "people", "--db", sets["db"], "--runs", *runs.values(),
                    "-o", fmt)
    assert result.exit_code == 0, result.stderr
    assert "bm25" in result.stdout and ("kendall" in result.stdout)


def test_bad_requests_are_one_message(sets):
    assert_fails(invoke("judgments", "calibrate", "model", "people", "--db", sets["db"], "x.txt"), "--runs")
    assert_fails(invoke("judgments", "calibrate", "model", "nope", "--db", sets["db"]), "nope")
    assert_fails(invoke("judgments", "calibrate", "model", "people", "--db", sets["db"], "--executions", "a", "b"),
                 "execution ids")
