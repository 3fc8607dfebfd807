"""Every input to the reader that takes it: paths, dicts, DataFrames and already-read
containers, as TREC qrels and runs, queries files and JSONL results.

What an input is, :mod:`evaltool.io.kinds` decides; this module asks it once per input and
hands the input on, so a reader never guesses and the path from a file to its reader
passes here once.
"""

from __future__ import annotations

import os

from evaltool.errors import EvaltoolError, InputError, ParseError
from evaltool.inputs import Qrels, Run
from evaltool.io.common import TextSource, piped
from evaltool.io.kinds import columnar, head_of, input_kind, is_frame, is_jsonl, per_subtopic, sniff


SWAPPED = (
    "; that is a line of a run (query_id Q0 doc_id rank score run_tag): the arguments look swapped, "
    "give the qrels first, then the run"
)


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


def read_qrels(path, *, on_duplicate: str = "error", jobs: int | None = None) -> Qrels:
    """Read a TREC qrels file into a :class:`~evaltool.inputs.Qrels` (a big one in ``jobs`` threads; None: all cores).

    A regular file large enough (:func:`evaltool.io.kinds.columnar`) is read by pyarrow
    (:mod:`evaltool.io.columnar`); whatever that reader hands back, and any other file, the
    line reader (:mod:`evaltool.io.trec`) reads, naming the line of any problem.

    Parameters
    ----------
    path : str or os.PathLike
        A qrels file, ``query_id iteration doc_id grade`` per line; gzip, bzip2 and xz
        files are read as they are (zstd with the ``zstd`` extra).
    on_duplicate : {"error", "first", "max"}
        What a document judged twice for a query means: an error naming both lines, the
        first grade, or the highest.
    jobs : int or None
        Threads for a big file; None: every core.

    Returns
    -------
    Qrels
        The judgments as columns: query and document vocabularies, their codes, the grades.

    Raises
    ------
    ParseError
        A line that is not a judgment, with the file, the line number and the text found.
    EvaltoolError
        A file that cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> from pathlib import Path
    >>> path = os.path.join(tempfile.mkdtemp(), "qrels.txt")
    >>> _ = Path(path).write_text("q1 0 d1 1\\nq1 0 d2 0\\nq2 0 d1 2\\n")
    >>> qrels = read_qrels(path)
    >>> len(qrels), qrels.qid_vocab, qrels.grades.tolist()
    (3, ['q1', 'q2'], [1, 0, 2])
    """
    from evaltool.io import trec

    if columnar(path):
        from evaltool.io import columnar as columns

        table = columns.read_qrels(path, jobs)
        if table is not None:
            return table
    return trec.read_qrels(path, on_duplicate=on_duplicate, jobs=jobs)


def read_run(path, *, on_duplicate: str = "error", jobs: int | None = None) -> Run:
    """Read a TREC run file into a :class:`~evaltool.inputs.Run`; ``-`` reads stdin; the readers as in :func:`read_qrels`.

    Parameters
    ----------
    path : str or os.PathLike
        A run file, ``query_id Q0 doc_id rank score tag`` per line, or ``-`` for standard
        input. The rank column is read but not used: documents are ranked by score, ties
        broken as trec_eval breaks them (document id, descending).
    on_duplicate : {"error", "first", "max"}
        What a document listed twice for a query means: an error naming both lines, the
        first score, or the highest.
    jobs : int or None
        Threads for a big file; None: every core.

    Returns
    -------
    Run
        The run as columns: vocabularies, codes, scores; ``runid`` is the file's tag.

    Raises
    ------
    ParseError
        A line that is not a result (too few fields, a score that is not a number), with
        the file, the line number and the text found.
    EvaltoolError
        A file that cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> from pathlib import Path
    >>> path = os.path.join(tempfile.mkdtemp(), "run.txt")
    >>> _ = Path(path).write_text("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.5 bm25\\n")
    >>> run = read_run(path)
    >>> len(run), run.runid, run.scores.tolist()
    (2, 'bm25', [2.5, 1.5])
    """
    from evaltool.io import trec

    if columnar(path):
        from evaltool.io import columnar as columns
        from evaltool.io.textids import TextDocRun

        table = columns.read_run(path, jobs, text_run=TextDocRun)
        if table is not None:
            return table
    return trec.read_run(path, on_duplicate=on_duplicate, jobs=jobs)


