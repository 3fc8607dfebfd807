"""A small frame's run is ranked as a dict run (``io.frames.FrameRun``) and gives exactly what
the columnar readers, dicts and files give, with the same message for every row they refuse."""

from __future__ import annotations

import numpy as np
import pytest

from evaltool import Evaluator, evaluate
from evaltool.errors import EvaltoolError
from evaltool.io import frames
from tests.support.tables import as_dicts, frame

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

MEASURES = ["all_trec", "ndcg_cut.5", "relstring", "P(rel=2)@3"]


def _tricky(seed: int, numeric: bool, queries: int = 8, depth: int = 15):
    """Ties on a coarse grid of scores (broken by id bytes), unicode, 19-digit and
    leading-zero ids, negative and zero grades, judged documents never retrieved, a judged
    query the run never names, a run query never judged, a query whose judgments are all
    below relevance, and an id in one query judged in another."""
    rng = np.random.default_rng(seed)
    if numeric:
        pool = sorted({str(v) for v in rng.integers(0, 10 ** rng.integers(1, 19, size=120), dtype=np.int64)}
                      | {"9223372036854775807", "10", "9", "007"})
    else:
        pool = sorted({f"d{v}" for v in rng.integers(0, 10 ** 3, size=100)} | {"文書", "é" * 9, "D-07", "d" * 40, "Ω"})
    run_rows, qrels_rows = [], []
    for q in range(queries):
        qid = f"q{q}" if q % 3 else f"запрос{q}"
        docs = rng.choice(len(pool), size=depth, replace=False)
        scores = np.round(rng.random(depth) * 3) / 3
        run_rows += [(qid, pool[d], float(s)) for d, s in zip(docs.tolist(), scores.tolist())]
        judged = dict.fromkeys(np.concatenate((docs[:6], rng.choice(len(pool), size=6, replace=False))).tolist())
        top = 0 if q == 1 else 4
        qrels_rows += [(qid, pool[d], int(rng.integers(-1, top + 1))) for d in judged]
    qrels_rows.append(("only_judged", pool[3], 1))
    run_rows.append(("never_judged", pool[5], 1.0))
    return qrels_rows, run_rows


def _columnar(monkeypatch, call):
    """``call()`` with every frame sent through the columnar readers, as before FrameRun."""
    with monkeypatch.context() as patch:
        patch.setattr(frames, "REPEATED_FRAME_ROWS", -1)
        return call()


@pytest.mark.parametrize("numeric", [False, True])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_small_frames_give_the_columnar_readers_the_dicts_and_the_files_numbers(numeric, seed, monkeypatch, tmp_path):
    qrels_rows, run_rows = _tricky(seed, numeric)
    qrels, run = frame(qrels_rows, "relevance"), frame(run_rows, "score")
    assert isinstance(frames.run_from_frame(run), frames.FrameRun)
    got = Evaluator(qrels, MEASURES).evaluate(run, per_query=True)
    columnar = _columnar(monkeypatch, lambda: Evaluator(qrels, MEASURES).evaluate(run, per_query=True))
    dicts = evaluate(as_dicts(qrels_rows), as_dicts(run_rows), MEASURES, per_query=True)
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_rows))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 1 {s!r} run\n" for q, d, s in run_rows))
    files = evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), MEASURES, per_query=True)
    for other in (columnar, dicts, files):
        assert got.per_query == other.per_query
        assert got.summary == other.summary
    assert got.meta["counts"] == columnar.meta["counts"] and got.meta["run"] == columnar.meta["run"] == "<run DataFrame>"
    for options in ({"complete": True}, {"judged_only": True, "max_ret": 7}, {"relevance_level": 2}):
        np.testing.assert_equal(  # NaN where both give NaN
            evaluate(qrels, run, MEASURES, per_query=True, **options).per_query,
            _columnar(monkeypatch, lambda: evaluate(qrels, run, MEASURES, per_query=True, **options)).per_query,
        )


