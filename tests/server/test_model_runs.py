"""A declared model judging a task from the dashboard (in-process), against the fake chat service:
only declared models, only operators, the grades in the set by llm:MODEL, the calibration's address."""

from __future__ import annotations

import pytest

from evaltool.errors import EvaltoolError
from evaltool.judgments import read_judgments
from evaltool.server.model_runs import parse_models
from tests.support.dashboard_data import dashboard_client
from tests.support.fake_llm import FakeChatServer, grade_of

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

OPERATOR, ANA = "op-s3cret", "ana-s3cret"
KEY = "sk-declared-at-start"


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
    lists = {f"q{q}": [f"d{q}_{k}" for k in range(4)] for q in range(3)}
    create_task(history, "helpdesk", depth_pool([lists], 10), name="round 1",
                queries={q: {"text": f"[q:{q}] question {q}"} for q in lists})
    corpus = {d: (f"Title {d}", f"[d:{d}] text of {d}") for docs in lists.values() for d in docs}
    with FakeChatServer() as llm, FakeChatServer() as elsewhere:
        models = parse_models([f"fake={llm.url},fake-model,TEST_LLM_KEY"], environ={"TEST_LLM_KEY": KEY})
        app = create_app(history, access=Access.from_specs([f"ci={OPERATOR}"], raters=[f"ana={ANA}"]),
                         corpus=corpus, models=models, models_dir=str(tmp_path / "jobs"))
        with dashboard_client(app) as client:
            client.history, client.llm, client.elsewhere = history, llm, elsewhere
            yield client
    history.close()


def test_an_operator_runs_a_declared_model_on_a_task(served):
    started = served.post("/api/judging/1/llm", headers=bearer(OPERATOR),
                          json={"model": "fake", "url": served.elsewhere.url})  # a URL in a request is ignored
    assert started.status_code == 202, started.text
    assert started.json()["run"]["rater"] == "llm:fake-model"
    served.app.state.model_runs.wait()
    state = served.get("/api/judging/1/llm", headers=bearer(OPERATOR)).json()
    assert state["run"]["state"] == "done", state
    assert (state["run"]["pairs"], state["run"]["judged"]) == (12, 12)
    assert state["calibration"] == "/judging/calibration?model=helpdesk&human=helpdesk"
    assert [m["name"] for m in state["models"]] == ["fake"] and KEY not in str(state)
    grades = {(j.query_id, j.doc_id): j.grade for j in read_judgments(served.history, "helpdesk")}
    assert grades == {(q, d): grade_of(q, d) for q, d in grades} and len(grades) == 12
    assert sum(served.llm.calls.values()) == 12 and sum(served.elsewhere.calls.values()) == 0
    assert served.llm.authorizations == {f"Bearer {KEY}"}
    # asked again: the cache answers, nothing is sent
    again = served.post("/api/judging/1/llm", headers=bearer(OPERATOR), json={"model": "fake"})
    assert again.status_code == 202
    served.app.state.model_runs.wait()
    assert sum(served.llm.calls.values()) == 12


def test_only_an_operator_and_only_a_declared_model(served):
    assert served.post("/api/judging/1/llm", headers=bearer(ANA), json={"model": "fake"}).status_code == 403
    assert served.post("/api/judging/1/llm", json={"model": "fake"}).status_code == 401
    refused = served.post("/api/judging/1/llm", headers=bearer(OPERATOR), json={"model": served.elsewhere.url})
    assert refused.status_code == 400 and "not declared" in refused.text
    assert served.post("/api/judging/9/llm", headers=bearer(OPERATOR), json={"model": "fake"}).status_code == 404
    assert served.get("/api/judging/1/llm", headers=bearer(ANA)).status_code == 403
    assert sum(served.llm.calls.values()) == 0


def test_declarations_are_checked_at_start():
    with pytest.raises(EvaltoolError, match="expected NAME=URL,MODEL"):
        parse_models(["fake=http://127.0.0.1:1/v1"])
    with pytest.raises(EvaltoolError, match="MISSING_KEY"):
        parse_models(["fake=http://127.0.0.1:1/v1,m,MISSING_KEY"], environ={})
    with pytest.raises(EvaltoolError, match="http"):
        parse_models(["fake=ftp://host/v1,m"])
