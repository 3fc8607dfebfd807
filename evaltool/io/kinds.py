"""What an input is: the one module that decides, so that every reader is told what it reads.

A judgments or results file is TREC, JSON or JSONL by its first bytes (:func:`sniff`); a
Python object is a dict (subtopic qrels when its values nest once more), a DataFrame or a
pyarrow table, or an input already read; a TREC file goes to the columnar reader when it is regular,
large enough and plain or gzip (:func:`columnar`); a click log is impression objects or an
events table by its magic bytes, name or first line (:func:`click_layout`).
:mod:`evaltool.io.load` asks these questions and hands the input to the reader that takes
it; the readers (:mod:`~evaltool.io.trec`, :mod:`~evaltool.io.columnar`,
:mod:`~evaltool.io.jsonl`, :mod:`~evaltool.io.frames`, :mod:`~evaltool.io.subtopics`,
:mod:`evaltool.io.clicks`) never guess. Nothing here imports the JSON readers, pyarrow or
pandas: telling a TREC file needs only its first bytes.

>>> sniff(b"q1 0 d1 1\\n", "judgments"), input_kind({"q1": {"d1": 1}}), per_subtopic({"q1": {"s1": {"d1": 1}}})
('trec', 'dict', True)
"""

from __future__ import annotations

import os
import sys

from evaltool.io.common import QID_KEYS, compression, head, piped, read_head

# a file this large repays importing pyarrow (~70 ms) for itself: below it the text reader
# (evaltool.io.trec) parses it in less than pyarrow's import and parse together
COLUMNAR_MIN_BYTES = 8 << 20
MANY_COLUMNAR_BYTES = 8 << 20  # run files together this large repay importing pyarrow (~70 ms) whatever their sizes


# ---------------------------------------------------------------- judgments and results files


def _first_char(head: bytes) -> str:
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    return text[:1].decode("latin-1")


def head_of(path, size: int = 1 << 16) -> bytes:
    """The first bytes of a file (decompressed), for :func:`sniff`.

    A compressed stream that cannot be read gives no bytes: the reader of the format then
    reports what is wrong with it.
    """
    return head(os.fspath(path), size)


def sniff(head: bytes, kind: str) -> str:
    """``trec``, ``json`` or ``jsonl``: what ``head`` (the start of a file, or all of it) looks like.

    ``kind`` is ``judgments`` (the first input) or ``results`` (the second). A first
    non-blank character ``[`` is a JSON document; ``{`` is JSONL when the first line is a
    complete JSON object by itself (and not a ``{"queries": [...]}`` wrapper), else a JSON
    document; anything else is TREC. A results file starting with ``{`` is JSONL.

    >>> sniff(b"q1 0 d1 1\\n", "judgments"), sniff(b'[{"qid": "q1"}]', "judgments")
    ('trec', 'json')
    >>> sniff(b'{"qid": "q1"}\\n{"qid": "q2"}\\n', "judgments"), sniff(b'{"qid": "q1", "docid": "d"}', "results")
    ('jsonl', 'jsonl')
    """
    first = _first_char(head)
    if first == "[":
        return "json"
    if first != "{":
        return "trec"
    if kind == "results":
        return "jsonl"
    import json

    line = head.lstrip(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0]
    try:
        obj = json.loads(line)
    except RecursionError:  # a line nested too deep: the JSONL reader names it
        return "jsonl"
    except (json.JSONDecodeError, UnicodeDecodeError):
        return "json"
    return "json" if isinstance(obj, dict) and "queries" in obj and not any(k in obj for k in QID_KEYS) else "jsonl"


def streamed_format(run) -> str:
    """The format of a run file to stream (stdin and pipes cannot be looked at twice: taken as TREC)."""
    if isinstance(run, (str, os.PathLike)) and not piped(run):
        return sniff(head_of(run), "results")
    return "trec"


# ---------------------------------------------------------------- Python objects


def is_frame(obj) -> bool:
    """A pandas or polars DataFrame, or a pyarrow Table or RecordBatch: a table of columns
    :mod:`evaltool.io.frames` reads, told without importing pandas or pyarrow.

    >>> is_frame({"q1": {"d1": 1}}), is_frame([("q1", "d1", 1)])
    (False, False)
    """
    kind = type(obj)
    if kind.__name__ == "DataFrame":
        return hasattr(obj, "columns")
    return kind.__name__ in ("Table", "RecordBatch") and kind.__module__.startswith("pyarrow")


