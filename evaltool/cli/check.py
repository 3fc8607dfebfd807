"""``evaltool check REFERENCE QRELS RUN``: exit 1 when a value drifted from the reference."""

from __future__ import annotations

import sys

import click

from evaltool.cli.common import REPORT_FORMATS, emit, evaluation_options, fail, output_options
from evaltool.errors import EvaltoolError

CHECK_HELP = """Check that RUN still scores what REFERENCE says: exit 0 if every value holds, 1 if any drifts.

\b
  evaltool qrels.txt run.txt -m ndcg_cut.10 -m map --save-reference ref.json
  evaltool check ref.json qrels.txt run.txt --per-query
  evaltool check published.tsv qrels.txt run.txt -c -l 2 --tolerance 1e-4

REFERENCE is the JSON of 'evaltool ... -o json' (or --save-reference), whose options
(-c, -l, ...) are used unless given here, or lines 'measure qid value' (qid 'all' for
the summary; '#' comments and a header line allowed), such as numbers typed in from a
paper. Summary values are always checked, per-query ones with --per-query. A value
holds when it is within --tolerance of the reference; with --allow-improvement a better
value holds too (higher; lower for ranks such as FirstRelPos and ARP; a count never improves). Drifts are printed as a table. Exit 2 on bad input.
"""


@click.command("check", help=CHECK_HELP)
@click.argument("reference", type=click.Path(dir_okay=False))
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False, allow_dash=True))
@evaluation_options
@click.option("--per-query", is_flag=True, help="Also check the reference's per-query values.")
@click.option(
    "--tolerance",
    type=click.FloatRange(min=0),
    default=1e-4,
    show_default=True,
    help="Largest absolute difference that still holds.",
)
@click.option("--allow-improvement", is_flag=True, help="A value better than the reference holds (it is listed).")
@output_options(REPORT_FORMATS, "table")
def check_command(reference, qrels, run, per_query, tolerance, allow_improvement, fmt, output, **options):
    from click.core import ParameterSource

    from evaltool.check import check, read_reference
    from evaltool.report import layouts

    context = click.get_current_context()
    given = {
        key: value for key, value in options.items() if context.get_parameter_source(key) is not ParameterSource.DEFAULT
    }
    try:
        result = check(
            read_reference(reference),
            qrels,
            run,
            tolerance=tolerance,
            per_query=per_query,
            allow_improvement=allow_improvement,
            **given,
        )
        if fmt == "json":
            from evaltool.report.json import dump_json

            text = dump_json(result.to_dict())
        else:
            from evaltool.report.table import render

            text = render(layouts.check_report(result), fmt)
        emit(text, output)
    except EvaltoolError as exc:
        fail(exc)
    sys.exit(0 if result.ok else 1)
