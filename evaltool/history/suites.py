"""Controlled tests: named sets of queries with their ground truth, versioned in the history.

A suite holds its queries (id, text, optional category and difficulty, any other field as
metadata) and for each the relevant ids, with grades when given, plus what the benchmark
runner needs to run them: a backend, the measures and the runner's settings (limit,
timeout...). Its content is versioned: importing a file, adding, editing or removing a
query makes a new version (the old ones stay, with who made each change and when), and an
execution of the suite records the version it ran (``executions.suite_version``).

The queries are those of a benchmark queries file (:mod:`evaltool.bench.queries`: a JSON
list, JSONL) or of a CSV with a header row, validated by the same rules, every problem
with its line. ``export_text`` writes a version back as a JSON file ``evaltool bench`` reads.

>>> import os, tempfile
>>> db = os.path.join(tempfile.mkdtemp(), "history.sqlite")
>>> suite = add_suite(db, "helpdesk", backend="evaltool.bench.examples:bm25_search", queries=[
...     {"id": "q1", "query": "flat tyre", "relevant_ids": ["bike-puncture"]}])
>>> suite = put_query(db, "helpdesk", {"id": "q2", "query": "wifi slow", "qrels": {"net-wifi-channel": 2}})
>>> suite.version, [(q.query_id, q.judgments) for q in suite.queries]
(2, [('q1', {'bike-puncture': 1}), ('q2', {'net-wifi-channel': 2})])
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from typing import Any

from evaltool.errors import HistoryError, NotFoundError
from evaltool.measures.sets import DEFAULT_SETS
from evaltool.history.suite_content import (  # noqa: F401  (re-exported: the suites API)
    MAX_QUERIES,
    SuiteQuery,
    write_version,
    check_queries,
    parse_queries_file,
    queries_from_objects,
    read_queries_file,
)

# a suite's measures unless -m says otherwise: the comparative report's (MRR, nDCG@10, Precision@5), whose
# output names are the ones the default label thresholds are set on
SUITE_MEASURES = DEFAULT_SETS["suite"]
# a CSV cell listing ids: separated by whitespace or ';' (an id holds neither); qrels cells as id:grade


class SuiteConflict(HistoryError):
    """The change cannot be made in the suite's present state (a name taken, a query id in use)."""

    status = 409


@dataclass
class Suite:
    """A suite and (from :func:`get_suite`) the queries of one of its versions."""

    name: str
    backend: str
    measures: list[str]
    settings: dict  # the other bench options: limit, timeout, concurrency, retries, relevance_level, ...
    active: bool
    created_at: str
    version: int
    source: str | None = None
    problem: str | None = None
    queries: list[SuiteQuery] | None = None
    shown_version: int | None = None  # the version ``queries`` belong to

    def to_dict(self) -> dict:
        out = asdict(self)
        if self.queries is None:
            out.pop("queries")
            out.pop("shown_version")
        return out


def _suite(row, queries=None, shown=None) -> Suite:
    """A stored suite row, each column checked: a damaged history is one message, never a traceback."""
    from evaltool.history.queries import damaged, json_object, json_value, named, text_value

    where = f"suite {named(row.name)}"
    measures = json_value(row.measures, f"{where}: measures", "a JSON list of measure names")
    if not isinstance(measures, list) or not all(isinstance(m, str) for m in measures):
        raise damaged(row.measures, f"{where}: measures", "a JSON list of measure names")
    return Suite(
        text_value(row.name, "a suite name"),
        text_value(row.backend, f"{where}: backend"),
        measures,
        json_object(row.settings, f"{where}: settings"),
        bool(row.active),
        text_value(row.created_at, f"{where}: created_at"),
        row.version,
        text_value(row.source, f"{where}: source", optional=True),
        text_value(row.problem, f"{where}: problem", optional=True),
        queries,
        shown,
    )


