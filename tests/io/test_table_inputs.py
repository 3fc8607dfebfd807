"""Every tabular input gives the same numbers and the same messages: dicts, pandas DataFrames
(Arrow-backed or object columns), pyarrow Tables and RecordBatches (``string``,
``large_string`` or ``string_view`` ids, one chunk or several), polars DataFrames and TREC files, on tricky
inputs: ties broken by id bytes, numeric and text ids (19 digits, leading zeros, unicode),
judged documents never retrieved, negative grades, a judged query the run never names and a
run query never judged, rows grouped by query or interleaved."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaltool import Evaluator, compare_runs, evaluate, fuse
from evaltool.errors import EvaltoolError, ParseError
from evaltool.io import columnar, frames, textids
from evaltool.io.kinds import input_kind, is_frame
from tests.support.tables import as_dicts, frame

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

MEASURES = ["all_trec", "ndcg_cut.5", "relstring"]
NAMES = {"relevance": ["query_id", "doc_id", "relevance"], "score": ["query_id", "doc_id", "score"]}


def _tricky(seed: int, numeric: bool, grouped: bool = True, queries: int = 10, depth: int = 20):
    rng = np.random.default_rng(seed)
    if numeric:
        pool = sorted({str(v) for v in rng.integers(0, 10 ** rng.integers(1, 19, size=200), dtype=np.int64)}
                      | {"9223372036854775807", "10", "9"})
    else:
        pool = sorted({f"d{v}" for v in rng.integers(0, 10 ** 4, size=150)} | {"文書", "é" * 9, "D-07", "d" * 40})
    run_rows, qrels_rows = [], []
    for q in range(queries):
        qid = f"q{q}" if q % 3 else f"запрос{q}"
        docs = rng.choice(len(pool), size=depth, replace=False)
        scores = np.round(rng.random(depth) * 3) / 3  # many ties
        run_rows += [(qid, pool[d], float(s)) for d, s in zip(docs.tolist(), scores.tolist())]
        judged = dict.fromkeys(np.concatenate((docs[:5], rng.choice(len(pool), size=5, replace=False))).tolist())
        qrels_rows += [(qid, pool[d], int(rng.integers(-1, 4))) for d in judged]
    qrels_rows.append(("only_judged", pool[3], 1))
    run_rows.append(("never_judged", pool[5], 1.0))
    if not grouped:
        run_rows = [run_rows[i] for i in rng.permutation(len(run_rows))]
    return qrels_rows, run_rows


def _table(rows, value, kind):
    """``rows`` as ``kind``: a pyarrow Table (string ids, or large_string, or in chunks), a
    RecordBatch, a polars DataFrame, a pandas DataFrame of object columns."""
    columns = [list(c) for c in zip(*rows)]
    if kind == "pandas object":
        return pd.DataFrame(dict(zip(NAMES[value], columns)), dtype=object).astype({value: type(rows[0][2])})
    if kind == "polars":
        pl = pytest.importorskip("polars")
        return pl.DataFrame(rows, schema=NAMES[value], orient="row")
    ids = {"Table large_string": pa.large_string(), "Table string_view": pa.string_view()}.get(kind, pa.string())
    arrays = [pa.array(columns[0], ids), pa.array(columns[1], ids), pa.array(columns[2])]
    if kind == "RecordBatch":
        return pa.RecordBatch.from_arrays(arrays, names=NAMES[value])
    if kind == "Table chunks":
        cut = len(rows) // 3
        return pa.Table.from_batches(
            [pa.RecordBatch.from_arrays([a.slice(s, n) for a in arrays], names=NAMES[value])
             for s, n in ((0, cut), (cut, len(rows) - cut))]
        )
    return pa.Table.from_arrays(arrays, names=NAMES[value])


KINDS = ["Table", "Table large_string", "Table string_view", "Table chunks", "RecordBatch", "polars", "pandas object"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("numeric", "grouped"), [(False, True), (True, True), (False, False), (True, False)])
def test_every_table_gives_the_dicts_and_the_files_numbers(kind, numeric, grouped, tmp_path):
    qrels_rows, run_rows = _tricky(3, numeric, grouped)
    expected = evaluate(as_dicts(qrels_rows), as_dicts(run_rows), MEASURES, per_query=True)
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_rows))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 1 {s!r} tag\n" for q, d, s in run_rows))
    from_files = evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), MEASURES, per_query=True)
    assert from_files.per_query == expected.per_query
    qrels, run = _table(qrels_rows, "relevance", kind), _table(run_rows, "score", kind)
    assert is_frame(qrels) and is_frame(run)
    for judgments in (qrels, as_dicts(qrels_rows), frame(qrels_rows, "relevance")):
        got = evaluate(judgments, run, MEASURES, per_query=True)
        assert got.per_query == expected.per_query and got.summary == expected.summary
    got = evaluate(qrels, as_dicts(run_rows), MEASURES, per_query=True)
    assert got.per_query == expected.per_query
    assert Evaluator(qrels, MEASURES).evaluate(run, per_query=True).per_query == expected.per_query


@pytest.mark.usefixtures("columnar_frames")
def test_an_arrow_table_is_read_column_by_column_and_named_as_such():
    qrels_rows, run_rows = _tricky(1, numeric=False)
    run = frames.run_from_frame(_table(run_rows, "score", "Table"))
    assert isinstance(run, textids.TextDocRun)  # the row-by-row path gives a plain Run
    numeric = frames.run_from_frame(_table(_tricky(1, numeric=True)[1], "score", "RecordBatch"))
    assert isinstance(numeric, columnar.NumericDocRun)
    assert type(frames.qrels_from_frame(_table(qrels_rows, "relevance", "Table"))).__name__ == "Qrels"
    table = _table(run_rows, "score", "Table")
    assert input_kind(table) == "pyarrow.Table" and input_kind(frame(run_rows, "score")) == "DataFrame"
    result = evaluate(_table(qrels_rows, "relevance", "Table"), table, ["map"])
    assert result.meta["relevance"]["inputs"] == {"qrels": "pyarrow.Table", "run": "pyarrow.Table"}


def test_pyterrier_column_names_and_extra_columns_in_a_table():
    run = pa.table({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "c"], "score": [2.0, 1.0, 1.0], "rank": [0, 1, 0]})
    qrels = pa.table({"qid": ["q1", "q2"], "docno": ["b", "c"], "label": [1, 2]})
    assert evaluate(qrels, run, ["map"], per_query=True).per_query == {"q1": {"map": 0.5}, "q2": {"map": 1.0}}


def test_a_table_without_the_columns_is_refused_naming_them():
    with pytest.raises(EvaltoolError) as caught:
        evaluate({"q1": {"a": 1}}, pa.table({"q": ["q1"], "d": ["a"], "s": [1.0]}), ["map"])
    assert str(caught.value) == (
        "<run DataFrame>: a pyarrow Table needs columns query_id, doc_id and score; it has q, d, s "
        "(PyTerrier's qid and docno are read too)"
    )


RUN_ERRORS = [
    ({"query_id": ["q1", "q1", "q1"], "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]},
     "<run DataFrame>: found 'query q1 document a'; expected each (query, document) pair once; entries 1 and 3 "
     "(counting from 1) both give it (use on_duplicate='first' or 'max' to accept duplicates)"),
    ({"query_id": ["q1", "q1", "q1"], "doc_id": ["17", "4", "17"], "score": [1.0, 2.0, 3.0]},
     "<run DataFrame>: found 'query q1 document 17'; expected each (query, document) pair once; entries 1 and 3 "
     "(counting from 1) both give it (use on_duplicate='first' or 'max' to accept duplicates)"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, math.nan]},
     "<run DataFrame>: found 'row 1: nan'; expected a finite number as the score"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, math.inf]},
     "<run DataFrame>: found 'row 1: inf'; expected a finite number as the score"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, None]},
     "<run DataFrame>: found 'row 1: None'; expected a finite number as the score"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [True, False]},
     "<run DataFrame>: found 'row 0: True'; expected a finite number as the score"),
    ({"query_id": ["q1", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]},
     "<run DataFrame>: found 'row 1: query id None'; expected a query id in every row, not a missing value "
     "(None, NaN)"),
    ({"query_id": ["q1", "q1"], "doc_id": ["17", None], "score": [1.0, 2.0]},
     "<run DataFrame>: found 'row 1: document id None'; expected a document id in every row, not a missing "
     "value (None, NaN)"),
]

QRELS_ERRORS = [
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "a"], "relevance": [1, 2]},
     "<qrels DataFrame>: found 'query q1 document a'; expected each (query, document) pair once; entries 1 and 2 "
     "(counting from 1) both give it (use on_duplicate='first' or 'max' to accept duplicates)"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1.0, 1.5]},
     "<qrels DataFrame>: found 'row 1: 1.5'; expected an integer grade"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1.0, math.nan]},
     "<qrels DataFrame>: found 'row 1: nan'; expected an integer grade"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1.0, 2.0 ** 64]},
     "<qrels DataFrame>: found 'row 1: 1.8446744073709552e+19'; expected an integer grade between "
     "-9223372036854775808 and 9223372036854775807"),
    ({"query_id": ["q1", None], "doc_id": ["a", "b"], "relevance": [1, 0]},
     "<qrels DataFrame>: found 'row 1: query id None'; expected a query id in every row, not a missing value "
     "(None, NaN)"),
]


@pytest.mark.parametrize(("columns", "message"), RUN_ERRORS)
def test_run_rows_a_table_cannot_take_are_named_as_a_frames_are(columns, message):
    table = pa.table(columns)
    for run in (table, table.to_batches()[0], pd.DataFrame(columns, dtype=object)):
        with pytest.raises(ParseError) as caught:
            evaluate({"q1": {"a": 1}}, run, ["map"])
        assert str(caught.value) == message


@pytest.mark.parametrize(("columns", "message"), QRELS_ERRORS)
def test_qrels_rows_a_table_cannot_take_are_named_as_a_frames_are(columns, message):
    table = pa.table(columns)
    for qrels in (table, table.to_batches()[0], pd.DataFrame(columns, dtype=object)):
        with pytest.raises(ParseError) as caught:
            evaluate(qrels, {"q1": {"a": 1.0}}, ["map"])
        assert str(caught.value) == message


@pytest.mark.parametrize(("policy", "expected"), [("first", 0.5), ("max", 1.0)])
def test_duplicates_in_a_table_resolve_as_in_a_frame(policy, expected):
    run = pa.table({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]})
    assert evaluate({"q1": {"a": 1}}, run, ["map"], on_duplicate=policy).summary == {"map": expected}


def test_tables_as_runs_of_the_other_library_calls():
    qrels_rows, run_rows = _tricky(5, numeric=False)
    _, other_rows = _tricky(6, numeric=False)
    qrels = _table(qrels_rows, "relevance", "Table")
    runs = [_table(run_rows, "score", "Table"), _table(other_rows, "score", "RecordBatch")]
    dict_runs = [as_dicts(run_rows), as_dicts(other_rows)]
    many = Evaluator(qrels, ["map"]).evaluate_many(runs)
    assert [r.per_query for r in many] == [r.per_query for r in Evaluator(qrels, ["map"]).evaluate_many(dict_runs)]
    assert compare_runs(qrels, runs, measures=["map"]).rows() == compare_runs(as_dicts(qrels_rows), dict_runs, measures=["map"]).rows()
    assert fuse(runs).to_dict() == fuse(dict_runs).to_dict()


def test_a_row_the_message_names_is_the_rows_position():
    run = pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, float("nan")]})
    with pytest.raises(ParseError, match="found 'row 2: nan'"):
        evaluate({"q1": {"a": 1}}, run.slice(0), ["map"])
    with pytest.raises(EvaltoolError, match="expected at least one row"):
        frames.run_from_frame(run.slice(0, 0))
