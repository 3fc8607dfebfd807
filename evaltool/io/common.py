"""Pieces shared by every reader: opening files, encoding ids, duplicate policy."""

from __future__ import annotations

import io
import os
import stat
import sys
import zlib
from contextlib import ExitStack, contextmanager

import numpy as np

from evaltool.errors import EvaltoolError, ParseError
from evaltool.io.progress import open_counted

DUPLICATE_POLICIES = ("error", "first", "max")
# grades are stored as int64 (trec_eval reads them into a C long)
GRADE_MIN, GRADE_MAX = -(2**63), 2**63 - 1
GRADE_RANGE = f"between {GRADE_MIN} and {GRADE_MAX}"


# how a compressed stream starts; gzip, bz2 and xz are read through the standard library
_COMPRESSIONS = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
_ARCHIVES = (
    (b"PK\x03\x04", "a zip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive"),
    (b"PAR1", "a Parquet file"),
    (b"\x04\x22\x4d\x18", "lz4-compressed data"),
)
BINARY_PROBE = 1 << 16  # bytes looked at for a NUL byte (text never has one)
BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark, which some editors write first: not part of the first line

QID_KEYS = ("qid", "query_id", "id")  # the spellings of a query object's id (queries files)


def compression(start: bytes) -> str | None:
    """The compression the first bytes of a file show (``gzip``, ``bz2``, ``xz``, ``zstd``), or None.

    >>> compression(b"\\x1f\\x8b\\x08"), compression(b"BZh91AY&SY"), compression(b"q1 0 d1 1")
    ('gzip', 'bz2', None)
    """
    for magic, kind in _COMPRESSIONS:
        if start.startswith(magic):
            # "BZh" could start a query id: a bz2 stream continues with a block size digit and a block magic
            if kind == "bz2" and not (start[3:4].isdigit() and start[4:10] in (b"1AY&SY", b"\x17rE8P\x90")):
                continue
            return kind
    return None


def _zstandard(name: str):
    try:
        import zstandard
    except ImportError:
        raise EvaltoolError(
            f"{name}: unsupported compression (zstd): install the zstandard package "
            "(pip install 'evaltool[zstd]') or decompress the file first"
        ) from None
    return zstandard


def _refuse_archive(name: str, start: bytes) -> None:
    for magic, what in _ARCHIVES:
        if start.startswith(magic):
            raise EvaltoolError(
                f"{name}: {what}, not a text file; unpack it first (gzip, bz2, xz and zstd files are read as they are)"
            )


def check_text(name: str, data: bytes) -> None:
    """Refuse binary data: a NUL byte in the first bytes (after decompression)."""
    nul = data.find(b"\0", 0, BINARY_PROBE)
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise ParseError(name, line, None, f"a text file, not binary data (a NUL byte at byte {nul})")


def read_head(name: str, size: int) -> bytes:
    """The first ``size`` bytes of a file (its magic number), as stored."""
    try:
        with open(name, "rb") as handle:
            return handle.read(size)
    except OSError as exc:
        raise EvaltoolError(f"cannot read {name}: {exc.strerror or exc}") from None


def open_binary(name: str, source=None):
    """A binary file object of the decompressed content of ``name`` (plain, gzip, bz2, xz or zstd),
    past a UTF-8 byte-order mark.

    ``source``: the stored bytes of ``name`` already opened (a counted file,
    :mod:`evaltool.io.progress`); the caller closes it after the file returned.
    """
    return skip_bom(_decompressing(name, source))


def skip_bom(handle):
    """``handle`` (a buffered binary file) moved past a UTF-8 byte-order mark at its start.

    >>> import io
    >>> skip_bom(io.BufferedReader(io.BytesIO(BOM + b"q1 0 d1 1"))).read(), skip_bom(io.BufferedReader(io.BytesIO(b"q1"))).read()
    (b'q1 0 d1 1', b'q1')
    """
    if handle.peek(len(BOM))[: len(BOM)] == BOM:
        handle.read(len(BOM))
    return handle


