"""Opening a history: creation, WAL, the schema version, migrations, and what is not a history."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from evaltool.errors import HistoryError
from evaltool.history import (
    get_execution,
    list_audit,
    list_executions,
    list_suites,
    open_history,
    prune,
    record,
    report,
    schema,
    upgrade,
)

FIXTURES = Path(__file__).parent / "fixtures"


def sqlite_layout(path) -> list[tuple[str, str]]:
    """Every table and index of a SQLite file as (name, its DDL with whitespace made single spaces)."""
    with sqlite3.connect(path) as conn:
        return sorted((name, " ".join(sql.split())) for name, sql in
                      conn.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"))


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


def test_an_old_schema_is_refused_until_upgraded_then_kept_whole(tmp_path):
    """history-v1.sqlite was written by the first schema (see fixtures/README.md): readers and writers
    name the upgrade command and change nothing; after 'upgrade' nothing in it is lost."""
    db = tmp_path / "old.sqlite"
    shutil.copy(FIXTURES / "history-v1.sqlite", db)
    for call in (lambda: list_executions(str(db)), lambda: record({"summary": {"map": 0.1}}, db=str(db), name="x"),
                 lambda: open_history(str(db), create=True)):
        with pytest.raises(HistoryError, match=rf"{db}: a history of schema version 1; this evaltool uses version "
                                               rf"{schema.CURRENT_VERSION}: bring it forward with 'evaltool history "
                                               rf"upgrade --db {db}'"):
            call()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version FROM evaltool_schema").fetchall() == [(1,)]
        assert conn.execute("SELECT count(*) FROM executions").fetchall() == [(2,)]
    assert upgrade(str(db)) == (1, schema.CURRENT_VERSION)
    assert upgrade(str(db)) == (schema.CURRENT_VERSION, schema.CURRENT_VERSION)  # once is enough
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
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    prune(str(db), keep=1)  # deletes execution 1; its id, and 2's, are not given again
    assert record({"summary": {"map": 0.1}}, db=str(db), name="after") == 3
    prune(str(db), keep=0, name="after")
    assert record({"summary": {"map": 0.1}}, db=str(db), name="after") == 4


def _v1_on_postgresql(url: str) -> None:
    """The frozen first-version file as a PostgreSQL history: its tables as reflected, its rows copied,
    each id sequence past the ids copied (as evaltool's own inserts would have left it)."""
    source = sa.create_engine(f"sqlite:///{FIXTURES / 'history-v1.sqlite'}")
    target = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    tables = sa.MetaData()
    tables.reflect(source)
    with source.connect() as read, target.begin() as write:
        tables.create_all(write)
        for table in tables.sorted_tables:
            rows = [dict(r._mapping) for r in read.execute(sa.select(table))]
            if rows:
                write.execute(table.insert(), rows)
        write.execute(sa.text("SELECT setval(pg_get_serial_sequence('executions', 'id'), "
                              "(SELECT max(id) FROM executions))"))
    source.dispose()
    target.dispose()


def _layout(db: str) -> dict:
    """Everything a schema is made of, as reflected: tables, columns (type, nullability, default),
    keys, foreign keys, indexes, unique constraints; on SQLite also which tables AUTOINCREMENT."""
    engine = sa.create_engine(db.replace("postgresql://", "postgresql+psycopg://") if "://" in db
                              else f"sqlite:///{db}")
    out = {}
    with engine.connect() as conn:
        inspector = sa.inspect(conn)
        for name in sorted(inspector.get_table_names()):
            out[name] = {
                "columns": [(c["name"], str(c["type"].compile(dialect=conn.dialect)), c["nullable"],
                             c.get("default"), c.get("autoincrement")) for c in inspector.get_columns(name)],
                "primary key": inspector.get_pk_constraint(name)["constrained_columns"],
                "foreign keys": sorted((tuple(f["constrained_columns"]), f["referred_table"],
                                        tuple(f["referred_columns"])) for f in inspector.get_foreign_keys(name)),
                "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"]))
                                  for i in inspector.get_indexes(name)),
                "unique": sorted(tuple(u["column_names"]) for u in inspector.get_unique_constraints(name)),
            }
        if conn.dialect.name == "sqlite":
            for name, sql in conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'table'"):
                if name in out:
                    out[name]["autoincrement"] = "AUTOINCREMENT" in sql.upper()
    engine.dispose()
    return out


def test_an_upgraded_history_has_exactly_the_schema_of_a_new_one(db, tmp_path, request):
    if "://" in db:
        _v1_on_postgresql(db)
        fresh = request.getfixturevalue("postgres_cluster").create_database()
    else:
        shutil.copy(FIXTURES / "history-v1.sqlite", db)
        fresh = str(tmp_path / "fresh.sqlite")
    assert upgrade(db) == (1, schema.CURRENT_VERSION)
    record({"summary": {"map": 0.5}}, db=fresh, name="x")
    migrated, new = _layout(db), _layout(fresh)
    assert set(migrated) == set(new) >= set(schema.TABLES)
    for table in new:
        assert migrated[table] == new[table], table
    assert new["executions"]["primary key"] == ["id"]
    if "://" not in db:
        assert migrated["executions"]["autoincrement"] is True
    assert record({"summary": {"map": 0.5}}, db=db, name="x") == 3


