"""Run files with text document ids read by pyarrow (the columnar reader, as several runs and big
files are read) keep their ids as Arrow text with fingerprints (:class:`textids.TextDocRun`)
instead of dictionary-encoding them. These tests hold those runs to the line reader's and the
dicts' numbers, to trec_eval's output, and to the line reader's messages, whatever the block
cuts, the order of the queries, a switch from numeric to text ids, and colliding fingerprints."""

from __future__ import annotations

import numpy as np
import pytest

from evaltool import Evaluator, evaluate
from evaltool.io import columnar, kinds, load, textids, trec
from tests.support.helpers import assert_fails, invoke, require_program, write
from tests.support.tables import as_dicts

pa = pytest.importorskip("pyarrow")

MEASURES = ["all_trec", "ndcg_cut.5", "relstring"]


def _ids(rng) -> list[str]:
    """Ids of 1 to 40 bytes, with shared prefixes and suffixes and non-ASCII text; a few are digits."""
    ids = {"x" * i for i in range(1, 40)} | {"x" * i + "y" for i in range(40)} | {"y" + "x" * i for i in range(40)}
    ids |= {"FBIS3-10082", "FT924-2803", "LA100790-0125", "é", "文書" * 7, "d" + "9" * 30, "007", "42"}
    ids |= {f"doc-{n}" for n in rng.choice(10 ** 6, 150, replace=False).tolist()}
    return sorted(ids)


def _tricky(seed: int, queries: int = 14, depth: int = 30, grouped: bool = True):
    """Rows as ``(query, doc, value)``: scores with many ties (the tie rule reads the ids), documents
    judged in several queries (up to all of them: a document's judgments are searched one by one),
    judged and unjudged documents retrieved, negative grades, a judged query the run never names
    and a run query never judged. ``grouped`` False: the run's queries interleave."""
    rng = np.random.default_rng(seed)
    ids = _ids(rng)
    shared = ids[:6]  # judged in every query
    run_rows, qrels_rows = [], []
    for q in range(queries):
        qid = f"{300 + q}" if q % 3 else f"topic-{q}"
        docs = rng.choice(len(ids), size=depth, replace=False)
        scores = np.round(rng.random(depth) * 4) / 4
        run_rows += [(qid, ids[d], float(s)) for d, s in zip(docs.tolist(), scores.tolist())]
        judged = {ids[d] for d in rng.choice(len(ids), size=15, replace=False).tolist()} | set(shared)
        qrels_rows += [(qid, d, int(rng.integers(-1, 4))) for d in sorted(judged)]
    qrels_rows.append(("only-judged", ids[3], 1))
    run_rows.append(("never-judged", ids[5], 1.0))
    if not grouped:
        run_rows = [run_rows[i] for i in rng.permutation(len(run_rows))]
    return qrels_rows, run_rows


def _files(folder, qrels_rows, run_rows, name="run", before=""):
    qrels = write(folder / "qrels", "".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_rows))
    run = write(folder / name, before + "".join(f"{q} Q0 {d} {i} {s!r} tag{name}\n" for i, (q, d, s) in
                                                enumerate(run_rows)))
    return qrels, run


@pytest.mark.parametrize("grouped", [True, False])
@pytest.mark.parametrize("block_size", [90, 700, None])
@pytest.mark.parametrize("seed", [1, 2])
def test_text_runs_read_by_pyarrow_give_the_line_readers_and_the_dicts_numbers(tmp_path, seed, block_size, grouped):
    qrels_rows, run_rows = _tricky(seed, grouped=grouped)
    qrels, path = _files(tmp_path, qrels_rows, run_rows)
    run = columnar.read_run(path, in_caller=True, block_size=block_size, text_run=textids.TextDocRun)
    assert isinstance(run, textids.TextDocRun)
    assert run.doc_text(np.arange(len(run))) == [d for _, d, _ in run_rows]
    by_lines = trec.read_run(path)
    assert not isinstance(by_lines, columnar.ArrowDocRun)
    expected = evaluate(qrels, by_lines, MEASURES, per_query=True)
    got = evaluate(qrels, run, MEASURES, per_query=True)
    assert got.per_query == expected.per_query and got.summary == expected.summary
    assert got.per_query == evaluate(as_dicts(qrels_rows), as_dicts(run_rows), MEASURES, per_query=True).per_query
    # and dictionary-encoded, as a caller that gives no text_run gets it
    encoded = columnar.read_run(path, in_caller=True, block_size=block_size)
    assert type(encoded) is columnar.ArrowDocRun
    assert evaluate(qrels, encoded, MEASURES, per_query=True).per_query == expected.per_query


