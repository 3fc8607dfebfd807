"""``python -m evaltool`` and the ``evaltool`` console script (``evaltool.__main__:main``).

The entry point is this small module rather than :mod:`evaltool.cli` so that a Ctrl-C is
caught from the first import on: importing the command line takes 0.1–0.3 s (click, then
numpy for most commands), and a signal landing between two imports, or in importlib just
after a module finished, would otherwise end in a ``KeyboardInterrupt`` traceback. Until
the command starts, SIGINT writes ``evaltool: interrupted`` and exits 130 at once
(nothing has been written yet); then Python's own handler is back, and the commands
clean up as usual (temporary files, checkpoints) before :func:`evaltool.cli.app.run`
exits 130 with the same line.

:func:`main` also sets the program's garbage-collector policy (:func:`collect_less`): a
short process that loads many modules spends less on collections that find nothing; and
its memory policy (:func:`small_pages`): numpy's big arrays on ordinary pages.

Importing this module installs nothing; only :func:`main` does.
"""

from __future__ import annotations

import _thread
import atexit
import gc
import os
import signal
import sys
import time

INTERRUPTED = b"evaltool: interrupted\n"  # what evaltool.cli.app.run prints once a command runs


def interrupted_while_starting(signum, frame) -> None:
    """SIGINT before the command runs: one line, exit 130, no traceback."""
    os.write(2, INTERRUPTED)
    os._exit(130)


def interrupt_again(unraisable) -> None:
    """``sys.unraisablehook``: a Ctrl-C that Python would drop is delivered again.

    A ``KeyboardInterrupt`` raised inside a weakref callback or a ``__del__`` (importlib's
    module-lock callbacks run often while modules load) cannot propagate: Python prints
    "Exception ignored in ..." and the command would go on as if never interrupted. Here
    the signal is raised once more a millisecond later, from a new thread, to land in
    ordinary code: raised at once, or while this hook waits for a thread to start (as
    ``threading.Thread.start`` does), it would be dropped again inside the hook.
    """
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        _thread.start_new_thread(_interrupt_main_soon, ())
    else:
        sys.__unraisablehook__(unraisable)


def _interrupt_main_soon() -> None:
    time.sleep(0.001)
    _thread.interrupt_main()


# Collections of the youngest generation: after this many new container objects (Python's
# default is 700). Loading the command line (click, numpy: ~250 modules) creates some 10^5
# functions, classes and dicts that are never garbage, and the default makes the collector
# walk them hundreds of times (~10 ms of CPU in a run of 0.3 s); the objects a command makes
# are mostly arrays, not containers, and a cycle of garbage still goes at the next collection.
YOUNG_COLLECTION_THRESHOLD = 10_000


def collect_less() -> None:
    """The program's collector policy: fewer young collections, and none over the modules at exit.

    At exit the interpreter collects all that is loaded once more before it frees the
    modules (~15 ms of CPU); :func:`gc.freeze`, registered before the command line loads so
    that it runs after the exit handlers of what loads, takes the objects out of the collector's view. Objects are still
    freed as their last reference goes, and their finalizers run, as in any exit.
    """
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])
    atexit.register(gc.freeze)


# numpy's switch for asking the kernel for 2 MB pages (madvise MADV_HUGEPAGE) for every array of
# 4 MB or more; read once, when numpy is imported
HUGE_PAGES_VARIABLE = "NUMPY_MADVISE_HUGEPAGE"


def small_pages() -> None:
    """The program's memory policy: numpy's arrays on ordinary 4 kB pages, unless the
    environment already says otherwise (``NUMPY_MADVISE_HUGEPAGE=1``).

    By default numpy asks for transparent huge pages for every array of 4 MB or more. Where
    the kernel compacts memory to find them on first touch (``defrag`` set to ``madvise``,
    the usual default), a process that fills a few hundred MB of fresh arrays once, as
    reading a big run does, stalls in the kernel: reading a 7M-line run took 0.5-0.8 s of
    system time with huge pages and 0.2-0.3 s without (20M lines: 1.6-4 s against
    0.4-0.7 s), for the same user time. Set before numpy is imported; the process's
    children inherit it, as they inherit the rest of the environment.
    """
    os.environ.setdefault(HUGE_PAGES_VARIABLE, "0")


def main() -> None:
    """Run the command line as the ``evaltool`` program."""
    collect_less()
    small_pages()
    # Python's own handler, unless SIGINT came ignored (a background job of a shell without
    # job control, nohup): that one is left as it is, as Python itself does
    default = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if default:
        signal.signal(signal.SIGINT, interrupted_while_starting)
        sys.unraisablehook = interrupt_again
    from evaltool.cli import run

    try:
        if default:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        run(prog_name="evaltool")
    except KeyboardInterrupt:  # between the two lines above, or as run() returns
        os.write(2, INTERRUPTED)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
