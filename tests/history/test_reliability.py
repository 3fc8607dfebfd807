"""Concurrent recorders lose nothing; a recorder killed mid-transaction leaves nothing behind."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

from evaltool.history import get_execution, list_executions, record

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WRITERS = 8
EACH = 5
QUERIES = 200


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


RECORDER = textwrap.dedent("""
    import sys
    from evaltool.history import record
    db, writer, each, queries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    sys.stdin.readline()  # start together
    for n in range(each):
        per_query = {f"q{i}": {"map": (writer * 1000 + n + i) / 1e6} for i in range(queries)}
        record({"summary": {"map": writer + n / 100}, "per_query": per_query}, db=db, name=f"writer{writer}",
               tags={"n": str(n)}, commit=None)
""")


def test_concurrent_recorders_lose_nothing(db):
    record({"summary": {"map": 0.0}}, db=db, name="setup", commit=None)  # PostgreSQL: the tables exist
    writers = [subprocess.Popen([sys.executable, "-c", RECORDER, db, str(w), str(EACH), str(QUERIES)],
                                stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), text=True)
               for w in range(WRITERS)]
    for process in writers:
        process.stdin.write("go\n")
        process.stdin.flush()
    errors = [process.communicate(timeout=300)[1] for process in writers]
    assert [p.returncode for p in writers] == [0] * WRITERS, errors
    executions = [e for e in list_executions(db) if e.name != "setup"]
    assert sorted((e.name, e.tags["n"]) for e in executions) == sorted(
        (f"writer{w}", str(n)) for w in range(WRITERS) for n in range(EACH))
    for e in executions:
        writer, n = int(e.name[len("writer"):]), int(e.tags["n"])
        assert e.summary == {"map": writer + n / 100}
        full = get_execution(db, e.id)
        assert len(full.per_query) == QUERIES
        assert full.per_query["q7"] == {"map": (writer * 1000 + n + 7) / 1e6}


def test_fresh_file_created_by_concurrent_recorders(tmp_path):
    """No writer sets up the file first: the schema is created once, under the write lock."""
    db = str(tmp_path / "fresh.sqlite")
    writers = [subprocess.Popen([sys.executable, "-c", RECORDER, db, str(w), "1", "3"], stdin=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=_env(), text=True) for w in range(WRITERS)]
    for process in writers:
        process.stdin.write("go\n")
        process.stdin.flush()
    errors = [process.communicate(timeout=300)[1] for process in writers]
    assert [p.returncode for p in writers] == [0] * WRITERS, errors
    assert sorted(e.name for e in list_executions(db)) == sorted(f"writer{w}" for w in range(WRITERS))


KILLED = textwrap.dedent("""
    import sys, time
    from sqlalchemy import event
    from evaltool.history import open_history, record
    history = open_history(sys.argv[1], create=True)

    @event.listens_for(history.engine, "after_cursor_execute")
    def _pause(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("INSERT INTO QUERY_VALUES"):
            print("inside", flush=True)  # the execution row and its summary are written, not committed
            time.sleep(600)

    record({"summary": {"map": 0.5}, "per_query": {f"q{i}": {"map": 0.5} for i in range(50)}}, db=history,
           name="killed", commit=None)
""")


def test_sigkill_mid_record_leaves_no_partial_execution(db):
    first = record({"summary": {"map": 0.25}, "per_query": {"q1": {"map": 0.25}}}, db=db, name="before", commit=None)
    process = subprocess.Popen([sys.executable, "-c", KILLED, db], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=_env(), text=True)
    try:
        line = process.stdout.readline()
        assert line == "inside\n", process.stderr.read()
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL
    assert [e.name for e in list_executions(db)] == ["before"]
    after = record({"summary": {"map": 0.75}}, db=db, name="after", commit=None)
    assert [e.name for e in list_executions(db)] == ["before", "after"] and after > first
    if "://" not in db:
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert conn.execute("SELECT count(*) FROM query_values").fetchone() == (1,)
            assert conn.execute("SELECT count(*) FROM summary_values").fetchone() == (2,)


def test_a_reader_never_sees_half_a_write(db):
    """While a writer holds its transaction open, readers see the history as it was before it, at once."""
    record({"summary": {"map": 0.25}}, db=db, name="before", commit=None)
    process = subprocess.Popen([sys.executable, "-c", KILLED, db], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=_env(), text=True)
    try:
        assert process.stdout.readline() == "inside\n", process.stderr.read()
        assert [e.name for e in list_executions(db)] == ["before"]  # no wait (WAL on SQLite), no half execution
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
