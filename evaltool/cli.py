"""The command line: a thin translator from options to one library call and one formatter.

Exit codes: 0 success, 2 bad input or usage (one message, no traceback).
"""

from __future__ import annotations

import sys
import time

import click

from evaltool import __version__
from evaltool.errors import EvaltoolError
from evaltool.runner.command import BENCH_HELP, BENCH_OPTIONS

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


class DefaultGroup(click.Group):
    """A group whose default command is ``eval``: ``evaltool QRELS RUN`` needs no subcommand."""

    default_command = "eval"

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = [self.default_command, *args]
        elif not args:
            args = ["--help"]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evaltool")
def main():
    """evaltool: evaluate ranked retrieval runs (trec_eval-compatible, fast).

    \b
    evaltool QRELS RUN [OPTIONS]    evaluate (the default command; see 'evaltool eval -h')
    evaltool compare QRELS RUN...   compare runs with paired tests (first run = baseline)
    evaltool check REF QRELS RUN    check a run against reference numbers (exit 1 on drift)
    evaltool measures [-m NAME]     list measures, or document one
    """


def _write(text: str) -> None:
    sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
    sys.stdout.flush()


def _warn(text: str) -> None:
    click.echo(f"evaltool: {text}", err=True)


def _fail(exc: EvaltoolError):
    _warn(str(exc))
    sys.exit(2)


def _options(*decorators):
    """Several click options as one decorator, in the order given."""

    def apply(function):
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


# the evaluate() options every scoring command shares; each parameter is named as evaluate()'s keyword
evaluation_options = _options(
    click.option("-c", "--complete", is_flag=True,
                 help="Average over every qrels query; queries without results score as trec_eval scores them."),
    click.option("-l", "--level-for-rel", "relevance_level", type=int, default=1, show_default=True,
                 help="Minimum grade that counts as relevant (graded measures ignore it)."),
    click.option("-M", "--max-retrieved", "max_ret", type=int, default=None,
                 help="Use only the top N documents of each query."),
    click.option("-J", "--judged-only", is_flag=True, help="Drop unjudged documents before scoring."),
    click.option("-N", "--num-docs-in-coll", "num_docs_in_coll", type=int, default=0,
                 help="Collection size (for utility)."),
    click.option("--on-duplicate", type=click.Choice(["error", "first", "max"]), default="error", show_default=True,
                 help="A (query, document) pair given twice: stop (trec_eval), keep the first, or keep the max."),
)
# where judgments come from when the inputs are a queries file and JSONL results (see 'Judgments without qrels')
relevance_options = _options(
    click.option("--relevance", type=click.Choice(["auto", "qrels", "pack", "token-f1"]), default="auto",
                 show_default=True,
                 help="Judge each query by its own qrels, else a pack, else token F1 of its answer (auto); "
                      "or by one of them only."),
    click.option("--pack", "packs", multiple=True, metavar="NAME|MODULE:ATTR",
                 help="A relevance pack: an installed one (locomo, longmemeval) or module:attr; repeatable. "
                      "Default: every installed pack."),
    click.option("--f1-threshold", type=click.FloatRange(0, 1), default=0.3, show_default=True,
                 help="Token F1 (answer vs. item text) at or above which an item is relevant."),
    click.option("--qrels-format", type=click.Choice(["auto", "trec", "json", "jsonl"]), default="auto",
                 show_default=True, help="Format of QRELS: TREC qrels or a queries file (JSON, JSONL); auto reads "
                                         "the content."),
    click.option("--run-format", type=click.Choice(["auto", "trec", "jsonl"]), default="auto", show_default=True,
                 help="Format of RUN: a TREC run or JSONL results; auto reads the content."),
)
grouping_options = _options(
    click.option("--group-by", "group_by", multiple=True, metavar="FIELD",
                 help="Also summarize each group of queries by FIELD of --topics (category, difficulty...); "
                      "repeatable."),
    click.option("--topics", type=click.Path(dir_okay=False), default=None,
                 help="Fields per query id: TSV with a header, JSON or JSONL (for --group-by)."),
    click.option("--labels", is_flag=True, help="Label rows good/fair/poor: recip_rank >= 0.7, ndcg_cut_10 >= 0.6, "
                 "P_5 >= 0.5; good when all hold, fair when half do."),
    click.option("--threshold", "thresholds", multiple=True, metavar="NAME=VALUE",
                 help="Set (or with NAME=off drop) a --labels threshold, e.g. ndcg_cut_10=0.65; implies --labels."),
)


def output_options(formats, default):
    return _options(
        click.option("-o", "--format", "fmt", type=click.Choice(formats), default=default, show_default=True,
                     help="Output format."),
        click.option("--output", type=click.Path(dir_okay=False), default=None,
                     help="Write the output to FILE (atomically: all or nothing) instead of standard output."),
    )


def _emit(text: str, output: str | None) -> None:
    if output:
        from evaltool.report.output import write_atomic

        write_atomic(output, text)
    else:
        _write(text)


