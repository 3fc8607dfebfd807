"""Evaluation history: every result recorded, read back by date, compared, alerted on.

The store is a SQLite file by default (``db``: a path; ``EVALTOOL_DB``; else
``evaltool-history.sqlite`` in the current directory) or a PostgreSQL database
(``db="postgresql://user@host/name"``), through one SQLAlchemy Core code path. It has
a schema version and forward migrations (:mod:`~evaltool.history.schema`); each
execution is written in one transaction (:mod:`~evaltool.history.store`).

The API is plain functions; ``db`` is a path, a URL, an open :class:`History`
(:func:`open_history`) or None. Dates are ISO-8601 text, dates or datetimes (UTC when
naive); ranges include both ends, and a date alone as ``date_to`` is its whole day.
A long-lived program (a web server) opens the history once with ``open_history(db)``
and passes the History to every call; threads may share it. Errors are
:class:`~evaltool.errors.EvaltoolError` s (``HistoryError`` for the store's own), one line each.

Writing:

* ``record(result, db=None, *, name, note, tags, at, kind, thresholds, options, sources,
  fingerprints, commit) -> int``: store an EvalResult (or its JSON dict); returns its id.
* ``prune(db, keep, name=None) -> list[int]``: keep the ``keep`` newest executions of each
  name; returns the ids deleted.

Upgrading: ``upgrade(db) -> (version found, version now)`` brings a history of an older
schema forward (readers and writers refuse one until then).

Reading (every result has ``to_dict()`` or is a dict, JSON-ready):

* ``list_executions(db, date_from, date_to, name, tags, limit, offset, newest_first)
  -> list[Execution]``: without per-query values.
* ``get_execution(db, id, per_query=True) -> Execution``; ``get_executions(db, ids)``.
* ``report(db, date_from, date_to, name, tags, measures, labels, lang) -> dict``: exactly
  the JSON of ``evaltool history report -o json``: ``{"rows": [{"id", "name",
  "recorded_at", "values", "label"}], "summary": {"count", "values", "label"}, "from", "to"}``.
* ``diff(db, a, b, measures, test, correction, ...) -> dict``: means, ``compare``'s paired
  test and interval per measure over the shared queries, the queries that moved most.
* ``check(db, name, against, tolerance, measures) -> Verdict``: ``.ok`` is False when the
  latest execution dropped below ``previous``, ``best`` or an execution id.
* ``export(db, fmt, date_from, date_to, name, tags) -> str``: CSV (tidy: execution,
  query, measure, value) or JSONL (an execution per line).

The audit trail (every write made through the server, with its token's name and time;
:mod:`~evaltool.history.audit`):

* ``log_write(conn, *, actor, role, action, subject_kind, subject, detail, at) -> int`` on an
  open ``history.writing()`` connection (the write and its entry in one transaction);
  ``record_write(db, **same)`` opens its own; ``list_audit(db, subject_kind, subject, limit)
  -> list[AuditEntry]``, oldest first.

Controlled tests (the suites ``evaltool suite run`` runs through the benchmark runner):

* ``add_suite(db, name, queries_file=None, backend, measures, settings, *, queries, author) -> Suite``;
  ``list_suites(db, names=None, active_only=False) -> list[Suite]``; ``get_suite(db, name, version=None)``
  (with its queries); ``suite_versions(db, name)``; ``set_active(db, name, active) -> Suite``.
* Editing makes a new version: ``save_queries``, ``put_query``, ``remove_query``, ``import_queries``;
  ``export_text(suite)`` is the JSON queries file ``evaltool bench`` reads.
* ``get_execution(db, id, results=True)`` adds what the search returned per query (bench and suite
  executions): the returned ids in order with scores, title / snippet, latency, error.

>>> import os, tempfile
>>> from evaltool.history import record, list_executions, report
>>> db = os.path.join(tempfile.mkdtemp(), "history.sqlite")
>>> first = record({"summary": {"recip_rank": 0.833, "ndcg_cut_10": 0.72, "P_5": 0.60}}, db=db, name="panel",
...                at="2025-01-28T09:00:00Z")
>>> [(e.id, e.name, e.recorded_at) for e in list_executions(db, "2025-01-28", "2025-01-28")]
[(1, 'panel', '2025-01-28T09:00:00Z')]
>>> report(db, labels=True)["rows"][0]["label"]
'good'
"""

from __future__ import annotations

import importlib

# the public names and their modules, imported on first use (no SQLAlchemy until a history is touched)
_EXPORTS = {
    "History": "store",
    "open_history": "store",
    "default_db": "store",
    "upgrade": "store",
    "record": "recording",
    "parse_tags": "recording",
    "Execution": "queries",
    "list_executions": "queries",
    "get_execution": "queries",
    "get_executions": "queries",
    "report": "comparative",
    "diff": "differences",
    "check": "alerts",
    "Verdict": "alerts",
    "export": "maintenance",
    "prune": "maintenance",
    "AuditEntry": "audit",
    "log_write": "audit",
    "record_write": "audit",
    "list_audit": "audit",
    "Suite": "suites",
    "SuiteQuery": "suites",
    "add_suite": "suites",
    "list_suites": "suites",
    "set_active": "suites",
    "get_suite": "suites",
    "suite_versions": "suites",
    "save_queries": "suites",
    "put_query": "suites",
    "remove_query": "suites",
    "import_queries": "suites",
    "export_text": "suites",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
