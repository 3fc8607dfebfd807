"""The calibration page, in-process: the figures of `judgments calibrate` on stored executions, the
confusion matrix and the two rankings side by side, English and Spanish, operators only."""

from __future__ import annotations

import json

import pytest
from sklearn.metrics import cohen_kappa_score

from evaltool.history import get_execution
from tests.support.dashboard_data import XSS, dashboard_client
from tests.support.helpers import ROOT, invoke, write
from tests.support.workbench_helpers import page_text

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

OPERATOR, ANA = "op-s3cret", "ana-s3cret"


def bearer(secret: str) -> dict:
    return {"authorization": f"Bearer {secret}"}


def _record(tmp_path, db, backend) -> int:
    ran = invoke("bench", ROOT / "data" / "bench_queries.json", "--backend", backend, "--out", tmp_path / "out",
                 "--record", "--db", db)
    assert ran.exit_code == 0, ran.stderr
    return int(json.loads(invoke("history", "list", "--db", db, "-o", "json").stdout)[-1]["id"])


@pytest.fixture
def calibrated(tmp_path):
    """Three stored executions (BM25, its lists reversed, rotated) and two sets on BM25's top 5 per query:
    people's grades, and a model that is one grade off on every third pair."""
    db = str(tmp_path / "h.sqlite")
    first = _record(tmp_path, db, "evaltool.bench.examples:bm25_search")
    stored = get_execution(db, first, results=True).results
    for name, reorder in (("reversed", lambda docs: docs[::-1]), ("rotated", lambda docs: docs[3:] + docs[:3])):
        lines = [f"{r['query_id']} Q0 {d} {i + 1} {100 - i} {name}\n" for r in stored
                 for i, d in enumerate(reorder([x["doc_id"] for x in sorted(r["documents"], key=lambda x: x["rank"])]))]
        _record(tmp_path, db, write(tmp_path / f"{name}.run", "".join(lines)))
    human, model = [], []
    for r in stored:
        for d in sorted(r["documents"], key=lambda x: x["rank"])[:5]:
            grade = max(0, 3 - d["rank"] // 2)
            off = len(human) % 3 == 0
            human.append((r["query_id"], d["doc_id"], grade))
            model.append((r["query_id"], d["doc_id"], min(3, grade + 1) if off else grade))
    for name, rater, grades in (("people", "ana", human), ("model" + XSS, "llm:fake", model)):
        text = "".join(f"{q} 0 {d} {g}\n" for q, d, g in grades)
        made = invoke("judgments", "import", write(tmp_path / f"{rater}.qrels", text), "--set", name, "--rater",
                      rater, "--scale", "graded", "--db", db)
        assert made.exit_code == 0, made.stderr
    from evaltool.history import open_history
    from evaltool.server import create_app
    from evaltool.server.auth import Access

    history = open_history(db)
    app = create_app(history, access=Access.from_specs([f"ci={OPERATOR}"], raters=[f"ana={ANA}"]))
    with dashboard_client(app) as client:
        client.grades = ([g for _, _, g in human], [g for _, _, g in model])
        yield client
    history.close()


def test_the_page_and_its_json_show_the_calibration(calibrated):
    address = "/api/judging/calibration?model=model" + XSS + "&human=people&executions=1,2,3"
    answer = calibrated.get(address, headers=bearer(OPERATOR))
    assert answer.status_code == 200, answer.text
    data = answer.json()
    figures = data["figures"]
    human, model = calibrated.grades
    assert figures["pairs"] == len(human)
    assert figures["cohen_kappa"] == pytest.approx(cohen_kappa_score(human, model, weights="linear"), abs=1e-12)
    assert sum(map(sum, figures["confusion"])) == len(human)
    assert figures["rankings"]["human"][0]["system"] == "bm25_search #1"  # it ranks first by design
    assert {"kendall_tau", "tau_ap", "swaps"} <= set(figures)
    page = calibrated.get(address.removeprefix("/api"), headers=bearer(OPERATOR))
    assert page.status_code == 200
    assert XSS not in page.text  # the set's name is escaped
    text = page_text(page.text)
    for words in ("Confusion matrix", "with people's judgments", "with the model's judgments", "Kendall's tau"):
        assert words in text
    spanish = page_text(calibrated.get(address.removeprefix("/api") + "&lang=es", headers=bearer(OPERATOR)).text)
    for words in ("Matriz de confusión", "con los juicios de las personas", "con los juicios del modelo"):
        assert words in spanish


def test_without_sets_chosen_the_page_offers_them(calibrated):
    data = calibrated.get("/api/judging/calibration", headers=bearer(OPERATOR)).json()
    assert data["figures"] is None and "people" in data["sets"]
    assert "<select" in calibrated.get("/judging/calibration", headers=bearer(OPERATOR)).text


def test_a_rater_may_not_see_peoples_grades_and_bad_requests_are_400(calibrated):
    assert calibrated.get("/api/judging/calibration?model=people&human=people", headers=bearer(ANA)).status_code == 403
    assert calibrated.get("/api/judging/calibration?model=nope&human=people",
                          headers=bearer(OPERATOR)).status_code == 404
    assert calibrated.get("/api/judging/calibration?model=people&human=people&executions=1;drop",
                          headers=bearer(OPERATOR)).status_code == 400
    assert calibrated.get("/api/judging/calibration?model=people&human=people&measure=nonsense&executions=1,2",
                          headers=bearer(OPERATOR)).status_code == 400
