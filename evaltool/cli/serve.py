"""``evaltool serve``: the evaluation history as a dashboard and a JSON API.

The command is the verb; what it serves is the package :mod:`evaltool.server` (the ASGI app,
its views and pages).
"""

from __future__ import annotations

import os

import click

from evaltool.cli.common import fail, warn
from evaltool.cli.recording import db_option
from evaltool.errors import EvaltoolError

SERVE_HELP = """Serve the evaluation history (--db) as a dashboard and a JSON API, until Ctrl-C or SIGTERM.

\b
  evaltool serve --db history.sqlite                # http://127.0.0.1:8000/ (read-only)
  curl 'http://127.0.0.1:8000/api/report?date_from=2025-01-01&date_to=2025-12-31'
  evaltool serve --token ci=s3cret --rater-token ana=r4ter --public-read
  EVALTOOL_TOKEN=s3cret evaltool serve --host 0.0.0.0 --port 8080 --allowed-host dash.example.org

Pages: / (the comparative report for a date range, with its CSV), /trends (a chart per
measure over time), /executions/ID (per-query values), /compare?ids=A,B,... (side by
side with the paired test), /suites; add lang=es for Spanish. Each page's data is at
/api/... (OpenAPI: /api/openapi.json).

Without a token the dashboard is read-only. With tokens (--token NAME=SECRET for an
operator, who may record, create and run; --rater-token NAME=SECRET for a rater, who
may judge and read; or --tokens-file with lines 'ROLE NAME=SECRET'), reading needs a
token too unless --public-read; every write is recorded with its token's name. A
browser logs in at /login; remote jobs send 'Authorization: Bearer SECRET', e.g. POST
the output of 'evaltool QRELS RUN -q -o json' to /api/executions?name=NAME.
Requests must name the server by an IP address, localhost or an --allowed-host.

Suites (controlled tests) are edited and run from /suites: --backend NAME=SPEC
(repeatable) or --backends-file declares the search systems they may run, by name; a
run goes to the server's own worker (--jobs at once; /jobs shows them, with their
progress and Cancel). A run a stopped server left unfinished is marked interrupted at
the next start and resumes from its checkpoint (in --jobs-dir).

\b
  evaltool serve --token ci=s3cret --backend bm25=evaltool.bench.examples:bm25_documents
"""


@click.command("serve", help=SERVE_HELP)
@db_option
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; anything but loopback exposes the dashboard to the network.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to listen on (0: any free port).",
)
@click.option(
    "--token",
    "tokens",
    multiple=True,
    metavar="NAME=SECRET",
    help="An operator's token (may record, create, edit, run); repeatable. A bare SECRET is named "
    "'default'. Default: $EVALTOOL_TOKEN (a bare secret) when no token is given.",
)
@click.option(
    "--rater-token",
    "raters",
    multiple=True,
    metavar="NAME=SECRET",
    help="A rater's token (may judge and read); repeatable.",
)
@click.option(
    "--tokens-file",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Tokens, one a line: 'ROLE NAME=SECRET' (ROLE operator or rater; # comments).",
)
@click.option(
    "--public-read",
    is_flag=True,
    help="With tokens, let anyone who reaches the server read (writing still needs a token).",
)
@click.option(
    "--allowed-host",
    "hosts",
    multiple=True,
    metavar="NAME",
    help="A host name the dashboard is reached by (besides IP addresses and localhost); repeatable. "
    "Requests naming any other host are refused (DNS rebinding).",
)
@click.option(
    "--backend",
    "backends",
    multiple=True,
    metavar="NAME=SPEC",
    help="A search system suites may run here, under NAME (SPEC: module:function, an http(s):// URL or "
    "a run file); repeatable. Suites made in the browser pick one of these names; nothing a "
    "request names is run.",
)
@click.option(
    "--backends-file",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help='Declared backends as JSON: {"NAME": "SPEC"} or {"NAME": {"backend": SPEC, "response_path": ...}}.',
)
@click.option(
    "--jobs",
    "slots",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Suite runs at once (a suite never runs twice at once).",
)
@click.option(
    "--jobs-dir",
    type=click.Path(file_okay=False),
    default=None,
    metavar="DIR",
    help="Folder of the runs' checkpoints and reports (default: evaltool-jobs beside a SQLite history, "
    "else in the current folder).",
)
@click.option(
    "--corpus",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="JSONL",
    help='The documents raters read on the judging pages: one {"id", "title", "text"} per line '
    "(default: the title and snippet the search returned).",
)
@click.option(
    "--llm",
    "models",
    multiple=True,
    metavar="NAME=URL,MODEL[,KEY_VARIABLE]",
    help="A language model an operator may let judge a task, under NAME: an OpenAI-compatible endpoint, "
    "the model's name there, and the environment variable holding its key (read now); "
    "repeatable. Nothing a request names is reached.",
)
def serve_command(
    db,
    host,
    port,
    tokens,
    raters,
    tokens_file,
    public_read,
    hosts,
    backends,
    backends_file,
    slots,
    jobs_dir,
    corpus,
    models,
):
    from evaltool.history import open_history
    from evaltool.server import create_app, run
    from evaltool.server.auth import Access
    from evaltool.server.backends import parse_backends
    from evaltool.server.worker import JobWorker

    if not tokens and not tokens_file and os.environ.get("EVALTOOL_TOKEN"):
        tokens = ("default=" + os.environ["EVALTOOL_TOKEN"],)  # a bare secret, whatever it holds
    try:
        access = Access.from_specs(tokens, raters, tokens_file, public_read)
        declared = parse_backends(backends, backends_file)
        from evaltool.server.model_runs import parse_models

        llms = parse_models(models)
        texts = None
        if corpus:
            from evaltool.judgments.corpus import read_corpus

            texts = read_corpus(corpus)
        if public_read and not access.writable:
            raise EvaltoolError("--public-read: without a token reading is public already; give --token too")
        history = open_history(db, create=access.writable)  # a server that records may start a new history
    except EvaltoolError as exc:
        fail(exc)
    folder = jobs_dir or os.path.join(
        os.path.dirname(history.where) if history.backend == "sqlite" else ".", "evaltool-jobs"
    )
    try:
        worker = JobWorker(history, declared, os.path.abspath(folder), slots)
        app = create_app(
            history,
            access=access,
            hosts=_served_names(host, hosts),
            backends=declared,
            worker=worker,
            corpus=texts,
            models=llms,
            models_dir=os.path.abspath(folder),
        )
        listening = run.bind(host, port)
    except EvaltoolError as exc:
        history.close()
        fail(exc)
    interrupted = worker.start()
    if interrupted:
        warn(
            f"{len(interrupted)} run(s) left unfinished by a stopped server marked interrupted (job "
            f"{', '.join(map(str, interrupted))}); resume them on their page"
        )
    exposed = not run.is_loopback(host)
    if exposed and access.public_read:
        who = "no --token is set" if not access.writable else "--public-read is set"
        warn(
            f"warning: --host {host} is not a loopback address and {who}: the dashboard is readable by anyone "
            "who can reach it"
        )
    address, bound_port = listening.getsockname()[:2]
    shown = f"[{address}]" if ":" in address else address
    warn(f"serving {history.where} at http://{shown}:{bound_port}/ (Ctrl-C stops); {access.describe()}")
    try:
        run.serve(app, listening)
    finally:
        worker.stop(timeout=0)
        history.close()


def _served_names(host: str, hosts) -> list[str]:
    """The host names requests may use: --allowed-host, and --host itself when it is a name."""
    import ipaddress

    names = list(hosts)
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        names.append(host)
    return names
