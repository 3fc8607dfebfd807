"""The command line: thin translators from options to one library call and one formatter.

This package is the only code that imports click, prints, or decides an exit code:
0 success, 1 a check that found drift (``check``) or a benchmark with failed queries,
2 bad input or usage (one message, no traceback), 130 interrupted (Ctrl-C).

Subcommands live one per module and are imported only when run or asked for help, so
``evaltool --help`` starts without numpy. To add one, write its module and add a line
to :data:`COMMANDS`.
"""

from __future__ import annotations

import sys

try:  # a Ctrl-C while the command line is still being imported: one line and 130, no traceback
    from evaltool.cli.app import COMMANDS, EvaltoolGroup, main, run
except KeyboardInterrupt:
    sys.stderr.write("evaltool: interrupted\n")
    raise SystemExit(130) from None

__all__ = ["COMMANDS", "EvaltoolGroup", "main", "run"]
