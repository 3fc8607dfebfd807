"""TREC qrels and run files.

qrels: ``query_id iteration doc_id grade`` (exactly four fields, integer grade), or BEIR's
TSV: a header line ``query-id corpus-id score``, then ``query_id doc_id grade``.
run:   ``query_id iteration doc_id rank score tag [ignored ...]``; the rank column is
read and ignored: order comes from the score (see :mod:`evaltool.ranking`).

Both readers are tolerant where trec_eval is (comment lines starting with ``#``, blank
lines, tabs or several spaces, CRLF, no final newline, gzip by magic bytes) and precise
where they fail: every error names the file, the line, the text and what was expected.
Fields are split on ASCII whitespace only, like C's ``isspace``; ids are exact strings.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "q.txt")
>>> _ = open(path, "w").write("# judged\\n1 0 d1 2\\n1 0 d2 0\\r\\n")
>>> qrels = read_qrels(path)
>>> qrels.doc_vocab, qrels.grades.tolist()
(['d1', 'd2'], [2, 0])
"""

from __future__ import annotations

import math
import os
from itertools import chain

import numpy as np

from evaltool.arrays import POW10
from evaltool.inputs import Qrels, Run
from evaltool.io import columnar
from evaltool.errors import ParseError, quote
from evaltool.io.common import (
    check_policy,
    GRADE_MAX,
    GRADE_MIN,
    GRADE_RANGE,
    Encoder,
    LastIds,
    TextSource,
    decode,
    resolve_duplicates,
)

QRELS_EXPECTED = "4 fields 'query_id iteration doc_id grade'"
BEIR_EXPECTED = "3 fields 'query-id corpus-id score' (a BEIR qrels file, as its header says)"
RUN_EXPECTED = "6 fields 'query_id iteration doc_id rank score run_tag'"


def _is_beir(data: bytes) -> int:
    """The line number of a BEIR qrels header (``query-id corpus-id score``), 0 when there is none.

    >>> _is_beir(b"query-id\\tcorpus-id\\tscore\\nq1\\td1\\t1\\n"), _is_beir(b"q1 0 d1 1\\n")
    (1, 0)
    """
    for number, _, fields in content_lines(data[:4096].lstrip(b"\xef\xbb\xbf")):
        return number if fields == [b"query-id", b"corpus-id", b"score"] else 0
    return 0


def content_lines(data: bytes, first_line: int = 1):
    """Yield (line number, fields) for every line that is not blank or a comment."""
    for number, raw in enumerate(data.split(b"\n"), first_line):
        fields = raw.split()
        if not fields or fields[0][:1] == b"#":
            continue
        yield number, raw, fields


def line_text(raw: bytes) -> str:
    return decode(raw.rstrip(b"\r"))


def _parse_grade(token: bytes) -> int | None:
    """The integer a grade field spells, None if it spells none. A grade of more than 19 digits is
    beyond int64 whatever they are, and is returned as the first value beyond it (Python refuses
    to convert more than 4300 digits).

    >>> _parse_grade(b"-2"), _parse_grade(b"2.0"), _parse_grade(b"9" * 5000) == GRADE_MAX + 1
    (-2, None, True)
    """
    body = token[1:] if token[:1] in (b"+", b"-") else token
    if not body.isdigit():
        return None
    if len(body.lstrip(b"0")) > 19:
        return GRADE_MIN - 1 if token[:1] == b"-" else GRADE_MAX + 1
    return int(token)


def judgment_grade(name: str, number: int, raw: bytes, fields: list[bytes], expected: str, width: int = 4) -> int:
    """The grade (last field) of a judgment line of ``width`` fields (qrels, BEIR qrels, subtopic
    qrels), or ParseError naming the line."""
    if len(fields) != width:
        raise ParseError(name, number, line_text(raw), expected)
    grade = _parse_grade(fields[-1])
    if grade is None:
        raise ParseError(
            name, number, line_text(raw), f"an integer grade in field {width}, not {quote(decode(fields[-1]))}"
        )
    if not GRADE_MIN <= grade <= GRADE_MAX:
        raise ParseError(name, number, line_text(raw), f"an integer grade {GRADE_RANGE} in field {width}")
    return grade


