"""Queries files and JSONL results: recognising formats, and every way a line can be wrong.

Bad input gets one message naming the file, the line, the text found and what the
format expects (the format's name included), exit code 2, nothing on stdout, no traceback.
"""

from __future__ import annotations

import gzip
import json

import pytest

from evaltool.errors import ParseError
from evaltool.io.jsonl import parse_queries, parse_results
from evaltool.io.kinds import head_of, sniff
from tests.support.helpers import invoke

QUERIES = '{"qid": "q1", "relevant_ids": ["d1"]}\n{"qid": "q2", "answer": "blue"}\n'
RESULTS = '{"qid": "q1", "docid": "d1", "score": 2.0}\n{"qid": "q2", "docid": "d2", "score": 1.0, "text": "blue"}\n'


def write(path, content) -> str:
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return str(path)


def assert_fails(result, *fragments):
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr, result.exception)
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert result.stderr.startswith("evaltool: ") and result.stderr.count("\n") == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


# ---------------------------------------------------------------- recognising formats


@pytest.mark.parametrize("head, kind, expected", [
    (b"q1 0 d1 1\n", "judgments", "trec"),
    (b"# comment\nq1 0 d1 1\n", "judgments", "trec"),
    (b'{"qid": "q1"}\n{"qid": "q2"}\n', "judgments", "jsonl"),
    (b'\xef\xbb\xbf  \n{"qid": "q1"}\n', "judgments", "jsonl"),          # BOM and a blank line first
    (b'[\n  {"qid": "q1"}\n]\n', "judgments", "json"),
    (b'{\n  "queries": [\n    {"qid": "q1"}\n  ]\n}\n', "judgments", "json"),  # pretty-printed object
    (b'{"name": "bench", "queries": [{"qid": "q1"}]}', "judgments", "json"),   # one line, a wrapper
    (b"q1 Q0 d1 1 2.0 run\n", "results", "trec"),
    (b'{"qid": "q1", "docid": "d1", "score": 1}\n', "results", "jsonl"),
    (b"[]", "results", "json"),
])
def test_formats_are_recognised_from_the_content(head, kind, expected):
    assert sniff(head, kind) == expected


def test_a_gzip_file_is_looked_at_decompressed(tmp_path):
    path = write(tmp_path / "q.gz", gzip.compress(QUERIES.encode()))
    assert sniff(head_of(path), "judgments") == "jsonl"
    assert head_of(write(tmp_path / "broken.gz", b"\x1f\x8b\x08\x00junk")) == b""  # the reader says what is wrong


def test_queries_fields_are_read():
    queries = parse_queries("q.jsonl", (
        '{"qid": 7, "query": "where?", "qrels": {"d1": 2, "d2": 0}, "answer": ["Paris", 1889], '
        '"expected_text": "in Paris", "category": "travel", "difficulty": 3, "metadata": {"evidence": ["D1:1"]}, '
        '"source": "mine"}\n').encode(), "jsonl").queries
    q = queries[0]
    assert (q.qid, q.text, q.relevant, q.answers) == ("7", "where?", {"d1": 2, "d2": 0}, ("Paris", "1889", "in Paris"))
    assert (q.category, q.difficulty, q.metadata, q.line) == ("travel", "3", {"evidence": ["D1:1"]}, 1)
    assert q.fields["source"] == "mine"


def test_results_order_by_score_else_by_rank():
    by_score = parse_results("r.jsonl", b'{"qid": "q", "docid": "a", "score": 1, "rank": 9}\n'
                                        b'{"qid": "q", "doc_id": "b", "score": 3, "rank": 1}\n')
    assert by_score.run.scores.tolist() == [1.0, 3.0]
    by_rank = parse_results("r.jsonl", b'{"qid": "q", "docid": "a", "rank": 2}\n{"qid": "q", "docid": "b", "rank": 1}\n')
    assert by_rank.run.scores.tolist() == [-2.0, -1.0]
    assert by_rank.run.runid == "r" and [i.docid for i in by_rank.items] == ["a", "b"]


