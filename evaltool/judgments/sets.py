"""Judgment sets in the history: who graded which document for which query, versioned.

A set has a name, a :class:`~evaltool.judgments.scales.Scale` and a version number. A
judgment is one rater's grade of one (query, document) pair, with the time it was given and
an optional note. Each change (an import, one judgment in the browser) makes a new version
of the set; a rater's new grade of a pair replaces only that rater's own earlier grade (its
row is kept, marked with the version that replaced it), never another rater's, so every
version of a set can be read back as it was. Giving the same grade again changes nothing
and makes no version.

All writes are one transaction each; on SQLite writers queue for the write lock (WAL), so
many raters judging at once into one file lose nothing.

>>> import os, tempfile
>>> db = os.path.join(tempfile.mkdtemp(), "history.sqlite")
>>> s = create_set(db, "dl19-extra", "graded")
>>> s = add_judgments(db, "dl19-extra", [{"query_id": "q1", "doc_id": "d1", "rater": "ana", "grade": 2},
...                                      {"query_id": "q1", "doc_id": "d1", "rater": "ben", "grade": 3}])
>>> s = add_judgments(db, "dl19-extra", [{"query_id": "q1", "doc_id": "d1", "rater": "ana", "grade": 3}])
>>> s.version, [(j.rater, j.grade) for j in read_judgments(db, "dl19-extra")]
(2, [('ana', 3), ('ben', 3)])
>>> [(j.rater, j.grade) for j in read_judgments(db, "dl19-extra", version=1)]
[('ana', 2), ('ben', 3)]
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from evaltool.errors import EvaltoolError, HistoryError, NotFoundError, quote
from evaltool.judgments.scales import Scale

MAX_NAME = 200  # characters of a set's, rater's, query's or document's name
MAX_NOTE = 2000
_SPACE = re.compile(r"\s")


class JudgmentConflict(HistoryError):
    """The change cannot be made in the set's present state (its name taken)."""

    status = 409


@dataclass
class JudgmentSet:
    """A set's declaration: its name, scale and current version."""

    name: str
    scale: Scale
    version: int
    created_at: str
    author: str | None = None
    description: str | None = None

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "scale": self.scale.describe(),
            "labels": [{"label": name, "grade": grade} for name, grade in self.scale.labels],
            "version": self.version,
            "created_at": self.created_at,
            "author": self.author,
            "description": self.description,
        }


@dataclass(frozen=True)
class Judgment:
    """One rater's grade of one pair; ``since`` is the set version it was given in."""

    query_id: str
    doc_id: str
    rater: str
    grade: int
    label: str | None = None
    at: str | None = None
    note: str | None = None
    since: int | None = None

    def to_dict(self) -> dict:
        return {
            "query_id": self.query_id,
            "doc_id": self.doc_id,
            "rater": self.rater,
            "grade": self.grade,
            "label": self.label,
            "at": self.at,
            "note": self.note,
        }


def check_name(value, what: str, spaces: bool = True) -> str:
    """``value`` as a non-empty name of at most :data:`MAX_NAME` characters (``spaces=False``: none)."""
    if not isinstance(value, str) or not value.strip():
        raise EvaltoolError(f"{what}: expected a non-empty name, found {quote(str(value))}")
    if len(value) > MAX_NAME:
        raise EvaltoolError(f"{what}: {quote(value)} is longer than {MAX_NAME} characters")
    if not spaces and _SPACE.search(value):
        raise EvaltoolError(f"{what}: {quote(value)} holds a space; qrels ids are single words")
    return value if not spaces else value.strip()


def _row_set(row) -> JudgmentSet:
    from evaltool.history.queries import damaged

    try:
        scale = Scale.from_json(row.scale)
    except (TypeError, ValueError, KeyError):
        raise damaged(row.scale, f"judgment set {row.name}: scale", "a JSON scale") from None
    return JudgmentSet(row.name, scale, row.version, row.created_at, row.author, row.description)