def test_upgrade_says_what_it_cannot_do(db, tmp_path):
    missing = tmp_path / "none.sqlite"
    with pytest.raises(HistoryError, match="no history there"):
        upgrade(str(missing))
    assert not missing.exists()
    record({"summary": {"map": 0.5}}, db=db, name="x")
    engine = sa.create_engine(db.replace("postgresql://", "postgresql+psycopg://") if "://" in db
                              else f"sqlite:///{db}")
    with engine.begin() as conn:
        conn.execute(schema.schema_table.update().values(version=schema.CURRENT_VERSION + 1))
    with pytest.raises(HistoryError, match="written by a newer evaltool"):
        upgrade(db)
    with engine.begin() as conn:
        conn.execute(schema.schema_table.update().values(version=0))
    engine.dispose()
    for call in (lambda: upgrade(db), lambda: list_executions(db)):
        with pytest.raises(HistoryError, match="damaged.*'0'; expected a whole number from 1"):
            call()


def test_ids_are_never_reused(db):
    """The newest execution pruned, its id is not given to the next one (SQLite reused it without
    AUTOINCREMENT, and a reader holding the id then read another execution under it)."""
    record({"summary": {"map": 0.5}}, db=db, name="x", at="2025-01-02")
    doomed = record({"summary": {"map": 0.4}}, db=db, name="x", at="2025-01-01")
    assert prune(db, keep=1) == [doomed]
    assert record({"summary": {"map": 0.3}}, db=db, name="y") == doomed + 1
    prune(db, keep=0)
    assert record({"summary": {"map": 0.3}}, db=db, name="y") == doomed + 2


def test_every_write_moves_the_change_counter(db, tmp_path):
    from evaltool.history import add_suite, set_active
    from evaltool.history.queries import state

    record({"summary": {"map": 0.5}}, db=db, name="x")
    seen = [state(db)]
    queries = tmp_path / "queries.json"
    queries.write_text('[{"query_id": "q1", "query": "a", "relevant_ids": ["d1"]}]')
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 r\n")
    for write in (lambda: record({"summary": {"map": 0.5}}, db=db, name="x"), lambda: prune(db, keep=1),
                  lambda: add_suite(db, "s", queries, str(run)), lambda: set_active(db, "s", False),
                  lambda: set_active(db, "s", True)):
        write()
        seen.append(state(db))
    assert seen == sorted(set(seen)), seen  # strictly growing: never back to a value a reader has seen


def test_a_migrated_history_has_the_schema_of_a_fresh_one(tmp_path):
    """Every table, index and column as a new history makes them, whatever version the file started at."""
    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    shutil.copy(FIXTURES / "history-v1.sqlite", old)
    upgrade(str(old))
    record({"summary": {"map": 0.5}}, db=str(new), name="x")

    assert sqlite_layout(old) == sqlite_layout(new)
    assert "audit" in dict(sqlite_layout(new))


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


def test_upgrade_gives_old_short_dates_their_four_digits(tmp_path):
    """An older evaltool stored 0999-06-01 as '999-06-01T00:00:00Z', which sorted as the newest date."""
    db = tmp_path / "old.sqlite"
    shutil.copy(FIXTURES / "history-v1.sqlite", db)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO executions (name, recorded_at, kind, evaltool_version, options, thresholds, sources)"
                     " VALUES ('bm25', '999-06-01T00:00:00Z', 'eval', '0.1', '{}', '{}', '{}')")
        conn.execute("INSERT INTO summary_values VALUES (3, 0, 'recip_rank', 0.1, 'mean')")
    upgrade(str(db))
    assert [(e.id, e.recorded_at) for e in list_executions(str(db))] == [
        (3, "0999-06-01T00:00:00Z"), (1, "2025-01-28T09:00:00Z"), (2, "2025-02-01T09:00:00Z")]


def test_a_version_5_history_gains_the_judgment_tables_and_keeps_what_it_held(tmp_path):
    """history-v5.sqlite (see fixtures/README.md): a suite and an execution with its stored result lists;
    the upgrade to version 6 adds the judgment tables, empty, and leaves the rest as it was."""
    from evaltool.history import get_execution, get_suite

    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    shutil.copy(FIXTURES / "history-v5.sqlite", old)
    with pytest.raises(HistoryError, match="schema version 5"):
        list_executions(str(old))
    assert upgrade(str(old)) == (5, schema.CURRENT_VERSION)
    record({"summary": {"map": 0.5}}, db=str(new), name="x")

    assert sqlite_layout(old) == sqlite_layout(new)
    with sqlite3.connect(old) as conn:
        for table in ("judgment_sets", "judgment_set_versions", "judgments", "judging_tasks", "task_queries",
                      "task_documents"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,), table
    execution = get_execution(str(old), 1, results=True)
    assert (execution.name, execution.kind, len(execution.results)) == ("helpdesk", "suite", 16)
    assert sum(len(r["documents"]) for r in execution.results) == 63
    assert len(get_suite(str(old), "helpdesk").queries) == 16
