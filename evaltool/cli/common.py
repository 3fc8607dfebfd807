"""What the commands share: option groups (as decorators), output and failure.

Every scoring command names its parameters as :func:`evaltool.evaluate`'s keywords, so
a command passes ``**options`` straight through.
"""

from __future__ import annotations

import sys

import click

from evaltool.errors import EvaltoolError, clip


def write(text: str) -> None:
    sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
    sys.stdout.flush()


MESSAGE_LIMIT = 2000  # characters of one line on stderr: what a message quotes is cut to 200, this is the backstop
WARNING_LIMIT = 100  # lines on stderr per command; the rest are counted, not printed


def warn(text: str) -> None:
    """One line on stderr, cut to :data:`MESSAGE_LIMIT` characters; after :data:`WARNING_LIMIT`
    lines in one command, only counted, and the count printed when the command ends (a
    thousand runs that each warn must not write megabytes)."""
    meta = _root_meta()
    shown = meta.get("evaltool.warnings", 0)
    meta["evaltool.warnings"] = shown + 1
    if shown < WARNING_LIMIT or meta is _NO_CONTEXT:
        click.echo(f"evaltool: {clip(text, MESSAGE_LIMIT)}", err=True)
    elif shown == WARNING_LIMIT:
        click.get_current_context().find_root().call_on_close(
            lambda: click.echo(
                f"evaltool: {meta['evaltool.warnings'] - WARNING_LIMIT} more messages not shown "
                f"(at most {WARNING_LIMIT} are printed)",
                err=True,
            )
        )


_NO_CONTEXT: dict = {}


def _root_meta() -> dict:
    context = click.get_current_context(silent=True)
    return _NO_CONTEXT if context is None else context.find_root().meta


def fail(exc: EvaltoolError):
    click.echo(f"evaltool: {clip(str(exc), MESSAGE_LIMIT)}", err=True)  # the one message, never counted away
    sys.exit(2)


def complete_measure(ctx, param, incomplete: str) -> list:
    """Shell completion after ``-m``: measure names, ir_measures spellings, aliases and nicknames."""
    from click.shell_completion import CompletionItem

    from evaltool.measures import MEASURES, NAMED_MEASURES, NICKNAMES

    names = set(MEASURES) | set(NICKNAMES)
    for measure in NAMED_MEASURES.values():
        for alias in (measure.name, *measure.aliases):
            token = alias if isinstance(alias, str) else alias[0]
            names.add(token.removesuffix("_at_k") + "_at_" if token.endswith("_at_k") else token)
    exact = sorted(n for n in names if n.startswith(incomplete))
    matches = exact or sorted(n for n in names if n.lower().startswith(incomplete.lower()))
    return [CompletionItem(name) for name in matches]


def option_group(*decorators):
    """Several click options as one decorator, in the order given."""

    def apply(function):
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


