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

from evaltool.errors import HistoryError, NotFoundError, quote
from evaltool.history.store import DamagedHistory


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
    where = f"execution {row.id}"
    return Execution(
        id=_whole(row.id, "an execution id"),
        name=text_value(row.name, f"{where}: name"),
        recorded_at=text_value(row.recorded_at, f"{where}: recorded_at"),
        kind=text_value(row.kind, f"{where}: kind"),
        note=text_value(row.note, f"{where}: note", optional=True),
        tags={
            text_value(t.key, f"{where}: a tag key"): text_value(t.value, f"{where}: tag {named(t.key)}")
            for t in tag_rows
        },
        summary={
            text_value(s.measure, f"{where}: a measure"): _number(s.value, f"{where}: {named(s.measure)}")
            for s in summaries
        },
        query_count=_whole(row.query_count, f"{where}: query_count", optional=True),
        evaltool_version=text_value(row.evaltool_version, f"{where}: evaltool_version"),
        options=json_object(row.options, f"{where}: options"),
        thresholds={
            k: _number(v, f"{where}: threshold {named(k)}")
            for k, v in json_object(row.thresholds, f"{where}: thresholds").items()
        },
        sources=json_object(row.sources, f"{where}: sources"),
        fingerprints={
            kind: text_value(value, f"{where}: {kind}_sha256", optional=True)
            for kind, value in (("qrels", row.qrels_sha256), ("run", row.run_sha256), ("queries", row.queries_sha256))
        },
        git_commit=text_value(row.git_commit, f"{where}: git_commit", optional=True),
        aggregates={
            s.measure: text_value(s.aggregate, f"{where}: aggregate of {named(s.measure)}", optional=True)
            for s in summaries
        },
        suite_version=_whole(row.suite_version, f"{where}: suite_version", optional=True),
    )


# A history holds what evaltool wrote; a value of another type (a hand edit, a disk fault) is
# refused where it is read, naming the execution and the column, rather than failing later.


def named(name) -> str:
    """A measure, tag or query id as a message names it: quoted, 40 characters at most."""
    return quote(str(name), 40)


def damaged(value, what: str, expected: str) -> DamagedHistory:
    shown = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return DamagedHistory(f"{what} holds {quote(shown, 80)} ({type(value).__name__}); expected {expected}")


def text_value(value, what: str, optional: bool = False):
    if isinstance(value, str) or (optional and value is None):
        return value
    raise damaged(value, what, "text")


def _whole(value, what: str, optional: bool = False):
    if (isinstance(value, int) and not isinstance(value, bool)) or (optional and value is None):
        return value
    raise damaged(value, what, "a whole number")


def _number(value, what: str):
    """A stored measure value: a float, or None for trec_eval's nan."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    raise damaged(value, what, "a number")


def json_value(text, what: str, expected: str):
    """A JSON value stored as text, of the type ``expected`` names (checked by the caller)."""
    if isinstance(text, str):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
            pass
    raise damaged(text, what, expected)


def json_object(text, what: str) -> dict:
    """A JSON object stored as text (options, thresholds, sources)."""
    value = json_value(text, what, "a JSON object")
    if isinstance(value, dict):
        return value
    raise damaged(text, what, "a JSON object")


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
        part = ids[chunk : chunk + 500]
        s, t = schema.summary_values, schema.tags
        for r in conn.execute(sa.select(s).where(s.c.execution_id.in_(part)).order_by(s.c.execution_id, s.c.position)):
            summaries[r.execution_id].append(r)
        for r in conn.execute(sa.select(t).where(t.c.execution_id.in_(part)).order_by(t.c.execution_id, t.c.key)):
            tag_rows[r.execution_id].append(r)
    return [_execution(r, summaries[r.id], tag_rows[r.id]) for r in rows]


def list_executions(
    db=None,
    date_from=None,
    date_to=None,
    name: str | None = None,
    tags=None,
    limit: int | None = None,
    offset: int = 0,
    newest_first: bool = False,
) -> list[Execution]:
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
    where = f"execution {execution.id}"
    for r in conn.execute(sa.select(q).where(q.c.execution_id == execution.id).order_by(q.c.query_id)):
        qid = text_value(r.query_id, f"{where}: a query id")
        per_query.setdefault(qid, {})[text_value(r.measure, f"{where}: a measure of query {named(qid)}")] = _number(
            r.value, f"{where}: {named(r.measure)} of query {named(qid)}"
        )
    order = list(execution.summary)
    execution.per_query = {
        qid: dict(sorted(values.items(), key=lambda kv: _position(order, kv[0]))) for qid, values in per_query.items()
    }
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
            {"rank": row.rank, "doc_id": row.doc_id, "score": row.score, "title": row.title, "snippet": row.snippet}
        )
    execution.results = [
        {
            "query_id": row.query_id,
            "text": row.text,
            "judgments": None if row.judgments is None else json.loads(row.judgments),
            "latency_ms": row.latency_ms,
            "error": row.error,
            "returned": row.returned,
            "documents": documents.get(row.query_id, []),
        }
        for row in conn.execute(sa.select(o).where(o.c.execution_id == execution.id).order_by(o.c.position))
    ]
    return execution


def get_execution(db, execution_id, per_query: bool = True, results: bool = False) -> Execution:
    """One execution with its per-query values (``per_query=False``: without them) and, with
    ``results``, what the search returned (see :func:`_with_results`)."""
    with opened(db) as history, history.reading() as conn:
        execution = _find(conn, history, execution_id)
        if per_query:
            _with_per_query(conn, execution)
        return _with_results(conn, execution) if results else execution


def state(db) -> int:
    """The number of write transactions ever committed to the history (``evaltool_schema.changes``):
    it grows with every record, prune or suite change and never comes back to a value it had, so a
    reader may keep what it computed until it moves."""
    import sqlalchemy as sa

    from evaltool.history import schema

    with opened(db) as history, history.reading() as conn:
        return int(conn.execute(sa.select(schema.schema_table.c.changes)).scalar_one())


def get_executions(db, ids, results: bool = False) -> list[Execution]:
    """Several executions with their per-query values (and, with ``results``, what the search
    returned), read in one snapshot, in the order given."""
    with opened(db) as history, history.reading() as conn:
        found = [_with_per_query(conn, _find(conn, history, i)) for i in ids]
        return [_with_results(conn, e) for e in found] if results else found