def _read_grouping(group_by, topics, labels, thresholds):
    """The topics file and the label thresholds asked for (None when not)."""
    from evaltool.groups import read_topics
    from evaltool.labels import parse_thresholds

    if group_by and not topics:
        raise EvaltoolError("--group-by needs --topics FILE (a TSV, JSON or JSONL of query id -> fields)")
    if topics and not group_by:
        raise EvaltoolError("--topics needs --group-by FIELD to say which field groups the queries")
    table = read_topics(topics) if topics else None
    for field in group_by:
        table.check_field(field)
    return table, (parse_thresholds(thresholds) if labels or thresholds else None)


def _check_labels(thresholds, given, measures) -> None:
    from evaltool.labels import check_thresholds

    if thresholds is not None:
        check_thresholds(thresholds, measures, given)


def _note_ungrouped(table, group_by, qids) -> None:
    from evaltool.groups import NO_GROUP

    for field in group_by:
        left = table.groups(qids, field).get(NO_GROUP)
        if left:
            _warn(f"note: {len(left)} of {len(qids)} queries have no {field} in {table.path}; "
                  f"they form the group {NO_GROUP}")


@main.command("eval", help=EVAL_HELP)
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
    from evaltool.report.views import relevance_notes, relevance_warnings

    if jobs:
        from evaltool.io import columnar

        columnar.JOBS = jobs
    try:
        table, label_thresholds = _read_grouping(group_by, topics, labels, thresholds)
        result = evaluate(qrels, run, list(measures) or None, per_query, zscores=zscores, stream=stream,
                          relevance=relevance, packs=list(packs), f1_threshold=f1_threshold,
                          qrels_format=None if qrels_format == "auto" else qrels_format,
                          run_format=None if run_format == "auto" else run_format, **options)
        _check_labels(label_thresholds, thresholds, result.measures)
    except EvaltoolError as exc:
        _fail(exc)
    meta = result.meta
    for line in relevance_warnings(result) + (relevance_notes(result) if fmt == "trec" else []):
        _warn(line)
    skipped = meta["skipped_queries"]
    if skipped:
        shown = ", ".join(skipped[:5]) + (", ..." if len(skipped) > 5 else "")
        _warn(f"warning: {len(skipped)} of the {len(skipped) + len(result.qids)} qrels queries have no results "
              f"in {meta['run']} and were skipped ({shown}); use -c to score them as trec_eval does")
    for side in ("qrels", "run"):
        dropped = meta["counts"][f"{side}_duplicates_resolved"]
        if dropped:
            _warn(f"note: {dropped} duplicate (query, document) rows in {meta[side]} resolved by "
                  f"--on-duplicate {options['on_duplicate']}")
    clock = time.perf_counter()
    try:
        _emit(_format_eval(result, fmt, per_query, no_summary, table, group_by, label_thresholds), output)
        if save_reference:
            from evaltool.report.json import format_json
            from evaltool.report.output import write_atomic

            write_atomic(save_reference, format_json(result, per_query=True))
    except EvaltoolError as exc:
        _fail(exc)
    if timings:
        import json

        stages = dict(result.timings, output=time.perf_counter() - clock)
        click.echo(json.dumps({k: round(v, 6) for k, v in stages.items()}), err=True)


def _format_eval(result, fmt, per_query, no_summary, table, group_by, thresholds) -> str:
    from evaltool.report import views

    groups = None
    if table is not None:
        from evaltool.groups import group_summaries

        _note_ungrouped(table, group_by, result.qids)
        groups = {field: group_summaries(result, table, field) for field in group_by}
    if fmt == "json":
        from evaltool.report.json import dump_json

        return dump_json(views.eval_json(result, per_query=per_query, groups=groups, thresholds=thresholds))
    if fmt == "trec":
        from evaltool.report.trec import format_trec

        text = format_trec(result, per_query=per_query, summary=not no_summary)
        return text + views.eval_trec_lines(result, per_query=per_query, groups=groups, thresholds=thresholds)
    from evaltool.report.table import render

    report = views.eval_report(result, per_query=per_query, summary=not no_summary, groups=groups,
                               thresholds=thresholds)
    return render(report, fmt)


REPORT_FORMATS = ["table", "json", "csv", "markdown", "latex"]

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
        _warn(f"warning: {len(left)} judged quer{'y' if len(left) == 1 else 'ies'} left out of the comparison, "
              f"as not every run has results for {'it' if len(left) == 1 else 'them'} "
              f"({', '.join(shown[:5])}{', ...' if len(left) > 5 else ''}); use -c to score them as trec_eval does")


