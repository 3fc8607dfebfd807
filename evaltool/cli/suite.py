"""``evaltool suite ...``: controlled tests, run through the benchmark runner and recorded.

No package is named ``suite``: a suite is data of the history database
(:mod:`evaltool.history.suites`), and running one is a benchmark run (:mod:`evaltool.bench`).
"""

from __future__ import annotations

import sys

import click

from evaltool.cli.bench import (
    SETTINGS_OPTIONS,
    backend_option,
    measure_option,
    out_option,
    run_command,
    verbose_option,
)
from evaltool.cli.common import emit, fail, option_group, output_options, warn
from evaltool.cli.recording import Recording, db_option
from evaltool.errors import EvaltoolError
from evaltool.measures.sets import described

SUITE_HELP = """Controlled tests: queries with their ground truth (the relevant ids, with grades when
given) and a backend, kept and versioned in the history, run together and each run recorded
under the suite's name with the version it ran.

\b
  evaltool suite add helpdesk data/bench_queries.json --backend evaltool.bench.examples:bm25_search
  evaltool suite list
  evaltool suite show helpdesk
  evaltool suite import helpdesk corrected.json     # a new version
  evaltool suite run                    # every active suite, each recorded
  evaltool history report --name helpdesk --labels
  evaltool suite export helpdesk --output helpdesk.json
  evaltool suite disable helpdesk
"""


@click.group("suite", help=SUITE_HELP)
def suite_group():
    pass


@suite_group.command("add")
@click.argument("name")
@click.argument("queries", type=click.Path(dir_okay=False))
@db_option
@backend_option
@measure_option(f"{described('suite')} (the comparative report's measures, which --labels rates)")
@option_group(*SETTINGS_OPTIONS)
def add_command(name, queries, db, backend, measures, **settings):
    """Define a suite: what 'evaltool bench QUERIES --backend SPEC ...' would run. The queries
    file's content (JSON, JSONL or CSV with a header row) is kept in the history as version 1.

    \b
      evaltool suite add helpdesk data/bench_queries.json --backend evaltool.bench.examples:bm25_search
      evaltool suite add api queries.json --backend http://127.0.0.1:8000/search --response-path 'hits.*.id'
    """
    from evaltool.history.suites import add_suite

    settings["headers"] = list(settings["headers"])
    try:
        suite = add_suite(db, name, queries, backend, list(measures), settings)
    except EvaltoolError as exc:
        fail(exc)
    warn(f"suite {suite.name} added: {len(suite.queries)} queries from {suite.source} against {suite.backend}")


@suite_group.command("list")
@db_option
@output_options(["table", "json", "csv", "markdown"], "table")
def list_command(db, fmt, output):
    """List the suites, active or not.

    \b
      evaltool suite list
      evaltool suite list -o json
    """
    from evaltool.history.suites import list_suites

    try:
        suites = list_suites(db)
        if fmt == "json":
            from evaltool.report.json import dump_json

            text = dump_json([s.to_dict() for s in suites])
        else:
            from evaltool.report.table import Report, Table, render

            rows = [
                [
                    s.name,
                    "active" if s.active else "disabled",
                    s.version,
                    s.backend,
                    " ".join(s.measures) or "(default)",
                    s.created_at,
                    s.problem or "",
                ]
                for s in suites
            ]
            notes = [] if suites else ["no suite yet: evaltool suite add NAME QUERIES --backend SPEC"]
            text = render(
                Report(
                    [Table(["name", "state", "version", "backend", "measures", "created_at", "problem"], rows)], notes
                ),
                fmt,
            )
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)


def _set_active(name, db, active: bool):
    from evaltool.history.suites import set_active

    try:
        set_active(db, name, active)
    except EvaltoolError as exc:
        fail(exc)
    warn(f"suite {name} {'enabled' if active else 'disabled'}")


@suite_group.command("disable")
@click.argument("name")
@db_option
def disable_command(name, db):
    """Leave a suite out of 'suite run' (it stays defined, with its history).

    \b
      evaltool suite disable helpdesk
    """
    _set_active(name, db, False)


@suite_group.command("enable")
@click.argument("name")
@db_option
def enable_command(name, db):
    """Let 'suite run' run a disabled suite again.

    \b
      evaltool suite enable helpdesk
    """
    _set_active(name, db, True)


@suite_group.command("show")
@click.argument("name")
@db_option
@click.option(
    "--version", "version", type=click.IntRange(min=1), default=None, help="A past version (default: the current one)."
)
@output_options(["table", "json", "csv", "markdown"], "table")
def show_command(name, db, version, fmt, output):
    """Print a suite: its settings, its versions, and each query with its relevant ids and grades.

    \b
      evaltool suite show helpdesk
      evaltool suite show helpdesk --version 2 -o json
    """
    from evaltool.history.suites import get_suite, suite_versions

    try:
        suite = get_suite(db, name, version)
        versions = suite_versions(db, name)
        if fmt == "json":
            from evaltool.report.json import dump_json

            text = dump_json({**suite.to_dict(), "versions": versions})
        else:
            from evaltool.report.table import Report, Table, render

            about = Table(
                ["field", "value"],
                [
                    ["name", suite.name],
                    ["state", "active" if suite.active else "disabled"],
                    ["version", f"{suite.shown_version} of {suite.version}"],
                    ["backend", suite.backend],
                    ["measures", " ".join(suite.measures)],
                    ["limit", suite.settings.get("limit", 10)],
                    ["source", suite.source or ""],
                    ["created_at", suite.created_at],
                ],
            )
            rows = [
                [
                    q.query_id,
                    q.text,
                    q.category or "",
                    q.difficulty or "",
                    " ".join(
                        f"{doc}:{grade}" if q.expected_field == "qrels" else doc for doc, grade in q.judgments.items()
                    ),
                ]
                for q in suite.queries
            ]
            history_rows = [
                [v["version"], v["created_at"], v["author"] or "", v["queries"], v["change"]] for v in versions
            ]
            notes = [f"problem: {suite.problem}"] if suite.problem else []
            tables = [Table(["query", "text", "category", "difficulty", "relevant (id or id:grade)"], rows)]
            if fmt == "table":
                tables = [about, *tables, Table(["version", "created_at", "by", "queries", "change"], history_rows)]
            text = render(Report(tables, notes), fmt)
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)


