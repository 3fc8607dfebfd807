"""What kind of input is this? Paths, dicts, DataFrames and already-read containers, each
to the reader that takes it: TREC qrels and runs, queries files and JSONL results.
"""

from __future__ import annotations

import os
import sys

from evaltool.errors import EvaltoolError, InputError, ParseError
from evaltool.inputs import Qrels, Run
from evaltool.io.common import TextSource, piped
from evaltool.io.sniff import head_of, sniff


def is_frame(obj) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "columns")


def _is_jsonl(obj, name: str) -> bool:
    """``isinstance(obj, evaltool.io.jsonl.<name>)`` without importing the JSON readers for the
    TREC files and dicts that never need them: no instance exists before they are imported."""
    module = sys.modules.get("evaltool.io.jsonl")
    return module is not None and isinstance(obj, getattr(module, name))


SWAPPED = ("; that is a line of a run (query_id Q0 doc_id rank score run_tag): the arguments look swapped, "
           "give the qrels first, then the run")


def _run_line(text: str | None) -> bool:
    """Whether a line reads as a TREC run's: 6 fields or more, an integer rank and a number score."""
    fields = (text or "").split()
    if len(fields) < 6:
        return False
    try:
        int(fields[3]), float(fields[4])
    except ValueError:
        return False
    return True


def _swapped(read):
    """Call ``read()`` (a TREC qrels reader); a line it refuses that is a run's line says the arguments look swapped.

    >>> import tempfile
    >>> run = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
    >>> _ = run.write("q1 Q0 d1 1 2.5 bm25\\n"); run.close()
    >>> load_qrels(run.name)
    Traceback (most recent call last):
    ...
    evaltool.errors.ParseError: ...:1: found 'q1 Q0 d1 1 2.5 bm25'; expected 4 fields 'query_id iteration doc_id grade'; that is a line of a run (query_id Q0 doc_id rank score run_tag): the arguments look swapped, give the qrels first, then the run
    """
    from evaltool.io.trec import QRELS_EXPECTED

    try:
        return read()
    except ParseError as exc:
        if exc.expected != QRELS_EXPECTED or not _run_line(exc.text):
            raise
        raise ParseError(exc.path, exc.line, exc.text, exc.expected + SWAPPED) from None