def _decompressing(name: str, source=None, start: bytes | None = None):
    """A binary file object of the decompressed bytes of ``source`` (the file ``name`` when
    None); ``start``: its first bytes when ``source`` is a stream that cannot be looked at by path."""
    start = read_head(name, 16) if start is None else start
    kind = compression(start)
    _refuse_archive(name, start)
    if kind == "gzip":  # each decompressor imported when a file needs it
        import gzip

        return gzip.open(source or name, "rb")
    if kind == "bz2":
        import bz2

        return bz2.open(source or name, "rb")
    if kind == "xz":
        import lzma

        return lzma.open(source or name, "rb")
    if kind == "zstd":
        return io.BufferedReader(_ZstdFrames(_zstandard(name), source or open(name, "rb")), 1 << 20)
    return source or open(name, "rb")


ZSTD_FEED = 1 << 12  # compressed bytes given to zstd at a time: its decompressor has no output limit


class _ZstdFrames(io.RawIOBase):
    """The decompressed bytes of every frame of a zstd stream, refusing a truncated one (zstandard's
    stream reader just stops there). Fed :data:`ZSTD_FEED` bytes at a time, a frame that inflates
    a thousandfold gives a few megabytes per step, never the whole stream at once."""

    def __init__(self, zstandard, source):
        self._zstandard, self._source = zstandard, source
        self._frame, self._fed, self._out = zstandard.ZstdDecompressor().decompressobj(), False, b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._out:
            data = self._source.read(ZSTD_FEED)
            if not data:
                if self._fed and not self._frame.eof:
                    raise EOFError("the stream ends inside a frame")
                return 0
            while data:
                if self._frame.eof:
                    self._frame, self._fed = self._zstandard.ZstdDecompressor().decompressobj(), False
                self._out += self._frame.decompress(data)
                self._fed = True
                data = self._frame.unused_data if self._frame.eof else b""
        size = min(len(buffer), len(self._out))
        buffer[:size], self._out = self._out[:size], self._out[size:]
        return size

    def close(self) -> None:
        if not self.closed:
            self._source.close()
        super().close()


@contextmanager
def reading(name: str, counted: bool = False):
    """:func:`open_binary` as a context in which a broken compressed stream is a ParseError.

    ``counted``: a pass over the whole file, whose progress goes to a caller that follows
    big reads (:func:`evaltool.io.progress.open_counted`).
    """
    with ExitStack() as stack:
        source = open_counted(name, compression(read_head(name, 16)) is not None) if counted else None
        if source is not None:
            stack.enter_context(source)
        yield stack.enter_context(_reading(name, source))


@contextmanager
def _reading(name: str, source):
    handle = _decompressing(name, source)
    try:
        with handle:
            yield skip_bom(handle)
    except Exception as exc:
        plain = handle is source or (isinstance(handle, io.BufferedReader) and handle.raw.__class__ is io.FileIO)
        error = None if plain else broken_stream(name, exc)
        if error is None:
            raise
        raise error from None


def broken_stream(name: str, exc: Exception, kind: str = "compressed") -> ParseError | None:
    """The ParseError for ``exc`` raised while decompressing ``name`` (a ``kind`` stream), None
    when ``exc`` is not about a compressed stream (each library has its own error class)."""
    if isinstance(exc, (OSError, EOFError, zlib.error)) or type(exc).__module__ in (
        "_lzma",
        "lzma",
        "zstandard",
        "zstd",
        "zstandard.backend_c",
    ):
        return ParseError(name, None, None, f"a readable {kind} stream ({exc})")
    return None


def head(name: str, size: int = 1 << 16) -> bytes:
    """The first ``size`` decompressed bytes of a file (b"" when its compressed stream is
    broken: the reader of the whole file then says what is wrong with it)."""
    try:
        with reading(name) as handle:
            return handle.read(size)
    except ParseError:
        return b""


def _zstd_frames(zstandard, data: bytes) -> bytes:
    """Every frame of a zstd stream, refusing a truncated one (its stream reader would just stop)."""
    parts = []
    while data:
        frame = zstandard.ZstdDecompressor().decompressobj()
        parts.append(frame.decompress(data))
        if not frame.eof:
            raise EOFError("the stream ends inside a frame")
        data = frame.unused_data
    return b"".join(parts)


