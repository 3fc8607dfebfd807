"""Columnar reading of large TREC files with pyarrow (multi-threaded CSV parsing).

Used for files that :func:`evaltool.io.kinds.columnar` finds large enough, when pyarrow is installed. It handles
the regular shape (one space or one tab between fields, nothing after the run tag, no
comment lines) and returns ``None`` for anything else, so that the line-by-line reader
in :mod:`evaltool.io.trec` (which names the exact line of any problem) takes over.

Numeric document ids (MS MARCO style) become exact int64 keys: no string hashing, and
no per-row Python objects. Other ids are dictionary-encoded by Arrow.
"""

from __future__ import annotations

import os
from contextlib import closing, contextmanager
from functools import cache, partial

import numpy as np

from evaltool.arrays import distinct
from evaltool.inputs import Qrels, Run
from evaltool.io.common import GRADE_MAX, GRADE_MIN, LastIds, compression, head, in_order
from evaltool.io.progress import open_counted


def threads(jobs: int | None) -> int:
    """How many threads ``jobs`` asks for: itself, or every core when None (``--jobs``' default).

    >>> threads(3), threads(None) == (os.cpu_count() or 1)
    (3, True)
    """
    return max(1, jobs or os.cpu_count() or 1)


def kernels():
    """pyarrow's compute kernels, called by name (``kernels().call_function("cast", [a], options)``).

    From ``pyarrow._compute``, the extension module: importing ``pyarrow.compute`` first
    builds a documented Python wrapper for each of its ~300 kernels (~30 ms, on the startup
    of every command that reads a file with pyarrow); both modules hold ``call_function``
    and the option classes.

    >>> import pyarrow as pa
    >>> kernels().call_function("binary_length", [pa.array(["ab", "c"])]).to_pylist()
    [2, 1]
    """
    try:
        import pyarrow._compute as compute
    except ImportError:  # a pyarrow laid out otherwise: the public module has the same names
        import pyarrow.compute as compute
    return compute


@cache
def compares_views() -> bool:
    """Whether this pyarrow's kernels compare ``string_view`` arrays (``not_equal``, which
    query boundaries use): pyarrow 16 has the type, but its comparison kernels came later.
    Where they do not, text ids are read as ``string`` (a copy) instead of as views.

    >>> isinstance(compares_views(), bool)
    True
    """
    import pyarrow as pa

    try:
        views = pa.array(["a"], pa.string_view())
        kernels().call_function("not_equal", [views, views])
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, TypeError):
        return False
    return True


def _compression(path: str) -> str | None:
    with open(path, "rb") as handle:
        return compression(handle.read(16))


def delimiter_of(head: bytes, fields: int) -> str | None:
    """The single delimiter the file uses, or None if its shape is irregular.

    >>> delimiter_of(b"q1 0 d1 1\\nq1 0 d2 0\\n", 4), delimiter_of(b"q1\\t0\\td1\\t1\\n\\nq1\\t0\\td2\\t0", 4)
    (' ', '\\t')
    >>> delimiter_of(b"q1 0 d1 1\\nq1 0  d2 0\\n", 4), delimiter_of(b"q1 0 d1 1\\n# note\\n", 4)
    (None, None)
    """
    lines = head.split(b"\n")[:-1] or head.split(b"\n")
    for delimiter in (b" ", b"\t"):
        if _uniform(head, delimiter, fields) or all(
            line.rstrip(b"\r").count(delimiter) == fields - 1
            and b"\t " not in line
            and delimiter * 2 not in line
            and line[:1] not in (b"#", delimiter)
            and (delimiter == b"\t" or b"\t" not in line)
            for line in lines
            if line.strip()
        ):
            return delimiter.decode()
    return None


def _uniform(head: bytes, delimiter: bytes, fields: int) -> bool:
    """The common case of :func:`delimiter_of` without a loop over lines: True only when every
    line of ``head`` (its last, cut line aside) passes that check, with no blank line; False
    leaves the decision to the line by line check."""
    end = head.rfind(b"\n")
    text = head[:end] if end > 0 else head
    if (
        not text
        or text[:1] in (b"#", delimiter, b"\n")
        or b"\n\n" in text
        or b"\n#" in text
        or b"\n" + delimiter in text
        or b"\t " in text
        or delimiter * 2 in text
        or (delimiter == b" " and b"\t" in text)
    ):
        return False
    codes = np.frombuffer(text, dtype=np.uint8)
    separators = codes[(codes == ord(delimiter)) | (codes == 10)]
    if (len(separators) + 1) % fields:
        return False
    rows = np.append(separators, 10).reshape(-1, fields)
    return bool(np.all(rows[:, :-1] == ord(delimiter)) and np.all(rows[:, -1] == 10))


def _csv_options(
    names: list[str], columns: dict, delimiter: str, block_size: int, use_threads: bool, check_utf8: bool = True
) -> dict:
    """pyarrow.csv's options for a regular TREC file: ``names`` for its fields, ``columns`` the
    ones kept and their types, no quoting, no header. ``check_utf8`` False: text columns are
    not checked to be UTF-8 (the caller checks what it keeps as text)."""
    import pyarrow.csv as csv

    return dict(
        read_options=csv.ReadOptions(column_names=names, block_size=block_size, use_threads=use_threads),
        parse_options=csv.ParseOptions(
            delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False, newlines_in_values=False
        ),
        # no null spellings: Arrow would read 'nan', 'NA', 'null', 'N/A' as nulls (0 in numpy),
        # where the line reader rejects them; with none, such values fail here and hand over
        convert_options=csv.ConvertOptions(
            include_columns=list(columns),
            column_types=columns,
            null_values=[],
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            check_utf8=check_utf8,
        ),
    )


