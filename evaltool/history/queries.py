"""Reading the history back: executions by date, name and tags; one execution in full.

Every function takes ``db`` as :func:`~evaltool.history.store.open_history` does (a
path, a URL, an open History or None for the default) and returns plain dataclasses
whose ``to_dict()`` is JSON-ready.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

from evaltool.errors import HistoryError, NotFoundError


@dataclass
class Execution:
    """One recorded evaluation. ``per_query`` is filled by :func:`get_execution` only."""

    id: int
    name: str
    recorded_at: str
    kind: str
    note: str | None
    tags: dict[str, str]
    summary: dict[str, float | None]
    query_count: int | None
    evaltool_version: str
    options: dict
    thresholds: dict[str, float]
    sources: dict[str, str]
    fingerprints: dict[str, str | None]
    git_commit: str | None
    aggregates: dict[str, str | None] = field(default_factory=dict, repr=False)
    per_query: dict[str, dict[str, float | None]] | None = None
    suite_version: int | None = None
    results: list[dict] | None = None  # what the search returned, by query (filled on request)

    def to_dict(self) -> dict:
        out = asdict(self)
        out.pop("aggregates")
        for optional in ("per_query", "results"):
            if getattr(self, optional) is None:
                out.pop(optional)
        return out


@contextmanager
def opened(db, create: bool = False):
    """The history ``db`` opened (closed after, unless it came open); ``create`` makes a new one."""
    from evaltool.history.store import History, open_history

    history = open_history(db, create=create)
    try:
        yield history
    finally:
        if not isinstance(db, History):
            history.close()


def _execution(row, summaries, tag_rows) -> Execution:
    return Execution(
        id=row.id, name=row.name, recorded_at=row.recorded_at, kind=row.kind, note=row.note,
        tags={t.key: t.value for t in tag_rows},
        summary={s.measure: s.value for s in summaries},
        query_count=row.query_count, evaltool_version=row.evaltool_version,
        options=json.loads(row.options), thresholds=json.loads(row.thresholds), sources=json.loads(row.sources),
        fingerprints={"qrels": row.qrels_sha256, "run": row.run_sha256, "queries": row.queries_sha256},
        git_commit=row.git_commit, aggregates={s.measure: s.aggregate for s in summaries},
        suite_version=row.suite_version,
    )


def _filtered(date_from=None, date_to=None, name=None, tags=None):
    """The SELECT of execution rows in a range (inclusive), of a name, with every tag given."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.dates import range_bounds

    e = schema.executions
    low, high = range_bounds(date_from, date_to)
    query = sa.select(e)
    if low is not None:
        query = query.where(e.c.recorded_at >= low)
    if high is not None:
        query = query.where(e.c.recorded_at <= high)
    if name is not None:
        query = query.where(e.c.name == name)
    for key, value in _tag_filter(tags).items():
        t = schema.tags
        query = query.where(sa.exists().where(t.c.execution_id == e.c.id, t.c.key == key, t.c.value == value))
    return query


def _tag_filter(tags) -> dict[str, str]:
    if tags is None:
        return {}
    if isinstance(tags, Mapping):
        return {str(k): str(v) for k, v in tags.items()}
    from evaltool.history.recording import parse_tags

    return parse_tags(tags)


def _load(conn, rows) -> list[Execution]:
    """Executions for execution rows, with their summaries and tags (two queries, not one per row)."""
    import sqlalchemy as sa

    from evaltool.history import schema

    rows = list(rows)
    ids = [r.id for r in rows]
    summaries: dict[int, list] = {i: [] for i in ids}
    tag_rows: dict[int, list] = {i: [] for i in ids}
    for chunk in range(0, len(ids), 500):
        part = ids[chunk:chunk + 500]
        s, t = schema.summary_values, schema.tags
        for r in conn.execute(sa.select(s).where(s.c.execution_id.in_(part)).order_by(s.c.execution_id,
                                                                                       s.c.position)):
            summaries[r.execution_id].append(r)
        for r in conn.execute(sa.select(t).where(t.c.execution_id.in_(part)).order_by(t.c.execution_id, t.c.key)):
            tag_rows[r.execution_id].append(r)
    return [_execution(r, summaries[r.id], tag_rows[r.id]) for r in rows]