def load_qrels(qrels, on_duplicate: str = "error", jobs: int | None = None) -> Qrels:
    """Accept a path, a ``{qid: {docid: grade}}`` dict, a DataFrame or a Qrels (``jobs``: threads for a big file)."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        from evaltool.io import trec

        return _swapped(lambda: trec.read_qrels(qrels, on_duplicate=on_duplicate, jobs=jobs))
    from evaltool.io import frames

    if isinstance(qrels, dict):
        return frames.qrels_from_dict(qrels, on_duplicate=on_duplicate)
    if is_frame(qrels):
        return frames.qrels_from_frame(qrels, on_duplicate=on_duplicate)
    raise EvaltoolError(f"qrels must be a path, dict or DataFrame, not {type(qrels).__name__}")


def load_run(run, on_duplicate: str = "error", runid: str | None = None, jobs: int | None = None) -> Run:
    """Accept a path (``-`` for stdin), a ``{qid: {docid: score}}`` dict, a DataFrame or a Run."""
    if isinstance(run, Run):
        return run
    if isinstance(run, (str, os.PathLike)):
        from evaltool.io import trec

        return trec.read_run(run, on_duplicate=on_duplicate, jobs=jobs)
    from evaltool.io import frames

    if isinstance(run, dict):
        return frames.run_from_dict(run, on_duplicate=on_duplicate, runid=runid or "run")
    if is_frame(run):
        return frames.run_from_frame(run, on_duplicate=on_duplicate, runid=runid or "run")
    raise EvaltoolError(f"run must be a path, dict or DataFrame, not {type(run).__name__}")


def input_kind(obj, fmt: str | None = None) -> str:
    """What an input is, for meta: a file format, or the kind of Python object."""
    if fmt:
        return fmt
    return "dict" if isinstance(obj, dict) else "DataFrame" if is_frame(obj) else type(obj).__name__


class Loaded:
    """An input already read and the kind it came from: judgments read once by
    :class:`evaltool.Evaluator`, or a run read ahead by :func:`read_run_ahead`."""

    __slots__ = ("value", "kind")

    def __init__(self, value, kind: str):
        self.value, self.kind = value, kind


def _per_subtopic(qrels) -> bool:
    """A dict ``{qid: {subtopic: {docid: grade}}}`` (subtopic qrels), rather than ``{qid: {docid: grade}}``."""
    first = next(iter(qrels.values()), None)
    return isinstance(first, dict) and isinstance(next(iter(first.values()), None), dict)


def load_judgments(qrels, on_duplicate: str = "error", fmt: str | None = None, subtopics: bool = False,
                   jobs: int | None = None):
    """The first input: Qrels (a TREC qrels file, dict, DataFrame) or Queries (a JSON/JSONL queries file).

    ``fmt`` forces ``trec``, ``json``, ``jsonl`` or ``subtopics``; by default a file's content
    decides. ``subtopics`` (a diversity measure is asked for) reads a file as subtopic qrels
    (:mod:`evaltool.io.subtopics`), as ``fmt='subtopics'`` does, and refuses judgments without
    subtopics. A dict ``{qid: {subtopic: {docid: grade}}}`` is subtopic qrels either way.
    Returns (judgments, format).
    """
    if isinstance(qrels, Loaded):
        return qrels.value, qrels.kind
    if isinstance(qrels, dict) and _per_subtopic(qrels):
        from evaltool.io.subtopics import subtopic_qrels_from_dict

        return subtopic_qrels_from_dict(qrels, diversity=subtopics), "subtopics"
    if isinstance(qrels, Qrels) and qrels.subtopics is not None:
        return qrels, "subtopics"
    if fmt == "subtopics" or subtopics:
        if isinstance(qrels, (str, os.PathLike)) and os.fspath(qrels) != "-" and fmt not in ("json", "jsonl"):
            from evaltool.io.subtopics import read_subtopic_qrels

            return read_subtopic_qrels(qrels, on_duplicate=on_duplicate, diversity=subtopics), "subtopics"
        given = f"{os.fspath(qrels)} read as {fmt}" if isinstance(qrels, (str, os.PathLike)) else input_kind(qrels)
        raise InputError("diversity measures and --qrels-format subtopics read judgments per subtopic: a qrels file "
                         "'query_id subtopic doc_id grade' (ndeval's) or a dict {qid: {subtopic: {docid: grade}}}, "
                         f"not {given}")
    if _is_jsonl(qrels, "Queries"):
        return qrels, qrels.format
    if not isinstance(qrels, (str, os.PathLike)):
        return load_qrels(qrels, on_duplicate), input_kind(qrels)
    if os.fspath(qrels) == "-":  # refused by the qrels reader, with its message
        return load_qrels(qrels, on_duplicate), "trec"
    if piped(qrels):  # <(zcat qrels.gz): read once, its first block looked at
        with TextSource(qrels) as source:
            fmt = fmt or sniff(source.head, "judgments")
            if fmt == "trec":
                from evaltool.io import trec

                return _swapped(lambda: trec.read_source(source, "qrels", on_duplicate, jobs)), fmt
            from evaltool.io import jsonl

            queries = jsonl.parse_queries(source.name, source.read_all(), fmt)
        return queries, queries.format
    if (fmt or sniff(head_of(qrels), "judgments")) == "trec":
        return load_qrels(qrels, on_duplicate, jobs), "trec"
    from evaltool.io import jsonl

    queries = jsonl.read_queries(qrels, fmt)  # JSON or JSONL: decided on the whole content unless forced
    return queries, queries.format


def load_results(run, on_duplicate: str = "error", runid: str | None = None, fmt: str | None = None,
                 jobs: int | None = None):
    """The second input: a Run (a TREC run file, dict, DataFrame) or Results (a JSONL results file).

    ``fmt`` forces ``trec`` or ``jsonl``; by default a file's content decides (stdin, ``-``,
    is read whole first, as a pipe is). Returns (results, format).
    """
    if isinstance(run, Loaded):
        return run.value, run.kind
    if _is_jsonl(run, "Results"):
        return run, "jsonl"
    if not isinstance(run, (str, os.PathLike)):
        return load_run(run, on_duplicate, runid), input_kind(run)
    if fmt is None and piped(run):  # read once: its first block looked at, then the rest
        with TextSource(run, allow_stdin=True) as source:
            return _results_of(source.name, sniff(source.head, "results"), source, on_duplicate, jobs)
    return _results_of(os.fspath(run), fmt or sniff(head_of(run), "results"), run, on_duplicate, jobs, runid)


def _results_of(name: str, fmt: str, run, on_duplicate: str, jobs: int | None, runid: str | None = None):
    """(results, format) of ``run``: a path, or a :class:`TextSource` opened on a pipe or stdin."""
    if fmt == "json":
        raise ParseError(name, 1, None, "a JSONL results file (one JSON object per line) or a TREC run, "
                                        "not a JSON array")
    if fmt == "jsonl":
        from evaltool.io import jsonl

        if isinstance(run, TextSource):
            return jsonl.parse_results(name, run.read_all(), on_duplicate), fmt
        return jsonl.read_results(run, on_duplicate), fmt
    if isinstance(run, TextSource):
        from evaltool.io import trec

        return trec.read_source(run, "run", on_duplicate, jobs), fmt
    return load_run(run, on_duplicate, runid, jobs), fmt


def read_run_ahead(run, on_duplicate: str = "error", fmt: str | None = None, jobs: int | None = None,
                   min_bytes: int | None = None) -> Loaded:
    """One of several runs, read as :func:`load_results` reads it (by :meth:`evaltool.Evaluator.evaluate_many`).

    A TREC run file (plain or gzip) of at least ``min_bytes`` (0: any size) goes to the
    columnar reader: small files do not repay importing pyarrow one at a time, but many of
    them do (:func:`columnar_for_many`), and pyarrow parses without holding the GIL.
    Whatever that reader hands back (an irregular line, a duplicate, a bad score) is read
    again by :func:`load_results`, whose messages name the file and the line.
    """
    from evaltool.io import columnar

    if isinstance(run, (str, os.PathLike)) and fmt in (None, "trec") and columnar.wanted(run, min_bytes):
        fmt = fmt or sniff(head_of(run), "results")
        # a small file is one block of pyarrow's: parsed in this thread, the other runs in theirs
        table = columnar.read_run(run, jobs, in_caller=not columnar.wanted(run)) if fmt == "trec" else None
        if table is not None:
            return Loaded(table, fmt)
    return Loaded(*load_results(run, on_duplicate, None, fmt, jobs))


MANY_COLUMNAR_BYTES = 8 << 20  # run files together this large repay importing pyarrow (~70 ms) whatever their sizes


def columnar_for_many(runs) -> int | None:
    """``min_bytes`` for :func:`read_run_ahead` of these runs: 0 (every TREC file to the columnar
    reader) when their files together reach :data:`MANY_COLUMNAR_BYTES`, else None (the
    size rule of a single run).

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


def streamed_format(run) -> str:
    """The format of a run file to stream (stdin and pipes cannot be looked at twice: taken as TREC)."""
    if isinstance(run, (str, os.PathLike)) and not piped(run):
        return sniff(head_of(run), "results")
    return "trec"