def parse_score(token: bytes) -> float | None:
    if b"_" in token:
        return None
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _duplicate_error(path: str, text_of, kind: str, lines: np.ndarray, qids, docs, judgments: bool = False):
    """``text_of(line)``: the bytes of a line of the file, None when it cannot be read again (a pipe).
    ``judgments``: the lines are qrels, where two lines differing in their second field are
    subtopic qrels (:mod:`evaltool.io.subtopics`), and the message says how to read them."""

    def raise_error(first: int, repeated: int) -> None:
        line = int(lines[repeated])
        first_text, text = text_of(int(lines[first])), text_of(line)
        given = (first_text or b"").split(), (text or b"").split()
        subtopics = judgments and all(len(f) == 4 for f in given) and given[0][1] != given[1][1]
        raise ParseError(
            path,
            line,
            None if text is None else line_text(text),
            f"each ({kind}) pair once; query {quote(qids[first])} document {quote(docs[first])} "
            f"was already given at line {int(lines[first])} "
            "(use --on-duplicate first|max to accept duplicates"
            + (
                "; the second fields differ, as in subtopic qrels 'query_id subtopic doc_id grade': "
                "read those with --qrels-format subtopics)"
                if subtopics
                else ")"
            ),
        )

    return raise_error


_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True  # C's isspace, and bytes.split's whitespace
_NOT_ID_CONTROL = bytes([0, 9, 10, 11, 12, 13, *range(32, 256)])  # every byte but controls that are not whitespace


def _token_bounds(data: bytes, fields: int):
    """(text, starts, ends): the bytes of a file as a numpy array and the byte offsets where
    each token starts and ends, when every content line has exactly ``fields`` fields; else None.

    Whitespace and token boundaries are found with array operations over the bytes, without
    a Python object per token: the common case parses without a loop over lines. Files with
    comment lines (any ``#``), a NUL byte or uneven lines return None and go to the line reader, which
    names the line that is wrong.

    >>> text, starts, ends = _token_bounds(b"q1 0 d1 1\\r\\n\\n q1\\t0 d2  0", 4)
    >>> starts.tolist(), ends.tolist()
    ([0, 3, 5, 8, 13, 16, 18, 22], [2, 4, 7, 9, 15, 17, 20, 23])
    >>> _token_bounds(b"q1 0 d1 1\\nq1 0 d2\\n", 4) is None
    True
    """
    if b"#" in data or b"\x00" in data:
        return None
    text = np.frombuffer(data, dtype=np.uint8)
    # whitespace, with a blank before and after the text; arrays the size of the file are
    # allocated sparingly (each costs page faults in a process that reads one file)
    edges = np.empty(len(text) + 2, dtype=bool)
    edges[0] = edges[-1] = True
    np.less_equal(text, 32, out=edges[1:-1])
    if data.translate(None, _NOT_ID_CONTROL):  # control bytes other than whitespace belong to ids
        edges[1:-1] = _WHITESPACE[text]
    changes = np.flatnonzero(edges[1:] != edges[:-1])  # token start, token end, start, end, ...
    starts, ends = changes[0::2], changes[1::2]
    if not len(starts) or len(starts) % fields:
        return None
    if not _lines_of(text, starts, ends, fields):
        return None
    return text, starts, ends


def _lines_of(text: np.ndarray, starts: np.ndarray, ends: np.ndarray, fields: int) -> bool:
    """Whether every line holding a token holds ``fields`` of them. Tokens one byte apart
    (the common file: one space or tab between fields, one newline between lines) are
    looked at through that byte; others by counting tokens between newlines.

    >>> text, starts, ends = _token_bounds(b"a b\\nc d\\n", 2)
    >>> _lines_of(text, starts, ends, 2), _lines_of(text, starts, ends, 1)
    (True, False)
    """
    gaps = ends[:-1]
    if np.all(starts[1:] - gaps == 1):
        newline_after = text[gaps] == 10  # after each token but the last: a newline ends its line
        lines = len(starts) // fields
        return bool(np.all(newline_after[fields - 1 :: fields])) and int(np.count_nonzero(newline_after)) == lines - 1
    before_newline = np.searchsorted(starts, np.flatnonzero(text == 10))
    per_line = np.diff(before_newline, prepend=0, append=len(starts))
    return not bool(np.any(per_line[per_line != 0] != fields))


