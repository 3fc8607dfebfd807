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
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from evaltool.bench.backends import Backend, Stopwatch, normalize
from evaltool.bench.checkpoint import Outcome
from evaltool.bench.queries import BenchQuery

BACKOFF_SECONDS = 0.1
BACKOFF_MAX_SECONDS = 5.0
TIMEOUT = "timeout"
T = TypeVar("T")


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


class Tries:
    """How many attempts a call made, and the HTTP status of its last failed answer (if any)."""

    def __init__(self):
        self.attempts = 0
        self.status: int | None = None


async def call_with_retries(
    attempt: Callable[[float], Awaitable[T]],
    *,
    is_transient: Callable[[BaseException], bool],
    timeout: float,
    retries: int,
    tries: Tries | None = None,
) -> T:
    """``await attempt(seconds_left)`` until it returns, retrying what ``is_transient`` calls transient.

    The rules of the module docstring: ``timeout`` seconds for everything, retries after
    the answer's ``Retry-After`` or a jittered backoff, a pause that would outlast the time
    left not taken (:class:`GaveUp`). Raises the last failure, ``TimeoutError`` when the
    time is up; ``tries`` (if given) counts the attempts as they are made.

    >>> calls = []
    >>> async def flaky(left):
    ...     calls.append(left)
    ...     if len(calls) < 2:
    ...         raise ConnectionError("reset")
    ...     return "answer"
    >>> asyncio.run(call_with_retries(flaky, is_transient=lambda e: True, timeout=5, retries=2)), len(calls)
    ('answer', 2)
    """
    start = time.perf_counter()
    tries = tries if tries is not None else Tries()

    def left() -> float:
        return timeout - (time.perf_counter() - start)

    async def attempt_until_done():
        while True:
            tries.attempts += 1
            try:
                value = await attempt(max(left(), 0.001))
            except Exception as exc:
                tries.status = getattr(exc, "status", tries.status)
                if tries.attempts > retries or not is_transient(exc):
                    raise
                asked = getattr(exc, "retry_after", None)
                pause = backoff(tries.attempts) if asked is None else asked
                if pause >= left():
                    why = f"Retry-After {asked:g} s" if asked is not None else f"a retry in {pause:.2f} s"
                    raise GaveUp(exc, f"gave up: {why} would end after the --timeout") from None
                await asyncio.sleep(pause)
                continue
            if left() < 0:  # the answer came, but reading it used up the time
                raise TimeoutError
            return value

    return await asyncio.wait_for(attempt_until_done(), timeout)


async def run_one(backend: Backend, query: BenchQuery, limit: int, timeout: float, retries: int) -> Outcome:
    """One query, start to finish: its ranking, or the error that ended it.

    The time budget (``timeout``) counts from the start, and so does a failed query's
    time; an answered query's time is its latency, counted from its first request's
    send (:class:`~evaltool.bench.backends.Stopwatch`).
    """
    start = time.perf_counter()
    watch = Stopwatch()
    tries = Tries()

    async def attempt(left: float):
        return normalize(await backend.search(query, limit, left, watch), limit)

    error = None
    try:
        retrieved = await call_with_retries(
            attempt, is_transient=backend.is_transient, timeout=timeout, retries=retries, tries=tries
        )
    except Exception as exc:
        retrieved = None
        timed_out = isinstance(exc, (TimeoutError, asyncio.TimeoutError)) or backend.is_timeout(exc)
        error = TIMEOUT if timed_out else describe(exc)
    redirects = watch.redirects or None
    if retrieved is None:  # how long the query had before it gave up, on the --timeout's clock
        elapsed = round((time.perf_counter() - start) * 1000, 3)
        return Outcome(
            query.qid, [], None, error, elapsed, tries.attempts, http_status=tries.status, redirects=redirects
        )
    return Outcome(
        query.qid,
        retrieved.ids,
        retrieved.scores,
        None,
        watch.elapsed_ms(since=start),
        tries.attempts,
        retrieved.duplicates,
        redirects=redirects,
        texts=retrieved.texts,
    )


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


async def _run_all(items, work, concurrency, on_done, backend) -> None:
    gate = asyncio.Semaphore(concurrency)
    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    loop.set_default_executor(DaemonThreads())
    stopped_by = []

    def stop(number: int) -> None:
        stopped_by.append(number)
        main.cancel()

    async def one(item) -> None:
        async with gate:
            outcome = await work(item)
        on_done(item, outcome)

    previous = _on_stop_signals(loop, stop)
    tasks = []
    try:
        await backend.open()  # before any query's clock starts
        tasks = [asyncio.create_task(one(item)) for item in items]
        await asyncio.gather(*tasks)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise Interrupted(stopped_by[0] if stopped_by else signal.SIGINT) from None
    finally:
        _restore_signals(loop, previous)
        await backend.close()


def run_queries(
    backend: Backend,
    queries: list[BenchQuery],
    *,
    limit: int,
    timeout: float,
    retries: int,
    concurrency: int,
    on_outcome: Callable[[BenchQuery, Outcome], None],
) -> None:
    """Run ``queries``; ``on_outcome(query, outcome)`` is called as each one finishes, in the caller's thread."""
    run_bounded(
        queries,
        lambda query: run_one(backend, query, limit, timeout, retries),
        concurrency=concurrency,
        on_done=on_outcome,
        backend=backend,
    )


class Opened(Protocol):
    """What a run opens before its first item and closes after its last (a backend, an endpoint)."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...


def run_bounded(
    items: list,
    work: Callable[[Any], Awaitable[Any]],
    *,
    concurrency: int,
    on_done: Callable[[Any, Any], None],
    backend: Opened,
) -> None:
    """``await work(item)`` for every item, at most ``concurrency`` at once, on an event loop of its own;
    ``on_done(item, outcome)`` as each one finishes, in the caller's thread. ``backend`` is opened before
    the first item and closed after the last. Ctrl-C or SIGTERM cancels what is in flight and raises
    :class:`Interrupted` (see the module docstring)."""
    work_all = None
    try:
        loop = _new_loop()
        try:
            asyncio.set_event_loop(loop)
            work_all = _run_all(items, work, concurrency, on_done, backend)
            loop.run_until_complete(work_all)
        finally:
            _close(loop)
    except KeyboardInterrupt:
        if work_all is not None:
            work_all.close()  # a Ctrl-C before the loop started it: no "never awaited" warning at exit
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
