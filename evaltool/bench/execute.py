"""Sending the queries: bounded concurrency, a time budget per query, retries.

Every query has ``timeout`` seconds for everything: each attempt (connecting, reading
the whole answer, parsing it, cleaning it down to ``limit`` ids) and the pauses between
attempts. When the time is up the attempt in flight is cancelled (an HTTP connection is
closed) and the query fails as ``timeout``; a timeout is final.

A failure the backend calls transient is retried up to ``retries`` times. The pause
before a retry is the answer's ``Retry-After`` when it gave one, else a jittered
exponential backoff: about 0.1 s, 0.2 s, 0.4 s... (each drawn between half and all of
that, at most 5 s), so that many clients throttled at once do not return in step. A
pause that would not end within the time left is not taken: the query fails at once
with the last failure (its HTTP status, say), not as a timeout. At most ``concurrency``
queries are in flight (a semaphore). Nothing a query does can stop the run: its error
is recorded in its :class:`Outcome`.

Ctrl-C (SIGINT) or SIGTERM cancels the queries in flight and raises :class:`Interrupted`;
every finished query has already been handed to ``on_outcome`` (the checkpoint). Nothing
the run leaves behind holds the exit up: a sync Python backend and asyncio's blocking
helpers (a DNS lookup) run in daemon threads that nobody waits for.
"""

from __future__ import annotations

import asyncio
import random
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from evaltool.bench.backends import Backend, Stopwatch, normalize
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


class GaveUp(Exception):
    """A transient failure whose retry could not happen within the query's time."""

    def __init__(self, last: BaseException, reason: str):
        super().__init__(f"{describe(last)} ({reason})")
        self.last = last


def describe(exc: BaseException) -> str:
    """``Type: message`` of a failure, as the report shows it (always writable as UTF-8)."""
    if isinstance(exc, GaveUp):
        return str(exc)
    text = str(exc).strip().encode("utf-8", "backslashreplace").decode("utf-8")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def backoff(attempt: int) -> float:
    """The pause after failed attempt number ``attempt`` (1, 2...) without a Retry-After: jittered.

    >>> all(0.05 <= backoff(1) <= 0.1 and 0.2 <= backoff(3) <= 0.4 and 2.5 <= backoff(12) <= 5 for _ in range(99))
    True
    """
    ceiling = min(BACKOFF_SECONDS * 2 ** (attempt - 1), BACKOFF_MAX_SECONDS)
    return random.uniform(ceiling / 2, ceiling)


async def run_one(backend: Backend, query: BenchQuery, limit: int, timeout: float, retries: int) -> Outcome:
    """One query, start to finish: its ranking, or the error that ended it.

    The time budget (``timeout``) counts from the start, and so does a failed query's
    time; an answered query's time is its latency, counted from its first request's
    send (:class:`~evaltool.bench.backends.Stopwatch`).
    """
    start = time.perf_counter()
    watch = Stopwatch()
    attempts = 0
    status = None  # HTTP status of the last answer that failed with one

    def left() -> float:
        return timeout - (time.perf_counter() - start)

    async def attempt_until_done():
        nonlocal attempts, status
        while True:
            attempts += 1
            try:
                retrieved = normalize(await backend.search(query, limit, max(left(), 0.001), watch), limit)
            except Exception as exc:
                status = getattr(exc, "status", status)
                if attempts > retries or not backend.is_transient(exc):
                    raise
                asked = getattr(exc, "retry_after", None)
                pause = backoff(attempts) if asked is None else asked
                if pause >= left():
                    why = f"Retry-After {asked:g} s" if asked is not None else f"a retry in {pause:.2f} s"
                    raise GaveUp(exc, f"gave up: {why} would end after the --timeout") from None
                await asyncio.sleep(pause)
                continue
            if left() < 0:  # the answer came, but parsing or cleaning it used up the time
                raise TimeoutError
            return retrieved

    error = None
    try:
        retrieved = await asyncio.wait_for(attempt_until_done(), timeout)
    except Exception as exc:
        retrieved = None
        timed_out = isinstance(exc, (TimeoutError, asyncio.TimeoutError)) or backend.is_timeout(exc)
        error = TIMEOUT if timed_out else describe(exc)
    redirects = watch.redirects or None
    if retrieved is None:  # how long the query had before it gave up, on the --timeout's clock
        elapsed = round((time.perf_counter() - start) * 1000, 3)
        return Outcome(query.qid, [], None, error, elapsed, attempts, http_status=status, redirects=redirects)
    return Outcome(query.qid, retrieved.ids, retrieved.scores, None, watch.elapsed_ms(since=start), attempts,
                   retrieved.duplicates, redirects=redirects, texts=retrieved.texts)


class DaemonThreads(ThreadPoolExecutor):
    """The run's default executor (asyncio's ``getaddrinfo`` runs there): every call in a
    daemon thread of its own, and ``shutdown`` waits for none of them.

    A pool's threads are joined when the loop closes and again at exit, so a DNS lookup
    that hangs would hold an interrupted run up until the resolver gives up; abandoned
    here, it ends with the process.

    >>> DaemonThreads().submit(sum, [1, 2]).result(timeout=5)
    3
    """

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()

        def target() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # handed to whoever waits for the future
                future.set_exception(exc)

        threading.Thread(target=target, name="evaltool-bench-executor", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to wait for (see the class docstring)."""


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
    loop.set_default_executor(DaemonThreads())
    stopped_by = []

    def stop(number: int) -> None:
        stopped_by.append(number)
        main.cancel()

    async def one(query: BenchQuery) -> None:
        async with gate:
            outcome = await run_one(backend, query, limit, timeout, retries)
        on_outcome(query, outcome)

    previous = _on_stop_signals(loop, stop)
    tasks = []
    try:
        await backend.open()  # before any query's clock starts
        tasks = [asyncio.create_task(one(query)) for query in queries]
        await asyncio.gather(*tasks)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise Interrupted(stopped_by[0] if stopped_by else signal.SIGINT) from None
    finally:
        _restore_signals(loop, previous)
        await backend.close()


def run_queries(backend: Backend, queries: list[BenchQuery], *, limit: int, timeout: float, retries: int,
                concurrency: int, on_outcome: Callable[[BenchQuery, Outcome], None]) -> None:
    """Run ``queries``; ``on_outcome(query, outcome)`` is called as each one finishes, in the caller's thread."""
    work = None
    try:
        loop = _new_loop()
        try:
            asyncio.set_event_loop(loop)
            work = _run_all(backend, queries, limit, timeout, retries, concurrency, on_outcome)
            loop.run_until_complete(work)
        finally:
            _close(loop)
    except KeyboardInterrupt:
        if work is not None:
            work.close()  # a Ctrl-C before the loop started it: no "never awaited" warning at exit
        raise Interrupted(signal.SIGINT) from None


def _new_loop() -> asyncio.AbstractEventLoop:
    """An event loop built with SIGINT and SIGTERM held back (in the main thread, where they land).

    A Ctrl-C landing inside the loop's constructor leaves half an object whose finaliser fails at exit
    with a traceback ("... has no attribute '_signal_handlers'"); held back, the signal arrives the moment
    the loop is whole and interrupts as anywhere else.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        return asyncio.new_event_loop()
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        return asyncio.new_event_loop()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """What ``asyncio.run`` does when its coroutine ends: cancel what is left, end async generators and the
    default executor, close the loop."""
    try:
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()
