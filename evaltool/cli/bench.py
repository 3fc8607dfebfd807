"""``evaltool bench QUERIES --backend SPEC``: run a benchmark against a search backend."""

from __future__ import annotations

import atexit
import gc
import sys

import click

from evaltool.bench.backends import DEFAULT_MAX_RESPONSE_BYTES, SHAPE_ERRORS
from evaltool.cli.common import complete_measure, fail, option_group, warn
from evaltool.cli.recording import record_options, recording
from evaltool.errors import EvaltoolError
from evaltool.measures.sets import described

BENCH_HELP = """Run a benchmark: send every query of QUERIES to a search backend, score, report.

\b
  evaltool bench data/bench_queries.json --backend evaltool.bench.examples:bm25_search
  evaltool bench queries.json --backend mysearch:search --concurrency 8 --timeout 5 -v
  evaltool bench queries.json --backend http://127.0.0.1:8000/search --request-template \\
      '{"q": "{query}", "k": "{limit}"}' --response-path 'hits.*.id'
  evaltool bench queries.json --backend bm25.run.txt           # replay a TREC run
  evaltool bench queries.json --backend mysearch:search --resume   # after Ctrl-C or a crash

QUERIES is a queries file (a JSON list, or JSONL) of {id | qid | query_id, query,
expected_modules | relevant_ids | qrels, [category], [difficulty], [version], ...}; it is
validated whole before anything runs. BACKEND is
module:function (sync or async, returns ranked ids or (id, score[, text]) items), an
http(s):// URL, or a TREC run file. Every finished query is appended to a checkpoint in
--out, so an interrupted run loses nothing and --resume finishes it (--restart
discards it instead). At the end
OUT/baseline_YYYYMMDD_HHMMSS.json holds the report (metadata, aggregate_metrics,
per_category, per_difficulty, detailed_results), beside the TREC run and qrels it was
scored from. A failed or timed-out query is recorded with its error and left out of the
averages. Exit 0 when every query got an answer, 1 when some failed, 2 when all failed
(the report is written in both cases) or on bad input, 128 + the signal's number when
interrupted (130 for Ctrl-C).
"""


backend_option = click.option(
    "--backend", required=True, metavar="SPEC", help="module:function, an http(s):// URL, or a TREC run file to replay."
)


def measure_option(defaults: str):
    return click.option(
        "-m",
        "--measure",
        "measures",
        multiple=True,
        metavar="NAME[.PARAMS]",
        shell_complete=complete_measure,
        help=f"Measure; repeatable. Default: {defaults}.",
    )


# how a benchmark sends its queries and scores the answers: a controlled test keeps these ('evaltool suite add')
SETTINGS_OPTIONS = (
    click.option(
        "--limit",
        type=click.IntRange(min=1),
        default=10,
        show_default=True,
        help="Results asked for and kept per query.",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=30.0,
        show_default=True,
        help="Seconds a query may take, retries included; then it fails as 'timeout'.",
    ),
    click.option(
        "--concurrency", type=click.IntRange(min=1), default=4, show_default=True, help="Queries in flight at once."
    ),
    click.option(
        "--retries",
        type=click.IntRange(min=0),
        default=2,
        show_default=True,
        help="Retries of a transient failure (TransientError, ConnectionError, HTTP 429/5xx).",
    ),
    click.option(
        "--corpus",
        type=click.Path(dir_okay=False),
        default=None,
        metavar="FILE",
        help="Ids of the backend's corpus, one per line: report expected ids it lacks before "
        "running (default: the backend's corpus_ids() hook, if it has one).",
    ),
    click.option(
        "-l",
        "--level-for-rel",
        "relevance_level",
        type=int,
        default=1,
        show_default=True,
        help="Minimum grade that counts as relevant (for graded 'qrels').",
    ),
    click.option(
        "--request-template",
        default=None,
        metavar="JSON",
        help='HTTP: POST this JSON; "{query}", "{limit}" and query fields are filled in.',
    ),
    click.option(
        "--response-path",
        default=None,
        metavar="PATH",
        help="HTTP: where the ids are in the JSON answer, e.g. 'hits.*.id' (default: the whole answer).",
    ),
    click.option(
        "--header", "headers", multiple=True, metavar="'NAME: VALUE'", help="HTTP: a request header; repeatable."
    ),
    click.option(
        "--max-response-bytes",
        type=click.IntRange(min=1),
        default=DEFAULT_MAX_RESPONSE_BYTES,
        show_default=True,
        metavar="N",
        help="HTTP: a longer answer (in bytes, or in characters once decoded) fails its query (read no further).",
    ),
    click.option(
        "--follow-cross-origin-redirects",
        is_flag=True,
        help="HTTP: follow a redirect to another scheme, host or port (never with the --header "
        "headers); by default it fails its query.",
    ),
)
out_option = click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="results",
    show_default=True,
    help="Folder of the report, the TREC files and the checkpoint.",
)
verbose_option = click.option("-v", "--verbose", is_flag=True, help="Print a block per query as it finishes.")
# in the order --help lists them
BENCH_OPTIONS = (
    click.argument("queries", type=click.Path(dir_okay=False)),
    backend_option,
    measure_option(described("bench")),
    *SETTINGS_OPTIONS,
    out_option,
    click.option("--resume", is_flag=True, help="Finish an interrupted run from its checkpoint in --out."),
    click.option("--restart", is_flag=True, help="Discard an unfinished run's checkpoint in --out and start over."),
    verbose_option,
    click.option(
        "--name",
        "run_name",
        default=None,
        help="Run name: the TREC run tag and metadata.run_name (default: from the backend).",
    ),
)

