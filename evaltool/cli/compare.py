"""``evaltool compare QRELS RUN_A RUN_B ...``: paired tests between runs."""

from __future__ import annotations

import click

from evaltool.cli.common import (
    complete_measure,
    REPORT_FORMATS,
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
from evaltool.measures.sets import described

COMPARE_HELP = """Compare runs on the same queries: the first run is the baseline.

\b
  evaltool compare qrels.txt bm25.txt rm3.txt splade.txt -c -m ndcg_cut.10 -m map
  evaltool compare qrels.txt a.txt b.txt --test randomization --trials 100000 -o json
  evaltool compare qrels.txt a.txt b.txt --group-by difficulty --topics topics.tsv --labels
  evaltool compare qrels.txt a.txt b.txt -o html --output compare.html   # with per-query plots
  evaltool compare qrels.txt a.txt b.txt c.txt d.txt --all-pairs --test tukey -o latex   # a paper table

A row per run, a column per measure (default: {defaults}). For
every other run and measure: its mean, the difference from the baseline, a paired test
(--test), the adjusted p-value (--correction, over all runs x measures; * marks
adjusted p < --alpha), a confidence interval of the difference and the queries won,
tied and lost. With --all-pairs: every pair of runs, its effect sizes (ES_E with the
residual variance of the two-way ANOVA, and the paired Cohen's d), the ANOVA table, the
Tukey HSD margin of error and a compact letter display (runs sharing a letter do not
differ significantly); --test tukey / hsd are family-wise over the pairs of a measure
(--correction is not applied to them). Every run is scored with the same options (-c, -l, -M, -J, ...); the
queries compared are those all runs were scored on, which the output states.
""".format(defaults=described("compare"))


@click.command("compare", help=COMPARE_HELP)
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="NAME[.PARAMS]",
    shell_complete=complete_measure,
    help=f"Measure to compare; repeatable. Default: {described('compare')}.",
)
@evaluation_options
@engine_options
@click.option(
    "--test",
    type=click.Choice(["t", "wilcoxon", "randomization", "bootstrap", "tukey", "hsd"]),
    default="t",
    show_default=True,
    help="Paired test: t-test, Wilcoxon signed-rank, Fisher randomization, bootstrap; "
    "or over all runs at once: randomised Tukey HSD (tukey), Tukey's HSD (hsd).",
)
@click.option(
    "--all-pairs",
    is_flag=True,
    help="Compare every pair of runs (not only with the first): the two-way ANOVA, effect sizes, "
    "margins of error and compact letters come with it.",
)
@click.option(
    "--correction",
    type=click.Choice(["holm", "bonferroni", "bh", "none"]),
    default="holm",
    show_default=True,
    help="Multiple-testing correction over all runs x measures (bh: Benjamini-Hochberg).",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level; intervals are at 1 - alpha.",
)
@click.option(
    "--trials",
    type=click.IntRange(min=1),
    default=10000,
    show_default=True,
    help="Random sign flips (randomization) and resamples (bootstrap, and the intervals of non-t tests).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the randomization and bootstrap.")
@click.option(
    "--name",
    "names",
    multiple=True,
    metavar="NAME",
    help="Name of each run, in order (default: the file names); give one per run.",
)
@grouping_options
@relevance_options
@output_options([*REPORT_FORMATS, "html"], "table")
@record_options(with_name=False)
@shows_reading_progress
def compare_command(
    qrels,
    runs,
    measures,
    test,
    all_pairs,
    correction,
    alpha,
    trials,
    seed,
    names,
    group_by,
    topics,
    labels,
    thresholds,
    relevance,
    packs,
    f1_threshold,
    f1_total,
    qrels_format,
    run_format,
    fmt,
    output,
    record,
    db,
    note,
    tags,
    at,
    **options,
):
    from evaltool.compare import compare_runs
    from evaltool.report import layouts

    history = None
    try:
        check_format(fmt)
        history = recording(record, db, note, tags, at)
        cmp = compare_runs(
            qrels,
            list(runs),
            list(names) or None,
            list(measures) or None,
            test=test,
            correction=correction,
            alpha=alpha,
            trials=trials,
            seed=seed,
            all_pairs=all_pairs,
            **relevance_arguments(relevance, packs, f1_threshold, f1_total, qrels_format, run_format),
            **grouping_arguments(group_by, topics, labels, thresholds),
            **options,
        )
        if history is not None:
            for name, result in zip(cmp.names, cmp.results):  # one execution per run, named as in the output
                history.record(result, name, kind="compare", thresholds=cmp.thresholds)
        for line in cmp.warnings:
            warn(line)
        if fmt == "json":
            text = cmp.to_json()
        elif fmt == "html":
            from evaltool.report.html import compare_html

            text = compare_html(cmp)
        else:
            from evaltool.report.table import render

            text = render(layouts.compare_csv(cmp) if fmt == "csv" else layouts.compare_report(cmp), fmt)
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)
    finally:
        if history is not None:
            history.close()
