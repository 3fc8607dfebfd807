"""The audit trail: an entry per write, read back per subject; written in the writer's transaction."""

from __future__ import annotations

import pytest

from evaltool.errors import HistoryError
from evaltool.history import list_audit, log_write, open_history, record, record_write


def test_entries_are_read_back_per_subject_oldest_first(db):
    record_write(db, actor="ci", role="operator", action="record", subject_kind="execution", subject=1,
                 at="2025-01-28T09:00:00+01:00")
    record_write(db, actor="ana", role="rater", action="judge", subject_kind="suite", subject="panel",
                 detail={"query": "q1", "grade": 2}, at="2025-01-28T10:00:00Z")
    record_write(db, actor="ci", role="operator", action="edit", subject_kind="suite", subject="panel",
                 at="2025-01-29")
    panel = list_audit(db, "suite", "panel")
    assert [(e.actor, e.role, e.action, e.at, e.detail) for e in panel] == [
        ("ana", "rater", "judge", "2025-01-28T10:00:00Z", {"query": "q1", "grade": 2}),
        ("ci", "operator", "edit", "2025-01-29T00:00:00Z", None)]
    assert [e.subject for e in list_audit(db, "execution", 1)] == ["1"]
    assert [e.at for e in list_audit(db)] == ["2025-01-28T08:00:00Z", "2025-01-28T10:00:00Z",
                                              "2025-01-29T00:00:00Z"]
    assert [e.action for e in list_audit(db, "suite", limit=1)] == ["edit"]  # the newest one
    assert list_audit(db, "suite", "other") == []
    assert panel[0].to_dict()["subject_kind"] == "suite"


def test_an_entry_is_part_of_the_writers_transaction(db):
    record({"summary": {"map": 0.5}}, db=db, name="x")
    with open_history(db) as history:
        with pytest.raises(RuntimeError), history.writing() as conn:
            log_write(conn, actor="ci", role="operator", action="create", subject_kind="suite", subject="s")
            raise RuntimeError("the write failed after its entry was added")
        assert list_audit(history) == []  # rolled back with the write
        with history.writing() as conn:
            entry = log_write(conn, actor="ci", role="operator", action="create", subject_kind="suite", subject="s")
        assert [e.id for e in list_audit(history)] == [entry]


@pytest.mark.parametrize("change, fragment", [
    ({"role": "admin"}, "role 'admin'; expected one of operator, rater"),
    ({"actor": " "}, "actor is empty"),
    ({"subject": "x" * 201}, "subject of 201 characters; at most 200"),
    ({"detail": ["a"]}, "detail must be a JSON object"),
    ({"detail": {"x": float("nan")}}, "detail is not JSON-ready"),
    ({"detail": {"x": "y" * 5000}}, "at most 4096"),
    ({"at": "2025-13-01"}, "at '2025-13-01'"),
])
def test_bad_entries_are_refused_and_nothing_is_written(db, change, fragment):
    entry = {"actor": "ci", "role": "operator", "action": "record", "subject_kind": "execution", "subject": 1,
             **change}
    with pytest.raises(HistoryError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        record_write(db, **entry)
    record({"summary": {"map": 0.5}}, db=db, name="x")
    assert list_audit(db) == []


def test_ids_are_never_reused(tmp_path):
    import sqlalchemy as sa

    from evaltool.history import schema

    db = str(tmp_path / "h.sqlite")
    first = record_write(db, actor="a", role="operator", action="x", subject_kind="k", subject="s")
    with open_history(db) as history, history.writing() as conn:
        conn.execute(sa.delete(schema.audit))
    assert record_write(db, actor="a", role="operator", action="x", subject_kind="k", subject="s") == first + 1
