"""The one progress line: standard error, on a terminal only, redrawn in place and cleared when done.

``bench`` advances it as queries finish; ``eval`` and ``compare`` follow the bytes of a
big file being read (:mod:`evaltool.io.progress` reports them; only this module draws).
Nothing is written when standard error is not a terminal (a pipe, a file, a CI log), and
standard output never carries it, whatever the format.

>>> megabytes(120_400_000, 256_467_915)
'120/256 MB'
"""

from __future__ import annotations

import functools
import os
import sys
import time
from contextlib import contextmanager

BAR = 30


def megabytes(done: int, total: int) -> str:
    return f"{done / 1e6:.0f}/{total / 1e6:.0f} MB"


def _counted(done: int, total: int) -> str:
    return f"{done}/{total}"


def is_terminal(stream) -> bool:
    return hasattr(stream, "isatty") and stream.isatty()


class Progress:
    """One line on a terminal's standard error, redrawn as work advances; silent elsewhere.

    ``label`` starts the line, ``count(done, total)`` says how far it is (``2/4``,
    ``120/256 MB``).
    """

    def __init__(self, stream, total: int, done: int = 0, label: str = "", count=_counted):
        self.stream = stream
        self.enabled = is_terminal(stream)
        self.total, self.done, self.failed = total, done, 0
        self.label, self.count = label, count
        self.start = time.perf_counter()

    def advance(self, failed: bool) -> None:
        self.done += 1
        self.failed += failed
        self.draw()

    def update(self, done: int) -> None:
        self.done = done
        self.draw()

    def draw(self) -> None:
        if not self.enabled:
            return
        share = min(1.0, self.done / self.total) if self.total else 1.0
        filled = round(share * BAR)
        failed = f"  {self.failed} failed" if self.failed else ""
        self.stream.write(
            f"\r{self.label}[{'█' * filled}{'░' * (BAR - filled)}] {self.count(self.done, self.total)} "
            f"{share:4.0%}{failed}  {time.perf_counter() - self.start:.1f}s\x1b[K"
        )
        self.stream.flush()

    def clear(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


class ReadingLine:
    """Draws the reads :mod:`evaltool.io.progress` reports: a line per file, cleared when it is closed."""

    def __init__(self, stream):
        self.stream = stream
        self.line: Progress | None = None
        self.path: str | None = None

    def __call__(self, path: str, done: int, total: int, finished: bool) -> None:
        if finished:
            self.clear()
            return
        if self.line is None or path != self.path:
            name = os.path.basename(path)
            name = name if len(name) <= 30 else "…" + name[-29:]  # the line must fit a terminal's width
            self.line, self.path = Progress(self.stream, total, label=f"reading {name} ", count=megabytes), path
        self.line.update(done)

    def clear(self) -> None:
        if self.line is not None:
            self.line.clear()
            self.line = self.path = None


@contextmanager
def reading_progress(stream=None):
    """Within the block, reads of big files draw a progress line on ``stream`` (standard error) if
    it is a terminal; elsewhere nothing changes (readers do not even count)."""
    stream = stream or sys.stderr
    if not is_terminal(stream):
        yield
        return
    from evaltool.io.progress import progress_to

    line = ReadingLine(stream)
    try:
        with progress_to(line):
            yield
    finally:
        line.clear()


def shows_reading_progress(command):
    """Decorate a command's function: big files it reads show a progress line on a terminal."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        with reading_progress():
            return command(*args, **kwargs)

    return run
