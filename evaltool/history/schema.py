"""The tables of the history, its schema version and the forward migrations.

A history holds one ``evaltool_schema`` row: the version of its layout and a counter of
the write transactions committed to it. A fresh history is created at
:data:`CURRENT_VERSION`; an older one is brought forward only when asked (``evaltool
history upgrade``), by the steps of :data:`evaltool.history.migrations.MIGRATIONS` in one transaction, so that a
reader never changes a shared database behind its owner's back; a newer one is refused,
since this evaltool cannot know what it would lose. Every change to the tables below is
a new version with a migration step, after which the database has exactly the tables,
columns and indexes a fresh one has; the first version's file stays in the tests
(``tests/history/fixtures``) so the chain is exercised from the start.

Version 1: executions, their summary values, per-query values and tags.
Version 2: controlled tests (``suites``): a queries file and a backend, run by ``suite run``.
Version 3: the audit trail (``audit``): who wrote what and when, one row per write made
through the server (:mod:`evaltool.history.audit`).
Version 4: execution ids are never reused (SQLite ``AUTOINCREMENT``; PostgreSQL's sequence
never went back), ``evaltool_schema.changes`` counts the writes, so that a reader
(the dashboard's cache) knows when anything changed, and dates before the year 1000 get
the leading zeros of their year.
Version 5: a suite's queries and ground truth live in the history, versioned (``suite_versions``,
``suite_queries``; ``executions.suite_version`` names the version an execution ran); what the search
returned per query (``query_outcomes``, ``returned``); the server's queue of suite runs (``jobs``).
The upgrade reads each suite's queries file in; a file that cannot be read leaves the suite empty
with the reason in ``suites.problem`` and the path in ``suites.source``.
Version 6: judgments made by people (:mod:`evaltool.judgments`): named, versioned judgment sets with a
declared scale (``judgment_sets``, ``judgment_set_versions``), each rater's grade of a (query, document)
pair with the versions it held in (``judgments``), and the judging tasks that say what to judge
(``judging_tasks``, ``task_queries``, ``task_documents``).

Dates are ISO-8601 text in UTC (``2025-01-28T09:30:00Z``, one fixed width), so they
sort and compare as text on every backend.
"""

from __future__ import annotations

import sqlalchemy as sa

CURRENT_VERSION = 6

metadata = sa.MetaData()

schema_table = sa.Table(
    "evaltool_schema",
    metadata,
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("changes", sa.Integer, nullable=False, server_default="0"),  # write transactions committed
)

executions = sa.Table(
    "executions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("recorded_at", sa.String(20), nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),  # eval | compare | bench | suite
    sa.Column("note", sa.Text),
    sa.Column("evaltool_version", sa.String(40), nullable=False),
    sa.Column("query_count", sa.Integer),
    sa.Column("options", sa.Text, nullable=False),  # JSON: the options the values were computed with
    sa.Column("thresholds", sa.Text, nullable=False),  # JSON: the label thresholds in force
    sa.Column("sources", sa.Text, nullable=False),  # JSON: qrels, run, queries, backend as given
    sa.Column("qrels_sha256", sa.String(64)),
    sa.Column("run_sha256", sa.String(64)),
    sa.Column("queries_sha256", sa.String(64)),
    sa.Column("git_commit", sa.String(64)),
    sa.Column("suite_version", sa.Integer),  # the version of the suite (of the same name) a suite execution ran
    sa.Index("executions_recorded_at", "recorded_at"),
    sa.Index("executions_name", "name", "recorded_at"),
    sqlite_autoincrement=True,  # an id freed by prune is never given again (PostgreSQL's sequence never is)
)

summary_values = sa.Table(
    "summary_values",
    metadata,
    sa.Column("execution_id", sa.Integer, sa.ForeignKey("executions.id"), primary_key=True),
    sa.Column("position", sa.Integer, nullable=False),  # the measures' order in the evaluation
    sa.Column("measure", sa.Text, primary_key=True),
    sa.Column("value", sa.Float),  # NULL: not a number (trec_eval's nan)
    sa.Column("aggregate", sa.String(20)),  # mean | sum | geometric | NULL when unknown
)

query_values = sa.Table(
    "query_values",
    metadata,
    sa.Column("execution_id", sa.Integer, sa.ForeignKey("executions.id"), primary_key=True),
    sa.Column("query_id", sa.Text, primary_key=True),
    sa.Column("measure", sa.Text, primary_key=True),
    sa.Column("value", sa.Float),
)

tags = sa.Table(
    "tags",
    metadata,
    sa.Column("execution_id", sa.Integer, sa.ForeignKey("executions.id"), primary_key=True),
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
    sa.Index("tags_key_value", "key", "value"),
)

