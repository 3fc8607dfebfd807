"""The dashboard's defences, in-process (Starlette's TestClient, no network): tokens and roles, logging in
with a session cookie and its CSRF token, reading behind a token, the Host check (DNS rebinding), hostile
parameters and bodies answered 400 (never 500), 500s with the security headers, no server path in errors,
and the audit trail of every write."""

from __future__ import annotations

import json
import re

import pytest

from evaltool.errors import EvaltoolError
from tests.support.dashboard_data import build, dashboard_client

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

OPERATOR, RATER = "op-s3cret", "rater-s3cret"
RESULT = {"summary": {"recip_rank": 0.75}, "per_query": {"a": {"recip_rank": 1.0}, "b": {"recip_rank": 0.5}}}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("security") / "history.sqlite")
    build(path)
    return path


def _app(db, *, tokens=(), raters=(), public_read=False, hosts=(), max_body=64 * 1024):
    from evaltool.history import open_history
    from evaltool.server import create_app
    from evaltool.server.auth import Access

    return create_app(open_history(db), access=Access.from_specs(tokens, raters, public_read=public_read),
                      hosts=hosts, max_body=max_body)


@pytest.fixture
def locked(db):
    """Tokens configured, reading behind them."""
    with dashboard_client(_app(db, tokens=[f"ci={OPERATOR}"], raters=[f"ana={RATER}"])) as client:
        yield client


@pytest.fixture
def open_client(db):
    """No token: read-only."""
    with dashboard_client(_app(db)) as client:
        yield client


def _bearer(secret):
    return {"authorization": f"Bearer {secret}"}


def _headers_are_secure(response):
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"


# ---------------------------------------------------------------- tokens


def test_token_specs_and_files(tmp_path):
    from evaltool.server.auth import Access, parse_token, read_tokens_file

    assert (parse_token("abc").name, parse_token("abc").secret) == ("default", "abc")
    assert (parse_token("ci=x=y").name, parse_token("ci=x=y").secret) == ("ci", "x=y")
    assert "x=y" not in repr(parse_token("ci=x=y"))  # a secret never shows in a repr or a log
    tokens = tmp_path / "tokens"
    tokens.write_text("# the team\noperator ci=one\n\nrater ana=two\nrater bo=three\n")
    assert [(t.name, t.role) for t in read_tokens_file(tokens)] == [("ci", "operator"), ("ana", "rater"),
                                                                    ("bo", "rater")]
    tokens.write_text("operator ci=one\nadmin root=two\n")
    with pytest.raises(EvaltoolError, match=rf"{re.escape(str(tokens))}:2: expected 'ROLE NAME=SECRET'"):
        read_tokens_file(tokens)
    tokens.write_text("operator c i=one\n")
    with pytest.raises(EvaltoolError, match=":1: token name 'c i'"):
        read_tokens_file(tokens)
    with pytest.raises(EvaltoolError, match="'ci' is given twice"):
        Access.from_specs(["ci=a", "ci=b"])
    with pytest.raises(EvaltoolError, match="same secret"):
        Access.from_specs(["ci=a"], raters=["ana=a"])
    with pytest.raises(EvaltoolError, match="secret is empty"):
        parse_token("ci=")


def test_every_token_is_compared_whatever_matched_first(monkeypatch):
    """Constant time: the digest of what was presented is compared with every token's, each with
    hmac.compare_digest, even after a match."""
    from evaltool.server import auth

    calls = []
    real = auth.hmac.compare_digest

    def counting(a, b):
        calls.append((a, b))
        return real(a, b)

    access = auth.Access.from_specs(["a=first", "b=second", "c=third"])
    monkeypatch.setattr(auth.hmac, "compare_digest", counting)
    assert access.find("first").name == "a"
    assert len(calls) == 3 and all(len(x) == len(y) == 32 for x, y in calls)
    calls.clear()
    assert access.find("nothing") is None and len(calls) == 3


# ---------------------------------------------------------------- reading and writing


