"""`evaltool bench` against big answers: peak memory and Ctrl-C / SIGTERM latency (issue 18).

Starts the test suite's fault-injecting server (tests/support/fault_server.py, 127.0.0.1) and runs
`python -m evaltool bench` in subprocesses against one query whose answer has N hits
(``big-2900000`` is ~108 MB):

* peak memory (the child's maximum resident set, from getrusage) with the default
  ``--max-response-bytes`` (16 MB: the answer is refused at its Content-Length) and with
  the cap raised above the answer (read, parsed as far as --limit needs, cut to --limit);
* signal latency: how long an uninterrupted run takes from its request to its exit, then
  SIGINT (Ctrl-C) and SIGTERM sent at moments spread over that time (during the transfer,
  the parse, the exit), and the time until the process has exited. A signal that came
  after the run had already ended is shown as such and left out of the worst case.

    .venv/bin/python benchmarks/bench_faults.py              # 2.9M hits (~108 MB)
    .venv/bin/python benchmarks/bench_faults.py --hits 1000000 --moments 0.2 0.6 1.0

Prints a table; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.fault_server import FaultServer, big_body  # noqa: E402

MEASURE_CHILD = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
                 "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def bench_command(folder: Path, url: str, text: str, *extra: str) -> list[str]:
    queries = folder / "q.json"
    queries.write_text(json.dumps([{"id": 1, "query": text, "category": "c", "difficulty": "easy",
                                    "relevant_ids": ["d3"]}]))
    out = folder / f"out-{time.monotonic_ns()}"
    return [sys.executable, "-m", "evaltool", "bench", str(queries), "--backend", url, "--out", str(out),
            "--response-path", "hits.*.id", "--timeout", "120", *extra]


def peak_mb(command: list[str]) -> float:
    """The peak resident memory of ``command`` in MB (run under a wrapper so that nothing else counts)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", MEASURE_CHILD, *command], capture_output=True, text=True, env=env,
                          check=True)
    return int(done.stdout.strip()) / 1024


def signal_latency(command: list[str], server: FaultServer, text: str, after: float | None,
                   signum: int = signal.SIGINT) -> tuple[float, int, bool]:
    """Send ``signum`` ``after`` seconds after the request reached the server (None: never).

    (seconds from the signal, or from the request when none is sent, until exit; exit code;
    whether the process was still running when the signal was sent).
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    seen = len(server.times[text])
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        while len(server.times[text]) == seen:
            if process.poll() is not None:
                raise RuntimeError("the bench process ended before sending its query")
            time.sleep(0.002)
        requested = server.times[text][-1]
        if after is None:
            code = process.wait(120)
            return time.monotonic() - requested, code, False
        time.sleep(max(0.0, requested + after - time.monotonic()))
        sent = time.monotonic()
        running = process.poll() is None
        process.send_signal(signum)
        code = process.wait(60)
        return time.monotonic() - sent, code, running
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hits", type=int, default=2_900_000, help="hits in the big answer (default 2.9M, ~108 MB)")
    ap.add_argument("--moments", type=float, nargs="+", default=None,
                    help="seconds after the request at which a signal is sent "
                         "(default: 10%%, 30%%, 50%%, 70%% and 90%% of an uninterrupted run)")
    ap.add_argument("--signals", nargs="+", default=["INT", "TERM"], choices=["INT", "TERM"],
                    help="signals to send (default: both)")
    args = ap.parse_args()
    text = f"big-{args.hits}"
    size = len(big_body(args.hits))
    above = str(size + 1)
    rows = []
    with FaultServer(lifetime=1800, max_requests=10_000) as server, tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        baseline = peak_mb(bench_command(folder, server.url, "ok"))
        rows.append(("peak memory, a small answer", f"{baseline:.0f} MB"))
        capped = peak_mb(bench_command(folder, server.url, text))
        refused = "refused" if size > 16 * 1024 * 1024 else "under the cap"
        rows.append((f"peak memory, {size / 1e6:.0f} MB answer, default cap ({refused})", f"{capped:.0f} MB"))
        whole = peak_mb(bench_command(folder, server.url, text, "--max-response-bytes", above))
        rows.append((f"peak memory, {size / 1e6:.0f} MB answer read and parsed", f"{whole:.0f} MB"))
        took, code, _ = signal_latency(bench_command(folder, server.url, text, "--max-response-bytes", above),
                                       server, text, None)
        rows.append((f"no signal: request to exit {code}", f"{took * 1000:.0f} ms"))
        moments = args.moments or [round(took * share, 3) for share in (0.1, 0.3, 0.5, 0.7, 0.9)]
        latencies = []
        for name in args.signals:
            signum = signal.Signals[f"SIG{name}"]
            for after in moments:
                took, code, running = signal_latency(
                    bench_command(folder, server.url, text, "--max-response-bytes", above), server, text, after,
                    signum)
                if running:
                    latencies.append(took)
                    rows.append((f"SIG{name} {after:.2f} s after the request: exit {code} after",
                                 f"{took * 1000:.0f} ms"))
                else:
                    rows.append((f"SIG{name} {after:.2f} s after the request: the run had ended (exit {code})", "-"))
        worst = f"{max(latencies) * 1000:.0f} ms" if latencies else "-"
        rows.append(("signal to exit, worst", worst))
    width = max(len(label) for label, _ in rows)
    print(f"evaltool bench against a {args.hits}-hit answer ({size} bytes); peak RSS from getrusage")
    for label, value in rows:
        print(f"  {label:<{width}}  {value:>8}")


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
