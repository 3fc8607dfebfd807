"""``evaltool clicks LOG``: click metrics with counts and intervals; click-derived qrels with --judgments."""

from __future__ import annotations

import click

from evaltool.cli.common import REPORT_FORMATS, emit, fail, output_options, warn
from evaltool.cli.recording import record_options, recording
from evaltool.errors import EvaltoolError

CLICKS_HELP = """Click metrics of a click log, each with a bootstrap interval and the impressions and
queries behind it; optionally graded judgments (TREC qrels) derived from the clicks.

\b
  evaltool clicks clicks.json                       # impressions: consulta, resultados, clicks
  evaltool clicks events.parquet -m click_mrr -m ctr@5 --average macro --by device
  evaltool clicks events.csv --judgments clicks.qrels --model coec
  evaltool clicks.qrels run.txt -m ndcg_cut.10 -m P.5

LOG is a JSON array or JSONL of impressions (consulta/query, resultados/results, clicks;
optional query_id, session_id, timestamp) or an events table in CSV, JSONL or Parquet
(action impression|click, query_id or query, impression_id or session_id, doc_id,
position, timestamp). Measures: click_mrr (MRR from clicks: 1/rank of the
first click, 0 without one), ctr, ctr@k, abandonment, clicks_per_query, mean_click_rank,
time_to_first_click (logs with timestamps). A click on a document not shown is ignored
and counted; a document clicked twice in one impression counts once; impressions with
an empty result list are kept apart. Bad input: one message with file and line, exit 2.

--record stores the metrics in the evaluation history (--db) as an execution named after
LOG (--name), the log's digest as its run fingerprint.

--judgments writes qrels 'query_id 0 doc_id grade' (query ids with spaces get '_'): the
model (ctr, coec, sdbn) scores every (query, document) and --grades thresholds turn
scores into grades 0, 1, 2...
"""


@click.command("clicks", help=CLICKS_HELP)
@click.argument("log", type=click.Path(dir_okay=False))
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="NAME[@k]",
    help="Click measure; repeatable. Default: click_mrr, ctr, ctr@10, abandonment, clicks_per_query, "
    "mean_click_rank (and time_to_first_click when the log has timestamps).",
)
@click.option("-q", "--query-eval", "per_query", is_flag=True, help="Also show each query's values.")
@click.option(
    "--average",
    type=click.Choice(["micro", "macro"]),
    default="micro",
    show_default=True,
    help="micro: mean over impressions (a query searched often weighs more); macro: mean over distinct queries.",
)
@click.option(
    "--first-click",
    type=click.Choice(["log", "position"]),
    default="log",
    show_default=True,
    help="Which click is the first for click_mrr: first in log order, or the top-most clicked result.",
)
@click.option(
    "--by",
    "by",
    multiple=True,
    metavar="FIELD",
    help="Also report each group of impressions by FIELD of the log (device, category...); repeatable.",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
    help="Coverage of the bootstrap intervals.",
)
@click.option("--resamples", type=click.IntRange(min=1), default=2000, show_default=True, help="Bootstrap resamples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option(
    "--judgments",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="OUT.qrels",
    help="Also write TREC qrels derived from the clicks by --model (atomically).",
)
@click.option(
    "--model",
    type=click.Choice(["ctr", "coec", "sdbn"]),
    default="coec",
    show_default=True,
    help="Click model for --judgments.",
)
@click.option(
    "--grades",
    default=None,
    metavar="T1,T2,...",
    help="Score thresholds for grades 1, 2, ... (default ctr/sdbn 0.1,0.3,0.5; coec 0.5,1,2).",
)
@click.option(
    "--min-impressions",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Leave a (query, document) unjudged with less evidence than this (sdbn: times examined).",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="Read the log here, or in blocks on a Dask cluster (a JSONL log of impression objects; "
    "same output; needs pip install 'evaltool[dask]').",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="--engine dask: the scheduler's address; default a local cluster on this machine's cores.",
)
@output_options(REPORT_FORMATS, "table")
@record_options(with_name=True)
def clicks_command(
    log,
    measures,
    per_query,
    average,
    first_click,
    by,
    confidence,
    resamples,
    seed,
    judgments,
    model,
    grades,
    min_impressions,
    engine,
    scheduler,
    fmt,
    output,
    record,
    record_name,
    db,
    note,
    tags,
    at,
):
    from evaltool.clicks import click_judgments, evaluate, read_click_log
    from evaltool.clicks.models import parse_grades
    from evaltool.io.clicks.memory import release_freed_memory
    from evaltool.report import layouts

    release_freed_memory()

    history = None
    try:
        history = recording(record, db, note, tags, at, record_name)
        thresholds = parse_grades(grades, model) if judgments else None
        if engine == "dask" and judgments:
            raise EvaltoolError(
                "--judgments fits a click model to the whole log in this process; drop --engine dask to write judgments"
            )
        clicks = read_click_log(log, fields=by) if engine == "local" else log
        result = evaluate(
            clicks,
            list(measures) or None,
            per_query,
            average=average,
            first_click=first_click,
            by=by,
            confidence=confidence,
            n_resamples=resamples,
            seed=seed,
            engine=engine,
            scheduler=scheduler,
        )
        qrels_text = None
        if judgments:
            table = click_judgments(clicks, model, thresholds, min_impressions)
            qrels_text = table.to_trec()
        if fmt == "json":
            from evaltool.report.json import dump_json

            text = dump_json(result.to_dict(per_query))
        else:
            from evaltool.report.table import render

            text = render(layouts.clicks_report(result, per_query=per_query), fmt)
        if history is not None:
            history.record(result, record_name, sources={"run": log})
        if qrels_text is not None:
            from evaltool.report.output import write_atomic

            write_atomic(judgments, qrels_text)
            graded = sum(1 for row in table.rows if row.grade > 0)
            warn(
                f"judgments: {len(table.rows)} (query, document) pairs, {graded} graded above 0, written to "
                f"{judgments} (model {model}, grades {','.join(f'{t:g}' for t in table.grades)})"
            )
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)
    finally:
        if history is not None:
            history.close()
