"""The audit trail: every write made through the server, with the name of the token that made it and when.

A write and its audit entry are one transaction: code that changes the history on a
request's behalf calls :func:`log_write` with the connection of its own
``history.writing()`` block, so an entry exists exactly when the write it describes
does. :func:`record_write` is the same for a caller without an open transaction
(it opens one). :func:`list_audit` reads a subject's entries back, oldest first.

An entry is ``(id, at, actor, role, action, subject_kind, subject, detail)``: ``actor``
is the token's name (never the secret), ``role`` what the token may do (``operator``
or ``rater``), ``action`` a short verb (``record``, ``create``, ``edit``, ``run``,
``cancel``, ``judge``...), the subject what was written (``execution`` 12, ``suite``
"panel"), and ``detail`` a small JSON object about the request (bounded: a detail
longer than :data:`MAX_DETAIL` characters once encoded is refused, since the trail is
not where data is stored).

>>> import os, tempfile
>>> from evaltool.history.audit import list_audit, record_write
>>> db = os.path.join(tempfile.mkdtemp(), "history.sqlite")
>>> first = record_write(db, actor="ci", role="operator", action="record", subject_kind="execution",
...                      subject=1, detail={"name": "nightly"}, at="2025-01-28T09:00:00Z")
>>> [(e.actor, e.action, e.subject, e.detail, e.at) for e in list_audit(db, "execution", 1)]
[('ci', 'record', '1', {'name': 'nightly'}, '2025-01-28T09:00:00Z')]
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from evaltool.errors import HistoryError

ROLES = ("operator", "rater")
MAX_DETAIL = 4096  # characters of a detail's JSON
MAX_TEXT = 200  # characters of an actor, action, kind or subject


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: str  # UTC, ISO-8601, fixed width
    actor: str
    role: str
    action: str
    subject_kind: str
    subject: str
    detail: dict | None

    def to_dict(self) -> dict:
        return asdict(self)


def _text(value, what: str) -> str:
    text = str(value).strip() if value is not None else ""
    if not text:
        raise HistoryError(f"audit: {what} is empty")
    if len(text) > MAX_TEXT:
        raise HistoryError(f"audit: {what} of {len(text)} characters; at most {MAX_TEXT}")
    return text


def log_write(
    conn, *, actor: str, role: str, action: str, subject_kind: str, subject, detail: dict | None = None, at=None
) -> int:
    """Add one entry on ``conn``, an open write transaction (``history.writing()``), and return its id.

    ``at`` defaults to now; ``detail`` is a JSON-ready dict or None. Raises HistoryError for an
    unknown role, an empty or over-long field, or a detail that is not a small JSON object.
    """
    from evaltool.history import schema
    from evaltool.history.dates import now, parse_when, stamp

    if role not in ROLES:
        raise HistoryError(f"audit: role {role!r}; expected one of {', '.join(ROLES)}")
    encoded = None
    if detail is not None:
        if not isinstance(detail, dict):
            raise HistoryError(f"audit: detail must be a JSON object, not {type(detail).__name__}")
        try:
            encoded = json.dumps(detail, sort_keys=True, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise HistoryError(f"audit: detail is not JSON-ready ({exc})") from None
        if len(encoded) > MAX_DETAIL:
            raise HistoryError(f"audit: detail of {len(encoded)} characters; at most {MAX_DETAIL}")
    row = {
        "at": stamp(parse_when(at, "at") if at is not None else now()),
        "actor": _text(actor, "actor"),
        "role": role,
        "action": _text(action, "action"),
        "subject_kind": _text(subject_kind, "subject kind"),
        "subject": _text(subject, "subject"),
        "detail": encoded,
    }
    return int(conn.execute(schema.audit.insert().values(**row)).inserted_primary_key[0])


def record_write(db, **entry) -> int:
    """:func:`log_write` in a transaction of its own on the history ``db`` (created if need be)."""
    from evaltool.history.store import History, open_history

    history = open_history(db, create=True)
    try:
        with history.writing() as conn:
            return log_write(conn, **entry)
    finally:
        if not isinstance(db, History):
            history.close()


def list_audit(db, subject_kind: str | None = None, subject=None, *, limit: int | None = None) -> list[AuditEntry]:
    """Entries oldest first: of one subject (``subject_kind`` and ``subject``), of one kind, or all;
    ``limit`` keeps the newest ``limit`` of them (still oldest first)."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.store import History, open_history

    a = schema.audit
    query = sa.select(a)
    if subject_kind is not None:
        query = query.where(a.c.subject_kind == str(subject_kind))
    if subject is not None:
        query = query.where(a.c.subject == str(subject))
    query = query.order_by(a.c.id.desc())
    if limit is not None:
        query = query.limit(int(limit))
    history = open_history(db)  # not history.queries.opened: the recording side imports this module
    try:
        with history.reading() as conn:
            rows = conn.execute(query).all()
    finally:
        if not isinstance(db, History):
            history.close()
    return [
        AuditEntry(
            r.id,
            r.at,
            r.actor,
            r.role,
            r.action,
            r.subject_kind,
            r.subject,
            json.loads(r.detail) if r.detail is not None else None,
        )
        for r in reversed(rows)
    ]
