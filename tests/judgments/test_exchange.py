"""judgments import / export: TREC qrels and JSONL in and out, one version per import, bad input."""

from __future__ import annotations

import json

import pytest

from tests.support.helpers import assert_fails, invoke, write


def _db(tmp_path) -> str:
    return str(tmp_path / "h.sqlite")


def test_import_export_round_trip_trec_and_jsonl(tmp_path):
    db = _db(tmp_path)
    ana = write(tmp_path / "ana.qrels", "q1 0 d1 3\nq1 0 d2 0\n# a comment\nq2 0 d9 1\n")
    result = invoke("judgments", "import", ana, "--set", "s", "--rater", "ana", "--db", db)
    assert result.exit_code == 0, result.stderr
    assert "3 judgments read" in result.stderr and "now version 1" in result.stderr
    ben = write(tmp_path / "ben.jsonl", '{"query_id": "q1", "doc_id": "d1", "grade": 2, "note": "close"}\n\n'
                                        '{"query_id": "q1", "doc_id": "d2", "label": "1", "rater": "eva"}\n')
    assert invoke("judgments", "import", ben, "--set", "s", "--rater", "ben", "--db", db).exit_code == 0
    again = invoke("judgments", "import", ana, "--set", "s", "--rater", "ana", "--db", db)
    assert "all already there; unchanged (version 2)" in again.stderr
    assert invoke("judgments", "export", "s", "--rater", "ana", "--db", db).stdout == (
        "q1 0 d1 3\nq1 0 d2 0\nq2 0 d9 1\n")
    # majority: d1 {3, 2} tie -> 2; d2 {0, 1} tie -> 0; median: the lower middle grade
    assert invoke("judgments", "export", "s", "--db", db).stdout == "q1 0 d1 2\nq1 0 d2 0\nq2 0 d9 1\n"
    assert invoke("judgments", "export", "s", "--consensus", "ana", "--db", db).stdout == (
        "q1 0 d1 3\nq1 0 d2 0\nq2 0 d9 1\n")
    lines = [json.loads(x) for x in invoke("judgments", "export", "s", "--format", "jsonl", "--db", db).stdout
             .splitlines()]
    assert [(x["query_id"], x["doc_id"], x["rater"], x["grade"], x["note"]) for x in lines] == [
        ("q1", "d1", "ana", 3, None), ("q1", "d1", "ben", 2, "close"), ("q1", "d2", "ana", 0, None),
        ("q1", "d2", "eva", 1, None), ("q2", "d9", "ana", 1, None)]
    # an exported JSONL imports into a new set as the same judgments
    out = tmp_path / "all.jsonl"
    invoke("judgments", "export", "s", "--format", "jsonl", "--db", db, "--output", out)
    assert invoke("judgments", "import", out, "--set", "copy", "--db", db).exit_code == 0
    copy = invoke("judgments", "export", "copy", "--format", "jsonl", "--db", db).stdout
    assert copy == invoke("judgments", "export", "s", "--format", "jsonl", "--db", db).stdout
    listed = json.loads(invoke("judgments", "list", "--db", db, "-o", "json").stdout)
    assert [(s["name"], s["scale"], s["version"]) for s in listed] == [("copy", "graded", 1), ("s", "graded", 2)]


def test_exported_qrels_score_as_evaltool_scores_any_qrels(tmp_path):
    db = _db(tmp_path)
    invoke("judgments", "import", write(tmp_path / "a.qrels", "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\n"), "--set", "s",
           "--rater", "ana", "--scale", "binary", "--db", db)
    qrels = tmp_path / "qrels.txt"
    invoke("judgments", "export", "s", "--db", db, "--output", qrels)
    run = write(tmp_path / "run.txt", "q1 Q0 d2 1 3 r\nq1 Q0 d1 2 2 r\nq1 Q0 d9 3 1 r\n")
    result = invoke(qrels, run, "-m", "P.2", "-m", "recip_rank", "-m", "map")
    # by hand: P@2 = 1/2; first relevant at rank 2: RR 0.5; AP = (1/2) / 2 relevant = 0.25
    assert [line.split() for line in result.stdout.splitlines()] == [
        ["map", "all", "0.2500"], ["recip_rank", "all", "0.5000"], ["P_2", "all", "0.5000"]]


@pytest.mark.parametrize("content, args, fragments", [
    ("q1 0 d1 1\nq1 0 d2 7\n", ["--rater", "ana"], ["qrels:2: found 'q1 0 d2 7'", "grade of the graded scale"]),
    ("q1 0 d1 1\nq1 d2\n", ["--rater", "ana"], ["qrels:2"]),
    ("q1 0 d1 1\n", [], ["TREC qrels do not say who judged; give --rater NAME"]),
    ('{"query_id": "q1", "doc_id": "d1", "grade": 1}\n{"query_id": "q1", "doc_id": "d2", "grade": 9}\n',
     ["--rater", "ana"], ["qrels:2: found", "grade 9 is not on the graded scale"]),
    ('{"query_id": "q1", "doc_id": "d1", "grade": 1}\n[1, 2]\n', ["--rater", "ana"], ["qrels:2: found '[1, 2]'"]),
    ('{"query_id": "q1", "doc_id": "d1", "grade": 1}\n', [], ["no rater there nor --rater"]),
    ('{"query_id": "q1", "doc_id": "d1", "grade": 1', ["--rater", "ana"], ["qrels:1: found"]),
])
def test_a_bad_file_names_its_line_and_writes_nothing(tmp_path, content, args, fragments):
    db = _db(tmp_path)
    invoke("judgments", "create", "s", "--db", db)
    result = invoke("judgments", "import", write(tmp_path / "qrels", content), "--set", "s", *args, "--db", db)
    assert_fails(result, *fragments)
    assert invoke("judgments", "export", "s", "--format", "jsonl", "--db", db).stdout == ""


def test_export_options(tmp_path):
    db = _db(tmp_path)
    invoke("judgments", "import", write(tmp_path / "a", "q 0 d 1\n"), "--set", "s", "--rater", "ana", "--db", db)
    invoke("judgments", "import", write(tmp_path / "b", "q 0 d 2\n"), "--set", "s", "--rater", "ben", "--db", db)
    assert_fails(invoke("judgments", "export", "s", "--rater", "ana", "--consensus", "median", "--db", db),
                 "give one")
    assert_fails(invoke("judgments", "export", "s", "--rater", "zoe", "--db", db), "no judgment by the rater 'zoe'")
    unresolved = invoke("judgments", "export", "s", "--consensus", "eva", "--db", db)
    assert_fails(unresolved, "expected majority, median or the name of a rater")
    invoke("judgments", "import", write(tmp_path / "c", "q 0 e 1\n"), "--set", "s", "--rater", "eva", "--db", db)
    partial = invoke("judgments", "export", "s", "--consensus", "eva", "--db", db)
    assert partial.stdout == "q 0 e 1\n" and "1 pairs the raters disagree on were not adjudicated" in partial.stderr
    assert invoke("judgments", "export", "s", "--version", "1", "--db", db).stdout == "q 0 d 1\n"
    assert_fails(invoke("judgments", "import", write(tmp_path / "x", "q 0 d 1\n"), "--set", "s", "--rater", "a",
                        "--scale", "binary", "--db", db), "set s is on the scale graded")
