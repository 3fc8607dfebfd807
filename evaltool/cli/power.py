"""``evaltool power QRELS RUN...``: topic set size and power of the paired t-test (evaltool.power)."""

from __future__ import annotations

import click

from evaltool.cli.common import (
    REPORT_FORMATS,
    complete_measure,
    emit,
    evaluation_options,
    fail,
    output_options,
    warn,
)
from evaltool.errors import EvaltoolError

POWER_HELP = """How many topics a comparison needs, and how much power it has (paired t-test).

\b
  evaltool power qrels.txt bm25.txt splade.txt tasb.txt -m ndcg_cut.10 --min-delta 0.05 --min-delta 0.1
  evaltool power qrels.txt a.txt b.txt -c -m map --alpha 0.05 --beta 0.2 -o json

From the runs' per-topic values, per measure: the residual variance V_E of the two-way
ANOVA (system x topic), the standard deviation of a pair's differences sqrt(2 V_E), the
number of topics the paired t-test needs to detect each --min-delta with power 1 - beta
(Sakai's topic set size design, exact noncentral t), and the smallest difference the
present topics detect; per pair of runs, the achieved power of its comparison (its
observed mean and standard deviation of differences).
"""


@click.command("power", help=POWER_HELP)
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="NAME[.PARAMS]",
    shell_complete=complete_measure,
    help="Measure; repeatable. Default: compare's set.",
)
@evaluation_options
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level of the two-sided paired t-test.",
)
@click.option(
    "--beta",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.2,
    show_default=True,
    help="Type II error rate: the power asked for is 1 - beta.",
)
@click.option(
    "--min-delta",
    "min_deltas",
    type=float,
    multiple=True,
    metavar="D",
    help="Minimum difference to detect; repeatable (default 0.05).",
)
@click.option("--name", "names", multiple=True, metavar="NAME", help="Name of each run, in order.")
@output_options(REPORT_FORMATS, "table")
def power_command(qrels, runs, measures, alpha, beta, min_deltas, names, fmt, output, **options):
    from evaltool.power import power_analysis

    try:
        analysis = power_analysis(
            qrels,
            list(runs),
            list(names) or None,
            list(measures) or None,
            alpha=alpha,
            beta=beta,
            min_deltas=list(min_deltas) or [0.05],
            **options,
        )
        for line in analysis.warnings:
            warn(line)
        if fmt == "json":
            from evaltool.report.json import dump_json

            text = dump_json(analysis.to_dict())
        else:
            from evaltool.report.layouts import power_report
            from evaltool.report.table import render

            text = render(power_report(analysis, csv=fmt == "csv"), fmt)
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)
