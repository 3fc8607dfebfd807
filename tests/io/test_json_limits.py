"""JSON nested deeper than Python's parser goes (100,000 levels) is one message naming the file
and the line, exit 2, in every reader of JSON: queries (JSON, JSONL), results JSONL, topics,
check references, bench queries, click logs in every JSON layout. A click log's events
JSONL would reach Arrow's JSON reader, which crashed the process (a segmentation fault):
that one runs as a separate process.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.helpers import ROOT, assert_fails, invoke, write

DEEP = 100_000
NESTED = "[" * DEEP + "]" * DEEP
MESSAGE = "levels deep (Python's parser stops near"  # 100,000 or 100,001 levels: the array, or the object around it


def _lines(*objects) -> str:
    return "".join(json.dumps(o) + "\n" for o in objects)


def _with_deep_value(obj: dict, key: str = "extra") -> str:
    """``obj`` as one JSON line, with ``key`` mapped to NESTED."""
    return json.dumps(obj)[:-1] + f', "{key}": {NESTED}}}'


QUERY = {"qid": "q1", "query": "a", "relevant_ids": ["d1"]}
RESULT = {"qid": "q1", "docid": "d1", "rank": 1, "score": 1.0, "text": "a"}


def test_queries_and_results_jsonl(tmp_path):
    queries = write(tmp_path / "q.jsonl", _lines(QUERY) + _with_deep_value({"qid": "q2", "query": "b"}) + "\n")
    results = write(tmp_path / "r.jsonl", _lines(RESULT))
    assert_fails(invoke(queries, results), f"{queries}:2", MESSAGE)
    good = write(tmp_path / "good.jsonl", _lines(QUERY))
    results = write(tmp_path / "r2.jsonl", _lines(RESULT) + _with_deep_value(RESULT) + "\n")
    assert_fails(invoke(good, results), f"{results}:2", MESSAGE)


def test_queries_json_array(tmp_path):
    queries = write(tmp_path / "q.json", "[\n" + json.dumps(QUERY) + ",\n" + NESTED + "\n]")
    results = write(tmp_path / "r.jsonl", _lines(RESULT))
    assert_fails(invoke(queries, results), f"{queries}:3", MESSAGE)


@pytest.mark.parametrize("layout", ["json", "jsonl"])
def test_topics(tmp_path, layout):
    text = (json.dumps({"q1": {"category": NESTED}}).replace(json.dumps(NESTED), NESTED) if layout == "json"
            else _lines({"qid": "q1", "category": "a"}) + _with_deep_value({"qid": "q2"}, "category") + "\n")
    topics = write(tmp_path / f"topics.{layout}", text)
    qrels = str(ROOT / "data" / "qrels.txt")
    run = str(ROOT / "data" / "run.txt")
    assert_fails(invoke(qrels, run, "--group-by", "category", "--topics", topics), topics, MESSAGE)


def test_check_reference(tmp_path):
    reference = write(tmp_path / "ref.json", '{"summary": {"map": 0.5}, "meta": ' + NESTED + "}")
    assert_fails(invoke("check", reference, ROOT / "data" / "qrels.txt", ROOT / "data" / "run.txt"),
                 f"{reference}:1", MESSAGE)


@pytest.mark.parametrize("layout", ["json", "jsonl"])
def test_bench_queries(tmp_path, layout):
    query = {"id": 1, "query": "a", "relevant_ids": ["d1"]}
    text = ("[" + json.dumps(query) + ",\n" + NESTED + "]" if layout == "json"
            else _lines(query) + _with_deep_value({"id": 2, "query": "b", "relevant_ids": ["d"]}) + "\n")
    queries = write(tmp_path / f"q.{layout}", text)
    run = write(tmp_path / "run.txt", "1 Q0 d1 1 1.0 x\n")
    assert_fails(invoke("bench", queries, "--backend", run, "--out", tmp_path / "out"), f"{queries}:2", MESSAGE)


IMPRESSION = {"consulta": "a", "resultados": ["d1", "d2"], "clicks": ["d1"]}


@pytest.mark.parametrize("layout", ["json", "jsonl"])
def test_click_log_of_impressions(tmp_path, layout):
    text = ("[\n" + json.dumps(IMPRESSION) + ",\n" + NESTED + "\n]" if layout == "json"
            else _lines(IMPRESSION) + _with_deep_value(IMPRESSION) + "\n")
    log = write(tmp_path / f"log.{layout}", text)
    assert_fails(invoke("clicks", log, "--resamples", "10"), f"{log}:{3 if layout == 'json' else 2}", MESSAGE)


EVENT = {"session_id": "s1", "query": "a", "action": "impression", "doc_id": "d1", "position": 1}


@pytest.mark.parametrize("deep", [True, False])
def test_click_log_of_events_never_reaches_arrow_too_deep(tmp_path, deep):
    """A separate process: Arrow's JSON reader ended this one with a segmentation fault (exit 139).
    A line with as many brackets that are not nested is read (by the line reader, past Arrow)."""
    nested = NESTED if deep else "[" + ",".join(["[1]"] * DEEP) + "]"
    click = dict(EVENT, action="click")
    log = write(tmp_path / "events.jsonl",
                _lines(EVENT) + json.dumps(click)[:-1] + f', "extra": {nested}}}' + "\n")
    done = subprocess.run([sys.executable, "-m", "evaltool", "clicks", log, "-m", "ctr", "--resamples", "10"],
                          capture_output=True, text=True, timeout=120)
    if deep:
        assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
        assert done.stderr.startswith(f"evaltool: {log}:2: found ") and MESSAGE in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and len(done.stderr) < 600
    else:
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split("\n")[1].split()[:3] == ["all", "ctr", "1.0000"], done.stdout


def test_the_arrow_guard_counts_brackets_across_reads(tmp_path):
    """A long line split over many reads is counted whole; short lines cost nothing."""
    import io

    from evaltool.io.clicks.events_jsonl import ARROW_NESTING_LIMIT, ShallowLines, TooDeepForArrow

    deep = b'{"a": ' + b"[" * ARROW_NESTING_LIMIT + b"]" * ARROW_NESTING_LIMIT + b"}\n"
    guarded = ShallowLines(io.BytesIO(b'{"a": 1}\n' * 50 + deep))
    with pytest.raises(TooDeepForArrow):
        while guarded.read(7):
            pass
    shallow = b'{"a": [[1]]}\n' * 1000 + b'{"a": "' + b"[" * (ARROW_NESTING_LIMIT - 2) + b'"}\n'
    guarded = ShallowLines(io.BytesIO(shallow))
    assert b"".join(iter(lambda: guarded.read(64), b"")) == shallow


HUGE = "9" * 5000


def test_a_number_of_5000_digits_in_json(tmp_path):
    """Python converts at most 4300 digits of text to an int (ValueError, a traceback before)."""
    queries = write(tmp_path / "q.jsonl", _lines(QUERY))
    results = write(tmp_path / "r.jsonl", _lines(RESULT) + json.dumps(dict(RESULT, docid="d2"))[:-1]
                    .replace('"rank": 1', f'"rank": {HUGE}') + "}\n")
    assert_fails(invoke(queries, results), f"{results}:2", "a number of more than 4300 digits")
    bench = write(tmp_path / "bench.json", '[{"id": 1, "query": "a", "relevant_ids": ["d1"]},\n'
                                           f'{{"id": {HUGE}, "query": "b", "relevant_ids": ["d2"]}}]')
    run = write(tmp_path / "run.txt", "1 Q0 d1 1 1.0 x\n")
    assert_fails(invoke("bench", bench, "--backend", run, "--out", tmp_path / "out"), f"{bench}:2",
                 "a number of more than 4300 digits")


def test_a_qrels_grade_of_5000_digits(tmp_path):
    qrels = write(tmp_path / "qrels.txt", f"q1 0 d1 1\nq1 0 d2 {HUGE}\n")
    message = assert_fails(invoke(qrels, ROOT / "data" / "run.txt"), f"{qrels}:2", "(5008 characters)",
                           "an integer grade between -9223372036854775808 and 9223372036854775807 in field 4")
    assert len(message) < 600
    negative = write(tmp_path / "negative.txt", f"q1 0 d1 1\nq1 0 d2 -{HUGE}\n")
    assert_fails(invoke(negative, ROOT / "data" / "run.txt"), f"{negative}:2", "an integer grade between")


def test_a_first_line_just_too_deep_is_reported_as_jsonl(tmp_path):
    """Near the parser's limit the first line failed while the format was being recognised, and
    the file was then read as a JSON document ('expected an array of query objects')."""
    for depth in (985, 990, 1000):
        nested = "[" * depth + "]" * depth
        queries = write(tmp_path / "q.jsonl", json.dumps(QUERY)[:-1] + f', "x": {nested}}}\n')
        results = write(tmp_path / "r.jsonl", _lines(RESULT))
        result = invoke(queries, results)
        if result.exit_code == 2:
            assert_fails(result, f"{queries}:1", "expected one JSON object per line", MESSAGE)
