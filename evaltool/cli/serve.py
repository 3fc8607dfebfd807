"""``evaltool serve``: the evaluation history as a dashboard and a JSON API."""

from __future__ import annotations

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
def serve_command(db, host, port, token):
    from evaltool.history import open_history
    from evaltool.server import create_app, run

    try:
        history = open_history(db, create=bool(token))  # a server that records may start a new history
        app = create_app(history, token=token)
        listening = run.bind(host, port)
    except EvaltoolError as exc:
        fail(exc)
    if not run.is_loopback(host) and not token:
        warn(f"warning: --host {host} is not a loopback address and no --token is set: the dashboard is "
             "readable by anyone who can reach it")
    address, bound_port = listening.getsockname()[:2]
    shown = f"[{address}]" if ":" in address else address
    warn(f"serving {history.where} at http://{shown}:{bound_port}/ (Ctrl-C stops)")
    try:
        run.serve(app, listening)
    finally:
        history.close()