def decompress(name: str, data: bytes) -> bytes:
    """The content of a file whose bytes are ``data``: decompressed by its magic bytes, checked to be text."""
    kind = compression(data[:16])
    _refuse_archive(name, data[:16])
    try:
        if kind == "gzip":
            import gzip

            data = gzip.decompress(data)
        elif kind == "bz2":
            import bz2

            data = bz2.decompress(data)
        elif kind == "xz":
            import lzma

            data = lzma.decompress(data)
        elif kind == "zstd":
            data = _zstd_frames(_zstandard(name), data)
    except EvaltoolError:
        raise
    except Exception as exc:  # each library has its own error class (lzma.LZMAError, zstandard.ZstdError, ...)
        raise ParseError(name, None, None, f"a readable {kind} stream ({exc})") from None
    check_text(name, data)
    return data[len(BOM) :] if data.startswith(BOM) else data


def piped(path) -> bool:
    """True for input that can be read once only: ``-`` (stdin), a pipe such as a shell's
    process substitution ``<(zcat run.gz)`` (``/dev/fd/63``), a FIFO, a device. Its readers
    take it whole with :func:`read_bytes` and look at those bytes, never at the path again.

    >>> piped("-"), piped(__file__), piped("/no/such/file")
    (True, False, False)
    """
    name = os.fspath(path)
    if name == "-":
        return True
    try:
        mode = os.stat(name).st_mode
    except OSError:  # missing, unreadable: its reader says so
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def read_bytes(path: str | os.PathLike, *, allow_stdin: bool = False) -> tuple[str, bytes]:
    """Return (display name, content) of a file; ``-`` is stdin; compression is found by magic bytes.

    The content is decompressed as it is read and checked from its first block (binary data
    is refused before the rest is inflated): :class:`TextSource`.
    """
    with TextSource(path, allow_stdin=allow_stdin) as source:
        return source.name, source.read_all()


TEXT_BLOCK_BYTES = 8 << 20  # decompressed text per block of TextSource.blocks(), at most
FIRST_BLOCK_BYTES = 1 << 18  # the first block (sniffed, checked); each next one twice as large, up to the above


class _Prefixed(io.RawIOBase):
    """The bytes of ``prefix`` (already read from a stream to look at them), then the rest of the stream."""

    def __init__(self, prefix: bytes, stream):
        self._prefix, self._stream = prefix, stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._prefix:
            size = min(len(buffer), len(self._prefix))
            buffer[:size], self._prefix = self._prefix[:size], self._prefix[size:]
            return size
        return self._stream.readinto(buffer)

    def readall(self) -> bytes:
        rest, self._prefix = self._prefix + self._stream.read(), b""
        return rest


