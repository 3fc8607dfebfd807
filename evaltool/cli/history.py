"""``evaltool history ...``: read the evaluation history back, compare, alert, export, prune."""

from __future__ import annotations

import sys

import click

from evaltool.cli.common import emit, fail, option_group, output_options, warn
from evaltool.cli.recording import db_option
from evaltool.errors import EvaltoolError

HISTORY_HELP = """The evaluation history: executions recorded with --record (eval, compare, bench) or by
'evaltool suite run', read back by date.

\b
  evaltool -m recip_rank -m ndcg_cut.10 -m P.5 qrels.txt run.txt --record --tag model=bm25
  evaltool history list --from 2025-01-01
  evaltool history report --from 2025-01-01 --to 2025-01-31 --labels
  evaltool history diff 3 7
  evaltool history check --name bm25 || echo "quality dropped"

--db (or $EVALTOOL_DB) names the history: a SQLite file (default evaltool-history.sqlite
in the current folder) or postgresql://user@host/db. Dates are ISO-8601 in UTC, both
ends inclusive; a date alone as --to is the whole day.
"""

range_options = option_group(
    click.option("--from", "date_from", default=None, metavar="DATE", help="First date (ISO-8601, inclusive)."),
    click.option(
        "--to", "date_to", default=None, metavar="DATE", help="Last date (inclusive; a date is its whole day)."
    ),
    click.option("--name", default=None, help="Only executions of this name."),
    click.option(
        "--tag", "tags", multiple=True, metavar="KEY=VALUE", help="Only executions with this tag; repeatable."
    ),
)


def _json(obj) -> str:
    from evaltool.report.json import dump_json

    return dump_json(obj)


def _render(report, fmt: str) -> str:
    from evaltool.report.table import render

    return render(report, fmt)


@click.group("history", help=HISTORY_HELP)
def history_group():
    pass


@history_group.command("list")
@db_option
@range_options
@click.option("--limit", type=click.IntRange(min=0), default=None, help="At most this many (the newest first).")
@output_options(["table", "json", "csv", "markdown"], "table")
def list_command(db, date_from, date_to, name, tags, limit, fmt, output):
    """List executions, oldest first (with --limit: the newest N, newest first).

    \b
      evaltool history list
      evaltool history list --from 2025-01-01 --to 2025-01-31 --name bm25 --tag split=dev -o json
    """
    from evaltool.history import list_executions

    try:
        executions = list_executions(db, date_from, date_to, name, tags, limit=limit, newest_first=limit is not None)
        if fmt == "json":
            text = _json([e.to_dict() for e in executions])
        else:
            from evaltool.report.history import executions_table

            text = _render(executions_table(executions), fmt)
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)


@history_group.command("show")
@click.argument("execution_id", metavar="ID")
@db_option
@click.option("-q", "--query-eval", "per_query", is_flag=True, help="Also print every query's values.")
@click.option(
    "--results",
    is_flag=True,
    help="Also print what the search returned (bench and suite executions): per query each document "
    "with its rank, score and judgment (relevant with its grade / not relevant / unjudged), and "
    "the relevant ids it missed.",
)
@output_options(["table", "json", "markdown"], "table")
def show_command(execution_id, db, per_query, results, fmt, output):
    """Show one execution: how it was computed, its fingerprints and its values.

    \b
      evaltool history show 12
      evaltool history show 12 -q -o json
      evaltool history show 12 -q --results
    """
    from evaltool.history import get_execution

    try:
        execution = get_execution(db, execution_id, per_query=per_query, results=results)
        if results and fmt != "json":
            from evaltool.history.returned import judged, relevance_level

            level = relevance_level(execution)
            execution.results = [judged(result, level) for result in execution.results]
        if fmt == "json":
            text = _json(execution.to_dict())
        else:
            from evaltool.report.history import execution_report

            text = _render(execution_report(execution, per_query), fmt)
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)


