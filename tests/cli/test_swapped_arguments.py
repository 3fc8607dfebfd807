"""``evaltool RUN QRELS``: the arguments given the wrong way round are named as such, not as a
qrels line with the wrong number of fields."""

from __future__ import annotations

import gzip

import pytest

from tests.support.helpers import assert_fails, invoke, write

RUN = "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\n"


@pytest.fixture
def files(tmp_path):
    return write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)


@pytest.mark.parametrize("command", [[], ["compare"]])
def test_run_then_qrels_says_the_arguments_look_swapped(tmp_path, files, command):
    qrels, run = files
    runs = [qrels, write(tmp_path / "qrels2.txt", QRELS)] if command else [qrels]
    result = invoke(*command, run, *runs)
    assert_fails(result, f"{run}:1: found 'q1 Q0 d1 1 2.5 bm25'", "the arguments look swapped",
                 "give the qrels first, then the run")


def test_a_compressed_or_large_run_given_as_qrels_says_so_too(tmp_path, files):
    qrels, _ = files
    zipped = tmp_path / "run.txt.gz"
    zipped.write_bytes(gzip.compress(RUN.encode()))
    assert_fails(invoke(zipped, qrels), "the arguments look swapped")
    big = write(tmp_path / "big.txt", "".join(f"q{i} Q0 d{j} {j + 1} {10 - j}.5 tag\n" for i in range(3000)
                                              for j in range(10)))
    assert_fails(invoke(big, qrels), "the arguments look swapped")


def test_a_qrels_line_that_is_not_a_run_line_is_not_called_swapped(tmp_path, files):
    _, run = files
    for text in ("q1 0 d1 1 extra\n", "q1 Q0 d1 x 2.5 bm25\n", "q1 0 d1\n"):
        result = invoke(write(tmp_path / "qrels.bad", text), run)
        assert_fails(result, "expected 4 fields")
        assert "swapped" not in result.stderr
