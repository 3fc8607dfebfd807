"""Progress of long reads, reported to whoever asked for it: the library never draws anything.

A caller that wants to show progress (the command line on a terminal) wraps its work in
:func:`progress_to` with a callback; a reader that goes through a big file opens it with
:func:`open_counted`, which counts the bytes read from disk and calls back
``callback(path, done, total, finished)``: bytes read and the file's size as stored
(compressed files count their compressed bytes, so the share is right either way), at
most every half per cent, and once with ``finished=True`` when the file is closed. Lines
are unknown up front; bytes are not.

Only files of at least ``min_bytes`` are reported (:data:`PROGRESS_MIN_BYTES`, 100 MB of
text, about two million lines of an MS MARCO run; a compressed file counts four times its
size, the ratio text has under gzip). Without a listener, or for a smaller file, readers
open files exactly as before: the common case pays one context-variable lookup.

>>> import tempfile
>>> seen = []
>>> with tempfile.NamedTemporaryFile(suffix=".txt") as f:
...     _ = f.write(b"q1 0 d1 1\\n" * 1000); f.flush()
...     with progress_to(lambda *event: seen.append(event), min_bytes=1):
...         with open_counted(f.name) as handle:
...             lines = sum(1 for _ in handle)
>>> lines, seen[-1][1:]
(1000, (10000, 10000, True))
>>> with tempfile.NamedTemporaryFile() as f:
...     open_counted(f.name) is None  # nobody listens
True
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar

PROGRESS_MIN_BYTES = 100 << 20
COMPRESSION_RATIO = 4  # text bytes per gzip byte, roughly, for the threshold only
REPORT_STEPS = 200  # at most this many calls per file (every 0.5%)
BUFFER_BYTES = 1 << 20  # read from disk in pieces this large (one Python call each)

Callback = Callable[[str, int, int, bool], None]
_LISTENER: ContextVar[tuple[Callback, int] | None] = ContextVar("evaltool_progress", default=None)


@contextmanager
def progress_to(callback: Callback, min_bytes: int | None = None):
    """Within the block, reads of files of at least ``min_bytes`` (text; default
    :data:`PROGRESS_MIN_BYTES`) report to ``callback``."""
    token = _LISTENER.set((callback, PROGRESS_MIN_BYTES if min_bytes is None else min_bytes))
    try:
        yield
    finally:
        _LISTENER.reset(token)


class _Counted(io.RawIOBase):
    """A file's bytes as they are read, counted for the listener."""

    def __init__(self, path: str, callback: Callback):
        self._file = io.FileIO(path, "r")
        self._path, self._callback = path, callback
        self._total = os.fstat(self._file.fileno()).st_size
        self._done = 0
        self._step = max(1, self._total // REPORT_STEPS)
        self._next = self._step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self._file.readinto(buffer)
        if n:
            self._done += n
            if self._done >= self._next:
                self._next = self._done + self._step
                self._callback(self._path, self._done, self._total, False)
        return n

    def close(self) -> None:
        if not self.closed:
            self._file.close()
            self._callback(self._path, self._done, self._total, True)
        super().close()


def open_counted(path, compressed: bool = False):
    """``path`` opened for reading with its bytes counted for the listener (a buffered binary file),
    or None when nobody listens or the file is smaller than the listener's threshold."""
    listener = _LISTENER.get()
    if listener is None:
        return None
    callback, min_bytes = listener
    name = os.fspath(path)
    try:
        size = os.path.getsize(name)
    except OSError:
        return None  # the reader opens it and says what is wrong
    if size * (COMPRESSION_RATIO if compressed else 1) < min_bytes:
        return None
    return io.BufferedReader(_Counted(name, callback), BUFFER_BYTES)
