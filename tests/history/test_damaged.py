"""A damaged history (a hand edit, a disk fault, another program) is one message and exit 2,
from every reader: the schema version, a JSON column, a number column, a text column.

The damage is done with sqlite3 directly, so these run on SQLite only.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import pytest

from evaltool.history import record
from tests.support.helpers import assert_fails, invoke

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


def _history(tmp_path) -> str:
    db = str(tmp_path / "history.sqlite")
    for at, value in (("2025-01-01", 0.25), ("2025-01-02", 0.5)):
        result = {"summary": {"map": value, "P_5": 0.5}, "per_query": {"q1": {"map": value, "P_5": 0.5}}}
        record(result, db=db, name="sys", at=at, fingerprints={}, commit=None)
    return db


def _damage(db: str, sql: str, *params) -> None:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(sql, params)
        conn.commit()


@pytest.mark.parametrize("version", [0, -1, "abc", 1.5, None])
@pytest.mark.parametrize("command", [("list",), ("report",), ("show", "1"), ("check", "--name", "sys")])
def test_a_schema_version_that_evaltool_never_writes(tmp_path, version, command):
    db = _history(tmp_path)
    if version is None:
        _damage(db, "DELETE FROM evaltool_schema")
        fragment = "evaltool_schema holds 0 rows, expected 1"
    else:
        _damage(db, "UPDATE evaltool_schema SET version = ?", version)
        fragment = f"evaltool_schema holds the version '{version}'; expected a whole number from 1"
    assert_fails(invoke("history", *command, "--db", db), db, "damaged history", fragment)


@pytest.mark.parametrize("text", ["{", "[1, 2]", "", '{"a": ' * 50_000])
def test_a_json_column_that_is_not_a_json_object(tmp_path, text):
    db = _history(tmp_path)
    _damage(db, "UPDATE executions SET options = ? WHERE id = 2", text)
    for command in (("list",), ("show", "2"), ("report",), ("diff", "1", "2")):
        message = assert_fails(invoke("history", *command, "--db", db), "damaged history: execution 2: options holds")
        assert "expected a JSON object" in message and len(message) < 400


def test_text_in_a_number_column(tmp_path):
    db = _history(tmp_path)
    _damage(db, "UPDATE summary_values SET value = 'abc' WHERE execution_id = 1 AND measure = 'map'")
    for command in (("report",), ("check", "--name", "sys"), ("show", "1")):
        assert_fails(invoke("history", *command, "--db", db),
                     "execution 1: 'map' holds 'abc' (str); expected a number")
    _damage(db, "UPDATE summary_values SET value = 0.25")
    _damage(db, "UPDATE query_values SET value = '0999-06-01' WHERE execution_id = 2 AND measure = 'P_5'")
    assert invoke("history", "list", "--db", db).exit_code == 0   # the per-query values are not read
    for command in (("show", "2", "-q"), ("diff", "1", "2"), ("export",)):
        assert_fails(invoke("history", *command, "--db", db),
                     "execution 2: 'P_5' of query 'q1' holds '0999-06-01' (str); expected a number")


def test_a_blob_or_bytes_that_are_not_utf8_in_a_text_column(tmp_path):
    db = _history(tmp_path)
    _damage(db, "UPDATE executions SET name = ? WHERE id = 1", b"\xff\x00")
    assert_fails(invoke("history", "list", "--db", db, "-o", "json"), "execution 1: name holds", "expected text")
    _damage(db, "UPDATE executions SET name = CAST(? AS TEXT) WHERE id = 1", b"sys\xb5")
    assert_fails(invoke("history", "list", "--db", db), "damaged history: Could not decode to UTF-8 column 'name'")


def test_the_dashboard_answers_a_damaged_history_with_a_message(tmp_path):
    from evaltool.history import open_history
    from evaltool.server import create_app
    from tests.support.dashboard_data import dashboard_client

    db = _history(tmp_path)
    _damage(db, "UPDATE executions SET thresholds = '[[[' WHERE id = 1")
    with closing(open_history(db)) as history, dashboard_client(create_app(history, cache_size=0)) as client:
        for url in ("/api/report", "/api/executions", "/api/executions/1", "/api/diff?a=1&b=2", "/", "/trends",
                    "/executions/1"):
            response = client.get(url)
            assert response.status_code == 400, (url, response.status_code)
            text = response.json()["error"] if url.startswith("/api/") else response.text
            assert "damaged history: execution 1: thresholds holds &#x27;[[[&#x27;" in text or (
                "damaged history: execution 1: thresholds holds '[[['" in text), (url, text[:300])
        assert client.get("/api/executions/2").status_code == 200
        assert json.loads(client.get("/api/executions/2").text)["id"] == 2


@pytest.mark.parametrize("column, value, fragment", [
    ("settings", "{", "suite 'api': settings holds '{' (str); expected a JSON object"),
    ("measures", '{"a": 1}', "suite 'api': measures holds '{\"a\": 1}' (str); expected a JSON list of measure names"),
    ("backend", b"\xff", "suite 'api': backend holds '\ufffd' (bytes); expected text"),
])
def test_a_damaged_suite(tmp_path, column, value, fragment):
    from tests.support.helpers import ROOT

    db = _history(tmp_path)
    queries = ROOT / "data" / "bench_queries.json"
    assert invoke("suite", "add", "api", queries, "--backend", "evaltool.bench.examples:bm25_search",
                  "--db", db).exit_code == 0
    _damage(db, f"UPDATE suites SET {column} = ?", value)
    assert_fails(invoke("suite", "list", "--db", db), "damaged history", fragment)


def test_a_long_name_in_a_damaged_row_is_quoted_short(tmp_path):
    db = _history(tmp_path)
    _damage(db, "UPDATE summary_values SET measure = ?, value = 'x' WHERE execution_id = 1 AND measure = 'map'",
            "m" * 100_000)
    message = assert_fails(invoke("history", "report", "--db", db), "execution 1: 'mmmm", "(100000 characters) holds 'x'")
    assert len(message) < 500