def test_without_a_token_the_dashboard_is_read_only_and_says_so(open_client):
    page = open_client.get("/?lang=es")
    assert page.status_code == 200
    assert "Solo lectura" in page.text
    assert "Read-only" in open_client.get("/trends").text
    response = open_client.post("/api/executions?name=x", json=RESULT, headers=_bearer("anything"))
    assert response.status_code == 403 and "read-only" in response.json()["error"]
    assert open_client.get("/login").status_code == 200 and "without a token" in open_client.get("/login").text


def test_with_tokens_reading_needs_one_too(locked, db):
    assert locked.get("/api/report").status_code == 401
    assert locked.get("/api/report").headers["www-authenticate"] == "Bearer"
    page = locked.get("/trends?date_from=2025-01-01", follow_redirects=False)
    assert page.status_code == 303
    assert page.headers["location"] == "/login?next=%2Ftrends%3Fdate_from%3D2025-01-01"
    assert locked.get("/api/report", headers=_bearer(RATER)).status_code == 200
    assert locked.get("/api/report", headers=_bearer("wrong")).status_code == 401
    assert locked.get("/static/evaltool.css").status_code == 200  # the log-in page needs its style
    assert "Read-only" not in locked.get("/", headers=_bearer(OPERATOR)).text


def test_public_read_opens_reading_but_not_writing(db):
    with dashboard_client(_app(db, tokens=[f"ci={OPERATOR}"], public_read=True)) as client:
        assert client.get("/api/report").status_code == 200
        assert client.post("/api/executions?name=x", json=RESULT).status_code == 401


def test_a_rater_may_read_but_not_record(locked):
    response = locked.post("/api/executions?name=x", json=RESULT, headers=_bearer(RATER))
    assert response.status_code == 403 and "'ana' is a rater's" in response.json()["error"]


def test_a_recording_is_audited_with_its_tokens_name(db, tmp_path):
    import shutil

    from evaltool.history import list_audit

    copy = str(tmp_path / "h.sqlite")
    shutil.copy(db, copy)
    with dashboard_client(_app(copy, tokens=[f"ci={OPERATOR}"])) as client:
        response = client.post("/api/executions?name=nightly", json=RESULT, headers=_bearer(OPERATOR))
        assert response.status_code == 201, response.text
    new = response.json()["id"]
    (entry,) = list_audit(copy, "execution", new)
    assert (entry.actor, entry.role, entry.action, entry.detail) == ("ci", "operator", "record", {"name": "nightly"})
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", entry.at)


# ---------------------------------------------------------------- logging in


def _login(client, secret, *, next_path="/", lang=None):
    form = client.get("/login" + (f"?lang={lang}" if lang else ""))
    nonce = re.findall(r'name="csrf_token" value="([^"]+)"', form.text)[-1]  # the log-in form's, after log-out's
    return client.post("/login" + (f"?lang={lang}" if lang else ""), data={"token": secret, "csrf_token": nonce, "next": next_path},
                       follow_redirects=False)