def create_set(
    db, name: str, scale="graded", *, description: str | None = None, author: str | None = None, audit=None
) -> JudgmentSet:
    """Declare a new, empty judgment set (version 0) on ``scale`` (a :class:`Scale` or its text:
    ``binary``, ``graded``, ``labels:NAME=GRADE,...``). ``audit(conn)``, if given, runs in the same
    transaction (the server records who made the change)."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.dates import now, stamp
    from evaltool.history.queries import opened

    name = check_name(name, "judgment set")
    scale = scale if isinstance(scale, Scale) else Scale.parse(scale)
    s = schema.judgment_sets
    with opened(db, create=True) as history, history.writing() as conn:
        if conn.execute(sa.select(s.c.name).where(s.c.name == name)).first():
            raise JudgmentConflict(f"a judgment set named {name!r} exists already (see 'evaltool judgments list')")
        conn.execute(
            s.insert().values(
                name=name,
                scale=scale.to_json(),
                version=0,
                created_at=stamp(now()),
                author=author,
                description=description,
            )
        )
        if audit is not None:
            audit(conn)
    return get_set(db, name)


def read_set(conn, name: str) -> JudgmentSet:
    """A set's declaration on an open connection (NotFoundError when there is none)."""
    import sqlalchemy as sa

    from evaltool.history import schema

    row = conn.execute(sa.select(schema.judgment_sets).where(schema.judgment_sets.c.name == name)).first()
    if row is None:
        raise NotFoundError(f"no judgment set named {name!r} (see 'evaltool judgments list')")
    return _row_set(row)


def get_set(db, name: str) -> JudgmentSet:
    """The set named ``name``."""
    from evaltool.history.queries import opened

    with opened(db) as history, history.reading() as conn:
        return read_set(conn, name)


def list_sets(db=None) -> list[JudgmentSet]:
    """Every judgment set, by name."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.queries import opened

    s = schema.judgment_sets
    with opened(db) as history, history.reading() as conn:
        return [_row_set(row) for row in conn.execute(sa.select(s).order_by(s.c.name))]


def set_versions(db, name: str) -> list[dict]:
    """Every version of a set, oldest first: ``{"version", "created_at", "author", "change"}`` (the change
    a JSON object: ``{"what": "imported", "file", "judgments"}``, ``{"what": "judged", "query", "doc"}``...)."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.queries import opened

    v = schema.judgment_set_versions
    with opened(db) as history, history.reading() as conn:
        read_set(conn, name)
        rows = conn.execute(sa.select(v).where(v.c.set_name == name).order_by(v.c.version)).all()
    return [
        {"version": r.version, "created_at": r.created_at, "author": r.author, "change": json.loads(r.change)}
        for r in rows
    ]


def checked_judgment(item, scale: Scale, at: str) -> Judgment:
    """One judgment given as a dict (or a Judgment), validated against the scale; ``at`` is its time
    unless the item gives one (ISO-8601)."""
    if isinstance(item, Judgment):
        item = item.to_dict()
    if not isinstance(item, dict):
        raise EvaltoolError(f"a judgment is an object with query_id, doc_id, rater and grade; found {quote(str(item))}")
    query_id = check_name(item.get("query_id"), "query_id", spaces=False)
    doc_id = check_name(item.get("doc_id"), "doc_id", spaces=False)
    rater = check_name(item.get("rater"), "rater")
    value = item.get("label") if item.get("grade") is None else item.get("grade")
    if value is None:
        raise EvaltoolError(f"judgment of {query_id} {doc_id} by {rater}: no grade nor label")
    try:
        grade, label = scale.judge(value)
    except EvaltoolError as exc:
        raise EvaltoolError(f"judgment of {query_id} {doc_id} by {rater}: {exc}") from None
    note = item.get("note")
    if note is not None and (not isinstance(note, str) or len(note) > MAX_NOTE):
        raise EvaltoolError(
            f"judgment of {query_id} {doc_id} by {rater}: a note is text of at most {MAX_NOTE} characters"
        )
    when = item.get("at")
    if when:
        from evaltool.history.dates import parse_when, stamp

        when = stamp(parse_when(when, f"judgment of {query_id} {doc_id} by {rater}: at"))
    return Judgment(query_id, doc_id, rater, grade, label, when or at, note or None)


