"""The workbench's API in-process (Starlette's TestClient): suites created and edited, queries uploaded,
runs queued, followed and cancelled; each endpoint's 400 / 401 / 403 / 404 / 409; every write audited."""

from __future__ import annotations

import json
import time

import pytest

from tests.support.dashboard_data import dashboard_client
from tests.support.workbench_helpers import log_in

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

OPERATOR, RATER = "op-s3cret", "rater-s3cret"
BEARER = {"authorization": f"Bearer {OPERATOR}"}
AS_RATER = {"authorization": f"Bearer {RATER}"}
QUERIES = [{"id": "q1", "query": "flat tyre inner tube", "relevant_ids": ["bike-puncture"]},
           {"id": "q2", "query": "chain skipping when changing gear", "qrels": {"bike-gear-indexing": 2}},
           {"id": "q3", "query": "wifi slow because of neighbours", "relevant_ids": ["net-wifi-channel", "net-mesh"]}]


@pytest.fixture
def served(tmp_path):
    """An app with an operator and a rater token, two declared backends and a running worker."""
    from evaltool.history import open_history
    from evaltool.server import create_app
    from evaltool.server.auth import Access
    from evaltool.server.backends import parse_backends
    from evaltool.server.worker import JobWorker

    history = open_history(str(tmp_path / "history.sqlite"), create=True)
    declared = parse_backends(["bm25=evaltool.bench.examples:bm25_documents",
                               "gated=tests.support.job_backends:gated"])
    worker = JobWorker(history, declared, str(tmp_path / "jobs"), poll=0.05)
    worker.start()
    app = create_app(history, access=Access.from_specs([f"ci={OPERATOR}"], [f"ana={RATER}"]),
                     backends=declared, worker=worker, max_body=256 * 1024)
    with dashboard_client(app) as client:
        client.history = history
        yield client
    worker.stop()
    history.close()


def _error(response, status: int, fragment: str = "") -> None:
    assert response.status_code == status, response.text
    assert fragment in response.json()["error"], response.json()


def _create(client, name="panel", queries=QUERIES, backend="bm25", **extra):
    return client.post("/api/suites", headers=BEARER,
                       json={"name": name, "backend": backend, "measures": ["recip_rank", "P.5"], "limit": 5,
                             "queries": queries, **extra})


