"""The steps that bring an older history to the current schema, one per version.

``MIGRATIONS[n]`` turns a version-``n`` history into version ``n + 1`` on an open transaction;
:func:`evaltool.history.store.upgrade` runs them in order (``evaltool history upgrade``). They live
apart from :mod:`evaltool.history.schema` (what a history is now) because a step may need to read
content in, as version 5 reads each suite's queries file, and the schema must not depend on that.
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa

from evaltool.errors import EvaltoolError
from evaltool.history import schema
from evaltool.history.schema import (
    add_column,
    audit,
    executions,
    jobs,
    judging_tasks,
    judgment_set_versions,
    judgment_sets,
    judgments,
    query_outcomes,
    rebuild_sqlite_table,
    returned,
    schema_table,
    suite_queries,
    suite_versions,
    suites,
    task_documents,
    task_queries,
)
from evaltool.history.suite_content import write_version, parse_queries_file


def _add_suites(conn) -> None:
    _VERSION_2_SUITES.create(conn)


# the suites table as versions 2 to 4 have it (a queries file's path); version 5 replaces it
_VERSION_2_SUITES = sa.Table(
    "suites",
    sa.MetaData(),
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("queries_file", sa.Text, nullable=False),
    sa.Column("backend", sa.Text, nullable=False),
    sa.Column("measures", sa.Text, nullable=False),
    sa.Column("settings", sa.Text, nullable=False),
    sa.Column("active", sa.Boolean, nullable=False),
    sa.Column("created_at", sa.String(20), nullable=False),
)


def _suites_in_the_history(conn) -> None:
    """Version 4 -> 5: each suite's queries file is read into the history (see the module docstring)."""
    old = [row._asdict() for row in conn.execute(sa.select(_VERSION_2_SUITES))]
    _VERSION_2_SUITES.drop(conn)
    stored = {column["name"] for column in sa.inspect(conn).get_columns("executions")}
    if "suite_version" not in stored:  # a version-4 history (one migrated from 3 got it in its rebuild)
        if conn.dialect.name == "sqlite":
            rebuild_sqlite_table(conn, executions)  # the column where a fresh table has it
        else:
            add_column(conn, executions, "suite_version")
    for table in (suites, suite_versions, suite_queries, query_outcomes, returned, jobs):
        table.create(conn)
    for row in old:
        import_version_2_suite(conn, row)


def _add_audit(conn) -> None:
    audit.create(conn)


def _ids_never_reused_and_a_change_counter(conn) -> None:
    if conn.dialect.name == "sqlite":
        rebuild_sqlite_table(conn, executions)
        rebuild_sqlite_table(conn, schema_table)  # the very DDL of a fresh one, which ADD COLUMN does not write
    else:
        add_column(conn, schema_table, "changes")
    # dates before the year 1000 were stored without the year's leading zeros ('999-06-01T...'), and so
    # sorted after every other: given their fixed width, they sort where they belong
    e = executions
    short = conn.execute(sa.select(e.c.id, e.c.recorded_at).where(sa.func.length(e.c.recorded_at) < 20)).all()
    for row in short:
        conn.execute(e.update().where(e.c.id == row.id).values(recorded_at=row.recorded_at.rjust(20, "0")))


def import_version_2_suite(conn, row: dict) -> None:
    """The schema upgrade's step for one suite of a version-2 history (a queries file's path): its
    file is read in as version 1; when it cannot be (missing, not a valid queries file) the suite is
    kept, empty, with the path in ``source`` and the reason in ``problem``. Executions of the suite
    whose queries fingerprint is the file's are marked as having run that version."""
    path, problem, queries, digest = row["queries_file"], None, [], None
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        digest = hashlib.sha256(data).hexdigest()
        queries = parse_queries_file(path, data)
    except OSError as exc:
        problem = (
            f"its queries file {path} could not be read when the history was upgraded "
            f"({exc.strerror or exc}); import it with 'evaltool suite import {row['name']} FILE'"
        )
    except EvaltoolError as exc:
        problem = (
            f"its queries file {path} was not valid when the history was upgraded ({str(exc)[:300]}); "
            f"import a corrected one with 'evaltool suite import {row['name']} FILE'"
        )
    conn.execute(
        schema.suites.insert().values(
            name=row["name"],
            backend=row["backend"],
            measures=row["measures"],
            settings=row["settings"],
            active=row["active"],
            created_at=row["created_at"],
            version=1,
            source=path,
            problem=problem,
        )
    )
    write_version(
        conn,
        row["name"],
        1,
        queries,
        row["created_at"],
        None,
        {"what": "upgraded" if problem is None else "upgrade_failed", "file": path},
    )
    if digest is not None:
        e = schema.executions
        conn.execute(
            e.update()
            .where(e.c.name == row["name"], e.c.kind == "suite", e.c.queries_sha256 == digest)
            .values(suite_version=1)
        )


def _judgments(conn) -> None:
    """Version 5 -> 6: the judgment sets, their judgments and the judging tasks (new tables, all empty)."""
    for table in (judgment_sets, judgment_set_versions, judgments, judging_tasks, task_queries, task_documents):
        table.create(conn)


# version n -> the step that turns a version-n history into version n + 1 (on an open transaction)
MIGRATIONS = {
    1: _add_suites,
    2: _add_audit,
    3: _ids_never_reused_and_a_change_counter,
    4: _suites_in_the_history,
    5: _judgments,
}