@contextmanager
def _source(path: str):
    """What pyarrow.csv reads ``path`` from: the path itself, or a stream that decompresses
    gzip and counts the bytes read for a progress listener (:func:`open_counted`)."""
    import pyarrow as pa

    compressed = _compression(path) == "gzip"
    counted = open_counted(path, compressed)  # None unless a caller follows the progress of big reads
    try:
        yield (
            path
            if counted is None and not compressed
            else pa.input_stream(path if counted is None else counted, compression="gzip" if compressed else None)
        )
    finally:
        if counted is not None:
            counted.close()


def _read(path: str, names: list[str], columns: dict, delimiter: str, jobs: int | None = None):
    """The whole file as one Arrow table (multi-threaded parsing), None if pyarrow refuses it."""
    import pyarrow as pa
    import pyarrow.csv as csv

    pa.set_cpu_count(threads(jobs))
    try:
        with _source(path) as source:
            return csv.read_csv(source, **_csv_options(names, columns, delimiter, 1 << 22, True))
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError):
        return None


def numpy_column(column, dtype) -> np.ndarray:
    """A null-free primitive Arrow column as one numpy array (without pyarrow's pandas shim)."""
    chunks = column.chunks if hasattr(column, "chunks") else [column]
    parts = [
        np.frombuffer(c.buffers()[1], dtype=dtype, count=len(c), offset=c.offset * np.dtype(dtype).itemsize)
        for c in chunks
        if len(c)
    ]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def bool_column(column) -> np.ndarray:
    """A null-free boolean Arrow array as a numpy bool array."""
    chunks = column.chunks if hasattr(column, "chunks") else [column]
    parts = [
        np.unpackbits(np.frombuffer(c.buffers()[1], dtype=np.uint8), bitorder="little")[c.offset : c.offset + len(c)]
        for c in chunks
        if len(c)
    ]
    return np.concatenate(parts).astype(bool) if parts else np.zeros(0, dtype=bool)


def encode_qids(column, jobs: int | None = None):
    """Dictionary-encode query ids: (vocab, int32 codes), or None if a comment line slipped in.

    Each chunk is encoded on its own (in threads: few distinct ids per chunk, small hash
    tables), then the chunk dictionaries are merged.
    """
    call = kernels().call_function
    codes = np.empty(len(column), dtype=np.int32)
    parts = _map_chunks(lambda chunk, start: (start, call("dictionary_encode", [chunk])), column, jobs)
    if len(parts) == 1:  # one chunk: its dictionary is the vocabulary, its indices the codes
        names = parts[0][1].dictionary.to_pylist()
        codes[:] = numpy_column(parts[0][1].indices, np.int32)
    else:
        vocab: dict[str, int] = {}
        for start, encoded in parts:
            local = np.array([vocab.setdefault(q, len(vocab)) for q in encoded.dictionary.to_pylist()], dtype=np.int32)
            indices = numpy_column(encoded.indices, np.int32)
            codes[start : start + len(indices)] = local[indices] if len(local) else 0
        names = list(vocab)
    return None if comment_like(names) else (names, codes)


def comment_like(qids: list[str]) -> bool:
    """Whether a query id starts with '#' (a comment line read as a row), in one pass of C loops
    (an id holding a newline before a '#' also answers True: the line reader then decides).

    >>> comment_like(["q1", "q2"]), comment_like(["q1", "#q2"]), comment_like([])
    (False, True, False)
    """
    text = "\n".join(qids)
    return text.startswith("#") or "\n#" in text


def _map_chunks(work, column, jobs: int | None = None) -> list:
    """Run ``work(chunk, start)`` on every chunk of an Arrow column, in ``threads(jobs)`` threads."""
    chunks = column.chunks if hasattr(column, "chunks") else [column]
    starts = np.concatenate(([0], np.cumsum([len(c) for c in chunks])))
    if threads(jobs) < 2 or len(chunks) < 2:
        return [work(c, int(a)) for c, a in zip(chunks, starts)]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads(jobs)) as pool:
        return list(pool.map(work, chunks, starts[:-1].tolist()))


def canonical_int64(chunk, pool=None) -> np.ndarray | None:
    """The int64 values of a string Arrow array when every id is a canonical non-negative
    decimal ("7", not "07" or "+7"), else None.

    Arrow's cast rejects signs other than '-' and non-digits; an id whose first byte is a
    digit other than "0" (or that is "0") has no sign and no leading zero. ``string`` and
    ``large_string`` arrays alike: where each id starts is read from the offsets.

    >>> import pyarrow as pa
    >>> canonical_int64(pa.array(["7", "0", "120"])).tolist(), canonical_int64(pa.array(["10", "9"], pa.large_string())).tolist()
    ([7, 0, 120], [10, 9])
    >>> [canonical_int64(pa.array(ids)) for ids in (["07"], ["+7"], ["-0"], ["7a"], ["0", "-3"])]
    [None, None, None, None, None]
    """
    import pyarrow as pa

    first = chunk[0].as_py() if len(chunk) else "0"
    if not (first.isascii() and first.isdigit()):
        return None  # text ids: refused at once (Arrow's failing cast reads the whole chunk first)
    compute = kernels()
    try:
        values = numpy_column(
            compute.call_function("cast", [chunk], compute.CastOptions.safe(pa.int64()), pool), np.int64
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if len(values) == 0:
        return values
    offset_type = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
    offsets = np.frombuffer(
        chunk.buffers()[1],
        dtype=offset_type,
        count=len(chunk) + 1,
        offset=chunk.offset * np.dtype(offset_type).itemsize,
    )
    first_bytes = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[offsets[:-1]]
    first_bytes -= ord("0")  # a sign wraps around past 9
    leading_zero = (first_bytes == 0) & (offsets[1:] - offsets[:-1] > 1)
    return values if first_bytes.max() <= 9 and not leading_zero.any() else None


def numeric_ids(column, jobs: int | None = None):
    """int64 values when every id is canonical (:func:`canonical_int64`), else None. Works
    chunk by chunk in threads, into one preallocated array."""
    out = np.empty(len(column), dtype=np.int64)

    def work(chunk, start):
        values = canonical_int64(chunk)
        if values is not None:
            out[start : start + len(values)] = values
        return values is not None

    if len(column) == 0 or not all(_map_chunks(work, column, jobs)):
        return None
    return out


FINGERPRINT_ROWS = 1 << 15  # ids fingerprinted at a time: the temporaries stay in cache
_SEED = np.uint64(0x9E3779B97F4A7C15)  # the golden ratio's bits, times the length: where a fingerprint starts
_STEP = np.uint64(0xC2B2AE3D27D4EB4F)  # an odd multiplier with dense bits, once per eight bytes
_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)  # the low i bytes


