"""DataFrames are converted column by column (Arrow's C loops), not row by row through
Python tuples, and give what dicts and files give: the same numbers, and for every row the
columns cannot take (a missing id, a bad score or grade, a pair given twice) the same
message the row-by-row path gives, naming the row."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaltool import evaluate
from evaltool.errors import EvaltoolError, ParseError
from evaltool.inputs import Qrels, Run
from evaltool.io import columnar, frames

pd = pytest.importorskip("pandas")
# these tests are about the columnar readers, which small frames skip (tests/io/test_small_frames.py)
pytestmark = pytest.mark.usefixtures("columnar_frames")

MEASURES = ["all_trec"]


def _data(seed: int = 7, queries: int = 12, depth: int = 30):
    """A run with ties (scores on a coarse grid), ids of mixed length, queries interleaved,
    judged documents inside and outside the run, and a judged query the run never names."""
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(queries):
        docs = [f"d{rng.integers(0, 10 ** int(rng.integers(1, 5)))}x{i}" for i in range(depth)]
        scores = np.round(rng.random(depth) * 4) / 4
        run_rows += [(f"q{q}", d, float(s)) for d, s in zip(docs, scores)]
        judged = rng.choice(depth, size=int(rng.integers(1, 9)), replace=False)
        qrels_rows += [(f"q{q}", docs[i], int(rng.integers(0, 4))) for i in judged]
        qrels_rows += [(f"q{q}", f"unretrieved{q}", 1)]
    qrels_rows.append(("q_only_judged", "d1", 2))
    order = rng.permutation(len(run_rows))
    run_rows = [run_rows[i] for i in order]
    return qrels_rows, run_rows


def _dicts(qrels_rows, run_rows):
    qrels, run = {}, {}
    for q, d, g in qrels_rows:
        qrels.setdefault(q, {})[d] = g
    for q, d, s in run_rows:
        run.setdefault(q, {})[d] = s
    return qrels, run


def _frames(qrels_rows, run_rows, dtype=None):
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    if dtype is not None:
        for frame in (qrels, run):
            frame["query_id"] = frame["query_id"].astype(dtype)
            frame["doc_id"] = frame["doc_id"].astype(dtype)
    return qrels, run


@pytest.mark.parametrize("dtype", [None, object, "string", "string[pyarrow]", "category"])
def test_frames_take_the_columnar_path_and_give_the_dicts_numbers(dtype):
    qrels_rows, run_rows = _data()
    qrels_frame, run_frame = _frames(qrels_rows, run_rows, dtype)
    run = frames.run_from_frame(run_frame)
    assert isinstance(run, columnar.ArrowDocRun)  # the row-by-row path gives a plain Run
    assert isinstance(frames.qrels_from_frame(qrels_frame), Qrels)
    expected = evaluate(*_dicts(qrels_rows, run_rows), MEASURES, per_query=True)
    got = evaluate(qrels_frame, run_frame, MEASURES, per_query=True)
    assert got.per_query == expected.per_query
    assert got.summary == expected.summary


def test_frames_give_the_files_numbers(tmp_path):
    qrels_rows, run_rows = _data(seed=3)
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_rows))
    run_path.write_text("".join(f"{q} Q0 {d} 1 {s!r} run\n" for q, d, s in run_rows))
    expected = evaluate(str(qrels_path), str(run_path), MEASURES, per_query=True)
    got = evaluate(*_frames(qrels_rows, run_rows), MEASURES, per_query=True)
    assert got.per_query == expected.per_query


def test_integer_ids_are_their_decimal_text():
    """Integer columns are ids written as ``str`` writes them, as the row-by-row path does;
    canonical integers stay integer keys."""
    qrels = pd.DataFrame({"query_id": [1, 1, 2], "doc_id": [10, 9, 7], "relevance": [1, 0, 2]})
    run = pd.DataFrame({"query_id": [1, 1, 2, 2], "doc_id": [10, 9, 7, 70], "score": [1.0, 1.0, 0.5, 0.7]})
    converted = frames.run_from_frame(run)
    assert isinstance(converted, columnar.NumericDocRun)
    assert converted.qid_vocab == ["1", "2"]
    result = evaluate(qrels, run, ["map", "recip_rank"], per_query=True)
    assert result.per_query == evaluate({"1": {"10": 1, "9": 0}, "2": {"7": 2}},
                                        {"1": {"10": 1.0, "9": 1.0}, "2": {"7": 0.5, "70": 0.7}},
                                        ["map", "recip_rank"], per_query=True).per_query
    # 10 and 9 tie: the larger id in byte order ("9") ranks first, so "10" (relevant) is second
    assert result.per_query["1"] == {"map": 0.5, "recip_rank": 0.5}


def test_whole_float_grades_and_integer_scores():
    qrels = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1.0, 0.0]})
    run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1, 2]})
    assert frames.qrels_from_frame(qrels).grades.tolist() == [1, 0]
    assert isinstance(frames.run_from_frame(run), columnar.ArrowDocRun)
    assert evaluate(qrels, run, ["map"]).summary == {"map": 0.5}


def test_pyterrier_columns_and_an_index_that_is_not_positions():
    run = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "c"], "score": [2.0, 1.0, 1.0],
                        "rank": [0, 1, 0]}, index=[7, 3, 5])
    qrels = pd.DataFrame({"qid": ["q1", "q2"], "docno": ["b", "c"], "label": [1, 2]}, index=[4, 2])
    assert evaluate(qrels, run, ["map"], per_query=True).per_query == {"q1": {"map": 0.5}, "q2": {"map": 1.0}}


def test_polars_frames():
    pl = pytest.importorskip("polars")
    qrels_rows, run_rows = _data(seed=11)
    qrels = pl.DataFrame(qrels_rows, schema=["query_id", "doc_id", "relevance"], orient="row")
    run = pl.DataFrame(run_rows, schema=["query_id", "doc_id", "score"], orient="row")
    assert isinstance(frames.run_from_frame(run), columnar.ArrowDocRun)
    expected = evaluate(*_dicts(qrels_rows, run_rows), MEASURES, per_query=True)
    assert evaluate(qrels, run, MEASURES, per_query=True).per_query == expected.per_query


def test_polars_frames_where_pyarrow_cannot_compare_views(monkeypatch):
    """pyarrow 16 to 22 have ``string_view`` but no kernel comparing it: polars' text is then
    taken at its default level (``large_string``), with the same numbers."""
    pl = pytest.importorskip("polars")
    import pyarrow as pa

    qrels_rows, run_rows = _data(seed=11)
    run = pl.DataFrame(run_rows, schema=["query_id", "doc_id", "score"], orient="row")
    assert pa.types.is_string_view(frames._polars_arrow(run["doc_id"]).type) == columnar.compares_views()
    monkeypatch.setattr(columnar, "compares_views", lambda: False)
    assert not pa.types.is_string_view(frames._polars_arrow(run["doc_id"]).type)
    qrels = pl.DataFrame(qrels_rows, schema=["query_id", "doc_id", "relevance"], orient="row")
    assert isinstance(frames.run_from_frame(run), columnar.ArrowDocRun)
    expected = evaluate(*_dicts(qrels_rows, run_rows), MEASURES, per_query=True)
    assert evaluate(qrels, run, MEASURES, per_query=True).per_query == expected.per_query


RUN_ERRORS = [
    ({"query_id": ["q1", "q1", "q1"], "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]},
     "<run DataFrame>: found 'query q1 document a'; expected each (query, document) pair once; entries 1 and 3 "
     "(counting from 1) both give it (use on_duplicate='first' or 'max' to accept duplicates)"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, math.nan]},
     "<run DataFrame>: found 'row r1: nan'; expected a finite number as the score"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, math.inf]},
     "<run DataFrame>: found 'row r1: inf'; expected a finite number as the score"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [True, False]},
     "<run DataFrame>: found 'row r0: True'; expected a finite number as the score"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": ["1.5", "x"]},
     "<run DataFrame>: found \"row r1: 'x'\"; expected a finite number as the score"),
    ({"query_id": ["q1", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]},
     "<run DataFrame>: found 'row r1: query id nan'; expected a query id in every row, not a missing value "
     "(None, NaN)"),
    ({"query_id": ["q1", "q1"], "doc_id": [None, "b"], "score": [1.0, 2.0]},
     "<run DataFrame>: found 'row r0: document id nan'; expected a document id in every row, not a missing "
     "value (None, NaN)"),
]


@pytest.mark.parametrize(("columns", "message"), RUN_ERRORS)
def test_run_rows_the_columns_cannot_take_are_named_as_before(columns, message):
    run = pd.DataFrame(columns, index=[f"r{i}" for i in range(len(columns["score"]))])
    with pytest.raises(ParseError) as caught:
        evaluate({"q1": {"a": 1}}, run, ["map"])
    assert str(caught.value) == message


QRELS_ERRORS = [
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "a"], "relevance": [1, 2]},
     "<qrels DataFrame>: found 'query q1 document a'; expected each (query, document) pair once; entries 1 and 2 "
     "(counting from 1) both give it (use on_duplicate='first' or 'max' to accept duplicates)"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1.0, 1.5]},
     "<qrels DataFrame>: found 'row 1: 1.5'; expected an integer grade"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1.0, math.nan]},
     "<qrels DataFrame>: found 'row 1: nan'; expected an integer grade"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": ["1", "x"]},
     "<qrels DataFrame>: found \"row 0: '1'\"; expected an integer grade"),
    ({"query_id": ["q1", math.nan], "doc_id": ["a", "b"], "relevance": [1, 0]},
     "<qrels DataFrame>: found 'row 1: query id nan'; expected a query id in every row, not a missing value "
     "(None, NaN)"),
]


@pytest.mark.parametrize(("columns", "message"), QRELS_ERRORS)
def test_qrels_rows_the_columns_cannot_take_are_named_as_before(columns, message):
    with pytest.raises(ParseError) as caught:
        evaluate(pd.DataFrame(columns), {"q1": {"a": 1.0}}, ["map"])
    assert str(caught.value) == message


def test_rows_the_columns_cannot_take_still_convert_as_before():
    """Mixed id types, float ids, boolean grades, text scores and ids that look like comment
    lines go through the row-by-row path, which reads them as it always has."""
    mixed = frames.run_from_frame(pd.DataFrame({"query_id": ["q1", 1], "doc_id": ["a", 2.0], "score": ["1.5", 2]}))
    assert type(mixed) is Run
    assert (mixed.qid_vocab, mixed.doc_vocab, mixed.scores.tolist()) == (["q1", "1"], ["a", "2.0"], [1.5, 2.0])
    qrels = frames.qrels_from_frame(pd.DataFrame({"query_id": ["#q"], "doc_id": ["a"], "relevance": [True]}))
    assert (qrels.qid_vocab, qrels.grades.tolist()) == (["#q"], [1])
    assert evaluate(qrels, {"#q": {"a": 1.0}}, ["map"]).summary == {"map": 1.0}


@pytest.mark.parametrize(("policy", "expected"), [("first", 0.5), ("max", 1.0)])
def test_duplicate_policies_give_the_row_paths_numbers(policy, expected):
    run = pd.DataFrame({"query_id": ["q1", "q1", "q1"], "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]})
    result = evaluate({"q1": {"a": 1}}, run, ["map"], on_duplicate=policy)
    assert result.summary == {"map": expected}


def test_an_empty_frame_is_refused():
    with pytest.raises(EvaltoolError, match="expected at least one row"):
        frames.run_from_frame(pd.DataFrame({"query_id": [], "doc_id": [], "score": []}))


def test_a_run_with_many_more_ids_than_asked_for_finds_them_by_probing_its_own():
    """``keys_for`` on a run whose ids far outnumber the ids asked for (a qrels' ids) probes the
    run's ids against the asked ones; repeated and unknown ids are answered as the direct lookup does."""
    import pyarrow as pa

    ids = [f"d{i}" for i in range(50)]
    run = columnar.ArrowDocRun(["q"], np.zeros(50, dtype=np.int64), [], np.arange(50), np.zeros(50), None,
                               extra={"dictionary": pa.array(ids)})
    asked = ["d7", "nope", "d49", "d7", "d0"]
    assert run.keys_for(asked).tolist() == [7, -1, 49, 7, 0]
    assert run.keys_for(asked * 3).tolist() == [7, -1, 49, 7, 0] * 3  # the direct lookup, same answers


def test_a_text_id_run_file_read_by_pyarrow_is_scored_without_importing_pandas(tmp_path):
    """pyarrow's pa.array and pa.scalar import pandas to check their argument; the columnar
    file reader, its id lookups and the tie rule's ids (doc_text) build Arrow arrays from
    buffers instead. Every query's relevant document ties with the one above it."""
    import subprocess
    import sys

    scores = lambda i: 100 - (i - (i == 3)) / 1000  # lines 2 and 3 of each query tie
    lines = [f"q{q} Q0 FBIS3-{q * 7919 + i} {i + 1} {scores(i):.4f} robust\n" for q in range(60) for i in range(1000)]
    (tmp_path / "run").write_text("".join(lines))
    (tmp_path / "qrels").write_text("".join(f"q{q} 0 FBIS3-{q * 7919 + 3} 1\nq{q} 0 LA-{q} 1\n" for q in range(60)))
    # trec_eval's order: score descending, then document id descending as bytes
    order = lambda q: sorted(range(1000), key=lambda i: (-scores(i), [-b for b in f"FBIS3-{q * 7919 + i}".encode()]))
    expected = sum(1 / (order(q).index(3) + 1) for q in range(60)) / 60
    code = ("import sys; from evaltool.io import kinds; kinds.COLUMNAR_MIN_BYTES = 0; from evaltool import evaluate; "
            f"r = evaluate({str(tmp_path / 'qrels')!r}, {str(tmp_path / 'run')!r}, ['recip_rank']); "
            "print(repr(r.summary['recip_rank']), 'pandas' in sys.modules, 'pyarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [repr(expected), "False", "True"]  # the columnar reader ran (pyarrow), pandas never came


@pytest.mark.parametrize("count", [True, False])
def test_frames_grouped_by_query_in_no_score_order(count, monkeypatch):
    """Rows of each query together, scores in no order (a DataFrame built query by query):
    ranked by counting each query's scores (``count``, whatever it costs) or by the other
    paths, with ties broken by id as the dicts break them."""
    from evaltool import ranking

    qrels_rows, run_rows = _data(seed=5, queries=20, depth=40)
    run_rows = sorted(run_rows, key=lambda row: row[0])  # stable: each query's rows keep their shuffled order
    monkeypatch.setattr(ranking, "COMPARISONS_PER_SORT_STEP", 0 if count else 10 ** 9)
    expected = evaluate(*_dicts(qrels_rows, run_rows), MEASURES, per_query=True)
    assert evaluate(*_frames(qrels_rows, run_rows), MEASURES, per_query=True).per_query == expected.per_query
