"""The dashboard's JSON API and pages, in-process through Starlette's TestClient (httpx, no network).

Expected values: the seed's comparative table (tests/support/dashboard_data.py), the history's own
functions and ``evaltool history ... -o json`` (the API must return exactly their JSON),
and scipy's paired t-test for the diff.
"""

from __future__ import annotations

import html
import json
import re

import pytest

from tests.support.dashboard_data import PER_QUERY, SEED, SEED_MEANS, XSS, build, dashboard_client
from tests.support.html_pages import Page
from tests.support.helpers import invoke

# Starlette 1.x asks for httpx2 behind its TestClient; httpx (the documented client) works the same here
pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

TOKEN = "s3cret-token"


def _get(client, url: str, status: int = 200):
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code, response.text[:500])
    return response


def _cli_json(*args) -> dict:
    result = invoke(*args, "-o", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


# ---------------------------------------------------------------- the report


def test_report_is_the_cli_report_with_labels(client, history_file):
    db, _ = history_file
    for query, cli in [("", []), ("?date_from=2025-01-28&date_to=2025-01-28", ["--from", "2025-01-28", "--to",
                                                                              "2025-01-28"]),
                       ("?name=bm25&measure=recip_rank", ["--name", "bm25", "-m", "recip_rank"]),
                       ("?lang=es&date_to=2025-01-31", ["--lang", "es", "--to", "2025-01-31"]),
                       ("?labels=false&tag=split%3Ddev", ["--tag", "split=dev"])]:
        labels = [] if "labels=false" in query else ["--labels"]
        assert _get(client, f"/api/report{query}").json() == _cli_json("history", "report", "--db", db, *labels, *cli)


def test_report_of_the_seed_table(client):
    out = _get(client, "/api/report?date_from=2025-01-01&date_to=2025-01-31&lang=es").json()
    assert [(r["name"], r["values"]["recip_rank"], r["values"]["ndcg_cut_10"], r["values"]["P_5"])
            for r in out["rows"]] == SEED
    assert [r["label"] for r in out["rows"]] == ["Bueno", "Bueno", "Mejorable"]
    summary = out["summary"]
    assert summary["count"] == 3
    assert [round(summary["values"][m], 2) for m in ("recip_rank", "ndcg_cut_10", "P_5")] == list(SEED_MEANS)
    assert summary["label"] == "Aceptable"
    assert (out["from"], out["to"]) == ("2025-01-01T00:00:00Z", "2025-01-31T23:59:59Z")
    english = _get(client, "/api/report?date_from=2025-01-01&date_to=2025-01-31").json()
    assert english["summary"]["label"] == "acceptable"


def test_an_empty_range_has_no_rows_and_null_means(client):
    out = _get(client, "/api/report?date_from=2024-01-01&date_to=2024-12-31").json()
    assert out["rows"] == [] and out["summary"]["count"] == 0
    assert set(out["summary"]["values"].values()) == {None}


# ---------------------------------------------------------------- executions


def test_executions_are_paginated_oldest_first(client, history_file):
    from evaltool.history import list_executions

    everything = [e.to_dict() for e in list_executions(history_file[0])]
    seen, url = [], "/api/executions?limit=3"
    while url:
        page = _get(client, url).json()
        assert len(page["executions"]) <= 3
        seen += page["executions"]
        url = f"/api/executions{page['next']}" if page["next"] else None
    assert seen == everything
    assert [e["id"] for e in seen] == sorted(e["id"] for e in seen)
    second = _get(client, "/api/executions?limit=3&offset=3").json()
    assert second["previous"] == "?limit=3&offset=0"
    filtered = _get(client, "/api/executions?date_from=2025-02-01&date_to=2025-02-28&tag=split%3Ddev").json()
    assert [e["name"] for e in filtered["executions"]] == ["bm25", "rm3"] and filtered["next"] is None


def test_one_execution_with_its_per_query_values(client, history_file):
    _, ids = history_file
    out = _get(client, f"/api/executions/{ids['rm3']}").json()
    assert out["name"] == "rm3" and out["tags"] == {"split": "dev"}
    assert out["per_query"] == {q: {"recip_rank": rr, "P_5": p5} for q, (rr, p5) in PER_QUERY["rm3"].items()}


def test_diff_is_the_cli_diff_and_scipys_paired_t_test(client, history_file):
    from scipy import stats

    db, ids = history_file
    a, b = ids["bm25"], ids["rm3"]
    out = _get(client, f"/api/diff?a={a}&b={b}").json()
    assert out == _cli_json("history", "diff", a, b, "--db", db)
    qids = sorted(PER_QUERY["bm25"])
    expected = stats.ttest_rel([PER_QUERY["rm3"][q][0] for q in qids], [PER_QUERY["bm25"][q][0] for q in qids])
    assert out["measures"]["recip_rank"]["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)
    with_test = _get(client, f"/api/diff?a={a}&b={b}&test=wilcoxon&correction=none&measure=P_5").json()
    assert list(with_test["measures"]) == ["P_5"] and with_test["test"] == "wilcoxon"


def test_side_by_side_compares_each_with_the_first(client, history_file):
    from evaltool.history import diff

    db, ids = history_file
    chosen = [ids["bm25"], ids["rm3"], ids[XSS]]
    out = _get(client, f"/api/compare?ids={chosen[0]},{chosen[1]}&ids={chosen[2]}").json()
    assert [e["id"] for e in out["executions"]] == chosen
    assert all(e["per_query"] for e in out["executions"])
    assert out["diffs"] == [json.loads(json.dumps(diff(db, chosen[0], other))) for other in chosen[1:]]


def test_suites_with_their_last_result(client, history_file):
    _, ids = history_file
    out = _get(client, "/api/suites").json()
    by_name = {s["name"]: s for s in out["suites"]}
    assert set(by_name) == {"panel", "never run"}
    assert by_name["panel"]["last"]["id"] == ids["panel"] and by_name["never run"]["last"] is None
    assert by_name["panel"]["active"] is True


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("url, status, fragment", [
    ("/api/report?date_from=2025-13-01", 400, "date_from '2025-13-01'"),
    ("/api/report?date_from=yesterday", 400, "expected an ISO-8601 date"),
    ("/api/report?date_from=2025-03-01&date_to=2025-01-01", 400, "date_from 2025-03-01 is after date_to 2025-01-01"),
    ("/api/report?fecha_desde=2025-01-01&date_from=2025-01-02", 400, "date_from and fecha_desde are the same"),
    ("/api/report?fecha_hasta=2025-13-01", 400, "date_to '2025-13-01'"),
    ("/api/report?fecha_de=2025-01-01", 400, "unknown parameter 'fecha_de'"),
    ("/api/report?measure=nope", 400, "-m nope"),
    ("/api/report?lang=fr", 400, "fr"),
    ("/api/report?labels=maybe", 400, "labels 'maybe'"),
    ("/api/executions?limit=0", 400, "limit '0'"),
    ("/api/executions?offset=-1", 400, "offset '-1'"),
    ("/api/executions/999", 404, "no execution with id 999"),
    ("/api/executions/abc", 400, "id 'abc'"),
    ("/api/diff?a=1", 400, "b is required"),
    ("/api/diff?a=1&b=999", 404, "999"),
    ("/api/diff?a=1&b=2&test=z", 400, "'z'"),
    ("/api/compare?ids=1", 400, "give 2 to 8"),
    ("/api/compare?ids=1,x", 400, "ids 'x'"),
    ("/api/nothing/here", 404, "nothing at /api/nothing/here"),
])
def test_bad_requests_get_a_json_error(client, url, status, fragment):
    response = _get(client, url, status)
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"] and fragment in body["error"], body
    assert "Traceback" not in response.text


def test_a_page_with_a_bad_parameter_is_an_html_error(client):
    response = _get(client, "/?date_from=2025-02-30", 400)
    assert response.headers["content-type"].startswith("text/html")
    assert html.escape("date_from '2025-02-30'") in response.text


# ---------------------------------------------------------------- security


def test_security_headers_on_every_response(client):
    for url, status in [("/", 200), ("/api/report", 200), ("/static/evaltool.js", 200), ("/api/executions/999", 404)]:
        headers = _get(client, url, status).headers
        directives = dict(d.strip().split(" ", 1) for d in headers["content-security-policy"].split(";"))
        assert directives["script-src"] == "'self'"  # no inline script, no other origin
        assert directives["default-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
        assert headers["x-content-type-options"] == "nosniff"


def test_static_files_come_from_the_packages_only(client):
    import plotly.offline

    plotly_js = _get(client, "/static/plotly.min.js")
    assert plotly_js.text == plotly.offline.get_plotlyjs()
    assert plotly_js.headers["content-type"].startswith("text/javascript")
    again = client.get("/static/plotly.min.js", headers={"if-none-match": plotly_js.headers["etag"]})
    assert again.status_code == 304
    for path in ["/static/../pyproject.toml", "/static/..%2f..%2fpyproject.toml", "/static/%2e%2e/evaltool.js",
                 "/static/assets/evaltool.js", "/static/html.py", "/static/"]:
        assert client.get(path).status_code == 404, path


def test_user_strings_are_escaped_in_every_page(client, history_file):
    _, ids = history_file
    for url in ["/", "/trends", f"/executions/{ids[XSS]}", f"/compare?ids={ids['bm25']},{ids[XSS]}",
                f"/diff?a={ids['bm25']}&b={ids[XSS]}"]:
        text = _get(client, url).text
        assert XSS not in text and "<b>bold</b>" not in text, url
        page = Page(text)
        assert "img" not in page.elements and "b" not in page.elements, url
        assert html.escape(XSS) in text, url  # shown as the characters it is


# ---------------------------------------------------------------- pages render their JSON


def test_report_page_shows_what_the_api_returns(client):
    query = "date_from=2025-01-01&date_to=2025-01-31"
    data = _get(client, f"/api/report?{query}").json()
    page = Page(_get(client, f"/?{query}").text)
    (table,) = [t for t in page.tables if t[0][:3] == ["compare", "id", "name"]]
    header, *rows, summary = table
    measures = header[4:-1]
    assert measures == list(data["summary"]["values"])
    assert [[int(r[1]), r[2], r[3], *r[4:-1], r[-1]] for r in rows] == [
        [row["id"], row["name"], row["recorded_at"], *[f"{row['values'][m]:.4f}" for m in measures], row["label"]]
        for row in data["rows"]]
    assert summary[2] == "3 executions" and summary[-1] == "acceptable"
    assert summary[4:-1] == [f"{data['summary']['values'][m]:.4f}" for m in measures]


def test_trend_page_has_a_point_per_execution(client):
    data = _get(client, "/api/executions").json()["executions"]
    page = Page(_get(client, "/trends").text)
    figures = dict(zip(page.chart_names, page.figures))
    for measure in ("recip_rank", "P_5", "ndcg_cut_10"):
        traces = figures[f"trend-{measure}"]["data"]
        points = [(html.unescape(t["name"]), x, y, html.unescape(c[2])) for t in traces
                  for x, y, c in zip(t["x"], t["y"], t["customdata"])]
        assert sorted(points) == sorted((e["name"], e["recorded_at"], e["summary"][measure], e["note"] or "")
                                        for e in data if measure in e["summary"])
        assert all("%{customdata[2]}" in t["hovertemplate"] for t in traces)  # the note shows on hover


def test_execution_page_drill_down(client, history_file):
    _, ids = history_file
    page = Page(_get(client, f"/executions/{ids['rm3']}").text)
    (bars,) = page.figures_named("per-query")
    assert [html.unescape(x) for x in bars["data"][0]["x"]] == list(PER_QUERY["rm3"])
    assert bars["data"][0]["y"] == [rr for rr, _ in PER_QUERY["rm3"].values()]
    per_query = [t for t in page.tables if t[0] == ["query", "recip_rank", "P_5"]][0]
    assert [r[0] for r in per_query[1:]] == list(PER_QUERY["rm3"])


# ---------------------------------------------------------------- recording over HTTP


@pytest.fixture
def recorder(tmp_path):
    from evaltool.history import open_history
    from evaltool.server import create_app

    db = str(tmp_path / "remote.sqlite")
    build(db)
    history = open_history(db)
    with dashboard_client(create_app(history, token=TOKEN, public_read=True, max_body=4096)) as test_client:
        yield test_client
    history.close()


RESULT = {"summary": {"recip_rank": 0.75, "P_5": 0.3}, "per_query": {"a": {"recip_rank": 1.0, "P_5": 0.4},
                                                                     "b": {"recip_rank": 0.5, "P_5": 0.2}}}


def test_recording_needs_the_token(recorder):
    before = recorder.get("/api/report?date_from=2025-04-01").json()  # kept in the server's cache
    assert before["rows"] == []
    url = "/api/executions?name=ci-nightly&tag=branch%3Dmain&note=from+CI&at=2025-04-01"
    assert recorder.post(url, json=RESULT).status_code == 401
    assert recorder.post(url, json=RESULT, headers={"authorization": "Bearer wrong"}).status_code == 401
    response = recorder.post(url, json=RESULT, headers={"authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 201, response.text
    stored = recorder.get(response.json()["url"]).json()
    assert (stored["name"], stored["note"], stored["tags"], stored["recorded_at"]) == (
        "ci-nightly", "from CI", {"branch": "main"}, "2025-04-01T00:00:00Z")
    assert stored["summary"] == RESULT["summary"] and stored["per_query"] == RESULT["per_query"]
    after = recorder.get("/api/report?date_from=2025-04-01").json()  # the new execution invalidated it
    assert [row["name"] for row in after["rows"]] == ["ci-nightly"]


def test_answers_are_kept_until_the_history_changes(client, history_file, tmp_path):
    from evaltool.history import record

    db, _ = history_file
    first = _get(client, "/api/report?name=late")
    assert first.json()["rows"] == []
    assert client.get("/api/report?name=late", headers={"if-none-match": first.headers["etag"]}).status_code == 304
    new = record({"summary": {"recip_rank": 0.1}}, db=db, name="late", at="2025-06-01", fingerprints={},
                 commit=None)  # written by another process, as a CI job would
    second = _get(client, "/api/report?name=late")
    assert second.headers["etag"] != first.headers["etag"]
    assert [row["id"] for row in second.json()["rows"]] == [new]
    assert client.get("/api/report?name=late", headers={"if-none-match": first.headers["etag"]}).status_code == 200


def test_a_pruned_execution_is_not_served_again(tmp_path):
    """The newest execution pruned and another recorded: the cache (once keyed on the count and the
    highest id, which came back to what they were) must not serve the deleted one."""
    from evaltool.history import open_history, prune, record
    from evaltool.server import create_app

    db = str(tmp_path / "h.sqlite")
    record({"summary": {"recip_rank": 0.5}}, db=db, name="x", at="2025-01-02")
    doomed = record({"summary": {"recip_rank": 0.4}}, db=db, name="x", at="2025-01-01")
    with open_history(db) as history, dashboard_client(create_app(history)) as test_client:
        assert [r["id"] for r in _get(test_client, "/api/report").json()["rows"]] == [doomed, doomed - 1]
        assert _get(test_client, f"/api/executions/{doomed}").json()["name"] == "x"
        prune(db, keep=1)
        new = record({"summary": {"recip_rank": 0.9}}, db=db, name="y", at="2025-01-03")
        rows = _get(test_client, "/api/report").json()["rows"]
        assert [(r["id"], r["name"]) for r in rows] == [(doomed - 1, "x"), (new, "y")] and new != doomed
        _get(test_client, f"/api/executions/{doomed}", status=404)


@pytest.mark.parametrize("at", ["0999-06-01", "9999-12-31", "0001-01-01T00:00:00%2B01:00"])
def test_a_recording_date_at_the_calendars_edge_is_a_400(recorder, at):
    response = recorder.post(f"/api/executions?name=x&at={at}", json=RESULT,
                             headers={"authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 400, response.text
    assert list(response.json()) == ["error"] and re.match(
        r"at '[^']+': (a recording date lies between 1970-01-01 and|outside the dates the history holds)",
        response.json()["error"])
    assert recorder.get("/api/executions?name=x").json()["executions"] == []


def test_recording_rejects_bad_bodies(recorder):
    auth = {"authorization": f"Bearer {TOKEN}"}
    too_big = {**RESULT, "meta": {"padding": "x" * 5000}}
    for body, status, fragment in [(b"{not json", 400, "not JSON"), (b"[1, 2]", 400, "summary"),
                                   (json.dumps(too_big).encode(), 413, "limit")]:
        response = recorder.post("/api/executions?name=x", content=body, headers=auth)
        assert response.status_code == status and fragment in response.json()["error"], response.text

    def chunks():  # no Content-Length: the limit is counted as the body arrives
        for _ in range(10):
            yield b"x" * 1000

    response = recorder.post("/api/executions?name=x", content=chunks(), headers=auth)
    assert response.status_code == 413


def test_recording_is_off_without_a_token(client):
    response = client.post("/api/executions?name=x", json=RESULT, headers={"authorization": "Bearer anything"})
    assert response.status_code == 403 and "--token" in response.json()["error"]


def test_openapi_describes_every_api_address(client):
    from evaltool.server.views import VIEWS

    spec = _get(client, "/api/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    assert set(spec["paths"]) == {view.api for view in VIEWS}
    assert {p["name"] for p in spec["paths"]["/api/executions"]["get"]["parameters"]} == {
        "date_from", "date_to", "name", "tag", "limit", "offset", "lang"}
    assert {p["name"] for p in spec["paths"]["/api/report"]["get"]["parameters"]} == {
        "date_from", "date_to", "name", "tag", "measure", "labels", "lang"}
    assert "post" in spec["paths"]["/api/executions"]


def test_differences_are_coloured_by_the_measures_direction(tmp_path):
    """FirstRelPos falling from 3 to 1 is better (green), P_5 falling worse (red), in the paired table
    and among the queries that moved; a count is neither."""
    from evaltool.history import open_history, record
    from evaltool.server import create_app

    db = str(tmp_path / "h.sqlite")
    ids = [record({"summary": {"FirstRelPos": first, "P_5": p5, "num_ret": ret},
                   "per_query": {"q1": {"FirstRelPos": first, "P_5": p5, "num_ret": ret},
                                 "q2": {"FirstRelPos": 2.0, "P_5": 0.2, "num_ret": 10}}},
                  db=db, name="x", at=at, fingerprints={}, commit=None)
           for first, p5, ret, at in ((3.0, 0.4, 10, "2025-01-01"), (1.0, 0.2, 9, "2025-01-02"))]
    with open_history(db) as history, dashboard_client(create_app(history)) as test_client:
        data = _get(test_client, f"/api/diff?a={ids[0]}&b={ids[1]}").json()
        assert {m: cell["better"] for m, cell in data["measures"].items()} == {
            "FirstRelPos": "lower", "P_5": "higher", "num_ret": "neither"}
        coloured = [("better", "FirstRelPos"), ("worse", "P_5"), ("", "num_ret")]
        means = [("", "FirstRelPos"), ("", "P_5"), ("", "num_ret")]
        for url, expected in ((f"/diff?a={ids[0]}&b={ids[1]}", coloured * 2),  # the paired table, what moved
                              (f"/compare?ids={ids[0]},{ids[1]}", means + coloured * 2)):
            text = _get(test_client, url).text
            rows = re.findall(r'<tr(?: class="(\w+)")?><td[^>]*>(FirstRelPos|P_5|num_ret)</td>', text)
            assert rows == expected, url
