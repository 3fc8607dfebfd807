"""A DataFrame run with text document ids, grouped by query, is scored without encoding its ids
(:mod:`evaltool.io.textids`): fingerprints find the judged documents and prove that no pair
repeats. These tests hold it to the dicts' and the files' numbers on tricky inputs, to the
row-by-row path's messages, and to exact answers when fingerprints collide."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from evaltool import Evaluator, evaluate
from evaltool.errors import ParseError
from evaltool.io import columnar, frames, textids
from tests.support.tables import as_dicts, frame

pd = pytest.importorskip("pandas")
# these tests are about the columnar readers, which small frames skip (tests/io/test_small_frames.py)
pytestmark = pytest.mark.usefixtures("columnar_frames")
pa = pytest.importorskip("pyarrow")

MEASURES = ["all_trec", "ndcg_cut.5", "relstring"]


def _ids():
    """Distinct ids around every length the fingerprints read differently (0-8, 8-16, past 16),
    with NUL bytes, non-ASCII text and shared prefixes and suffixes."""
    alphabet = ["", "a", "\x00", "é", "ab" * 5]
    ids = {"".join(p) for r in range(5) for p in itertools.product(alphabet, repeat=r)}
    ids |= {"x" * i for i in range(40)} | {"x" * i + "y" for i in range(40)} | {"y" + "x" * i for i in range(40)}
    ids |= {"x" * 20 + "y" + "x" * 20, "d" + "9" * 30, "文書" * 7}
    return sorted(ids)


def test_fingerprints_tell_ids_apart_and_agree_across_layouts():
    ids = _ids()
    prints = textids.fingerprints(pa.array(ids))
    assert len(set(prints.tolist())) == len(ids)
    assert textids.fingerprints(pa.array(ids, pa.large_string())).tolist() == prints.tolist()
    assert textids.fingerprints(pa.chunked_array([ids[:7], ids[7:]])).tolist() == prints.tolist()
    for cut in range(1, 10):  # ids starting anywhere in the buffer, or ending at its last bytes
        assert textids.fingerprints(pa.array(ids).slice(cut)).tolist() == prints[cut:].tolist()
        assert textids.fingerprints(pa.array(ids[:-cut])).tolist() == prints[:-cut].tolist()
    for short in (["a"], [""], ["aa", ""], ["", "", "a"]):  # buffers shorter than a word
        assert textids.fingerprints(pa.array(short)).tolist() == [prints[ids.index(s)] for s in short]


def _tricky(seed: int, queries: int = 15, depth: int = 25):
    """Rows grouped by query, scores in no order with many ties, ids from :func:`_ids` (so
    documents recur across queries), judged documents retrieved or not, negative grades
    (unjudged in the pool), a judged query the run never names and a run query never judged."""
    rng = np.random.default_rng(seed)
    ids = _ids()
    run_rows, qrels_rows = [], []
    for q in range(queries):
        qid = f"q{q}" if q % 4 else f"запрос{q}"
        docs = rng.choice(len(ids), size=depth, replace=False)
        scores = np.round(rng.random(depth) * 3) / 3
        run_rows += [(qid, ids[d], float(s)) for d, s in zip(docs.tolist(), scores.tolist())]
        judged = rng.choice(len(ids), size=12, replace=False)
        qrels_rows += [(qid, ids[d], int(rng.integers(-1, 4))) for d in judged.tolist()]
    qrels_rows.append(("only judged", ids[3], 1))
    run_rows += [("never judged", ids[5], 1.0)]
    return qrels_rows, run_rows



@pytest.mark.parametrize("seed", [1, 2, 3])
def test_text_runs_give_the_dicts_and_the_files_numbers(seed, tmp_path):
    qrels_rows, run_rows = _tricky(seed)
    run = frames.run_from_frame(frame(run_rows, "score"))
    assert isinstance(run, textids.TextDocRun)
    expected = evaluate(as_dicts(qrels_rows), as_dicts(run_rows), MEASURES, per_query=True)
    got = evaluate(frame(qrels_rows, "relevance"), frame(run_rows, "score"), MEASURES, per_query=True)
    assert got.per_query == expected.per_query and got.summary == expected.summary
    (tmp_path / "qrels").write_text("".join(f"{q.replace(' ', '_')} 0 {d} {g}\n" for q, d, g in qrels_rows
                                            if d.isprintable() and d and " " not in d))
    kept = [(q.replace(" ", "_"), d, s) for q, d, s in run_rows if d.isprintable() and d and " " not in d]
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 1 {s!r} r\n" for q, d, s in kept))
    from_files = evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), MEASURES, per_query=True)
    from_frame = evaluate(str(tmp_path / "qrels"), frame(kept, "score"), MEASURES, per_query=True)
    assert from_frame.per_query == from_files.per_query


def test_an_evaluator_gives_each_run_its_own_numbers():
    """Runs scored in turn against one Evaluator (the judged ids' lookup table is kept) each
    get the numbers of a fresh evaluation, as do the same runs as dicts."""
    qrels_rows, _ = _tricky(4)
    evaluator = Evaluator(frame(qrels_rows, "relevance"), MEASURES)
    for seed in (4, 5, 6):
        _, run_rows = _tricky(seed)
        got = evaluator.evaluate(frame(run_rows, "score"), per_query=True)
        assert got.per_query == evaluate(as_dicts(qrels_rows), as_dicts(run_rows), MEASURES, per_query=True).per_query


def _weak(column):
    """Fingerprints that collide for every two ids of one length (the length alone)."""
    return np.array([len(text.encode()) for text in column.to_pylist()], dtype=np.uint64)


@pytest.mark.parametrize("everywhere", [True, False])
def test_colliding_fingerprints_cost_time_never_a_value(everywhere, monkeypatch):
    """With fingerprints that collide all the time, everywhere (two ids of a query share one:
    the exact check decides; two judged ids share one: the exact lookup answers) or among the
    judged ids only, the numbers stay the dicts'."""
    qrels_rows, run_rows = _tricky(7)
    expected = evaluate(as_dicts(qrels_rows), as_dicts(run_rows), MEASURES, per_query=True).per_query
    monkeypatch.setattr(textids, "_judged", textids._LastJudged())
    if everywhere:
        monkeypatch.setattr(textids, "fingerprints", _weak)
    else:
        monkeypatch.setattr(textids, "_Judged", _judged_with(_weak))
    run = frames.run_from_frame(frame(run_rows, "score"))
    assert isinstance(run, textids.TextDocRun) is not everywhere  # a repeat inside a query: the exact reader
    got = evaluate(frame(qrels_rows, "relevance"), frame(run_rows, "score"), MEASURES, per_query=True)
    assert got.per_query == expected


def _judged_with(compute):
    """:class:`textids._Judged` whose fingerprints are ``compute``'s."""
    class Judged(textids._Judged):
        def __init__(self, texts):
            original = textids.fingerprints
            textids.fingerprints = compute
            try:
                super().__init__(texts)
            finally:
                textids.fingerprints = original
    return Judged


def test_a_judged_id_whose_fingerprint_a_run_id_shares_is_not_taken_for_it(monkeypatch):
    """A run id with the fingerprint of a judged id but other text is not judged: every match
    is confirmed by its text."""
    monkeypatch.setattr(textids, "_judged", textids._LastJudged())
    monkeypatch.setattr(textids, "fingerprints", _weak)  # "ab" and "zz" collide
    run = frames.run_from_frame(pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["zz", "c"], "score": [2.0, 1.0]}))
    assert isinstance(run, textids.TextDocRun)
    assert [part.tolist() for part in run.rows_with_ids(["ab", "c"])] == [[1], [1]]
    result = evaluate({"q1": {"ab": 1, "c": 1}}, run, ["map", "recip_rank"])
    assert result.summary == {"map": 0.25, "recip_rank": 0.5}


