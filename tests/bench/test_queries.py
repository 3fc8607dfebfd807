"""`evaltool bench` refuses bad input before it sends any query: one message, exit 2.

The queries file is checked whole (every problem, each with its line); the measures,
the backend and the options are checked before the first query too.
"""

from __future__ import annotations

import json

import pytest

from evaltool.bench.queries import QueriesError, load_queries
from tests.support import helpers
from tests.support.helpers import bench, query, write, write_queries

FAKE = "tests.support.helpers:fake_search"
GOOD = {"id": 1, "query": "a", "category": "c", "difficulty": "easy", "relevant_ids": ["x"]}


def good(**changes):
    out = dict(GOOD, **changes)
    return {k: v for k, v in out.items() if v is not None}


@pytest.mark.parametrize("second, message", [
    (good(id=2, query=None), "q.json:3: query 2 (id 2): missing field 'query'"),
    (good(id=2, difficulty=""), "q.json:3: query 2 (id 2): 'difficulty' is empty"),
    (good(id=None, qid=" "), "q.json:3: query 2 (id \" \"): 'qid' ' ' must be non-empty without whitespace"),
    (good(id=2, category=5), "q.json:3: query 2 (id 2): 'category' must be a string, not a number (5)"),
    (good(id=2, query="  "), "q.json:3: query 2 (id 2): 'query' is empty"),
    (good(id=True), "q.json:3: query 2 (id true): 'id' must be a string or an integer, not a boolean (true)"),
    (good(id=2.5), "q.json:3: query 2 (id 2.5): 'id' must be a string or an integer, not a number (2.5)"),
    (good(id="a b"), "q.json:3: query 2 (id \"a b\"): 'id' 'a b' must be non-empty without whitespace"),
    (good(id="1"), "q.json:3: query 2 (id \"1\"): duplicate id: query 1 has the same id"),
    (good(id=2, version=["16"]), "q.json:3: query 2 (id 2): 'version' must be a string or a number, not a list"),
    (good(id=2, relevant_ids=[]),
     "q.json:3: query 2 (id 2): 'relevant_ids' is empty: a query needs at least one expected id"),
    (good(id=2, relevant_ids=None, expected_modules=[]),
     "q.json:3: query 2 (id 2): 'expected_modules' is empty: a query needs at least one expected id"),
    (good(id=2, relevant_ids="x"), "q.json:3: query 2 (id 2): 'relevant_ids' must be a list of ids, not a string"),
    (good(id=2, relevant_ids=["x", "x"]), "q.json:3: query 2 (id 2): 'relevant_ids' lists 'x' twice"),
    (good(id=2, relevant_ids=None),
     "q.json:3: query 2 (id 2): missing field: one of 'expected_modules', 'relevant_ids', 'qrels'"),
    (good(id=2, qrels={"x": 1}), "q.json:3: query 2 (id 2): gives 'relevant_ids' and 'qrels'; give exactly one"),
    (good(id=2, relevant_ids=None, qrels={"x": 0, "y": -1}),
     "q.json:3: query 2 (id 2): 'qrels' has no id with a grade above 0: nothing is relevant"),
    (good(id=2, relevant_ids=None, qrels={"x": "high"}),
     "q.json:3: query 2 (id 2): 'qrels' grade of 'x' must be an integer, not a string (\"high\")"),
    (["not", "an", "object"], "q.json:3: query 2: must be an object, not a list"),
])
def test_each_problem_exits_2_with_its_line_before_any_query_runs(tmp_path, second, message):
    path = tmp_path / "q.json"
    path.write_text("[\n" + json.dumps(GOOD) + ",\n" + json.dumps(second) + "\n]\n")
    helpers.CALLS.clear()
    result = bench(str(path), FAKE, tmp_path / "out")
    assert result.exit_code == 2
    assert result.stderr == f"evaltool: {tmp_path}/{message}" + result.stderr.split(message, 1)[1]
    assert result.stderr.count("\n") == 1, "one problem, one line"
    assert not helpers.CALLS, "a query was sent before the file was validated"
    assert not (tmp_path / "out").exists()


