"""Judging in the dashboard, in-process: who may judge and make tasks, what a rater sees (never another
rater's grade), saving at each judgment, the agreement page, "judge what nobody judged", Spanish."""

from __future__ import annotations

import re

import pytest

from tests.support.dashboard_data import XSS, dashboard_client
from tests.support.workbench_helpers import english_in, log_in, page_text

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

OPERATOR, ANA, BEN = "op-s3cret", "ana-s3cret", "ben-s3cret"


def bearer(secret: str) -> dict:
    return {"authorization": f"Bearer {secret}"}


@pytest.fixture
def served(tmp_path):
    from evaltool.history import open_history
    from evaltool.judgments.pool import depth_pool
    from evaltool.judgments.tasks import create_task
    from evaltool.server import create_app
    from evaltool.server.auth import Access

    history = open_history(str(tmp_path / "history.sqlite"), create=True)
    pool = depth_pool([{"q1": ["d1", "d2", "d3"], "q2": ["d4", "d5"]}], 10)
    create_task(history, "helpdesk", pool, name="round 1", ratings_wanted=2,
                queries={"q1": {"text": "flat tyre", "description": XSS, "narrative": "Any repair counts."},
                         "q2": {"text": "wifi slow"}})
    corpus = {"d1": ("Fixing a puncture", "Find the hole, patch it " + XSS), "d4": ("Wifi channels", "Pick 1, 6 or 11")}
    app = create_app(history, access=Access.from_specs([f"ci={OPERATOR}"], raters=[f"ana={ANA}", f"ben={BEN}"]),
                     corpus=corpus)
    with dashboard_client(app) as client:
        client.history = history
        yield client
    history.close()


def _judge(client, secret, query, doc, grade, status=200):
    answer = client.post("/api/judging/1/judge", headers=bearer(secret),
                         json={"query_id": query, "doc_id": doc, "grade": grade})
    assert answer.status_code == status, answer.text
    return answer.json()


def test_a_rater_judges_and_never_sees_another_raters_grade(served):
    saved = _judge(served, ANA, "q1", "d1", 3)
    assert (saved["grade"], saved["label"], saved["mine"], saved["pairs"], saved["done"]) == (3, "3", 1, 5, 0)
    _judge(served, BEN, "q1", "d1", 1)
    _judge(served, BEN, "q1", "d2", "2")
    ana = served.get("/api/judging/1", headers=bearer(ANA)).json()
    assert [(d["doc_id"], d["grade"]) for d in ana["query"]["documents"]] == [("d1", 3), ("d2", None), ("d3", None)]
    assert ana["next"] == ["q1", "d2"] and ana["mine"] == 1 and ana["progress"]["done"] == 1  # d1: two raters
    ben_page = served.get("/api/judging/1?query=q1", headers=bearer(BEN)).json()
    assert [d["grade"] for d in ben_page["query"]["documents"]] == [1, 2, None]
    # ana's agreement page: only the pairs she graded, so she learns no grade of a pair before giving hers
    figures = served.get("/api/judging/sets/helpdesk", headers=bearer(ANA)).json()
    assert figures["only_mine"] is True and figures["pairs"] == 1
    assert figures["disagreements"] == [{"query_id": "q1", "doc_id": "d1", "grades": {"ana": 3, "ben": 1}}]
    everything = served.get("/api/judging/sets/helpdesk", headers=bearer(OPERATOR)).json()
    assert everything["only_mine"] is False and everything["pairs"] == 2
    # a new grade replaces the rater's own only
    _judge(served, ANA, "q1", "d1", 1)
    from evaltool.judgments import read_judgments

    assert [(j.rater, j.grade) for j in read_judgments(served.history, "helpdesk", query_id="q1")] == [
        ("ana", 1), ("ben", 1), ("ben", 2)]


def test_who_may_do_what(served):
    assert served.post("/api/judging/1/judge", json={"query_id": "q1", "doc_id": "d1", "grade": 1}).status_code == 401
    assert served.get("/api/judging/1").status_code == 401
    _judge(served, ANA, "q9", "d1", 1, status=404)  # not a pair of the task
    _judge(served, ANA, "q1", "d1", 7, status=400)  # not on the scale
    assert "grade 7 is not on the graded scale" in served.post(
        "/api/judging/1/judge", headers=bearer(ANA), json={"query_id": "q1", "doc_id": "d1", "grade": 7}).json()["error"]
    assert served.get("/api/judging/9", headers=bearer(ANA)).status_code == 404
    # a rater may not make tasks, nor download the consensus of others' grades
    assert served.post("/api/executions/1/judging", headers=bearer(ANA), json={"set": "s"}).status_code == 403
    assert served.get("/judging/sets/helpdesk/qrels.txt", headers=bearer(ANA)).status_code == 403
    # a browser's form without the session's CSRF token is refused
    log_in(served, ANA)
    refused = served.post("/api/judging/1/judge", data={"query_id": "q1", "doc_id": "d1", "grade": "1"})
    assert refused.status_code == 403 and "CSRF" in refused.text
    from evaltool.history import list_audit

    assert [(a.actor, a.action, a.subject_kind) for a in list_audit(served.history, "task")] == []


