"""Adapters: pytrec_eval-style dicts and tables (pandas and polars DataFrames, pyarrow
Tables and RecordBatches) to Qrels and Run.

A table is converted column by column: its columns become Arrow arrays (without a copy
where pandas, polars or pyarrow already hold them so), ids are dictionary-encoded in Arrow's C loops
and the values checked as whole arrays. Anything the columns cannot take as they are (a
missing id, a score or grade of another type or out of range, a pair given twice) sends the
frame through the row-by-row path, which converts what it can and names the row it refuses.

>>> qrels = qrels_from_dict({"q1": {"d1": 1, "d2": 0}})
>>> qrels.qid_vocab, qrels.grades.tolist()
(['q1'], [1, 0])
"""

from __future__ import annotations

import math
import numbers
import struct
from collections import deque
from functools import cached_property
from itertools import chain, count, repeat

import numpy as np

from evaltool.inputs import Qrels, Run
from evaltool.errors import EvaltoolError, ParseError
from evaltool.io.common import GRADE_MAX, GRADE_MIN, GRADE_RANGE, Encoder, resolve_duplicates

# (query id, document id) column names: ir_measures' and PyTerrier's
ID_COLUMNS = (("query_id", "doc_id"), ("qid", "docno"))
QRELS_VALUES = ("relevance", "grade", "rel", "label")  # PyTerrier's qrels call the grade 'label'