def _validated_setup(name: str, backend: str, measures, settings) -> tuple[str, list[str], dict]:
    from evaltool.bench.scoring import plan_measures

    name = (name or "").strip()
    if not name:
        raise HistoryError("suite: a suite needs a non-empty NAME")
    if len(name) > 200:
        raise HistoryError(f"suite name of {len(name)} characters; at most 200")
    if not backend or not backend.strip():
        raise HistoryError(f"suite {name}: the backend is empty; expected module:function, a URL or a run file")
    measures = list(measures) or list(SUITE_MEASURES)
    plan_measures(measures)
    settings = dict(settings or {})
    limit = settings.get("limit", 10)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise HistoryError(f"suite {name}: limit {limit!r}: expected a whole number of 1 or more")
    return name, measures, settings


def describe_change(change: str, lang: str = "en") -> str:
    """A version's change in words: it is stored as ``{"what": KIND, ...}`` JSON (created, imported,
    upgraded, upgrade_failed, uploaded, added, edited, removed, replaced) and said in ``lang``.

    >>> describe_change('{"what": "added", "query": "q4"}', "es")
    'consulta q4 agregada'
    """
    from evaltool.report.i18n import CATALOGUE, t

    try:
        parsed = json.loads(change)
    except (TypeError, ValueError):
        return str(change)
    what = parsed.pop("what", None) if isinstance(parsed, dict) else None
    if f"change.{what}" not in CATALOGUE:
        return str(change)
    return t(f"change.{what}", lang, **parsed)


def add_suite(
    db,
    name: str,
    queries_file=None,
    backend: str = "",
    measures=(),
    settings=None,
    *,
    queries=None,
    author: str | None = None,
    audit=None,
) -> Suite:
    """Define a suite (a name not in use yet) with the content of ``queries_file`` or ``queries``
    (:class:`SuiteQuery` s or queries-file objects; none: an empty suite to fill later); returns it.
    ``measures`` default to :data:`SUITE_MEASURES`; ``settings`` are :class:`evaltool.bench.BenchSettings`
    fields. A backend that is a file (a TREC run) is stored by its absolute path. ``audit(conn)``, if
    given, runs in the same transaction (the server records who made the change)."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.dates import now, stamp
    from evaltool.history.queries import opened

    name, measures, settings = _validated_setup(name, backend, measures, settings)
    source = None
    if queries_file is not None:
        source = os.path.abspath(os.fspath(queries_file))
        if not os.path.isfile(source):
            raise HistoryError(f"suite add {name}: {queries_file}: no such file (the suite's queries file)")
        content = read_queries_file(queries_file)
    else:
        content = _as_queries(queries or [])
    if "://" not in backend and os.path.isfile(backend):
        backend = os.path.abspath(backend)
    if settings.get("corpus"):
        settings["corpus"] = os.path.abspath(settings["corpus"])
    at = stamp(now())
    with opened(db, create=True) as history, history.writing() as conn:
        taken = conn.execute(sa.select(schema.suites.c.name).where(schema.suites.c.name == name)).first()
        if taken:
            raise SuiteConflict(f"suite add: a suite named {name!r} exists already (see 'evaltool suite list')")
        conn.execute(
            schema.suites.insert().values(
                name=name,
                backend=backend,
                measures=json.dumps(measures),
                settings=json.dumps(settings, sort_keys=True),
                active=True,
                created_at=at,
                version=1,
                source=source,
                problem=None,
            )
        )
        write_version(
            conn,
            name,
            1,
            content,
            at,
            author,
            {"what": "imported", "file": source} if source else {"what": "created", "queries": len(content)},
        )
        if audit is not None:
            audit(conn)
    return get_suite(db, name)


def _as_queries(items) -> list[SuiteQuery]:
    items = list(items)
    if all(isinstance(q, SuiteQuery) for q in items):
        return items
    return queries_from_objects(items)


def list_suites(db=None, names=None, active_only: bool = False) -> list[Suite]:
    """Suites by name, without their queries; ``names`` picks some (an unknown name is an error),
    ``active_only`` the enabled."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.queries import opened

    with opened(db) as history, history.reading() as conn:
        suites = [_suite(r) for r in conn.execute(sa.select(schema.suites).order_by(schema.suites.c.name))]
    if names:
        known = {s.name: s for s in suites}
        unknown = [n for n in names if n not in known]
        if unknown:
            listed = ", ".join(known) or "none"
            raise NotFoundError(f"no suite named {unknown[0]!r} (suites: {listed})")
        suites = [known[n] for n in dict.fromkeys(names)]
    return [s for s in suites if s.active] if active_only else suites