@history_group.command("report")
@db_option
@range_options
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="NAME",
    help="A column (ndcg_cut.10 or ndcg_cut_10); repeatable. Default: every measure recorded.",
)
@click.option(
    "--labels",
    is_flag=True,
    help="Label each row good/fair/poor with the thresholds it was recorded "
    "with, and the summary efficient/acceptable/needs improvement.",
)
@click.option(
    "--lang",
    type=click.Choice(["en", "es"]),
    default="en",
    show_default=True,
    help="Language of the report: its header, summary row, footer and labels (es: "
    "Bueno/Regular/Mejorable, Eficiente/Aceptable/Mejorable, '3 evaluaciones'); implies --labels.",
)
@output_options(["table", "json", "csv", "markdown", "latex", "html"], "table")
def report_command(db, date_from, date_to, name, tags, measures, labels, lang, fmt, output):
    """The comparative report: a row per execution in the range and a summary row (the mean
    of each measure over the executions, and a global label).

    \b
      evaltool history report --from 2025-01-01 --to 2025-01-31 --labels
      evaltool history report -m recip_rank -m ndcg_cut.10 -m P.5 --lang es -o csv --output report.csv
      evaltool history report --from 2025-01-01 --labels -o html --output report.html   # table and trends
    """
    from click.core import ParameterSource

    from evaltool.history import report

    lang_given = click.get_current_context().get_parameter_source("lang") is not ParameterSource.DEFAULT
    try:
        out = report(db, date_from, date_to, name, tags, list(measures) or None, labels or lang_given, lang)
        if fmt == "json":
            text = _json(out)
        else:
            from evaltool.report.history import comparative_report

            table = comparative_report(out, lang)
            if fmt == "html":
                from evaltool.report.html import history_report_html

                text = history_report_html(out, table, lang)
            else:
                text = _render(table, fmt)
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)


@history_group.command("diff")
@click.argument("a", metavar="ID_A")
@click.argument("b", metavar="ID_B")
@db_option
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="NAME",
    help="A measure to compare; repeatable. Default: every one both have per-query values of.",
)
@click.option(
    "--test",
    type=click.Choice(["t", "wilcoxon", "randomization", "bootstrap"]),
    default="t",
    show_default=True,
    help="Paired test (as in 'evaltool compare').",
)
@click.option(
    "--correction",
    type=click.Choice(["holm", "bonferroni", "bh", "none"]),
    default="holm",
    show_default=True,
    help="Multiple-testing correction over the measures.",
)
@output_options(["table", "json", "markdown"], "table")
def diff_command(a, b, db, measures, test, correction, fmt, output):
    """Compare two executions query by query: means, the paired test and interval of
    'evaltool compare' over the queries both have, and the queries that moved most.

    \b
      evaltool history diff 3 7
      evaltool history diff 3 7 -m ndcg_cut_10 --test randomization -o json
    """
    from evaltool.history import diff

    try:
        out = diff(db, a, b, list(measures) or None, test=test, correction=correction)
        for line in out["warnings"]:
            warn(f"warning: {line}")
        if fmt == "json":
            text = _json(out)
        else:
            from evaltool.report.history import diff_report

            text = _render(diff_report(out), fmt)
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)


@history_group.command("check")
@db_option
@click.option("--name", default=None, help="The series to check (default: that of the newest execution).")
@click.option(
    "--against",
    default="previous",
    show_default=True,
    metavar="previous|best|ID",
    help="The execution before the latest, the best value of each measure before it, or an id.",
)
@click.option(
    "--tolerance",
    type=click.FloatRange(min=0),
    default=1e-4,
    show_default=True,
    help="A drop no larger than this is not a drop.",
)
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="NAME",
    help="A measure to check; repeatable. Default: every averaged measure both have.",
)
@output_options(["table", "json", "markdown"], "table")
def check_command(db, name, against, tolerance, measures, fmt, output):
    """Exit 1 when the latest execution dropped below what it is checked against, 0 otherwise
    (an alert for CI and cron); 2 on bad input.

    \b
      evaltool history check --name bm25
      evaltool history check --name bm25 --against best --tolerance 0.005
    """
    from evaltool.history import check

    try:
        verdict = check(db, name, against, tolerance, list(measures) or None)
        if fmt == "json":
            text = _json(verdict.to_dict())
        else:
            from evaltool.report.history import check_report

            text = _render(check_report(verdict), fmt)
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)
    sys.exit(0 if verdict.ok else 1)


