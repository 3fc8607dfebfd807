"""Recording and reading back, on both backends: every value, the options, thresholds, fingerprints."""

from __future__ import annotations

import hashlib
import re
import json

import pytest

import evaltool
from evaltool import evaluate
from evaltool.errors import HistoryError
from evaltool.history import get_execution, list_executions, record

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq2 0 d 1\n"
RUN = "q1 Q0 b 1 3.0 tagged\nq1 Q0 a 2 2.0 tagged\nq2 Q0 c 1 5.0 tagged\nq2 Q0 x 2 4.0 tagged\n"


@pytest.fixture
def files(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return str(qrels), str(run)


def test_an_evaluation_comes_back_whole(db, files):
    qrels, run = files
    result = evaluate(qrels, run, ["recip_rank", "P.2", "num_ret", "runid"], relevance_level=1, max_ret=5)
    execution_id = record(result, db=db, note="first try", tags={"model": "bm25", "split": "dev"},
                          at="2025-01-28T10:15:00+02:00", commit="0" * 40)
    execution = get_execution(db, execution_id)
    # q1: first relevant (a) at rank 2; q2: c at rank 1. P@2: q1 1/2, q2 1/2 (d not retrieved).
    assert execution.summary == {"recip_rank": 0.75, "P_2": 0.5, "num_ret": 4.0}
    assert execution.per_query == {"q1": {"recip_rank": 0.5, "P_2": 0.5, "num_ret": 2.0},
                                   "q2": {"recip_rank": 1.0, "P_2": 0.5, "num_ret": 2.0}}
    assert execution.name == "run.txt"  # the file name, as compare names runs
    assert execution.recorded_at == "2025-01-28T08:15:00Z"
    assert execution.note == "first try" and execution.tags == {"model": "bm25", "split": "dev"}
    assert execution.options["relevance_level"] == 1 and execution.options["max_ret"] == 5
    assert execution.thresholds == {"recip_rank": 0.7, "ndcg_cut_10": 0.6, "P_5": 0.5}
    assert execution.fingerprints["qrels"] == hashlib.sha256(QRELS.encode()).hexdigest()
    assert execution.fingerprints["run"] == hashlib.sha256(RUN.encode()).hexdigest()
    assert execution.fingerprints["queries"] is None
    assert execution.git_commit == "0" * 40
    assert execution.evaltool_version == evaltool.__version__
    assert execution.query_count == 2 and execution.kind == "eval"
    assert execution.sources == {"qrels": qrels, "run": run}
    assert json.loads(json.dumps(execution.to_dict()))["per_query"]["q2"]["recip_rank"] == 1.0


def test_the_json_of_an_evaluation_records_too(db):
    result = evaluate({"q1": {"a": 1}}, {"q1": {"b": 2.0, "a": 1.0}}, ["recip_rank"], per_query=True)
    execution_id = record(json.loads(result.to_json()), db=db, name="from-json", thresholds={"recip_rank": 0.4})
    execution = get_execution(db, execution_id)
    assert (execution.summary, execution.per_query) == ({"recip_rank": 0.5}, {"q1": {"recip_rank": 0.5}})
    assert execution.thresholds == {"recip_rank": 0.4}
    assert execution.fingerprints == {"qrels": None, "run": None, "queries": None}  # dicts, not files


def test_nan_is_stored_as_null_and_ids_are_kept(db):
    execution_id = record({"summary": {"map": float("nan"), "P_5": 0.2},
                           "per_query": {"q\u00e9 1": {"map": float("nan"), "P_5": 0.2}}}, db=db, name="n")
    execution = get_execution(db, execution_id)
    assert execution.summary == {"map": None, "P_5": 0.2}
    assert execution.per_query == {"q\u00e9 1": {"map": None, "P_5": 0.2}}


def test_list_filters_by_inclusive_dates_name_and_tags(db):
    def add(name, at, **tags):
        return record({"summary": {"map": 0.1}}, db=db, name=name, at=at, tags=tags, commit=None)

    a = add("bm25", "2025-01-01", split="dev")
    b = add("bm25", "2025-01-31T23:59:59Z", split="test")
    c = add("rm3", "2025-01-15T12:00:00Z", split="dev")
    d = add("bm25", "2025-02-01")
    ids = lambda executions: [e.id for e in executions]
    assert ids(list_executions(db)) == [a, c, b, d]  # by date
    assert ids(list_executions(db, "2025-01-01", "2025-01-31")) == [a, c, b]  # both ends, --to is the whole day
    assert ids(list_executions(db, "2025-01-01T00:00:01", None)) == [c, b, d]
    assert ids(list_executions(db, name="bm25")) == [a, b, d]
    assert ids(list_executions(db, tags={"split": "dev"})) == [a, c]
    assert ids(list_executions(db, tags=["split=dev"], name="rm3")) == [c]
    assert ids(list_executions(db, newest_first=True, limit=2)) == [d, b]
    assert ids(list_executions(db, limit=2, offset=1)) == [c, b]
    assert list_executions(db)[0].tags == {"split": "dev"}


@pytest.mark.parametrize("bad, message", [
    ({"at": "28/01/2025"}, "--at '28/01/2025': expected an ISO-8601 date"),
    ({"name": "  "}, "--name: an execution needs a non-empty name"),
    ({"kind": "other"}, "kind 'other'"),
])
def test_bad_record_arguments_are_refused_before_writing(tmp_path, bad, message):
    db = tmp_path / "h.sqlite"
    with pytest.raises(HistoryError, match=message.replace("(", r"\(")):
        record({"summary": {"map": 0.1}}, db=str(db), **bad)
    assert not db.exists()


def test_unknown_ids_and_ranges_give_one_message(db):
    record({"summary": {"map": 0.1}}, db=db, name="x")
    with pytest.raises(HistoryError, match="no execution with id 42"):
        get_execution(db, 42)
    with pytest.raises(HistoryError, match="execution id 'abc': expected a number"):
        get_execution(db, "abc")
    with pytest.raises(HistoryError, match="--from 2025-02-01 is after --to 2025-01-01"):
        list_executions(db, "2025-02-01", "2025-01-01")
    with pytest.raises(HistoryError, match="--to 'yesterday': expected an ISO-8601 date"):
        list_executions(db, None, "yesterday")


def test_dates_are_stored_with_four_digits_of_year():
    from datetime import datetime, timezone

    from evaltool.history.dates import range_bounds, stamp

    assert stamp(datetime(999, 6, 1, 8, 5, 3, tzinfo=timezone.utc)) == "0999-06-01T08:05:03Z"
    assert stamp(datetime(5, 1, 1, tzinfo=timezone.utc)) == "0005-01-01T00:00:00Z"
    assert range_bounds("1000-01-01", "9999-12-30") == ("1000-01-01T00:00:00Z", "9999-12-30T23:59:59Z")
    for edge in ("0999-12-31", "9999-12-31", "0001-01-01T00:00:00+01:00", "9999-12-30T23:00:00-05:00"):
        with pytest.raises(HistoryError, match="outside the dates the history holds; expected a date from "
                                               "1000-01-01 to 9999-12-30"):
            range_bounds(edge)


@pytest.mark.parametrize("at, message", [
    ("0999-06-01", r"--at '0999-06-01': a recording date lies between 1970-01-01 and \d{4}-\d\d-\d\d \(UTC\)"),
    ("9999-12-31", r"--at '9999-12-31': a recording date lies between 1970-01-01"),
    ("0001-01-01", r"--at '0001-01-01': a recording date lies between"),
    ("0001-01-01T00:00:00+01:00", r"--at '0001-01-01T00:00:00\+01:00': a recording date lies between"),
    ("9999-12-31T23:00:00-05:00", r"--at '9999-12-31T23:00:00-05:00': a recording date lies between"),
    ("10000-01-01", r"--at '10000-01-01': expected an ISO-8601 date"),
])
def test_recording_dates_at_the_calendars_edges_are_one_message(tmp_path, at, message):
    """0999-06-01 was stored as '999-06-01T...', which sorts after every date of this millennium: it
    became the newest execution, the one 'history check' judges."""
    from tests.support.helpers import invoke

    db = tmp_path / "h.sqlite"
    with pytest.raises(HistoryError, match=message):
        record({"summary": {"map": 0.1}}, db=str(db), at=at)
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 1\n")
    run.write_text("q1 Q0 a 1 1.0 r\n")
    done = invoke(qrels, run, "--record", "--db", db, "--at", at)
    assert done.exit_code == 2 and done.stdout == "", done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(message, lines[0]), done.stderr
    assert not db.exists()