def load_qrels(qrels, on_duplicate: str = "error", jobs: int | None = None) -> Qrels:
    """Accept a path, a ``{qid: {docid: grade}}`` dict, a DataFrame (pandas, polars), a pyarrow
    Table or RecordBatch, or a Qrels (``jobs``: threads for a big file)."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        return _swapped(lambda: read_qrels(qrels, on_duplicate=on_duplicate, jobs=jobs))
    from evaltool.io import frames

    if isinstance(qrels, dict):
        return frames.qrels_from_dict(qrels, on_duplicate=on_duplicate)
    if is_frame(qrels):
        return frames.qrels_from_frame(qrels, on_duplicate=on_duplicate)
    raise EvaltoolError(f"qrels must be a path, dict, DataFrame or pyarrow Table, not {type(qrels).__name__}")


def load_run(run, on_duplicate: str = "error", runid: str | None = None, jobs: int | None = None) -> Run:
    """Accept a path (``-`` for stdin), a ``{qid: {docid: score}}`` dict, a DataFrame (pandas,
    polars), a pyarrow Table or RecordBatch, or a Run."""
    if isinstance(run, Run):
        return run
    if isinstance(run, (str, os.PathLike)):
        return read_run(run, on_duplicate=on_duplicate, jobs=jobs)
    from evaltool.io import frames

    if isinstance(run, dict):
        return frames.run_from_dict(run, on_duplicate=on_duplicate, runid=runid or "run")
    if is_frame(run):
        return frames.run_from_frame(run, on_duplicate=on_duplicate, runid=runid or "run")
    raise EvaltoolError(f"run must be a path, dict, DataFrame or pyarrow Table, not {type(run).__name__}")


class Loaded:
    """An input already read and the kind it came from: judgments read once by
    :class:`evaltool.Evaluator`, or a run read ahead by :func:`read_run_ahead`."""

    __slots__ = ("value", "kind")

    def __init__(self, value, kind: str):
        self.value, self.kind = value, kind


def load_judgments(
    qrels, on_duplicate: str = "error", fmt: str | None = None, subtopics: bool = False, jobs: int | None = None
):
    """The first input: Qrels (a TREC qrels file, dict, DataFrame) or Queries (a JSON/JSONL queries file).

    ``fmt`` forces ``trec``, ``json``, ``jsonl`` or ``subtopics``; by default a file's content
    decides. ``subtopics`` (a diversity measure is asked for) reads a file as subtopic qrels
    (:mod:`evaltool.io.subtopics`), as ``fmt='subtopics'`` does, and refuses judgments without
    subtopics. A dict ``{qid: {subtopic: {docid: grade}}}`` is subtopic qrels either way.
    Returns (judgments, format).
    """
    if isinstance(qrels, Loaded):
        return qrels.value, qrels.kind
    if isinstance(qrels, dict) and per_subtopic(qrels):
        from evaltool.io.subtopics import subtopic_qrels_from_dict

        return subtopic_qrels_from_dict(qrels, diversity=subtopics), "subtopics"
    if isinstance(qrels, Qrels) and qrels.subtopics is not None:
        return qrels, "subtopics"
    if fmt == "subtopics" or subtopics:
        if isinstance(qrels, (str, os.PathLike)) and os.fspath(qrels) != "-" and fmt not in ("json", "jsonl"):
            from evaltool.io.subtopics import read_subtopic_qrels

            return read_subtopic_qrels(qrels, on_duplicate=on_duplicate, diversity=subtopics), "subtopics"
        given = f"{os.fspath(qrels)} read as {fmt}" if isinstance(qrels, (str, os.PathLike)) else input_kind(qrels)
        raise InputError(
            "diversity measures and --qrels-format subtopics read judgments per subtopic: a qrels file "
            "'query_id subtopic doc_id grade' (ndeval's) or a dict {qid: {subtopic: {docid: grade}}}, "
            f"not {given}"
        )
    if is_jsonl(qrels, "Queries"):
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
    from evaltool.io.common import read_bytes

    name, data = read_bytes(qrels)
    queries = jsonl.parse_queries(name, data, fmt or sniff(data, "judgments"))  # JSON or JSONL: by the whole content
    return queries, queries.format


def load_results(
    run, on_duplicate: str = "error", runid: str | None = None, fmt: str | None = None, jobs: int | None = None
):
    """The second input: a Run (a TREC run file, dict, DataFrame) or Results (a JSONL results file).

    ``fmt`` forces ``trec`` or ``jsonl``; by default a file's content decides (stdin, ``-``,
    is read whole first, as a pipe is). Returns (results, format).
    """
    if isinstance(run, Loaded):
        return run.value, run.kind
    if is_jsonl(run, "Results"):
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
        raise ParseError(
            name, 1, None, "a JSONL results file (one JSON object per line) or a TREC run, not a JSON array"
        )
    if fmt == "jsonl":
        from evaltool.io import jsonl

        if isinstance(run, TextSource):
            return jsonl.parse_results(name, run.read_all(), on_duplicate), fmt
        return jsonl.read_results(run, on_duplicate), fmt
    if isinstance(run, TextSource):
        from evaltool.io import trec

        return trec.read_source(run, "run", on_duplicate, jobs), fmt
    return load_run(run, on_duplicate, runid, jobs), fmt


def read_run_ahead(
    run, on_duplicate: str = "error", fmt: str | None = None, jobs: int | None = None, min_bytes: int | None = None
) -> Loaded:
    """One of several runs, read as :func:`load_results` reads it (by :meth:`evaltool.Evaluator.evaluate_many`).

    A TREC run file (plain or gzip) of at least ``min_bytes`` (0: any size) goes to the
    columnar reader: small files do not repay importing pyarrow one at a time, but many of
    them do (:func:`evaltool.io.kinds.columnar_for_many`), and pyarrow parses without holding the GIL.
    Whatever that reader hands back (an irregular line, a duplicate, a bad score) is read
    again by :func:`load_results`, whose messages name the file and the line.
    """
    if isinstance(run, (str, os.PathLike)) and fmt in (None, "trec") and columnar(run, min_bytes):
        from evaltool.io import columnar as columns
        from evaltool.io.textids import TextDocRun

        fmt = fmt or sniff(head_of(run), "results")
        # a small file is one block of pyarrow's: parsed in this thread, the other runs in theirs
        table = columns.read_run(run, jobs, in_caller=not columnar(run), text_run=TextDocRun) if fmt == "trec" else None
        if table is not None:
            return Loaded(table, fmt)
    return Loaded(*load_results(run, on_duplicate, None, fmt, jobs))
