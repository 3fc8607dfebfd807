"""``evaltool reproduce ORIGINAL... REPRODUCED... --qrels Q``: reproducibility measures, computed by :mod:`evaltool.reproducibility`."""

from __future__ import annotations

import click

from evaltool.cli.common import REPORT_FORMATS, complete_measure, emit, evaluation_options, fail, output_options, warn
from evaltool.errors import EvaltoolError

REPRODUCE_HELP = """How well reproduced runs reproduce the original ones.

\b
  evaltool reproduce bm25.txt splade.txt bm25-rep.txt splade-rep.txt --qrels qrels.txt -m ndcg_cut.10 -m map
  evaltool reproduce orig.txt rep.txt --qrels qrels.txt -o json --per-topic

The runs are the originals followed by their reproductions, in the same order (half and
half); the first pair is the baseline. Per pair: Kendall's tau union and rank-biased
overlap of the rankings (mean over the topics; --per-topic lists them), the RMSE of the
per-topic scores of each measure and the p-value of the paired t-test between original and
reproduction. Per other pair (advanced) against the baseline: the effect ratio and the
delta relative improvement. The measures of repro_eval (Breuer et al., SIGIR 2020).
"""


@click.command("reproduce", help=REPRODUCE_HELP)
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--qrels", type=click.Path(dir_okay=False), required=True, help="Judgments of the original runs.")
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
    "--rbo-p",
    "p",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
    help="RBO's persistence p.",
)
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Documents of each ranking that KTU and RBO compare.",
)
@click.option("--per-topic", is_flag=True, help="Also give KTU and RBO per topic.")
@click.option("--name", "names", multiple=True, metavar="NAME", help="Name of each run, in order.")
@output_options(REPORT_FORMATS, "table")
def reproduce_command(runs, qrels, measures, p, depth, per_topic, names, fmt, output, **options):
    from evaltool.reproducibility import reproduce

    try:
        if len(runs) < 2 or len(runs) % 2:
            raise EvaltoolError(
                f"give the original runs and then their reproductions, as many of each; got "
                f"{len(runs)} run{'s' if len(runs) != 1 else ''}"
            )
        half = len(runs) // 2
        result = reproduce(
            qrels,
            list(runs[:half]),
            list(runs[half:]),
            list(measures) or None,
            names=list(names) or None,
            p=p,
            depth=depth,
            **options,
        )
        for line in result.warnings:
            warn(line)
        if fmt == "json":
            from evaltool.report.json import dump_json

            text = dump_json(result.to_dict(per_topic))
        else:
            from evaltool.report.layouts import reproduce_report
            from evaltool.report.table import render

            text = render(reproduce_report(result, per_topic=per_topic, csv=fmt == "csv"), fmt)
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)
