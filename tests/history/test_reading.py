"""diff, check, export and prune, on both backends; statistics checked against scipy itself."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import scipy.stats

from evaltool import evaluate
from evaltool.errors import HistoryError
from evaltool.history import check, diff, export, list_executions, prune, record

A = {"q1": 0.2, "q2": 0.5, "q3": 0.9, "q4": 0.1, "q5": 0.4, "only_a": 0.3}
B = {"q1": 0.3, "q2": 0.45, "q3": 0.95, "q4": 0.6, "q5": 0.5, "only_b": 0.7}


def _record(db, values, at, name="sys", qrels="a" * 64, **kwargs):
    per_query = {q: {"map": v, "P_5": round(v, 1)} for q, v in values.items()}
    summary = {"map": sum(values.values()) / len(values), "P_5": 0.5, "num_ret": 100}
    result = {"summary": summary, "per_query": per_query}
    return record(result, db=db, name=name, at=at, fingerprints={"qrels": qrels}, commit=None, **kwargs)


def test_diff_pairs_the_shared_queries_with_compares_test(db):
    a = _record(db, A, "2025-01-01")
    b = _record(db, B, "2025-01-02", qrels="b" * 64)
    out = diff(db, a, b, measures=["map"])
    shared = ["q1", "q2", "q3", "q4", "q5"]
    base, other = np.array([A[q] for q in shared]), np.array([B[q] for q in shared])
    cell = out["measures"]["map"]
    assert out["queries"] == 5 and out["only_in_a"] == ["only_a"] and out["only_in_b"] == ["only_b"]
    assert cell["mean_a"] == pytest.approx(base.mean()) and cell["mean_b"] == pytest.approx(other.mean())
    assert cell["delta"] == pytest.approx((other - base).mean())
    expected = scipy.stats.ttest_rel(other, base)
    assert cell["p_value"] == pytest.approx(expected.pvalue)
    low, high = expected.confidence_interval(0.95)
    assert cell["ci"] == [pytest.approx(low), pytest.approx(high)]
    assert (cell["wins"], cell["ties"], cell["losses"]) == (4, 0, 1)
    assert [m["query_id"] for m in cell["moved"]] == ["q4", "q1", "q5", "q2", "q3"]  # |0.5|, |0.1|, |0.1|, ...
    assert cell["moved"][0] == {"query_id": "q4", "a": 0.1, "b": 0.6, "delta": pytest.approx(0.5)}
    assert len(out["warnings"]) == 1 and "different qrels" in out["warnings"][0]
    assert json.dumps(out)  # plain JSON


def test_diff_needs_per_query_values(db):
    a = record({"summary": {"map": 0.1}}, db=db, name="x")
    b = _record(db, B, "2025-01-02")
    with pytest.raises(HistoryError, match=f"execution {a} .* has no per-query values"):
        diff(db, a, b)
    with pytest.raises(HistoryError, match="no execution with id 99"):
        diff(db, b, 99)


def test_check_against_previous_best_and_an_id(db):
    first = _record(db, {"q1": 0.5, "q2": 0.5}, "2025-01-01")  # map 0.5
    _record(db, {"q1": 0.7, "q2": 0.7}, "2025-01-02")  # map 0.7 (best)
    _record(db, {"q1": 0.6, "q2": 0.6}, "2025-01-03")  # map 0.6: dropped from 0.7, still above 0.5
    _record(db, {"q1": 0.1, "q2": 0.1}, "2025-01-04", name="other")  # another name is never the reference

    previous = check(db, name="sys")
    assert not previous.ok
    assert [(r["measure"], r["reference"], r["dropped"]) for r in previous.rows] == [
        ("map", 0.7, True), ("P_5", 0.5, False)]  # num_ret is a count, though a dict does not say it is a sum
    assert check(db, name="sys", against="best").dropped[0]["reference"] == 0.7
    assert check(db, name="sys", against=str(first)).ok
    assert check(db, name="sys", tolerance=0.2).ok
    newest = check(db)  # the newest execution of all: 'other', alone under its name
    assert newest.ok and newest.latest["name"] == "other" and "nothing to compare against" in newest.note
    assert [r["measure"] for r in check(db, name="sys", measures=["P.5"]).rows] == ["P_5"]
    with pytest.raises(HistoryError, match="--against 'last'"):
        check(db, against="last")
    with pytest.raises(HistoryError, match="no execution to check named 'nobody'"):
        check(db, name="nobody")


def test_export_csv_and_jsonl(db):
    a = _record(db, {"q1": 0.25, "q2": 0.75}, "2025-01-01", tags={"k": "v"})
    text = export(db, "csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["execution_id", "name", "recorded_at", "query_id", "measure", "value"]
    assert rows[1:] == [
        [str(a), "sys", "2025-01-01T00:00:00Z", "all", "map", "0.5"],
        [str(a), "sys", "2025-01-01T00:00:00Z", "all", "P_5", "0.5"],
        [str(a), "sys", "2025-01-01T00:00:00Z", "all", "num_ret", "100.0"],
        [str(a), "sys", "2025-01-01T00:00:00Z", "q1", "map", "0.25"],
        [str(a), "sys", "2025-01-01T00:00:00Z", "q1", "P_5", "0.2"],
        [str(a), "sys", "2025-01-01T00:00:00Z", "q2", "map", "0.75"],
        [str(a), "sys", "2025-01-01T00:00:00Z", "q2", "P_5", "0.8"],
    ]
    lines = export(db, "jsonl").splitlines()
    assert len(lines) == 1
    whole = json.loads(lines[0])
    assert whole["tags"] == {"k": "v"} and whole["per_query"]["q2"] == {"map": 0.75, "P_5": 0.8}
    assert export(db, "csv", "2030-01-01").splitlines() == [",".join(rows[0])]
    with pytest.raises(HistoryError, match="--format 'xml'"):
        export(db, "xml")


def test_prune_keeps_the_newest_of_each_name(db):
    ids = [_record(db, A, f"2025-01-0{d}", name=name) for d, name in
           [(1, "x"), (2, "y"), (3, "x"), (4, "x"), (5, "y")]]
    assert prune(db, keep=1, name="y") == [ids[1]]
    assert prune(db, keep=2) == [ids[0]]
    assert [e.id for e in list_executions(db)] == [ids[2], ids[3], ids[4]]
    assert "q1" in export(db, "csv")
    assert prune(db, keep=0) == sorted([ids[2], ids[3], ids[4]])
    assert export(db, "csv").count("\n") == 1  # the header: no value was left behind
    with pytest.raises(HistoryError, match="--keep -1"):
        prune(db, keep=-1)


def test_check_leaves_counts_out_unless_asked(db):
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    good = evaluate(qrels, {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}, ["map", "num_ret", "num_rel_ret"])
    worse = evaluate(qrels, {"q1": {"x": 2.0, "b": 1.0}, "q2": {"c": 1.0, "d": 0.5}}, ["map", "num_ret", "num_rel_ret"])
    record(good, db=db, name="run", at="2025-01-01")
    record(worse, db=db, name="run", at="2025-01-02")
    verdict = check(db)
    # map 1.0 -> (AP(q1) = (1/2) / 2 + AP(q2) = 1) / 2 = 0.625; num_rel_ret 3 -> 2 is a count (a sum over queries): not a quality to alert on
    assert [(r["measure"], r["latest"], r["reference"]) for r in verdict.rows] == [("map", 0.625, 1.0)]
    assert not verdict.ok
    asked = check(db, measures=["num_rel_ret"])
    assert [(r["measure"], r["latest"], r["reference"], r["dropped"]) for r in asked.rows] == [
        ("num_rel_ret", 2, 3, True)]