def _field(starts: np.ndarray, ends: np.ndarray, field: int, fields: int) -> tuple[np.ndarray, np.ndarray]:
    """(first byte, length) of field ``field`` (0-based) of every line."""
    begin = starts[field::fields]
    return begin, ends[field::fields] - begin


def _padded(text: np.ndarray, *lengths: np.ndarray) -> np.ndarray:
    """``text`` followed by NUL bytes, 8 more than the longest of the tokens: what
    :func:`_column` and :func:`_keys` read past a token (an 8-byte word at any of a token's
    first bytes), copied once per file."""
    return np.concatenate((text, np.zeros(8 + max(8, *(int(length.max()) for length in lengths)), dtype=np.uint8)))


def _column(text: np.ndarray, begin: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The tokens at ``begin`` (``length`` bytes each) as a numpy bytes (``S``) array; ``text`` is :func:`_padded`.

    >>> text, starts, ends = _token_bounds(b"q1 0 d1 1\\nq22 0 d2 0\\n", 4)
    >>> begin, length = _field(starts, ends, 0, 4)
    >>> _column(_padded(text, length), begin, length).tolist()
    [b'q1', b'q22']
    """
    width = int(length.max())
    matrix = np.lib.stride_tricks.sliding_window_view(text, width)[begin]
    matrix[np.arange(width) >= length[:, None]] = 0  # no NUL in the file: numpy strips the padding
    return matrix.view(f"S{width}").reshape(-1)


_ALL_ONES = np.uint64(2**64 - 1)


def _keys(text: np.ndarray, begin: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Tokens of at most 8 bytes as integers: the 8 bytes at ``begin`` read big-endian, those
    after the token zeroed, so keys are equal exactly when the tokens are and order as their
    bytes do. One 8-byte load per token (``text`` is :func:`_padded`), no byte matrix.

    >>> text = _padded(np.frombuffer(b"d10 d9 d1", dtype=np.uint8), np.array([3]))
    >>> _keys(text, np.array([0, 4, 7]), np.array([3, 2, 2])).argsort().tolist()
    [2, 0, 1]
    """
    words = np.ndarray((len(text) - 7,), dtype=">u8", buffer=text, strides=(1,))  # a word at every byte
    keys = words[begin].astype(np.uint64)
    keys &= _ALL_ONES << (np.uint64(64) - np.uint64(8) * length.astype(np.uint64))
    return keys


WORD_KEYS_MAX_BYTES = 32  # ids up to this long are sorted as 8-byte words (longer ones as bytes)


def _ids(text: np.ndarray, begin: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dictionary-encode an id field: (its sorted distinct ids as a bytes (``S``) array, codes).

    Repeats in a row (a file grouped by query) are encoded once. Ids are sorted as their
    bytes are; up to :data:`WORD_KEYS_MAX_BYTES` bytes, as the integers of their 8-byte
    words (:func:`_keys`: sorts of integers, several times faster than sorting strings),
    longer ones as bytes. Ids of several words are ranked word by word: the rank among the
    distinct first words, then the rank of (rank so far, next word) pairs, each one sort of
    integers; the distinct ids are then the words written back as bytes.

    >>> text, starts, ends = _token_bounds(b"q2 a\\nq2 b\\nq10 c\\nq2 d\\n", 2)
    >>> begin, length = _field(starts, ends, 0, 2)
    >>> vocab, codes = _ids(_padded(text, length), begin, length)
    >>> vocab.tolist(), codes.tolist()
    ([b'q10', b'q2'], [1, 1, 0, 1])
    >>> text, starts, ends = _token_bounds(b"LA010189-0002\\nFT911-3\\nLA010189-0001\\nFBIS3-10082\\nLA010189-0002", 1)
    >>> vocab, codes = _ids(_padded(text, ends - starts), starts, ends - starts)
    >>> vocab.tolist(), codes.tolist()
    ([b'FBIS3-10082', b'FT911-3', b'LA010189-0001', b'LA010189-0002'], [3, 1, 2, 0, 3])
    """
    width = int(length.max())
    if width > WORD_KEYS_MAX_BYTES:
        return _ids_as_bytes(_column(text, begin, length))
    words = [_keys(text, begin + at, np.clip(length - at, 0, 8)) for at in range(0, width, 8)]
    differs = words[0][1:] != words[0][:-1]
    for word in words[1:]:
        differs |= word[1:] != word[:-1]
    firsts = np.flatnonzero(np.concatenate(([True], differs)))
    heads = [word[firsts] for word in words]
    head_codes, order, new = _dense_ranks(heads[0])
    for word in heads[1:]:
        word_codes = _dense_ranks(word)[0]
        head_codes, order, new = _dense_ranks(head_codes * (int(word_codes.max()) + 1) + word_codes)
    distinct = order[new]  # the first row of each distinct id, in the order of the ids
    matrix = np.empty((len(distinct), len(heads)), dtype=">u8")  # the words as bytes again: big-endian
    for at, word in enumerate(heads):
        matrix[:, at] = word[distinct]
    vocab = matrix.view(f"S{8 * len(heads)}").reshape(-1).astype(f"S{width}")
    codes = np.repeat(head_codes, np.diff(np.append(firsts, len(begin))))
    return vocab, codes


def _dense_ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rank of each value among the distinct values, the order that sorts them, where in that
    order a new value starts): :func:`numpy.unique`'s inverse, with what it sorts kept.

    >>> codes, order, new = _dense_ranks(np.array([30, 10, 30, 20]))
    >>> codes.tolist(), order[new].tolist()
    ([2, 0, 2, 1], [1, 3, 0])
    """
    order = np.argsort(values)
    ordered = values[order]
    new = np.empty(len(ordered), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    codes = np.empty(len(ordered), dtype=np.int64)
    codes[order] = np.cumsum(new) - 1
    return codes, order, new


def _ids_as_bytes(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_ids` of a bytes column, sorted as bytes."""
    firsts = np.flatnonzero(np.concatenate(([True], column[1:] != column[:-1])))
    vocab, head_codes = np.unique(column[firsts], return_inverse=True)
    codes = np.repeat(head_codes.reshape(-1).astype(np.int64), np.diff(np.append(firsts, len(column))))
    return vocab, codes


def _decimals(column: np.ndarray) -> np.ndarray | None:
    """The doubles of a bytes column of plain decimals (``[+-]digits[.digits]``, 1 to 15
    digits), exactly as strtod and ``float`` read them; None when any token has another form.

    Exact by Clinger's fast path: the digits form an integer below 2**53 and the divisor is a
    power of ten up to 10**15, both exact doubles, and one IEEE division rounds once. Three
    times faster than numpy's string-to-float cast, which the other forms (``1e-3``, longer
    numbers) still take.

    >>> _decimals(np.array([b"15.319813", b"-0", b"+.5", b"7.", b"007"])).tolist()
    [15.319813, -0.0, 0.5, 7.0, 7.0]
    >>> _decimals(np.array([b"1", b"1e3"])) is None, _decimals(np.array([b"1", b"1.2.3"])) is None
    (True, True)
    """
    width = column.dtype.itemsize
    if width > 17:
        return None
    chars = column.view(np.uint8).reshape(-1, width)
    digits = chars - np.uint8(48)  # wraps around: every byte but a digit becomes 10 or more
    is_digit, is_dot = digits < 10, chars == ord(".")
    allowed = is_digit | is_dot | (chars == 0)
    allowed[:, 0] |= (chars[:, 0] == ord("-")) | (chars[:, 0] == ord("+"))
    if not allowed.all():
        return None
    # the digits read left to right as one integer (the point, a sign and the padding add
    # none), and the digits after the point counted, column by column over all tokens
    whole = np.zeros(len(chars), dtype=np.int64)
    count = np.zeros(len(chars), dtype=np.uint8)
    after_point = np.zeros(len(chars), dtype=np.uint8)
    dots = np.zeros(len(chars), dtype=np.uint8)
    for place in range(width):
        digit = is_digit[:, place]
        whole *= np.where(digit, 10, 1)
        whole += digits[:, place] * digit
        count += digit
        after_point += digit & (dots > 0)
        dots += is_dot[:, place]
    if count.min() < 1 or count.max() > 15 or dots.max() > 1:
        return None
    value = whole / POW10[after_point].astype(np.float64)
    return np.where(chars[:, 0] == ord("-"), -value, value)


def _integers(column: np.ndarray) -> np.ndarray | None:
    """The int64 values of a bytes column of plain integers (``[+-]digits``, 1 to 18 digits),
    as ``int`` reads them; None when any token has another form. Ten times faster than
    numpy's string-to-integer cast, which the other forms still take.

    >>> _integers(np.array([b"2", b"-1", b"+0", b"007", b"123456789012345678"])).tolist()
    [2, -1, 0, 7, 123456789012345678]
    >>> [_integers(np.array(column)) for column in ([b"1", b"2.0"], [b"-"], [b"1", b"1" * 19])]
    [None, None, None]
    """
    width = column.dtype.itemsize
    if width > 18:
        return None
    chars = column.view(np.uint8).reshape(-1, width)
    digits = chars - np.uint8(48)  # wraps around: every byte but a digit becomes 10 or more
    if width == 1:  # one digit a token, as grades mostly are
        return digits.reshape(-1).astype(np.int64) if digits.max(initial=0) < 10 else None
    is_digit = digits < 10
    allowed = is_digit | (chars == 0)
    signed = (chars[:, 0] == ord("-")) | (chars[:, 0] == ord("+"))
    allowed[:, 0] |= signed
    count = is_digit.view(np.uint8) @ np.ones(width, dtype=np.uint8)
    if not allowed.all() or count.min() < 1:
        return None
    masked = digits * is_digit
    spread = np.zeros(len(chars), dtype=np.int64)
    for place in range(width):
        spread += masked[:, place] * POW10[width - 1 - place]
    value = spread // POW10[width - count - signed]  # the padding's zeros taken off
    return np.where(chars[:, 0] == ord("-"), -value, value)


def _numbers(column: np.ndarray, dtype) -> np.ndarray | None:
    """Numeric column from a bytes column; None if any is malformed (the line reader says which)."""
    if dtype is np.float64:
        values = _decimals(column)
        if values is not None:
            return values
    else:
        values = _integers(column)
        if values is not None:
            return values
    if np.any(column.view(np.uint8) == ord("_")):
        return None
    try:
        values = column.astype(dtype)
    except (ValueError, OverflowError):
        return None
    if dtype is np.float64 and not np.all(np.isfinite(values)):
        return None
    return values


def _as_keys(ids: np.ndarray) -> np.ndarray:
    """Ids of at most 8 bytes (a bytes ``S`` array) as the integers :func:`_keys` makes of them.

    >>> _as_keys(np.array([b"d10", b"d9"])).tolist() == _keys(_padded(np.frombuffer(b"d10 d9", np.uint8),
    ...                                                              np.array([3])), np.array([0, 4]), np.array([3, 2])).tolist()
    True
    """
    width = ids.dtype.itemsize
    padded = np.zeros((len(ids), 8), dtype=np.uint8)
    padded[:, :width] = ids.view(np.uint8).reshape(-1, width)
    return padded.view(">u8").reshape(-1).astype(np.uint64)


# the ids as a numpy bytes array, and as integer keys, kept for the last list (one qrels' ids, met run after run)
_encoded = LastIds(
    lambda docids: np.array([d.encode("utf-8", "surrogateescape") for d in docids] or [b""])[: len(docids)]
)
_encoded_keys = LastIds(lambda docids: _as_keys(_encoded(docids)))


class BytesDocRun(Run):
    """A run whose document ids stay a sorted array of bytes (numpy ``S`` dtype)."""

    codes_in_byte_order = True

    def doc_text(self, rows):
        return [decode(b) for b in self.doc_vocab[self.doc_codes[rows]].tolist()]

    def keys_for(self, docids):
        vocab, wanted = self.doc_vocab, _encoded(docids)
        if vocab.dtype.itemsize <= 8 and wanted.dtype.itemsize <= 8:  # integers are searched faster than bytes
            vocab, wanted = _as_keys(vocab), _encoded_keys(docids)
        at = np.minimum(np.searchsorted(vocab, wanted), len(vocab) - 1)
        return np.where(vocab[at] == wanted, at, -1).astype(np.int64)


def _fast_columns(
    data: bytes, fields: int, value_field: int, dtype, jobs: int | None = None, first_line: int | None = None
):
    """(last token, values, query vocab, query codes, doc vocab, doc codes, line numbers) of a
    regular file without duplicates, or None (the line reader then names what is wrong). The
    line of every row is counted from ``first_line`` when given (else None)."""
    bounds = _token_bounds(data, fields)
    if bounds is None:
        return None
    text, starts, ends = bounds
    lines = None
    if first_line is not None:
        lines = np.searchsorted(np.flatnonzero(text == 10), starts[0::fields]).astype(np.int64) + first_line
    qids, docs, value = (_field(starts, ends, field, fields) for field in (0, 2, value_field))
    text = _padded(text, qids[1], docs[1], value[1])
    values = _numbers(_column(text, *value), dtype)
    if values is None:
        return None
    qid_vocab, qid_codes = _ids(text, *qids)
    doc_vocab, doc_codes = _ids(text, *docs)
    if columnar.has_duplicates(qid_codes, doc_codes, jobs):
        return None
    last = data[int(starts[-1]) : int(ends[-1])]
    return last, values, _decoded(qid_vocab), qid_codes, doc_vocab, doc_codes, lines


def _decoded(vocab: np.ndarray) -> list[str]:
    """Every id of a bytes array as text, decoded in one call: the ids' bytes without their
    padding, a newline after each (ids hold no newline, and no NUL: the array pads with
    NULs, and a file holding one is read by the line reader, whose ids are text).

    >>> _decoded(np.array([b"d1", b"caf\\xc3\\xa9", b"\\xff"]))
    ['d1', 'café', '\\udcff']
    """
    if not len(vocab):
        return []
    width = vocab.dtype.itemsize
    lines = np.empty((len(vocab), width + 1), dtype=np.uint8)
    lines[:, :width] = vocab.view(np.uint8).reshape(-1, width)
    lines[:, width] = ord("\n")
    lines = lines.reshape(-1)
    return lines[lines != 0][:-1].tobytes().decode("utf-8", "surrogateescape").split("\n")


def _fast_qrels(name: str, data: bytes, jobs: int | None = None, first_line: int | None = None) -> Qrels | None:
    parsed = _fast_columns(data, 4, 3, np.int64, jobs, first_line)
    if parsed is None:
        return None
    _, grades, qid_vocab, qid_codes, doc_vocab, doc_codes, lines = parsed
    docids = _decoded(doc_vocab)
    if first_line is None:
        _encoded.remember(docids, doc_vocab)  # ranking looks these ids up in the run as bytes: no encoding again
    return Qrels(qid_vocab, qid_codes, docids, doc_codes, grades, lines, path=name)


def _fast_run(name: str, data: bytes, jobs: int | None = None, first_line: int | None = None) -> Run | None:
    parsed = _fast_columns(data, 6, 4, np.float64, jobs, first_line)
    if parsed is None:
        return None
    runid, scores, qid_vocab, qid_codes, doc_vocab, doc_codes, lines = parsed
    return BytesDocRun(qid_vocab, qid_codes, doc_vocab, doc_codes, scores, lines, runid=decode(runid), path=name)


def read_qrels(path: str | os.PathLike, *, on_duplicate: str = "error", jobs: int | None = None) -> Qrels:
    """Read a TREC qrels file line by line into a :class:`~evaltool.inputs.Qrels` (a big one in ``jobs``
    threads; None: all cores). :func:`evaltool.io.load.read_qrels` sends large regular files to pyarrow first."""
    with TextSource(path) as source:
        return read_source(source, "qrels", on_duplicate, jobs)


# A plain file up to this size is read and parsed in one piece: parsed block by block, its
# parts would be joined through Python dicts (a third of a second on 100,000 lines of text
# ids), where one parse of the whole text costs tens of milliseconds. Reading it takes
# milliseconds, so an error near its start is no slower to report.
WHOLE_FILE_BYTES = 64 << 20


def read_source(source: TextSource, kind: str, on_duplicate: str = "error", jobs: int | None = None):
    """The qrels or run (``kind``) of an opened file, parsed block by block as it is read and
    decompressed: the first bad line stops the reading, and no more than a block of text is
    held at a time (with the columns read so far). A file of one block is parsed whole, as
    :func:`parse_qrels` and :func:`parse_run` parse bytes."""
    check_policy(on_duplicate)
    whole = parse_qrels if kind == "qrels" else parse_run
    if source.kind is None and source.size is not None and source.size <= WHOLE_FILE_BYTES:
        return whole(source.name, source.read_all(), on_duplicate=on_duplicate, jobs=jobs)
    blocks = source.blocks()
    first = next(blocks, None)
    second = next(blocks, None) if first is not None else None
    if second is None:
        return whole(source.name, b"" if first is None else first[1], on_duplicate=on_duplicate, jobs=jobs)
    beir = _is_beir(first[1]) if kind == "qrels" else 0
    parts = []
    for first_line, block in chain((first, second), blocks):
        if kind == "qrels":
            part = _parse_qrels(source.name, block, on_duplicate, jobs, first_line, beir)
        else:
            part = _parse_run(source.name, block, on_duplicate, jobs, first_line)
        if part is not None:
            parts.append(part)
    if not parts:  # comments and blank lines only: the message of an empty file
        return whole(source.name, b"", on_duplicate=on_duplicate, jobs=jobs)
    table = _joined(parts)

    def text_of(line: int) -> bytes | None:
        return _line_of(source.name, line) if source.regular else None

    values = table.grades if kind == "qrels" else table.scores
    return _apply_duplicates(table, values, on_duplicate, text_of, "query, document")


def _joined(parts: list):
    """One Qrels or Run of the parts of a file read block by block (ids re-encoded in first-seen order)."""
    qids: dict = {}
    docs: dict = {}
    qid_codes, doc_codes, values, lines = [], [], [], []
    for part in parts:
        qid_map = np.fromiter((qids.setdefault(q, len(qids)) for q in part.qid_vocab), np.int64, len(part.qid_vocab))
        vocab = part.doc_vocab if isinstance(part.doc_vocab, list) else _decoded(part.doc_vocab)
        doc_map = np.fromiter((docs.setdefault(d, len(docs)) for d in vocab), np.int64, len(vocab))
        qid_codes.append(qid_map[part.qid_codes])
        doc_codes.append(doc_map[part.doc_codes])
        values.append(part.grades if isinstance(part, Qrels) else part.scores)
        lines.append(part.lines)
    columns = (
        list(qids),
        np.concatenate(qid_codes),
        list(docs),
        np.concatenate(doc_codes),
        np.concatenate(values),
        np.concatenate(lines),
    )
    dropped = sum(part.duplicates_resolved for part in parts)
    if isinstance(parts[0], Qrels):
        return Qrels(*columns, path=parts[0].path, duplicates_resolved=dropped)
    return Run(*columns, runid=parts[-1].runid, path=parts[-1].path, duplicates_resolved=dropped)


def _line_of(name: str, line: int) -> bytes | None:
    """The bytes of line ``line`` of a file, read again (for a message)."""
    with TextSource(name) as source:
        for first_line, block in source.blocks():
            count = block.count(b"\n")
            if line < first_line + count or not block.endswith(b"\n"):
                return block.split(b"\n")[line - first_line]
    return None


def parse_qrels(name: str, data: bytes, *, on_duplicate: str = "error", jobs: int | None = None) -> Qrels:
    """The judgments of a TREC (or BEIR) qrels file whose content is ``data``; ``name`` is for messages."""
    check_policy(on_duplicate)
    return _parse_qrels(name, data, on_duplicate, jobs)


def _parse_qrels(
    name: str, data: bytes, on_duplicate: str, jobs: int | None, first_line: int | None = None, beir: int | None = None
) -> Qrels | None:
    """``first_line``: ``data`` is a block of a file starting at that line (None: the whole file);
    a block without judgment lines is None. ``beir``: the line of the file's BEIR header (0: none)."""
    beir = _is_beir(data) if beir is None else beir
    fast = None if beir else _fast_qrels(name, data, jobs, first_line)
    if fast is not None:
        return fast
    # BEIR: 'query-id corpus-id score' under that header line; TREC: 'query_id iteration doc_id grade'
    width, doc_field, expected = (3, 1, BEIR_EXPECTED) if beir else (4, 2, QRELS_EXPECTED)
    qids, docs = Encoder(), Encoder()
    qid_codes, doc_codes, grades, lines = [], [], [], []
    for number, raw, fields in content_lines(data, first_line or 1):
        if beir and number == beir:
            continue
        grade = judgment_grade(name, number, raw, fields, expected, width)
        qid_codes.append(qids(fields[0]))
        doc_codes.append(docs(fields[doc_field]))
        grades.append(grade)
        lines.append(number)
    if not lines:
        if first_line is not None:
            return None
        raise ParseError(name, None, None, f"at least one judgment line ({expected}); the file has none")
    qrels = Qrels(
        qids.vocab,
        np.asarray(qid_codes, dtype=np.int64),
        docs.vocab,
        np.asarray(doc_codes, dtype=np.int64),
        np.asarray(grades, dtype=np.int64),
        np.asarray(lines, dtype=np.int64),
        path=name,
    )
    return _apply_duplicates(qrels, qrels.grades, on_duplicate, _block_lines(data, first_line), "query, document")


def _block_lines(data: bytes, first_line: int | None):
    """``text_of(line)`` for the lines of ``data`` (a file, or its block from ``first_line``), split on first use."""
    split: list = []

    def text_of(line: int) -> bytes:
        if not split:
            split.extend(data.split(b"\n"))
        return split[line - (first_line or 1)]

    return text_of


def read_run(path: str | os.PathLike, *, on_duplicate: str = "error", jobs: int | None = None) -> Run:
    """Read a TREC run file line by line into a :class:`~evaltool.inputs.Run`; ``-`` reads stdin; ``jobs``
    as in read_qrels (:func:`evaltool.io.load.read_run` sends large regular files to pyarrow first)."""
    with TextSource(path, allow_stdin=True) as source:
        return read_source(source, "run", on_duplicate, jobs)


def parse_run(name: str, data: bytes, *, on_duplicate: str = "error", jobs: int | None = None) -> Run:
    """A TREC run from the bytes of a file (``name`` is what messages call it)."""
    check_policy(on_duplicate)
    return _parse_run(name, data, on_duplicate, jobs)


def _parse_run(
    name: str, data: bytes, on_duplicate: str, jobs: int | None, first_line: int | None = None
) -> Run | None:
    """``first_line`` as in :func:`_parse_qrels`."""
    fast = _fast_run(name, data, jobs, first_line)
    if fast is not None:
        return fast
    qids, docs = Encoder(), Encoder()
    qid_codes, doc_codes, scores, lines = [], [], [], []
    runid = b""
    for number, raw, fields in content_lines(data, first_line or 1):
        if len(fields) < 6:
            raise ParseError(name, number, line_text(raw), RUN_EXPECTED)
        score = parse_score(fields[4])
        if score is None:
            raise ParseError(
                name, number, line_text(raw), f"a finite number as the score in field 5, not {quote(decode(fields[4]))}"
            )
        qid_codes.append(qids(fields[0]))
        doc_codes.append(docs(fields[2]))
        scores.append(score)
        lines.append(number)
        runid = fields[5]
    if not lines:
        if first_line is not None:
            return None
        raise ParseError(name, None, None, f"at least one result line ({RUN_EXPECTED}); the file has none")
    run = Run(
        qids.vocab,
        np.asarray(qid_codes, dtype=np.int64),
        docs.vocab,
        np.asarray(doc_codes, dtype=np.int64),
        np.asarray(scores, dtype=np.float64),
        np.asarray(lines, dtype=np.int64),
        runid=decode(runid),
        path=name,
    )
    return _apply_duplicates(run, run.scores, on_duplicate, _block_lines(data, first_line), "query, document")


def _apply_duplicates(table, values, policy, text_of, kind):
    keep, dropped = resolve_duplicates(
        policy,
        table.qid_codes,
        table.doc_codes,
        values,
        len(table.doc_vocab),
        _duplicate_error(
            table.path,
            text_of,
            kind,
            table.lines,
            _Lazy(table.qid_vocab, table.qid_codes),
            _Lazy(table.doc_vocab, table.doc_codes),
            judgments=isinstance(table, Qrels),
        ),
    )
    if dropped:
        table.qid_codes = table.qid_codes[keep]
        table.doc_codes = table.doc_codes[keep]
        table.lines = table.lines[keep]
        if isinstance(table, Qrels):
            table.grades = table.grades[keep]
        else:
            table.scores = table.scores[keep]
        table.duplicates_resolved += dropped
    return table


class _Lazy:
    """Row index -> decoded id, without building a list for every row."""

    def __init__(self, vocab, codes):
        self.vocab, self.codes = vocab, codes

    def __getitem__(self, row):
        return self.vocab[int(self.codes[row])]