def _words(buffer) -> tuple[np.ndarray, int]:
    """(words, last): an Arrow buffer read as unaligned little-endian 64-bit words, one starting
    at every byte (zero-padded to eight bytes), and the last position a whole word starts at."""
    data = np.zeros(0, dtype=np.uint8) if buffer is None else np.frombuffer(buffer, dtype=np.uint8)
    if len(data) < 8:
        data = np.concatenate((data, np.zeros(8, dtype=np.uint8)))
    return np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,)), len(data) - 8


def _prints(words: np.ndarray, last: int, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The fingerprints of the ids of ``length`` bytes found at ``start`` in ``words``'s bytes (:func:`_words`).

    A fingerprint starts as the id's length times a constant; its first eight bytes (fewer,
    zero-padded, for a shorter id), its last eight (none for a shorter id) and, for an id
    longer than 16 bytes, the eight-byte words in between are each xor-ed in, then the whole
    multiplied by an odd constant (a bijection: different states stay different, and the last
    product spreads every bit upwards: the high bits index the table of
    :class:`evaltool.io.textids._Judged`). A word
    that would run past the buffer's end is read ending at it, shifted down.
    """
    end = start + length
    shortest, longest = int(length.min(initial=0)), int(length.max(initial=0))
    h = length.astype(np.uint64)
    h *= _SEED
    if len(start) and int(start.max()) > last:  # a short id in the buffer's last bytes
        at = np.minimum(start, last)
        first = words[at]
        first >>= ((start - at) * 8).astype(np.uint64)
    else:
        first = words[start]
    if shortest < 8:
        first &= _MASKS[np.minimum(length, 8)]
        final = words[np.maximum(end - 8, 0)]
        final[length < 8] = 0
    else:
        final = words[end - 8]
    h ^= first
    h *= _STEP
    h ^= final
    h *= _STEP
    if longest > 16:  # the words between the first eight bytes and the last eight
        which = np.flatnonzero(length > 16)
        at = start[which].astype(np.int64) + 8
        left = length[which].astype(np.int64) - 16  # bytes between them not read yet
        while len(which):
            word = words[at]
            word &= _MASKS[np.minimum(left, 8)]
            h[which] = (h[which] ^ word) * _STEP
            more = left > 8
            which, at, left = which[more], at[more] + 8, left[more] - 8
    return h


def _chunk_fingerprints(chunk) -> np.ndarray:
    """:func:`fingerprints` of one Arrow ``string``, ``large_string`` or ``string_view`` array
    without nulls, :data:`FINGERPRINT_ROWS` ids at a time (:func:`_prints`)."""
    import pyarrow as pa

    if pa.types.is_string_view(chunk.type):
        return _view_fingerprints(chunk)
    rows = len(chunk)
    buffers = chunk.buffers()
    offset_type = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
    offsets = np.frombuffer(
        buffers[1], dtype=offset_type, count=rows + 1, offset=chunk.offset * np.dtype(offset_type).itemsize
    )
    words, last = _words(buffers[2])
    out = np.empty(rows, dtype=np.uint64)
    for begin in range(0, rows, FINGERPRINT_ROWS):
        start = offsets[begin : min(begin + FINGERPRINT_ROWS, rows)]
        out[begin : begin + len(start)] = _prints(
            words, last, start, offsets[begin + 1 : begin + len(start) + 1] - start
        )
    return out


VIEW_INLINE = 12  # a string_view id of up to this many bytes is held in its 16-byte view, after its length


def _view_fingerprints(chunk) -> np.ndarray:
    """:func:`fingerprints` of an Arrow ``string_view`` array (polars' text, handed over without
    a copy): each id's 16-byte view holds its length, then either the id itself (up to
    :data:`VIEW_INLINE` bytes) or its first four bytes, the data buffer holding it and where."""
    rows = len(chunk)
    buffers = chunk.buffers()
    views = np.frombuffer(buffers[1], dtype=np.int32, count=4 * rows, offset=chunk.offset * 16).reshape(rows, 4)
    inline_words, inline_last = _words(buffers[1])
    data = [_words(buffer) for buffer in buffers[2:]]
    out = np.empty(rows, dtype=np.uint64)
    for begin in range(0, rows, FINGERPRINT_ROWS):
        part = views[begin : begin + FINGERPRINT_ROWS]
        length = part[:, 0].astype(np.int64)
        start = (np.arange(begin, begin + len(part), dtype=np.int64) + chunk.offset) * 16 + 4
        if int(length.max(initial=0)) <= VIEW_INLINE:
            out[begin : begin + len(part)] = _prints(inline_words, inline_last, start, length)
            continue
        h = np.empty(len(part), dtype=np.uint64)
        short = np.flatnonzero(length <= VIEW_INLINE)
        h[short] = _prints(inline_words, inline_last, start[short], length[short])
        long = np.flatnonzero(length > VIEW_INLINE)
        buffer = part[long, 2]
        for index in np.unique(buffer).tolist():
            rows_in = long[buffer == index]
            words, last = data[index]
            h[rows_in] = _prints(words, last, part[rows_in, 3].astype(np.int64), length[rows_in])
        out[begin : begin + len(part)] = h
    return out


def fingerprints(column) -> np.ndarray:
    """A 64-bit fingerprint (uint64) of every id of an Arrow text column (``string``,
    ``large_string`` or ``string_view``, an array or chunked, no nulls): equal ids have equal fingerprints;
    different ids almost never do (a multiplicative hash of the id's length and bytes, eight
    at a time: :func:`_chunk_fingerprints`), which callers confirm by comparing texts before
    trusting a match.

    >>> import pyarrow as pa
    >>> ids = ["", "a", "abcdefgh", "abcdefgh\\x00", "abcdefghi", "é" * 9]
    >>> len(set(fingerprints(pa.array(ids)).tolist())), fingerprints(pa.chunked_array([ids[:2], ids[2:]])).tolist() == fingerprints(pa.array(ids)).tolist()
    (6, True)
    """
    chunks = column.chunks if hasattr(column, "chunks") else [column]
    parts = [_chunk_fingerprints(chunk) for chunk in chunks if len(chunk)]
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


def _last_field(path: str, fields: int) -> str | None:
    """Field ``fields`` of the last content line, read from the end of an uncompressed file."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - (1 << 16)))
        tail = handle.read()
    for line in reversed(tail.split(b"\n")):
        parts = line.split()
        if parts and not parts[0].startswith(b"#"):
            return parts[fields - 1].decode("utf-8", "surrogateescape") if len(parts) >= fields else None
    return None


