"""Controlled tests: a named queries file with its expected ids and a backend to run it against.

A suite is what ``evaltool bench`` needs (a queries file, ``--backend`` and its other
options), kept in the history so that ``evaltool suite run`` can run every active
one and record each execution under the suite's name. File paths (the queries file,
a TREC run given as the backend) are stored absolute, so a suite runs from any folder.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

from evaltool.errors import HistoryError
from evaltool.measures.sets import DEFAULT_SETS

# a suite's measures unless -m says otherwise: the comparative report's (MRR, nDCG@10, Precision@5), whose
# output names are the ones the default label thresholds are set on
SUITE_MEASURES = DEFAULT_SETS["suite"]


@dataclass
class Suite:
    name: str
    queries_file: str
    backend: str
    measures: list[str]
    settings: dict  # the other bench options: limit, timeout, concurrency, retries, relevance_level, ...
    active: bool
    created_at: str

    def to_dict(self) -> dict:
        return asdict(self)


def _suite(row) -> Suite:
    from evaltool.history.queries import damaged, json_object, json_value, named, text_value

    where = f"suite {named(row.name)}"
    measures = json_value(row.measures, f"{where}: measures", "a JSON list of measure names")
    if not isinstance(measures, list) or not all(isinstance(m, str) for m in measures):
        raise damaged(row.measures, f"{where}: measures", "a JSON list of measure names")
    settings = json_object(row.settings, f"{where}: settings")
    return Suite(text_value(row.name, "a suite name"), text_value(row.queries_file, f"{where}: queries_file"),
                 text_value(row.backend, f"{where}: backend"), measures, settings, bool(row.active),
                 text_value(row.created_at, f"{where}: created_at"))


def add_suite(db, name: str, queries_file, backend: str, measures=(), settings=None) -> Suite:
    """Define a suite (a name not in use yet); returns it as stored. ``measures`` default to
    :data:`SUITE_MEASURES`; ``settings`` are :class:`evaltool.bench.BenchSettings` fields."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.dates import now, stamp
    from evaltool.history.store import History, open_history

    name = (name or "").strip()
    if not name:
        raise HistoryError("suite add: a suite needs a non-empty NAME")
    queries_file = os.fspath(queries_file)
    if not os.path.isfile(queries_file):
        raise HistoryError(f"suite add {name}: {queries_file}: no such file (the suite's queries file)")
    if not backend or not backend.strip():
        raise HistoryError(f"suite add {name}: --backend is empty; expected module:function, a URL or a run file")
    from evaltool.bench.queries import load_queries
    from evaltool.bench.scoring import plan_measures

    load_queries(queries_file)  # a suite that cannot run is refused now, with the runner's own message
    measures = list(measures) or list(SUITE_MEASURES)
    plan_measures(measures)
    if "://" not in backend and os.path.isfile(backend):
        backend = os.path.abspath(backend)
    settings = dict(settings or {})
    if settings.get("corpus"):
        settings["corpus"] = os.path.abspath(settings["corpus"])
    suite = Suite(name, os.path.abspath(queries_file), backend, measures, settings, True,
                  stamp(now()))
    history = open_history(db, create=True)
    try:
        with history.writing() as conn:
            taken = conn.execute(sa.select(schema.suites.c.name).where(schema.suites.c.name == name)).first()
            if taken:
                raise HistoryError(f"suite add: a suite named {name!r} exists already (see 'evaltool suite list')")
            row = suite.to_dict()
            row.update(measures=json.dumps(suite.measures), settings=json.dumps(suite.settings, sort_keys=True))
            conn.execute(schema.suites.insert().values(**row))
    finally:
        if not isinstance(db, History):
            history.close()
    return suite


def list_suites(db=None, names=None, active_only: bool = False) -> list[Suite]:
    """Suites by name; ``names`` picks some (an unknown name is an error), ``active_only`` the enabled."""
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
            raise HistoryError(f"no suite named {unknown[0]!r} (suites: {listed})")
        suites = [known[n] for n in dict.fromkeys(names)]
    return [s for s in suites if s.active] if active_only else suites


def set_active(db, name: str, active: bool) -> Suite:
    """Enable or disable a suite (``suite enable`` / ``suite disable``)."""
    from evaltool.history import schema
    from evaltool.history.queries import opened

    with opened(db) as history, history.writing() as conn:
        changed = conn.execute(schema.suites.update().where(schema.suites.c.name == name).values(active=active))
        if changed.rowcount == 0:
            raise HistoryError(f"no suite named {name!r} (see 'evaltool suite list')")
    return list_suites(db, [name])[0]
