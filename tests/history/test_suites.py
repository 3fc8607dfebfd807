"""Suites in the history (queries and ground truth, versioned) and what the search returned, kept per
execution: the library, the command line, the upgrade of a version-2 history (frozen fixture)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from evaltool.bench.queries import load_queries
from evaltool.errors import EvaltoolError, HistoryError, NotFoundError
from evaltool.history import (
    add_suite, export, get_execution, get_suite, list_executions, list_suites, open_history, prune, put_query,
    remove_query, save_queries, schema, suite_versions,
)
from evaltool.history.suite_runs import run_suite
from evaltool.history.suites import SuiteConflict, parse_queries_file
from tests.support.helpers import assert_fails, invoke

FIXTURES = Path(__file__).parent / "fixtures"
BM25 = "evaltool.bench.examples:bm25_search"
BM25_TEXT = "evaltool.bench.examples:bm25_documents"
THREE = [{"id": "q1", "query": "flat tyre inner tube", "relevant_ids": ["bike-puncture"]},
         {"id": "q2", "query": "chain skipping when changing gear", "category": "cycling",
          "qrels": {"bike-gear-indexing": 2, "bike-chain-lube": 1}},
         {"id": "q3", "query": "wifi slow because of neighbours", "difficulty": "hard", "owner": "ana",
          "relevant_ids": ["net-wifi-channel", "net-mesh"]}]


def _schema(db) -> dict:
    """Every table's columns (name, type, nullable, primary key) and indexes, as the database reports them."""
    with open_history(db) as history, history.engine.connect() as conn:
        inspector = sa.inspect(conn)
        return {table: ({(c["name"], str(c["type"]), c["nullable"], c.get("primary_key", 0))
                         for c in inspector.get_columns(table)},
                        sorted((i["name"], tuple(i["column_names"])) for i in inspector.get_indexes(table)))
                for table in inspector.get_table_names()}


def _fixture(tmp_path) -> str:
    """A copy of the version-2 history whose 'helpdesk' suite points at a copy of its queries file."""
    db = tmp_path / "old.sqlite"
    shutil.copy(FIXTURES / "history-v2.sqlite", db)
    queries = tmp_path / "helpdesk.json"
    shutil.copy(FIXTURES / "history-v2-helpdesk.json", queries)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version FROM evaltool_schema").fetchall() == [(2,)]
        conn.execute("UPDATE suites SET queries_file = ? WHERE name = 'helpdesk'", (str(queries),))
    return str(db)


def test_a_version_2_history_is_upgraded_with_its_suites_read_in(tmp_path):
    """history-v2.sqlite was written by the release before suites moved into the history (see
    fixtures/README.md): 'helpdesk' points at a queries file, 'legacy' at one that no longer exists."""
    db = _fixture(tmp_path)
    # an older history is read only after an explicit upgrade, which reads the suites' files in
    assert_fails(invoke("suite", "list", "--db", db), "a history of schema version 2", "evaltool history upgrade")
    upgraded = invoke("history", "upgrade", "--db", db)
    assert upgraded.exit_code == 0, upgraded.stderr
    suites = {s.name: s for s in list_suites(db)}
    helpdesk = get_suite(db, "helpdesk")
    assert [q.to_bench() for q in helpdesk.queries] == json.loads((FIXTURES / "history-v2-helpdesk.json").read_text())
    assert (helpdesk.version, helpdesk.measures, helpdesk.settings["limit"], helpdesk.active, helpdesk.problem) == (
        1, ["recip_rank", "P.5"], 5, True, None)
    legacy = suites["legacy"]
    assert not legacy.active and legacy.queries is None and legacy.source == "/tmp/evaltool-fixture/legacy.json"
    assert "/tmp/evaltool-fixture/legacy.json could not be read" in legacy.problem
    assert "evaltool suite import legacy FILE" in legacy.problem
    # the execution recorded before the upgrade ran the file's content: it is version 1's
    (before,) = list_executions(db)
    assert (before.name, before.kind, before.suite_version, before.summary) == (
        "helpdesk", "suite", 1, {"recip_rank": 1.0, "P_5": pytest.approx(0.26666666666666666)})
    assert get_execution(db, before.id, results=True).results == []  # nothing was kept of what it returned
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version FROM evaltool_schema").fetchall() == [(schema.CURRENT_VERSION,)]
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    fresh = str(tmp_path / "fresh.sqlite")
    open_history(fresh, create=True).close()
    assert _schema(db) == _schema(fresh)
    # the suite that lost its file says so when run, and runs again once a file is imported
    assert invoke("suite", "enable", "legacy", "--db", db).exit_code == 0
    assert_fails(invoke("suite", "run", "legacy", "--db", db, "--out", tmp_path / "out"),
                 "evaltool: suite legacy: its queries file /tmp/evaltool-fixture/legacy.json could not be read")
    replacement = tmp_path / "legacy.json"
    replacement.write_text(json.dumps(THREE[:1]))
    assert invoke("suite", "import", "legacy", replacement, "--db", db).exit_code == 0
    assert invoke("suite", "run", "legacy", "--db", db, "--out", tmp_path / "out").exit_code == 0
    assert list_executions(db, name="legacy")[0].suite_version == 2


