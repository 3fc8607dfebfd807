"""The columnar run reader works through a file a block of whole lines at a time: whatever
the cuts, it must hold exactly the lines of the file (here parsed again by plain Python
string splitting), and hand over to the line reader exactly where it did when it read
the file whole."""

from __future__ import annotations

import gzip
import random

import numpy as np
import pytest

pytest.importorskip("pyarrow")

from evaltool.io import columnar, kinds, textids  # noqa: E402
from tests.support.helpers import write  # noqa: E402


def _lines(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


def _run_text(seed: int, docid=lambda rng, q, i: str(rng.randrange(10 ** 6)), tag: str = "tagA") -> str:
    """Queries of 1 to 40 lines (many straddle any small block), scores with ties, grouped by query."""
    rng = random.Random(seed)
    lines = []
    for q in range(25):
        docs = {docid(rng, q, i) for i in range(rng.randint(1, 40))}
        scores = sorted((rng.randint(0, 30) / 4 for _ in docs), reverse=True)
        lines += [f"{100 + q * 7} Q0 {d} {r} {s} {tag}\n" for r, (d, s) in enumerate(zip(sorted(docs), scores), 1)]
    return "".join(lines)


def _assert_holds_lines(run, text: str, runid: str) -> None:
    expected = _lines(text)
    assert [run.qid_vocab[c] for c in run.qid_codes.tolist()] == [f[0] for f in expected]
    assert run.doc_text(np.arange(len(run))) == [f[2] for f in expected]
    assert run.scores.tolist() == [float(f[4]) for f in expected]
    assert run.runid == runid


@pytest.mark.parametrize("block_size", [40, 97, 1000, None])
@pytest.mark.parametrize("variant", ["plain", "crlf", "tabs", "gzip"])
@pytest.mark.parametrize("threaded", [True, False])
def test_blocks_cut_anywhere_hold_every_line(tmp_path, block_size, variant, threaded):
    text = _run_text(1) + "999 Q0 5 1 0.5 lastTag\n"
    data = {"crlf": text.replace("\n", "\r\n"), "tabs": text.replace(" ", "\t")}.get(variant, text).encode()
    path = tmp_path / "run"
    path.write_bytes(gzip.compress(data) if variant == "gzip" else data)
    run = columnar.read_run(path, jobs=2 if threaded else 1, block_size=block_size)
    assert isinstance(run, columnar.NumericDocRun)
    _assert_holds_lines(run, text, "lastTag")
    assert run.qid_codes.dtype == np.int32 and len(run.scores) == len(_lines(text))


def test_a_run_read_in_the_callers_thread_is_the_same(tmp_path):
    text = _run_text(2)
    path = write(tmp_path / "run", text)
    _assert_holds_lines(columnar.read_run(path, in_caller=True, block_size=64), text, "tagA")


def test_arrays_grow_when_a_gzip_file_holds_more_rows_than_guessed(tmp_path, monkeypatch):
    monkeypatch.setattr(columnar, "_run_capacity", lambda path, compressed, sample: 3)
    text = _run_text(3)
    path = tmp_path / "run.gz"
    path.write_bytes(gzip.compress(text.encode()))
    _assert_holds_lines(columnar.read_run(path, block_size=50), text, "tagA")


def test_arrays_grow_when_lines_get_shorter_than_the_first_ones(tmp_path):
    # the first 64 KB (the sample the row count is guessed from) hold long lines, the rest short ones
    long = "".join(f"{q} Q0 {'x' * 120}{q} 1 1.5 tag\n" for q in range(600))
    short = "".join(f"{q} Q0 {d} 1 0.5 t\n" for q in range(700, 2700) for d in range(10))
    path = write(tmp_path / "run", long + short)
    assert columnar._run_capacity(path, False, long.encode()[:1 << 16]) < len(_lines(long + short))
    _assert_holds_lines(columnar.read_run(path, block_size=1 << 14), long + short, "t")


@pytest.mark.parametrize("block_size", [60, None])
def test_ids_that_stop_being_numeric_in_a_later_block_are_kept_as_text(tmp_path, block_size):
    # numeric ids for the first queries, then 'D…' and '007' (not the number 7)
    text = _run_text(4) + "7001 Q0 D17 1 3.5 tagA\n7001 Q0 007 2 3.5 tagA\n7001 Q0 0 3 1 tagA\n"
    run = columnar.read_run(write(tmp_path / "run", text), block_size=block_size)
    assert isinstance(run, columnar.ArrowDocRun)
    _assert_holds_lines(run, text, "tagA")


@pytest.mark.parametrize("block_size", [60, None])
def test_numeric_ids_beyond_int32_in_a_later_block_widen_the_keys(tmp_path, block_size):
    big = [str(2 ** 31), str(10 ** 18 + 7), "9223372036854775807"]
    text = _run_text(9) + "".join(f"7002 Q0 {d} {r} {3 - r} tagA\n" for r, d in enumerate(big))
    run = columnar.read_run(write(tmp_path / "run", text), block_size=block_size)
    assert isinstance(run, columnar.NumericDocRun) and run.doc_codes.dtype == np.int64
    assert run.doc_codes[-3:].tolist() == [2 ** 31, 10 ** 18 + 7, 2 ** 63 - 1]
    _assert_holds_lines(run, text, "tagA")
    small = columnar.read_run(write(tmp_path / "small", _run_text(9)), block_size=block_size)
    assert small.doc_codes.dtype == np.int32  # MS MARCO-like ids: half the memory


def test_ids_that_are_text_from_the_first_block(tmp_path):
    text = _run_text(5, docid=lambda rng, q, i: f"doc-{rng.randrange(500)}")
    run = columnar.read_run(write(tmp_path / "run", text), block_size=80)
    assert isinstance(run, columnar.ArrowDocRun)
    _assert_holds_lines(run, text, "tagA")


def _with_line(text: str, at: int, line: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[:at] + [line] + lines[at:])


def test_a_pair_repeated_blocks_apart_hands_over_to_the_line_reader(tmp_path, monkeypatch):
    from evaltool.errors import ParseError
    from evaltool.io import trec

    text = _run_text(6)
    first = _lines(text)[0]
    # the same query and document again, further down the same query's lines (within
    # another block than its first occurrence when blocks are 50 bytes)
    size = sum(1 for f in _lines(text) if f[0] == first[0])
    repeated = f"{first[0]} Q0 {first[2]} 99 0.0 tagA\n"
    path = write(tmp_path / "run", _with_line(text, size, repeated))
    assert columnar.read_run(path, block_size=50) is None
    monkeypatch.setattr(columnar, "RUN_BLOCK_BYTES", 50)
    monkeypatch.setattr(kinds, "COLUMNAR_MIN_BYTES", 0)
    with pytest.raises(ParseError) as caught:
        trec.read_run(path)
    assert f":{size + 1}:" in str(caught.value) and "already given at line 1" in str(caught.value)


@pytest.mark.parametrize("bad", ["inf", "nan", "-inf"])
def test_a_score_that_is_not_finite_in_a_later_block_hands_over(tmp_path, monkeypatch, bad):
    from evaltool.errors import ParseError
    from evaltool.io import trec

    text = _with_line(_run_text(7), 300, f"5000 Q0 12 1 {bad} tagA\n")
    path = write(tmp_path / "run", text)
    assert columnar.read_run(path, block_size=70) is None
    monkeypatch.setattr(columnar, "RUN_BLOCK_BYTES", 70)
    monkeypatch.setattr(kinds, "COLUMNAR_MIN_BYTES", 0)
    with pytest.raises(ParseError, match=":301:"):
        trec.read_run(path)


def test_a_line_longer_than_a_block_hands_over_and_is_read_by_the_line_reader(tmp_path, monkeypatch):
    from evaltool.io import trec

    long_id = "x" * 300
    text = _run_text(8) + f"8000 Q0 {long_id} 1 2.5 tagA\n"
    path = write(tmp_path / "run", text)
    assert columnar.read_run(path, block_size=100) is None
    monkeypatch.setattr(columnar, "RUN_BLOCK_BYTES", 100)
    monkeypatch.setattr(kinds, "COLUMNAR_MIN_BYTES", 0)
    _assert_holds_lines(trec.read_run(path), text, "tagA")


def _repeats_by_hand(qids, docs) -> bool:
    seen = set()
    for pair in zip(qids.tolist(), docs.tolist()):
        if pair in seen:
            return True
        seen.add(pair)
    return False


@pytest.mark.parametrize("shape", ["equal groups", "unequal groups", "one long group", "ungrouped", "large ids"])
def test_duplicate_check_against_a_set_of_pairs(shape, monkeypatch):
    monkeypatch.setattr(columnar, "DUPLICATE_SLICE_ROWS", 64)  # many slices, groups across their edges
    rng = np.random.default_rng(len(shape))
    sizes = {"equal groups": [20] * 40, "unequal groups": rng.integers(1, 50, 40),
             "one long group": [3, 5, 400, 2, 7], "ungrouped": [20] * 40, "large ids": rng.integers(1, 30, 40)}[shape]
    high = 10 ** 15 if shape == "large ids" else 1000
    qids = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
    seen = {False: 0, True: 0}
    for trial in range(60):
        docs = rng.integers(0, high, len(qids))
        for q in range(len(sizes)):  # distinct documents per query, then maybe one repeat
            rows = np.flatnonzero(qids == q)
            docs[rows] = rng.choice(high, len(rows), replace=False)
        if trial % 2:
            row = rng.integers(0, len(qids))
            rows = np.flatnonzero(qids == qids[row])
            docs[rows[rng.integers(0, len(rows))]] = docs[row]
        order = rng.permutation(len(qids)) if shape == "ungrouped" else np.arange(len(qids))
        expected = _repeats_by_hand(qids[order], docs[order])
        assert columnar.has_duplicates(qids[order], docs[order]) == expected
        seen[expected] += 1
    assert seen[True] > 10 and seen[False] > 10


def test_duplicate_check_of_a_query_coming_back_with_sparse_codes():
    # three runs of query codes within a range of six: only the codes at the runs' starts tell it is not grouped
    qids = np.array([0, 5, 0])
    assert columnar.has_duplicates(qids, np.array([1, 2, 1])) and not columnar.has_duplicates(qids, np.array([1, 2, 3]))


@pytest.mark.parametrize("text_ids", [False, True])
@pytest.mark.parametrize("grouped", [True, False])
def test_a_pair_repeated_anywhere_is_found_whatever_the_block_cuts(tmp_path, grouped, text_ids):
    """Blocks hold no repeat of their own; the file's check then reads only the queries whose
    lines cross a cut (grouped files) or every row (others): a repeat one, two or many blocks
    apart, or in a query that comes back, is found either way; a file without one is read."""
    rng = random.Random(len(str(grouped)) + 2 * text_ids)
    found = {False: 0, True: 0}
    for trial in range(24):
        rows = []
        for q in range(12):  # queries of 1 to 60 lines: some inside a block, some across several
            docs = rng.sample(range(10 ** 5), rng.randint(1, 60))
            rows += [(str(100 + q), f"D{d}" if text_ids else str(d)) for d in docs]
        if trial % 2:  # one pair again, anywhere in its query's lines or at the end of the file
            q, d = rows[rng.randrange(len(rows))]
            at = [i for i, r in enumerate(rows) if r[0] == q]
            rows.insert(rng.randint(at[0] + 1, at[-1] + 1), (q, d))
        if not grouped:
            rng.shuffle(rows)
        text = "".join(f"{q} Q0 {d} 1 {rng.randint(0, 9)} t\n" for q, d in rows)
        path = write(tmp_path / f"run{trial}", text)
        repeated = len(set(rows)) < len(rows)
        run = columnar.read_run(path, block_size=rng.choice([60, 200, 900]), in_caller=True,
                                text_run=textids.TextDocRun)
        assert (run is None) == repeated, (trial, text)
        if run is not None:
            _assert_holds_lines(run, text, "t")
        found[repeated] += 1
    assert found[True] and found[False]


@pytest.mark.parametrize("repeated", [False, True])
def test_a_query_coming_back_inside_one_block_is_one_query(tmp_path, repeated):
    """A block lists the id of each run of a query's lines (few runs: no hashing), so a query that
    comes back within a block has two runs there; the file is still read as one query, and a
    document given in both runs is a repeat the line reader then names."""
    from evaltool.errors import ParseError
    from evaltool.io import trec

    lines = [f"7 Q0 {d} 1 {d / 10} t\n" for d in range(1, 41)] + [f"8 Q0 {d} 1 0.5 t\n" for d in range(1, 41)]
    lines += [f"7 Q0 {d} 1 0.25 t\n" for d in range(41, 60)] + [f"7 Q0 {3 if repeated else 60} 1 0.25 t\n"]
    text = "".join(lines)
    path = write(tmp_path / "run", text)
    run = columnar.read_run(path, block_size=1 << 16, in_caller=True)
    if repeated:
        assert run is None
        with pytest.raises(ParseError, match=r":100: .*query '7' document '3' was already given at line 3"):
            trec.read_run(path)
    else:
        assert run.qid_vocab == ["7", "8"]
        _assert_holds_lines(run, text, "t")


def test_the_block_check_of_repeats_against_a_set_of_pairs():
    rng = np.random.default_rng(5)
    seen = {False: 0, True: 0}
    for trial in range(200):
        rows = int(rng.integers(2, 400))
        qids = np.sort(rng.integers(0, rng.integers(1, 20), rows)).astype(np.int32)
        if trial % 3 == 0:
            qids = rng.permutation(qids)
        high = [50, 10 ** 6, 2 ** 32, 2 ** 40][trial % 4]
        docs = rng.integers(0, high, rows)
        expected = _repeats_by_hand(qids, docs)
        assert columnar._repeats_in_block(qids, docs) == expected, trial
        seen[expected] += 1
    assert seen[True] > 20 and seen[False] > 20


@pytest.mark.parametrize("where", ["query id", "text document id", "query id of numeric documents", "gzip tag"])
def test_ids_that_are_not_utf8_in_a_later_block_hand_over_to_the_line_reader(tmp_path, monkeypatch, where):
    """pyarrow parses the ids without checking them to be UTF-8; every id kept as text is checked
    after, so a file holding one that is not still goes to the line reader, whose ids keep
    their bytes (surrogate escapes), as they did when pyarrow refused the file."""
    from evaltool.io import load, trec

    text_ids = where == "text document id"
    text = _run_text(9, docid=(lambda rng, q, i: f"D{rng.randrange(10 ** 6)}") if text_ids else
                     (lambda rng, q, i: str(rng.randrange(10 ** 6))))
    line = {"query id": b"q\xe9 Q0 77 1 0.5 tagA\n", "text document id": b"900 Q0 D\xff7 1 0.5 tagA\n",
            "query id of numeric documents": b"9\xff0 Q0 77 1 0.5 tagA\n",
            "gzip tag": b"900 Q0 77 1 0.5 tag\xff\n"}[where]
    data = text.encode() + line
    path = tmp_path / "run"
    path.write_bytes(gzip.compress(data) if where == "gzip tag" else data)
    assert columnar.read_run(path, block_size=200, text_run=textids.TextDocRun) is None
    monkeypatch.setattr(columnar, "RUN_BLOCK_BYTES", 200)
    monkeypatch.setattr(kinds, "COLUMNAR_MIN_BYTES", 0)
    run, by_lines = load.read_run(path), trec.read_run(path)
    expected = [f.decode("utf-8", "surrogateescape") for f in data.splitlines()[-1].split()]
    assert run.qid_vocab[run.qid_codes[-1]] == expected[0] and run.doc_text([len(run) - 1]) == [expected[2]]
    assert run.runid == by_lines.runid == expected[5]
    assert [run.qid_vocab[c] for c in run.qid_codes] == [by_lines.qid_vocab[c] for c in by_lines.qid_codes]
    assert run.doc_text(np.arange(len(run))) == by_lines.doc_text(np.arange(len(by_lines)))
