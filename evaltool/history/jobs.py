"""The queue of suite runs a server works through: one row per job, its state and progress.

A job is ``queued`` when asked for, ``running`` while a worker runs it (``cancelling`` once
asked to stop, until the query in flight ends), and ends ``done`` (its execution recorded),
``failed`` (the message kept), ``cancelled`` (on request) or
``interrupted`` (the server stopped while it ran: the next server start marks it so). An
interrupted job can be resumed: it goes back to the queue and its runner continues from the
checkpoint in its folder. A suite has at most one job queued or running at a time. The
execution is recorded only when the whole run is done, in one transaction, so a job that
did not finish leaves nothing in the report.

Progress (``done`` / ``total`` queries, ``failures``) is written as queries finish, so any
reader (a reloaded page) sees the same job where it is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from evaltool.errors import HistoryError, NotFoundError

QUEUED, RUNNING, CANCELLING = "queued", "running", "cancelling"
DONE, FAILED, CANCELLED, INTERRUPTED = "done", "failed", "cancelled", "interrupted"
OPEN = (QUEUED, RUNNING, CANCELLING)
ENDED = (DONE, FAILED, CANCELLED, INTERRUPTED)


class JobConflict(HistoryError):
    """The job cannot be made or changed in its present state (already queued, not resumable...)."""

    status = 409


@dataclass
class Job:
    id: int
    suite: str
    suite_version: int
    state: str
    author: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None
    done: int
    total: int
    failures: int
    elapsed_seconds: float | None
    execution_id: int | None
    error: str | None
    work_dir: str | None

    def to_dict(self) -> dict:
        out = asdict(self)
        out["elapsed"] = self.elapsed()
        return out

    def elapsed(self) -> float | None:
        """Seconds the job has run: earlier runs (before a resume) plus the current one until now."""
        from evaltool.history.dates import now, parse_when

        before = self.elapsed_seconds or 0.0
        if self.state not in (RUNNING, CANCELLING) or not self.started_at:
            return self.elapsed_seconds
        return round(before + (now() - parse_when(self.started_at, "started_at")).total_seconds(), 3)


def _job(row) -> Job:
    return Job(**{name: getattr(row, name) for name in Job.__dataclass_fields__})


def _read(conn, job_id) -> Job:
    import sqlalchemy as sa

    from evaltool.history import schema

    try:
        key = int(job_id)
    except (TypeError, ValueError):
        raise HistoryError(f"job id {job_id!r}: expected a number") from None
    row = conn.execute(sa.select(schema.jobs).where(schema.jobs.c.id == key)).first()
    if row is None:
        raise NotFoundError(f"no job with id {key}")
    return _job(row)


def enqueue(history, suite_name: str, *, author: str | None = None, audit=None) -> Job:
    """Queue a run of the suite's current version; :class:`JobConflict` when the suite already has
    one queued or running, HistoryError when it cannot run (disabled, empty, an upgrade problem).
    ``audit(conn, job_id)`` is called inside the same transaction (to record who asked)."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.dates import now, stamp
    from evaltool.history.suites import read_suite, runnable

    j = schema.jobs
    with history.writing() as conn:
        suite = read_suite(conn, suite_name)
        if not suite.active:
            raise JobConflict(f"suite {suite.name} is disabled; enable it to run it")
        try:
            runnable(suite)
        except HistoryError as exc:
            raise JobConflict(f"suite {suite.name} cannot run: {exc}") from None
        busy = conn.execute(sa.select(j.c.id, j.c.state).where(j.c.suite == suite.name, j.c.state.in_(OPEN))).first()
        if busy is not None:
            raise JobConflict(f"suite {suite.name} has a job {busy.state} already (job {busy.id})")
        job_id = conn.execute(
            j.insert().values(
                suite=suite.name,
                suite_version=suite.version,
                state=QUEUED,
                author=author,
                created_at=stamp(now()),
                done=0,
                total=len(suite.queries or []),
                failures=0,
            )
        ).inserted_primary_key[0]
        if audit is not None:
            audit(conn, job_id)
        return _read(conn, job_id)


def get_job(history, job_id) -> Job:
    with history.reading() as conn:
        return _read(conn, job_id)


def list_jobs(history, suite: str | None = None, states=None, limit: int = 50) -> list[Job]:
    """Jobs, newest first; of one suite, in some states."""
    import sqlalchemy as sa

    from evaltool.history import schema

    j = schema.jobs
    query = sa.select(j).order_by(j.c.id.desc()).limit(limit)
    if suite is not None:
        query = query.where(j.c.suite == suite)
    if states:
        query = query.where(j.c.state.in_(list(states)))
    with history.reading() as conn:
        return [_job(r) for r in conn.execute(query)]