def test_a_version_2_history_whose_file_is_invalid_keeps_the_suite_with_the_reason(tmp_path):
    db = _fixture(tmp_path)
    (tmp_path / "helpdesk.json").write_text('[{"id": "q1", "query": ""}]')
    assert invoke("history", "upgrade", "--db", db).exit_code == 0
    helpdesk = get_suite(db, "helpdesk")
    assert helpdesk.queries == [] and "was not valid when the history was upgraded" in helpdesk.problem
    assert "helpdesk.json:1" in helpdesk.problem  # the runner's own message, with the line
    assert list_executions(db)[0].suite_version is None


def test_editing_makes_versions_and_every_execution_records_its_version(db, tmp_path):
    add_suite(db, "panel", backend=BM25, queries=THREE, measures=["recip_rank", "P.5"], settings={"limit": 5})
    with pytest.raises(SuiteConflict, match="exists already"):
        add_suite(db, "panel", backend=BM25, queries=THREE)
    with open_history(db) as history:
        _, first = run_suite(history, "panel", str(tmp_path / "out"))
    put_query(db, "panel", {"id": "q4", "query": "brown spots on tomato leaves", "relevant_ids": ["garden-tomato-blight"]})
    edited = put_query(db, "panel", {"id": "q1", "query": "flat tyre", "relevant_ids": ["bike-puncture", "bike-winter"]},
                       replace_id="q1")
    assert edited.version == 3 and [q.query_id for q in edited.queries] == ["q1", "q2", "q3", "q4"]
    assert edited.queries[0].judgments == {"bike-puncture": 1, "bike-winter": 1}
    with pytest.raises(SuiteConflict, match="exists already"):
        put_query(db, "panel", {"id": "q2", "query": "x", "relevant_ids": ["a"]})
    with pytest.raises(SuiteConflict, match="changed meanwhile"):
        remove_query(db, "panel", "q4", expected_version=2)
    removed = remove_query(db, "panel", "q4")
    with pytest.raises(NotFoundError, match="no query with id 'q9'"):
        remove_query(db, "panel", "q9")
    assert removed.version == 4
    assert save_queries(db, "panel", removed.queries).version == 4  # nothing changed: no new version
    with open_history(db) as history:
        _, second = run_suite(history, "panel", str(tmp_path / "out"))
    assert [get_execution(db, i).suite_version for i in (first, second)] == [1, 4]
    assert [v["change"] for v in suite_versions(db, "panel")] == [
        "created with 3 queries", "query q4 added", "query q1 edited", "query q4 removed"]
    assert [q.text for q in get_suite(db, "panel", 1).queries] == [q["query"] for q in THREE]  # old versions stay
    with pytest.raises(NotFoundError, match="versions 1 to 4"):
        get_suite(db, "panel", 5)


def test_suite_add_show_export_on_the_command_line(tmp_path):
    db = str(tmp_path / "h.sqlite")
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps(THREE))
    assert invoke("suite", "add", "panel", queries, "--backend", BM25, "--db", db).exit_code == 0
    shown = invoke("suite", "show", "panel", "--db", db).stdout
    assert "bike-gear-indexing:2 bike-chain-lube:1" in shown and "wifi slow because of neighbours" in shown
    exported = tmp_path / "exported.json"
    assert invoke("suite", "export", "panel", "--db", db, "--output", exported).exit_code == 0
    # what bench reads back is what the file said, query by query
    assert [(q.qid, q.text, q.category, q.difficulty, q.judgments, q.fields) for q in load_queries(exported)] == [
        (q.qid, q.text, q.category, q.difficulty, q.judgments, q.fields) for q in load_queries(queries)]
    as_json = json.loads(invoke("suite", "show", "panel", "--db", db, "-o", "json").stdout)
    assert as_json["queries"][2]["fields"] == {"owner": "ana"} and as_json["versions"][0]["queries"] == 3
    assert_fails(invoke("suite", "show", "nobody", "--db", db), "no suite named 'nobody'")
    assert_fails(invoke("suite", "export", "panel", "--version", "2", "--db", db), "versions 1 to 1")