def test_every_problem_is_listed_in_one_message(tmp_path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps([good(query=None), good(id=2, category=5), good(id=2)], indent=1))
    result = bench(str(path), FAKE, tmp_path / "out")
    assert result.exit_code == 2
    assert result.stderr == (
        f"evaltool: {path}: 3 problems in the queries file:\n"
        f"  {path}:2: query 1 (id 1): missing field 'query'\n"
        f"  {path}:10: query 2 (id 2): 'category' must be a string, not a number (5)\n"
        f"  {path}:19: query 3 (id 2): duplicate id: query 2 has the same id\n")


def test_corrupt_json_names_line_and_column(tmp_path):
    path = tmp_path / "q.json"
    path.write_text('[\n  {"id": 1, "query": "a"\n   "category": "c"}\n]\n')
    result = bench(str(path), FAKE, tmp_path / "out")
    assert result.exit_code == 2
    assert result.stderr == (f"evaltool: {path}:3: found '\"category\": \"c\"}}'; expected valid JSON "
                             "(Expecting ',' delimiter at column 4) (queries file, JSON)\n")


@pytest.mark.parametrize("text, message", [
    ('{"queries": {"id": 1}}', ":1; expected an array of query objects, or an object with a 'queries' array "
                               "(queries file, JSON)"),
    ('"queries"', "; expected a queries file: a JSON array of query objects or JSONL"),
    ("[]", "the file has no queries"),
    ('{"queries": []}', "the file has no queries"),
])
def test_a_file_without_queries_is_refused(tmp_path, text, message):
    path = tmp_path / "q.json"
    path.write_text(text)
    result = bench(str(path), FAKE, tmp_path / "out")
    separator = "" if message[0] in ";:" else ": "
    assert (result.exit_code, result.stderr) == (2, f"evaltool: {path}{separator}{message}\n")


def test_missing_file(tmp_path):
    result = bench(str(tmp_path / "none.json"), FAKE, tmp_path / "out")
    assert (result.exit_code, result.stderr) == (2, f"evaltool: cannot read {tmp_path}/none.json: "
                                                    "No such file or directory\n")


def test_wrapped_list_free_fields_and_line_numbers(tmp_path):
    path = tmp_path / "q.json"
    path.write_text('{"name": "demo", "queries": [\n'
                    '  {"id": "a", "query": "x", "category": "c", "difficulty": "easy", "version": 16,\n'
                    '   "expected_modules": ["m1", 7], "owner": "me"},\n'
                    '  {"id": 2, "query": "y", "category": "c", "difficulty": "hard", "qrels": {"d": 2, "e": 0}}\n'
                    ']}\n')
    first, second = load_queries(path)
    assert (first.qid, first.version, first.fields, first.judgments, first.line) == (
        "a", 16, {"owner": "me"}, {"m1": 1, "7": 1}, 2)
    assert first.returned_field == "returned_modules" and second.returned_field == "returned_ids"
    assert (second.qid, second.judgments, second.line) == ("2", {"d": 2, "e": 0}, 4)
    assert "expected_modules" not in first.backend_fields() and first.backend_fields()["owner"] == "me"


def test_jsonl_with_qid_keys_and_no_category_or_difficulty(tmp_path):
    """The bench file is a superset of the queries file eval reads: qid / query_id, JSONL, no groups."""
    path = tmp_path / "q.jsonl"
    path.write_text('{"qid": "q1", "query": "x", "relevant_ids": ["d1"]}\n\n'
                    '{"query_id": 7, "query": "y", "qrels": {"d2": 2}, "category": "c"}\n')
    first, second = load_queries(path)
    assert (first.id, first.qid, first.category, first.difficulty, first.judgments, first.line) == (
        "q1", "q1", None, None, {"d1": 1}, 1)
    assert (second.id, second.qid, second.category, second.difficulty, second.judgments, second.line) == (
        7, "7", "c", None, {"d2": 2}, 3)


