"""``evaltool QRELS RUN``: the default command."""

from __future__ import annotations

import time

import click

from evaltool.cli.common import (
    check_labels, emit, evaluation_options, fail, grouping_options, note_ungrouped, output_options, read_grouping,
    relevance_options, warn,
)
from evaltool.errors import EvaltoolError

EVAL_HELP = """Score RUN against QRELS exactly as trec_eval 10.0 does.

\b
  evaltool qrels.txt run.txt                  # trec_eval's official measures
  evaltool qrels.txt run.txt -m ndcg_cut.10 -m P.5,10 -q
  evaltool -c -l2 -m recall.100 qrels.txt run.txt.gz
  cat run.txt | evaltool qrels.txt - -o json

QRELS may also be a queries file (JSON/JSONL: qid, query, relevant_ids or qrels, answer,
metadata) and RUN a JSONL results file (qid, docid, score or rank, text): each query is
then judged by its own qrels, else a pack, else token F1 of its answer (--relevance).

\b
  evaltool data/rag/queries.jsonl data/rag/results.jsonl -m ndcg_cut.5 -m recall.5 -q

Options keep trec_eval's spelling and meaning. Deliberate differences: repeated -m for
the same cutoff measure take the union of the cutoffs (-m P.5 -m P.10 prints P_5 and
P_10, where trec_eval keeps one list); a qrels query absent from the run is skipped
with a warning (trec_eval 10 aborts), or scored as trec_eval does with -c.
"""



@click.command("eval", help=EVAL_HELP)
@click.argument("qrels", type=click.Path(dir_okay=False, allow_dash=False))
@click.argument("run", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME[.PARAMS]",
              help="Measure or nickname (official, all_trec, set); repeatable. Default: official.")
@click.option("-q", "--query-eval", "per_query", is_flag=True, help="Also print a value for every query.")
@click.option("-n", "--no-summary", is_flag=True, help="Do not print the summary ('all') rows.")
@evaluation_options
@click.option("-Z", "--zscores", type=click.Path(dir_okay=False), default=None,
              help="Print z-scores against a 'qid measure mean stddev' file.")
@output_options(["trec", "table", "json", "csv", "markdown", "latex"], "trec")
@click.option("--save-reference", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the JSON of every value (summary and per query) to FILE, for 'evaltool check'.")
@grouping_options
@relevance_options
@click.option("--stream", is_flag=True,
              help="Read the run chunk by chunk (memory bounded by a chunk of queries); same output.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Threads for parsing large files (default: all cores).")
@click.option("--timings", is_flag=True, hidden=True,
              help="Print the stage split (parse, rank, measures, output) as JSON on stderr.")
def eval_command(qrels, run, measures, per_query, no_summary, zscores, fmt, output, save_reference,
                 group_by, topics, labels, thresholds, stream, jobs, timings, relevance, packs, f1_threshold,
                 qrels_format, run_format, **options):
    from evaltool.evaluate import evaluate
    from evaltool.report.layouts import relevance_notes, relevance_warnings

    if jobs:
        from evaltool.io import columnar

        columnar.JOBS = jobs
    try:
        table, label_thresholds = read_grouping(group_by, topics, labels, thresholds)
        result = evaluate(qrels, run, list(measures) or None, per_query, zscores=zscores, stream=stream,
                          relevance=relevance, packs=list(packs), f1_threshold=f1_threshold,
                          qrels_format=None if qrels_format == "auto" else qrels_format,
                          run_format=None if run_format == "auto" else run_format, **options)
        check_labels(label_thresholds, thresholds, result.measures)
    except EvaltoolError as exc:
        fail(exc)
    meta = result.meta
    for line in relevance_warnings(result) + (relevance_notes(result) if fmt == "trec" else []):
        warn(line)
    skipped = meta["skipped_queries"]
    if skipped:
        shown = ", ".join(skipped[:5]) + (", ..." if len(skipped) > 5 else "")
        warn(f"warning: {len(skipped)} of the {len(skipped) + len(result.qids)} qrels queries have no results "
              f"in {meta['run']} and were skipped ({shown}); use -c to score them as trec_eval does")
    for side in ("qrels", "run"):
        dropped = meta["counts"][f"{side}_duplicates_resolved"]
        if dropped:
            warn(f"note: {dropped} duplicate (query, document) rows in {meta[side]} resolved by "
                  f"--on-duplicate {options['on_duplicate']}")
    clock = time.perf_counter()
    try:
        emit(_format_eval(result, fmt, per_query, no_summary, table, group_by, label_thresholds), output)
        if save_reference:
            from evaltool.report.json import format_json
            from evaltool.report.output import write_atomic

            write_atomic(save_reference, format_json(result, per_query=True))
    except EvaltoolError as exc:
        fail(exc)
    if timings:
        import json

        stages = dict(result.timings, output=time.perf_counter() - clock)
        click.echo(json.dumps({k: round(v, 6) for k, v in stages.items()}), err=True)


def _format_eval(result, fmt, per_query, no_summary, table, group_by, thresholds) -> str:
    from evaltool.report import layouts

    groups = None
    if table is not None:
        from evaltool.groups import group_summaries

        note_ungrouped(table, group_by, result.qids)
        groups = {field: group_summaries(result, table, field) for field in group_by}
    if fmt == "json":
        from evaltool.report.json import dump_json

        return dump_json(layouts.eval_json(result, per_query=per_query, groups=groups, thresholds=thresholds))
    if fmt == "trec":
        from evaltool.report.trec import format_trec

        text = format_trec(result, per_query=per_query, summary=not no_summary)
        return text + layouts.eval_trec_lines(result, per_query=per_query, groups=groups, thresholds=thresholds)
    from evaltool.report.table import render

    report = layouts.eval_report(result, per_query=per_query, summary=not no_summary, groups=groups,
                               thresholds=thresholds)
    return render(report, fmt)