def list_executions(db=None, date_from=None, date_to=None, name: str | None = None, tags=None,
                    limit: int | None = None, offset: int = 0, newest_first: bool = False) -> list[Execution]:
    """Executions recorded between ``date_from`` and ``date_to`` (ISO-8601, inclusive, UTC),
    oldest first (``newest_first`` reverses), optionally of one ``name`` and with every
    ``tags`` pair (a dict or ``K=V`` texts); ``limit`` / ``offset`` page through them."""
    from evaltool.history import schema

    if (limit is not None and limit < 0) or offset < 0:
        raise HistoryError(f"limit {limit} / offset {offset}: expected numbers of 0 or more")
    e = schema.executions
    order = (e.c.recorded_at.desc(), e.c.id.desc()) if newest_first else (e.c.recorded_at, e.c.id)
    query = _filtered(date_from, date_to, name, tags).order_by(*order).offset(offset)
    if limit is not None:
        query = query.limit(limit)
    with opened(db) as history, history.reading() as conn:
        return _load(conn, conn.execute(query))


def _find(conn, history, execution_id) -> Execution:
    import sqlalchemy as sa

    from evaltool.history import schema

    try:
        key = int(execution_id)
    except (TypeError, ValueError):
        raise HistoryError(f"execution id {execution_id!r}: expected a number (see 'evaltool history list')") from None
    rows = conn.execute(sa.select(schema.executions).where(schema.executions.c.id == key)).all()
    if not rows:
        raise NotFoundError(f"{history.where}: no execution with id {key} (see 'evaltool history list')")
    return _load(conn, rows)[0]


def _with_per_query(conn, execution: Execution) -> Execution:
    import sqlalchemy as sa

    from evaltool.history import schema

    q = schema.query_values
    per_query: dict[str, dict] = {}
    for r in conn.execute(sa.select(q).where(q.c.execution_id == execution.id).order_by(q.c.query_id)):
        per_query.setdefault(r.query_id, {})[r.measure] = r.value
    order = list(execution.summary)
    execution.per_query = {qid: dict(sorted(values.items(), key=lambda kv: _position(order, kv[0])))
                           for qid, values in per_query.items()}
    return execution


def _position(order: list[str], measure: str) -> int:
    return order.index(measure) if measure in order else len(order)


def _with_results(conn, execution: Execution) -> Execution:
    """``execution.results``: per query (in the order run) ``query_id``, ``text``, ``judgments``,
    ``latency_ms``, ``error``, ``returned`` (how many ids the search returned) and ``documents``
    (the stored ones: ``rank``, ``doc_id``, ``score``, ``title``, ``snippet``); [] when none were kept."""
    import sqlalchemy as sa

    from evaltool.history import schema

    o, r = schema.query_outcomes, schema.returned
    documents: dict[str, list] = {}
    for row in conn.execute(sa.select(r).where(r.c.execution_id == execution.id).order_by(r.c.query_id, r.c.rank)):
        documents.setdefault(row.query_id, []).append(
            {"rank": row.rank, "doc_id": row.doc_id, "score": row.score, "title": row.title,
             "snippet": row.snippet})
    execution.results = [
        {"query_id": row.query_id, "text": row.text,
         "judgments": None if row.judgments is None else json.loads(row.judgments),
         "latency_ms": row.latency_ms, "error": row.error, "returned": row.returned,
         "documents": documents.get(row.query_id, [])}
        for row in conn.execute(sa.select(o).where(o.c.execution_id == execution.id).order_by(o.c.position))]
    return execution


def get_execution(db, execution_id, per_query: bool = True, results: bool = False) -> Execution:
    """One execution with its per-query values (``per_query=False``: without them) and, with
    ``results``, what the search returned (see :func:`_with_results`)."""
    with opened(db) as history, history.reading() as conn:
        execution = _find(conn, history, execution_id)
        if per_query:
            _with_per_query(conn, execution)
        return _with_results(conn, execution) if results else execution


def state(db) -> tuple[int, int | None]:
    """(number of executions, highest id): it changes whenever an execution is recorded or pruned
    (executions are never changed in place), so a reader may keep what it computed until it does."""
    import sqlalchemy as sa

    from evaltool.history import schema

    e = schema.executions
    with opened(db) as history, history.reading() as conn:
        count, highest = conn.execute(sa.select(sa.func.count(), sa.func.max(e.c.id))).one()
    return int(count), highest


def get_executions(db, ids, results: bool = False) -> list[Execution]:
    """Several executions with their per-query values (and, with ``results``, what the search
    returned), read in one snapshot, in the order given."""
    with opened(db) as history, history.reading() as conn:
        found = [_with_per_query(conn, _find(conn, history, i)) for i in ids]
        return [_with_results(conn, e) for e in found] if results else found
