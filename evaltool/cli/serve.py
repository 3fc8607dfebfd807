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
"""


@click.command("serve", help=SERVE_HELP)
@db_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but loopback exposes the dashboard to the network.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--token", "tokens", multiple=True, metavar="NAME=SECRET",
              help="An operator's token (may record, create, edit, run); repeatable. A bare SECRET is named "
                   "'default'. Default: $EVALTOOL_TOKEN (a bare secret) when no token is given.")
@click.option("--rater-token", "raters", multiple=True, metavar="NAME=SECRET",
              help="A rater's token (may judge and read); repeatable.")
@click.option("--tokens-file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Tokens, one a line: 'ROLE NAME=SECRET' (ROLE operator or rater; # comments).")
@click.option("--public-read", is_flag=True,
              help="With tokens, let anyone who reaches the server read (writing still needs a token).")
@click.option("--allowed-host", "hosts", multiple=True, metavar="NAME",
              help="A host name the dashboard is reached by (besides IP addresses and localhost); repeatable. "
                   "Requests naming any other host are refused (DNS rebinding).")
def serve_command(db, host, port, tokens, raters, tokens_file, public_read, hosts):
    from evaltool.history import open_history
    from evaltool.server import create_app, run
    from evaltool.server.auth import Access

    if not tokens and not tokens_file and os.environ.get("EVALTOOL_TOKEN"):
        tokens = ("default=" + os.environ["EVALTOOL_TOKEN"],)  # a bare secret, whatever it holds
    try:
        access = Access.from_specs(tokens, raters, tokens_file, public_read)
        if public_read and not access.writable:
            raise EvaltoolError("--public-read: without a token reading is public already; give --token too")
        history = open_history(db, create=access.writable)  # a server that records may start a new history
    except EvaltoolError as exc:
        fail(exc)
    try:
        app = create_app(history, access=access, hosts=_served_names(host, hosts))
        listening = run.bind(host, port)
    except EvaltoolError as exc:
        history.close()
        fail(exc)
    exposed = not run.is_loopback(host)
    if exposed and access.public_read:
        who = "no --token is set" if not access.writable else "--public-read is set"
        warn(f"warning: --host {host} is not a loopback address and {who}: the dashboard is readable by anyone "
             "who can reach it")
    address, bound_port = listening.getsockname()[:2]
    shown = f"[{address}]" if ":" in address else address
    warn(f"serving {history.where} at http://{shown}:{bound_port}/ (Ctrl-C stops); {access.describe()}")
    try:
        run.serve(app, listening)
    finally:
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