RUN_ERRORS = [
    # a pair given twice in a grouped frame: found by its fingerprint, named by the row-by-row path
    ({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "a", "a"], "score": [1.0, 2.0, 3.0, 0.5]},
     "<run DataFrame>: found 'query q2 document a'; expected each (query, document) pair once; entries 3 and 4 "
     "(counting from 1) both give it (use on_duplicate='first' or 'max' to accept duplicates)"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, math.nan]},
     "<run DataFrame>: found 'row r1: nan'; expected a finite number as the score"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", None], "score": [1.0, 2.0]},
     "<run DataFrame>: found 'row r1: document id None'; expected a document id in every row, not a missing "
     "value (None, NaN)"),
]


@pytest.mark.parametrize(("columns", "message"), RUN_ERRORS)
def test_a_grouped_text_frame_keeps_the_messages(columns, message):
    run = pd.DataFrame(columns, index=[f"r{i}" for i in range(len(columns["score"]))], dtype=object)
    run["score"] = run["score"].astype(float)
    with pytest.raises(ParseError) as caught:
        evaluate({"q1": {"a": 1}}, run, ["map"])
    assert str(caught.value) == message


@pytest.mark.parametrize(("policy", "expected"), [("first", 0.5), ("max", 1.0)])
def test_duplicates_in_a_grouped_text_frame_resolve_as_before(policy, expected):
    run = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]})
    assert evaluate({"q1": {"a": 1}}, run, ["map"], on_duplicate=policy).summary == {"map": expected}