def _update(history, job_id, *, where_states=None, **values) -> bool:
    """Set ``values`` on the job (when it is in one of ``where_states``); whether it changed."""
    from evaltool.history import schema

    j = schema.jobs
    with history.writing() as conn:
        query = j.update().where(j.c.id == int(job_id))
        if where_states is not None:
            query = query.where(j.c.state.in_(list(where_states)))
        return conn.execute(query.values(**values)).rowcount > 0


def claim(history, job_id, work_dir: str) -> Job | None:
    """Mark a queued job running (None when another worker took it or it was cancelled meanwhile)."""
    from evaltool.history.dates import now, stamp

    if not _update(history, job_id, where_states=(QUEUED,), state=RUNNING, started_at=stamp(now()), work_dir=work_dir):
        return None
    return get_job(history, job_id)


def progress(history, job_id, done: int, failures: int) -> None:
    _update(history, job_id, where_states=(RUNNING, CANCELLING), done=done, failures=failures)


def finish(history, job: Job, state: str, *, execution_id: int | None = None, error: str | None = None) -> None:
    """End a running job (or one cancelled while it ran) in ``state``, its elapsed time added up."""
    from evaltool.history.dates import now, stamp

    current = get_job(history, job.id)
    _update(
        history,
        job.id,
        where_states=(RUNNING, CANCELLING),
        state=state,
        finished_at=stamp(now()),
        elapsed_seconds=current.elapsed(),
        execution_id=execution_id,
        error=error,
    )


def cancel(history, job_id, *, audit=None) -> Job:
    """Cancel a queued job at once, or ask a running one to stop (its worker ends it ``cancelled``
    when the query in flight finishes); :class:`JobConflict` for a job that has ended."""
    from evaltool.history import schema
    from evaltool.history.dates import now, stamp

    j = schema.jobs
    with history.writing() as conn:
        job = _read(conn, job_id)
        if job.state in (DONE, FAILED, CANCELLED):
            raise JobConflict(f"job {job.id} has ended ({job.state}); there is nothing to cancel")
        values = (
            {"state": CANCELLING}
            if job.state in (RUNNING, CANCELLING)
            else {"state": CANCELLED, "finished_at": stamp(now())}
        )
        conn.execute(j.update().where(j.c.id == job.id).values(**values))
        if audit is not None:
            audit(conn, job.id)
        return _read(conn, job.id)


def resume(history, job_id, *, audit=None) -> Job:
    """Queue an interrupted job again; its runner continues from its checkpoint."""
    import sqlalchemy as sa

    from evaltool.history import schema

    j = schema.jobs
    with history.writing() as conn:
        job = _read(conn, job_id)
        if job.state != INTERRUPTED:
            raise JobConflict(f"job {job.id} is {job.state}; only an interrupted job can be resumed")
        busy = conn.execute(sa.select(j.c.id).where(j.c.suite == job.suite, j.c.state.in_(OPEN))).first()
        if busy is not None:
            raise JobConflict(f"suite {job.suite} has another job queued or running (job {busy.id})")
        conn.execute(j.update().where(j.c.id == job.id).values(state=QUEUED, finished_at=None, error=None))
        if audit is not None:
            audit(conn, job.id)
        return _read(conn, job.id)


def mark_interrupted(history) -> list[int]:
    """At a server's start: every job left running by a server that stopped is interrupted (one that
    was being cancelled is cancelled); the ids of the interrupted ones."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.dates import now, stamp

    j = schema.jobs
    with history.writing() as conn:
        rows = conn.execute(sa.select(j).where(j.c.state.in_([RUNNING, CANCELLING]))).all()
        for row in rows:
            job = _job(row)
            ended = {"state": CANCELLED if job.state == CANCELLING else INTERRUPTED}
            conn.execute(
                j.update()
                .where(j.c.id == job.id)
                .values(finished_at=stamp(now()), elapsed_seconds=job.elapsed(), **ended)
            )
    return [r.id for r in rows if r.state == RUNNING]


def next_queued(history, exclude=()) -> Job | None:
    """The oldest queued job (of a suite not in ``exclude``)."""
    import sqlalchemy as sa

    from evaltool.history import schema

    j = schema.jobs
    query = sa.select(j).where(j.c.state == QUEUED).order_by(j.c.id)
    with history.reading() as conn:
        for row in conn.execute(query):
            if row.suite not in exclude:
                return _job(row)
    return None