SHAPE_HINT = (
    "hint: the answers are not lists of ids where evaltool looked; say where the ids are with "
    "--response-path (e.g. 'hits.*.id')"
)


def exit_code(report: dict) -> int:
    """0 when every query got an answer, 1 when some failed, 2 when all did."""
    meta = report["metadata"]
    if not meta["failed_queries"]:
        return 0
    return 2 if meta["failed_queries"] == meta["total_queries"] else 1


def shape_error(report: dict) -> bool:
    """Did a query fail because the answer held no ranking where evaltool looked (a --response-path matter)?"""
    return any(
        entry["error"] and any(sign in entry["error"] for sign in SHAPE_ERRORS) for entry in report["detailed_results"]
    )


def exit_promptly() -> None:
    """Spare an interrupted run's exit the interpreter's final garbage collections over all that
    is loaded (numpy, httpx...: ~0.1 s of CPU, seconds on a loaded machine); nothing is left to
    write (the checkpoint is closed, the report files are renamed into place or not at all).
    At exit, not now: a caller in the same process goes on collecting as before."""
    atexit.register(gc.freeze)


def run_command(history=None, record_name=None, record_kind="bench", record_details=None, **options) -> int:
    """Run the benchmark, printing its log and summary (:mod:`evaltool.cli.bench_console`), and record it in
    ``history`` (a :class:`~evaltool.cli.recording.Recording`) under ``record_name`` (with ``record_details``,
    :func:`~evaltool.history.record` keywords); the exit code (EvaltoolError propagates)."""
    from evaltool.cli.bench_console import Console
    from evaltool.bench.execute import Interrupted
    from evaltool.bench.session import BenchSettings, run_benchmark

    verbose = options.pop("verbose")
    settings = BenchSettings(queries_path=options.pop("queries"), **options)
    console = Console(settings.queries_path, verbose=verbose, relevance_level=settings.relevance_level)
    try:
        result = run_benchmark(settings, console)
        if history is not None:
            history.record_bench(result, record_name, record_kind, **(record_details or {}))
    except Interrupted as stop:
        if console.progress:
            console.progress.clear()
        click.echo(
            f"evaltool: interrupted ({stop.signal_name}) after {console.count} of {console.total} queries; "
            f"the finished ones are in {settings.checkpoint_path}: "
            "run the same command with --resume to finish",
            err=True,
        )
        exit_promptly()
        return 128 + stop.signum
    if shape_error(result.report):
        warn(SHAPE_HINT)
    return exit_code(result.report)


@click.command("bench", help=BENCH_HELP)
@option_group(*BENCH_OPTIONS)
@record_options(with_name=False)
def bench_command(record, db, note, tags, at, **options):
    history = None
    try:
        history = recording(record, db, note, tags, at)
        code = run_command(history, **options)
    except EvaltoolError as exc:
        fail(exc)
    except KeyboardInterrupt:  # Ctrl-C once the queries are done (scoring, writing): evaltool exits 130
        exit_promptly()
        raise
    finally:
        if history is not None:
            history.close()
    sys.exit(code)