def test_forcing_a_format(tmp_path):
    queries = write(tmp_path / "queries.txt", QUERIES)
    results = write(tmp_path / "results.txt", RESULTS)
    forced = invoke(queries, results, "--qrels-format", "jsonl", "--run-format", "jsonl", "-m", "num_q")
    assert forced.exit_code == 0 and forced.stdout == "num_q                 \tall\t2\n"
    assert_fails(invoke(queries, results, "--qrels-format", "trec"),
                 f"{queries}:1: found '{{\"qid\": \"q1\", \"relevant_ids\": [\"d1\"]}}'",
                 "expected an integer grade in field 4")
    trec_run = write(tmp_path / "run.txt", "q1 Q0 d1 1 2.0 r\n")
    assert_fails(invoke(queries, trec_run, "--run-format", "jsonl"),
                 f"{trec_run}:1: found 'q1 Q0 d1 1 2.0 r'; expected one JSON object per line",
                 "(results file, JSONL)")
    assert_fails(invoke(queries, trec_run, "--qrels-format", "json"), f"{queries}:2:", "(queries file, JSON)")


# ---------------------------------------------------------------- bad lines


@pytest.fixture
def good(tmp_path):
    return write(tmp_path / "queries.jsonl", QUERIES), write(tmp_path / "results.jsonl", RESULTS)


@pytest.mark.parametrize("content, line, fragments", [
    ('{"qid": "q1", "docid": "d1", "score": 1}\n\n{"qid": "q1", "docid": "d2", "score": 1.0\n', 3,
     ["found '{\"qid\": \"q1\", \"docid\": \"d2\", \"score\": 1.0'", "expected one JSON object per line",
      "(Expecting ',' delimiter at column 42)"]),
    ('{"qid": "q1", "docid": "d1", "score": 1}\n["q1", "d2", 1]\n', 2, ["a JSON object, not list"]),
    ('{"qid": "q1", "docid": "d1"}\n', 1, ["expected a 'score' or a 'rank' for each item"]),
    ('{"qid": "q1", "docid": "d1", "score": "high"}\n', 1, ["expected 'score' as a finite number"]),
    ('{"qid": "q1", "docid": "d1", "score": NaN}\n', 1, ["expected 'score' as a finite number"]),
    ('{"qid": "q1", "docid": "d1", "rank": -1}\n', 1, ["'rank' as a whole number of 0 or more"]),
    ('{"qid": "q1", "score": 1}\n', 1, ["a non-empty string or an integer in 'docid'"]),
    ('{"qid": true, "docid": "d1", "score": 1}\n', 1, ["a non-empty string or an integer in 'qid'"]),
    ('{"qid": "q1", "docid": "d1", "score": 1, "text": 5}\n', 1, ["'text' as a string"]),
    ('{"qid": "q1", "docid": "d1", "score": 1, "metadata": []}\n', 1, ["'metadata' as an object"]),
    ('{"qid": "q1", "docid": "d1", "score": 1}\n{"qid": "q1", "docid": "d2", "rank": 2}\n', 1,
     ["a 'rank' on every line: line 2 gives only a rank"]),
    ('{"qid": "q1", "docid": "d1", "score": 1}\n{"qid": "q1", "docid": "d1", "score": 2}\n', 2,
     ["each (query, document) pair once; query 'q1' document 'd1' was already given at line 1"]),
    ('{"qid": "q1", "docid": "d1", "score": 1}\n\xff\n', 2, ["expected UTF-8 text"]),
])
def test_bad_results_lines(good, tmp_path, content, line, fragments):
    path = write(tmp_path / "bad.jsonl", content.encode("latin-1") if "\xff" in content else content)
    assert_fails(invoke(good[0], path), f"{path}:{line}", "(results file, JSONL)", *fragments)


