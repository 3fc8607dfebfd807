"""``--record`` and its options, shared by eval, compare and bench: keep what was computed.

The options are checked and the history opened before any work is done, so a bad
``--at``, ``--tag`` or ``--db`` costs nothing; the execution is written (one
transaction) before the output is printed, so exit 0 means it is in the history.
"""

from __future__ import annotations

import click

from evaltool.cli.common import option_group, warn
from evaltool.errors import EvaltoolError

DB_HELP = "History: a SQLite file or postgresql://user@host/db (default: $EVALTOOL_DB, else evaltool-history.sqlite)."
db_option = click.option("--db", default=None, metavar="PATH|URL", help=DB_HELP)


def record_options(with_name: bool):
    """``--record --db --note --tag --at`` (and ``--name`` where the command has none of its own)."""
    options = [
        click.option("--record", is_flag=True, help="Also store the result in the evaluation history (--db)."),
        db_option,
        click.option("--note", default=None, metavar="TEXT", help="With --record: a note kept with the execution."),
        click.option(
            "--tag",
            "tags",
            multiple=True,
            metavar="KEY=VALUE",
            help="With --record: a tag kept with the execution (model=bm25); repeatable.",
        ),
        click.option(
            "--at",
            default=None,
            metavar="ISO-8601",
            help="With --record: the execution's date, to backfill old results (default: now, UTC).",
        ),
    ]
    if with_name:
        options.insert(
            1,
            click.option(
                "--name",
                "record_name",
                default=None,
                metavar="NAME",
                help="With --record: the execution's name (default: the run's file name).",
            ),
        )
    return option_group(*options)


class Recording:
    """Checked ``--record`` options; the history is opened (and a new file created) at the first record."""

    def __init__(self, db, note: str | None, tags: dict[str, str], at, history=None):
        self.db, self.note, self.tags, self.at, self.history = db, note, tags, at, history

    def _open(self):
        from evaltool.history import open_history

        if self.history is None:
            self.history = open_history(self.db, create=True)
        return self.history

    def record(self, result, name=None, **details) -> int:
        from evaltool.history import record

        history = self._open()
        execution_id = record(result, db=history, name=name, note=self.note, tags=self.tags, at=self.at, **details)
        warn(f"recorded execution {execution_id} in {history.where}")
        return execution_id

    def record_bench(self, bench, name=None, kind: str = "bench", **details) -> int:
        from evaltool.history.recording import record_bench

        history = self._open()
        execution_id = record_bench(
            bench, history, name=name, kind=kind, note=self.note, tags=self.tags, at=self.at, **details
        )
        warn(f"recorded execution {execution_id} in {history.where}")
        return execution_id

    def close(self) -> None:
        if self.history is not None:
            self.history.close()


def recording(record, db, note, tags, at, record_name=None) -> Recording | None:
    """The ``--record`` request, validated (and the history checked, creating nothing); None without ``--record``."""
    if not record:
        given = [
            flag
            for flag, value in (("--db", db), ("--note", note), ("--tag", tags), ("--at", at), ("--name", record_name))
            if value
        ]
        if given:
            raise EvaltoolError(
                f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to --record only; "
                "add --record to store the result"
            )
        return None
    from evaltool.history import parse_tags
    from evaltool.history.dates import recording_date
    from evaltool.history.store import check_writable

    parsed_tags = parse_tags(tags)
    when = recording_date(at, "--at") if at is not None else None
    check_writable(db)
    return Recording(db, note, parsed_tags, when)
