"""``evaltool bench QUERIES --backend SPEC``: run a benchmark against a search backend."""

from __future__ import annotations

import sys

import click

from evaltool.cli.common import fail, option_group
from evaltool.errors import EvaltoolError

BENCH_HELP = """Run a benchmark: send every query of QUERIES to a search backend, score, report.

\b
  evaltool bench data/bench_queries.json --backend evaltool.bench.examples:bm25_search
  evaltool bench queries.json --backend mysearch:search --concurrency 8 --timeout 5 -v
  evaltool bench queries.json --backend http://127.0.0.1:8000/search --request-template \\
      '{"q": "{query}", "k": "{limit}"}' --response-path 'hits.*.id'
  evaltool bench queries.json --backend bm25.run.txt           # replay a TREC run
  evaltool bench queries.json --backend mysearch:search --resume   # after Ctrl-C or a crash

QUERIES is a JSON list of {id, query, category, difficulty, expected_modules |
relevant_ids | qrels, [version], ...}; it is validated before anything runs. BACKEND is
module:function (sync or async, returns ranked ids or (id, score[, text]) items), an
http(s):// URL, or a TREC run file. Every finished query is appended to a checkpoint in
--out, so an interrupted run loses nothing and --resume finishes it. At the end
OUT/baseline_YYYYMMDD_HHMMSS.json holds the report (metadata, aggregate_metrics,
per_category, per_difficulty, detailed_results), beside the TREC run and qrels it was
scored from. A failed or timed-out query is recorded with its error and left out of the
averages. Exit 0 when the report is written, 2 on bad input, 128 + the signal's number when
interrupted (130 for Ctrl-C).
"""


# in the order --help lists them
BENCH_OPTIONS = (
        click.argument("queries", type=click.Path(dir_okay=False)),
        click.option("--backend", required=True, metavar="SPEC",
                     help="module:function, an http(s):// URL, or a TREC run file to replay."),
        click.option("-m", "--measure", "measures", multiple=True, metavar="NAME[.PARAMS]",
                     help="Measure; repeatable. Default: P.3, P.5, recall.10, recip_rank "
                          "(reported as precision@3, precision@5, recall@10, mrr)."),
        click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True,
                     help="Results asked for and kept per query."),
        click.option("--out", "out_dir", type=click.Path(file_okay=False), default="results", show_default=True,
                     help="Folder of the report, the TREC files and the checkpoint."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
                     help="Seconds a query may take, retries included; then it fails as 'timeout'."),
        click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
                     help="Queries in flight at once."),
        click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True,
                     help="Retries of a transient failure (TransientError, ConnectionError, HTTP 429/5xx)."),
        click.option("--resume", is_flag=True, help="Finish an interrupted run from its checkpoint in --out."),
        click.option("-v", "--verbose", is_flag=True, help="Print a block per query as it finishes."),
        click.option("--corpus", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                     help="Ids of the backend's corpus, one per line: report expected ids it lacks before "
                          "running (default: the backend's corpus_ids() hook, if it has one)."),
        click.option("-l", "--level-for-rel", "relevance_level", type=int, default=1, show_default=True,
                     help="Minimum grade that counts as relevant (for graded 'qrels')."),
        click.option("--name", "run_name", default=None,
                     help="Run name: the TREC run tag and metadata.run_name (default: from the backend)."),
        click.option("--request-template", default=None, metavar="JSON",
                     help="HTTP: POST this JSON; \"{query}\", \"{limit}\" and query fields are filled in."),
        click.option("--response-path", default=None, metavar="PATH",
                     help="HTTP: where the ids are in the JSON answer, e.g. 'hits.*.id' (default: the whole answer)."),
        click.option("--header", "headers", multiple=True, metavar="'NAME: VALUE'",
                     help="HTTP: a request header; repeatable."),
)


def run_command(**options) -> int:
    """Run the benchmark, printing as SPEC-002 does; the exit code (EvaltoolError propagates)."""
    from evaltool.cli.bench_console import Console
    from evaltool.bench.execute import Interrupted
    from evaltool.bench.session import BenchSettings, run_benchmark

    verbose = options.pop("verbose")
    settings = BenchSettings(queries_path=options.pop("queries"), **options)
    console = Console(settings.queries_path, verbose=verbose, relevance_level=settings.relevance_level)
    try:
        run_benchmark(settings, console)
    except Interrupted as stop:
        from evaltool.bench.checkpoint import checkpoint_path

        if console.progress:
            console.progress.clear()
        click.echo(f"evaltool: interrupted ({stop.signal_name}) after {console.count} of {console.total} queries; "
                   f"the finished ones are in {checkpoint_path(settings.out_dir, settings.queries_path)}: "
                   "run the same command with --resume to finish", err=True)
        return 128 + stop.signum
    return 0


@click.command("bench", help=BENCH_HELP)
@option_group(*BENCH_OPTIONS)
def bench_command(**options):
    try:
        code = run_command(**options)
    except EvaltoolError as exc:
        fail(exc)
    sys.exit(code)
