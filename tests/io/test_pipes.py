"""Inputs that can be read once only: a shell's process substitution ``<(zcat run.gz)``, as
trec_eval users write it, and FIFOs. Each is read whole once and its content looked at, never
the path again (looking at a pipe's first bytes used to consume them: the run then had no lines).

The command runs under bash in a subprocess, as a user types it; the expected output is the
same command on the plain files.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import threading

import pytest

from tests.support.helpers import ROOT

QRELS, RUN = ROOT / "data" / "qrels.txt", ROOT / "data" / "run.txt"
QUERIES, RESULTS = ROOT / "data" / "rag" / "queries.jsonl", ROOT / "data" / "rag" / "results.jsonl"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="process substitution needs bash")


def evaltool(command: str, cwd) -> subprocess.CompletedProcess:
    """``evaltool COMMAND`` under bash (``<(...)`` works there), as ``python -m evaltool``."""
    line = f"{shlex.quote(sys.executable)} -m evaltool {command}"
    return subprocess.run(["bash", "-c", line], cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)


def same_as_files(piped: str, plain: str, cwd, shown=lambda out: out) -> str:
    """Run both; the same exit code 0 and output (``shown``: the part that names no file)."""
    got, expected = evaltool(piped, cwd), evaltool(plain, cwd)
    assert expected.returncode == 0, expected.stderr
    assert got.returncode == 0, got.stderr
    assert shown(got.stdout) == shown(expected.stdout)
    return got.stderr


@pytest.mark.parametrize("qrels, run", [
    (f"{QRELS}", f"<(cat {RUN})"),                          # the run through a pipe
    (f"<(cat {QRELS})", f"{RUN}"),                          # the qrels
    (f"<(cat {QRELS})", f"<(gzip -c {RUN})"),               # both, one compressed
    (f"{QRELS}", f"--run-format trec <(cat {RUN})"),        # a format given: the same reader
], ids=["run", "qrels", "both-gzip", "run-format"])
def test_trec_files_through_pipes(tmp_path, qrels, run):
    same_as_files(f"{qrels} {run} -q -m map -m ndcg_cut.10 -m num_ret",
                  f"{QRELS} {RUN} -q -m map -m ndcg_cut.10 -m num_ret", tmp_path)


def test_a_warning_names_the_pipe_as_the_command_line_did(tmp_path):
    done = evaltool(f"{QRELS} <(cat {RUN}) -m map", tmp_path)
    assert done.returncode == 0 and "no results in /dev/fd/" in done.stderr, done.stderr


def test_jsonl_queries_and_results_through_pipes(tmp_path):
    same_as_files(f"<(cat {QUERIES}) <(gzip -c {RESULTS}) -q -m recip_rank -m P.5 -o json",
                  f"{QUERIES} {RESULTS} -q -m recip_rank -m P.5 -o json", tmp_path,
                  shown=lambda out: {k: v for k, v in json.loads(out).items() if k != "meta"})
    assert json.loads(evaltool(f"<(cat {QUERIES}) <(cat {RESULTS}) -q -o json", tmp_path).stdout)["per_query"]


def test_many_runs_with_a_pipe_among_files_large_enough_for_the_columnar_reader(tmp_path):
    # together over 8 MB: every TREC file goes to the columnar reader, which must leave the pipe alone
    big = tmp_path / "big.run"
    with open(big, "w") as out:
        for q in ("q1", "q2", "q3", "q4"):
            out.writelines(f"{q} Q0 filler-document-{i:07d} {i + 1} {-i / 7:.6f} big\n" for i in range(60_000))
    assert big.stat().st_size > 8 << 20
    same_as_files(f"{QRELS} {big} <(cat {RUN}) -q -m map -m num_ret -o csv",
                  f"{QRELS} {big} {RUN} -q -m map -m num_ret -o csv", tmp_path,
                  shown=lambda out: [line.split(",")[1:] for line in out.splitlines()])  # all but the path


def test_a_fifo_is_read_once(tmp_path):
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as handle:  # blocks until the command opens it; a second open would hang
            handle.write(RUN.read_bytes())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    same_as_files(f"{QRELS} {fifo} -q -m map", f"{QRELS} {RUN} -q -m map", tmp_path)
    writer.join(5)
    assert not writer.is_alive()


def test_stream_refuses_a_pipe_with_what_to_do(tmp_path):
    done = evaltool(f"{QRELS} <(cat {RUN}) --stream", tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "evaltool: --stream reads a regular file; /dev/fd/63 is a pipe or device (without --stream it is read whole)")


def test_a_json_array_through_a_pipe_or_stdin_gets_the_message_a_file_gets(tmp_path):
    array = tmp_path / "results.json"
    array.write_text('[{"qid": "q1", "docid": "d1", "score": 1}]\n')
    expected = "; expected a JSONL results file (one JSON object per line) or a TREC run, not a JSON array"
    for command, name in ((f"{QRELS} {array}", f"{array}:1"), (f"{QRELS} <(cat {array})", "/dev/fd/63:1"),
                          (f"{QRELS} - < {array}", "<stdin>:1")):
        done = evaltool(command, tmp_path)
        assert (done.returncode, done.stderr) == (2, f"evaltool: {name}{expected}\n"), command