def canonical_int(text: str) -> int:
    """The int64 key of a document id in a numeric run, -1 if it cannot occur there: every
    id :func:`canonical_int64` takes, up to 2**63 - 1 (19 digits).

    >>> canonical_int("42"), canonical_int("9223372036854775807"), canonical_int("9223372036854775808"), canonical_int("042")
    (42, 9223372036854775807, -1, -1)
    """
    if text.isdigit() and text.isascii() and (text == "0" or text[0] != "0") and len(text) <= 19:
        value = int(text)
        return value if value < 1 << 63 else -1
    return -1


# the int64 key of every id (-1: cannot occur), kept for the last list (one qrels' ids, met run after run)
_numeric_keys = LastIds(lambda docids: np.array([canonical_int(d) for d in docids], dtype=np.int64))


class NumericDocRun(Run):
    """A run whose document ids are canonical integers, kept as integer keys (int32 or int64)."""

    def doc_text(self, rows):
        return [str(v) for v in self.doc_codes[rows].tolist()]

    def keys_for(self, docids):
        return _numeric_keys(docids)


# the ids as an Arrow array, kept for the last list (one qrels' ids, met run after run)
_string_arrays = LastIds(lambda docids: string_array(docids))


class ArrowDocRun(Run):
    """A run whose document ids stay in an Arrow dictionary."""

    def doc_text(self, rows):
        return self.extra["dictionary"].take(integer_array(self.doc_codes[rows])).to_pylist()

    def keys_for(self, docids):
        compute = kernels()
        dictionary, wanted = self.extra["dictionary"], _string_arrays(docids)
        if len(dictionary) <= 4 * len(wanted):
            found = compute.call_function("index_in", [wanted], compute.SetLookupOptions(dictionary))
            return found_or_missing(found).astype(np.int64)
        # a run with many more ids than asked for (a qrels' ids): the run's ids are probed against the
        # distinct ids asked for, a small hash table, rather than hashing every id of the run into one
        asked = compute.call_function("dictionary_encode", [wanted])
        found = found_or_missing(
            compute.call_function("index_in", [dictionary], compute.SetLookupOptions(asked.dictionary))
        )
        key_of_asked = np.full(len(asked.dictionary), -1, dtype=np.int64)
        hit = np.flatnonzero(found >= 0)
        key_of_asked[found[hit]] = hit
        return key_of_asked[numpy_column(asked.indices, np.int32)]


def string_array(texts: list[str]):
    """An Arrow string array of ``texts``, built from its buffers: ``pa.array`` and ``pa.scalar``
    import pandas (a third of a second) to ask whether they were handed a pandas object.

    >>> string_array(["ab", "", "é"]).to_pylist()
    ['ab', '', 'é']
    """
    import pyarrow as pa

    data = [text.encode("utf-8", "surrogateescape") for text in texts]
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=len(data)), out=offsets[1:])
    if offsets[-1] < 1 << 31:
        return pa.StringArray.from_buffers(
            len(data), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(data))
        )
    return pa.LargeStringArray.from_buffers(len(data), pa.py_buffer(offsets), pa.py_buffer(b"".join(data)))


def integer_array(values: np.ndarray):
    """An Arrow int64 array of ``values`` (integers), built from their buffer, as
    :func:`string_array` is (``pa.array`` would import pandas).

    >>> integer_array(np.array([3, 0, 7], dtype=np.int32)).to_pylist()
    [3, 0, 7]
    """
    import pyarrow as pa

    data = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])


def found_or_missing(found) -> np.ndarray:
    """``index_in``'s answer (int32, null where not found) as numpy, -1 where not found."""
    chunks = found.chunks if hasattr(found, "chunks") else [found]
    parts = []
    for chunk in chunks:
        values = numpy_column(chunk, np.int32)
        if chunk.null_count:
            valid = np.unpackbits(np.frombuffer(chunk.buffers()[0], dtype=np.uint8), bitorder="little")
            values = np.where(valid[chunk.offset : chunk.offset + len(chunk)].astype(bool), values, -1)
        parts.append(values)
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)


DUPLICATE_SLICE_ROWS = 1 << 16  # rows of whole queries checked at a time for repeated documents