def test_frames_that_are_not_grouped_or_numeric_take_the_other_readers():
    interleaved = pd.DataFrame({"query_id": ["q1", "q2", "q1"], "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, 3.0]})
    numeric = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["17", "4"], "score": [1.0, 2.0]})
    assert type(frames.run_from_frame(interleaved)) is columnar.ArrowDocRun
    assert type(frames.run_from_frame(numeric)) is columnar.NumericDocRun
    assert evaluate({"q1": {"c": 1}}, interleaved, ["map"]).summary == {"map": 1.0}


def test_huge_and_unicode_ids_and_every_id_read_by_what_needs_it():
    """Ids of kilobytes and of any script; what asks for the run's ids (``doc_text``, the codes)
    gets them, encoded on first use."""
    docs = ["é" * 3000, "d" * 5000 + "1", "d" * 5000 + "2", "文書"]
    run = frames.run_from_frame(pd.DataFrame({"query_id": ["q"] * 4, "doc_id": docs, "score": [1.0, 1.0, 1.0, 0.0]}))
    assert isinstance(run, textids.TextDocRun)
    assert run.doc_text(np.array([3, 0])) == ["文書", "é" * 3000]
    assert run.doc_codes.tolist() == [0, 1, 2, 3] and run.keys_for(["文書", "x"]).tolist() == [3, -1]
    qrels = {"q": {docs[1]: 1, docs[2]: 2, "文書": 1}}
    expected = evaluate(qrels, dict(q=dict(zip(docs, [1.0, 1.0, 1.0, 0.0]))), MEASURES, per_query=True).per_query
    assert evaluate(qrels, run, MEASURES, per_query=True).per_query == expected


def test_string_view_ids_have_the_fingerprints_of_the_same_text():
    """polars' text, handed over as Arrow ``string_view`` (ids of up to 12 bytes held in their
    view, longer ones in one of several data buffers), fingerprints as ``string`` does, sliced
    or not; ``take_text`` reads its ids back."""
    ids = _ids()
    prints = textids.fingerprints(pa.array(ids)).tolist()
    views = pa.array(ids, pa.string_view())
    assert textids.fingerprints(views).tolist() == prints
    several = pa.concat_arrays([pa.array(ids[:50], pa.string_view()), pa.array(ids[50:], pa.string_view())])
    assert len(several.buffers()) > 3 and textids.fingerprints(several).tolist() == prints
    for cut in (1, 5, 49, 51):
        assert textids.fingerprints(several.slice(cut)).tolist() == prints[cut:]
        assert textids.take_text(several.slice(cut), np.array([0, 3, 2])).to_pylist() == [ids[cut], ids[cut + 3], ids[cut + 2]]
    assert textids.fingerprints(pa.array(["", "a"], pa.string_view())).tolist() == [prints[ids.index("")], prints[ids.index("a")]]


