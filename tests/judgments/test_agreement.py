"""judgments agreement: Cohen's kappa (scikit-learn), Fleiss' kappa (statsmodels) and Krippendorff's
alpha (the krippendorff package) run on the same grades as the oracles; every output format."""

from __future__ import annotations

import csv
import io
import json
from itertools import combinations

import numpy as np
import pytest

from tests.support.helpers import assert_fails, invoke, write

RATERS = ("ana", "ben", "eva")


def _import(tmp_path, db, grades: dict[str, list[int]], scale: str) -> None:
    for rater, values in grades.items():
        lines = "".join(f"q{i % 3} 0 d{i} {g}\n" for i, g in enumerate(values))
        result = invoke("judgments", "import", write(tmp_path / f"{rater}.qrels", lines), "--set", "s",
                        "--rater", rater, "--scale", scale, "--db", db)
        assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("seed, scale, grades", [(1, "graded", (0, 1, 2, 3)), (2, "graded", (0, 1, 2, 3)),
                                                 (3, "binary", (0, 1))])
def test_agreement_equals_scikit_learn_statsmodels_and_krippendorff(tmp_path, seed, scale, grades):
    import krippendorff
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    rng = np.random.default_rng(seed)
    truth = rng.choice(grades, size=40)
    # raters agree with a hidden truth most of the time, else pick any grade
    given = {r: [int(t) if rng.random() < 0.7 else int(rng.choice(grades)) for t in truth] for r in RATERS}
    db = str(tmp_path / "h.sqlite")
    _import(tmp_path, db, given, scale)
    result = invoke("judgments", "agreement", "s", "--db", db, "-o", "json")
    assert result.exit_code == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["raters"] == list(RATERS) and figures["pairs"] == 40 and figures["rated_twice"] == 40
    weightings = (None, "linear", "quadratic") if len(grades) > 2 else (None,)
    expected = [(list(pair), w, cohen_kappa_score(given[pair[0]], given[pair[1]], labels=list(grades), weights=w))
                for pair in combinations(RATERS, 2) for w in weightings]
    assert [(k["raters"], k["weights"]) for k in figures["cohen_kappa"]] == [(p, w) for p, w, _ in expected]
    for k, (_, _, value) in zip(figures["cohen_kappa"], expected):
        assert k["kappa"] == pytest.approx(value, abs=1e-12) and k["pairs"] == 40
    table, _ = aggregate_raters(np.array([given[r] for r in RATERS]).T, n_cat=len(grades))
    assert figures["fleiss_kappa"] == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    alpha = krippendorff.alpha(reliability_data=np.array([given[r] for r in RATERS], dtype=float),
                               level_of_measurement="ordinal", value_domain=list(grades))
    assert figures["krippendorff_alpha"] == pytest.approx(alpha, abs=1e-12)
    differing = [i for i in range(40) if len({given[r][i] for r in RATERS}) > 1]
    assert [(d["query_id"], d["doc_id"]) for d in figures["disagreements"]] == sorted(
        (f"q{i % 3}", f"d{i}") for i in differing)
    assert figures["disagreements"][0]["grades"] == {r: given[r][int(figures["disagreements"][0]["doc_id"][1:])]
                                                    for r in RATERS}


def test_alpha_with_pairs_judged_by_some_raters_only(tmp_path):
    """Missing ratings: the krippendorff package takes them as nan; a pair judged once does not count."""
    import krippendorff

    given = {"ana": [0, 1, 2, 3, 3, 2], "ben": [0, 2, 2, 3, None, 1], "eva": [1, None, 2, 3, None, None]}
    db = str(tmp_path / "h.sqlite")
    for rater, values in given.items():
        lines = "".join(f"q 0 d{i} {g}\n" for i, g in enumerate(values) if g is not None)
        invoke("judgments", "import", write(tmp_path / f"{rater}.qrels", lines), "--set", "s", "--rater", rater,
               "--db", db)
    figures = json.loads(invoke("judgments", "agreement", "s", "--db", db, "-o", "json").stdout)
    data = np.array([[np.nan if g is None else g for g in given[r]] for r in RATERS], dtype=float)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3])
    assert figures["krippendorff_alpha"] == pytest.approx(expected, abs=1e-12)
    assert figures["pairs"] == 6 and figures["rated_twice"] == 5
    assert {tuple(k["raters"]): k["pairs"] for k in figures["cohen_kappa"] if k["weights"] is None} == {
        ("ana", "ben"): 5, ("ana", "eva"): 3, ("ben", "eva"): 3}


def test_every_output_format(tmp_path):
    db = str(tmp_path / "h.sqlite")
    _import(tmp_path, db, {"ana": [1, 0, 1, 1], "ben": [1, 0, 0, 1]}, "binary")
    out = {fmt: invoke("judgments", "agreement", "s", "--db", db, "-o", fmt) for fmt in
           ("table", "json", "csv", "markdown", "latex")}
    assert all(r.exit_code == 0 for r in out.values()), {f: r.stderr for f, r in out.items()}
    # by hand: 3 of 4 agree (po = .75); ana 3/4 ones, ben 2/4: pe = .75*.5 + .25*.5 = .5; kappa = .5
    assert json.loads(out["json"].stdout)["cohen_kappa"] == [{"raters": ["ana", "ben"], "kappa": 0.5,
                                                              "weights": None, "pairs": 4}]
    assert "ana" in out["table"].stdout and "0.5000" in out["table"].stdout
    rows = list(csv.reader(io.StringIO(out["csv"].stdout)))
    assert rows[0] == ["figure", "query", "document", "raters", "weights", "pairs", "value"]
    assert ["cohen_kappa", "", "", "ana ben", "none", "4", "0.5"] in rows
    assert [r[:4] for r in rows if r[0] == "disagreement"] == [["disagreement", "q2", "d2", "ana=1 ben=0"]]
    assert "| ana | ben | none | 4 | 0.5000 |" in out["markdown"].stdout
    assert "\\begin{tabular}" in out["latex"].stdout


def test_agreement_of_a_set_that_does_not_exist(tmp_path):
    db = str(tmp_path / "h.sqlite")
    _import(tmp_path, db, {"ana": [1]}, "binary")
    assert_fails(invoke("judgments", "agreement", "nope", "--db", db), "no judgment set named 'nope'")