# the evaluate() options every scoring command shares; each parameter is named as evaluate()'s keyword
evaluation_options = option_group(
    click.option(
        "-c",
        "--complete",
        is_flag=True,
        help="Average over every qrels query; queries without results score as trec_eval scores them.",
    ),
    click.option(
        "-l",
        "--level-for-rel",
        "relevance_level",
        type=int,
        default=1,
        show_default=True,
        help="Minimum grade that counts as relevant (graded measures ignore it).",
    ),
    click.option(
        "-M", "--max-retrieved", "max_ret", type=int, default=None, help="Use only the top N documents of each query."
    ),
    click.option("-J", "--judged-only", is_flag=True, help="Drop unjudged documents before scoring."),
    click.option(
        "-N", "--num-docs-in-coll", "num_docs_in_coll", type=int, default=0, help="Collection size (for utility)."
    ),
    click.option(
        "--on-duplicate",
        type=click.Choice(["error", "first", "max"]),
        default="error",
        show_default=True,
        help="A (query, document) pair given twice: stop (trec_eval), keep the first, or keep the max.",
    ),
)
# where the evaluation runs; each parameter is named as evaluate()'s keyword
engine_options = option_group(
    click.option(
        "--engine",
        type=click.Choice(["local", "dask"]),
        default="local",
        show_default=True,
        help="Evaluate in this process, or on a Dask cluster partitioned by query (same output; "
        "needs pip install 'evaltool[dask]').",
    ),
    click.option(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="--engine dask: the scheduler's address (tcp://host:8786); default a local cluster "
        "on this machine's cores.",
    ),
    click.option(
        "--partitions",
        type=click.IntRange(min=1),
        default=None,
        metavar="N",
        help="--engine dask: partitions of the run by query (default: twice the workers).",
    ),
)
# where judgments come from when the inputs are a queries file and JSONL results (see 'Judgments without qrels')
relevance_options = option_group(
    click.option(
        "--relevance",
        type=click.Choice(["auto", "qrels", "pack", "token-f1"]),
        default="auto",
        show_default=True,
        help="Judge each query by its own qrels, else a pack, else token F1 of its answer (auto); "
        "or by one of them only.",
    ),
    click.option(
        "--pack",
        "packs",
        multiple=True,
        metavar="NAME|MODULE:ATTR",
        help="A relevance pack: an installed one (locomo, longmemeval) or module:attr; repeatable. "
        "Default: every installed pack.",
    ),
    click.option(
        "--f1-threshold",
        type=click.FloatRange(0, 1),
        default=0.3,
        show_default=True,
        help="Token F1 (answer vs. item text) at or above which an item is relevant.",
    ),
    click.option(
        "--f1-total",
        type=click.Choice(["retrieved", "top-k"]),
        default="retrieved",
        show_default=True,
        help="Token F1's relevant items: those found among all retrieved items, or only in the top K "
        "(K the largest cutoff of -m; every item below is not relevant).",
    ),
    click.option(
        "--qrels-format",
        type=click.Choice(["auto", "trec", "json", "jsonl", "subtopics"]),
        default="auto",
        show_default=True,
        help="Format of QRELS: TREC qrels, a queries file (JSON, JSONL) or subtopic "
        "qrels 'qid subtopic docid grade' (read so whenever a diversity measure is "
        "asked for); auto reads the content.",
    ),
    click.option(
        "--run-format",
        type=click.Choice(["auto", "trec", "jsonl"]),
        default="auto",
        show_default=True,
        help="Format of RUN: a TREC run or JSONL results; auto reads the content.",
    ),
)
grouping_options = option_group(
    click.option(
        "--group-by",
        "group_by",
        multiple=True,
        metavar="FIELD",
        help="Also summarize each group of queries by FIELD of --topics (category, difficulty...); repeatable.",
    ),
    click.option(
        "--topics",
        type=click.Path(dir_okay=False),
        default=None,
        help="Fields per query id: TSV with a header, JSON or JSONL (for --group-by).",
    ),
    click.option(
        "--labels",
        is_flag=True,
        help="Label rows good/fair/poor: recip_rank >= 0.7, ndcg_cut_10 >= 0.6, "
        "P_5 >= 0.5; good when all hold, fair when half do.",
    ),
    click.option(
        "--threshold",
        "thresholds",
        multiple=True,
        metavar="NAME=VALUE",
        help="Set (or with NAME=off drop) a --labels threshold, e.g. ndcg_cut_10=0.65; implies --labels.",
    ),
)


def output_options(formats, default):
    return option_group(
        click.option(
            "-o",
            "--format",
            "fmt",
            type=click.Choice(formats),
            default=default,
            show_default=True,
            help="Output format.",
        ),
        click.option(
            "--output",
            type=click.Path(dir_okay=False),
            default=None,
            help="Write the output to FILE (atomically: all or nothing) instead of standard output.",
        ),
    )


def check_format(fmt: str) -> None:
    """Fail before any work (and before --record writes) when the format needs a missing extra."""
    if fmt == "html":
        from evaltool.report.html import asset

        asset("plotly.min.js")


def emit(text: str, output: str | None) -> None:
    if output:
        from evaltool.report.output import write_atomic

        write_atomic(output, text)
    else:
        write(text)


def relevance_arguments(relevance, packs, f1_threshold, f1_total, qrels_format, run_format) -> dict:
    """The relevance keywords of ``evaluate`` / ``compare_runs`` from :data:`relevance_options`."""
    return {
        "relevance": relevance,
        "packs": list(packs),
        "f1_threshold": f1_threshold,
        "f1_total": f1_total,
        "qrels_format": None if qrels_format == "auto" else qrels_format,
        "run_format": None if run_format == "auto" else run_format,
    }


def grouping_arguments(group_by, topics, labels, thresholds) -> dict:
    """The ``group_by``, ``topics`` and ``thresholds`` keywords of ``evaluate`` / ``compare_runs``."""
    return {
        "group_by": list(group_by),
        "topics": topics,
        "thresholds": list(thresholds) if thresholds else (True if labels else None),
    }


REPORT_FORMATS = ["table", "json", "csv", "markdown", "latex"]