def test_a_queries_csv_is_read_and_its_errors_name_their_line(tmp_path):
    text = ("id,query,category,relevant_ids,qrels,owner\n"
            "q1,flat tyre,cycling,bike-puncture;bike-winter,,ana\n"
            "\n"
            'q2,"wifi, slow",,,net-wifi-channel:2 net-mesh:1,\n')
    queries = parse_queries_file("q.csv", text.encode())
    assert [(q.query_id, q.text, q.category, q.expected_field, q.judgments, q.fields) for q in queries] == [
        ("q1", "flat tyre", "cycling", "relevant_ids", {"bike-puncture": 1, "bike-winter": 1}, {"owner": "ana"}),
        ("q2", "wifi, slow", None, "qrels", {"net-wifi-channel": 2, "net-mesh": 1}, {})]
    with pytest.raises(HistoryError, match=r"q\.csv:3: qrels cell 'a:b'"):
        parse_queries_file("q.csv", b"id,query,qrels\nq1,x,a:1\nq2,y,a:b\n")
    with pytest.raises(EvaltoolError, match=r"q\.csv:3: query 2 \(id \"q2\"\): missing field: one of"):
        parse_queries_file("q.csv", b"id,query,relevant_ids\nq1,x,a\nq2,y,\n")
    with pytest.raises(HistoryError, match=r"q\.csv:2: 4 cells, the header names 3"):
        parse_queries_file("q.csv", b"id,query,relevant_ids\nq1,x,a,extra\n")


def test_what_the_search_returned_is_kept_shown_exported_and_pruned(db, tmp_path, monkeypatch):
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps(THREE))
    ran = invoke("bench", queries, "--backend", BM25_TEXT, "--limit", "3", "--out", tmp_path / "out", "--record",
                 "--db", db)
    assert ran.exit_code == 0, ran.stderr
    execution = get_execution(db, 1, results=True)
    report = json.loads(next((tmp_path / "out").glob("baseline_*.json")).read_text())
    by_query = {r["query_id"]: r for r in execution.results}
    for entry in report["detailed_results"]:
        kept = by_query[str(entry["query_id"])]
        assert [d["doc_id"] for d in kept["documents"]] == entry["returned_ids"]
        assert kept["latency_ms"] == entry["execution_time_ms"] and kept["error"] is None
    q2 = by_query["q2"]
    assert q2["text"] == THREE[1]["query"] and q2["judgments"] == THREE[1]["qrels"]
    assert q2["documents"][0]["title"] == "Gears that skip or rattle" and q2["documents"][0]["snippet"]
    assert [d["rank"] for d in q2["documents"]] == [1, 2, 3]
    shown = invoke("history", "show", "1", "-q", "--results", "--db", db).stdout
    assert "relevant (2)" in shown and "(missed)" in shown and "net-mesh" in shown and "unjudged" in shown
    line = json.loads(export(db, "jsonl"))
    assert line["results"] == execution.results
    # a bound per execution: beyond it every query keeps the same number of ids
    monkeypatch.setattr("evaltool.history.recording.MAX_RETURNED_ROWS", 3)
    assert invoke("bench", queries, "--backend", BM25_TEXT, "--limit", "3", "--out", tmp_path / "out", "--record",
                  "--db", db).exit_code == 0
    cut = get_execution(db, 2, results=True).results
    assert [len(r["documents"]) for r in cut] == [1, 1, 1]
    assert [r["returned"] for r in cut] == [len(r["documents"]) for r in execution.results]
    assert prune(db, keep=1) == [1]
    with open_history(db) as history, history.reading() as conn:
        kept = {t: conn.execute(sa.select(sa.func.count()).select_from(getattr(schema, t))
                                .where(getattr(schema, t).c.execution_id == 1)).scalar_one()
                for t in ("query_outcomes", "returned")}
    assert kept == {"query_outcomes": 0, "returned": 0}
