"""The command line: thin translators from options to one library call and one formatter.

This package is the only code that imports click, prints, or decides an exit code:
0 success, 1 a check that found drift (``check``) or a benchmark with failed queries,
2 bad input or usage (one message, no traceback), 130 interrupted (Ctrl-C). The one
exception is a Ctrl-C while this package is still being imported: the program's entry
point, :mod:`evaltool.__main__`, answers that one (same line, same 130).

Subcommands live one per module and are imported only when run or asked for help, so
``evaltool --help`` starts without numpy. To add one, write its module and add a line
to :data:`COMMANDS`.
"""

from __future__ import annotations

import os

# BLAS threads: OpenBLAS starts a thread per core while numpy is imported, which costs more
# CPU than a small evaluation (`python -c "import numpy"`: 0.157 s CPU, 0.095 s with one
# thread, on 2 cores) and which the commands do not use (the kernels are segment sums; the
# few matrix products, in parsing and the permutation test, are matrix-vector, bound by
# memory). The command line is its own process, so it sets the policy before numpy loads,
# as Dask's nannies do for their workers; a thread count the user chose wins.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS")
if not any(name in os.environ for name in BLAS_THREAD_VARIABLES):
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

# a Ctrl-C while the command line is imported: evaltool.__main__, the program's entry point
from evaltool.cli.app import COMMANDS, EvaltoolGroup, main, run  # noqa: E402

__all__ = ["COMMANDS", "EvaltoolGroup", "main", "run"]
