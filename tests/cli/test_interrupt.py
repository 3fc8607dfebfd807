"""Ctrl-C exits 130 with one line on stderr in every command, even during imports (issue 10 B3).

Each case runs ``python -X importtime -m evaltool ...`` in a subprocess and sends it SIGINT
at a known moment: when an import named in the case has just finished (``-X importtime``
reports each import on stderr as it completes, so the imports after it are under way),
or once the command is blocked reading a FIFO that the test holds open without writing,
or once ``bench`` has started sending queries to a backend that hangs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.helpers import query, write_queries

ROOT = Path(__file__).resolve().parents[2]
QRELS = str(ROOT / "data" / "qrels.txt")
RUN = str(ROOT / "data" / "run.txt")
WAIT_SECONDS = 60  # the most a case waits for its moment (a busy machine), then it fails


def start(args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-X", "importtime", "-m", "evaltool", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def collect(stream, lines: list, seen: threading.Event, marker: str | None) -> None:
    for line in stream:
        lines.append(line)
        if marker and marker in line:
            seen.set()


def interrupt_when(process, stream_name: str, marker: str | None, ready=None):
    """SIGINT once ``marker`` shows on the stream (or ``ready()`` holds); (exit code, stderr lines, stdout lines)."""
    out, err = [], []
    seen = threading.Event()
    readers = [threading.Thread(target=collect, args=(process.stdout, out, seen,
                                                      marker if stream_name == "stdout" else None)),
               threading.Thread(target=collect, args=(process.stderr, err, seen,
                                                      marker if stream_name == "stderr" else None))]
    for reader in readers:
        reader.start()
    try:
        end = time.monotonic() + WAIT_SECONDS
        while not (seen.is_set() if ready is None else ready()):
            assert process.poll() is None, f"finished before its moment: {''.join(err)}"
            assert time.monotonic() < end, "the moment never came"
            time.sleep(0.005)
        process.send_signal(signal.SIGINT)
        code = process.wait(WAIT_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for reader in readers:
            reader.join(5)
    return code, [line for line in err if not line.startswith("import time:")], out


def fifo_opened_by_reader(path: str, held: list):
    """``ready()`` for a FIFO: true once the command has opened it (the test then holds the writing end)."""
    def ready() -> bool:
        if held:
            return True
        try:
            held.append(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # ENXIO: no reader yet
            return False
        time.sleep(0.2)  # let it block in read()
        return True
    return ready


@pytest.mark.parametrize("args, marker", [
    ([QRELS, RUN], "click"),  # Ctrl-C while the command line itself is imported
    ([QRELS, RUN], "numpy"),  # while eval imports its libraries
    (["compare", QRELS, RUN, RUN], "numpy"),
    (["check", QRELS, QRELS, RUN], "evaltool.cli"),
], ids=["eval-starting", "eval-imports", "compare-imports", "check-imports"])
def test_ctrl_c_during_imports_exits_130_with_one_line(tmp_path, args, marker):
    code, err, _ = interrupt_when(start(args, tmp_path), "stderr", marker)
    assert (code, err) == (130, ["evaltool: interrupted\n"])


@pytest.mark.parametrize("command", [[], ["compare"], ["check", "REFERENCE"]], ids=["eval", "compare", "check"])
def test_ctrl_c_while_reading_exits_130_with_one_line(tmp_path, command):
    fifo = str(tmp_path / "run.fifo")
    os.mkfifo(fifo)
    reference = tmp_path / "reference.json"
    reference.write_text(json.dumps({"summary": {"P_5": 0.5}}))
    args = [str(reference) if a == "REFERENCE" else a for a in command] + [QRELS, fifo]
    if command == ["compare"]:
        args.append(RUN)
    held: list[int] = []
    try:
        code, err, _ = interrupt_when(start(args, tmp_path), "stderr", None, fifo_opened_by_reader(fifo, held))
    finally:
        for handle in held:
            os.close(handle)
    assert (code, err) == (130, ["evaltool: interrupted\n"])


def test_ctrl_c_during_a_benchmark_exits_130_with_one_line(tmp_path):
    queries = write_queries(tmp_path / "q.json", [query(i, f"q{i}", behaviour="hang") for i in range(1, 4)])
    process = start(["bench", queries, "--backend", "tests.support.helpers:fake_search", "--out",
                     str(tmp_path / "out"), "--timeout", "30"], ROOT)
    code, err, out = interrupt_when(process, "stdout", "Starting benchmark execution")
    assert code == 130
    assert len(err) == 1 and err[0].startswith("evaltool: interrupted (SIGINT) after 0 of 3 queries; "), err


def test_a_ctrl_c_python_would_drop_in_a_weakref_callback_still_interrupts():
    """importlib's module-lock callbacks run while modules load: a KeyboardInterrupt raised in
    one is "ignored" by Python, and the command went on (seen under load in the cases above)."""
    child = """
import sys, time, weakref
from evaltool.__main__ import interrupt_again
sys.unraisablehook = interrupt_again
class Lock: pass
lock = Lock()
def callback(ref): raise KeyboardInterrupt
ref = weakref.ref(lock, callback)
try:
    del lock
    end = time.monotonic() + 30  # the interruption comes a millisecond later, or later on a busy machine
    while time.monotonic() < end: pass
    print("went on")
except KeyboardInterrupt:
    print("interrupted")
"""
    done = subprocess.run([sys.executable, "-c", child], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=WAIT_SECONDS)
    assert (done.stdout, done.stderr) == ("interrupted\n", "")


def test_an_ignored_sigint_stays_ignored(tmp_path):
    """A background job of a shell without job control starts with SIGINT ignored; so does
    evaltool's whole run then, as any Python program's (the entry point keeps its hands off)."""
    fifo = str(tmp_path / "run.fifo")
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "evaltool", QRELS, fifo, "-m", "num_ret"], cwd=tmp_path,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    held: list[int] = []
    ready = fifo_opened_by_reader(fifo, held)
    end = time.monotonic() + WAIT_SECONDS
    while not ready():
        assert process.poll() is None and time.monotonic() < end
        time.sleep(0.005)
    process.send_signal(signal.SIGINT)
    time.sleep(0.2)
    assert process.poll() is None  # still reading
    os.write(held[0], Path(RUN).read_bytes())
    os.close(held[0])
    out, err = process.communicate(timeout=WAIT_SECONDS)
    assert process.returncode == 0, err
    assert out.split("\t")[0].strip() == "num_ret"