@pytest.mark.parametrize("args, message", [
    (["-m", "nonsense"], "unknown measure 'nonsense'; 'evaltool measures' lists them"),
    (["--backend", "what is this"], "backend 'what is this': expected module:function (a Python callable), "
                                    "an http(s):// URL or an existing TREC run file"),
    (["--backend", "no_such_module_here:f"],
     "backend no_such_module_here:f: cannot import no_such_module_here: ModuleNotFoundError: "
     "No module named 'no_such_module_here'"),
    (["--backend", "tests.support.helpers:nothing"], "backend tests.support.helpers:nothing: tests.support.helpers "
                                                    "has no nothing"),
    (["--backend", "tests.support.helpers:RANKINGS"], "backend tests.support.helpers:RANKINGS: RANKINGS is not callable"),
    (["--header", "X: 1"], "--header is for an http(s):// backend"),
    (["--response-path", "a", "--follow-cross-origin-redirects"],
     "--response-path, --follow-cross-origin-redirects are for an http(s):// backend"),
    (["--backend", "http://127.0.0.1:9/s", "--request-template", "{q}"],
     "--request-template is not valid JSON (Expecting property name enclosed in double quotes at column 2)"),
    (["--backend", "http://127.0.0.1:9/s", "--request-template", '{"q": "{query}", "v": "{version}"}'],
     "backend http://127.0.0.1:9/s: placeholder {version} is not a field of every query (not of 1); "
     "known: query, limit and the query fields"),
    (["--backend", "http://127.0.0.1:9/s", "--header", "no colon"], "--header 'no colon': expected 'Name: value'"),
    (["-l", "-1"], "relevance level (-l) -1: expected 0 or more"),
    (["--resume"], "--resume: no checkpoint to resume at {out}/q.checkpoint.jsonl (was the run started with "
                   "the same queries file and --out?)"),
])
def test_bad_options_exit_2_before_any_query_runs(tmp_path, args, message):
    path = write_queries(tmp_path / "q.json", [query(1, "q ok")])
    helpers.CALLS.clear()
    backend = FAKE
    if "--backend" in args:
        at = args.index("--backend")
        backend, args = args[at + 1], args[:at] + args[at + 2:]
    result = bench(path, backend, tmp_path / "out", *args)
    expected = "evaltool: " + message.replace("{out}", str(tmp_path / "out")) + "\n"
    assert (result.exit_code, result.stderr) == (2, expected)
    assert not helpers.CALLS


def test_a_problem_quotes_a_long_id_short(tmp_path):
    """A 100 KB id with a space made a 100 KB message (found by tests/support/fuzzing.py)."""
    long_id = "a " + "x" * 100_000
    path = write(tmp_path / "queries.json", json.dumps([{"id": long_id, "query": "q", "relevant_ids": [long_id]},
                                                        {"id": 2, "query": "q", "relevant_ids": ["d", "d"]}]))
    with pytest.raises(QueriesError) as caught:
        load_queries(path)
    message = str(caught.value)
    assert "'a xxxx" in message and "(100002 characters) must be non-empty without whitespace" in message
    assert "lists 'd' twice" in message and len(message) < 1000


def test_half_a_surrogate_pair_in_an_id(tmp_path):
    """A JSON escape '\\ud800' in an id ended in a UnicodeEncodeError writing the TREC files (tests/support/fuzzing.py)."""
    path = write(tmp_path / "queries.json", '[{"id": "q\\ud800", "query": "a", "relevant_ids": ["d1", "d\\udfff"]}]')
    with pytest.raises(QueriesError) as caught:
        load_queries(path)
    message = str(caught.value)
    assert "'id' 'q\\ud800' must be text with whole characters" in message, message
    assert "'relevant_ids' item 'd\\udfff' must be text with whole characters" in message, message