@pytest.mark.parametrize("kind", ["Table", "Table large_string", "Table chunks", "RecordBatch", "polars", "integers"])
def test_every_table_kind_takes_the_small_path(kind, monkeypatch):
    qrels_rows, run_rows = _tricky(4, numeric=True)
    if kind == "integers":  # integer columns are ids written as str writes them
        run_rows = [(q, int(d), s) for q, d, s in run_rows]
        table = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    elif kind == "polars":
        pl = pytest.importorskip("polars")
        table = pl.DataFrame(run_rows, schema=["query_id", "doc_id", "score"], orient="row")
    else:
        ids = pa.large_string() if kind == "Table large_string" else pa.string()
        columns = [list(c) for c in zip(*run_rows)]
        arrays = [pa.array(columns[0], ids), pa.array(columns[1], ids), pa.array(columns[2])]
        names = ["query_id", "doc_id", "score"]
        if kind == "RecordBatch":
            table = pa.RecordBatch.from_arrays(arrays, names=names)
        elif kind == "Table chunks":  # a query's rows go on from one chunk to the next
            table = pa.Table.from_batches([pa.RecordBatch.from_arrays([a.slice(s, n) for a in arrays], names=names)
                                           for s, n in ((0, 20), (20, len(run_rows) - 20))])
        else:
            table = pa.Table.from_arrays(arrays, names=names)
    assert isinstance(frames.run_from_frame(table), frames.FrameRun)
    qrels = as_dicts(qrels_rows)
    expected = _columnar(monkeypatch, lambda: evaluate(qrels, table, MEASURES, per_query=True))
    assert evaluate(qrels, table, MEASURES, per_query=True).per_query == expected.per_query
    assert expected.per_query == evaluate(qrels, as_dicts((q, str(d), s) for q, d, s in run_rows), MEASURES,
                                          per_query=True).per_query


def test_frames_the_small_path_does_not_take_go_on_to_the_other_readers():
    interleaved = frame([("q1", "a", 1.0), ("q2", "a", 2.0), ("q1", "b", 3.0)], "score")
    assert not isinstance(frames.run_from_frame(interleaved), frames.FrameRun)
    twice = frame([("q1", "a", 1.0), ("q1", "a", 2.0), ("q2", "a", 3.0)], "score")
    assert frames.run_from_frame(twice, on_duplicate="first").scores.tolist() == [1.0, 3.0]
    larger = frame([("q1", f"d{i}", float(i)) for i in range(frames.SMALL_FRAME_ROWS + 1)], "score")
    assert not isinstance(frames.run_from_frame(larger), frames.FrameRun)  # seen once: the columnar readers
    assert isinstance(frames.run_from_frame(larger.copy()), frames.FrameRun)  # the same ids again
    largest = frame([("q1", f"d{i}", float(i)) for i in range(frames.REPEATED_FRAME_ROWS + 1)], "score")
    assert not any(isinstance(frames.run_from_frame(largest), frames.FrameRun) for _ in range(2))
    expected = evaluate({"q1": {"a": 1, "b": 1}, "q2": {"a": 1}}, as_dicts(interleaved.itertuples(index=False)),
                        ["map", "num_ret"], per_query=True)
    assert evaluate({"q1": {"a": 1, "b": 1}, "q2": {"a": 1}}, interleaved, ["map", "num_ret"],
                    per_query=True).per_query == expected.per_query


BAD_RUNS = [
    [("q1", "a", 1.0), ("q1", "a", 2.0)],  # a pair given twice
    [("q1", "a", 1.0), ("q1", "b", float("nan"))],  # a NaN score
    [("q1", "a", 1.0), ("q1", "b", float("inf"))],
    [("q1", "a", 1.0), ("q1", None, 2.0)],  # a missing document id
    [(None, "a", 1.0), ("q1", "b", 2.0)],  # a missing query id
    [("q1", "a", 1.0), ("q1", "b", "high")],  # a score that is not a number
]


