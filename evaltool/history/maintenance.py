"""Getting everything out (export) and keeping the history bounded (prune).

``export`` writes every value of the executions selected: CSV is one tidy table, a
row per execution, query and measure (``query_id`` ``all`` for the summary, as in
trec_eval's output), JSONL one execution per line with everything it holds, what the
search returned included (``results``).
``prune`` keeps the ``keep`` newest executions of each name and deletes the others,
each with its values, tags and returned results, in one transaction.
"""

from __future__ import annotations

import csv
import io

from evaltool.errors import HistoryError

EXPORT_FORMATS = ("csv", "jsonl")
CSV_HEADER = ("execution_id", "name", "recorded_at", "query_id", "measure", "value")


def export(db=None, fmt: str = "csv", date_from=None, date_to=None, name: str | None = None, tags=None) -> str:
    """The executions in the range (all by default) as CSV or JSONL text."""
    from evaltool.history.queries import get_executions, list_executions

    if fmt not in EXPORT_FORMATS:
        raise HistoryError(f"--format {fmt!r}: expected one of {', '.join(EXPORT_FORMATS)}")
    ids = [e.id for e in list_executions(db, date_from, date_to, name, tags)]
    executions = get_executions(db, ids, results=fmt == "jsonl") if ids else []
    if fmt == "jsonl":
        from evaltool.report.json import (
            dump_json,  # inf (set_F's 0/0) has no JSON spelling: null, as in -o json
        )

        return "".join(dump_json(e.to_dict(), indent=None) for e in executions)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for e in executions:
        head = (e.id, e.name, e.recorded_at)
        writer.writerows((*head, "all", m, _cell(v)) for m, v in e.summary.items())
        writer.writerows((*head, qid, m, _cell(v)) for qid, values in e.per_query.items() for m, v in values.items())
    return buffer.getvalue()


def _cell(value) -> str:
    return "" if value is None else repr(float(value))


def prune(db=None, keep: int = 100, name: str | None = None) -> list[int]:
    """Delete all but the ``keep`` newest executions of each name (of ``name`` only, if given);
    returns the ids deleted."""
    import sqlalchemy as sa

    from evaltool.history import schema
    from evaltool.history.queries import opened

    if keep < 0:
        raise HistoryError(f"--keep {keep}: expected 0 or more")
    e = schema.executions
    with opened(db) as history, history.writing() as conn:
        query = sa.select(e.c.id, e.c.name).order_by(e.c.name, e.c.recorded_at.desc(), e.c.id.desc())
        if name is not None:
            query = query.where(e.c.name == name)
        seen: dict[str, int] = {}
        doomed = []
        for row in conn.execute(query):
            seen[row.name] = seen.get(row.name, 0) + 1
            if seen[row.name] > keep:
                doomed.append(row.id)
        for start in range(0, len(doomed), 500):
            part = doomed[start : start + 500]
            for table in (
                schema.query_values,
                schema.summary_values,
                schema.tags,
                schema.query_outcomes,
                schema.returned,
            ):
                conn.execute(table.delete().where(table.c.execution_id.in_(part)))
            conn.execute(e.delete().where(e.c.id.in_(part)))
    return sorted(doomed)
