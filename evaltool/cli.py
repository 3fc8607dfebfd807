"""The command line: a thin translator from options to one library call and one formatter.

Exit codes: 0 success, 2 bad input or usage (one message, no traceback).
"""

from __future__ import annotations

import sys
import time

import click

from evaltool import __version__
from evaltool.errors import EvaltoolError

EVAL_HELP = """Score RUN against QRELS exactly as trec_eval 10.0 does.

\b
  evaltool qrels.txt run.txt                  # trec_eval's official measures
  evaltool qrels.txt run.txt -m ndcg_cut.10 -m P.5,10 -q
  evaltool -c -l2 -m recall.100 qrels.txt run.txt.gz
  cat run.txt | evaltool qrels.txt - -o json

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


@main.command("eval", help=EVAL_HELP)
@click.argument("qrels", type=click.Path(dir_okay=False, allow_dash=False))
@click.argument("run", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME[.PARAMS]",
              help="Measure or nickname (official, all_trec, set); repeatable. Default: official.")
@click.option("-q", "--query-eval", "per_query", is_flag=True, help="Also print a value for every query.")
@click.option("-c", "--complete", is_flag=True,
              help="Average over every qrels query; queries without results score as trec_eval scores them.")
@click.option("-n", "--no-summary", is_flag=True, help="Do not print the summary ('all') rows.")
@click.option("-l", "--level-for-rel", "relevance_level", type=int, default=1, show_default=True,
              help="Minimum grade that counts as relevant (graded measures ignore it).")
@click.option("-M", "--max-retrieved", "max_ret", type=int, default=None,
              help="Use only the top N documents of each query.")
@click.option("-J", "--judged-only", is_flag=True, help="Drop unjudged documents before scoring.")
@click.option("-N", "--num-docs-in-coll", "num_docs", type=int, default=0, help="Collection size (for utility).")
@click.option("-Z", "--zscores", type=click.Path(dir_okay=False), default=None,
              help="Print z-scores against a 'qid measure mean stddev' file.")
@click.option("-o", "--format", "fmt", type=click.Choice(["trec", "json"]), default="trec", show_default=True,
              help="Output format.")
@click.option("--on-duplicate", type=click.Choice(["error", "first", "max"]), default="error", show_default=True,
              help="A (query, document) pair given twice: stop (trec_eval), keep the first, or keep the max.")
@click.option("--stream", is_flag=True,
              help="Read the run chunk by chunk (memory bounded by a chunk of queries); same output.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Threads for parsing large files (default: all cores).")
@click.option("--timings", is_flag=True, hidden=True,
              help="Print the stage split (parse, rank, measures, output) as JSON on stderr.")
def eval_command(qrels, run, measures, per_query, complete, no_summary, relevance_level, max_ret,
                 judged_only, num_docs, zscores, fmt, on_duplicate, stream, jobs, timings):
    from evaltool.evaluate import evaluate

    if jobs:
        from evaltool.io import columnar

        columnar.JOBS = jobs
    try:
        result = evaluate(
            qrels, run, list(measures) or None, per_query,
            relevance_level=relevance_level, complete=complete, max_ret=max_ret,
            judged_only=judged_only, num_docs_in_coll=num_docs, zscores=zscores,
            on_duplicate=on_duplicate, stream=stream,
        )
    except EvaltoolError as exc:
        _fail(exc)
    meta = result.meta
    skipped = meta["skipped_queries"]
    if skipped:
        shown = ", ".join(skipped[:5]) + (", ..." if len(skipped) > 5 else "")
        _warn(f"warning: {len(skipped)} of the {len(skipped) + len(result.qids)} qrels queries have no results "
              f"in {meta['run']} and were skipped ({shown}); use -c to score them as trec_eval does")
    for side in ("qrels", "run"):
        dropped = meta["counts"][f"{side}_duplicates_resolved"]
        if dropped:
            _warn(f"note: {dropped} duplicate (query, document) rows in {meta[side]} resolved by --on-duplicate {on_duplicate}")
    clock = time.perf_counter()
    if fmt == "json":
        from evaltool.report.json import format_json

        _write(format_json(result, per_query))
    else:
        from evaltool.report.trec import format_trec

        _write(format_trec(result, per_query=per_query, summary=not no_summary))
    if timings:
        import json

        stages = dict(result.timings, output=time.perf_counter() - clock)
        click.echo(json.dumps({k: round(v, 6) for k, v in stages.items()}), err=True)


@main.command("measures")
@click.option("-m", "--measure", "name", default=None, help="Document one measure in full.")
def measures_command(name):
    """List every measure with its parameters and defaults, or document one.

    \b
      evaltool measures
      evaltool measures -m ndcg_cut
    """
    from evaltool.measures import MEASURES, NICKNAMES
    from evaltool.names import suggest

    if name:
        base = name.partition(".")[0]
        if base in NICKNAMES:
            _write(f"{base}: {' '.join(NICKNAMES[base])}\n")
            return
        m = MEASURES.get(base)
        if m is None:
            _fail(EvaltoolError(f"unknown measure '{name}'{suggest(base)}"))
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
    _write("\n".join(lines) + "\n")


def _dedent(text: str) -> str:
    import textwrap

    first, _, rest = text.strip("\n").partition("\n")
    return (first.strip() + "\n" + textwrap.dedent(rest)).rstrip()


if __name__ == "__main__":
    main()