@pytest.mark.parametrize("rows", BAD_RUNS)
def test_every_message_of_the_other_readers_is_kept(rows, monkeypatch):
    run = frame(rows, "score", index=[10, 11])
    ev = Evaluator({"q1": {"a": 1}}, ["map"])
    with pytest.raises(EvaltoolError) as small:
        ev.evaluate(run)
    with pytest.raises(EvaltoolError) as other:
        _columnar(monkeypatch, lambda: ev.evaluate(run))
    assert str(small.value) == str(other.value)
    assert type(small.value) is type(other.value)


def test_wrong_column_names_are_named():
    with pytest.raises(EvaltoolError, match="needs columns query_id, doc_id and score; it has query_id, docid, s"):
        evaluate({"q1": {"a": 1}}, pd.DataFrame({"query_id": ["q1"], "docid": ["a"], "s": [1.0]}), ["map"])


def test_equal_id_columns_are_read_once_and_new_scores_ranked_anew():
    """A training loop: the same candidates scored anew, the id columns built again each call."""
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1}}
    ev = Evaluator(qrels, ["map", "ndcg_cut.2", "recip_rank"])
    ids = [("q1", "a"), ("q1", "b"), ("q1", "c"), ("q1", "z"), ("q2", "x"), ("q2", "y")]
    rng = np.random.default_rng(5)
    first = None
    for epoch in range(6):
        scores = np.round(rng.random(len(ids)) * 2) / 2  # ties too
        rows = [(q, d, float(s)) for (q, d), s in zip(ids, scores)]
        run = frame(rows, "score")
        converted = frames.run_from_frame(run)
        first = first or converted.doc_vocab
        assert converted.doc_vocab is first  # listed once
        assert ev.evaluate(run, per_query=True).per_query == evaluate(qrels, as_dicts(rows), ev.plan).per_query
    changed = frame([("q1", "a", 1.0), ("q1", "b", 2.0), ("q1", "c", 0.0), ("q1", "w", 3.0), ("q2", "x", 1.0),
                     ("q2", "y", 0.0)], "score")
    assert frames.run_from_frame(changed).doc_vocab == ["a", "b", "c", "w", "x", "y"]
    repeated = frame([("q1", "a", 1.0), ("q1", "b", 2.0), ("q1", "c", 0.0), ("q1", "a", 3.0), ("q2", "x", 1.0),
                      ("q2", "y", 0.0)], "score")
    with pytest.raises(EvaltoolError, match="each \\(query, document\\) pair once"):
        ev.evaluate(repeated)
    with pytest.raises(EvaltoolError, match="each \\(query, document\\) pair once"):
        ev.evaluate(repeated)  # read from the kept entry


def test_a_run_deeper_than_its_judgments_reads_each_querys_scores():
    """More retrieved rows than judgments: ranking looks the judged documents up in each query's
    scores (FrameRun's rankings, made when read), ties broken by id bytes."""
    qrels = {"q1": {"b": 1, "é": 2}, "q2": {"m": 1}}
    rows = [("q1", d, s) for d, s in zip("abcdefg", [1.0, 1.0, 3.0, 1.0, 0.5, 0.5, 1.0])] + [("q1", "é", 1.0)]
    rows += [("q2", d, 2.0) for d in "lmn"]
    run = frames.run_from_frame(frame(rows, "score"))
    assert isinstance(run, frames.FrameRun) and run.rankings[1] == {"l": 2.0, "m": 2.0, "n": 2.0}
    got = evaluate(qrels, frame(rows, "score"), MEASURES, per_query=True)
    assert got.per_query == evaluate(qrels, as_dicts(rows), MEASURES, per_query=True).per_query
    # q1: c (3.0), then the 1.0 group by id bytes descending: é, g, d, b, a -> é at rank 2, b at rank 5
    assert got.per_query["q1"]["map"] == pytest.approx((1 / 2 + 2 / 5) / 2)


