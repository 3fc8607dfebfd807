"""``evaltool compare QRELS RUN_A RUN_B ...``: paired tests between runs."""

from __future__ import annotations

import click

from evaltool.cli.common import (
    REPORT_FORMATS, check_labels, emit, evaluation_options, fail, grouping_options, note_ungrouped, output_options,
    read_grouping, warn,
)
from evaltool.errors import EvaltoolError

COMPARE_HELP = """Compare runs on the same queries: the first run is the baseline.

\b
  evaltool compare qrels.txt bm25.txt rm3.txt splade.txt -c -m ndcg_cut.10 -m map
  evaltool compare qrels.txt a.txt b.txt --test randomization --trials 100000 -o json
  evaltool compare qrels.txt a.txt b.txt --group-by difficulty --topics topics.tsv --labels

A row per run, a column per measure (default: map, ndcg_cut.10, P.10, recip_rank). For
every other run and measure: its mean, the difference from the baseline, a paired test
(--test), the adjusted p-value (--correction, over all runs x measures; * marks
adjusted p < --alpha), a confidence interval of the difference and the queries won,
tied and lost. Every run is scored with the same options (-c, -l, -M, -J, ...); the
queries compared are those all runs were scored on, which the output states.
"""


def _warn_not_compared(cmp) -> None:
    """Judged queries some run has no results for are left out (without -c): say so in every format."""
    left = {q for result in cmp.results for q in result.meta["skipped_queries"]}
    left.update(q for qids in cmp.left_out.values() for q in qids)
    if left:
        shown = sorted(left)
        warn(f"warning: {len(left)} judged quer{'y' if len(left) == 1 else 'ies'} left out of the comparison, "
              f"as not every run has results for {'it' if len(left) == 1 else 'them'} "
              f"({', '.join(shown[:5])}{', ...' if len(left) > 5 else ''}); use -c to score them as trec_eval does")


@click.command("compare", help=COMPARE_HELP)
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME[.PARAMS]",
              help="Measure to compare; repeatable. Default: map, ndcg_cut.10, P.10, recip_rank.")
@evaluation_options
@click.option("--test", type=click.Choice(["t", "wilcoxon", "randomization", "bootstrap"]), default="t",
              show_default=True, help="Paired test: t-test, Wilcoxon signed-rank, Fisher randomization, bootstrap.")
@click.option("--correction", type=click.Choice(["holm", "bonferroni", "bh", "none"]), default="holm",
              show_default=True, help="Multiple-testing correction over all runs x measures (bh: Benjamini-Hochberg).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Significance level; intervals are at 1 - alpha.")
@click.option("--trials", type=click.IntRange(min=1), default=10000, show_default=True,
              help="Random sign flips (randomization) and resamples (bootstrap, and the intervals of non-t tests).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the randomization and bootstrap.")
@click.option("--name", "names", multiple=True, metavar="NAME",
              help="Name of each run, in order (default: the file names); give one per run.")
@grouping_options
@output_options(REPORT_FORMATS, "table")
def compare_command(qrels, runs, measures, test, correction, alpha, trials, seed, names, group_by, topics,
                    labels, thresholds, fmt, output, **options):
    from evaltool.compare import compare_runs
    from evaltool.report import layouts

    try:
        table, label_thresholds = read_grouping(group_by, topics, labels, thresholds)
        cmp = compare_runs(qrels, list(runs), list(names) or None, list(measures) or None, test=test,
                           correction=correction, alpha=alpha, trials=trials, seed=seed, **options)
        check_labels(label_thresholds, thresholds, cmp.measures)
        _warn_not_compared(cmp)
        groups = None
        if table is not None:
            from evaltool.groups import group_means

            note_ungrouped(table, group_by, cmp.qids)
            groups = {field: group_means(cmp.qids, cmp.values, table, field) for field in group_by}
        kwargs = {"groups": groups, "thresholds": label_thresholds}
        if fmt == "json":
            from evaltool.report.json import dump_json

            text = dump_json(layouts.compare_json(cmp, **kwargs))
        else:
            from evaltool.report.table import render

            report = layouts.compare_csv(cmp, **kwargs) if fmt == "csv" else layouts.compare_report(cmp, **kwargs)
            text = render(report, fmt)
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)
