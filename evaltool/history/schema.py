"""The tables of the history, its schema version and the forward migrations.

A history holds one ``evaltool_schema`` row with the version of its layout. A fresh
history is created at :data:`CURRENT_VERSION`; an older one is brought forward by the
steps of :data:`MIGRATIONS` in one transaction; a newer one is refused, since this
evaltool cannot know what it would lose. Every change to the tables below is a new
version with a migration step, and the first version's file stays in the tests
(``tests/history/fixtures``) so the chain is exercised from the start.

Version 1: executions, their summary values, per-query values and tags.
Version 2: controlled tests (``suites``): a queries file and a backend, run by ``suite run``.
Version 3: the audit trail (``audit``): who wrote what and when, one row per write made
through the server (:mod:`evaltool.history.audit`).

Dates are ISO-8601 text in UTC (``2025-01-28T09:30:00Z``, one fixed width), so they
sort and compare as text on every backend.
"""

from __future__ import annotations

import sqlalchemy as sa

CURRENT_VERSION = 3

metadata = sa.MetaData()

schema_table = sa.Table(
    "evaltool_schema", metadata,
    sa.Column("version", sa.Integer, nullable=False),
)

executions = sa.Table(
    "executions", metadata,
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
    sa.Index("executions_recorded_at", "recorded_at"),
    sa.Index("executions_name", "name", "recorded_at"),
)

summary_values = sa.Table(
    "summary_values", metadata,
    sa.Column("execution_id", sa.Integer, sa.ForeignKey("executions.id"), primary_key=True),
    sa.Column("position", sa.Integer, nullable=False),  # the measures' order in the evaluation
    sa.Column("measure", sa.Text, primary_key=True),
    sa.Column("value", sa.Float),  # NULL: not a number (trec_eval's nan)
    sa.Column("aggregate", sa.String(20)),  # mean | sum | geometric | NULL when unknown
)

query_values = sa.Table(
    "query_values", metadata,
    sa.Column("execution_id", sa.Integer, sa.ForeignKey("executions.id"), primary_key=True),
    sa.Column("query_id", sa.Text, primary_key=True),
    sa.Column("measure", sa.Text, primary_key=True),
    sa.Column("value", sa.Float),
)

tags = sa.Table(
    "tags", metadata,
    sa.Column("execution_id", sa.Integer, sa.ForeignKey("executions.id"), primary_key=True),
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
    sa.Index("tags_key_value", "key", "value"),
)

suites = sa.Table(
    "suites", metadata,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("queries_file", sa.Text, nullable=False),
    sa.Column("backend", sa.Text, nullable=False),
    sa.Column("measures", sa.Text, nullable=False),  # JSON list of -m values; [] for the runner's default
    sa.Column("settings", sa.Text, nullable=False),  # JSON: the other bench options (limit, timeout, ...)
    sa.Column("active", sa.Boolean, nullable=False),
    sa.Column("created_at", sa.String(20), nullable=False),
)

audit = sa.Table(
    "audit", metadata,
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

TABLES = tuple(metadata.tables)


def _add_suites(conn) -> None:
    suites.create(conn)


def _add_audit(conn) -> None:
    audit.create(conn)


# version n -> the step that turns a version-n history into version n + 1 (on an open transaction)
MIGRATIONS = {1: _add_suites, 2: _add_audit}