@history_group.command("export")
@db_option
@range_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "jsonl"]),
    default="csv",
    show_default=True,
    help="csv: a row per execution, query ('all' = summary) and measure; jsonl: an execution per line.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write to FILE (atomically: all or nothing) instead of standard output.",
)
def export_command(db, date_from, date_to, name, tags, fmt, output):
    """Write every value of the executions selected (all by default).

    \b
      evaltool history export --format csv --output history.csv
      evaltool history export --format jsonl --from 2025-01-01 | gzip > history.jsonl.gz
    """
    from evaltool.history import export

    try:
        emit(export(db, fmt, date_from, date_to, name, tags), output)
    except EvaltoolError as exc:
        fail(exc)


@history_group.command("prune")
@db_option
@click.option("--keep", type=click.IntRange(min=0), required=True, help="Executions kept per name: the newest N.")
@click.option("--name", default=None, help="Prune only this name's executions.")
def prune_command(db, keep, name):
    """Delete all but the newest N executions of each name, with their values.

    \b
      evaltool history prune --keep 100
      evaltool history prune --keep 10 --name nightly
    """
    from evaltool.history import prune

    try:
        deleted = prune(db, keep, name)
    except EvaltoolError as exc:
        fail(exc)
    warn(
        f"deleted {len(deleted)} execution{'' if len(deleted) == 1 else 's'}"
        + (f" ({', '.join(map(str, deleted[:10]))}{', ...' if len(deleted) > 10 else ''})" if deleted else "")
    )


@history_group.command("upgrade")
@db_option
def upgrade_command(db):
    """Bring a history written by an older evaltool forward to this version's schema.

    Readers, writers and 'evaltool serve' refuse an older history until it is upgraded, so a
    database several people share changes only when its owner says so. Back it up first:
    older evaltool versions cannot read an upgraded history.

    \b
      cp evaltool-history.sqlite evaltool-history.sqlite.bak && evaltool history upgrade
      evaltool history upgrade --db postgresql://evaltool@db.example/history
    """
    from evaltool.history import upgrade
    from evaltool.history.store import where

    try:
        found, now = upgrade(db)
        shown = where(db)
    except EvaltoolError as exc:
        fail(exc)
    if found == now:
        warn(f"{shown}: already at schema version {now}; nothing to do")
    else:
        warn(f"{shown}: upgraded from schema version {found} to {now}")


@history_group.command("rescore")
@click.argument("execution_id", type=int, metavar="ID")
@click.option("--judgments", "set_name", required=True, metavar="SET", help="The judgment set to score it under.")
@click.option(
    "--consensus",
    default="majority",
    show_default=True,
    metavar="majority|median|ADJUDICATOR",
    help="One grade per pair from several raters (see 'evaltool judgments export -h').",
)
@click.option("--rater", default=None, metavar="NAME", help="One rater's grades instead of a consensus.")
@click.option("--version", "version", type=click.IntRange(min=0), default=None, help="A past version of the set.")
@db_option
def rescore_command(execution_id, set_name, consensus, rater, version, db):
    """Score a stored execution's result lists (a bench or suite run) again under a judgment set,
    without running the search: a new execution with the same name, measures and options, tagged
    rescored_from=ID and judgments=SET@VERSION. Prints its id.

    \b
      evaltool history rescore 12 --judgments helpdesk-ratings
      evaltool history diff 12 $(evaltool history rescore 12 --judgments helpdesk-ratings)
    """
    from evaltool.cli.common import write
    from evaltool.judgments.rescoring import rescore

    try:
        made = rescore(db, execution_id, set_name, consensus=consensus, rater=rater, version=version)
    except EvaltoolError as exc:
        fail(exc)
    write(f"{made}\n")