def read_suite(conn, name: str, version: int | None = None) -> Suite:
    """A suite with a version's queries, read on an open connection (NotFoundError when there is none)."""
    import sqlalchemy as sa

    from evaltool.history import schema

    row = conn.execute(sa.select(schema.suites).where(schema.suites.c.name == name)).first()
    if row is None:
        raise NotFoundError(f"no suite named {name!r} (see 'evaltool suite list')")
    shown = row.version if version is None else int(version)
    if not 1 <= shown <= row.version:
        raise NotFoundError(f"suite {name!r} has versions 1 to {row.version}, not {version}")
    q = schema.suite_queries
    queries = [
        SuiteQuery(
            r.query_id,
            r.text,
            r.category,
            r.difficulty,
            r.expected_field,
            json.loads(r.judgments),
            json.loads(r.fields),
        )
        for r in conn.execute(sa.select(q).where(q.c.suite == name, q.c.version == shown).order_by(q.c.position))
    ]
    return _suite(row, queries, shown)


def get_suite(db, name: str, version: int | None = None) -> Suite:
    """A suite with the queries of ``version`` (default: the current one)."""
    from evaltool.history.queries import opened

    with opened(db) as history, history.reading() as conn:
        return read_suite(conn, name, version)


def suite_versions(db, name: str, lang: str = "en") -> list[dict]:
    """Every version of a suite, oldest first: ``{"version", "created_at", "author", "change", "queries"}``
    (``change`` said in ``lang``)."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.queries import opened

    v, q = schema.suite_versions, schema.suite_queries
    counts = sa.select(sa.func.count()).where(q.c.suite == v.c.suite, q.c.version == v.c.version).scalar_subquery()
    with opened(db) as history, history.reading() as conn:
        rows = conn.execute(sa.select(v, counts.label("queries")).where(v.c.suite == name).order_by(v.c.version)).all()
        if not rows:
            raise NotFoundError(f"no suite named {name!r} (see 'evaltool suite list')")
    return [
        {
            "version": r.version,
            "created_at": r.created_at,
            "author": r.author,
            "change": describe_change(r.change, lang),
            "queries": r.queries,
        }
        for r in rows
    ]


def save_queries(
    db,
    name: str,
    queries,
    *,
    author: str | None = None,
    change: dict | None = None,
    source: str | None = None,
    expected_version: int | None = None,
    audit=None,
) -> Suite:
    """Make ``queries`` the suite's new version (an unchanged content makes none); returns the suite.

    ``expected_version``: the version the change was made on; when another change came first the
    save is refused (:class:`SuiteConflict`) rather than silently undoing it. ``audit(conn)`` runs in
    the same transaction when a version is made.
    """
    from evaltool.history import schema
    from evaltool.history.dates import now, stamp
    from evaltool.history.queries import opened

    queries = _as_queries(queries)
    if len(queries) > MAX_QUERIES:
        raise HistoryError(f"suite {name}: {len(queries)} queries; a suite holds at most {MAX_QUERIES}")
    ids = [q.query_id for q in queries]
    if len(set(ids)) != len(ids):
        twice = next(i for i in ids if ids.count(i) > 1)
        raise SuiteConflict(f"suite {name}: query id {twice!r} is used twice")
    with opened(db) as history, history.writing() as conn:
        current = read_suite(conn, name)
        if expected_version is not None and expected_version != current.version:
            raise SuiteConflict(
                f"suite {name} changed meanwhile (version {current.version}, the change was made on "
                f"version {expected_version}); reload it and make the change again"
            )
        if [q.to_dict() for q in current.queries or []] == [q.to_dict() for q in queries] and source is None:
            return current
        version = current.version + 1
        write_version(conn, name, version, queries, stamp(now()), author, change or {"what": "replaced"})
        values: dict[str, Any] = {"version": version, "problem": None}
        if source is not None:
            values["source"] = source
        conn.execute(schema.suites.update().where(schema.suites.c.name == name).values(**values))
        if audit is not None:
            audit(conn)
    return get_suite(db, name)


def import_queries(db, name: str, path, *, author: str | None = None) -> Suite:
    """Replace a suite's queries with a file's (a new version)."""
    queries = read_queries_file(path)
    source = os.path.abspath(os.fspath(path))
    return save_queries(db, name, queries, author=author, change={"what": "imported", "file": source}, source=source)


def put_query(
    db,
    name: str,
    query,
    *,
    author: str | None = None,
    replace_id: str | None = None,
    expected_version: int | None = None,
    audit=None,
) -> Suite:
    """Add a query, or replace the one with id ``replace_id`` (its id may change); a new version."""
    new = _as_queries([query])[0]
    suite = get_suite(db, name)
    queries = list(suite.queries or [])
    ids = [q.query_id for q in queries]
    if replace_id is None:
        if new.query_id in ids:
            raise SuiteConflict(f"suite {name}: a query with id {new.query_id!r} exists already")
        queries.append(new)
        change = {"what": "added", "query": new.query_id}
    else:
        if replace_id not in ids:
            raise NotFoundError(f"suite {name}: no query with id {replace_id!r}")
        if new.query_id != replace_id and new.query_id in ids:
            raise SuiteConflict(f"suite {name}: a query with id {new.query_id!r} exists already")
        queries[ids.index(replace_id)] = new
        change = {"what": "edited", "query": replace_id}
    return save_queries(
        db,
        name,
        queries,
        author=author,
        change=change,
        audit=audit,
        expected_version=suite.version if expected_version is None else expected_version,
    )


def remove_query(
    db, name: str, query_id: str, *, author: str | None = None, expected_version: int | None = None, audit=None
) -> Suite:
    """Remove a query (a new version)."""
    suite = get_suite(db, name)
    present = suite.queries or []
    kept = [q for q in present if q.query_id != query_id]
    if len(kept) == len(present):
        raise NotFoundError(f"suite {name}: no query with id {query_id!r}")
    return save_queries(
        db,
        name,
        kept,
        author=author,
        change={"what": "removed", "query": query_id},
        audit=audit,
        expected_version=suite.version if expected_version is None else expected_version,
    )


def set_active(db, name: str, active: bool, *, audit=None) -> Suite:
    """Enable or disable a suite (``suite enable`` / ``suite disable``)."""
    from evaltool.history import schema
    from evaltool.history.queries import opened

    with opened(db) as history, history.writing() as conn:
        changed = conn.execute(schema.suites.update().where(schema.suites.c.name == name).values(active=active))
        if changed.rowcount == 0:
            raise NotFoundError(f"no suite named {name!r} (see 'evaltool suite list')")
        if audit is not None:
            audit(conn)
    return list_suites(db, [name])[0]


def export_text(suite: Suite) -> str:
    """A suite version's queries as a JSON queries file (one query per line) that ``evaltool bench`` reads."""
    lines = [json.dumps(q.to_bench(), ensure_ascii=False) for q in suite.queries or ()]
    return "[\n" + ",\n".join(f"  {line}" for line in lines) + ("\n" if lines else "") + "]\n"


def runnable(suite: Suite) -> None:
    """Raise HistoryError when the suite cannot run as it stands (no queries, an upgrade problem); the
    message says why, for the caller to put after the suite's name."""
    if suite.problem:
        raise HistoryError(suite.problem)
    if not suite.queries:
        raise HistoryError(
            f"it has no queries yet: add some, or import a queries file ('evaltool suite import {suite.name} FILE')"
        )
