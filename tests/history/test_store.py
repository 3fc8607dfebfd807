"""Opening a history: creation, WAL, the schema version, migrations, and what is not a history."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from evaltool.errors import HistoryError
from evaltool.history import get_execution, list_audit, list_executions, list_suites, open_history, record, report, schema

FIXTURES = Path(__file__).parent / "fixtures"


def test_a_new_history_has_the_current_schema(db):
    record({"summary": {"map": 0.5}}, db=db, name="x")
    with open_history(db) as history, history.reading() as conn:
        assert conn.execute(sa.select(schema.schema_table.c.version)).scalars().all() == [schema.CURRENT_VERSION]
        assert set(schema.TABLES) <= set(sa.inspect(conn).get_table_names())


def test_sqlite_runs_in_wal_mode(tmp_path):
    db = tmp_path / "h.sqlite"
    record({"summary": {"map": 0.5}}, db=str(db), name="x")
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_the_first_schema_is_migrated_forward(tmp_path):
    """history-v1.sqlite was written by the first schema (see fixtures/README.md); nothing in it is lost."""
    db = tmp_path / "old.sqlite"
    shutil.copy(FIXTURES / "history-v1.sqlite", db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version FROM evaltool_schema").fetchall() == [(1,)]
    executions = list_executions(str(db))
    assert [(e.id, e.name, e.recorded_at, e.note, e.tags) for e in executions] == [
        (1, "bm25", "2025-01-28T09:00:00Z", "schema v1", {"split": "dev"}),
        (2, "bm25", "2025-02-01T09:00:00Z", None, {})]
    first = get_execution(str(db), 1)
    assert first.summary == {"recip_rank": 0.75, "P_5": 0.4}
    assert first.per_query == {"q1": {"recip_rank": 0.5, "P_5": 0.4}, "q2": {"recip_rank": 1.0, "P_5": 0.4}}
    assert first.fingerprints["qrels"] == "a" * 64 and first.options == {"relevance_level": 1}
    # old executions keep their thresholds: the second was recorded with recip_rank >= 0.6 alone, so its
    # 0.65 is good (under today's defaults, 0.65 < 0.7 and P_5 0.2 < 0.5, it would be poor)
    rows = report(str(db), labels=True)["rows"]
    assert [r["label"] for r in rows] == ["fair", "good"]
    assert list_suites(str(db)) == []  # the table version 2 added
    assert list_audit(str(db)) == []  # and version 3's
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version FROM evaltool_schema").fetchall() == [(schema.CURRENT_VERSION,)]
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    new_id = record({"summary": {"map": 0.1}}, db=str(db), name="after")
    assert new_id == 3


def test_a_migrated_history_has_the_schema_of_a_fresh_one(tmp_path):
    """Every table, index and column as a new history makes them, whatever version the file started at."""
    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    shutil.copy(FIXTURES / "history-v1.sqlite", old)
    list_executions(str(old))
    record({"summary": {"map": 0.5}}, db=str(new), name="x")

    def layout(path):
        with sqlite3.connect(path) as conn:
            return sorted((name, " ".join(sql.split())) for name, sql in
                          conn.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"))

    assert layout(old) == layout(new)
    assert "audit" in dict(layout(new))


def test_a_newer_schema_is_refused(db):
    record({"summary": {"map": 0.5}}, db=db, name="x")
    engine = sa.create_engine(db if "://" in db else f"sqlite:///{db}")
    with engine.begin() as conn:
        conn.execute(schema.schema_table.update().values(version=schema.CURRENT_VERSION + 7))
    engine.dispose()
    with pytest.raises(HistoryError, match=rf"written by a newer evaltool \(history schema version "
                                           rf"{schema.CURRENT_VERSION + 7}\); evaltool .* reads versions up to "
                                           rf"{schema.CURRENT_VERSION}: upgrade evaltool"):
        list_executions(db)
    with pytest.raises(HistoryError, match="newer evaltool"):
        record({"summary": {"map": 0.5}}, db=db, name="x")


def test_a_file_that_is_not_a_database(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("these are notes, not a database\n" * 100)
    before = path.read_bytes()
    for call in (lambda: list_executions(str(path)), lambda: record({"summary": {"map": 1.0}}, db=str(path))):
        with pytest.raises(HistoryError, match=f"{path}: not an evaltool history .*file is not a database"):
            call()
    assert path.read_bytes() == before


def test_another_applications_database_is_left_alone(tmp_path):
    path = tmp_path / "app.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    with pytest.raises(HistoryError, match="a database, but not an evaltool history .*customers"):
        record({"summary": {"map": 1.0}}, db=str(path))
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall() == [("customers",)]


def test_readers_do_not_create_a_history(tmp_path):
    path = tmp_path / "none.sqlite"
    with pytest.raises(HistoryError, match="no history there"):
        list_executions(str(path))
    assert not path.exists()
    with pytest.raises(HistoryError, match="the folder .*missing does not exist"):
        record({"summary": {"map": 1.0}}, db=str(tmp_path / "missing" / "h.sqlite"))


def test_readers_of_an_empty_postgresql_database_get_a_message(postgres_url):
    with pytest.raises(HistoryError, match="no evaltool history there yet"):
        list_executions(postgres_url)


@pytest.mark.parametrize("url, message", [
    ("mysql://u@h/db", "unsupported database 'mysql'"),
    ("sqlite://", "must be a file"),
    ("postgresql://", None),
])
def test_urls(url, message, monkeypatch):
    if message is None:  # no host, no socket: the driver's refusal, on one line
        monkeypatch.setenv("PGHOST", "/nonexistent-socket-dir")
        with pytest.raises(HistoryError, match=r"^postgresql\+psycopg://: .*"):
            list_executions(url)
        return
    with pytest.raises(HistoryError, match=message):
        list_executions(url)


def test_the_default_is_evaltool_db_then_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALTOOL_DB", raising=False)
    record({"summary": {"map": 1.0}}, name="here")
    assert (tmp_path / "evaltool-history.sqlite").exists()
    monkeypatch.setenv("EVALTOOL_DB", str(tmp_path / "elsewhere.sqlite"))
    record({"summary": {"map": 1.0}}, name="there")
    assert [e.name for e in list_executions()] == ["there"]
