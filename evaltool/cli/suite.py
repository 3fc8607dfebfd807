"""``evaltool suite ...``: controlled tests, run through the benchmark runner and recorded.

No package is named ``suite``: a suite is data of the history database
(:mod:`evaltool.history.suites`), and running one is a benchmark run (:mod:`evaltool.bench`).
"""

from __future__ import annotations

import sys

import click

from evaltool.cli.bench import (
    SETTINGS_OPTIONS, backend_option, measure_option, out_option, run_command, verbose_option,
)
from evaltool.cli.common import emit, fail, option_group, output_options, warn
from evaltool.cli.recording import Recording, db_option
from evaltool.errors import EvaltoolError
from evaltool.measures.sets import described

SUITE_HELP = """Controlled tests: a queries file with the expected ids and a backend, kept in the
history, run together and each run recorded under the suite's name.

\b
  evaltool suite add helpdesk data/bench_queries.json --backend evaltool.bench.examples:bm25_search
  evaltool suite list
  evaltool suite run                    # every active suite, each recorded
  evaltool history report --name helpdesk --labels
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
    """Define a suite: what 'evaltool bench QUERIES --backend SPEC ...' would run.

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
    warn(f"suite {suite.name} added: {suite.queries_file} against {suite.backend}")


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

            rows = [[s.name, "active" if s.active else "disabled", s.queries_file, s.backend,
                     " ".join(s.measures) or "(default)", s.created_at] for s in suites]
            text = render(Report([Table(["name", "state", "queries", "backend", "measures", "created_at"], rows)],
                                 [] if suites else ["no suite yet: evaltool suite add NAME QUERIES --backend SPEC"]),
                          fmt)
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


@suite_group.command("run")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@db_option
@out_option
@click.option("--resume", is_flag=True,
              help="Finish each suite's unfinished run from its checkpoint in --out (a suite without one runs "
                   "from the start).")
@click.option("--restart", is_flag=True, help="Discard each suite's unfinished run in --out and start over.")
@verbose_option
def run_suites_command(names, db, out_dir, resume, restart, verbose):
    """Run every active suite (or those named) through the benchmark runner and record each
    execution under the suite's name. Each suite's finished queries are kept in
    OUT/suite-NAME.checkpoint.jsonl as they finish: after an interruption or a failure,
    --resume finishes the run where it stopped, --restart throws it away; without either,
    a suite with an unfinished run is not run. Exit 0 when every query of every suite got
    an answer, 1 when some failed (as 'evaltool bench'), 2 when a suite could not run or
    all its queries failed, 128 + the signal's number when interrupted.

    \b
      evaltool suite run
      evaltool suite run helpdesk --out results/ -v
      evaltool suite run helpdesk --resume         # after Ctrl-C or a crash
    """
    from evaltool.bench.session import BenchSettings, unfinished_queries
    from evaltool.history import open_history
    from evaltool.history.suites import list_suites

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
        for suite in suites:
            warn(f"suite {suite.name}: {suite.queries_file} against {suite.backend}")
            settings = dict(suite.settings, headers=tuple(suite.settings.get("headers", ())))
            checkpoint = f"suite-{suite.name}"
            try:
                resuming = resume and unfinished_queries(BenchSettings(suite.queries_file, suite.backend,
                                                                       out_dir=out_dir, checkpoint_name=checkpoint)) > 0
                if resume and not resuming:
                    warn(f"suite {suite.name}: no unfinished run to resume; running it from the start")
                code = run_command(Recording(history, None, {}, None, history), suite.name, "suite",
                                   queries=suite.queries_file, backend=suite.backend, measures=tuple(suite.measures),
                                   out_dir=out_dir, verbose=verbose, resume=resuming, restart=restart,
                                   run_name=suite.name, checkpoint_name=checkpoint, **settings)
            except EvaltoolError as exc:
                warn(f"suite {suite.name}: {exc}")
                failed += 1
                continue
            if code >= 128:  # interrupted: the other suites wait for the next run
                sys.exit(code)
            worst = max(worst, code)
    finally:
        history.close()
    sys.exit(2 if failed else worst)