class TextSource:
    """The text of a file, stdin (``-``) or a pipe, decompressed (gzip, bz2, xz, zstd) as it is
    read, in blocks of whole lines: what the readers parse as it inflates.

    Checked as soon as the first block is there: an archive, binary data (a NUL byte in the
    first 64 KB) or a broken compressed stream is a message before anything else is read (a
    gzip of zeros used to be inflated whole first, gigabytes, to be called binary). A UTF-8
    byte-order mark before the first line is dropped. ``head`` is the first block (for
    sniffing a format); ``blocks()`` yields ``(first line number, block)`` from the start;
    ``read_all()`` the whole text. ``regular``: a file that can be read again (to quote a
    line in a message), not a pipe; ``size``: its stored bytes (None for a pipe or stdin).

    >>> import gzip, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "run.gz")
    >>> _ = open(path, "wb").write(gzip.compress(BOM + b"q1 Q0 d1 1 2.0 r\\nq1 Q0 d2 2 1.0 r\\n"))
    >>> with TextSource(path, block_bytes=12) as source:
    ...     source.head, list(source.blocks())
    (b'q1 Q0 d1 ', [(1, b'q1 Q0 d1 1 2.0 r\\n'), (2, b'q1 Q0 d2 2 1.0 r\\n')])
    """

    def __init__(self, path, *, allow_stdin: bool = False, block_bytes: int | None = None):
        name = os.fspath(path)
        self.block_bytes = block_bytes or TEXT_BLOCK_BYTES
        self._stack = ExitStack()
        if name == "-":
            if not allow_stdin:
                raise EvaltoolError("reading judgments from stdin ('-') is not supported; give a file")
            self.name, self.regular, stored = "<stdin>", False, sys.stdin.buffer
        else:
            self.name, self.regular = name, not piped(name)
            try:
                stored = self._stack.enter_context(open(name, "rb"))
            except OSError as exc:
                raise EvaltoolError(f"cannot read {name}: {exc.strerror or exc}") from None
        self.size = os.fstat(stored.fileno()).st_size if self.regular else None
        self.kind = None
        start = self._read_plain(stored, 16)
        self.kind = compression(start)
        self._handle = self._stack.enter_context(
            _decompressing(self.name, io.BufferedReader(_Prefixed(start, stored)), start)
        )
        self._head: bytes | None = None
        self._first = min(FIRST_BLOCK_BYTES, self.block_bytes)
        self._ended = False  # the first block is the whole text

    def _read_plain(self, stored, size: int) -> bytes:
        """Up to ``size`` stored bytes (a pipe may give fewer at a time)."""
        parts, got = [], 0
        while got < size:
            part = self._guarded(stored.read, size - got)
            if not part:
                break
            parts.append(part)
            got += len(part)
        return b"".join(parts)

    def _guarded(self, read, size: int) -> bytes:
        try:
            return read(size)
        except EvaltoolError:
            raise
        except Exception as exc:
            error = broken_stream(self.name, exc, self.kind) if self.kind else None
            if error is not None:
                raise error from None
            if isinstance(exc, OSError):
                raise EvaltoolError(f"cannot read {self.name}: {exc.strerror or exc}") from None
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self._stack.close()

    @property
    def head(self) -> bytes:
        """The first block of whole lines (or the whole text, when shorter), checked."""
        if self._head is None:
            self._head = self._guarded(self._handle.read, self._first)
            self._ended = len(self._head) < self._first  # a buffered read is short only at the end
            if self._head.startswith(BOM):
                self._head = self._head[len(BOM) :]
            check_text(self.name, self._head)
        return self._head

    def blocks(self):
        """``(number of its first line, block)`` for every block of whole lines, from the first.

        The first blocks are small and each is twice the one before, up to ``block_bytes``:
        an error near the start of a big file is met after little reading and parsing.
        """
        data, line, size = self.head, 1, self._first
        ended = self._ended
        while True:
            cut = len(data) if ended else data.rfind(b"\n") + 1
            if cut:
                block = data[:cut]
                yield line, block
                line += block.count(b"\n")
                data = data[cut:]
            if ended:
                return
            size = min(size * 2, self.block_bytes)
            more = self._guarded(self._handle.read, size)
            ended = len(more) < size
            data = data + more if data else more

    def read_all(self) -> bytes:
        """The whole text, checked from its first block."""
        head = self.head
        rest = self._guarded(self._handle.read, -1)
        return head + rest if rest else head


RECENT_LISTS = 4  # id lists (qrels) whose derived arrays are kept: a few Evaluators used in turn


class LastIds:
    """``compute(ids)`` (an array with a value per id) remembered for the last
    :data:`RECENT_LISTS` ``ids`` lists it was called with: the ids of one qrels meet run after
    run (an Evaluator, several runs on the command line), and a training loop may score its
    runs against a few qrels in turn (dev and test). The entries are read and replaced whole,
    so runs scored in threads never mix two lists; each holds its list, so the list's
    identity cannot be reused while it is kept.

    >>> lengths = LastIds(lambda ids: np.array([len(i) for i in ids]))
    >>> ids, other = ["d1", "d22"], ["d333"]
    >>> lengths(ids) is lengths(ids), lengths(other).tolist(), lengths(ids) is lengths(ids)
    (True, [4], True)
    """

    def __init__(self, compute):
        self.compute = compute
        self.recent: tuple = ()

    def __call__(self, ids) -> np.ndarray:
        for known, values in self.recent:
            if known is ids and len(values) == len(ids):
                return values
        values = self.compute(ids)
        self.remember(ids, values)
        return values

    def remember(self, ids, values: np.ndarray) -> None:
        """Keep ``values``, already known, as those of ``ids`` (a reader that has them at hand)."""
        others = tuple(entry for entry in self.recent if entry[0] is not ids)
        self.recent = ((ids, values), *others[: RECENT_LISTS - 1])