def has_duplicates(qid_codes: np.ndarray, doc_codes: np.ndarray, jobs: int | None = None) -> bool:
    """Any (query, document) pair twice?

    In a file grouped by query (every line of a query together, as systems write runs)
    a pair can only repeat inside its query's group: the documents of each group are
    sorted on their own, a few thousand rows at a time (:func:`repeats_in_groups`), with
    no copy of the whole file. Other files: one sort of packed (query, document) keys.
    ``jobs`` is accepted for the callers' sake; the check runs in the calling thread.

    >>> q, d = np.array([0, 0, 1, 1]), np.array([5, 7, 5, 9])
    >>> has_duplicates(q, d), has_duplicates(q, np.array([5, 7, 9, 9])), has_duplicates(q[[0, 2, 1, 3]], d[[0, 2, 1, 3]])
    (False, True, False)
    """
    n = len(doc_codes)
    if n < 2:
        return False
    # more runs of equal query codes than codes in their range: a query comes back (not grouped)
    runs = int(np.count_nonzero(qid_codes[1:] != qid_codes[:-1])) + 1
    if runs <= int(qid_codes.max()) - int(qid_codes.min()) + 1:
        bounds = np.concatenate(([0], np.flatnonzero(qid_codes[1:] != qid_codes[:-1]) + 1, [n]))
        if len(distinct(qid_codes[bounds[:-1]])) == runs and doc_codes.min() >= 0:
            return repeats_in_groups(doc_codes, bounds)
    if not (doc_codes.max() < (1 << 40) and qid_codes.max() < (1 << 23) and doc_codes.min() >= 0):
        order = np.lexsort((doc_codes, qid_codes))
        same_q = qid_codes[order][1:] == qid_codes[order][:-1]
        return bool(np.any(same_q & (doc_codes[order][1:] == doc_codes[order][:-1])))
    packed = qid_codes.astype(np.int64)
    packed <<= 40
    packed |= doc_codes
    packed.sort()
    return bool(np.any(packed[1:] == packed[:-1]))


def repeats_in_groups(values: np.ndarray, bounds: np.ndarray) -> bool:
    """Does a value repeat inside one of the groups ``values[bounds[i]:bounds[i + 1]]``? (values >= 0)

    Whole groups are taken :data:`DUPLICATE_SLICE_ROWS` rows at a time and laid out as the
    rows of a matrix, each as wide as the slice's largest group; the gaps of shorter
    groups hold -1, -2, ... (never equal to a value, nor to each other). Sorting every row
    then puts repeats side by side. Values below 2**31 are sorted as int32 (faster).

    >>> groups = np.array([0, 2, 5])  # [3, 1] and [2, 1, x]
    >>> repeats_in_groups(np.array([3, 1, 2, 1, 4]), groups), repeats_in_groups(np.array([3, 1, 2, 1, 1]), groups)
    (False, True)
    """
    dtype = np.int32 if values.max() < (1 << 31) else values.dtype
    sizes = np.diff(bounds)
    groups = len(sizes)
    first = 0
    while first < groups:
        # whole groups up to the slice's rows (at least one group)
        last = max(first + 1, int(np.searchsorted(bounds, bounds[first] + DUPLICATE_SLICE_ROWS, side="right")) - 1)
        last = min(last, groups)
        width = int(sizes[first:last].max())
        if width * (last - first) > 2 * (bounds[last] - bounds[first]) + DUPLICATE_SLICE_ROWS:
            last = first + 1  # one long group among short ones: on its own
            width = int(sizes[first])
        part = values[bounds[first] : bounds[last]]
        if np.all(sizes[first:last] == width):
            matrix = part.reshape(last - first, width).astype(dtype)
        else:
            matrix = np.empty((last - first, width), dtype=dtype)
            matrix[:] = -1 - np.arange(width, dtype=dtype)
            row = np.repeat(np.arange(last - first), sizes[first:last])
            column = np.arange(len(part)) - np.repeat(bounds[first:last] - bounds[first], sizes[first:last])
            matrix[row, column] = part
        matrix.sort(axis=1)
        if np.any(matrix[:, 1:] == matrix[:, :-1]):
            return True
        first = last
    return False


def run_from_columns(qids, docids, scores: np.ndarray, runid: str, path: str, jobs: int | None = None) -> Run | None:
    """A Run from Arrow id columns; None if a query id looks like a comment line."""
    encoded_qids = encode_qids(qids, jobs)
    if encoded_qids is None:
        return None
    vocab, qid_codes = encoded_qids
    numeric = numeric_ids(docids, jobs)
    if numeric is not None:
        return NumericDocRun(vocab, qid_codes, [], numeric, scores, None, runid=runid, path=path)
    encoded = kernels().call_function("dictionary_encode", [docids])
    if hasattr(encoded, "combine_chunks"):
        encoded = encoded.combine_chunks()
    codes = numpy_column(encoded.indices, np.int32).astype(np.int64)
    return ArrowDocRun(
        vocab, qid_codes, [], codes, scores, None, runid=runid, path=path, extra={"dictionary": encoded.dictionary}
    )


RUN_BLOCK_BYTES = 1 << 21  # text per block of the run reader: each is parsed, converted, dropped
PARSERS = 2  # threads parsing and converting blocks (at most; --jobs 1: none)
READ_AHEAD = 1  # blocks parsed ahead beyond one per thread
MIN_LINE_BYTES = 12  # "q 0 d 1 s t\n": no content line of a run is shorter


