"""``evaltool measures``: every measure, its parameters and its documentation."""

from __future__ import annotations

import click

from evaltool.cli.common import fail, write
from evaltool.errors import EvaltoolError


@click.command("measures")
@click.option("-m", "--measure", "name", default=None, help="Document one measure in full.")
def measures_command(name):
    """List every measure with its parameters and defaults, or document one (any spelling).

    \b
      evaltool measures
      evaltool measures -m ndcg_cut
      evaltool measures -m "nDCG(dcg='exp-log2')@10"
    """
    from evaltool.measures import NICKNAMES, docs
    from evaltool.names import find_measure, suggest

    if not name:
        write("\n".join(docs.listing()) + "\n")
        return
    base = name.partition(".")[0]
    if base in NICKNAMES:
        write(f"{base}: {' '.join(NICKNAMES[base])}\n")
        return
    m = find_measure(name)
    if m is None:
        fail(EvaltoolError(f"unknown measure '{name}'{suggest(name)}"))
    write(docs.document(m))
