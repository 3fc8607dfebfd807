"""Checkpoint and --resume: a run killed midway by a signal loses nothing it finished,
and --resume finishes it with every query evaluated exactly once.

The subprocess tests run `python -m evaltool bench` with tests.support.helpers:logged_search,
which appends each query it receives to a call log and takes BENCH_DELAY seconds.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaltool.bench.checkpoint import Checkpoint
from tests.support.helpers import ROOT, bench, only_report, query, rescore, write_queries

LOGGED = "tests.support.helpers:logged_search"
N = 12


def result_lines(checkpoint: Path) -> list[dict]:
    if not checkpoint.exists():
        return []
    lines = checkpoint.read_text().split("\n")[1:]
    return [json.loads(line) for line in lines if line]


def start(tmp_path, *extra, log="calls.log"):
    env = dict(os.environ, BENCH_CALL_LOG=str(tmp_path / log), BENCH_DELAY="0.15")
    args = [sys.executable, "-m", "evaltool", "bench", str(tmp_path / "q.json"), "--backend", LOGGED,
            "--out", str(tmp_path / "out"), "--concurrency", "2", *extra]
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_killed_run_resumes_with_every_query_evaluated_once(tmp_path, signum):
    write_queries(tmp_path / "q.json", [query(f"q{i}", f"query {i}") for i in range(N)])
    checkpoint = tmp_path / "out" / "q.checkpoint.jsonl"
    process = start(tmp_path)
    deadline = time.monotonic() + 30
    while len(result_lines(checkpoint)) < 4 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    process.send_signal(signum)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 128 + signum, err
    done = result_lines(checkpoint)
    assert 4 <= len(done) < N, "the signal came midway"
    assert f"interrupted ({signal.Signals(signum).name}) after {len(done)} of {N} queries" in err
    assert "--resume" in err and "Traceback" not in err
    assert not list((tmp_path / "out").glob("baseline_*")), "no report for an unfinished run"
    first_calls = (tmp_path / "calls.log").read_text().split("\n")[:-1]

    resumed = start(tmp_path, "--resume", log="calls2.log")
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    assert f"Resuming: {len(done)} of {N} queries are done ({checkpoint}); {N - len(done)} to go" in out
    second_calls = (tmp_path / "calls2.log").read_text().split("\n")[:-1]
    finished_first = {record["qid"] for record in done}
    # the second run sends exactly the queries the first did not finish, each once
    assert sorted(second_calls) == sorted(f"query {i}" for i in range(N) if f"q{i}" not in finished_first)
    assert set(first_calls) >= {f"query {q[1:]}" for q in finished_first}

    report, _ = only_report(tmp_path / "out")
    ids = [e["query_id"] for e in report["detailed_results"]]
    assert ids == [f"q{i}" for i in range(N)]
    assert report["metadata"]["resumed_queries"] == len(done) and report["metadata"]["failed_queries"] == 0
    assert not checkpoint.exists(), "the checkpoint is deleted once the report is written"
    # by hand: the backend puts rel1 first for queries ending in 0 (q0, q10), second otherwise
    rr = {e["query_id"]: e["metrics"]["mrr"] for e in report["detailed_results"]}
    assert rr == {f"q{i}": 1.0 if str(i).endswith("0") else 0.5 for i in range(N)}
    assert rescore(report)["summary"]["mrr"] == report["aggregate_metrics"]["mrr"] == (2 + 0.5 * 10) / 12


def header_line(queries_path: str, backend: str, limit: int = 10) -> str:
    digest = hashlib.sha256(Path(queries_path).read_bytes()).hexdigest()
    return json.dumps({"evaltool_checkpoint": 1, "queries_file": queries_path, "queries_sha256": digest,
                       "backend": backend, "limit": limit, "started": "2026-01-02T03:04:05Z"})


def outcome_line(qid: str, ids: list[str]) -> str:
    return json.dumps({"qid": qid, "ids": ids, "scores": None, "error": None, "execution_time_ms": 1.0,
                       "attempts": 1, "duplicates_removed": 0})


def test_a_last_line_cut_off_mid_write_is_dropped_and_its_query_rerun(tmp_path, monkeypatch):
    path = write_queries(tmp_path / "q.json", [query("a", "query 0"), query("b", "query 1"), query("c", "query 2")])
    monkeypatch.setenv("BENCH_CALL_LOG", str(tmp_path / "calls.log"))
    monkeypatch.setenv("BENCH_DELAY", "0")
    checkpoint = tmp_path / "out" / "q.checkpoint.jsonl"
    checkpoint.parent.mkdir()
    # what a run killed while writing b's line leaves: a finished, half of b's line
    checkpoint.write_text(header_line(path, LOGGED) + "\n" + outcome_line("a", ["x9", "rel1"]) + "\n"
                          + outcome_line("b", ["rel1"])[:25])
    resumed = bench(path, LOGGED, tmp_path / "out", "--resume")
    assert resumed.exit_code == 0, resumed.stderr
    # queries run concurrently, so the backend may see them in either order
    assert sorted((tmp_path / "calls.log").read_text().splitlines()) == ["query 1", "query 2"]
    report, _ = only_report(tmp_path / "out")
    assert [e["query_id"] for e in report["detailed_results"]] == ["a", "b", "c"]
    assert report["detailed_results"][0]["returned_ids"] == ["x9", "rel1"], "a comes from the checkpoint"
    assert report["metadata"]["resumed_queries"] == 1
    assert report["metadata"]["timestamp"] == "2026-01-02T03:04:05Z", "the run's start, not the resume's"


def test_a_fresh_run_refuses_to_overwrite_an_unfinished_one(tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "q ok")])
    checkpoint = tmp_path / "out" / "q.checkpoint.jsonl"
    checkpoint.parent.mkdir()
    checkpoint.write_text(header_line(path, "x:y") + "\n" + outcome_line("1", ["rel1"]) + "\n")
    result = bench(path, "tests.support.helpers:fake_search", tmp_path / "out")
    assert (result.exit_code, result.stderr) == (2, (
        f"evaltool: {checkpoint} holds an unfinished run (1 queries done, started 2026-01-02T03:04:05Z): "
        "add --resume to finish it, or --restart to discard it and start over\n"))
    resumed = bench(path, "tests.support.helpers:fake_search", tmp_path / "out", "--resume", "--limit", "5")
    assert (resumed.exit_code, resumed.stderr) == (2, (
        f"evaltool: --resume: {checkpoint} is a run with other settings (backend: 'x:y' then, "
        "'tests.support.helpers:fake_search' now; limit: 10 then, 5 now); use the same ones, or --restart to "
        "discard it and start over\n"))
    assert Checkpoint.read(str(checkpoint)).done["1"].ids == ["rel1"], "refusing leaves the checkpoint as it was"


def test_restart_discards_an_unfinished_run_even_a_damaged_one_and_says_so(tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "q ok"), query(2, "q two")])
    checkpoint = tmp_path / "out" / "q.checkpoint.jsonl"
    checkpoint.parent.mkdir()
    checkpoint.write_text(header_line(path, "x:y") + "\n" + outcome_line("1", ["x9"]) + "\n")
    both = bench(path, "tests.support.helpers:fake_search", tmp_path / "out", "--resume", "--restart")
    assert (both.exit_code, both.stderr) == (2, "evaltool: --resume and --restart: choose one (finish the "
                                                 "unfinished run, or discard it)\n")
    restarted = bench(path, "tests.support.helpers:fake_search", tmp_path / "out", "--restart")
    assert restarted.exit_code == 0, restarted.stderr
    assert f"Restarting: the unfinished run in {checkpoint} (1 query done) is discarded\n" in restarted.stdout
    report, _ = only_report(tmp_path / "out")
    assert report["metadata"]["resumed_queries"] == 0
    assert report["detailed_results"][0]["returned_ids"] == ["rel1", "x1", "rel2", "x2"], "sent again, not x9"
    assert not checkpoint.exists()
    checkpoint.write_text(header_line(path, "tests.support.helpers:fake_search") + "\n{not json\n{}\n")
    again = bench(path, "tests.support.helpers:fake_search", tmp_path / "out2", "--restart")
    assert again.exit_code == 0 and "Restarting" not in again.stdout  # another --out: nothing to discard
    damaged = bench(path, "tests.support.helpers:fake_search", tmp_path / "out", "--restart")
    assert damaged.exit_code == 0, damaged.stderr


def test_a_corrupt_line_in_the_middle_is_refused(tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "q ok"), query(2, "q two")])
    checkpoint = tmp_path / "out" / "q.checkpoint.jsonl"
    checkpoint.parent.mkdir()
    checkpoint.write_text(header_line(path, "tests.support.helpers:fake_search") + "\n{not json\n{}\n")
    result = bench(path, "tests.support.helpers:fake_search", tmp_path / "out", "--resume")
    assert (result.exit_code, result.stderr) == (2, f"evaltool: {checkpoint}:2: not a checkpoint line (corrupt "
                                                    "JSON); delete the file to start over\n")
