"""The job runner: the queue in the history and the server's background worker (in process, no HTTP)."""

from __future__ import annotations

import os
import time

import pytest

from evaltool.history import add_suite, get_execution, list_executions, open_history
from evaltool.history import jobs as job_store
from evaltool.history.jobs import JobConflict
from evaltool.server.backends import parse_backends
from evaltool.server.worker import JobWorker
from tests.support import job_backends

THREE = [{"id": "q1", "query": "flat tyre inner tube", "relevant_ids": ["bike-puncture"]},
         {"id": "q2", "query": "chain skipping when changing gear", "qrels": {"bike-gear-indexing": 2}},
         {"id": "q3", "query": "wifi slow because of neighbours", "relevant_ids": ["net-wifi-channel", "net-mesh"]}]
DECLARED = parse_backends(["bm25=evaltool.bench.examples:bm25_documents",
                           "logged=tests.support.job_backends:logged"], None)


def _ended(history, job_id, wait: float = 120.0):
    """The job once it has ended (a generous wait for a loaded machine; not a timing assertion)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        job = job_store.get_job(history, job_id)
        if job.state in job_store.ENDED:
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still {job.state} after {wait} s")


@pytest.fixture
def history(tmp_path):
    opened = open_history(str(tmp_path / "history.sqlite"), create=True)
    yield opened
    opened.close()


@pytest.fixture
def worker(history, tmp_path):
    started = []

    def start(declared=DECLARED, slots=1):
        w = JobWorker(history, declared, str(tmp_path / "jobs"), slots=slots, poll=0.05)
        started.append(w)
        w.start()
        return w

    yield start
    for w in started:
        w.stop()


def test_a_queued_run_is_done_with_its_progress_and_execution(history, worker):
    add_suite(history, "panel", backend="bm25", queries=THREE, measures=["recip_rank", "P.5"], settings={"limit": 5})
    job = job_store.enqueue(history, "panel", author="ana")
    assert (job.state, job.done, job.total, job.suite_version) == ("queued", 0, 3, 1)
    with pytest.raises(JobConflict, match=r"has a job queued already \(job 1\)"):
        job_store.enqueue(history, "panel")
    worker()
    ended = _ended(history, job.id)
    assert (ended.state, ended.done, ended.total, ended.failures, ended.error) == ("done", 3, 3, 0, None)
    execution = get_execution(history, ended.execution_id, results=True)
    assert (execution.name, execution.kind, execution.suite_version) == ("panel", "suite", 1)
    assert [r["query_id"] for r in execution.results] == ["q1", "q2", "q3"]
    assert execution.results[0]["documents"][0]["title"]  # the declared backend's text is kept
    assert ended.elapsed() == ended.elapsed_seconds >= 0 and ended.started_at <= ended.finished_at
    second = job_store.enqueue(history, "panel")  # once ended, the suite may run again
    assert _ended(history, second.id).state == "done"


def test_only_declared_backends_run(history, worker):
    add_suite(history, "rogue", backend="evaltool.bench.examples:bm25_search", queries=THREE)
    add_suite(history, "by_spec", backend="evaltool.bench.examples:bm25_documents", queries=THREE)
    rogue = job_store.enqueue(history, "rogue")
    by_spec = job_store.enqueue(history, "by_spec")  # a command-line suite whose spec the operator declared
    worker()
    failed = _ended(history, rogue.id)
    assert failed.state == "failed" and "is not one this server declares" in failed.error
    assert _ended(history, by_spec.id).state == "done"
    assert [e.name for e in list_executions(history)] == ["by_spec"]


def test_a_suite_that_cannot_run_is_refused(history):
    add_suite(history, "empty", backend="bm25", queries=[])
    with pytest.raises(JobConflict, match="cannot run: it has no queries yet"):
        job_store.enqueue(history, "empty")
    add_suite(history, "off", backend="bm25", queries=THREE)
    from evaltool.history import set_active

    set_active(history, "off", False)
    with pytest.raises(JobConflict, match="is disabled"):
        job_store.enqueue(history, "off")


def test_cancel_stops_a_running_job_and_records_nothing(history, worker):
    declared = parse_backends(["gated=tests.support.job_backends:gated"], None)
    declared["gated"] = type(declared["gated"])("gated", declared["gated"].spec, {"concurrency": 1})
    add_suite(history, "slow", backend="gated", queries=THREE)
    job = job_store.enqueue(history, "slow")
    worker(declared)
    job_backends.GATE.release()
    deadline = time.monotonic() + 120
    while job_store.get_job(history, job.id).done < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job_store.cancel(history, job.id).state == "cancelling"
    job_backends.GATE.release()
    ended = _ended(history, job.id)
    assert ended.state == "cancelled" and ended.finished_at and ended.execution_id is None
    assert list_executions(history) == [] and not os.path.exists(ended.work_dir)
    with pytest.raises(JobConflict, match="has ended"):
        job_store.cancel(history, job.id)
    queued = job_store.enqueue(history, "slow")  # a queued job is cancelled at once
    assert job_store.cancel(history, queued.id).state == "cancelled"


def test_an_interrupted_job_resumes_from_its_checkpoint(history, worker, tmp_path):
    """A server stopped mid-job: the job stays 'running' in the history with a checkpoint of the
    queries done; the next server marks it interrupted; resumed, it sends only the missing query."""
    from evaltool.history.suite_runs import run_suite

    add_suite(history, "panel", backend="logged", queries=THREE)
    job = job_store.enqueue(history, "panel")
    claimed = job_store.claim(history, job.id, str(tmp_path / "jobs" / f"job-{job.id}"))

    class ServerKilled(Exception):
        pass

    class StopAfterTwo:
        done = 0

        def __getattr__(self, name):
            return lambda *args: None

        def finished(self, query, outcome):
            self.done += 1
            if self.done == 2:
                raise ServerKilled  # the process ends here, as a killed server's would

    declared = DECLARED["logged"]
    spec = {**declared.settings, "concurrency": 1}
    job_backends.SENT.clear()
    with pytest.raises(ServerKilled):
        run_suite(history, "panel", claimed.work_dir, listener=StopAfterTwo(), backend=declared.spec,
                  overrides=spec)
    checkpoint = next(p for p in os.listdir(claimed.work_dir) if p.endswith(".checkpoint.jsonl"))
    with open(os.path.join(claimed.work_dir, checkpoint), encoding="utf-8") as lines:
        assert len(lines.readlines()) == 1 + 2  # its header and the two queries answered
    assert list_executions(history) == []
    job_store.progress(history, job.id, 2, 0)
    w = worker()  # the next server: marks what was left running
    interrupted = job_store.get_job(history, job.id)
    assert interrupted.state == "interrupted" and interrupted.finished_at is not None
    job_backends.SENT.clear()
    job_store.resume(history, job.id)
    w.wake()
    ended = _ended(history, job.id)
    assert (ended.state, ended.done, ended.total) == ("done", 3, 3)
    assert job_backends.SENT == [THREE[2]["query"]]  # the two answered before the stop were not sent again
    execution = get_execution(history, ended.execution_id, results=True)
    assert [r["query_id"] for r in execution.results] == ["q1", "q2", "q3"]
    with pytest.raises(JobConflict, match="only an interrupted job can be resumed"):
        job_store.resume(history, job.id)
