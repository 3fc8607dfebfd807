"""A DataFrame run grouped by query whose document ids are all canonical integers (MS MARCO's)
is read without hashing its query ids and keeps its ids as integer keys
(:func:`evaltool.io.textids.run_from_text_columns`). These tests hold it to the dicts' and the
files' numbers on tricky inputs (ties broken by the ids' bytes, not their values; ids up to
2**63 - 1; ids with leading zeros, which are text), and to the row-by-row path's messages."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaltool import Evaluator, evaluate
from evaltool.errors import ParseError
from evaltool.io import columnar, frames
from tests.support.tables import as_dicts, frame

pd = pytest.importorskip("pandas")
# these tests are about the columnar readers, which small frames skip (tests/io/test_small_frames.py)
pytestmark = pytest.mark.usefixtures("columnar_frames")
pa = pytest.importorskip("pyarrow")

MEASURES = ["all_trec", "ndcg_cut.5", "relstring"]
HUGE = [9223372036854775807, 1000000000000000000, 999999999999999999, 10, 9, 0, 7, 70]


def _tricky(seed: int, queries: int = 12, depth: int = 20):
    """Rows grouped by query, scores on a coarse grid (many ties), ids of 1 to 19 digits (so
    "9" ranks above "10" in a tie), judged documents retrieved or not, negative grades, a
    judged query the run never names and a run query never judged."""
    rng = np.random.default_rng(seed)
    pool = sorted(set(HUGE) | {int(v) for v in rng.integers(0, 10 ** rng.integers(1, 19, size=300), dtype=np.int64)})
    run_rows, qrels_rows = [], []
    for q in range(queries):
        docs = rng.choice(len(pool), size=depth, replace=False)
        scores = np.round(rng.random(depth) * 3) / 3
        run_rows += [(f"q{q}", str(pool[d]), float(s)) for d, s in zip(docs.tolist(), scores.tolist())]
        judged = dict.fromkeys(np.concatenate((docs[:6], rng.choice(len(pool), size=6, replace=False))).tolist())
        qrels_rows += [(f"q{q}", str(pool[d]), int(rng.integers(-1, 4))) for d in judged]
    qrels_rows.append(("only_judged", "7", 1))
    run_rows.append(("never_judged", "7", 1.0))
    return qrels_rows, run_rows



@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("ids", ["str", "object", "int64"])
def test_numeric_runs_give_the_dicts_and_the_files_numbers(seed, ids, tmp_path):
    qrels_rows, run_rows = _tricky(seed)
    run_frame = frame(run_rows, "score")
    if ids != "str":
        run_frame["doc_id"] = run_frame["doc_id"].astype(ids)
    run = frames.run_from_frame(run_frame)
    assert type(run) is columnar.NumericDocRun
    expected = evaluate(as_dicts(qrels_rows), as_dicts(run_rows), MEASURES, per_query=True)
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_rows))
    run_path.write_text("".join(f"{q} Q0 {d} 1 {s!r} tag\n" for q, d, s in run_rows))
    from_file = evaluate(str(qrels_path), str(run_path), MEASURES, per_query=True)
    assert from_file.per_query == expected.per_query
    for qrels in (as_dicts(qrels_rows), frame(qrels_rows, "relevance"), str(qrels_path)):
        got = evaluate(qrels, run_frame, MEASURES, per_query=True)
        assert got.per_query == expected.per_query
        assert got.summary == expected.summary
    evaluator = Evaluator(frame(qrels_rows, "relevance"), MEASURES)
    assert evaluator.evaluate(run_frame, per_query=True).per_query == expected.per_query


def test_ids_of_19_digits_are_found_in_the_qrels(tmp_path):
    """A judged id of 19 digits (up to 2**63 - 1) is the same integer key on both sides, in a
    frame and in a file the columnar reader reads."""
    qrels = {"q1": {"9223372036854775807": 1, "1000000000000000000": 2, "5": 1}}
    rows = [("q1", "1000000000000000000", 3.0), ("q1", "9223372036854775807", 2.0), ("q1", "4", 1.0)]
    run = frame(rows, "score")
    assert type(frames.run_from_frame(run)) is columnar.NumericDocRun
    expected = evaluate(qrels, as_dicts(rows), MEASURES, per_query=True)
    assert expected.summary["num_rel_ret"] == 2
    assert evaluate(qrels, run, MEASURES, per_query=True).per_query == expected.per_query
    path = tmp_path / "run"
    path.write_text("".join(f"{q} Q0 {d} 1 {s} tag\n" for q, d, s in rows))
    from_file = columnar.read_run(str(path), jobs=1, in_caller=True)
    assert type(from_file) is columnar.NumericDocRun
    assert evaluate(qrels, from_file, MEASURES, per_query=True).per_query == expected.per_query


def test_ids_that_are_not_canonical_integers_stay_text():
    """Leading zeros, signs and ids past 2**63 - 1 are text: "07" is not "7"."""
    for docs in (["07", "7"], ["7", "+8"], ["7", "-8"], ["9223372036854775808", "1"]):
        rows = [("q1", docs[0], 2.0), ("q1", docs[1], 2.0)]
        run = frames.run_from_frame(frame(rows, "score"))
        assert type(run) is not columnar.NumericDocRun
        qrels = {"q1": {docs[0]: 1}}
        expected = evaluate(qrels, as_dicts(rows), MEASURES, per_query=True).per_query
        assert evaluate(qrels, frame(rows, "score"), MEASURES, per_query=True).per_query == expected


RUN_ERRORS = [
    ({"query_id": ["q1", "q1", "q1"], "doc_id": ["17", "4", "17"], "score": [1.0, 2.0, 3.0]},
     "<run DataFrame>: found 'query q1 document 17'; expected each (query, document) pair once; entries 1 and 3 "
     "(counting from 1) both give it (use on_duplicate='first' or 'max' to accept duplicates)"),
    ({"query_id": ["q1", "q1"], "doc_id": ["17", "4"], "score": [1.0, math.nan]},
     "<run DataFrame>: found 'row r1: nan'; expected a finite number as the score"),
    ({"query_id": ["q1", None], "doc_id": ["17", "4"], "score": [1.0, 2.0]},
     "<run DataFrame>: found 'row r1: query id nan'; expected a query id in every row, not a missing value "
     "(None, NaN)"),
    ({"query_id": ["q1", "q1"], "doc_id": ["17", None], "score": [1.0, 2.0]},
     "<run DataFrame>: found 'row r1: document id nan'; expected a document id in every row, not a missing "
     "value (None, NaN)"),
]


@pytest.mark.parametrize(("columns", "message"), RUN_ERRORS)
def test_a_grouped_numeric_frame_keeps_the_messages(columns, message):
    run = pd.DataFrame(columns, index=[f"r{i}" for i in range(len(columns["score"]))])
    with pytest.raises(ParseError) as caught:
        evaluate({"q1": {"17": 1}}, run, ["map"])
    assert str(caught.value) == message


@pytest.mark.parametrize(("policy", "expected"), [("first", 0.5), ("max", 1.0)])
def test_duplicates_in_a_grouped_numeric_frame_resolve_as_before(policy, expected):
    run = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["17", "4", "17"], "score": [1.0, 2.0, 3.0]})
    assert evaluate({"q1": {"17": 1}}, run, ["map"], on_duplicate=policy).summary == {"map": expected}


def test_a_frame_sliced_from_a_bigger_one_reads_its_own_rows():
    """A frame's Arrow data may start inside a bigger buffer (a slice): ids, offsets and the
    first bytes are read from where the slice starts."""
    rows = [("q0", "1", 1.0)] * 3 + [("q1", "30", 2.0), ("q1", "4", 1.0), ("q2", "05", 1.0)]
    whole = frame(rows, "score")
    part = whole.iloc[3:5].reset_index(drop=True)
    run = frames.run_from_frame(part)
    assert type(run) is columnar.NumericDocRun and run.doc_codes.tolist() == [30, 4]
    assert evaluate({"q1": {"4": 1}}, part, ["map"]).summary == {"map": 0.5}
