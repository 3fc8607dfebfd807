"""A table row without a query or document id is refused, naming the row; it used to become
the id "None" or "nan" and silently match nothing (or a query really called "None")."""

from __future__ import annotations

import math

import pytest

from evaltool import evaluate
from evaltool.errors import ParseError

pd = pytest.importorskip("pandas")

QRELS = {"q1": {"a": 1, "b": 1}, "None": {"b": 1}, "nan": {"b": 1}}


def _frame(qids, docs, dtype=None, index=None):
    return pd.DataFrame({"query_id": pd.Series(qids, dtype=dtype, index=index),
                         "doc_id": pd.Series(docs, dtype=dtype, index=index),
                         "score": pd.Series([3.0, 2.0, 1.0], index=index)})


@pytest.mark.parametrize("dtype", [object, "string", "string[pyarrow]"])
@pytest.mark.parametrize("missing", [None, math.nan])
@pytest.mark.parametrize("column", ["query_id", "doc_id"])
def test_missing_id_in_a_run_frame_is_refused_by_row(dtype, missing, column):
    qids, docs = ["q1", "q1", "None"], ["a", "b", "c"]
    (qids if column == "query_id" else docs)[1] = missing
    run = _frame(qids, docs, dtype=dtype, index=["r0", "r1", "r2"])
    field = "query id" if column == "query_id" else "document id"
    with pytest.raises(ParseError, match=rf"<run DataFrame>: found 'row r1: {field} .*'; expected a {field} "
                                         r"in every row, not a missing value \(None, NaN\)"):
        evaluate(QRELS, run, ["map"])


def test_missing_id_in_a_qrels_frame_is_refused_by_row():
    qrels = pd.DataFrame({"query_id": ["q1", "q1", float("nan")], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 1]},
                         index=[10, 11, 12])
    with pytest.raises(ParseError, match=r"<qrels DataFrame>: found 'row 12: query id nan'"):
        evaluate(qrels, {"q1": {"a": 1.0}}, ["map"])


def test_pyterrier_frame_with_a_missing_docno():
    run = pd.DataFrame({"qid": ["q1", "q1"], "docno": ["a", None], "score": [2.0, 1.0]})
    with pytest.raises(ParseError, match=r"found 'row 1: document id (None|nan)'"):
        evaluate(QRELS, run, ["map"])


def test_missing_ids_in_dicts_are_refused():
    with pytest.raises(ParseError, match=r"<run dict>: found 'query None'; expected a query id"):
        evaluate(QRELS, {None: {"a": 1.0}, "q1": {}}, ["map"])
    with pytest.raises(ParseError, match=r"<qrels dict>: found 'query nan document a: query id nan'"):
        evaluate({math.nan: {"a": 1}, "q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["map"])
    with pytest.raises(ParseError, match=r"<run dict>: found 'query q1 document nan: document id nan'"):
        evaluate(QRELS, {"q1": {"a": 1.0, math.nan: 0.5}}, ["map"])
    with pytest.raises(ParseError, match=r"<run dict>: found 'query None'; expected a query id"):
        evaluate(QRELS, {None: {}, "q1": {"a": 1.0}}, ["map"])
    with pytest.raises(ParseError, match=r"<qrels dict>: found 'query q1 document None: document id None'"):
        evaluate({"q1": {None: 1}}, {"q1": {"a": 1.0}}, ["map"])


def test_ids_that_merely_look_missing_are_ids():
    """The strings "None" and "nan" are ids like any other: only missing values are refused."""
    run = _frame(["None", "nan", "q1"], ["b", "b", "a"])
    result = evaluate(QRELS, run, ["map"], per_query=True)
    assert result.per_query == {"None": {"map": 1.0}, "nan": {"map": 1.0}, "q1": {"map": 0.5}}