class _RunColumns:
    """The numpy columns of a run, filled batch by batch as pyarrow parses the file.

    Each batch's Arrow columns are converted and dropped at once, so the text of the ids
    is never held whole: the arrays are allocated for the rows the file should hold
    (:func:`_run_capacity`), only the part written is ever touched (then trimmed), and
    they grow when full. Numeric document ids become exact integer
    keys, int32 as long as they fit (MS MARCO's do), int64 from the first that does not;
    when a batch holds an id that is not canonical, the run's ids are kept as text from
    then on (the earlier keys back as their own text), with the fingerprint of each
    (:func:`fingerprints`), and the run is built from them at the end (:meth:`run`).
    """

    def __init__(self, capacity: int):
        self.qid_codes = np.empty(capacity, dtype=np.int32)
        self.doc_codes = np.empty(capacity, dtype=np.int32)
        self.scores = np.empty(capacity, dtype=np.float64)
        self.rows = 0
        self.block_starts: list[int] = []  # the first row of every block added after the first
        self.vocab: dict[str, int] = {}
        self.doc_text: list | None = None  # the id chunks, once an id is not numeric
        self.prints: list = []  # their fingerprints, chunk by chunk
        self.tag = None  # the run tag of the last row (read when the file is gzip)

    def _grow(self, rows: int) -> None:
        if rows > len(self.scores):
            size = max(rows, len(self.scores) * 3 // 2)
            for column in (self.qid_codes, self.doc_codes, self.scores):
                column.resize(size, refcheck=False)  # realloc: a big block is remapped, not copied

    def add(self, block: _Block) -> None:
        """Append the rows of a converted block."""
        import pyarrow as pa

        start, end = self.rows, self.rows + block.rows
        self._grow(end)
        self.scores[start:end] = block.scores
        local = np.array([self.vocab.setdefault(q, len(self.vocab)) for q in block.qids], dtype=np.int32)
        self.qid_codes[start:end] = local[block.qid_index]
        values = block.keys if self.doc_text is None else None
        if values is not None:
            if (
                self.doc_codes.dtype != values.dtype
                and len(values)
                and values.max() > np.iinfo(self.doc_codes.dtype).max
            ):
                wide = np.empty(len(self.doc_codes), dtype=values.dtype)
                wide[:start] = self.doc_codes[:start]
                self.doc_codes = wide
            self.doc_codes[start:end] = values
        else:
            if self.doc_text is None:
                self.doc_text = [integer_array(self.doc_codes[:start]).cast(pa.string())] if start else []
                self.prints = [fingerprints(self.doc_text[0])] if start else []
            self.doc_text.append(block.docs)
            self.prints.append(fingerprints(block.docs) if block.prints is None else block.prints)
        if start:
            self.block_starts.append(start)
        self.rows, self.tag = end, block.tag

    def _repeats(self, keys: np.ndarray) -> bool:
        """Whether a (query, document key) pair repeats in the run (keys >= 0), given that none
        repeats inside a block (every block added was ``regular``).

        In a file grouped by query a pair can then only repeat in a query whose lines cross
        the cut between two blocks: only those queries' rows are checked (a few thousand rows
        instead of the whole file, in the reading thread after the parsers are done). Other
        files: :func:`has_duplicates` over every row.

        >>> read = _RunColumns(0)
        >>> read.qid_codes, read.vocab, read.block_starts = np.array([0, 0, 1, 1, 2], np.int32), {"a": 0, "b": 1, "c": 2}, [3]
        >>> read._repeats(np.array([4, 5, 6, 7, 6])), read._repeats(np.array([4, 5, 6, 6, 6]))
        (False, True)
        """
        qids = self.qid_codes
        changes = np.flatnonzero(qids[1:] != qids[:-1]) + 1
        if len(changes) + 1 != len(self.vocab) or not len(keys) or keys.min() < 0:
            return has_duplicates(qids, keys)
        bounds = np.concatenate(([0], changes, [len(qids)]))
        starts = np.array(self.block_starts, dtype=np.int64)
        crossing = starts[qids[starts - 1] == qids[starts]]  # a block that starts inside a query
        for group in np.unique(np.searchsorted(bounds, crossing, side="right") - 1).tolist():
            begin, end = int(bounds[group]), int(bounds[group + 1])
            if repeats_in_groups(keys[begin:end], np.array([0, end - begin])):
                return True
        return False

    def run(self, runid: str, path: str, text_run=None) -> Run | None:
        """The Run read; None if a query id looks like a comment line, or a (query, document) pair
        repeats (or two of a query's text ids share a fingerprint: the line reader then decides).

        Text ids: ``text_run(query ids, query codes, ids, fingerprints, scores, runid, path)``
        when given (:class:`evaltool.io.textids.TextDocRun`, which never encodes them; this
        module sits below it), else they are dictionary-encoded (an :class:`ArrowDocRun`)."""
        import pyarrow as pa

        names = list(self.vocab)
        if comment_like(names):
            return None
        for column in (self.qid_codes, self.doc_codes, self.scores):
            column.resize(self.rows, refcheck=False)
        if self.doc_text is None:
            if self._repeats(self.doc_codes):
                return None
            return NumericDocRun(names, self.qid_codes, [], self.doc_codes, self.scores, None, runid=runid, path=path)
        prints = np.concatenate(self.prints) if len(self.prints) > 1 else self.prints[0]
        if self._repeats((prints >> np.uint64(1)).view(np.int64)):
            return None
        if text_run is not None:
            docs = pa.chunked_array(self.doc_text, pa.string())
            self.doc_text = None
            return text_run(names, self.qid_codes, docs, prints, self.scores, runid, path)
        encoded = kernels().call_function("dictionary_encode", [pa.chunked_array(self.doc_text, pa.string())])
        self.doc_text = None
        if hasattr(encoded, "combine_chunks"):
            encoded = encoded.combine_chunks()
        self.doc_codes[:] = numpy_column(encoded.indices, np.int32)
        return ArrowDocRun(
            names,
            self.qid_codes,
            [],
            self.doc_codes,
            self.scores,
            None,
            runid=runid,
            path=path,
            extra={"dictionary": encoded.dictionary},
        )


class _Block:
    """One block of a run's lines as compact numpy columns, converted in a worker thread:
    scores (all finite, or ``finite`` False), the query ids met and each row's index
    into them, the document keys when every id is canonical (else None, and their
    fingerprints) and the ids as an Arrow array, the run tag of its last line when the
    file gives it. Ids that are not UTF-8 raise UnicodeDecodeError (query ids, the tag)
    or ArrowInvalid (text document ids)."""

    __slots__ = ("rows", "scores", "finite", "qids", "qid_index", "keys", "prints", "docs", "tag", "regular")

    def __init__(self, batch, pool=None):
        self.rows = batch.num_rows
        self.scores = numpy_column(batch.column("s"), np.float64)
        self.finite = bool(np.isfinite(self.scores).all())
        self.qids, self.qid_index = block_query_ids(batch.column("q"), pool)
        self.docs = batch.column("d")
        self.keys = canonical_int64(self.docs, pool)
        tags = batch.column("tag") if "tag" in batch.schema.names else None
        self.tag = tags[-1].as_py() if tags is not None else None
        if self.keys is None:  # text ids, read without checking them (read_run): UTF-8, or ArrowInvalid
            self.docs.validate(full=True)
        self.prints = fingerprints(self.docs) if self.keys is None else None
        # what the line reader must see at once (it names the line): a comment, a pair given twice here
        # (or two ids of a query sharing a fingerprint: the line reader finds no pair then, and reads the file)
        doc_codes = self.keys if self.prints is None else (self.prints >> np.uint64(1)).view(np.int64)
        self.regular = (
            self.finite
            and not any(q.startswith("#") for q in self.qids)
            and not _repeats_in_block(self.qid_index, doc_codes)
        )


RUNS_PER_ROW = 1 / 8  # more runs of one query id than this per row: the ids are dictionary-encoded
RUNS_HEAD_ROWS = 256  # rows of a block looked at first


def query_bounds(qids, pool=None) -> np.ndarray:
    """Where the query id changes from one row to the next, compared in Arrow's C loops (one
    ``not_equal`` of the ids with the ids shifted by one, no hashing): the start of every run
    of equal ids, then the row count. An array or a chunked array (a run may go on from one
    chunk to the next), of any Arrow text type.

    >>> import pyarrow as pa
    >>> query_bounds(pa.array(["q1", "q1", "q2", "q1"])).tolist()
    [0, 2, 3, 4]
    """
    rows = len(qids)
    if rows < 2:
        return np.array([0, rows], dtype=np.int64)
    changes = kernels().call_function("not_equal", [qids.slice(1), qids.slice(0, rows - 1)], None, pool)
    return np.concatenate(([0], np.flatnonzero(bool_column(changes)) + 1, [rows])).astype(np.int64)


def block_query_ids(column, pool=None) -> tuple[list[str], np.ndarray]:
    """(ids, index): query ids and each row's index into them, as one block of a run file needs
    them (equal ids may appear more than once in ``ids``, under different indices).

    A run file lists each query's lines together: the id of each run of equal ids in a row is
    taken (:func:`query_bounds`); ids that change more often than :data:`RUNS_PER_ROW` per row
    (a shuffled file, told by its first :data:`RUNS_HEAD_ROWS` rows) are dictionary-encoded instead.

    >>> import pyarrow as pa
    >>> ids, index = block_query_ids(pa.array(["q1"] * 12 + ["q2"] * 11 + ["q1"]))
    >>> ids, index[[0, 11, 12, 22, 23]].tolist()
    (['q1', 'q2', 'q1'], [0, 0, 1, 1, 2])
    >>> ids, index = block_query_ids(pa.array(["q1", "q2", "q1", "q2"]))  # shuffled: encoded
    >>> ids, index.tolist()
    (['q1', 'q2'], [0, 1, 0, 1])
    """
    call = kernels().call_function
    rows = len(column)
    head = min(rows, RUNS_HEAD_ROWS)
    if rows > 1 and len(query_bounds(column.slice(0, head), pool)) - 2 < head * RUNS_PER_ROW:
        bounds = query_bounds(column, pool)
        if len(bounds) - 2 < rows * RUNS_PER_ROW:
            ids = call("take", [column, integer_array(bounds[:-1])], None, pool).to_pylist()
            return ids, np.repeat(np.arange(len(ids), dtype=np.int32), np.diff(bounds))
    encoded = call("dictionary_encode", [column], None, pool)
    return encoded.dictionary.to_pylist(), numpy_column(encoded.indices, np.int32)


def _repeats_in_block(qid_index: np.ndarray, doc_codes: np.ndarray) -> bool:
    """Whether a (query index, document code) pair repeats in a block (codes >= 0). Codes below
    2**32 (document ids up to 4294967295) are packed with the index into one int64 each and the
    block sorted once: for a block's 10^5 rows, cheaper than sorting query by query
    (:func:`has_duplicates`, which takes the others).

    >>> q = np.array([0, 0, 1, 1], dtype=np.int32)
    >>> _repeats_in_block(q, np.array([5, 7, 5, 9])), _repeats_in_block(q, np.array([5, 7, 9, 2**40 + 9]))
    (False, False)
    >>> _repeats_in_block(q, np.array([5, 7, 9, 9])), _repeats_in_block(q, np.array([5, 7, 2**40, 2**40]))
    (True, True)
    """
    if not (len(doc_codes) and int(doc_codes.max()) < 1 << 32):
        return has_duplicates(qid_index.astype(np.int64), doc_codes)
    packed = qid_index.astype(np.int64)
    packed <<= 32
    packed |= doc_codes
    packed.sort()
    return bool(np.any(packed[1:] == packed[:-1]))


def _parse(text, options: dict) -> list[_Block]:
    """The converted blocks of ``text`` (whole lines; parsed by pyarrow, without its threads).

    Their Arrow memory comes from the C allocator, as numpy's does: a block lives for a
    moment, and what it frees serves numpy afterwards. From pyarrow's default pool
    (mimalloc) ~30 MB more stayed resident on 7M lines, never reused by numpy.
    """
    import pyarrow as pa
    import pyarrow.csv as csv

    pool = pa.system_memory_pool()
    table = csv.read_csv(pa.BufferReader(pa.py_buffer(text)), **options, memory_pool=pool)
    return [_Block(batch, pool) for batch in table.to_batches() if batch.num_rows]


def _texts(handle, size: int, buffers: int):
    """The text of a file, whole lines of about ``size`` bytes at a time, read into a ring of
    ``buffers`` reused buffers (a block is overwritten ``buffers`` blocks later: its parsing
    must be done by then). A line longer than ``size``: ArrowInvalid."""
    import pyarrow as pa

    ring = [bytearray(size) for _ in range(buffers)]
    carry, turn = b"", 0
    while True:
        view = memoryview(ring[turn % buffers])
        turn += 1
        view[: len(carry)] = carry
        end, done = len(carry), False
        while end < size:
            got = handle.readinto(view[end:])
            if not got:
                done = True
                break
            end += got
        cut = end if done else view.obj.rfind(b"\n", 0, end) + 1
        if cut == 0 and not done:
            raise pa.ArrowInvalid(f"a line longer than {size} bytes")
        carry = bytes(view[cut:end])
        if cut:
            yield view[:cut]
        if done:
            return


@contextmanager
def _text(path: str, compressed: bool):
    """A binary handle on the text of ``path`` (gzip decompressed; counted for a progress listener)."""
    import pyarrow as pa

    counted = open_counted(path, compressed)
    raw = counted if counted is not None else None if compressed else open(path, "rb", buffering=0)
    try:
        yield pa.input_stream(raw or path, compression="gzip") if compressed else raw
    finally:
        if raw is not None:
            raw.close()


def _run_capacity(path: str, compressed: bool, sample: bytes) -> int:
    """Rows to allocate for a run file: its size over the mean line length of ``sample`` (its
    first bytes), with a quarter more for lines that turn out shorter, but never more than
    the file can hold (the arrays grow if needed). A gzip file counts four times its size.

    Untouched, the allocation costs address space only; capped, it stays within what the
    machine grants a big file on a small machine.
    """
    text = os.path.getsize(path) * (4 if compressed else 1)
    lines = sample.count(b"\n")
    mean = max(MIN_LINE_BYTES, (sample.rfind(b"\n") + 1) // lines) if lines else MIN_LINE_BYTES
    return min(text // MIN_LINE_BYTES, text * 5 // (4 * mean)) + 1


def read_run(
    path, jobs: int | None = None, in_caller: bool = False, block_size: int | None = None, text_run=None
) -> Run | None:
    """Columnar read of a regular run file; None when the line reader must take over.

    Duplicated (query, document) pairs also hand over, so that the line reader reports
    or resolves them with their line numbers. ``in_caller``: parsed in the calling thread
    (a small file, one of several read at once). pyarrow parses ``block_size`` bytes of
    text at a time (default :data:`RUN_BLOCK_BYTES`; :class:`_RunColumns`). ``text_run``
    builds a run of text document ids (:meth:`_RunColumns.run`).
    """
    import pyarrow as pa

    name = os.fspath(path)
    sample = head(name)
    delimiter = delimiter_of(sample, 6)
    if delimiter is None:
        return None
    compressed = _compression(name) == "gzip"
    columns = {"q": pa.string(), "d": pa.string(), "s": pa.float64()}
    if compressed:
        columns["tag"] = pa.dictionary(pa.int32(), pa.string())
    if not in_caller:
        pa.set_cpu_count(threads(jobs))
    block_size = block_size or RUN_BLOCK_BYTES
    read = _RunColumns(_run_capacity(name, compressed, sample))
    # ids are not checked to be UTF-8 as they are parsed (a fifth of pyarrow's time on a numeric run):
    # numeric ids are digits, query ids are decoded one run at a time, text ids checked by _Block
    options = _csv_options(["q", "iter", "d", "rank", "s", "tag"], columns, delimiter, block_size + 1, False, False)
    workers = 0 if in_caller else min(threads(jobs), PARSERS) if threads(jobs) > 1 else 0
    depth = max(workers, 1) + READ_AHEAD
    try:
        with _text(name, compressed) as handle:
            texts = _texts(handle, block_size, depth + 1)
            # closed before the file is: no block is still being read
            with closing(in_order(partial(_parse, options=options), texts, workers, depth)) as parsed:
                for blocks in parsed:
                    for block in blocks:
                        if not block.regular:  # handed over at once, not after the rest of the file
                            return None
                        read.add(block)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError, UnicodeDecodeError):  # an id not UTF-8: the line reader
        return None
    if read.rows == 0:
        return None
    runid = read.tag if compressed else _last_field(name, 6)
    return None if runid is None else read.run(runid, name, text_run)


def read_qrels(path, jobs: int | None = None) -> Qrels | None:
    """Columnar read of a regular qrels file; None when the line reader must take over."""
    import pyarrow as pa

    name = os.fspath(path)
    delimiter = delimiter_of(head(name), 4)
    if delimiter is None:
        return None
    table = _read(name, ["q", "iter", "d", "g"], {"q": pa.string(), "d": pa.string(), "g": pa.int64()}, delimiter, jobs)
    if table is None or table.num_rows == 0:
        return None
    qids = encode_qids(table["q"], jobs)
    if qids is None:
        return None
    vocab, qid_codes = qids
    docs = kernels().call_function("dictionary_encode", [table["d"]]).combine_chunks()
    grades = numpy_column(table["g"], np.int64)
    if has_duplicates(qid_codes, numpy_column(docs.indices, np.int32).astype(np.int64), jobs):
        return None
    if len(grades) and (grades.min() < GRADE_MIN or grades.max() > GRADE_MAX):
        return None
    return Qrels(
        vocab,
        qid_codes,
        docs.dictionary.to_pylist(),
        numpy_column(docs.indices, np.int32).astype(np.int64),
        grades,
        None,
        path=name,
    )