def test_logging_in_gives_a_strict_http_only_cookie(locked):
    response = _login(locked, OPERATOR, next_path="/trends")
    assert response.status_code == 303 and response.headers["location"] == "/trends"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("evaltool_session=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # plain HTTP: a Secure cookie would never come back
    assert OPERATOR not in cookie
    page = locked.get("/trends")
    assert page.status_code == 200 and "ci (operator)" in page.text
    assert locked.get("/api/report").status_code == 200  # the session reads the API too


def test_under_https_the_cookie_is_secure(db):
    from starlette.testclient import TestClient

    app = _app(db, tokens=[f"ci={OPERATOR}"])
    with TestClient(app, base_url="https://localhost", raise_server_exceptions=False) as client:
        assert "Secure" in _login(client, OPERATOR).headers["set-cookie"]


def test_a_wrong_token_or_a_missing_form_token_logs_nobody_in(locked):
    wrong = _login(locked, "guess", lang="es")
    assert wrong.status_code == 401 and "Ese token no es válido." in wrong.text
    assert "evaltool_session" not in wrong.headers.get("set-cookie", "")
    forged = locked.post("/login", data={"token": OPERATOR, "csrf_token": "made-up"}, follow_redirects=False)
    assert forged.status_code == 403
    cross = locked.post("/login", data={"token": OPERATOR}, headers={"origin": "http://evil.example"})
    assert cross.status_code == 403


def test_only_local_paths_after_logging_in(locked):
    for target in ("https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)"):
        assert _login(locked, OPERATOR, next_path=target).headers["location"] == "/", target


def test_a_cookie_post_needs_the_csrf_token(locked):
    assert _login(locked, OPERATOR).status_code == 303
    page = locked.get("/")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)  # the log-out form's
    bare = locked.post("/api/executions?name=x", json=RESULT)
    assert bare.status_code == 403 and "CSRF" in bare.json()["error"]
    stale = locked.post("/api/executions?name=x", json=RESULT, headers={"x-csrf-token": "stale"})
    assert stale.status_code == 403
    cross = locked.post("/api/executions?name=x", json=RESULT,
                        headers={"x-csrf-token": token, "origin": "http://evil.example"})
    assert cross.status_code == 403 and "another site" in cross.json()["error"]
    for site in ("cross-site", "same-site"):  # same-site: another port of this host, another origin
        fetched = locked.post("/api/executions?name=x", json=RESULT,
                              headers={"x-csrf-token": token, "sec-fetch-site": site, "origin": "null"})
        assert fetched.status_code == 403, site
    good = locked.post("/api/executions?name=from-the-browser", json=RESULT,
                       headers={"x-csrf-token": token, "origin": "http://localhost"})
    assert good.status_code == 201, good.text
    own_form = locked.post("/api/executions?name=from-a-form", json=RESULT,  # no-referrer pages send Origin: null
                           headers={"x-csrf-token": token, "origin": "null", "sec-fetch-site": "same-origin"})
    assert own_form.status_code == 201, own_form.text


def test_logging_out_ends_the_session(locked):
    _login(locked, OPERATOR)
    token = re.search(r'name="csrf_token" value="([^"]+)"', locked.get("/").text).group(1)
    assert locked.post("/logout", data={}, follow_redirects=False).status_code == 403  # no CSRF token
    out = locked.post("/logout", data={"csrf_token": token}, follow_redirects=False)
    assert out.status_code == 303 and 'evaltool_session=""' in out.headers["set-cookie"]
    assert locked.get("/api/report").status_code == 401


# ---------------------------------------------------------------- the Host check


@pytest.mark.parametrize("host, status", [
    ("localhost", 200), ("localhost:8000", 200), ("127.0.0.1:8000", 200), ("[::1]:8000", 200), ("10.0.0.7", 200),
    ("dash.example.org", 200), ("DASH.example.org.:443", 200),
    ("evil.example", 400), ("localhost.evil.example", 400), ("127.0.0.1.nip.io", 400), ("", 400),
])
def test_only_addresses_localhost_and_the_configured_names_are_served(db, host, status):
    with dashboard_client(_app(db, hosts=["dash.example.org"])) as client:
        response = client.get("/api/report", headers={"host": host})
        assert response.status_code == status, response.text
        _headers_are_secure(response)
        if status == 400:
            assert "does not answer for the host" in response.json()["error"]


# ---------------------------------------------------------------- hostile requests: 400, never 500


@pytest.mark.parametrize("url, fragment", [
    ("/api/executions/9223372036854775808", "id '9223372036854775808'"),
    ("/api/executions/99999999999999999999999", "expected a whole number from 1 to 9223372036854775807"),
    ("/api/executions?offset=9223372036854775808", "offset"),
    ("/api/compare?ids=1,9223372036854775808", "ids"),
    ("/api/diff?a=1&b=18446744073709551616", "b '18446744073709551616'"),
    ("/api/executions/" + "9" * 5000, "id '9999"),
    ("/api/report?date_to=9999-12-31", "outside the dates the history holds"),
    ("/api/report?date_from=0001-01-01", "outside the dates"),
    ("/api/report?date_from=0999-06-01", "outside the dates"),
    ("/api/report?date_from=0001-01-01T00:00:00%2B01:00", "outside the dates"),
    ("/api/report?date_to=9999-12-31T23:59:59-01:00", "outside the dates"),
    ("/api/executions?date_from=9999-12-31", "outside the dates"),
    ("/executions/9223372036854775808", "9223372036854775808"),
])
def test_numbers_and_dates_beyond_the_store_are_400(open_client, url, fragment):
    response = open_client.get(url)
    assert response.status_code == 400, (url, response.status_code, response.text[:300])
    assert fragment in (response.json()["error"] if url.startswith("/api/") else response.text)
    _headers_are_secure(response)