def _dtyped(rows, ids: str, scores: str):
    """A pandas run frame with its id columns as ``ids`` and its scores as ``scores`` (dtype names)."""
    table = frame(rows, "score")
    for name in ("query_id", "doc_id"):
        table[name] = table[name].astype(ids)
    table["score"] = table["score"].astype(scores)
    return table


HELD_KINDS = [  # (id dtype, score dtype, whether the frame's own arrays are read)
    ("string[pyarrow]", "float64", True), ("string[pyarrow]", "float32", True), ("string[pyarrow]", "int64", True),
    ("large_string[pyarrow]", "float64", True), ("object", "float64", False), ("category", "float64", False),
    ("string[pyarrow]", "Float64", False), ("string[python]", "float64", True),
]


@pytest.mark.parametrize("ids, scores, held", HELD_KINDS)
def test_a_pandas_frames_own_arrays_give_what_its_series_give(ids, scores, held, monkeypatch):
    """Arrow-backed ids and numpy scores are read from the arrays the frame holds, without making a
    Series: the same run, the same numbers, as through the Series; other columns go through the Series."""
    qrels_rows, run_rows = _tricky(7, numeric=False)
    if scores == "int64":
        run_rows = [(q, d, int(s * 3)) for q, d, s in run_rows]
    try:
        run = _dtyped(run_rows, ids, scores)
    except (TypeError, ImportError, ValueError) as error:  # a dtype this pandas does not know
        pytest.skip(f"pandas lacks {ids}: {error}")
    names = ("query_id", "doc_id", "score")
    assert (frames._held_columns(run, names) is not None) == held
    ev = Evaluator(as_dicts(qrels_rows), MEASURES)
    got = ev.evaluate(run, per_query=True)
    with monkeypatch.context() as patch:
        patch.setattr(frames, "_held_columns", lambda *args: None)
        series = Evaluator(as_dicts(qrels_rows), MEASURES).evaluate(run, per_query=True)
    assert got.per_query == series.per_query and got.summary == series.summary
    dicts = evaluate(as_dicts(qrels_rows), as_dicts((q, d, float(s)) for q, d, s in run_rows), MEASURES,
                     per_query=True)
    assert got.per_query == dicts.per_query


def test_a_pandas_frame_with_a_repeated_column_name_is_read_through_its_series():
    run = pd.DataFrame([["q1", "a", 2.0, 1.0]], columns=["query_id", "doc_id", "score", "score"])
    assert frames._held_columns(run, ("query_id", "doc_id", "score")) is None


@pytest.mark.parametrize("rows", BAD_RUNS + [[("q1", "a", 1.0), ("q1", "a", 2.0), ("q2", "b", 1.0)]])
def test_every_message_is_kept_with_arrow_backed_ids(rows, monkeypatch):
    """Arrow-backed id columns (read from the frame's own arrays) refuse what object columns refuse, in the same words."""
    try:
        run = frame(rows, "score", index=list(range(10, 10 + len(rows))))
        run["query_id"] = run["query_id"].astype("string[pyarrow]")
        run["doc_id"] = run["doc_id"].astype("string[pyarrow]")
    except (TypeError, ImportError):
        pytest.skip("no Arrow-backed strings in this pandas")
    ev = Evaluator({"q1": {"a": 1}}, ["map"])
    with pytest.raises(EvaltoolError) as held:
        ev.evaluate(run)
    with monkeypatch.context() as patch:
        patch.setattr(frames, "_held_columns", lambda *args: None)
        with pytest.raises(EvaltoolError) as series:
            ev.evaluate(run)
    with pytest.raises(EvaltoolError) as other:
        _columnar(monkeypatch, lambda: ev.evaluate(run))
    assert str(held.value) == str(series.value) == str(other.value)
    assert type(held.value) is type(series.value) is type(other.value)