def test_the_rater_page_with_and_without_script(served):
    assert served.get("/judging/1", follow_redirects=False).status_code == 303  # sign in first
    csrf = log_in(served, ANA)
    page = served.get("/judging/1").text
    assert "Fixing a puncture" in page and "Find the hole, patch it &lt;img" in page and "<img src=x" not in page
    assert "Any repair counts." in page and 'class="doc current"' in page
    assert re.search(r'data-judging="/api/judging/1/judge"', page) and f'data-csrf="{csrf}"' in page
    # the form alone (no script): the grade saved, back to the page with the next document current
    done = served.post("/api/judging/1/judge", data={"csrf_token": csrf, "query_id": "q1", "doc_id": "d1",
                                                     "grade": "2"}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/judging/1?query=q1"
    page = served.get("/judging/1").text
    current = re.search(r'<article class="doc current"[^>]*data-doc="([^"]+)"', page).group(1)
    assert current == "d2" and "Your grade: highly relevant" in page
    # the script's request (a form asking for JSON) gets the JSON answer
    answer = served.post("/api/judging/1/judge", data={"query_id": "q1", "doc_id": "d2", "grade": "0"},
                         headers={"x-csrf-token": csrf, "accept": "application/json"})
    assert answer.json()["mine"] == 2
    from evaltool.history import list_audit

    assert [(a.actor, a.role, a.action) for a in list_audit(served.history, "task", "1")] == [
        ("ana", "rater", "judge"), ("ana", "rater", "judge")]


def test_judge_what_nobody_judged_from_an_execution(served, tmp_path):
    from evaltool.history import record

    results = [{"query_id": "q7", "text": "bike chain", "judgments": {"c1": 1},
                "returned": [{"doc_id": "c1", "score": 3.0, "title": "Chain wear", "snippet": "Measure it"},
                             {"doc_id": "c2", "score": 2.0, "title": XSS, "snippet": "Oil it"},
                             {"doc_id": "c3", "score": 1.0}]}]
    execution = record({"summary": {"P_5": 0.2}}, served.history, name="bikes", kind="bench", results=results)
    csrf = log_in(served, OPERATOR)
    page = served.get(f"/executions/{execution}").text
    assert 'data-form="judge-unjudged"' in page and "Judge what nobody judged (2 documents)" in page
    made = served.post(f"/api/executions/{execution}/judging", data={"csrf_token": csrf, "set": "bikes",
                                                                     "ratings": "1"}, follow_redirects=False)
    assert made.status_code == 303 and made.headers["location"] == "/judging/2"
    from evaltool.judgments.tasks import get_task

    task = get_task(served.history, 2)
    assert [(q.query_id, q.text, [(d.doc_id, d.title, d.snippet) for d in q.documents]) for q in task.queries] == [
        ("q7", "bike chain", [("c2", XSS, "Oil it"), ("c3", None, None)])]
    page = served.get("/judging/2").text
    assert "Oil it" in page and "&lt;img src=x" in page
    served.cookies.clear()
    log_in(served, ANA)
    assert 'data-form="judge-unjudged"' not in served.get(f"/executions/{execution}").text


def test_the_judging_pages_in_spanish(served):
    _judge(served, ANA, "q1", "d1", 3)
    _judge(served, BEN, "q1", "d1", 1)
    log_in(served, OPERATOR)
    for address in ("/judging?lang=es", "/judging/1?lang=es", "/judging/sets/helpdesk?lang=es"):
        page = served.get(address)
        assert page.status_code == 200, address
        shown = page_text(page.text, "flat tyre", "wifi slow", "round 1", "helpdesk", "Fixing a puncture",
                          "Find the hole, patch it", "Any repair counts.", "Wifi channels", "Pick 1, 6 or 11", XSS)
        assert english_in(shown) == [], address
    assert "Juzgados por usted" in served.get("/judging/1?lang=es").text