def in_order(work, items, workers: int, depth: int | None = None):
    """Yield ``work(item)`` for every item of the iterable ``items``, in order, computed by
    ``workers`` threads (0: in the caller's thread) while the caller uses the results
    before; at most ``depth`` items (default ``workers + 1``) are submitted and not yet
    yielded, and the next item is drawn only then (``items`` may be a lazy iterator).

    Each item's work runs in a copy of the caller's context (a progress listener of
    :mod:`evaltool.io.progress` goes along). An item whose work raises raises when its turn
    comes, after the items before it were yielded; the work still pending is cancelled.

    >>> list(in_order(lambda x: x * 10, iter(range(5)), 2, 3)), list(in_order(str, [1, 2], 0))
    ([0, 10, 20, 30, 40], ['1', '2'])
    """
    if workers == 0:
        yield from map(work, items)
        return
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor
    from contextvars import copy_context

    depth = workers + 1 if depth is None else depth
    pending = deque()
    with ThreadPoolExecutor(workers) as pool:
        try:
            for item in items:
                pending.append(pool.submit(copy_context().run, work, item))
                if len(pending) >= depth:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def decode(token: bytes) -> str:
    """Ids are bytes on disk; undecodable bytes survive a round trip unchanged."""
    return token.decode("utf-8", "surrogateescape")


class Encoder:
    """Dictionary-encodes ids in first-seen order."""

    __slots__ = ("codes", "vocab")

    def __init__(self) -> None:
        self.codes: dict = {}
        self.vocab: list[str] = []

    def __call__(self, key) -> int:
        code = self.codes.get(key)
        if code is None:
            code = len(self.vocab)
            self.codes[key] = code
            self.vocab.append(decode(key) if isinstance(key, bytes) else str(key))
        return code


def check_policy(policy: str) -> None:
    if policy not in DUPLICATE_POLICIES:
        raise EvaltoolError(f"unknown duplicate policy {policy!r}; expected one of {', '.join(DUPLICATE_POLICIES)}")


def find_duplicates(qid_codes: np.ndarray, doc_codes: np.ndarray, n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    """Row order sorted by (query, document) and a mask of rows repeating their predecessor."""
    key = qid_codes.astype(np.int64) * max(n_docs, 1) + doc_codes
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    repeat = np.zeros(len(key), dtype=bool)
    repeat[1:] = sorted_key[1:] == sorted_key[:-1]
    return order, repeat


def resolve_duplicates(
    policy: str,
    qid_codes: np.ndarray,
    doc_codes: np.ndarray,
    values: np.ndarray,
    n_docs: int,
    on_error,
) -> tuple[np.ndarray, int]:
    """Rows to keep (sorted indices) under ``policy``, and how many were dropped.

    ``error`` calls ``on_error(first_row, repeated_row)`` for the first duplicate found,
    ``first`` keeps the earliest line, ``max`` keeps the largest value (earliest on ties).
    """
    if policy not in DUPLICATE_POLICIES:
        raise EvaltoolError(f"unknown duplicate policy {policy!r}; expected one of {', '.join(DUPLICATE_POLICIES)}")
    order, repeat = find_duplicates(qid_codes, doc_codes, n_docs)
    if not repeat.any():
        return np.arange(len(values)), 0
    if policy == "error":
        where = int(np.flatnonzero(repeat)[0])
        start = where
        while repeat[start]:
            start -= 1
        on_error(int(order[start]), int(order[where]))
    group = np.cumsum(~repeat) - 1
    if policy == "first":
        keep = order[~repeat]
    else:
        # within each (query, document) group: the largest value, then the earliest row
        by_value = np.lexsort((order, -values[order], group))
        first_of_group = np.ones(len(by_value), dtype=bool)
        first_of_group[1:] = group[by_value][1:] != group[by_value][:-1]
        keep = order[by_value[first_of_group]]
    keep = np.sort(keep)
    return keep, len(values) - len(keep)
