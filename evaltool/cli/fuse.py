"""``evaltool fuse RUN... --output fused.run``: several runs fused into one (:mod:`evaltool.fusion`)."""

from __future__ import annotations

import click

from evaltool.cli.common import REPORT_FORMATS, check_format, emit, evaluation_options, fail, output_options
from evaltool.errors import EvaltoolError
from evaltool.fusion import METHODS, NORMS

FUSE_HELP = """Fuse runs into one TREC run.

\b
  evaltool fuse bm25.txt splade.txt tasb.txt --output fused.run            # RRF, k = 60
  evaltool fuse bm25.txt splade.txt --method wsum --weights 0.3,0.7 --norm zmuv --output fused.run
  evaltool fuse bm25.txt splade.txt --method wsum --optimize ndcg_cut.10 --qrels qrels.txt --folds 5 \\
      --output fused.run                                                  # search the weights

\b
Methods: {methods}.
Each run is ranked as trec_eval ranks it (score descending, then document id descending);
--depth keeps each run's top N and cuts the fused ranking there. Score methods rescale
each run's scores per query first (--norm); rank methods (rrf, isr, log_isr, logn_isr, rbc,
borda, wborda) use the ranks only. The fused run is written to --output (standard output
without it), ties broken as trec_eval breaks them.

--optimize MEASURE --qrels QRELS tries every weight vector on a grid (weights >= 0
summing to 1, multiples of --step) for wsum, wmnz, mixed and wborda, or a grid of values
of k (rrf), phi (rbc), gamma (combgmnz) or sigma (logn_isr); it keeps the best mean
MEASURE over the queries, prints the search (-o) with its --folds cross-validated score
(each fold's queries scored with the setting that was best on the others), and writes
the run fused with the best setting. -c, -l, -M, -J say how --optimize scores (as in eval).
""".format(methods=", ".join(METHODS))


@click.command("fuse", help=FUSE_HELP)
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--method", type=click.Choice(list(METHODS)), default="rrf", show_default=True, help="Fusion method.")
@click.option(
    "--norm",
    type=click.Choice(list(NORMS)),
    default="minmax",
    show_default=True,
    help="Score normalisation per run and query (score methods).",
)
@click.option("--weights", default=None, metavar="W1,W2,...", help="One weight per run, in order (weighted methods).")
@click.option("-k", "k", type=float, default=None, help="rrf's k (default 60).")
@click.option("--phi", type=float, default=None, help="rbc's persistence (default 0.8).")
@click.option("--gamma", type=float, default=None, help="combgmnz's exponent (default 0.5).")
@click.option("--sigma", type=float, default=None, help="logn_isr's sigma (default 0.01).")
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Fuse each run's top N documents; keep the fused top N.",
)
@click.option("--tag", default=None, help="Run tag of the fused run (default: the method).")
@click.option(
    "--name", "names", multiple=True, metavar="NAME", help="Name of each run, in order (default: file names)."
)
@evaluation_options
@click.option(
    "--optimize",
    "measure",
    default=None,
    metavar="MEASURE",
    help="Search the weights (or the method's parameter) for the best mean MEASURE.",
)
@click.option("--qrels", type=click.Path(dir_okay=False), default=None, help="Judgments for --optimize.")
@click.option(
    "--folds",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Cross-validation folds of the queries for --optimize (1: none).",
)
@click.option("--step", type=float, default=0.1, show_default=True, help="Weight grid step for --optimize.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the folds' shuffle.")
@output_options([*REPORT_FORMATS, "html"], "table")
def fuse_command(
    runs,
    method,
    norm,
    weights,
    k,
    phi,
    gamma,
    sigma,
    depth,
    tag,
    names,
    measure,
    qrels,
    folds,
    step,
    seed,
    fmt,
    output,
    **options,
):
    from evaltool.fusion import fuse, optimize_fusion

    try:
        if measure is None:
            if qrels is not None:
                raise EvaltoolError("--qrels is for --optimize MEASURE; give both, or neither")
            fused = fuse(
                list(runs),
                method,
                norm=norm,
                weights=weights,
                k=k,
                phi=phi,
                gamma=gamma,
                sigma=sigma,
                depth=depth,
                names=list(names) or None,
                tag=tag,
                on_duplicate=options["on_duplicate"],
            )
            emit(fused.to_trec(), output)
            return
        if qrels is None:
            raise EvaltoolError("--optimize needs --qrels QRELS, the judgments to score the fused runs with")
        if output is None:
            raise EvaltoolError("--optimize prints the search; give --output FILE for the fused run")
        check_format(fmt)
        if weights is not None or any(v is not None for v in (k, phi, gamma, sigma)):
            raise EvaltoolError(
                "--optimize searches the weights or the parameter; leave --weights, -k, --phi, --gamma and --sigma out"
            )
        search = optimize_fusion(
            qrels,
            list(runs),
            measure,
            method,
            norm=norm,
            folds=folds,
            step=step,
            seed=seed,
            depth=depth,
            names=list(names) or None,
            tag=tag,
            **options,
        )
        text = search_text(search, fmt)
        emit(search.fused.to_trec(), output)
        emit(text, None)
    except EvaltoolError as exc:
        fail(exc)


def search_text(search, fmt: str) -> str:
    """The weight (or parameter) search in the format asked for."""
    if fmt == "json":
        from evaltool.report.json import dump_json

        return dump_json(search.to_dict())
    if fmt == "html":
        from evaltool.report.html import fusion_search_html
        from evaltool.report.layouts import fusion_search_report

        return fusion_search_html(search, fusion_search_report(search))
    from evaltool.report.layouts import fusion_search_report
    from evaltool.report.table import render

    return render(fusion_search_report(search, csv=fmt == "csv"), fmt)