def _check_grade(source: str, where: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if not (isinstance(value, numbers.Real) and float(value).is_integer()):
            raise ParseError(source, None, f"{where}: {value!r}", "an integer grade")
    grade = int(value)
    if not GRADE_MIN <= grade <= GRADE_MAX:
        raise ParseError(source, None, f"{where}: {value!r}", f"an integer grade {GRADE_RANGE}")
    return grade


def _check_score(source: str, where: str, value) -> float:
    try:
        score = float(value)
    except (TypeError, ValueError, OverflowError):  # (an int too large for a float overflows)
        score = math.nan
    if isinstance(value, bool) or not math.isfinite(score):
        raise ParseError(source, None, f"{where}: {value!r}", "a finite number as the score")
    return score


def _is_missing(value) -> bool:
    """None, NaN (float or numpy), pandas' NA and NaT: a value a table holds for "no value".

    >>> [_is_missing(v) for v in ("q1", 7, None, float("nan"), np.float32("nan"))]
    [False, False, True, True, True]
    """
    if value is None:
        return True
    if type(value) is str or isinstance(value, numbers.Integral):
        return False
    try:
        return bool(value != value)  # NaN and NaT differ from themselves
    except TypeError:
        return True  # pandas.NA: its comparisons are NA, whose truth is ambiguous


def _check_ids(source: str, where: str, qid, doc) -> None:
    """Refuse a missing query or document id, which ``str`` would turn into the id "None" or "nan"."""
    for field, value in (("query id", qid), ("document id", doc)):
        if _is_missing(value):
            raise ParseError(
                source, None, f"{where}: {field} {value!r}", f"a {field} in every row, not a missing value (None, NaN)"
            )


def _build(cls, source, rows, check, on_duplicate, runid=None, queries=(), row_names=None):
    """``queries``: query ids to know even without a row (a run's empty rankings); ``row_names``:
    what messages call each row (a DataFrame's index labels), else its query and document."""
    qids, docs = Encoder(), Encoder()
    for qid in queries:
        if _is_missing(qid):
            raise ParseError(source, None, f"query {qid!r}", "a query id, not a missing value (None, NaN)")
        qids(str(qid))
    qc, dc, values = [], [], []
    for row, (qid, doc, value) in enumerate(rows):
        where = f"query {qid!s} document {doc!s}" if row_names is None else f"row {row_names[row]}"
        if type(qid) is not str or type(doc) is not str:
            _check_ids(source, where, qid, doc)
        qc.append(qids(str(qid)))
        dc.append(docs(str(doc)))
        values.append(check(source, where, value))
    if not values and not qids.vocab:
        raise ParseError(source, None, None, "at least one row")
    qid_codes = np.asarray(qc, dtype=np.int64)
    doc_codes = np.asarray(dc, dtype=np.int64)
    dtype = np.int64 if cls is Qrels else np.float64
    vals = np.asarray(values, dtype=dtype)
    lines = np.arange(1, len(vals) + 1, dtype=np.int64)

    def duplicate(first: int, repeated: int) -> None:
        raise ParseError(
            source,
            None,
            f"query {qids.vocab[qc[first]]} document {docs.vocab[dc[first]]}",
            f"each (query, document) pair once; entries {first + 1} and {repeated + 1} (counting from 1) "
            "both give it (use on_duplicate='first' or 'max' to accept duplicates)",
        )

    keep, dropped = resolve_duplicates(on_duplicate, qid_codes, doc_codes, vals, len(docs.vocab), duplicate)
    args = (qids.vocab, qid_codes[keep], docs.vocab, doc_codes[keep], vals[keep], lines[keep])
    if cls is Qrels:
        return Qrels(*args, path=source, duplicates_resolved=dropped)
    return Run(*args, runid=runid or "", path=source, duplicates_resolved=dropped)


def _dict_rows(data: dict, source: str):
    if not isinstance(data, dict):
        raise EvaltoolError(f"{source}: expected a dict of {{query_id: {{doc_id: value}}}}, got {type(data).__name__}")
    for qid, docs in data.items():
        if not isinstance(docs, dict):
            raise ParseError(source, None, f"query {qid}: {docs!r}", "a dict {doc_id: value} per query")
        for doc, value in docs.items():
            yield qid, doc, value


# grade types the whole-column conversion takes as they are; anything else is checked value by value
_GRADE_TYPES = frozenset({int, np.int64, np.int32, np.int16, np.int8})


_TEXT = frozenset({str})


def _from_plain_dict(cls, data, source: str, runid: str):
    """The common case in one pass of C loops: str ids, plain numbers. None when anything
    else is in ``data``: the row-by-row path then converts or names the bad entry."""
    if not isinstance(data, dict) or not set(map(type, data)) <= _TEXT:  # (C loops: no Python step per query)
        return None
    per_query = list(data.values())
    if not all(map(isinstance, per_query, repeat(dict))):
        return None
    if not all(per_query):  # an empty ranking: the row-by-row path decides what it means
        return None
    n = sum(map(len, per_query))
    if not n:
        return None
    if cls is Run:
        return _dict_run(data, per_query, n, source, runid)
    if not set(map(type, chain.from_iterable(map(dict.values, per_query)))) <= _GRADE_TYPES:
        return None
    try:
        vals = np.fromiter(chain.from_iterable(map(dict.values, per_query)), dtype=np.int64, count=n)
    except OverflowError:
        return None
    try:
        deque(map("".join, per_query), maxlen=0)  # document ids that are not text go row by row
    except TypeError:
        return None
    counts = np.fromiter(map(len, per_query), dtype=np.int64, count=len(per_query))
    qid_codes = np.repeat(np.arange(len(per_query), dtype=np.int64), counts)
    return DictQrels(list(data), qid_codes, list(chain.from_iterable(per_query)), vals, source)


class DictQrels(Qrels):
    """Judgments converted from a dict ``{qid: {docid: grade}}`` of text ids and integer grades.

    Query codes and grades are columns at once, and ``row_docs`` every row's document id, rows
    grouped by query in the dicts' order (what ranking a dict run reads). The document codes
    are built on first use only: a document's code is the row where it first appears,
    renumbered 0, 1, ... (the codes the row-by-row path gives).

    >>> qrels = DictQrels(["q1", "q2"], np.array([0, 0, 1]), ["a", "b", "a"], np.array([1, 0, 2]))
    >>> qrels.doc_vocab, qrels.doc_codes.tolist(), qrels.lines.tolist()
    (['a', 'b'], [0, 1, 0], [1, 2, 3])
    """

    def __init__(
        self,
        qids: list[str],
        qid_codes: np.ndarray,
        row_docs: list[str],
        grades: np.ndarray,
        path: str = "<qrels dict>",
    ):
        self.qid_vocab, self.qid_codes, self.row_docs, self.grades = qids, qid_codes, row_docs, grades
        self.path = path
        self.duplicates_resolved = 0
        self.subtopics = None
        self.memo = {}

    @cached_property
    def _index(self) -> tuple[list[str], np.ndarray]:
        index: dict = {}
        codes = np.fromiter(map(index.setdefault, self.row_docs, count()), dtype=np.int64, count=len(self.row_docs))
        return list(index), _dense(codes)

    @property
    def doc_vocab(self) -> list[str]:  # type: ignore[override]
        return self._index[0]

    @property
    def doc_codes(self) -> np.ndarray:  # type: ignore[override]
        return self._index[1]

    @cached_property
    def lines(self) -> np.ndarray:  # type: ignore[override]
        return np.arange(1, len(self.grades) + 1, dtype=np.int64)


def _dict_run(data: dict, per_query: list[dict], n: int, source: str, runid: str) -> DictRun | None:
    """:func:`_from_plain_dict` for a run: its scores converted as ``float`` converts them
    (what the row-by-row path does), in one C loop, its document ids checked to be text.

    ``float`` and numpy's conversion agree on every value (numbers, numpy scalars, numeric
    text), except that numpy turns None into nan, refused here with every value that is not
    finite, and takes True and False as 1.0 and 0.0: where those values are, the types say
    whether a bool gave them. None (the row-by-row path then names the bad entry) for
    anything else, and for ids that are not text (``str.join`` refuses them in its C loop).
    """
    scores = _float_scores(per_query, n)
    if scores is None:
        return None
    if not np.isfinite(scores).all():
        return None
    if ((scores == 1.0) | (scores == 0.0)).any() and bool in set(
        map(type, chain.from_iterable(map(dict.values, per_query)))
    ):
        return None
    # every id is text (str.join refuses anything else, in one C loop); a small run's ids listed
    # at once become its doc_vocab (ranking reads them), a large one's are not kept
    ids = list(chain.from_iterable(per_query)) if n <= SMALL_RUN_ROWS else None
    if ids is None:
        try:
            deque(map("".join, per_query), maxlen=0)
        except TypeError:
            return None
    else:
        ids = _text_ids_checked(ids)
        if ids is None:
            return None
    # a dict holds each (query, document) once: nothing to resolve
    return DictRun(list(data), per_query, scores, runid=runid or "", path=source, ids=ids)


def _float_scores(per_query: list[dict], n: int) -> np.ndarray | None:
    """Every value of the dicts ``per_query`` (``n`` in all) as float64, as ``float`` converts it:
    ``struct`` packs numbers (floats, ints, numpy scalars, anything with ``__float__``) through
    ``float``'s own C conversion, faster than ``np.fromiter``, which also converts numeric text
    (and converts a large run's values, without a tuple of them);
    None when neither takes every value (the row-by-row path then names the one refused)."""
    if n <= SMALL_RUN_ROWS:  # (the values are unpacked as one tuple: a small run's only)
        scores = np.empty(n, dtype=np.float64)
        try:
            struct.pack_into(f"{n}d", scores, 0, *chain.from_iterable(map(dict.values, per_query)))
            return scores
        except Exception:  # text, or a value whose conversion fails: numpy's conversion, then the row-by-row path
            pass
    try:
        return np.fromiter(chain.from_iterable(map(dict.values, per_query)), dtype=np.float64, count=n)
    except Exception:  # whatever a value raises, the row-by-row path raises again or names the value
        return None


SMALL_RUN_ROWS = 1 << 16  # rows up to which a dict run's ids are listed while checked


class _CheckedIds:
    """A small dict run's ids if every one is text (None if not), ``str.join`` finding out (it
    reads every id's characters), unless they equal those of the last run found so, which are
    then handed back (the list ranking compared them with, :func:`evaltool.ranking._judged_rows_of`):
    a training loop scoring the same candidates anew hands over the same id objects call after
    call, which ``list``'s comparison passes by identity without reading a character. Read and
    replaced whole."""

    def __init__(self):
        self.last: list | None = None

    def __call__(self, ids: list) -> list | None:
        last = self.last
        if last is not None and len(last) == len(ids) and last == ids:
            return last
        try:
            "".join(ids)
        except TypeError:
            return None
        self.last = ids
        return ids


_text_ids_checked = _CheckedIds()


class DictRun(Run):
    """A run converted from a dict of non-empty rankings ``{qid: {docid: score}}``.

    Query codes and scores are columns at once; ``rankings`` keeps the dicts (read, not
    copied), so ranking looks the judged documents up by id and never encodes the others.
    Every row's document id (``doc_vocab``) and the document codes are built on first use
    only: a document's code is the row where it first appears.

    >>> run = DictRun(["q1", "q2"], [{"a": 2.0, "b": 1.0}, {"b": 3.0}], np.array([2.0, 1.0, 3.0]))
    >>> run.qid_codes.tolist(), run.doc_vocab, run.doc_codes.tolist(), run.keys_for(["b", "z"]).tolist()
    ([0, 0, 1], ['a', 'b', 'b'], [0, 1, 1], [1, -1])
    """

    def __init__(
        self,
        qids: list[str],
        rankings: list[dict],
        scores: np.ndarray,
        runid: str = "",
        path: str = "<run dict>",
        ids: list[str] | None = None,
    ):
        if ids is not None:  # every row's id, listed already
            self.doc_vocab = ids
        self.qid_vocab = qids
        self.rankings = rankings
        self.lengths = np.fromiter(map(len, rankings), dtype=np.int64, count=len(rankings))
        self.scores = scores
        self.runid, self.path = runid, path
        self.duplicates_resolved = 0
        self.extra = {}

    @cached_property
    def qid_codes(self) -> np.ndarray:  # type: ignore[override]
        return np.repeat(np.arange(len(self.rankings), dtype=np.int64), self.lengths)

    def query_lengths(self) -> np.ndarray:
        return self.lengths

    @cached_property
    def doc_vocab(self) -> list[str]:  # type: ignore[override]
        return list(chain.from_iterable(self.rankings))

    @cached_property
    def _index(self) -> tuple[dict, np.ndarray]:
        index: dict = {}
        codes = np.fromiter(map(index.setdefault, self.doc_vocab, count()), dtype=np.int64, count=len(self.scores))
        return index, codes

    @property
    def doc_codes(self) -> np.ndarray:
        return self._index[1]

    @cached_property
    def lines(self) -> np.ndarray:
        return np.arange(1, len(self.scores) + 1, dtype=np.int64)

    def keys_for(self, docids):
        return np.fromiter(map(self._index[0].get, docids, repeat(-1)), dtype=np.int64, count=len(docids))


class FrameRun(DictRun):
    """A small frame's run ranked as a dict run is (:class:`DictRun`): every row's document id
    listed (``ids``), rows grouped by query (``bounds``: where each query starts, then the row
    count), the scores as the frame holds them. Each query's ``{docid: score}`` (``rankings``)
    is made when ranking first reads it (:class:`_LazyRankings`), which is seldom: ranking looks
    each row up among its query's judgments instead (``rankings_made_when_read``).

    >>> run = FrameRun(["q1", "q2"], ["a", "b", "b"], np.array([0, 2, 3]), np.array([2.0, 1.0, 3.0]))
    >>> run.qid_codes.tolist(), run.rankings[1], run.doc_codes.tolist(), run.keys_for(["b", "z"]).tolist()
    ([0, 0, 1], {'b': 3.0}, [0, 1, 1], [1, -1])
    """

    rankings_made_when_read = True

    def __init__(
        self,
        qids: list[str],
        ids: list[str],
        bounds: np.ndarray,
        scores: np.ndarray,
        runid: str = "",
        path: str = "<run DataFrame>",
    ):
        self.qid_vocab, self.doc_vocab = qids, ids
        self.lengths = np.diff(bounds)
        self.rankings = _LazyRankings(ids, scores, bounds.tolist())
        self.scores = scores
        self.runid, self.path = runid, path
        self.duplicates_resolved = 0
        self.extra = {}


class _LazyRankings:
    """Each query's ``{docid: score}`` of a :class:`FrameRun`, by query code, made on first read."""

    __slots__ = ("ids", "scores", "bounds", "made")

    def __init__(self, ids: list[str], scores: np.ndarray, bounds: list[int]):
        self.ids, self.scores, self.bounds, self.made = ids, scores, bounds, {}

    def __len__(self) -> int:
        return len(self.bounds) - 1

    def __getitem__(self, code: int) -> dict:
        made = self.made.get(code)
        if made is None:
            start, end = self.bounds[code], self.bounds[code + 1]
            made = self.made[code] = dict(zip(self.ids[start:end], self.scores[start:end].tolist()))
        return made

    def __iter__(self):
        return map(self.__getitem__, range(len(self)))


def _text_ids(column):
    """:func:`_arrow_ids`, integers written as text (as the columnar path casts them)."""
    import pyarrow as pa

    array = _arrow_ids(column)
    return _narrow(array) if array is not None and pa.types.is_integer(array.type) else array


SMALL_FRAME_ROWS = 1 << 13  # rows up to which a frame's run is ranked as a dict run (FrameRun) at once: measured,
# a frame seen once costs about what the columnar readers cost at this size, less below, more above
REPEATED_FRAME_ROWS = 1 << 16  # rows up to which a frame's run whose ids the last frame had is ranked so


def _frame_run_by_ids(columns, source: str, runid: str, at_once: bool) -> FrameRun | None:
    """A frame's run as a :class:`FrameRun`: text (or integer) ids without a missing value,
    finite scores, rows grouped by query, no document twice in a query; None for anything
    else, which the columnar and row-by-row paths decide as they decide for any frame (and
    name the row they refuse). Unless ``at_once``, only for id columns equal to the last
    frame's (:class:`_LastFrameIds`)."""
    qids, docs = _text_ids(columns[0]), _text_ids(columns[1])
    scores = None if qids is None or docs is None else _arrow_numbers(columns[2], integral=False)
    if scores is None or not len(scores):
        return None
    read = _frame_ids(qids, docs, at_once)
    return None if read is None else FrameRun(*read, scores, runid, source)


_UNREAD = object()  # the ids of a frame seen once that were not read


class _LastFrameIds:
    """The id columns of the last frame run and what was read from them: (query ids, every
    row's document id, where each query starts), or None when a query's rows are apart or a
    document repeats inside a query. A training loop scoring the same candidates anew hands
    over equal id columns call after call: their Arrow data are compared (a ``memcmp``), and
    the ids listed, checked and grouped once; a larger frame's ids (not ``at_once``) only
    when they come a second time, what was seen once costing less through the columnar
    readers. Read and replaced whole (threads never mix two entries); the entry holds its
    columns, whose Arrow buffers never change."""

    def __init__(self):
        self.last = None

    def __call__(self, qids, docs, at_once: bool = True):
        last = self.last
        if (
            last is not None
            and type(last[0]) is type(qids)
            and type(last[1]) is type(docs)
            and last[0].equals(qids)
            and last[1].equals(docs)
        ):
            if last[2] is not _UNREAD:
                return last[2]
        elif not at_once:
            self.last = (qids, docs, _UNREAD)
            return None
        read = _read_ids(qids, docs)
        self.last = (qids, docs, read)
        return read


def _read_ids(qids, docs):
    """(query ids, every row's document id, where each query starts), or None (see :class:`_LastFrameIds`)."""
    from evaltool.io.textids import query_runs

    bounds, vocab = query_runs(qids)
    if len(set(vocab)) != len(vocab):
        return None  # a query's rows are apart
    ids, edges = docs.to_pylist(), bounds.tolist()
    if sum(map(len, map(set, map(ids.__getitem__, map(slice, edges[:-1], edges[1:]))))) != len(ids):
        return None  # a document repeats inside a query
    return vocab, ids, bounds


_frame_ids = _LastFrameIds()


def _dense(codes: np.ndarray) -> np.ndarray:
    """Codes handed out by ``setdefault`` with a running row counter (a document's code is the row
    where it first appears), renumbered 0, 1, ... in first-seen order."""
    first = codes == np.arange(len(codes))
    return (np.cumsum(first) - 1)[codes]


def qrels_from_dict(data: dict, *, on_duplicate: str = "error", source: str = "<qrels dict>") -> Qrels:
    """``{query_id: {doc_id: grade}}`` (pytrec_eval's layout) to Qrels."""
    converted = _from_plain_dict(Qrels, data, source, "")
    if converted is not None:
        return converted
    return _build(Qrels, source, _dict_rows(data, source), _check_grade, on_duplicate)


def run_from_dict(data: dict, *, on_duplicate: str = "error", source: str = "<run dict>", runid: str = "run") -> Run:
    """``{query_id: {doc_id: score}}`` (pytrec_eval's layout) to Run.

    A query mapped to ``{}`` is a query the system answered with nothing: the run names it
    without a row, and it is scored with nothing retrieved (0 for most measures, ``num_ret``
    0), as pytrec_eval and ir_measures score it, whether or not ``complete`` is set and even
    when every query is ``{}``. A judged query the dict does not name is missing from the run
    (skipped, or scored as trec_eval's ``-c`` scores it under ``complete=True``).

    >>> run = run_from_dict({"q1": {"d1": 1.0}, "q2": {}})
    >>> run.qid_vocab, len(run)
    (['q1', 'q2'], 1)
    >>> from evaltool import evaluate
    >>> evaluate({"q1": {"d1": 1}, "q2": {"d2": 1}}, run, ["map", "num_ret"], per_query=True).per_query["q2"]
    {'num_ret': 0, 'map': 0.0}
    """
    converted = _from_plain_dict(Run, data, source, runid)
    if converted is not None:
        return converted
    return _build(Run, source, _dict_rows(data, source), _check_score, on_duplicate, runid, queries=data)


def _frame_columns(frame, value_names, source) -> tuple[str, str, str]:
    """The (query id, document id, value) columns of a frame, by ir_measures' or PyTerrier's names."""
    cols = _column_names(frame)
    ids = next((pair for pair in ID_COLUMNS if all(c in cols for c in pair)), None)
    value_col = next((c for c in value_names if c in cols), None)
    if ids is None or value_col is None:
        raise EvaltoolError(
            f"{source}: a {_kind(frame)} needs columns query_id, doc_id and {' or '.join(value_names)}; it has "
            f"{', '.join(map(str, cols))} (PyTerrier's qid and docno are read too)"
        )
    return (*ids, value_col)


def _is_arrow(obj) -> bool:
    """An Arrow table or record batch, an array or a chunked array (pyarrow's own types),
    told by the type's module: ``hasattr`` on a pandas object runs its attribute lookup."""
    return type(obj).__module__.startswith("pyarrow")


def _column_names(frame) -> list:
    """A frame's column names: an Arrow table's ``column_names``, a DataFrame's ``columns``."""
    if _is_arrow(frame):
        return frame.column_names
    return list(frame.columns)


def _kind(frame) -> str:
    """What messages call the frame: a DataFrame, or an Arrow table (``pyarrow.Table``, ``RecordBatch``)."""
    return f"pyarrow {type(frame).__name__}" if _is_arrow(frame) else "DataFrame"


def _frame_data(frame, names) -> list:
    """The columns ``names`` of a frame, each looked up once (a pandas lookup costs microseconds)."""
    if _is_arrow(frame):
        return [frame.column(name) for name in names]
    return [frame[name] for name in names]


def _held_columns(frame, names) -> list | None:
    """The columns ``names`` of a pandas DataFrame as :func:`_frame_run_by_ids` reads them, from the
    arrays the frame holds (``_get_column_array``: a microsecond where ``frame[name]``, which makes
    a Series, costs tens): Arrow-backed id columns as their Arrow data, numeric numpy scores as
    they are. None for another table, another pandas, repeated column names or columns held
    otherwise (object text, nullable numbers...): their Series are read as before.
    """
    get = getattr(frame, "_get_column_array", None)
    if get is None or not type(frame).__module__.startswith("pandas"):
        return None
    try:
        at = [frame.columns.get_loc(name) for name in names]
    except Exception:
        return None
    if not all(type(i) is int for i in at):  # a name given to several columns
        return None
    qids, docs, scores = map(get, at)
    if not (hasattr(qids, "__arrow_array__") and hasattr(docs, "__arrow_array__")):
        return None
    if not (isinstance(scores, np.ndarray) and scores.dtype.kind in "iuf"):
        return None
    import pyarrow as pa

    try:  # what _arrow makes of the Series: its array's Arrow data
        return [pa.array(qids), pa.array(docs), scores]
    except (pa.ArrowException, TypeError, ValueError):
        return None


def _frame_rows(frame, columns):
    return zip(*(_as_list(column) for column in columns)), _row_names(frame)


def _as_list(column) -> list:
    """A column's values as Python objects (pandas' ``tolist``, polars' ``to_list``, Arrow's ``to_pylist``)."""
    if hasattr(column, "tolist"):
        return column.tolist()
    return column.to_list() if hasattr(column, "to_list") else column.to_pylist()


def _row_names(frame):
    """What a message calls each row: the index label (pandas), else the row's position."""
    index = getattr(frame, "index", None)
    return index if index is not None and hasattr(index, "__getitem__") else range(len(frame))


def _arrow(column):
    """A frame's column as Arrow data without a copy where it can be (an Arrow table's own
    columns; pandas' numeric and Arrow-backed columns, handed over by the column's array
    itself; polars' ``to_arrow``: :func:`_polars_arrow`), None if pyarrow cannot take it as one column (mixed types
    in an object column, say), or if it holds a missing value: pandas' NaN and None become
    nulls, which only the row-by-row path can name."""
    import pyarrow as pa

    try:
        if _is_arrow(column):
            array = column
        elif type(column).__module__.startswith("pandas"):
            held = column.array  # its ExtensionArray: Arrow-backed text hands its Arrow data over as it is
            array = pa.array(held if hasattr(held, "__arrow_array__") else column)
        elif type(column).__module__.startswith("polars"):
            array = _polars_arrow(column)
        else:
            array = column.to_arrow() if hasattr(column, "to_arrow") else pa.array(column)
    except (pa.ArrowException, TypeError, ValueError):
        return None
    return None if array.null_count else array


def _polars_arrow(series):
    """A polars Series as Arrow data: its text as ``string_view``, polars' own layout, handed
    over without a copy (the default compatibility level copies every id into
    ``large_string``: a tenth of a second per million); as polars gives it by default where
    this polars or pyarrow cannot."""
    import polars as pl

    from evaltool.io.columnar import compares_views

    level = getattr(pl, "CompatLevel", None)
    if level is not None and compares_views():
        try:
            return series.to_arrow(compat_level=level.newest())
        except Exception:  # a pyarrow without string_view: the default level below
            pass
    return series.to_arrow()


def _arrow_ids(column, views: bool = False):
    """Ids as an Arrow ``string`` or ``large_string`` column (pandas' Arrow-backed text, kept
    as it is; ``views``: polars' ``string_view`` too, when it is one array): text, integers as
    ``str`` writes them; None for anything else (floats, booleans, bytes), which the
    row-by-row path converts."""
    import pyarrow as pa

    from evaltool.io.columnar import compares_views

    array = _arrow(column)
    if array is None:
        return None
    kind = array.type.value_type if pa.types.is_dictionary(array.type) else array.type
    if not (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_string_view(kind)
        or pa.types.is_integer(kind)
    ):
        return None
    if pa.types.is_large_string(array.type):
        return array
    if views and pa.types.is_string_view(array.type) and compares_views():
        if hasattr(array, "chunks") and array.num_chunks == 1:
            array = array.chunk(0)
        if not hasattr(array, "chunks"):
            return array
    return _narrow(array)


def _narrow(array):
    """An Arrow id column as ``string`` (32-bit offsets, which the run readers take); None for
    text past 2 GiB in one chunk."""
    import pyarrow as pa

    try:
        return array if pa.types.is_string(array.type) else array.cast(pa.string())
    except pa.ArrowException:
        return None


def _arrow_numbers(column, integral: bool) -> np.ndarray | None:
    """A column of numbers as int64 grades (``integral``: integers, or floats that are whole)
    or float64 scores; None for any other type (text, booleans, decimals), which the
    row-by-row path converts or refuses by row. A pandas column held by numpy is read as it
    is (its NaN, a missing value, is refused below as Arrow's null would be)."""
    dtype = getattr(column, "dtype", None)
    if isinstance(column, np.ndarray) and dtype.kind in "iuf":  # a pandas column's own array (_held_columns)
        values = column
    elif isinstance(dtype, np.dtype) and dtype.kind in "iuf" and hasattr(column, "to_numpy"):
        values = column.to_numpy()
    else:
        import pyarrow as pa

        array = _arrow(column)
        if array is None or not (pa.types.is_integer(array.type) or pa.types.is_floating(array.type)):
            return None
        values = array.to_numpy(zero_copy_only=False) if hasattr(array, "to_numpy") else np.asarray(array)
    if not integral:
        values = values.astype(np.float64, copy=False)
        return values if np.isfinite(values).all() else None
    if len(values) and not (values.min() >= GRADE_MIN and values.max() <= GRADE_MAX):
        return None  # also NaN, whose comparisons are False
    if values.dtype.kind == "f" and not np.array_equal(values, np.floor(values)):
        return None
    return values.astype(np.int64)


def _columnar_qrels(columns, source: str) -> Qrels | None:
    """Qrels from a frame's columns in Arrow's C loops; None when a row needs the row-by-row
    path: a missing id or grade, a value of another type, a grade out of range, a (query,
    document) pair given twice, or a query id that :func:`columnar.run_from_columns` would
    take for a comment line. That path then names the row, or resolves the duplicates."""
    from evaltool.io import columnar

    qids, docs = _arrow_ids(columns[0]), _arrow_ids(columns[1])
    grades = None if qids is None or docs is None else _arrow_numbers(columns[2], integral=True)
    if grades is None or not len(grades):
        return None
    encoded_qids = columnar.encode_qids(qids)
    if encoded_qids is None:
        return None
    encoded = columnar.kernels().call_function("dictionary_encode", [docs])
    if hasattr(encoded, "combine_chunks"):
        encoded = encoded.combine_chunks()
    doc_codes = columnar.numpy_column(encoded.indices, np.int32).astype(np.int64)
    qid_codes = encoded_qids[1].astype(np.int64)
    if columnar.has_duplicates(qid_codes, doc_codes):
        return None
    from evaltool.io.textids import remember_texts

    doc_vocab = encoded.dictionary.to_pylist()
    remember_texts(doc_vocab, encoded.dictionary)  # a text run finds these ids by their Arrow text
    return Qrels(
        encoded_qids[0],
        qid_codes,
        doc_vocab,
        doc_codes,
        grades,
        np.arange(1, len(grades) + 1, dtype=np.int64),
        path=source,
    )


def _columnar_run(columns, source: str, runid: str) -> Run | None:
    """A Run from a frame's columns, as :func:`_columnar_qrels` builds Qrels (None: the
    row-by-row path decides). Rows grouped by query (as runs are written) are read by
    :func:`textids.run_from_text_columns`; others by :func:`columnar.run_from_columns`.
    Document ids stay in Arrow (:class:`columnar.ArrowDocRun`, :class:`textids.TextDocRun`),
    or become integer keys when every one is a canonical integer (:class:`columnar.NumericDocRun`)."""
    from evaltool.io import columnar

    qids, docs = _arrow_ids(columns[0], views=True), _arrow_ids(columns[1], views=True)
    scores = None if qids is None or docs is None else _arrow_numbers(columns[2], integral=False)
    if scores is None or not len(scores):
        return None
    from evaltool.io.textids import run_from_text_columns

    grouped = run_from_text_columns(qids, docs, scores, runid, source)
    if grouped is not None:
        return grouped
    qids, docs = _narrow(qids), _narrow(docs)
    if qids is None or docs is None:
        return None
    run = columnar.run_from_columns(qids, docs, scores, runid, source, jobs=1)
    if run is None:
        return None
    return None if columnar.has_duplicates(run.qid_codes, run.doc_codes) else run


def qrels_from_frame(frame, *, on_duplicate: str = "error", source: str = "<qrels DataFrame>") -> Qrels:
    """A DataFrame (pandas, polars) or a pyarrow Table or RecordBatch with ``query_id, doc_id,
    relevance`` (ir_measures) or ``qid, docno, label`` (PyTerrier) to Qrels. A row without a
    query or document id (None, NaN) is refused, by its index label (pandas) or its position.

    >>> import pandas as pd
    >>> qrels_from_frame(pd.DataFrame({"query_id": ["q1", None], "doc_id": ["a", "b"], "relevance": [1, 0]}))
    Traceback (most recent call last):
    evaltool.errors.ParseError: <qrels DataFrame>: found 'row 1: query id nan'; expected a query id in every row, not a missing value (None, NaN)
    """
    columns = _frame_data(frame, _frame_columns(frame, QRELS_VALUES, source))
    converted = _columnar_qrels(columns, source)
    if converted is not None:
        return converted
    rows, row_names = _frame_rows(frame, columns)
    return _build(Qrels, source, rows, _check_grade, on_duplicate, row_names=row_names)


def run_from_frame(frame, *, on_duplicate: str = "error", source: str = "<run DataFrame>", runid: str = "run") -> Run:
    """A DataFrame (pandas, polars) or a pyarrow Table or RecordBatch with ``query_id, doc_id,
    score`` (ir_measures) or ``qid, docno, score`` (PyTerrier; its ``rank`` column is ignored,
    as trec_eval ignores a run's ranks) to Run. A row without a query or document id (None,
    NaN) is refused, by its index label (pandas) or its position (other tables).

    >>> import pyarrow as pa
    >>> run = run_from_frame(pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]}))
    >>> run.qid_vocab, run.scores.tolist()
    (['q1'], [2.0, 1.0])
    """
    names = _frame_columns(frame, ("score",), source)
    rows = len(frame)
    converted = None
    if rows <= REPEATED_FRAME_ROWS:
        held = _held_columns(frame, names)
        columns = _frame_data(frame, names) if held is None else held
        converted = _frame_run_by_ids(columns, source, runid or "", at_once=rows <= SMALL_FRAME_ROWS)
    if converted is None:
        columns = _frame_data(frame, names)
        converted = _columnar_run(columns, source, runid or "")
    if converted is not None:
        return converted
    rows, row_names = _frame_rows(frame, columns)
    return _build(Run, source, rows, _check_score, on_duplicate, runid, row_names=row_names)