def _ended(client, job_id: int) -> dict:
    deadline = time.monotonic() + 120  # a wait for a loaded machine, not a timing assertion
    while time.monotonic() < deadline:
        job = client.get(f"/api/jobs/{job_id}", headers=BEARER).json()
        if job["state"] not in ("queued", "running", "cancelling"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not end")


def test_create_a_suite_and_read_it_back(served):
    created = _create(served)
    assert created.status_code == 201, created.text
    suite = created.json()
    assert (suite["name"], suite["backend"], suite["version"], suite["settings"]) == ("panel", "bm25", 1, {"limit": 5})
    shown = served.get("/api/suites/panel", headers=BEARER).json()
    assert [q["query_id"] for q in shown["suite"]["queries"]] == ["q1", "q2", "q3"]
    assert shown["versions"][0]["author"] == "ci"
    assert [(a["actor"], a["action"]) for a in shown["audit"]] == [("ci", "create")]
    # 400: bad fields; 401: no or a wrong token; 403: a rater; 409: the name is taken
    _error(_create(served, name=" "), 400, "name is required")
    _error(_create(served, name="x", backend="evaltool.bench.examples:bm25_search"), 400,
           "expected one of the backends this server declares: bm25, gated")
    _error(_create(served, name="x", backend="http://169.254.169.254/latest"), 400, "declares")
    _error(_create(served, name="x", limit=0), 400, "limit")
    _error(_create(served, name="x", queries=[{"id": "q1", "query": "no truth"}]), 400, "missing field")
    _error(_create(served, name="x", measures=["not_a_measure"]), 400, "not_a_measure")
    _error(served.post("/api/suites", json={"name": "x", "backend": "bm25"}), 401)
    _error(served.post("/api/suites", headers={"authorization": "Bearer wrong"}, json={"name": "x"}), 401)
    _error(served.post("/api/suites", headers=AS_RATER, json={"name": "x", "backend": "bm25"}), 403)
    _error(_create(served), 409, "exists already")
    _error(served.post("/api/suites", headers={**BEARER, "content-type": "application/json"}, content=b"{nope"), 400,
           "not JSON")
    _error(served.get("/api/suites/nobody", headers=BEARER), 404, "no suite named 'nobody'")
    _error(served.get("/api/suites/panel?version=9", headers=BEARER), 404, "versions 1 to 1")


def test_edit_queries_make_versions(served):
    _create(served)
    added = served.post("/api/suites/panel/queries", headers=BEARER,
                        json={"id": "q4", "query": "brown spots on tomato leaves", "relevant": "garden-tomato-blight"})
    assert added.status_code == 200 and added.json()["version"] == 2
    edited = served.post("/api/suites/panel/queries/q1", headers=BEARER,
                         json={"id": "q1", "query": "flat tyre", "relevant": "bike-puncture:2 bike-winter:1",
                               "version": 2})
    assert edited.json()["queries"][0]["judgments"] == {"bike-puncture": 2, "bike-winter": 1}
    removed = served.post("/api/suites/panel/queries/q4/delete", headers=BEARER, json={})
    assert removed.json()["version"] == 4 and len(removed.json()["queries"]) == 3
    off = served.post("/api/suites/panel/active", headers=BEARER, json={"active": False})
    assert off.json()["active"] is False
    actions = [a["action"] for a in served.get("/api/suites/panel", headers=BEARER).json()["audit"]]
    assert actions == ["create", "edit", "edit", "edit", "deactivate"]
    _error(served.post("/api/suites/panel/queries", headers=BEARER, json={"id": "q2", "query": "x", "relevant": "a"}),
           409, "exists already")
    _error(served.post("/api/suites/panel/queries/q1", headers=BEARER,
                       json={"id": "q1", "query": "x", "relevant": "a", "version": 2}), 409, "changed meanwhile")
    _error(served.post("/api/suites/panel/queries", headers=BEARER, json={"id": "q9", "query": "x", "relevant": "a:b"}),
           400, "doc:grade")
    _error(served.post("/api/suites/panel/queries/q9/delete", headers=BEARER, json={}), 404, "no query with id 'q9'")
    _error(served.post("/api/suites/nobody/queries", headers=BEARER, json={"id": "q", "query": "x", "relevant": "a"}),
           404, "no suite named")
    _error(served.post("/api/suites/panel/active", headers=BEARER, json={"active": "maybe"}), 400, "true or false")
    _error(served.post("/api/suites/panel/active", json={"active": True}), 401)
    _error(served.post("/api/suites/panel/queries/q1/delete", headers=AS_RATER, json={}), 403)


def test_upload_a_queries_file(served):
    _create(served, queries=[])
    csv_text = "id,query,relevant_ids\nq1,flat tyre,bike-puncture\nq2,wifi slow,net-wifi-channel;net-mesh\n"
    done = served.post("/api/suites/panel/upload?filename=q.csv", headers=BEARER, content=csv_text.encode())
    assert done.status_code == 200, done.text
    assert [q["judgments"] for q in done.json()["queries"]] == [{"bike-puncture": 1},
                                                               {"net-wifi-channel": 1, "net-mesh": 1}]
    bad = served.post("/api/suites/panel/upload?filename=q.jsonl", headers=BEARER,
                      content=b'{"id": "a", "query": "x", "relevant_ids": ["d"]}\n{"id": "b", "query": ""}\n')
    _error(bad, 400, "q.jsonl:2")
    _error(served.post("/api/suites/panel/upload?filename=q.csv", headers=BEARER,
                       content=b"id,query,qrels\nq1,x,a:one\n"), 400, "q.csv:2")
    _error(served.post("/api/suites/panel/upload?filename=big.json", headers=BEARER, content=b" " * (2 * 1024 * 1024 + 1)),
           413)
    _error(served.post("/api/suites/panel/upload", content=b"[]"), 401)
    _error(served.post("/api/suites/panel/upload", headers=AS_RATER, content=b"[]"), 403)
    _error(served.post("/api/suites/nobody/upload?filename=q.csv", headers=BEARER, content=csv_text.encode()), 404)


def test_run_follow_and_see_what_the_search_returned(served):
    _create(served)
    queued = served.post("/api/suites/panel/run", headers=BEARER)
    assert queued.status_code == 202, queued.text
    job = _ended(served, queued.json()["id"])
    assert (job["state"], job["done"], job["total"], job["failures"]) == ("done", 3, 3, 0)
    execution = served.get(f"/api/executions/{job['execution_id']}", headers=BEARER).json()
    assert execution["suite_version"] == 1 and execution["kind"] == "suite"
    q3 = execution["results"][2]
    assert q3["text"] == QUERIES[2]["query"] and q3["missed"] == ["net-mesh"]
    assert [d["judgment"] for d in q3["documents"]][0] == "relevant"
    assert q3["values"] == execution["per_query"]["q3"]
    # the ground truth changes, the suite runs again: both executions, side by side
    served.post("/api/suites/panel/queries/q3", headers=BEARER,
                json={"id": "q3", "query": QUERIES[2]["query"], "relevant": "net-wifi-channel net-mesh net-dns"})
    second = _ended(served, served.post("/api/suites/panel/run", headers=BEARER).json()["id"])
    assert served.get(f"/api/executions/{second['execution_id']}", headers=BEARER).json()["suite_version"] == 2
    compared = served.get(f"/api/compare-results?a={job['execution_id']}&b={second['execution_id']}",
                          headers=BEARER).json()
    changes = [d["change"] for d in compared["queries"][0]["b"]["documents"]]
    assert changes and set(changes) == {"same"}  # the same backend, the same list
    assert compared["queries"][2]["b"]["missed"] == ["net-mesh", "net-dns"]
    jobs = served.get("/api/jobs?suite=panel", headers=BEARER).json()["jobs"]
    assert [j["id"] for j in jobs] == [second["id"], job["id"]]
    _error(served.post(f"/api/jobs/{job['id']}/cancel", headers=BEARER), 409, "has ended")
    _error(served.post(f"/api/jobs/{job['id']}/resume", headers=BEARER), 409, "only an interrupted job")
    _error(served.post("/api/jobs/999/cancel", headers=BEARER), 404, "no job with id 999")
    _error(served.post("/api/jobs/x/cancel", headers=BEARER), 400, "expected a whole number")
    _error(served.post(f"/api/jobs/{job['id']}/cancel"), 401)
    _error(served.post(f"/api/jobs/{job['id']}/cancel", headers=AS_RATER), 403)
    _error(served.get("/api/jobs/999", headers=BEARER), 404)
    _error(served.get("/api/compare-results?a=1", headers=BEARER), 400, "b is required")
    _error(served.get("/api/compare-results?a=1&b=999", headers=BEARER), 404)


def test_one_job_per_suite_and_cancel(served):
    from tests.support import job_backends

    _create(served, backend="gated")
    first = served.post("/api/suites/panel/run", headers=BEARER).json()
    _error(served.post("/api/suites/panel/run", headers=BEARER), 409, "has a job")
    cancelled = served.post(f"/api/jobs/{first['id']}/cancel", headers=BEARER)
    assert cancelled.status_code == 200 and cancelled.json()["state"] in ("cancelled", "cancelling")
    for _ in range(3):
        job_backends.GATE.release()
    assert _ended(served, first["id"])["state"] == "cancelled"
    assert served.get("/api/report", headers=BEARER).json()["rows"] == []  # nothing half-recorded
    _error(served.post("/api/suites/nobody/run", headers=BEARER), 404)
    _error(served.post("/api/suites/panel/run"), 401)
    _error(served.post("/api/suites/panel/run", headers=AS_RATER), 403)
    _create(served, name="empty", queries=[])
    _error(served.post("/api/suites/empty/run", headers=BEARER), 409, "no queries yet")


def test_run_all_active(served):
    _create(served)
    _create(served, name="other")
    _create(served, name="off")
    served.post("/api/suites/off/active", headers=BEARER, json={"active": False})
    answer = served.post("/api/run-all", headers=BEARER)
    assert answer.status_code == 202
    jobs = answer.json()["jobs"]
    assert sorted(j["suite"] for j in jobs) == ["other", "panel"] and answer.json()["skipped"] == []
    assert all(_ended(served, j["id"])["state"] == "done" for j in jobs)
    _error(served.post("/api/run-all"), 401)
    _error(served.post("/api/run-all", headers=AS_RATER), 403)


def test_a_suite_made_on_the_command_line_with_an_undeclared_backend_does_not_run(served):
    from evaltool.history import add_suite

    add_suite(served.history, "cli", backend="evaltool.bench.examples:bm25_search", queries=QUERIES)
    _error(served.post("/api/suites/cli/run", headers=BEARER), 409, "is not one this server declares")
    shown = served.get("/api/suites", headers=BEARER).json()
    assert [s["name"] for s in shown["suites"]] == ["cli"]


def test_header_values_given_to_the_runner_are_not_shown(served):
    from evaltool.history import add_suite

    add_suite(served.history, "api", backend="bm25", queries=QUERIES,
              settings={"headers": ["Authorization: Bearer sk-live-123"]})
    for address in ("/api/suites", "/api/suites/api"):
        text = served.get(address, headers=BEARER).text
        assert "sk-live-123" not in text and "Authorization: ***" in text


def test_a_form_post_needs_the_session_and_its_csrf_token(served):
    form = {"name": "web", "backend": "bm25", "measures": "recip_rank P.5", "limit": "5"}
    _error(served.post("/api/suites", data=form), 401)
    csrf = log_in(served, OPERATOR)
    refused = served.post("/api/suites", data=form)  # the session cookie without its CSRF token
    assert refused.status_code == 403
    done = served.post("/api/suites", data={**form, "csrf_token": csrf, "lang": "es"}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/suites/web?lang=es"
    assert json.loads(served.get("/api/suites/web").text)["suite"]["settings"] == {"limit": 5}
