"""Progress of big reads reported by the library (evaltool.io.progress): bytes read of the size
on disk, for the columnar reader and --stream, plain and gzip; nothing without a listener or
below the threshold; the same numbers either way."""

from __future__ import annotations

import gzip
import os

import pytest

from evaltool import evaluate
from evaltool.errors import ParseError
from evaltool.io import columnar, kinds
from evaltool.io.progress import PROGRESS_MIN_BYTES, REPORT_STEPS, open_counted, progress_to
from evaltool.io.stream import iter_run_chunks

QUERIES, DEPTH = 200, 400  # 80,000 lines, ~3 MB: a big file for these tests (see columnar_threshold)


@pytest.fixture(autouse=True)
def columnar_threshold(monkeypatch):
    """The columnar reader takes files from 2 MB on here (8 MB by default): the ~3 MB test run
    stands for a big one without taking seconds to write."""
    monkeypatch.setattr(kinds, "COLUMNAR_MIN_BYTES", 2 << 20)


def run_text(bad_line: int | None = None) -> str:
    lines = [f"q{q} Q0 d{(q * 7 + r) % 1000} {r + 1} {DEPTH - r}.25 tag" for q in range(QUERIES) for r in range(DEPTH)]
    if bad_line is not None:
        lines[bad_line] = "q1 Q0 broken"
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    folder = tmp_path_factory.mktemp("progress")
    (folder / "qrels").write_text("".join(f"q{q} 0 d{q % 1000} 1\n" for q in range(QUERIES)))
    (folder / "run").write_text(run_text())
    (folder / "run.gz").write_bytes(gzip.compress((folder / "run").read_bytes(), compresslevel=1))
    assert os.path.getsize(folder / "run") > 2 << 20
    return folder


def follow(work, min_bytes=1):
    """Events reported while ``work()`` runs: (path, done, total, finished)."""
    events = []
    with progress_to(lambda *event: events.append(event), min_bytes=min_bytes):
        value = work()
    return value, events


def assert_one_whole_pass(events, path):
    assert events and {e[0] for e in events} == {str(path)}
    size = os.path.getsize(path)
    assert all(total == size for _, _, total, _ in events)
    done = [e[1] for e in events]
    assert done == sorted(done) and 0 < done[0] and done[-1] == size
    assert [e[3] for e in events] == [False] * (len(events) - 1) + [True]  # finished once, last


def test_a_long_read_reports_in_steps_of_half_a_per_cent(big):
    def read_in_small_pieces():
        with open_counted(big / "run") as handle:
            while handle.read(1 << 12):
                pass

    _, events = follow(read_in_small_pieces)
    assert_one_whole_pass(events, big / "run")
    # a call per 1 MB buffer filled (the file is ~3 MB), never more than one per half per cent
    assert 3 <= len(events) <= REPORT_STEPS + 1


@pytest.mark.parametrize("name", ["run", "run.gz"])
def test_the_columnar_reader_reports_bytes_read_of_the_size_on_disk(big, name):
    run, events = follow(lambda: columnar.read_run(big / name))
    assert run is not None and len(run) == QUERIES * DEPTH  # the columnar reader did read it
    assert_one_whole_pass(events, big / name)


@pytest.mark.parametrize("name", ["run", "run.gz"])
def test_stream_reports_bytes_read_of_the_size_on_disk(big, name):
    chunks, events = follow(lambda: list(iter_run_chunks(big / name, chunk_rows=10_000)))
    assert sum(len(c) for c in chunks) == QUERIES * DEPTH
    assert_one_whole_pass(events, big / name)


def test_nothing_is_reported_below_the_threshold_or_without_a_listener(big):
    _, events = follow(lambda: columnar.read_run(big / "run"), min_bytes=os.path.getsize(big / "run") + 1)
    assert events == []
    assert PROGRESS_MIN_BYTES == 100 << 20  # the documented default: about two million MS MARCO lines
    # a gzip file counts four times its size (text compresses about that much)
    compressed = os.path.getsize(big / "run.gz")
    _, events = follow(lambda: columnar.read_run(big / "run.gz"), min_bytes=compressed * 4)
    assert events and events[-1][3]


@pytest.mark.parametrize("stream", [False, True])
def test_the_numbers_are_the_same_with_progress_followed(big, stream):
    plain = evaluate(big / "qrels", big / "run", ["map", "P.10"], per_query=True, stream=stream)
    followed, events = follow(lambda: evaluate(big / "qrels", big / "run", ["map", "P.10"], per_query=True,
                                               stream=stream))
    assert events and followed.per_query == plain.per_query and followed.summary == plain.summary


def test_a_failed_read_still_finishes_its_progress(tmp_path):
    """The listener hears the end (and the command line clears its line) before the error is reported."""
    path = tmp_path / "bad.run"
    path.write_text(run_text(bad_line=QUERIES * DEPTH - 10))
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\n")
    for stream in (False, True):
        events = []
        with pytest.raises(ParseError, match="bad.run:79991"), progress_to(lambda *event: events.append(event),
                                                                           min_bytes=1):
            evaluate(qrels, path, ["map"], stream=stream)
        assert events and events[-1][3]


def test_several_runs_read_in_threads_report_each_file(big, monkeypatch):
    from evaltool import Evaluator

    monkeypatch.setattr(kinds, "MANY_COLUMNAR_BYTES", 0)  # pyarrow reads both, as when the runs are big together
    evaluator = Evaluator(str(big / "qrels"), ["P.10"], jobs=2)
    results, events = follow(lambda: evaluator.evaluate_many([str(big / "run"), str(big / "run.gz")]))
    assert [r.summary for r in results] == [evaluate(big / "qrels", big / name, ["P.10"]).summary
                                            for name in ("run", "run.gz")]
    for name in ("run", "run.gz"):
        assert_one_whole_pass([e for e in events if e[0] == str(big / name)], big / name)
