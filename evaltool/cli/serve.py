"""``evaltool serve``: the evaluation history as a dashboard and a JSON API."""

from __future__ import annotations

import os

import click

from evaltool.cli.common import fail, warn
from evaltool.cli.recording import db_option
from evaltool.errors import EvaltoolError

SERVE_HELP = """Serve the evaluation history (--db) as a dashboard and a JSON API, until Ctrl-C or SIGTERM.

\b
  evaltool serve --db history.sqlite                # http://127.0.0.1:8000/
  curl 'http://127.0.0.1:8000/api/report?date_from=2025-01-01&date_to=2025-12-31'
  EVALTOOL_TOKEN=s3cret evaltool serve --host 0.0.0.0 --port 8080

Pages: / (the comparative report for a date range), /trends (a chart per measure over
time), /executions/ID (per-query values), /compare?ids=A,B,... (side by side with the
paired test), /suites. Each page's data is at /api/... (OpenAPI: /api/openapi.json).
With --token (or EVALTOOL_TOKEN) remote jobs may record results: POST the output of
'evaltool QRELS RUN -q -o json' to /api/executions?name=NAME with the header
'Authorization: Bearer TOKEN'; without a token that endpoint is off.

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
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but loopback exposes the dashboard to the network.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--token", envvar="EVALTOOL_TOKEN", default=None, metavar="TOKEN",
              help="Bearer token that lets remote jobs record results (POST /api/executions); "
                   "default $EVALTOOL_TOKEN; none: recording over HTTP is off.")
@click.option("--backend", "backends", multiple=True, metavar="NAME=SPEC",
              help="A search system suites may run here, under NAME (SPEC: module:function, an http(s):// URL or "
                   "a run file); repeatable. Suites made in the browser pick one of these names; nothing a "
                   "request names is run.")
@click.option("--backends-file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help='Declared backends as JSON: {"NAME": "SPEC"} or {"NAME": {"backend": SPEC, "response_path": ...}}.')
@click.option("--jobs", "slots", type=click.IntRange(min=1), default=1, show_default=True,
              help="Suite runs at once (a suite never runs twice at once).")
@click.option("--jobs-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Folder of the runs' checkpoints and reports (default: evaltool-jobs beside a SQLite history, "
                   "else in the current folder).")
def serve_command(db, host, port, token, backends, backends_file, slots, jobs_dir):
    from evaltool.history import open_history
    from evaltool.server import create_app, run
    from evaltool.server.backends import parse_backends
    from evaltool.server.worker import JobWorker

    try:
        declared = parse_backends(backends, backends_file)
        history = open_history(db, create=bool(token))  # a server that records may start a new history
        folder = jobs_dir or os.path.join(os.path.dirname(history.where) if history.backend == "sqlite" else ".",
                                          "evaltool-jobs")
        worker = JobWorker(history, declared, os.path.abspath(folder), slots)
        app = create_app(history, token=token, backends=declared, worker=worker)
        listening = run.bind(host, port)
    except EvaltoolError as exc:
        fail(exc)
    interrupted = worker.start()
    if interrupted:
        warn(f"{len(interrupted)} run(s) left unfinished by a stopped server marked interrupted (job "
             f"{', '.join(map(str, interrupted))}); resume them on their page")
    if not run.is_loopback(host) and not token:
        warn(f"warning: --host {host} is not a loopback address and no --token is set: the dashboard is "
             "readable by anyone who can reach it")
    address, bound_port = listening.getsockname()[:2]
    shown = f"[{address}]" if ":" in address else address
    warn(f"serving {history.where} at http://{shown}:{bound_port}/ (Ctrl-C stops)")
    try:
        run.serve(app, listening)
    finally:
        worker.stop(timeout=0)
        history.close()