def input_kind(obj, fmt: str | None = None) -> str:
    """What an input is, for meta: a file format, or the kind of Python object (``dict``,
    ``DataFrame``, ``pyarrow.Table``, ``pyarrow.RecordBatch``...)."""
    if fmt:
        return fmt
    if isinstance(obj, dict):
        return "dict"
    if is_frame(obj):
        return "DataFrame" if type(obj).__name__ == "DataFrame" else f"pyarrow.{type(obj).__name__}"
    return type(obj).__name__


def per_subtopic(qrels) -> bool:
    """A dict ``{qid: {subtopic: {docid: grade}}}`` (subtopic qrels), rather than ``{qid: {docid: grade}}``."""
    first = next(iter(qrels.values()), None)
    return isinstance(first, dict) and isinstance(next(iter(first.values()), None), dict)


def is_jsonl(obj, name: str) -> bool:
    """``isinstance(obj, evaltool.io.jsonl.<name>)`` without importing the JSON readers for the
    TREC files and dicts that never need them: no instance exists before they are imported."""
    module = sys.modules.get("evaltool.io.jsonl")
    return module is not None and isinstance(obj, getattr(module, name))


# ---------------------------------------------------------------- which TREC reader


def pyarrow_available() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def repays_columnar(size: int, min_bytes: int | None = None) -> bool:
    """Whether ``size`` bytes of a regular TREC text repay importing pyarrow (``min_bytes``,
    default :data:`COLUMNAR_MIN_BYTES`; many runs read together repay it at any size) and pyarrow is there."""
    return size >= (COLUMNAR_MIN_BYTES if min_bytes is None else min_bytes) and pyarrow_available()


def columnar(path, min_bytes: int | None = None) -> bool:
    """Whether the columnar reader takes this TREC file: :func:`repays_columnar` by its size, and
    the file is plain or gzip (other compressions go to the line reader, which decompresses
    them whole) and not a pipe (read once, by the line reader)."""
    name = os.fspath(path)
    try:
        return (
            name != "-"
            and os.path.isfile(name)
            and repays_columnar(os.path.getsize(name), min_bytes)
            and compression(read_head(name, 16)) in (None, "gzip")
        )
    except OSError:
        return False


def columnar_for_many(runs) -> int | None:
    """``min_bytes`` for reading these runs ahead: 0 (every TREC file to the columnar reader)
    when their files together reach :data:`MANY_COLUMNAR_BYTES`, else None (the size rule of
    a single run).

    >>> columnar_for_many([{"q1": {"d1": 1.0}}]) is None
    True
    """
    total = 0
    for run in runs:
        if isinstance(run, (str, os.PathLike)) and os.fspath(run) != "-":
            try:
                total += os.path.getsize(run)
            except OSError:
                pass  # its reader says what is wrong with it
    return 0 if total >= MANY_COLUMNAR_BYTES else None


# ---------------------------------------------------------------- click logs


def layout_of_first_line(text: str) -> str:
    """The layout a click log's first non-blank line announces (Parquet is told by its magic bytes).

    >>> layout_of_first_line('[{"query": "q"}'), layout_of_first_line('{"action": "click"}'), layout_of_first_line("action,doc_id")
    ('json', 'events-jsonl', 'events-csv')
    """
    head = text.lstrip()
    if head.startswith("["):
        return "json"
    if head.startswith("{"):
        import json

        from evaltool.io import jsontext

        try:
            obj = jsontext.loads(text)
        except json.JSONDecodeError:
            return "jsonl"  # the reader names the line
        return "events-jsonl" if isinstance(obj, dict) and "action" in obj else "jsonl"
    return "events-csv"


def click_layout(path: str) -> str:
    """``json``, ``jsonl`` (impression objects), ``events-jsonl``, ``events-csv`` or ``events-parquet``."""
    from evaltool.errors import ParseError
    from evaltool.io.clicks.text import PARQUET_MAGIC, lines, opener

    magic, open_log = opener(path)
    if magic == PARQUET_MAGIC or path.endswith((".parquet", ".pq")):
        return "events-parquet"
    for _, text in lines(path, open_log):
        return layout_of_first_line(text)
    raise ParseError(
        path,
        None,
        None,
        "a click log: impression objects (JSON or JSONL) or an events table (CSV, JSONL, Parquet); the file is empty",
    )