def test_the_largest_id_is_just_not_found(open_client):
    assert open_client.get("/api/executions/9223372036854775807").status_code == 404


@pytest.mark.parametrize("body, fragment", [
    ({"summary": {"map": 0.5}, "per_query": [1, 2]}, "per_query: expected an object of queries, found list"),
    ({"summary": {"map": 0.5}, "per_query": {"q1": 0.5}}, "per_query['q1']: expected an object of measures"),
    ({"summary": {"map": 0.5}, "per_query": {"q1": {"map": "high"}}}, "per_query['q1']"),
    ({"summary": {"map": 0.5}, "per_query": {"q1": {"map": [1]}}}, "per_query['q1']"),
    ({"summary": {"map": 0.5}, "meta": [1]}, "meta: expected an object, found list"),
    ({"summary": {"map": 0.5}, "meta": "x"}, "meta: expected an object, found str"),
    ({"summary": {"map": 0.5}, "meta": {"counts": [3]}}, "meta.counts"),
    ({"summary": {"map": 0.5}, "meta": {"counts": {"queries_evaluated": "3"}}}, "meta.counts"),
    ({"summary": {"map": 0.5}, "meta": {"options": [1]}}, "meta.options"),
    ({"summary": {"map": {"x": 1}}}, "summary['map']"),
    ({"summary": {"map": 0.5}, "meta": {"deep": json.loads("[" * 100 + "]" * 100)}}, "nests deeper than 64"),
])
def test_results_of_the_wrong_shape_are_400(db, tmp_path, body, fragment):
    import shutil

    copy = str(tmp_path / "h.sqlite")
    shutil.copy(db, copy)
    with dashboard_client(_app(copy, tokens=[f"ci={OPERATOR}"])) as client:
        response = client.post("/api/executions?name=x", json=body, headers=_bearer(OPERATOR))
        assert response.status_code == 400, response.text
        assert fragment in response.json()["error"], response.text
        _headers_are_secure(response)
        assert client.get("/api/report?name=x", headers=_bearer(OPERATOR)).json()["rows"] == []


def test_a_body_nested_beyond_the_parser_is_400(db):
    with dashboard_client(_app(db, tokens=[f"ci={OPERATOR}"], max_body=1 << 20)) as client:
        deep = b'{"summary": {"map": 0.5}, "meta": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        response = client.post("/api/executions?name=x", content=deep, headers=_bearer(OPERATOR))
        assert response.status_code == 400 and "nests deeper" in response.json()["error"], response.text[:300]


@pytest.mark.parametrize("url", ["/api/suites", "/api/judging/1/judge", "/api/executions/1/judging",
                                 "/api/judging/1/llm"])
@pytest.mark.parametrize("body,fragment", [(b"[" * 100_000, "nested 100000 levels"), (b"\xff\xfe{}", "not UTF-8"),
                                           (b"[1, 2]", "must be a JSON object")])
def test_every_json_body_that_cannot_be_read_is_400(db, url, body, fragment):
    """The workbench, judging and model-run endpoints read their JSON body alike: deep nesting (a
    RecursionError in Python's parser, a 500 before), bad bytes or another JSON value are 400."""
    with dashboard_client(_app(db, tokens=[f"ci={OPERATOR}"], max_body=1 << 20)) as client:
        response = client.post(url, content=body, headers={**_bearer(OPERATOR), "content-type": "application/json"})
        assert response.status_code == 400, response.text[:300]
        assert fragment in response.json()["error"], response.text[:300]
        _headers_are_secure(response)