@suite_group.command("export")
@click.argument("name")
@db_option
@click.option(
    "--version", "version", type=click.IntRange(min=1), default=None, help="A past version (default: the current one)."
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write to FILE (atomically) instead of standard output.",
)
def export_command(name, db, version, output):
    """Write a suite's queries as the JSON queries file 'evaltool bench' reads.

    \b
      evaltool suite export helpdesk --output helpdesk.json
      evaltool bench helpdesk.json --backend evaltool.bench.examples:bm25_search
    """
    from evaltool.history.suites import export_text, get_suite

    try:
        emit(export_text(get_suite(db, name, version)), output)
    except EvaltoolError as exc:
        fail(exc)


@suite_group.command("import")
@click.argument("name")
@click.argument("queries", type=click.Path(dir_okay=False))
@db_option
def import_command(name, queries, db):
    """Replace a suite's queries with a file's (JSON, JSONL or CSV): a new version; the old ones stay.

    \b
      evaltool suite import helpdesk corrected.json
    """
    from evaltool.history.suites import import_queries

    try:
        suite = import_queries(db, name, queries)
    except EvaltoolError as exc:
        fail(exc)
    warn(f"suite {suite.name}: version {suite.version}, {len(suite.queries)} queries from {suite.source}")


@suite_group.command("run")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@db_option
@out_option
@click.option(
    "--resume",
    is_flag=True,
    help="Finish each suite's unfinished run from its checkpoint in --out (a suite without one runs from the start).",
)
@click.option("--restart", is_flag=True, help="Discard each suite's unfinished run in --out and start over.")
@verbose_option
def run_suites_command(names, db, out_dir, resume, restart, verbose):
    """Run every active suite (or those named) through the benchmark runner and record each
    execution under the suite's name, with the version it ran. Each suite's finished queries are
    kept in OUT/suite-NAME.checkpoint.jsonl as they finish: after an interruption or a failure,
    --resume finishes the run where it stopped, --restart throws it away; without either,
    a suite with an unfinished run is not run. Exit 0 when every query of every suite got
    an answer, 1 when some failed (as 'evaltool bench'), 2 when a suite could not run or
    all its queries failed, 128 + the signal's number when interrupted.

    \b
      evaltool suite run
      evaltool suite run helpdesk --out results/ -v
      evaltool suite run helpdesk --resume         # after Ctrl-C or a crash
    """
    from dataclasses import asdict, replace

    from evaltool.bench.session import unfinished_queries
    from evaltool.history import open_history
    from evaltool.history.suite_runs import bench_settings, write_queries_file
    from evaltool.history.suites import get_suite, list_suites, runnable

    if resume and restart:
        fail(EvaltoolError("--resume and --restart: choose one (finish the unfinished runs, or discard them)"))
    try:
        history = open_history(db)
        suites = list_suites(history, list(names) or None)
    except EvaltoolError as exc:
        fail(exc)
    failed = worst = 0
    try:
        disabled = [s.name for s in suites if not s.active]
        if names and disabled:
            fail(EvaltoolError(f"suite {disabled[0]} is disabled; 'evaltool suite enable {disabled[0]}' first"))
        suites = [s for s in suites if s.active]
        if not suites:
            warn("no active suite to run (see 'evaltool suite list')")
        for listed in suites:
            try:
                suite = get_suite(history, listed.name)
                runnable(suite)
                path = write_queries_file(suite, out_dir)
                checkpoint = f"suite-{suite.name}"
                settings = replace(bench_settings(suite, path, out_dir), checkpoint_name=checkpoint)
                resuming = resume and unfinished_queries(settings) > 0
                if resume and not resuming:
                    warn(f"suite {suite.name}: no unfinished run to resume; running it from the start")
                options = asdict(settings)
                options["queries"] = options.pop("queries_path")
                options.update(resume=resuming, restart=restart)
                warn(
                    f"suite {suite.name}: version {suite.version} ({len(suite.queries)} queries) against "
                    f"{suite.backend}"
                )
                code = run_command(
                    Recording(history, None, {}, None, history),
                    suite.name,
                    "suite",
                    {"suite_version": suite.version},
                    verbose=verbose,
                    **options,
                )
            except EvaltoolError as exc:
                warn(f"suite {listed.name}: {exc}")
                failed += 1
                continue
            if code >= 128:  # interrupted: the other suites wait for the next run
                sys.exit(code)
            worst = max(worst, code)
    finally:
        history.close()
    sys.exit(2 if failed else worst)
