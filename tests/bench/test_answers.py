"""Reading an HTTP answer only as far as the run needs it (evaltool.bench.answers).

The walk over the text must find what ``json.loads`` followed by the response path finds:
each case is checked against the json module's own parse of the whole answer, run here,
with the text cut into pieces of every size and joined a character at a time, so that
every value and every key at some point ends where the joined text ends.
"""

from __future__ import annotations

import json

import pytest

from evaltool.bench import answers
from evaltool.bench.answers import AnswerText, BackendResultError, read_answer, spread
from evaltool.bench.backends import normalize


@pytest.fixture(autouse=True)
def join_a_character_at_a_time(monkeypatch):
    monkeypatch.setattr(answers, "_FIRST_JOIN", 1)


def cut(answer, size: int = 1) -> list[str]:
    text = answer.decode() if isinstance(answer, bytes) else answer
    return [text[i:i + size] for i in range(0, len(text), size)]

ANSWERS = [
    '{"hits": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}',
    ' \n{ "took" : 3 ,\t"meta": {"x": [1, {"y": "}]"}]},\r\n "hits" : [ {"id":"a"} ,{"id" : "b"}] } \n',
    '{"data": {"results": [{"doc": {"id": "é\\u00e9\\"q"}}, {"doc": {"id": 7}}]}}',
    '{"hits": []}',
    '{"hits": {}}',
    '{"esc\\u0061ped": ["k1", "k2"], "hits": [["a", 1.5], ["b", 1e2]]}',
    '[{"id": "a"}, {"id": "b"}]',
    '["a", "b", "c"]',
    '[]',
    '{"responses": [{"hits": {"hits": [{"_id": "x"}]}}, {"hits": {"hits": [{"_id": "y"}, {"_id": "z"}]}}]}',
    '{"*": ["star"], "hits": [{"id": "a"}]}',
    '{"hits": [{"id": "a"}, {"id": "b"}], "hits": [{"id": "c"}]}',  # a repeated key: see below
]
PATHS = [None, "hits", "hits.*.id", "hits.0.id", "hits.1.id", "hits.-1.id", "hits.*", "meta.x.1.y",
         "data.results.*.doc.id", "esc\u0061ped.1", "responses.*.hits.hits.*._id", "responses.1.hits.hits.0._id",
         "responses.-2.hits.hits.*._id", "*", "*.id", "1", "-1", "hits.5.id", "hits.*.nope", "took.x"]


def whole(answer: str, path: str | None):
    """What json.loads and the path give: ('items', [...]) or ('value', v) or ('error', message)."""
    parts = path.split(".") if path else []
    try:
        found = list(spread(json.loads(answer), parts, []))
    except BackendResultError as exc:
        return "error", str(exc)
    if "*" in parts:
        return "items", found
    return ("items", found[0]) if isinstance(found[0], list) else ("value", found[0])


def walked(answer: str, path: str | None, size: int):
    try:
        found = read_answer(cut(answer, size), path)
        if path and "*" in path.split(".") or not isinstance(found, (str, int, float, dict, type(None))):
            return "items", list(found)
        return "value", found
    except BackendResultError as exc:
        return "error", str(exc)


@pytest.mark.parametrize("answer", [a for a in ANSWERS if '"hits": [{"id": "c"}]' not in a])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("size", [1, 7, 10_000])
def test_the_walk_finds_what_json_loads_and_the_path_find(answer, path, size):
    expected, got = whole(answer, path), walked(answer, path, size)
    if expected[0] == "error":
        # the same failure (what follows "found" is the answer's text there: see the next test)
        assert got[0] == "error" and got[1].split(" (found ")[0] == expected[1].split(" (found ")[0]
    else:
        assert got == expected


def test_a_missing_key_quotes_the_answer_where_it_was_looked_for():
    answer = b'{"took": 1,\n  "meta": {"x":   [1,\n 2]},\n  "results": []}'
    with pytest.raises(BackendResultError) as caught:
        list(read_answer(cut(answer), "meta.hits.*.id"))
    assert str(caught.value) == "the response has no 'hits' at meta (found {\"x\": [1, 2]}, \"results\": []})"


def test_a_repeated_key_is_searched_up_to_its_first_occurrence():
    # json.loads keeps the last "hits"; the walk stops at the first, which holds what it looks for
    answer = ANSWERS[-1]
    assert list(read_answer(cut(answer), "hits.*.id")) == ["a", "b"]
    assert whole(answer, "hits.*.id") == ("items", ["c"])


def test_only_what_precedes_the_limit_th_id_is_parsed():
    # 5 hits, then something that is not JSON: the run asks for 5 ids and never reaches it
    answer = b'{"took": 2, "hits": [' + b", ".join(b'{"id": "d%d"}' % i for i in range(5)) + b', {"id": ]}'
    assert normalize(read_answer(cut(answer), "hits.*.id"), 5).ids == ["d0", "d1", "d2", "d3", "d4"]
    with pytest.raises(BackendResultError, match="^the response is not JSON: "):
        normalize(read_answer(cut(answer), "hits.*.id"), 6)
    # a repeated id is skipped, so the limit-th distinct id lies one hit further
    repeated = answer.replace(b'"d1"', b'"d0"')
    with pytest.raises(BackendResultError, match="^the response is not JSON: "):
        normalize(read_answer(cut(repeated), "hits.*.id"), 5)


@pytest.mark.parametrize("answer", [
    b"", b"oops", b"{", b'{"hits" [1]}', b'{hits: []}', b'{"hits": [1 2]}',
    b'{"hits": [1,', b'{"other": tru, "hits": [1]}',
])
def test_text_that_is_not_json_before_the_ids_fails_as_not_json(answer):
    with pytest.raises(BackendResultError) as caught:
        list(read_answer(cut(answer, 2), "hits.*"))
    assert str(caught.value) == f"the response is not JSON: {answer.decode()!r}"
    with pytest.raises(ValueError):
        json.loads(answer)


def decoded(payload: bytes, charset: str | None, size: int) -> list[str]:
    text = AnswerText(charset)
    for start in range(0, len(payload), size):
        text.feed(payload[start:start + size])
    return text.finish()


@pytest.mark.parametrize("size", [1, 2, 5, 100])
def test_invalid_bytes_anywhere_fail_the_answer_even_after_the_ids(size):
    answer = '["a", "b", "café ☃"]'
    assert "".join(decoded(answer.encode(), None, size)) == answer  # characters cut between pieces
    assert "".join(decoded(answer.encode("utf-16"), None, size)) == answer  # told by its first bytes
    assert list(read_answer(decoded(answer.encode("iso-8859-1", "replace"), "iso-8859-1", size), None)) == [
        "a", "b", "café ?"]
    with pytest.raises(BackendResultError, match=r"^the response is not valid utf-8 \(no charset declared\): "
                                                 "byte 0xe9 at offset 15$"):
        decoded(answer.encode("iso-8859-1", "replace"), None, size)
    with pytest.raises(BackendResultError, match=r"^the response is not valid utf-8: byte 0xe2 at offset 18$"):
        decoded(answer.encode()[:-4], "utf-8", size)  # the snowman cut off at the end
    with pytest.raises(BackendResultError, match="^the response declares charset=klingon, which is not a known"):
        decoded(answer.encode(), "klingon", size)
