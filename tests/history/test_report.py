"""The comparative report, checked against the seed's example table (seed 004, "Proceso de
Evaluación Implementado y Tabla Comparativa") and by hand."""

from __future__ import annotations

import pytest

from evaltool.errors import EvaltoolError, HistoryError
from evaltool.history import record, report

MEASURES = ["recip_rank", "ndcg_cut_10", "P_5"]
# the seed's table: id, query, date, MRR, nDCG@10, Precision@5, interpretation
SEED_ROWS = [
    ("envíos a Quito", (0.833, 0.72, 0.60), "Bueno"),
    ("celulares del mes anterior", (1.000, 0.85, 0.80), "Bueno"),
    ("productos electrónicos", (0.250, 0.41, 0.20), "Mejorable"),
]
SEED_SUMMARY = (0.69, 0.66, 0.53)  # printed to 2 decimals, "3 evaluaciones", "Aceptable"


@pytest.fixture
def seed_history(db):
    for name, values, _ in SEED_ROWS:
        record({"summary": dict(zip(MEASURES, values))}, db=db, name=name, at="2025-01-28", commit=None)
    return db


@pytest.mark.parametrize("lang, rows, summary", [
    ("es", ["Bueno", "Bueno", "Mejorable"], "Aceptable"),
    ("en", ["good", "good", "poor"], "acceptable"),
])
def test_the_seeds_example_table(seed_history, lang, rows, summary):
    out = report(seed_history, "2025-01-28", "2025-01-28", labels=True, lang=lang)
    assert [(r["id"], r["name"], r["recorded_at"], r["label"]) for r in out["rows"]] == [
        (i + 1, name, "2025-01-28T00:00:00Z", label) for i, (name, _, _), label in zip(range(3), SEED_ROWS, rows)]
    assert [tuple(r["values"].values()) for r in out["rows"]] == [values for _, values, _ in SEED_ROWS]
    assert out["summary"]["count"] == 3 and out["summary"]["label"] == summary
    assert list(out["summary"]["values"]) == MEASURES
    assert tuple(round(v, 2) for v in out["summary"]["values"].values()) == SEED_SUMMARY
    assert out["summary"]["values"]["recip_rank"] == pytest.approx((0.833 + 1.0 + 0.25) / 3)
    assert (out["from"], out["to"]) == ("2025-01-28T00:00:00Z", "2025-01-28T23:59:59Z")


def test_labels_are_off_unless_asked(seed_history):
    out = report(seed_history)
    assert [r["label"] for r in out["rows"]] == [None] * 3 and out["summary"]["label"] is None
    assert (out["from"], out["to"]) == (None, None)


def test_measures_by_any_spelling_and_an_empty_range(seed_history):
    out = report(seed_history, measures=["ndcg_cut.10", "P_5"])
    assert [list(r["values"]) for r in out["rows"]] == [["ndcg_cut_10", "P_5"]] * 3
    empty = report(seed_history, "2030-01-01", "2030-12-31", labels=True)
    assert empty["rows"] == []
    assert empty["summary"] == {"count": 0, "values": {"recip_rank": None, "ndcg_cut_10": None, "P_5": None},
                                "label": None}
    with pytest.raises(HistoryError, match="-m map: no execution here has it .*recip_rank, ndcg_cut_10, P_5"):
        report(seed_history, measures=["map"])
    with pytest.raises(HistoryError, match="--from 2025-02-01 is after --to 2025-01-01"):
        report(seed_history, "2025-02-01", "2025-01-01")
    with pytest.raises(EvaltoolError, match="--lang 'fr': expected one of en, es"):
        report(seed_history, labels=True, lang="fr")


def test_means_skip_executions_without_the_measure(db):
    record({"summary": {"map": 0.2, "P_5": 0.4}}, db=db, name="a", at="2025-01-01")
    record({"summary": {"P_5": 0.6}}, db=db, name="b", at="2025-01-02")
    out = report(db)
    assert out["rows"][1]["values"] == {"map": None, "P_5": 0.6}
    assert out["summary"]["values"] == {"map": 0.2, "P_5": pytest.approx(0.5)}


def test_summary_label_uses_the_newest_executions_thresholds(db):
    record({"summary": {"recip_rank": 0.5}}, db=db, name="a", at="2025-01-01", thresholds={"recip_rank": 0.7})
    record({"summary": {"recip_rank": 0.5}}, db=db, name="a", at="2025-01-02", thresholds={"recip_rank": 0.4})
    out = report(db, labels=True)
    assert [r["label"] for r in out["rows"]] == ["poor", "good"]  # each row with its own
    assert out["summary"]["label"] == "efficient"  # mean 0.5 >= 0.4
