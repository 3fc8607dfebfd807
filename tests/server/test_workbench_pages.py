"""The workbench's pages in-process: what each shows, to whom (forms only for a signed-in operator on a
dashboard that takes writes), user text as text, and every word of the page's own text in Spanish
with lang=es."""

from __future__ import annotations

import re
import time

import pytest

from tests.support.dashboard_data import XSS, dashboard_client
from tests.support.workbench_helpers import english_in, log_in, page_text

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

OPERATOR = "op-s3cret"
BEARER = {"authorization": f"Bearer {OPERATOR}"}
QUERIES = [{"id": "q1", "query": "flat tyre inner tube", "relevant_ids": ["bike-puncture"]},
           {"id": "q2", "query": XSS, "qrels": {"bike-gear-indexing": 2}},
           {"id": "q3", "query": "wifi slow because of neighbours", "relevant_ids": ["net-wifi-channel", "net-mesh"]}]


@pytest.fixture
def served(tmp_path):
    from evaltool.history import add_suite, open_history
    from evaltool.server import create_app
    from evaltool.server.auth import Access
    from evaltool.server.backends import parse_backends
    from evaltool.server.worker import JobWorker

    history = open_history(str(tmp_path / "history.sqlite"), create=True)
    declared = parse_backends(["bm25=evaltool.bench.examples:bm25_documents"])
    worker = JobWorker(history, declared, str(tmp_path / "jobs"), poll=0.05)
    worker.start()
    add_suite(history, "panel", backend="bm25", queries=QUERIES, measures=["recip_rank", "P.5"], settings={"limit": 5})
    app = create_app(history, access=Access.from_specs([f"ci={OPERATOR}"], public_read=True), backends=declared,
                     worker=worker)
    with dashboard_client(app) as client:
        client.history = history
        yield client
    worker.stop()
    history.close()


def _run(client) -> dict:
    job = client.post("/api/suites/panel/run", headers=BEARER).json()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = client.get(f"/api/jobs/{job['id']}").json()
        if job["state"] == "done":
            return job
        time.sleep(0.05)
    raise AssertionError(job)


def test_the_suites_page_shows_the_editor_to_an_operator_only(served):
    anonymous = served.get("/suites").text
    assert "panel" in anonymous and 'data-form="create"' not in anonymous and "/login" in anonymous
    log_in(served, OPERATOR)
    signed_in = served.get("/suites").text
    assert 'data-form="create"' in signed_in and 'data-form="run-all"' in signed_in
    assert '<option value="bm25">bm25</option>' in signed_in  # the declared backends, nothing typed
    suite = served.get("/suites/panel").text
    assert 'data-form="add-query"' in suite and 'data-form="run"' in suite and "data-upload=" in suite
    assert XSS not in suite and "&lt;img src=x onerror=alert(1)&gt;" in suite


def test_the_execution_page_shows_the_judged_lists_and_the_missed_ids(served):
    job = _run(served)
    page = served.get(f"/executions/{job['execution_id']}").text
    q3 = page[page.index('data-query="q3"'):]
    assert 'data-judgment="relevant"' in q3 and 'data-missed="net-mesh"' in q3
    assert XSS not in page and "&lt;img src=x" in page
    job_page = served.get(f"/jobs/{job['id']}").text
    assert 'data-state="done"' in job_page and '<span class="done">3</span>' in job_page


@pytest.mark.parametrize("address", ["/suites", "/suites/panel", "/jobs", "/jobs/1", "/executions/1",
                                     "/compare-results?a=1&b=1"])
def test_spanish_pages_have_no_english_word_of_their_own(served, address):
    _run(served)
    log_in(served, OPERATOR)
    html = served.get(address + ("&" if "?" in address else "?") + "lang=es").text
    assert '<html lang="es"' in html
    assert english_in(page_text(html, *[q["query"] for q in QUERIES], "panel", "bm25")) == [], address

