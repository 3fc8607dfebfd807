"""evaltool pool: Depth@k equal to trectools' pool on DL19 runs; RRF by hand; judged pairs left out."""

from __future__ import annotations

import pytest

from tests.support.helpers import assert_fails, invoke, require_shared, write

pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword")  # inside trectools, with pandas 3

DL19_RUNS = ("BM25.trec_results_dl19.txt", "SPLADE_P_P_ENSEMBLE_DISTIL.trec_results_dl19.txt",
             "D_BERT_KD_TASB.trec_results_dl19.txt")


def _pairs(text: str) -> list[tuple[str, str]]:
    return [tuple(line.split()) for line in text.splitlines()]


@pytest.mark.parametrize("depth", [10, 3])
def test_depth_pool_equals_trectools_on_three_dl19_runs(tmp_path, depth):
    """trectools (its TrecPoolMaker 'topX' strategy) is the oracle: the union of each run's top k."""
    import trectools

    runs = [str(require_shared("realdata", "runs", name)) for name in DL19_RUNS]
    result = invoke("pool", *runs, "--depth", depth, "--output", tmp_path / "pool.txt")
    assert result.exit_code == 0, result.stderr
    ours = _pairs((tmp_path / "pool.txt").read_text())
    oracle = trectools.TrecPoolMaker().make_pool([trectools.TrecRun(r) for r in runs], strategy="topX", topX=depth)
    expected = sorted((str(q), doc) for q, docs in oracle.pool.items() for doc in docs)
    assert ours == expected  # the same pairs, and ours sorted by query then document
    assert len(ours) == (878 if depth == 10 else sum(len(d) for d in oracle.pool.values()))
    assert f"{len(ours)} pairs of 43 queries (Depth@{depth})" in result.stderr


def test_rrf_pool_by_hand_and_judged_pairs_left_out(tmp_path):
    # run a: q1 d1 d2 d3; run b: q1 d3 d4 d1 (scores give the order)
    a = write(tmp_path / "a.txt", "q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq1 Q0 d3 3 1 a\nq2 Q0 x 1 1 a\n")
    b = write(tmp_path / "b.txt", "q1 Q0 d3 1 9 b\nq1 Q0 d4 2 8 b\nq1 Q0 d1 3 7 b\n")
    # RRF: d1 1/61 + 1/63, d3 1/63 + 1/61 (tied: id order), d2 1/62, d4 1/62
    result = invoke("pool", a, b, "--method", "rrf", "--size", "2")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "q1 d1\nq1 d3\nq2 x\n"
    judged = write(tmp_path / "judged.txt", "q1 0 d1 1\nq2 0 x 0\n")
    result = invoke("pool", a, b, "--method", "rrf", "--size", "2", "--qrels", judged)
    assert result.stdout == "q1 d2\nq1 d3\n"  # the two best not judged yet: d3, then d2 / d4 tied -> d2
    assert "2 judged already, left out" in result.stderr
    result = invoke("pool", a, b, "--depth", "1", "--qrels", judged)
    assert result.stdout == "q1 d3\n"


@pytest.mark.parametrize("args, message", [
    (["--method", "rrf"], "--method rrf needs --size N"),
    (["--size", "3"], "--size goes with --method rrf"),
    (["--task", "t"], "--task NAME and --set SET go together"),
])
def test_pool_options_that_do_not_go_together(tmp_path, args, message):
    run = write(tmp_path / "r.txt", "q1 Q0 d1 1 3 a\n")
    assert_fails(invoke("pool", run, *args), message)


def test_a_bad_run_line_names_its_file_and_line(tmp_path):
    run = write(tmp_path / "r.txt", "q1 Q0 d1 1 3 a\nq1 Q0 d2 x\n")
    assert_fails(invoke("pool", run), f"{run}:2")