suites = sa.Table(
    "suites",
    metadata,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("backend", sa.Text, nullable=False),
    sa.Column("measures", sa.Text, nullable=False),  # JSON list of -m values; [] for the runner's default
    sa.Column("settings", sa.Text, nullable=False),  # JSON: the other bench options (limit, timeout, ...)
    sa.Column("active", sa.Boolean, nullable=False),
    sa.Column("created_at", sa.String(20), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),  # the current version of its queries
    sa.Column("source", sa.Text),  # the file its queries were last imported from, if any
    sa.Column("problem", sa.Text),  # why it cannot run (its queries file was unreadable at the upgrade)
)

suite_versions = sa.Table(
    "suite_versions",
    metadata,
    sa.Column("suite", sa.Text, primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("created_at", sa.String(20), nullable=False),
    sa.Column("author", sa.Text),  # the token's name of a change made through the server
    sa.Column("change", sa.Text, nullable=False),  # what changed, one line
)

suite_queries = sa.Table(
    "suite_queries",
    metadata,
    sa.Column("suite", sa.Text, primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("query_id", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("category", sa.Text),
    sa.Column("difficulty", sa.Text),
    sa.Column("expected_field", sa.String(20), nullable=False),  # relevant_ids | expected_modules | qrels
    sa.Column("judgments", sa.Text, nullable=False),  # JSON {doc id: grade}, in the order given
    sa.Column("fields", sa.Text, nullable=False),  # JSON: every other field of the query (version, metadata)
)

query_outcomes = sa.Table(
    "query_outcomes",
    metadata,
    sa.Column("execution_id", sa.Integer, primary_key=True),
    sa.Column("query_id", sa.Text, primary_key=True),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("text", sa.Text),
    sa.Column("judgments", sa.Text),  # JSON {doc id: grade}: the ground truth the query was scored against
    sa.Column("latency_ms", sa.Float),
    sa.Column("error", sa.Text),
    sa.Column("returned", sa.Integer, nullable=False),  # ids the search returned (more than stored if cut)
)

returned = sa.Table(
    "returned",
    metadata,
    sa.Column("execution_id", sa.Integer, primary_key=True),
    sa.Column("query_id", sa.Text, primary_key=True),
    sa.Column("rank", sa.Integer, primary_key=True),  # 1, 2, ...
    sa.Column("doc_id", sa.Text, nullable=False),
    sa.Column("score", sa.Float),
    sa.Column("title", sa.Text),
    sa.Column("snippet", sa.Text),
)

jobs = sa.Table(
    "jobs",
    metadata,
    # AUTOINCREMENT: a job's number is never given to another, even after the newest is deleted
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("suite", sa.Text, nullable=False),
    sa.Column("suite_version", sa.Integer, nullable=False),
    sa.Column(
        "state", sa.String(20), nullable=False
    ),  # queued | running | cancelling | done | failed | cancelled | interrupted
    sa.Column("author", sa.Text),
    sa.Column("created_at", sa.String(20), nullable=False),
    sa.Column("started_at", sa.String(20)),
    sa.Column("finished_at", sa.String(20)),
    sa.Column("done", sa.Integer, nullable=False),
    sa.Column("total", sa.Integer, nullable=False),
    sa.Column("failures", sa.Integer, nullable=False),
    sa.Column("elapsed_seconds", sa.Float),  # of the runs before a resume, plus the current one once ended
    sa.Column("execution_id", sa.Integer),
    sa.Column("error", sa.Text),
    sa.Column("work_dir", sa.Text),  # the runner's folder: its checkpoint, for a resume
    sa.Index("jobs_suite_state", "suite", "state"),
    sqlite_autoincrement=True,
)

audit = sa.Table(
    "audit",
    metadata,
    # AUTOINCREMENT: an entry's number is never given to another, even after the newest is deleted
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", sa.String(20), nullable=False),
    sa.Column("actor", sa.Text, nullable=False),  # the name of the token that wrote
    sa.Column("role", sa.String(20), nullable=False),  # operator | rater
    sa.Column("action", sa.String(40), nullable=False),  # record | create | edit | run | cancel | judge | ...
    sa.Column("subject_kind", sa.String(40), nullable=False),  # execution | suite | job | ...
    sa.Column("subject", sa.Text, nullable=False),  # its id or name, as text
    sa.Column("detail", sa.Text),  # JSON object: what was asked (short), or NULL
    sa.Index("audit_subject", "subject_kind", "subject", "id"),
    sqlite_autoincrement=True,
)

judgment_sets = sa.Table(
    "judgment_sets",
    metadata,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("scale", sa.Text, nullable=False),  # JSON: {"kind": binary | graded | labels, "labels": {label: grade}}
    sa.Column("version", sa.Integer, nullable=False),  # the current version: each change makes one
    sa.Column("created_at", sa.String(20), nullable=False),
    sa.Column("author", sa.Text),
    sa.Column("description", sa.Text),
)

judgment_set_versions = sa.Table(
    "judgment_set_versions",
    metadata,
    sa.Column("set_name", sa.Text, primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("created_at", sa.String(20), nullable=False),
    sa.Column("author", sa.Text),  # the rater or token that made the change
    sa.Column("change", sa.Text, nullable=False),  # JSON {"what": ..., ...}: what changed, one line
)

judgments = sa.Table(
    "judgments",
    metadata,
    sa.Column("set_name", sa.Text, primary_key=True),
    sa.Column("query_id", sa.Text, primary_key=True),
    sa.Column("doc_id", sa.Text, primary_key=True),
    sa.Column("rater", sa.Text, primary_key=True),
    sa.Column("since", sa.Integer, primary_key=True),  # the set version this grade was given in
    sa.Column("until", sa.Integer),  # the version that replaced it (the same rater's new grade); NULL: current
    sa.Column("grade", sa.Integer, nullable=False),
    sa.Column("label", sa.Text),  # the label chosen, on a scale of declared labels
    sa.Column("at", sa.String(20), nullable=False),
    sa.Column("note", sa.Text),
    sa.Index("judgments_current", "set_name", "until", "query_id", "doc_id"),
)

judging_tasks = sa.Table(
    "judging_tasks",
    metadata,
    # AUTOINCREMENT: a task's number is never given to another, even after the newest is deleted
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("set_name", sa.Text, nullable=False),  # where its judgments go
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("created_at", sa.String(20), nullable=False),
    sa.Column("author", sa.Text),
    sa.Column("ratings_wanted", sa.Integer, nullable=False),  # raters per pair before it counts as done
    sa.Column("source", sa.Text, nullable=False),  # JSON: how the pool was made (method, runs, execution)
    sqlite_autoincrement=True,
)

task_queries = sa.Table(
    "task_queries",
    metadata,
    sa.Column("task_id", sa.Integer, primary_key=True),
    sa.Column("query_id", sa.Text, primary_key=True),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("text", sa.Text),
    sa.Column("description", sa.Text),
    sa.Column("narrative", sa.Text),
)

task_documents = sa.Table(
    "task_documents",
    metadata,
    sa.Column("task_id", sa.Integer, primary_key=True),
    sa.Column("query_id", sa.Text, primary_key=True),
    sa.Column("doc_id", sa.Text, primary_key=True),
    sa.Column("position", sa.Integer, nullable=False),  # the order shown, within its query
    sa.Column("title", sa.Text),  # what the backend returned, when the pool came from an execution
    sa.Column("snippet", sa.Text),
)

TABLES = tuple(metadata.tables)


def add_column(conn, table: sa.Table, name: str) -> None:
    """Add ``table``'s declared column ``name`` to the stored table, with the DDL a fresh table has."""
    column = sa.schema.CreateColumn(table.c[name]).compile(dialect=conn.dialect)
    conn.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {column}")


def rebuild_sqlite_table(conn, table: sa.Table) -> None:
    """Give a stored SQLite table exactly the declared layout (what ALTER TABLE cannot: AUTOINCREMENT, a
    column where a fresh table has it), rows kept: the old table renamed aside, the declared one created
    with its indexes, the rows copied, the old one dropped. The rename leaves other tables' foreign keys
    naming the table (legacy_alter_table), so they hold the new one."""
    old = f"{table.name}_before_upgrade"
    kept = [row[1] for row in conn.exec_driver_sql(f"PRAGMA table_info({table.name})")]
    columns = ", ".join(c.name for c in table.columns if c.name in kept)
    for index in table.indexes:
        conn.exec_driver_sql(f"DROP INDEX IF EXISTS {index.name}")
    conn.exec_driver_sql("PRAGMA legacy_alter_table = ON")
    try:
        conn.exec_driver_sql(f"ALTER TABLE {table.name} RENAME TO {old}")
    finally:
        conn.exec_driver_sql("PRAGMA legacy_alter_table = OFF")
    table.create(conn)
    conn.exec_driver_sql(f"INSERT INTO {table.name} ({columns}) SELECT {columns} FROM {old}")
    conn.exec_driver_sql(f"DROP TABLE {old}")
