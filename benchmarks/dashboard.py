#!/usr/bin/env python3
"""Dashboard benchmark: GET /api/report over one year under concurrent clients.

    .venv/bin/python benchmarks/dashboard.py                  # 10,000 executions x 50 queries, 20 clients
    .venv/bin/python benchmarks/dashboard.py --clients 5 --seconds 10 --no-save

The history (a SQLite file in benchmarks/cache/, built once and reused) holds 10,000
executions of 50 queries with recip_rank, ndcg_cut_10 and P_5 per query: 10 suites
recorded every night for 1,000 nights (2023-04-07 .. 2025-12-31), as a CI would. The
server is ``evaltool serve`` in its own process; the clients are threads here, each with
its own keep-alive connection, asking for the comparative report of 2025 (3,650 rows)
back to back for --seconds after a warm-up. Reported: p50 / p95 / max latency and
throughput, the single-client latency, and the time of the first request, which computes
the report (later ones come from the server's cache until the history changes: a record
or a prune). Goal: p95 < 300 ms.
"""
from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
from run import git_info, machine_info  # noqa: E402

NAMES = [f"suite-{i:02d}" for i in range(10)]
NIGHTS = 1000
QUERIES = 50
LAST_NIGHT = dt.date(2025, 12, 31)
HISTORY_VERSION = 1  # bump when the generated history changes
REPORT = "/api/report?date_from=2025-01-01&date_to=2025-12-31"
GOAL_P95 = 0.300


def build_history(path: Path) -> None:
    """10 names x 1,000 nights of seeded per-query values, each execution one record()."""
    import numpy as np

    from evaltool.history import open_history, record

    rng = np.random.default_rng(20251231)
    partial = path.with_suffix(".partial")
    for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        leftover.unlink(missing_ok=True)
    history = open_history(str(partial), create=True)
    qids = [f"q{i:03d}" for i in range(QUERIES)]
    try:
        for night in range(NIGHTS):
            day = LAST_NIGHT - dt.timedelta(days=NIGHTS - 1 - night)
            for k, name in enumerate(NAMES):
                level = 0.4 + 0.04 * k + 0.05 * np.sin(night / 60)
                rr = np.clip(rng.normal(level + 0.25, 0.2, QUERIES), 0, 1)
                ndcg = np.clip(rng.normal(level, 0.15, QUERIES), 0, 1)
                p5 = np.round(np.clip(rng.normal(level - 0.05, 0.2, QUERIES), 0, 1) * 5) / 5
                per_query = {q: {"recip_rank": float(a), "ndcg_cut_10": float(b), "P_5": float(c)}
                             for q, a, b, c in zip(qids, rr, ndcg, p5)}
                summary = {"recip_rank": float(rr.mean()), "ndcg_cut_10": float(ndcg.mean()), "P_5": float(p5.mean())}
                record({"summary": summary, "per_query": per_query}, db=history, name=name,
                       at=f"{day.isoformat()}T02:{k:02d}:00Z", kind="suite", fingerprints={}, commit=None,
                       tags={"nightly": "yes"})
    finally:
        history.close()
    os.replace(partial, path)


def history_file(cache: Path) -> Path:
    path = cache / f"dashboard-history-v{HISTORY_VERSION}.sqlite"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        print(f"building {path.name}: {len(NAMES) * NIGHTS:,} executions x {QUERIES} queries ...", flush=True)
        build_history(path)
        print(f"  built in {time.perf_counter() - started:.0f} s, {path.stat().st_size / 1e6:.0f} MB", flush=True)
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Served:
    def __init__(self, db: Path):
        self.port = free_port()
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        env.pop("EVALTOOL_TOKEN", None)
        self.process = subprocess.Popen([sys.executable, "-m", "evaltool", "serve", "--db", str(db), "--port",
                                         str(self.port)], env=env, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.get(http.client.HTTPConnection("127.0.0.1", self.port, timeout=60), "/api/suites")
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"evaltool serve did not start: {self.process.stderr.read()}")
                time.sleep(0.2)

    @staticmethod
    def get(conn: http.client.HTTPConnection, path: str) -> bytes:
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise SystemExit(f"GET {path}: HTTP {response.status}: {body[:300]!r}")
        return body

    def stop(self) -> float:
        started = time.perf_counter()
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        return time.perf_counter() - started


def load(served: Served, clients: int, seconds: float) -> dict:
    """``clients`` threads asking for REPORT back to back for ``seconds``; every latency."""
    latencies: list[float] = []
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)
    stop_at = [0.0]

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=120)
        mine = []
        start.wait()
        while time.perf_counter() < stop_at[0]:
            t0 = time.perf_counter()
            served.get(conn, REPORT)
            mine.append(time.perf_counter() - t0)
        conn.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    began = time.perf_counter()
    stop_at[0] = began + seconds
    start.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    latencies.sort()
    quantile = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]  # noqa: E731
    return {"clients": clients, "seconds": round(elapsed, 2), "requests": len(latencies),
            "throughput_per_s": round(len(latencies) / elapsed, 2), "p50_ms": round(quantile(0.50) * 1000, 1),
            "p95_ms": round(quantile(0.95) * 1000, 1), "max_ms": round(latencies[-1] * 1000, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=30.0, help="length of the measured load (default 30)")
    ap.add_argument("--cache-dir", default=str(HERE / "cache"))
    ap.add_argument("--results-dir", default=str(HERE / "results"))
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)

    db = history_file(Path(args.cache_dir))
    served = Served(db)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=120)
        t0 = time.perf_counter()
        rows = len(json.loads(served.get(conn, REPORT))["rows"])  # computed: the first asker of a report
        computed = time.perf_counter() - t0
        single = []
        for _ in range(10):
            t0 = time.perf_counter()
            served.get(conn, REPORT)
            single.append(time.perf_counter() - t0)
        conn.close()
        load(served, args.clients, min(5.0, args.seconds))  # warm-up
        result = load(served, args.clients, args.seconds)
    finally:
        stop_seconds = served.stop()
    result.update(rows=rows, computed_ms=round(computed * 1000, 1),
                  single_client_median_ms=round(statistics.median(single) * 1000, 1),
                  stop_seconds=round(stop_seconds, 2), goal_p95_ms=GOAL_P95 * 1000,
                  goal="PASS" if result["p95_ms"] <= GOAL_P95 * 1000 else "FAIL")
    print(f"dashboard: GET {REPORT} ({rows:,} rows of {len(NAMES) * NIGHTS:,} executions x {QUERIES} queries), "
          f"{result['clients']} clients for {result['seconds']} s")
    print(f"  p50 {result['p50_ms']} ms  p95 {result['p95_ms']} ms  max {result['max_ms']} ms  "
          f"{result['throughput_per_s']} requests/s  (one client alone: {result['single_client_median_ms']} ms; "
          f"computing the report afresh, the first time or after a record: {result['computed_ms']} ms)  "
          f"goal p95 < {GOAL_P95 * 1000:.0f} ms: {result['goal']}; SIGTERM stop {result['stop_seconds']} s")
    if not args.no_save:
        started = dt.datetime.now(dt.timezone.utc)
        os.makedirs(args.results_dir, exist_ok=True)
        path = Path(args.results_dir) / f"dashboard-{started.strftime('%Y%m%dT%H%M%SZ')}.json"
        path.write_text(json.dumps({"dashboard": result, "machine": machine_info(), "git": git_info()}, indent=2)
                        + "\n")
        print(f"  saved {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
