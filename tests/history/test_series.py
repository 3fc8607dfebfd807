"""One series per measure across spellings, and each measure's direction, in report, diff and check.

Expected values: the seed's comparative table (tests/support/dashboard_data.py: MRR, nDCG@10 and
Precision@5 of three evaluations, whose summary is "Aceptable"), and hand-made numbers.
"""

from __future__ import annotations

import json

import pytest

from evaltool.history import check, diff, record, report
from tests.support.dashboard_data import SEED
from tests.support.helpers import invoke


def _record(db, summary, name="nightly", at="2025-01-01", per_query=None):
    return record({"summary": summary, "per_query": per_query or {}}, db=db, name=name, at=at, fingerprints={},
                  commit=None)


def test_a_change_of_spelling_does_not_split_the_series(db):
    """ndcg_cut.10 (printed ndcg_cut_10) recorded, then nDCG@10: the fall from 0.73 to 0.51 is caught."""
    _record(db, {"ndcg_cut_10": 0.73, "recip_rank": 0.9}, at="2025-01-01")
    _record(db, {"nDCG@10": 0.51, "mrr": 0.9}, at="2025-01-02")
    done = invoke("history", "check", "--db", db, "--name", "nightly", "-o", "json")
    assert done.exit_code == 1, done.stdout + done.stderr
    rows = {r["measure"]: r for r in json.loads(done.stdout)["measures"]}
    assert set(rows) == {"nDCG@10", "mrr"}  # shown as the latest spelled them
    assert rows["nDCG@10"]["reference"] == 0.73 and rows["nDCG@10"]["dropped"]
    assert rows["nDCG@10"]["delta"] == pytest.approx(-0.22) and not rows["mrr"]["dropped"]
    out = report(db)
    assert [list(r["values"].items()) for r in out["rows"]] == [[("nDCG@10", 0.73), ("mrr", 0.9)],
                                                                [("nDCG@10", 0.51), ("mrr", 0.9)]]
    assert out["summary"]["values"] == {"nDCG@10": pytest.approx(0.62), "mrr": pytest.approx(0.9)}
    for spelling in ("ndcg_cut.10", "ndcg@10", "ndcg_cut_10", "nDCG@10"):
        assert list(report(db, measures=[spelling])["summary"]["values"]) == ["nDCG@10"]


def test_diff_pairs_a_measure_across_spellings(db):
    first = _record(db, {"ndcg_cut_10": 0.5}, at="2025-01-01",
                    per_query={"q1": {"ndcg_cut_10": 0.2}, "q2": {"ndcg_cut_10": 0.8}})
    second = _record(db, {"ndcg@10": 0.6}, at="2025-01-02", per_query={"q1": {"ndcg@10": 0.4}, "q2": {"ndcg@10": 0.8}})
    out = diff(db, first, second)
    assert list(out["measures"]) == ["ndcg@10"]
    cell = out["measures"]["ndcg@10"]
    assert (cell["mean_a"], cell["mean_b"], cell["wins"], cell["ties"], cell["losses"]) == (0.5, pytest.approx(0.6), 1, 1, 0)
    assert cell["spellings"] == ["ndcg_cut_10", "ndcg@10"] and cell["better"] == "higher"


@pytest.mark.parametrize("measure", ["FirstRelPos", "ARP"])
def test_lower_is_better_for_ranks(db, measure):
    """FirstRelPos and ARP falling is an improvement: check holds; rising is a drop; best is the lowest."""
    _record(db, {measure: 3.0, "P_5": 0.4}, at="2025-01-01")
    _record(db, {measure: 2.0, "P_5": 0.4}, at="2025-01-02")
    verdict = check(db, "nightly")
    assert verdict.ok and [(r["measure"], r["delta"], r["better"], r["dropped"]) for r in verdict.rows] == [
        (measure, -1.0, "lower", False), ("P_5", 0.0, "higher", False)]
    _record(db, {measure: 2.5, "P_5": 0.4}, at="2025-01-03")
    assert not check(db, "nightly").ok
    best = check(db, "nightly", against="best")
    assert [(r["measure"], r["reference"]) for r in best.dropped] == [(measure, 2.0)]
    assert invoke("history", "check", "--db", db, "--name", "nightly").exit_code == 1


def test_diff_counts_wins_of_ranks_downwards(db):
    first = _record(db, {"FirstRelPos": 2.0}, at="2025-01-01",
                    per_query={"q1": {"FirstRelPos": 1.0}, "q2": {"FirstRelPos": 3.0}, "q3": {"FirstRelPos": 2.0}})
    second = _record(db, {"FirstRelPos": 2.0}, at="2025-01-02",
                     per_query={"q1": {"FirstRelPos": 2.0}, "q2": {"FirstRelPos": 1.0}, "q3": {"FirstRelPos": 1.0}})
    cell = diff(db, first, second)["measures"]["FirstRelPos"]
    assert (cell["wins"], cell["ties"], cell["losses"], cell["better"]) == (2, 0, 1, "lower")


def test_counts_are_not_quality_even_recorded_from_json(db):
    """A result recorded from its JSON carries no aggregates: num_ret and num_rel_ret are still counts
    (the registry says so), so fewer documents retrieved is no drop; named with -m, a count is held
    to its reference both ways."""
    _record(db, {"num_ret": 1000, "num_rel_ret": 50, "map": 0.3}, at="2025-01-01")
    _record(db, {"num_ret": 900, "num_rel_ret": 40, "map": 0.3}, at="2025-01-02")
    verdict = check(db, "nightly")
    assert verdict.ok and [r["measure"] for r in verdict.rows] == ["map"]
    named = check(db, "nightly", measures=["num_ret", "map"])
    assert [(r["measure"], r["better"], r["dropped"]) for r in named.rows] == [
        ("num_ret", "neither", True), ("map", "higher", False)]


def test_the_summary_label_reads_the_seeds_spellings(db):
    """The seed's table recorded as it spells its measures (mrr, ndcg@10, precision@5): each row's label
    and the summary's, from the means 0.69 / 0.66 / 0.53 (two of three thresholds hold: Aceptable)."""
    for i, (_, mrr, ndcg, p5) in enumerate(SEED):
        _record(db, {"mrr": mrr, "ndcg@10": ndcg, "precision@5": p5}, name=f"q{i}", at="2025-01-28")
    out = report(db, labels=True, lang="es")
    assert [r["label"] for r in out["rows"]] == ["Bueno", "Bueno", "Mejorable"]
    assert out["summary"]["label"] == "Aceptable"
    assert report(db, labels=True)["summary"]["label"] == "acceptable"
    for spelling in ("mrr", "recip_rank", "MRR", "RR"):
        assert list(report(db, measures=[spelling])["summary"]["values"]) == ["mrr"]
    done = invoke("history", "report", "--db", db, "-m", "recip_rank", "-m", "P.5", "--lang", "es", "-o", "json")
    assert done.exit_code == 0, done.stderr
    assert list(json.loads(done.stdout)["summary"]["values"]) == ["mrr", "precision@5"]
