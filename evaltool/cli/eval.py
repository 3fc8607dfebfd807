"""``evaltool QRELS RUN``: the default command.

The command is the verb; the library it calls is the package :mod:`evaltool.evaluation`.
"""

from __future__ import annotations

import time

import click

from evaltool.cli.common import (
    complete_measure,
    check_format,
    emit,
    engine_options,
    evaluation_options,
    fail,
    grouping_arguments,
    grouping_options,
    output_options,
    relevance_arguments,
    relevance_options,
    warn,
)
from evaltool.cli.progress import shows_reading_progress
from evaltool.cli.recording import record_options, recording
from evaltool.errors import EvaltoolError
from evaltool.measures.sets import NICKNAMES, described

EVAL_HELP = """Score RUN against QRELS exactly as trec_eval 10.0 does.

\b
  evaltool qrels.txt run.txt                  # trec_eval's official measures
  evaltool qrels.txt run.txt -m ndcg_cut.10 -m P.5,10 -q
  evaltool -c -l2 -m recall.100 qrels.txt run.txt.gz
  cat run.txt | evaltool qrels.txt - -o json
  evaltool qrels.txt run.txt -q -o html --output report.html   # tables and charts, opens offline
  evaltool qrels.txt bm25=runs/bm25.txt splade=runs/splade.txt -q -o csv   # several runs, named

Several runs (files, a folder, a glob) are scored against QRELS read once: a trec_eval
block per run, or one table with a row per run (with -q: a row per run and query, the
run in the first column). A run is named by its file name; where two file names collide,
by the shortest tail of their paths that tells them apart. Name runs yourself with
NAME=PATH or --run-name (one per run, in order).

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
@click.argument("runs", nargs=-1, required=True, metavar="RUN [RUN...]")
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="NAME[.PARAMS]",
    shell_complete=complete_measure,
    help=f"Measure or nickname ({', '.join(NICKNAMES)}); repeatable. Default: {described('eval')}.",
)
@click.option("-q", "--query-eval", "per_query", is_flag=True, help="Also print a value for every query.")
@click.option("-n", "--no-summary", is_flag=True, help="Do not print the summary ('all') rows.")
@evaluation_options
@engine_options
@click.option(
    "-Z",
    "--zscores",
    type=click.Path(dir_okay=False),
    default=None,
    help="Print z-scores against a 'qid measure mean stddev' file.",
)
@output_options(["trec", "table", "json", "csv", "markdown", "latex", "html"], "trec")
@click.option(
    "--save-reference",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Also write the JSON of every value (summary and per query) to FILE, for 'evaltool check'.",
)
@grouping_options
@relevance_options
@click.option(
    "--stream", is_flag=True, help="Read the run chunk by chunk (memory bounded by a chunk of queries); same output."
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Threads for parsing large files, and for reading and scoring several runs (default: all cores).",
)
@click.option(
    "--timings",
    is_flag=True,
    hidden=True,
    help="Print the stage split (parse, rank, measures, output) as JSON on stderr.",
)
@click.option(
    "--run-name",
    "run_names",
    multiple=True,
    metavar="NAME",
    help="Name of each run in tables, charts and JSON, one per run in order (or give RUN as NAME=PATH; "
    "default: the file name).",
)
@record_options(with_name=True)
@shows_reading_progress
def eval_command(
    qrels,
    runs,
    measures,
    per_query,
    no_summary,
    zscores,
    fmt,
    output,
    save_reference,
    group_by,
    topics,
    labels,
    thresholds,
    stream,
    jobs,
    timings,
    relevance,
    packs,
    f1_threshold,
    f1_total,
    qrels_format,
    run_format,
    run_names,
    record,
    record_name,
    db,
    note,
    tags,
    at,
    **options,
):
    from evaltool.evaluation import EvalPlan, evaluate
    from evaltool.report.layouts import relevance_notes
    from evaltool.run_names import named_runs

    try:
        runs, names, chosen = named_runs(runs, run_names)
        if len(runs) > 1:
            _refuse_single_run_options(runs, save_reference, record, record_name, db, note, tags, at)
    except EvaltoolError as exc:
        fail(exc)

    def plan() -> EvalPlan:  # built where evaluate() checked its options, so errors keep their order
        return EvalPlan.build(
            list(measures) or None,
            zscores=zscores,
            stream=stream,
            **relevance_arguments(relevance, packs, f1_threshold, f1_total, qrels_format, run_format),
            **grouping_arguments(group_by, topics, labels, thresholds),
            jobs=jobs,
            **options,
        )

    if len(runs) > 1:
        return _eval_many(qrels, runs, names, plan, per_query, no_summary, fmt, output)
    run = runs[0]
    history = None
    try:
        check_format(fmt)
        _check_outputs(output, save_reference)
        history = recording(record, db, note, tags, at, record_name)
        result = evaluate(qrels, run, plan(), per_query)
        if history is not None:
            history.record(result, record_name or (names[0] if chosen[0] else None))
    except EvaltoolError as exc:
        fail(exc)
    finally:
        if history is not None:
            history.close()
    for line in result.warnings + (relevance_notes(result) if fmt == "trec" else []):
        warn(line)
    clock = time.perf_counter()
    try:
        emit(_format_eval(result, fmt, per_query, no_summary, names[0] if chosen[0] else None), output)
        if save_reference:
            from evaltool.report.output import write_atomic

            write_atomic(save_reference, result.to_json(per_query=True))
    except EvaltoolError as exc:
        fail(exc)
    if timings:
        stages = dict(result.timings, output=time.perf_counter() - clock)  # before importing json, not counted
        import json

        click.echo(json.dumps({k: round(v, 6) for k, v in stages.items()}), err=True)


def _check_outputs(output, save_reference) -> None:
    """Fail before any work when an output file could not be written."""
    for path, what in ((output, "--output"), (save_reference, "--save-reference")):
        if path:
            from evaltool.report.output import check_writable

            check_writable(path, what)


def _refuse_single_run_options(runs, save_reference, record, record_name, db, note, tags, at) -> None:
    """Several runs: what applies to one run (a reference file, a history record) is refused, not ignored."""
    given = [
        flag
        for flag, value in (
            ("--save-reference", save_reference),
            ("--record", record),
            ("--name", record_name),
            ("--db", db),
            ("--note", note),
            ("--tag", tags),
            ("--at", at),
        )
        if value
    ]
    if given:
        listed = f"{', '.join(runs[:3])}{', ...' if len(runs) > 3 else ''}"
        hint = "; to name the runs in the output, use --run-name or NAME=PATH" if record_name else ""
        raise EvaltoolError(
            f"{', '.join(given)}: {'this option applies' if len(given) == 1 else 'these options apply'}"
            " to a single run (--save-reference, and --record with its --name, --db, --note, --tag, "
            f"--at, take one run); several were given ({len(runs)}: {listed}){hint}"
        )


def _eval_many(qrels, runs, names, plan, per_query, no_summary, fmt, output) -> None:
    """Several runs against QRELS read once: a trec block per run, or one table whose first column names the run
    (``plan()`` builds the evaluation plan)."""
    from evaltool.evaluation import Evaluator
    from evaltool.report import layouts

    try:
        results = Evaluator(qrels, plan()).evaluate_many(runs, per_query)
    except EvaltoolError as exc:
        fail(exc)
    for run, result in zip(runs, results):
        for line in result.warnings:
            warn(f"{run}: {line}")
    try:
        if fmt == "trec":
            text = "".join(_format_eval(result, fmt, per_query, no_summary) for result in results)
        elif fmt == "json":
            from evaltool.report.json import dump_json

            text = dump_json([{"name": name, **result.to_dict(per_query)} for name, result in zip(names, results)])
        else:
            report = layouts.runs_report(names, results, per_query=per_query, summary=not no_summary)
            if fmt == "html":
                from evaltool.report.html import runs_html

                text = runs_html(names, results, per_query=per_query, report=report)
            else:
                from evaltool.report.table import render

                text = render(report, fmt)
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)


def _format_eval(result, fmt, per_query, no_summary, name=None) -> str:
    """One run's output; ``name``: the name the user gave it (JSON and HTML show it)."""
    from evaltool.report import layouts

    if fmt == "json":
        if name is not None:
            from evaltool.report.json import dump_json

            return dump_json({"name": name, **result.to_dict(per_query)})
        return result.to_json(per_query)
    if fmt == "trec":
        from evaltool.report.trec import format_trec

        return format_trec(result, per_query=per_query, summary=not no_summary) + layouts.eval_trec_lines(
            result, per_query=per_query
        )
    report = layouts.eval_report(result, per_query=per_query, summary=not no_summary)
    if fmt == "html":
        from evaltool.report.html import eval_html

        return eval_html(result, per_query=per_query, report=report, name=name)
    from evaltool.report.table import render

    return render(report, fmt)