@main.command("compare", help=COMPARE_HELP)
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
    from evaltool.report import views

    try:
        table, label_thresholds = _read_grouping(group_by, topics, labels, thresholds)
        cmp = compare_runs(qrels, list(runs), list(names) or None, list(measures) or None, test=test,
                           correction=correction, alpha=alpha, trials=trials, seed=seed, **options)
        _check_labels(label_thresholds, thresholds, cmp.measures)
        _warn_not_compared(cmp)
        groups = None
        if table is not None:
            from evaltool.groups import group_means

            _note_ungrouped(table, group_by, cmp.qids)
            groups = {field: group_means(cmp.qids, cmp.values, table, field) for field in group_by}
        kwargs = {"groups": groups, "thresholds": label_thresholds}
        if fmt == "json":
            from evaltool.report.json import dump_json

            text = dump_json(views.compare_json(cmp, **kwargs))
        else:
            from evaltool.report.table import render

            report = views.compare_csv(cmp, **kwargs) if fmt == "csv" else views.compare_report(cmp, **kwargs)
            text = render(report, fmt)
        _emit(text, output)
    except EvaltoolError as exc:
        _fail(exc)


CHECK_HELP = """Check that RUN still scores what REFERENCE says: exit 0 if every value holds, 1 if any drifts.

\b
  evaltool qrels.txt run.txt -m ndcg_cut.10 -m map --save-reference ref.json
  evaltool check ref.json qrels.txt run.txt --per-query
  evaltool check published.tsv qrels.txt run.txt -c -l 2 --tolerance 1e-4

REFERENCE is the JSON of 'evaltool ... -o json' (or --save-reference), whose options
(-c, -l, ...) are used unless given here, or lines 'measure qid value' (qid 'all' for
the summary; '#' comments and a header line allowed), such as numbers typed in from a
paper. Summary values are always checked, per-query ones with --per-query. A value
holds when it is within --tolerance of the reference; with --allow-improvement a higher
value holds too. Drifts are printed as a table. Exit 2 on bad input.
"""


@main.command("check", help=CHECK_HELP)
@click.argument("reference", type=click.Path(dir_okay=False))
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False, allow_dash=True))
@evaluation_options
@click.option("--per-query", is_flag=True, help="Also check the reference's per-query values.")
@click.option("--tolerance", type=click.FloatRange(min=0), default=1e-4, show_default=True,
              help="Largest absolute difference that still holds.")
@click.option("--allow-improvement", is_flag=True, help="A value above the reference holds (it is listed).")
@output_options(REPORT_FORMATS, "table")
def check_command(reference, qrels, run, per_query, tolerance, allow_improvement, fmt, output, **options):
    from click.core import ParameterSource

    from evaltool.regress import check, read_reference
    from evaltool.report import views

    context = click.get_current_context()
    given = {key: value for key, value in options.items()
             if context.get_parameter_source(key) is not ParameterSource.DEFAULT}
    try:
        result = check(read_reference(reference), qrels, run, tolerance=tolerance, per_query=per_query,
                       allow_improvement=allow_improvement, **given)
        if fmt == "json":
            from evaltool.report.json import dump_json

            text = dump_json(result.to_dict())
        else:
            from evaltool.report.table import render

            text = render(views.check_report(result), fmt)
        _emit(text, output)
    except EvaltoolError as exc:
        _fail(exc)
    sys.exit(0 if result.ok else 1)


@main.command("bench", help=BENCH_HELP)
@_options(*BENCH_OPTIONS)
def bench_command(**options):
    from evaltool.runner.command import run_command

    try:
        code = run_command(**options)
    except EvaltoolError as exc:
        _fail(exc)
    sys.exit(code)


@main.command("measures")
@click.option("-m", "--measure", "name", default=None, help="Document one measure in full.")
def measures_command(name):
    """List every measure with its parameters and defaults, or document one (any spelling).

    \b
      evaltool measures
      evaltool measures -m ndcg_cut
      evaltool measures -m "nDCG(dcg='exp-log2')@10"
    """
    from evaltool.measures import MEASURES, NICKNAMES, docs
    from evaltool.measures.base import Params
    from evaltool.names import find_measure, suggest

    if name:
        base = name.partition(".")[0]
        if base in NICKNAMES:
            _write(f"{base}: {' '.join(NICKNAMES[base])}\n")
            return
        m = find_measure(name)
        if m is None:
            _fail(EvaltoolError(f"unknown measure '{name}'{suggest(name)}"))
        if m.params is Params.NAMED:
            _write(docs.document(m))
            return
        defaults = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in m.default)
        _write(f"{m.name}\n  parameters: {m.params.value}{f' (default {defaults})' if defaults else ''}\n"
               f"  summary: {m.agg.value}; per query: {'yes' if m.per_query else 'no'}\n\n"
               f"{_dedent(m.doc)}\n")
        return
    lines = [f"{'measure':<22}  {'parameters':<28}  description"]
    for m in MEASURES.values():
        defaults = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in m.default)
        params = m.params.value + (f" ({defaults})" if defaults else "")
        lines.append(f"{m.name:<22}  {params:<28}  {m.summary_line()}")
    lines.append("")
    lines.append("nicknames: " + "; ".join(f"{k}" for k in NICKNAMES))
    lines += ["", *docs.listing()]
    _write("\n".join(lines) + "\n")


def _dedent(text: str) -> str:
    import textwrap

    first, _, rest = text.strip("\n").partition("\n")
    return (first.strip() + "\n" + textwrap.dedent(rest)).rstrip()


if __name__ == "__main__":
    main()