def _polars(rows, value):
    pl = pytest.importorskip("polars")
    names = ["query_id", "doc_id", value]
    cut = len(rows) // 2  # two chunks: polars hands them over as one string_view array of several data buffers
    return pl.concat([pl.DataFrame(part, schema=names, orient="row") for part in (rows[:cut], rows[cut:])], rechunk=False)


@pytest.mark.parametrize("seed", [1, 2])
def test_polars_text_runs_are_read_without_a_copy_and_give_every_inputs_numbers(seed, tmp_path):
    qrels_rows, run_rows = _tricky(seed)
    run = _polars(run_rows, "score")
    read = frames.run_from_frame(run)
    assert isinstance(read, textids.TextDocRun)
    assert (read.docs.type == pa.string_view()) == columnar.compares_views()  # a copy where pyarrow cannot compare views
    expected = evaluate(as_dicts(qrels_rows), as_dicts(run_rows), MEASURES, per_query=True)
    for qrels in (_polars(qrels_rows, "relevance"), frame(qrels_rows, "relevance"), as_dicts(qrels_rows),
                  pa.table(dict(zip(["query_id", "doc_id", "relevance"], map(list, zip(*qrels_rows)))))):
        got = evaluate(qrels, run, MEASURES, per_query=True)
        assert got.per_query == expected.per_query and got.summary == expected.summary
    assert read.doc_text(np.array([5, 0])) == [run_rows[5][1], run_rows[0][1]]
    assert read.keys_for([run_rows[7][1], "absent"]).tolist() == [read.doc_codes[7], -1]
    kept = [(q.replace(" ", "_"), d, s) for q, d, s in run_rows if d.isprintable() and d and " " not in d]
    (tmp_path / "qrels").write_text("".join(f"{q.replace(' ', '_')} 0 {d} {g}\n" for q, d, g in qrels_rows
                                            if d.isprintable() and d and " " not in d))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 1 {s!r} r\n" for q, d, s in kept))
    from_files = evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), MEASURES, per_query=True)
    assert evaluate(str(tmp_path / "qrels"), _polars(kept, "score"), MEASURES, per_query=True).per_query == from_files.per_query


POLARS_RUN_ERRORS = [
    ({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "a", "a"], "score": [1.0, 2.0, 3.0, 0.5]},
     "<run DataFrame>: found 'query q2 document a'; expected each (query, document) pair once; entries 3 and 4 "
     "(counting from 1) both give it (use on_duplicate='first' or 'max' to accept duplicates)"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, math.nan]},
     "<run DataFrame>: found 'row 1: nan'; expected a finite number as the score"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, None]},
     "<run DataFrame>: found 'row 1: None'; expected a finite number as the score"),
    ({"query_id": ["q1", "q1"], "doc_id": ["a", None], "score": [1.0, 2.0]},
     "<run DataFrame>: found 'row 1: document id None'; expected a document id in every row, not a missing "
     "value (None, NaN)"),
    ({"query_id": [None, "q1"], "doc_id": ["a", "b"], "score": [1.0, 2.0]},
     "<run DataFrame>: found 'row 0: query id None'; expected a query id in every row, not a missing "
     "value (None, NaN)"),
]


@pytest.mark.parametrize(("columns", "message"), POLARS_RUN_ERRORS)
def test_a_polars_text_run_keeps_the_messages(columns, message):
    pl = pytest.importorskip("polars")
    with pytest.raises(ParseError) as caught:
        evaluate({"q1": {"a": 1}}, pl.DataFrame(columns), ["map"])
    assert str(caught.value) == message
