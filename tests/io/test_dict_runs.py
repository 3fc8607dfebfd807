"""Dict runs converted in C loops (``io.frames.DictRun``) against the row-by-row path."""

import decimal
import fractions

import numpy as np
import pytest

from evaltool import evaluate
from evaltool.errors import ParseError
from evaltool.io import frames

QRELS = {"q1": {"a": 1, "b": 2, "c": 0, "7": 1}, "q2": {"x": 1, "y": -1}}
MEASURES = ["map", "ndcg", "P.2", "recip_rank", "num_ret", "relstring"]


def _row_by_row(run):
    """The same run through the row-by-row path (the one that names bad rows)."""
    return frames._build(frames.Run, "<run dict>", frames._dict_rows(run, "<run dict>"), frames._check_score, "error",
                         "run", queries=run)


@pytest.mark.parametrize("values", [
    [3.0, 1.0, 0.0, 2.0],  # 1.0 and 0.0 among floats: no bool gave them
    [3, np.float32(1.5), np.int64(0), np.float16(2.0)],
    ["3.5", " 1 ", "1_0", b"2"],  # text, converted as float() converts it
    [decimal.Decimal("0.1"), fractions.Fraction(1, 3), np.longdouble("0.2"), 2**63 + 1],
    [np.True_, 0.5, 0.25, 2.0],  # numpy's bool is a number to float(), as on the row path
])
def test_values_of_every_type_float_takes_score_as_on_the_row_path(values):
    run = {"q1": dict(zip("abcd", values)), "q2": {"y": 1.0, "x": 0.5}}
    converted = frames.run_from_dict(run)
    assert isinstance(converted, frames.DictRun)
    assert converted.scores.tolist() == _row_by_row(run).scores.tolist()
    expected = evaluate(QRELS, _row_by_row(run), MEASURES, per_query=True)
    got = evaluate(QRELS, run, MEASURES, per_query=True)
    assert got.per_query == expected.per_query and got.summary == expected.summary


@pytest.mark.parametrize("value", [True, False])
def test_a_bool_among_scores_of_one_and_zero_is_refused(value):
    with pytest.raises(ParseError) as caught:
        evaluate(QRELS, {"q1": {"a": 1.0, "b": 0.0, "c": value}})
    assert caught.value.text == f"query q1 document c: {value!r}"
    assert caught.value.expected == "a finite number as the score"


def test_document_ids_that_are_not_text_go_row_by_row():
    """An int id is the text str() writes (it meets the judged "7"), as on the row-by-row path."""
    run = {"q1": {7: 3.0, "a": 2.0}, "q2": {"x": 1.0}}
    assert not isinstance(frames.run_from_dict(run), frames.DictRun)
    # q1: 7 and a, both relevant, at ranks 1 and 2, of 3 relevant: (1/1 + 2/2) / 3
    assert evaluate(QRELS, run, ["map"], per_query=True).per_query["q1"] == {"map": 2 / 3}


@pytest.mark.parametrize("small_run_rows", [0, 1 << 16])
def test_ids_are_checked_and_listed_alike_below_and_above_the_small_run_size(monkeypatch, small_run_rows):
    """A small run's ids, listed while checked, are its doc_vocab; a large one lists them when first
    asked: the same ids, the same values, and ids that are not text still go row by row."""
    monkeypatch.setattr(frames, "SMALL_RUN_ROWS", small_run_rows)
    run = {"q1": {"a": 3.0, "7": 2.0, "b": 1.0}, "q2": {"y": 1.0, "x": 0.5}}
    converted = frames.run_from_dict(run)
    assert converted.doc_vocab == ["a", "7", "b", "y", "x"]
    assert evaluate(QRELS, run, MEASURES, per_query=True).per_query == \
        evaluate(QRELS, _row_by_row(run), MEASURES, per_query=True).per_query
    assert not isinstance(frames.run_from_dict({"q1": {7: 3.0, "a": 2.0}}), frames.DictRun)


@pytest.mark.parametrize("values", [
    [3.0, 1e-310, -0.0, 2.5e300],  # a subnormal and a negative zero keep their bits
    [3, np.float32(1.1), np.int64(-7), np.float16(2.0)],
    [decimal.Decimal("0.1"), fractions.Fraction(1, 3), np.longdouble("0.2"), 2**63 + 1],
    [2**53 + 1, -(2**60) - 1, np.uint64(2**64 - 1), np.True_],
    ["3.5", 1.0, 0.5, b"2"],  # text: numpy's conversion takes it, as before
])
def test_small_runs_scores_convert_as_large_runs_do(monkeypatch, values):
    """A small run's scores go through ``struct`` (float's own conversion), a large run's through
    ``np.fromiter``: the same bits for every value either takes, text through numpy's conversion."""
    run = {"q1": dict(zip("abcd", values)), "q2": {"y": 1.0, "x": 0.5}}
    small = frames.run_from_dict(run)
    monkeypatch.setattr(frames, "SMALL_RUN_ROWS", 0)
    large = frames.run_from_dict(run)
    assert isinstance(small, frames.DictRun) and isinstance(large, frames.DictRun)
    assert small.scores.tobytes() == large.scores.tobytes() == _row_by_row(run).scores.tobytes()
    assert small.scores.flags.writeable


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), None, "x", object(), 10**400])
def test_a_score_neither_conversion_takes_is_named_by_the_row_by_row_path(bad):
    """What struct refuses goes to numpy's conversion, and what that refuses (or a value that is not
    finite) to the row-by-row path, which names it."""
    with pytest.raises(ParseError) as caught:
        evaluate(QRELS, {"q1": {"a": 1.0, "b": bad}, "q2": {"x": 1.0}})
    assert caught.value.text == f"query q1 document b: {bad!r}"
    assert caught.value.expected == "a finite number as the score"


def test_ids_checked_once_for_a_run_listing_the_same_ids_and_anew_for_others():
    """The same candidates scored anew: their ids, the last ones found to be text, are not read again;
    a run with an id that is not text among equal ones still goes row by row, and the text ids of a
    new run are checked anew."""
    text = {"q1": {"a": 3.0, "7": 2.0, "b": 1.0}, "q2": {"y": 1.0, "x": 0.5}}
    first = frames.run_from_dict(text)
    assert isinstance(first, frames.DictRun) and frames._text_ids_checked.last is first.doc_vocab
    again = frames.run_from_dict({q: {d: s + 1.0 for d, s in docs.items()} for q, docs in text.items()})
    assert isinstance(again, frames.DictRun) and frames._text_ids_checked.last is first.doc_vocab  # not read again
    assert again.doc_vocab is first.doc_vocab  # the list ranking compares with the last run's, by identity
    mixed = {"q1": {"a": 3.0, 7: 2.0, "b": 1.0}, "q2": {"y": 1.0, "x": 0.5}}
    assert not isinstance(frames.run_from_dict(mixed), frames.DictRun)
    assert evaluate(QRELS, mixed, MEASURES, per_query=True).per_query == \
        evaluate(QRELS, _row_by_row(mixed), MEASURES, per_query=True).per_query
    other = {"q1": {"a": 3.0, "c": 2.0}, "q2": {"x": 0.5}}
    assert isinstance(frames.run_from_dict(other), frames.DictRun)
    assert frames._text_ids_checked.last == ["a", "c", "x"]