def add_judgments(
    db, name: str, items, *, author: str | None = None, change: dict | None = None, audit=None
) -> JudgmentSet:
    """Add ``items`` (dicts with ``query_id``, ``doc_id``, ``rater``, ``grade`` or ``label``, optional
    ``note`` and ``at``) to the set, as one new version; returns the set. A rater's grade of a pair
    replaces that rater's earlier one; a pair given twice in ``items`` by the same rater keeps the
    last. Nothing changes (and no version is made) when every item repeats what the set holds.
    ``change`` describes the version (default ``{"what": "judged", ...}``)."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.dates import now, stamp
    from evaltool.history.queries import opened

    at = stamp(now())
    j, s, v = schema.judgments, schema.judgment_sets, schema.judgment_set_versions
    with opened(db) as history, history.writing() as conn:
        current = read_set(conn, name)
        wanted: dict[tuple[str, str, str], Judgment] = {}
        for item in items:
            judgment = checked_judgment(item, current.scale, at)
            wanted[(judgment.query_id, judgment.doc_id, judgment.rater)] = judgment
        if not wanted:
            return current
        raters = sorted({key[2] for key in wanted})
        held = {
            (r.query_id, r.doc_id, r.rater): (r.grade, r.label, r.note)
            for r in conn.execute(
                sa.select(j.c.query_id, j.c.doc_id, j.c.rater, j.c.grade, j.c.label, j.c.note).where(
                    j.c.set_name == name, j.c.until.is_(None), j.c.rater.in_(raters)
                )
            )
        }
        changed = [jd for key, jd in wanted.items() if held.get(key) != (jd.grade, jd.label, jd.note)]
        if not changed:
            return current
        version = current.version + 1
        replaced = [
            {"q": jd.query_id, "d": jd.doc_id, "r": jd.rater}
            for jd in changed
            if (jd.query_id, jd.doc_id, jd.rater) in held
        ]
        if replaced:
            conn.execute(
                j.update()
                .where(
                    j.c.set_name == name,
                    j.c.until.is_(None),
                    j.c.query_id == sa.bindparam("q"),
                    j.c.doc_id == sa.bindparam("d"),
                    j.c.rater == sa.bindparam("r"),
                )
                .values(until=version),
                replaced,
            )
        conn.execute(
            j.insert(),
            [
                {
                    "set_name": name,
                    "query_id": jd.query_id,
                    "doc_id": jd.doc_id,
                    "rater": jd.rater,
                    "since": version,
                    "until": None,
                    "grade": jd.grade,
                    "label": jd.label,
                    "at": jd.at,
                    "note": jd.note,
                }
                for jd in changed
            ],
        )
        if change is None:
            first = changed[0]
            change = (
                {"what": "judged", "query": first.query_id, "doc": first.doc_id, "grade": first.grade}
                if len(changed) == 1
                else {"what": "judged", "judgments": len(changed)}
            )
        conn.execute(
            v.insert().values(
                set_name=name, version=version, created_at=at, author=author, change=json.dumps(change, sort_keys=True)
            )
        )
        conn.execute(s.update().where(s.c.name == name).values(version=version))
        if audit is not None:
            audit(conn)
    current.version = version
    return current


def read_judgments(
    db, name: str, version: int | None = None, *, rater: str | None = None, query_id: str | None = None
) -> list[Judgment]:
    """The judgments of a set as of ``version`` (default: the current one), sorted by query, document,
    rater; ``rater`` / ``query_id`` keep one rater's or one query's."""
    from evaltool.history.queries import opened

    with opened(db) as history, history.reading() as conn:
        return judgments_of(conn, name, version, rater=rater, query_id=query_id)


def judgments_of(
    conn, name: str, version: int | None = None, *, rater: str | None = None, query_id: str | None = None
) -> list[Judgment]:
    """:func:`read_judgments` on an open connection."""
    import sqlalchemy as sa

    from evaltool.history import schema

    current = read_set(conn, name)
    j = schema.judgments
    query = sa.select(j).where(j.c.set_name == name)
    if version is None or int(version) == current.version:
        query = query.where(j.c.until.is_(None))
    else:
        version = int(version)
        if not 0 <= version <= current.version:
            raise NotFoundError(f"judgment set {name!r} has versions 0 to {current.version}, not {version}")
        query = query.where(j.c.since <= version, sa.or_(j.c.until.is_(None), j.c.until > version))
    if rater is not None:
        query = query.where(j.c.rater == rater)
    if query_id is not None:
        query = query.where(j.c.query_id == query_id)
    rows = conn.execute(query).all()
    found = [Judgment(r.query_id, r.doc_id, r.rater, r.grade, r.label, r.at, r.note, r.since) for r in rows]
    return sorted(found, key=lambda jd: (jd.query_id, jd.doc_id, jd.rater))


def raters(judgments) -> list[str]:
    """The raters of ``judgments``, sorted."""
    return sorted({jd.rater for jd in judgments})