@pytest.mark.parametrize("content, line, fragments", [
    ('{"qid": "q1"}\n{"query": "no id"}\n', 2, ["found '{\"query\": \"no id\"}'",
                                               "a non-empty string or an integer in 'qid'"]),
    ('{"qid": "q1", "relevant_ids": "d1"}\n', 1, ["'relevant_ids' as a list of document ids"]),
    ('{"qid": "q1", "qrels": {"d1": "high"}}\n', 1, ["an integer grade for document 'd1' in 'qrels'"]),
    ('{"qid": "q1", "qrels": {"d1": 1}, "relevant_ids": ["d1"]}\n', 1, ["either 'relevant_ids' or 'qrels', not both"]),
    ('{"qid": "q1", "answer": {"text": "x"}}\n', 1, ["'answer' as a string, a number or a list of them"]),
    ('{"qid": "q1", "metadata": "x"}\n', 1, ["'metadata' as an object"]),
    ('{"qid": "q1", "category": ["a"]}\n', 1, ["'category' as a string or a number"]),
    ('{"qid": "q1"}\n{"qid": "q1"}\n', 2, ["each qid once; 'q1' was already given at line 1"]),
    ('{"qid": "q1"}\n{"qid": "q2",}\n', 2, ["one JSON object per line (Expecting property name"]),
])
def test_bad_queries_lines(good, tmp_path, content, line, fragments):
    path = write(tmp_path / "bad.jsonl", content)
    assert_fails(invoke(path, good[1]), f"{path}:{line}", "(queries file, JSONL)", *fragments)


@pytest.mark.parametrize("content, line, fragments", [
    ('[\n  {"qid": "q1"},\n  {"qid": "q2", "relevant_ids": 3}\n]\n', 3, ["'relevant_ids' as a list"]),
    ('[\n  {"qid": "q1"},\n  "q2"\n]\n', 3, ["found '\"q2\"'; expected a JSON object for each query"]),
    ('[\n  {"qid": "q1"},\n  {"qid": "q2"\n]\n', 4, ["found ']'; expected valid JSON (Expecting ',' delimiter"]),
    ('{\n  "name": "bench",\n  "queries": [\n    {"qid": "q1"},\n    {"qid": "q1"}\n  ]\n}\n', 5,
     ["each qid once"]),
    ('{\n  "name": "bench"\n}\n', 1, ["an array of query objects, or an object with a 'queries' array"]),
    ('[{"qid": "q1"}] trailing\n', 1, ["valid JSON (Extra data"]),
    ('[]\n', None, ["at least one query object"]),
])
def test_bad_json_queries_files(good, tmp_path, content, line, fragments):
    path = write(tmp_path / "bad.json", content)
    where = f"{path}:{line}" if line else f"{path}; expected"
    assert_fails(invoke(path, good[1]), where, "(queries file, JSON)", *fragments)


def test_empty_and_misshapen_files(good, tmp_path):
    blank = write(tmp_path / "blank.jsonl", "\n\n")
    assert_fails(invoke(good[0], blank, "--run-format", "jsonl"), f"{blank}; expected at least one result line")
    array = write(tmp_path / "array.json", '[{"qid": "q1", "docid": "d1", "score": 1}]')
    assert_fails(invoke(good[0], array), f"{array}:1; expected a JSONL results file (one JSON object per line) or "
                                         "a TREC run, not a JSON array")
    assert_fails(invoke(tmp_path / "missing.jsonl", good[1]), "cannot read")


def test_parse_errors_carry_path_line_and_expectation():
    with pytest.raises(ParseError) as caught:
        parse_results("r.jsonl", b'{"qid": "q", "docid": "d"}\n')
    assert (caught.value.path, caught.value.line) == ("r.jsonl", 1)
    assert caught.value.expected == "a 'score' or a 'rank' for each item (results file, JSONL)"
    assert json.loads(caught.value.text) == {"qid": "q", "docid": "d"}


def test_a_first_line_longer_than_the_look_ahead_is_still_jsonl(tmp_path):
    long_line = json.dumps({"qid": "q1", "relevant_ids": ["d1"], "metadata": {"notes": "x" * 70000}})
    queries = write(tmp_path / "long.jsonl", long_line + "\n" + '{"qid": "q2", "relevant_ids": ["d2"]}\n')
    results = write(tmp_path / "results.jsonl", RESULTS)
    result = invoke(queries, results, "-m", "num_q", "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["meta"]["relevance"]["inputs"] == {"qrels": "jsonl", "run": "jsonl"}