def test_a_tag_needs_a_key_as_on_the_command_line(db):
    from tests.support.helpers import invoke

    with dashboard_client(_app(db, tokens=[f"ci={OPERATOR}"])) as client:
        response = client.post("/api/executions?name=x&tag==v", json=RESULT, headers=_bearer(OPERATOR))
        assert response.status_code == 400 and "non-empty KEY" in response.json()["error"]
        assert client.get("/api/report?tag==v", headers=_bearer(OPERATOR)).status_code == 400
    assert invoke("history", "list", "--db", db, "--tag", "=v").exit_code == 2


def test_a_500_has_the_security_headers_and_no_traceback(db, monkeypatch):
    import evaltool.history

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(evaltool.history, "report", broken, raising=False)
    with dashboard_client(_app(db)) as client:
        for url in ("/api/report", "/?lang=es"):
            response = client.get(url)
            assert response.status_code == 500
            _headers_are_secure(response)
            assert "Traceback" not in response.text and "a bug" not in response.text
        assert "error interno" in client.get("/?lang=es").text


def test_errors_never_name_a_server_path(db):
    import os

    with dashboard_client(_app(db)) as client:
        for url in ("/api/executions/999", "/executions/999", "/api/diff?a=1&b=999", "/api/compare?ids=1,999"):
            response = client.get(url)
            assert response.status_code == 404, url
            assert db not in response.text and os.path.dirname(db) not in response.text, response.text
            assert "no execution with id 999" in response.text


def test_bodies_over_the_limit_are_413_with_the_headers(db):
    with dashboard_client(_app(db, tokens=[f"ci={OPERATOR}"], max_body=1000)) as client:
        response = client.post("/api/executions?name=x", content=b"x" * 5000, headers=_bearer(OPERATOR))
        assert response.status_code == 413
        _headers_are_secure(response)
        login = client.post("/login", content=b"token=" + b"x" * 5000,
                            headers={"content-type": "application/x-www-form-urlencoded"})
        assert login.status_code == 413


def test_serve_refuses_bad_token_settings(db, tmp_path):
    from tests.support.helpers import invoke
    from tests.support.server_process import free_port

    tokens = tmp_path / "tokens"
    tokens.write_text("operator ci=one\nsuperuser x=two\n")
    result = invoke("serve", "--db", db, "--tokens-file", str(tokens), "--port", free_port())
    assert result.exit_code == 2 and f"{tokens}:2: expected 'ROLE NAME=SECRET'" in result.stderr
    assert "two" not in result.stderr.replace(f"{tokens}:2", "")
    result = invoke("serve", "--db", db, "--public-read", "--port", free_port())
    assert result.exit_code == 2 and "--public-read: without a token reading is public already" in result.stderr
    result = invoke("serve", "--db", db, "--token", "ci=a", "--rater-token", "ci=b", "--port", free_port())
    assert result.exit_code == 2 and "'ci' is given twice" in result.stderr


def test_the_audit_trail_is_readable_per_subject(db, tmp_path):
    import shutil

    copy = str(tmp_path / "h.sqlite")
    shutil.copy(db, copy)
    with dashboard_client(_app(copy, tokens=[f"ci={OPERATOR}"])) as client:
        ids = [client.post(f"/api/executions?name=n{i}", json=RESULT, headers=_bearer(OPERATOR)).json()["id"]
               for i in range(2)]
        one = client.get(f"/api/audit?kind=execution&subject={ids[1]}", headers=_bearer(OPERATOR)).json()
        assert [(e["actor"], e["subject"], e["detail"]) for e in one["entries"]] == [("ci", str(ids[1]), {"name": "n1"})]
        every = client.get("/api/audit?limit=1", headers=_bearer(OPERATOR)).json()["entries"]
        assert [e["subject"] for e in every] == [str(ids[1])]
        assert client.get("/api/audit").status_code == 401
        bad = client.get("/api/audit?subject=3", headers=_bearer(OPERATOR))
        assert bad.status_code == 400 and "give kind too" in bad.json()["error"]