@pytest.mark.parametrize("block_size", [60, None])
def test_ids_that_turn_to_text_in_a_later_block_keep_the_earlier_ones(tmp_path, block_size):
    """Numeric ids first (integer keys), then text: the earlier keys come back as their own text
    and fingerprints, and '007' is not the number 7."""
    qrels_rows = [("1", "5", 1), ("1", "007", 2), ("2", "7", 1), ("2", "D17", 1), ("2", "0", 3)]
    run_rows = [("1", "5", 2.0), ("1", "9", 2.0), ("1", "007", 1.0), ("2", "7", 3.5), ("2", "D17", 3.5),
                ("2", "007", 3.5), ("2", "0", 1.0)]
    qrels, path = _files(tmp_path, qrels_rows, run_rows)
    run = columnar.read_run(path, in_caller=True, block_size=block_size, text_run=textids.TextDocRun)
    assert isinstance(run, textids.TextDocRun)
    assert run.doc_text(np.arange(len(run))) == [d for _, d, _ in run_rows]
    expected = evaluate(as_dicts(qrels_rows), as_dicts(run_rows), MEASURES, per_query=True)
    assert evaluate(qrels, run, MEASURES, per_query=True).per_query == expected.per_query


def _weak(column):
    """Fingerprints that collide for every two ids of one length (the length alone)."""
    return np.array([len(text.encode()) for text in column.to_pylist()], dtype=np.uint64)


def test_colliding_fingerprints_hand_the_file_to_the_line_reader(tmp_path, monkeypatch):
    qrels_rows, run_rows = _tricky(3)
    qrels, path = _files(tmp_path, qrels_rows, run_rows)
    expected = evaluate(qrels, trec.read_run(path), MEASURES, per_query=True).per_query
    monkeypatch.setattr(columnar, "fingerprints", _weak)
    assert columnar.read_run(path, in_caller=True, text_run=textids.TextDocRun) is None
    monkeypatch.setattr(kinds, "COLUMNAR_MIN_BYTES", 0)
    assert evaluate(qrels, path, MEASURES, per_query=True).per_query == expected


def test_many_text_runs_in_one_command_print_what_trec_eval_prints(tmp_path, monkeypatch):
    """Several runs read ahead by pyarrow (every size: as when they are big together), each
    block byte for byte trec_eval's output for that run."""
    trec_eval = require_program("trec_eval", "the trec_eval 10.0 oracle (/work/oracle/trec_eval-10.0)")
    import subprocess

    monkeypatch.setattr(kinds, "MANY_COLUMNAR_BYTES", 0)
    read = []
    original = columnar.read_run

    def spy(*args, **kwargs):
        run = original(*args, **kwargs)
        read.append(type(run))
        return run

    monkeypatch.setattr(columnar, "read_run", spy)
    qrels_rows, _ = _tricky(4)
    # trec_eval 10.0 gives up on a judged query the run never names (without -c)
    qrels_rows = [row for row in qrels_rows if row[0] != "only-judged"]
    runs = []
    for seed in (4, 5, 6):
        _, run_rows = _tricky(seed, grouped=seed != 5)
        qrels, path = _files(tmp_path, qrels_rows, run_rows, name=f"run{seed}")
        runs.append(path)
    measures = ["-m", "all_trec"]
    result = invoke(*measures, qrels, *runs)
    assert result.exit_code == 0, result.output
    assert read == [textids.TextDocRun] * 3
    expected = "".join(subprocess.run([trec_eval, *measures, qrels, run], capture_output=True, text=True,
                                      check=True).stdout for run in runs)
    assert result.stdout == expected


def test_an_evaluator_scores_text_runs_read_ahead_as_one_by_one(tmp_path, monkeypatch):
    monkeypatch.setattr(kinds, "MANY_COLUMNAR_BYTES", 0)
    qrels_rows, _ = _tricky(7)
    paths = []
    for seed in (7, 8):
        _, run_rows = _tricky(seed)
        qrels, path = _files(tmp_path, qrels_rows, run_rows, name=f"run{seed}")
        paths.append(path)
    loaded = load.read_run_ahead(paths[0], min_bytes=0)
    assert isinstance(loaded.value, textids.TextDocRun)
    evaluator = Evaluator(qrels, MEASURES)
    many = evaluator.evaluate_many(paths, per_query=True)
    for path, result in zip(paths, many):
        assert result.per_query == evaluate(qrels, trec.read_run(path), MEASURES, per_query=True).per_query


def test_a_pair_given_twice_in_a_text_run_keeps_the_line_readers_message(tmp_path, monkeypatch):
    monkeypatch.setattr(kinds, "MANY_COLUMNAR_BYTES", 0)
    qrels_rows, run_rows = _tricky(9)
    again = run_rows[3]
    qrels, first = _files(tmp_path, qrels_rows, run_rows, name="a")
    _, second = _files(tmp_path, qrels_rows, run_rows[:10] + [again] + run_rows[10:], name="b")
    assert columnar.read_run(second, in_caller=True, text_run=textids.TextDocRun) is None
    message = assert_fails(invoke(qrels, first, second), second, ":11:", again[1], "already given at line 4")
    assert len(message) < 600
