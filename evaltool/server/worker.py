"""The server's own background worker: runs queued suite jobs, a few at a time, one per suite.

Threads (``slots`` of them, ``evaltool serve --jobs N``) take the oldest queued job whose
suite is not already running, run it through the benchmark runner in the job's own folder
(``jobs_dir/job-ID``: the queries file, the runner's checkpoint, the report files), write
the progress to the job's row as each query finishes, and end the job ``done`` with its
execution recorded, ``failed`` with the message, or ``cancelled``. Only backends the operator
declared are run (:mod:`evaltool.server.backends`); a suite naming anything else fails with
a message saying so.

At start every job a previous server left ``running`` is marked ``interrupted``; resuming
one queues it again and its run continues from the checkpoint in its folder (the queries
already answered are not sent again). The execution is recorded in one transaction at the
end, so the report never shows a job that did not finish.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading

from evaltool.bench.session import Listener
from evaltool.errors import EvaltoolError
from evaltool.history import jobs as job_store

log = logging.getLogger("evaltool.server")
POLL_SECONDS = 1.0  # a worker with nothing to do looks at the queue this often (and at once when woken)


class JobCancelled(Exception):
    """The job was cancelled while it ran; raised from the progress listener to stop the runner."""


class _Progress(Listener):
    """The runner's listener: progress into the job's row; a cancelled job stops at the next query
    (the runner's other steps are heard and ignored, as the base Listener does)."""

    def __init__(self, history, job):
        self.history, self.job = history, job
        self.done = self.failures = 0

    def started(self, total, pending, resumed):
        self.done = resumed
        self.failures = self.job.failures if resumed else 0
        job_store.progress(self.history, self.job.id, self.done, self.failures)

    def finished(self, query, outcome):
        self.done += 1
        self.failures += outcome.error is not None
        job_store.progress(self.history, self.job.id, self.done, self.failures)
        if job_store.get_job(self.history, self.job.id).state == job_store.CANCELLING:
            raise JobCancelled


class JobWorker:
    """Runs the queue (see the module docstring). ``declared``: name -> DeclaredBackend."""

    def __init__(self, history, declared: dict, jobs_dir: str, slots: int = 1, poll: float = POLL_SECONDS):
        if slots < 1:
            raise EvaltoolError(f"--jobs {slots}: expected 1 or more")
        self.history, self.declared, self.jobs_dir, self.slots, self.poll = history, declared, jobs_dir, slots, poll
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._running: set[str] = set()
        self._threads: list[threading.Thread] = []

    def start(self) -> list[int]:
        """Mark what a stopped server left running as interrupted, then start the threads; the ids marked."""
        interrupted = job_store.mark_interrupted(self.history)
        for n in range(self.slots):
            thread = threading.Thread(target=self._loop, name=f"evaltool-job-{n + 1}", daemon=True)
            thread.start()
            self._threads.append(thread)
        return interrupted

    def wake(self) -> None:
        """A job was queued: look now."""
        self._wake.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout)

    def _take(self):
        with self._lock:
            job = job_store.next_queued(self.history, exclude=self._running)
            if job is None:
                return None
            claimed = job_store.claim(self.history, job.id, os.path.join(self.jobs_dir, f"job-{job.id}"))
            if claimed is not None:
                self._running.add(claimed.suite)
            return claimed

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                job = self._take()
            except Exception:  # the database went away for a moment: try again later
                log.exception("cannot read the job queue")
                job = None
            if job is None:
                self._wake.wait(self.poll)
                self._wake.clear()
                continue
            try:
                self._run(job)
            finally:
                with self._lock:
                    self._running.discard(job.suite)
                self._wake.set()  # another job of the same suite may be waiting

    def _run(self, job) -> None:
        from evaltool.bench.checkpoint import checkpoint_path
        from evaltool.history.suite_runs import queries_file_stem, run_suite
        from evaltool.history.suites import get_suite
        from evaltool.server.backends import resolve

        try:
            suite = get_suite(self.history, job.suite, job.suite_version)
            declared = resolve(self.declared, suite.backend)
            if declared is None:
                raise EvaltoolError(
                    f"suite {suite.name}'s backend {suite.backend!r} is not one this server declares "
                    "(evaltool serve --backend NAME=SPEC); it was not run"
                )
            suite.version = job.suite_version
            checkpoint = checkpoint_path(job.work_dir, queries_file_stem(suite) + ".json")
            _, execution_id = run_suite(
                self.history,
                job.suite,
                job.work_dir,
                version=job.suite_version,
                listener=_Progress(self.history, job),
                resume=os.path.exists(checkpoint),
                backend=declared.spec,
                overrides=declared.settings,
            )
        except JobCancelled:
            job_store.finish(self.history, job, job_store.CANCELLED)
            shutil.rmtree(job.work_dir, ignore_errors=True)
            return
        except EvaltoolError as exc:
            job_store.finish(self.history, job, job_store.FAILED, error=str(exc)[:2000])
            return
        except Exception as exc:  # a backend or runner failure must end the job, never the worker
            log.exception("job %s failed", job.id)
            job_store.finish(self.history, job, job_store.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000])
            return
        job_store.finish(self.history, job, job_store.DONE, execution_id=execution_id)
