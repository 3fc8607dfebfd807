"""The ``evaltool`` group, its command registry and the console script (see :mod:`evaltool.cli`)."""

from __future__ import annotations

import importlib
import sys

import click

from evaltool.version import __version__


class Interrupted(Exception):
    """Ctrl-C inside a command, carried past click (which would print an empty line for it)."""


# name: (module, attribute, one line for the top-level help); the order is the help's order
COMMANDS = {
    "eval": ("evaltool.cli.eval", "eval_command", "evaluate RUN against QRELS (the default command)"),
    "compare": ("evaltool.cli.compare", "compare_command", "compare runs with paired tests (first run = baseline)"),
    "fuse": ("evaltool.cli.fuse", "fuse_command", "fuse several runs into one (rrf, combsum, wsum, ...; --optimize)"),
    "power": ("evaltool.cli.power", "power_command", "topics needed and power of the paired t-test (topic set size)"),
    "reproduce": (
        "evaltool.cli.reproduce",
        "reproduce_command",
        "how well reproduced runs reproduce the originals (KTU, RBO, RMSE, ER, DeltaRI)",
    ),
    "check": ("evaltool.cli.check", "check_command", "check a run against reference numbers (exit 1 on drift)"),
    "bench": ("evaltool.cli.bench", "bench_command", "run a queries file against a search backend and score it"),
    "clicks": ("evaltool.cli.clicks", "clicks_command", "click metrics of a click log; click-derived judgments"),
    "measures": ("evaltool.cli.measures", "measures_command", "list measures, or document one"),
    "history": ("evaltool.cli.history", "history_group", "the evaluation history: list, report, diff, check, export"),
    "suite": ("evaltool.cli.suite", "suite_group", "controlled tests: add, list, enable, disable, run (recorded)"),
    "pool": ("evaltool.cli.judgments", "pool_command", "what to judge: Depth@k or RRF pools of runs and executions"),
    "judgments": (
        "evaltool.cli.judgments",
        "judgments_group",
        "judgment sets: import, export (qrels), agreement of raters, list",
    ),
    "feedback": (
        "evaltool.cli.judgments",
        "feedback_command",
        "explicit feedback: users' ratings as judgments, their agreement, nDCG from them",
    ),
    "judge": (
        "evaltool.cli.judge",
        "judge_command",
        "a language model grades pool pairs through an OpenAI-compatible endpoint",
    ),
    "serve": ("evaltool.cli.serve", "serve_command", "serve the evaluation history as a dashboard and a JSON API"),
}


class EvaltoolGroup(click.Group):
    """Subcommands imported on first use; ``eval`` runs when the first argument names no command."""

    default_command = "eval"

    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        module, attribute, _ = COMMANDS[name]
        return getattr(importlib.import_module(module), attribute)

    def format_commands(self, ctx, formatter):
        rows = [(name, short) for name, (_, _, short) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def make_context(self, *args, **kwargs):
        try:
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt:
            raise Interrupted from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted from None

    def parse_args(self, ctx, args):
        if args and args[0] not in COMMANDS and args[0] not in ("--help", "-h", "--version"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@click.group(cls=EvaltoolGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evaltool")
def main():
    """evaltool: evaluate ranked retrieval runs (trec_eval-compatible, fast).

    \b
    evaltool QRELS RUN... [OPTIONS] evaluate one run or several (see 'evaltool eval -h')
    evaltool COMMAND -h             help of one command
    """
    import warnings

    from evaltool.errors import EvaltoolWarning

    # the library issues its warnings through Python's warnings and keeps them on the result;
    # each command prints the result's, once, in its own words
    warnings.simplefilter("ignore", EvaltoolWarning)


def run(args: list[str] | None = None, prog_name: str = "evaltool") -> None:
    """The console script: run the command line and exit with its code.

    No arguments print the usage and exit 2, as trec_eval does; Ctrl-C anywhere exits
    130 with one line on stderr and no traceback.
    """
    try:
        code = main.main(args, prog_name=prog_name, standalone_mode=False)
    except (Interrupted, click.exceptions.Abort, KeyboardInterrupt):
        click.echo("evaltool: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
