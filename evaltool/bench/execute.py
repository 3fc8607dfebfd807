"""Sending the queries: bounded concurrency, a time budget per query, retries.

Every query runs under ``asyncio.wait_for(..., timeout)``: the budget covers all its
attempts and the pauses between them, so a timeout is final (never retried). Failures
the backend calls transient are retried up to ``retries`` times, after 0.1 s, 0.2 s,
0.4 s... (at most 5 s). At most ``concurrency`` queries are in flight (a semaphore).
Nothing a query does can stop the run: its error is recorded in its :class:`Outcome`.

Ctrl-C (SIGINT) or SIGTERM cancels the queries in flight and raises :class:`Interrupted`;
every finished query has already been handed to ``on_outcome`` (the checkpoint).
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable

from evaltool.bench.backends import Backend, normalize
from evaltool.bench.checkpoint import Outcome
from evaltool.bench.queries import BenchQuery

BACKOFF_SECONDS = 0.1
BACKOFF_MAX_SECONDS = 5.0
TIMEOUT = "timeout"


class Interrupted(Exception):
    """The run was stopped by a signal; finished queries are in the checkpoint."""

    def __init__(self, signum: int):
        self.signum = signum
        self.signal_name = signal.Signals(signum).name
        super().__init__(self.signal_name)


def describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def run_one(backend: Backend, query: BenchQuery, limit: int, timeout: float, retries: int) -> Outcome:
    """One query, start to finish: its ranking, or the error that ended it."""
    start = time.perf_counter()
    attempts = 0

    async def attempt_until_done():
        nonlocal attempts
        while True:
            attempts += 1
            try:
                left = max(timeout - (time.perf_counter() - start), 0.001)
                return normalize(await backend.search(query, limit, left), limit)
            except Exception as exc:
                if attempts > retries or not backend.is_transient(exc):
                    raise
            await asyncio.sleep(min(BACKOFF_SECONDS * 2 ** (attempts - 1), BACKOFF_MAX_SECONDS))

    error = None
    try:
        retrieved = await asyncio.wait_for(attempt_until_done(), timeout)
    except Exception as exc:
        retrieved = None
        timed_out = isinstance(exc, (TimeoutError, asyncio.TimeoutError)) or backend.is_timeout(exc)
        error = TIMEOUT if timed_out else describe(exc)
    elapsed = round((time.perf_counter() - start) * 1000, 3)
    if retrieved is None:
        return Outcome(query.qid, [], None, error, elapsed, attempts)
    return Outcome(query.qid, retrieved.ids, retrieved.scores, None, elapsed, attempts, retrieved.duplicates)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _on_stop_signals(loop, handler) -> dict:
    """Route SIGINT and SIGTERM to ``handler``; the handlers they had, to put back."""
    previous = {}
    for number in STOP_SIGNALS:
        try:
            before = signal.getsignal(number)
            loop.add_signal_handler(number, handler, number)
            previous[number] = before
        except (NotImplementedError, RuntimeError, ValueError):
            pass  # not the main thread, or no signals here: Ctrl-C still raises KeyboardInterrupt
    return previous


def _restore_signals(loop, previous: dict) -> None:
    for number, before in previous.items():
        loop.remove_signal_handler(number)
        signal.signal(number, before if before is not None else signal.SIG_DFL)


async def _run_all(backend, queries, limit, timeout, retries, concurrency, on_outcome) -> None:
    gate = asyncio.Semaphore(concurrency)
    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    stopped_by = []

    def stop(number: int) -> None:
        stopped_by.append(number)
        main.cancel()

    async def one(query: BenchQuery) -> None:
        async with gate:
            outcome = await run_one(backend, query, limit, timeout, retries)
        on_outcome(query, outcome)

    previous = _on_stop_signals(loop, stop)
    tasks = [asyncio.create_task(one(query)) for query in queries]
    try:
        await asyncio.gather(*tasks)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise Interrupted(stopped_by[0] if stopped_by else signal.SIGINT) from None
    finally:
        _restore_signals(loop, previous)


def run_queries(backend: Backend, queries: list[BenchQuery], *, limit: int, timeout: float, retries: int,
                concurrency: int, on_outcome: Callable[[BenchQuery, Outcome], None]) -> None:
    """Run ``queries``; ``on_outcome(query, outcome)`` is called as each one finishes, in the caller's thread."""
    try:
        asyncio.run(_run_all(backend, queries, limit, timeout, retries, concurrency, on_outcome))
    except KeyboardInterrupt:
        raise Interrupted(signal.SIGINT) from None
