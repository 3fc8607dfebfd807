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
    from evaltool.measures import MEASURES, NICKNAMES, docs
    from evaltool.measures.base import Params
    from evaltool.names import find_measure, suggest

    if name:
        base = name.partition(".")[0]
        if base in NICKNAMES:
            write(f"{base}: {' '.join(NICKNAMES[base])}\n")
            return
        m = find_measure(name)
        if m is None:
            fail(EvaltoolError(f"unknown measure '{name}'{suggest(name)}"))
        if m.params is Params.NAMED:
            write(docs.document(m))
            return
        defaults = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in m.default)
        write(f"{m.name}\n  parameters: {m.params.value}{f' (default {defaults})' if defaults else ''}\n"
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
    write("\n".join(lines) + "\n")


def _dedent(text: str) -> str:
    import textwrap

    first, _, rest = text.strip("\n").partition("\n")
    return (first.strip() + "\n" + textwrap.dedent(rest)).rstrip()
