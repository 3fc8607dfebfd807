"""Click logs: what users were shown and what they clicked, read as a stream into compact arrays.

Three layouts are read; the content (and, for Parquet and CSV, the file name) decides which:

* **Impression objects** (seed 004's ``calcular_mrr_con_clicks`` input): a JSON array, or JSONL
  with one object per line. Each object is one impression — a result list shown for a query:
  ``consulta`` or ``query`` (the query text), optional ``query_id`` / ``qid`` (otherwise the
  text is the query's id), ``resultados`` or ``results`` (the document ids in the order shown,
  position 1 first), ``clicks`` (clicked document ids in log order; an entry may also be an
  object ``{"doc_id": ..., "timestamp": ...}``), optional ``session_id`` and ``timestamp``.
* **An events table**, one row per shown document or click, as CSV (with a header), JSONL
  or Parquet: ``action`` (``impression`` or ``click``), ``query_id`` and/or ``query``,
  ``doc_id``, ``position`` (1 = top), ``timestamp``, and the impression's identity:
  ``impression_id``, or else ``session_id`` together with the query. Rows of one
  impression need not be adjacent. A click row names its document by ``doc_id`` (its rank
  is the document's top-most shown position) or, without one, by ``position``.

Timestamps are seconds (numbers) or ISO 8601 texts. Any other field of an impression
(``device``, ``category``...) can be kept for grouping (``fields=``).

Decided edge cases (see also :mod:`evaltool.clicks`):

* a click on a document the impression did not show is ignored and counted
  (``clicks_not_shown``); so is a click whose impression has no shown document;
* a document clicked again within one impression counts once (``repeated_clicks``);
* an impression with an empty result list is kept apart (``empty_impressions``) and
  enters no metric;
* in an events table, a second document given for a position already filled is ignored
  and counted (``duplicate_positions``).

Memory grows with the number of shown documents (12 bytes each), clicks (20 bytes) and
distinct ids (their bytes and ~40 more), never with the bytes of the file: text is read line
by line or in Arrow record batches of bounded size, and rows are kept in fixed-size blocks.
Bad input raises :class:`~evaltool.errors.ParseError` with the file and line (Parquet:
the row), the text found and what was expected; nothing is returned half-read.

>>> import json, os, tempfile
>>> log = [{"consulta": "envíos a Quito", "resultados": ["HAW001", "HAW002", "HAW003"], "clicks": ["HAW002"]},
...        {"consulta": "tarifas", "resultados": ["HAW004", "HAW005"], "clicks": []}]
>>> with tempfile.TemporaryDirectory() as folder:
...     path = os.path.join(folder, "log.json")
...     with open(path, "w") as f:
...         _ = f.write(json.dumps(log))
...     clicks = read_click_log(path)
>>> clicks.format, clicks.n_impressions, clicks.query_ids, clicks.click_rank.tolist()
('json', 2, ['envíos a Quito', 'tarifas'], [2])
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from array import array
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

from evaltool.errors import EvaltoolError, ParseError
from evaltool.io import jsontext

QUERY_KEYS = ("consulta", "query")
QUERY_ID_KEYS = ("query_id", "qid")
RESULT_KEYS = ("resultados", "results")
ACTIONS = ("impression", "click")
EVENT_ID_COLUMNS = ("impression_id", "session_id")
RESERVED = {*QUERY_KEYS, *QUERY_ID_KEYS, *RESULT_KEYS, "clicks", "timestamp", "action", "doc_id", "position",
            "impression_id"}
BATCH_ROWS = 65536                 # impression objects (or JSONL event rows read by Python) per chunk
TABLE_BATCH_ROWS = 1 << 17         # events table rows per Arrow batch
CSV_BLOCK_BYTES = 1 << 24
JSON_BLOCK_BYTES = 1 << 20         # Arrow's JSON reader holds dozens of its blocks while parsing
PARQUET_MAGIC = b"PAR1"
ARROW_NESTING_LIMIT = 1000         # '[' and '{' on one line beyond which Arrow's JSON reader is not trusted
ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"


@dataclass
class ClickLog:
    """A click log as arrays over impressions (first-seen order).

    ``shown_*`` hold the shown documents of impression ``i`` at
    ``shown_offsets[i]:shown_offsets[i + 1]`` in position order; ``click_*`` its valid
    clicks (on a shown document, each document once) in log order at
    ``click_offsets[i]:click_offsets[i + 1]``. ``click_rank`` is the clicked document's
    top-most shown position. Times are seconds, ``nan`` where the log has none.
    ``counts`` says what was read, ignored and kept apart; ``fields`` maps each kept
    impression field to (value per impression, ``None`` where absent).
    """

    path: str
    format: str
    query_ids: list[str]
    doc_ids: object                 # a pyarrow string array: doc_ids[code]
    imp_query: np.ndarray
    imp_time: np.ndarray
    shown_offsets: np.ndarray
    shown_doc: np.ndarray
    shown_pos: np.ndarray
    click_offsets: np.ndarray
    click_doc: np.ndarray
    click_rank: np.ndarray
    click_time: np.ndarray
    counts: dict
    fields: dict = field(default_factory=dict)

    @property
    def n_impressions(self) -> int:
        return len(self.imp_query)

    @property
    def n_shown(self) -> np.ndarray:
        return np.diff(self.shown_offsets)

    @property
    def n_clicks(self) -> np.ndarray:
        return np.diff(self.click_offsets)

    @property
    def has_timestamps(self) -> bool:
        return bool(np.isfinite(self.imp_time).any() and np.isfinite(self.click_time).any())


# ---------------------------------------------------------------- shared building blocks


class NotUtf8(EvaltoolError):
    """An id of an events table (as Arrow read it) that is not UTF-8 text."""


class _Vocab:
    """Ids in first-seen order: ``code`` adds one (objects), ``codes`` a whole Arrow column (tables)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.list: list[str] = []
        self.table: _IdTable | None = None      # the ids, when added by columns

    def __len__(self) -> int:
        return len(self.list) if self.table is None else len(self.table)

    def code(self, key: str) -> int:
        found = self.index.get(key)
        if found is None:
            found = self.index[key] = len(self.list)
            self.list.append(key)
        return found

    def codes(self, column) -> np.ndarray:
        """int32 codes of an Arrow string column (-1 for null), without a Python object per id.

        Each batch's distinct ids are hashed (64-bit FNV-1a, vectorised) and looked up in a
        hash table of the ids seen so far; a hash match is confirmed by comparing the texts,
        and the rare id whose hash collides with another id's gets its code from a small
        dictionary instead, so codes are exact.
        """
        import pyarrow as pa
        import pyarrow.compute as pc

        encoded = pc.dictionary_encode(column)
        distinct = encoded.dictionary
        try:
            distinct.validate(full=True)   # Arrow's JSON and Parquet readers let invalid UTF-8 through
        except pa.ArrowInvalid as exc:
            raise NotUtf8(f"ids that are UTF-8 text ({exc})") from None
        if self.table is None:
            self.table = _IdTable()
        table = self.table
        hashes = _fnv1a(distinct)
        codes = table.find(hashes)
        found = codes >= 0
        collided = np.zeros(len(distinct), bool)
        if found.any():
            same = _bools(pc.equal(distinct.filter(pa.array(found)), table.texts(codes[found])))
            collided[np.flatnonzero(found)[~same]] = True
        new = ~found
        if new.any():
            _, first = np.unique(hashes[new], return_index=True)
            fresh = np.zeros(len(distinct), bool)
            fresh[np.flatnonzero(new)[first]] = True
            collided |= new & ~fresh                  # two new ids of this batch with one hash
            codes[fresh] = table.add(distinct.filter(pa.array(fresh)), hashes[fresh])
        for i in np.flatnonzero(collided).tolist():
            text = distinct[i].as_py()
            code = self.index.get(text)
            if code is None:
                code = self.index[text] = int(table.add(pa.array([text], pa.string()))[0])
            codes[i] = code
        lookup = np.append(codes, -1).astype(np.int32)
        return lookup[_ints(encoded.indices, len(distinct), np.int64)]

    @property
    def ids(self) -> list[str]:
        return self.list if self.table is None else self.table.as_arrow().to_pylist()

    def as_arrow(self):
        import pyarrow as pa

        return pa.array(self.list, pa.string()) if self.table is None else self.table.as_arrow()


class _Appendable:
    """A 1-d numpy array appended to in place, for arrays read while they grow (the ids' texts
    and hashes). It grows by a quarter with ``realloc``, which moves a large block's pages
    (``mremap``) rather than copying them, so growing never holds two copies (numpy zeroes the
    new room). Views (``values``) are valid until the next ``extend``: keep none across one."""

    def __init__(self, dtype, capacity: int = 1024) -> None:
        self.data = np.empty(capacity, dtype)
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def extend(self, values) -> None:
        m = len(values)
        if self.n + m > len(self.data):
            self.data.resize(max(self.n + m, len(self.data) + len(self.data) // 4), refcheck=False)
        self.data[self.n:self.n + m] = values
        self.n += m

    @property
    def values(self) -> np.ndarray:
        return self.data[:self.n]

    def release(self) -> np.ndarray:
        """The filled part as an array of its own, spare room given back; the buffer starts again empty."""
        out, self.data = self.data, np.empty(0, self.data.dtype)
        out.resize(self.n, refcheck=False)
        self.n = 0
        return out


class _Blocks:
    """A column only appended to, then taken whole once (shown rows, clicks): kept in blocks
    of a fixed size, each its own mapping, so nothing is copied while reading and the column
    is joined into one array a block at a time, each block freed once copied. With ``narrow``
    (positions), a block is stored in that smaller type until a value does not fit in it."""

    BLOCK = 1 << 20

    def __init__(self, dtype, narrow=None) -> None:
        self.dtype = np.dtype(dtype)
        self.narrow = None if narrow is None else np.iinfo(narrow)
        self.blocks: list[np.ndarray] = []
        self.n = 0

    def extend(self, values) -> None:
        values = np.asarray(values)
        if not len(values):
            return
        fits = self.narrow is not None and self.narrow.min <= values.min() and values.max() <= self.narrow.max
        done = 0
        while done < len(values):
            at = self.n % self.BLOCK
            if at == 0:
                self.blocks.append(np.empty(self.BLOCK, self.narrow.dtype if fits else self.dtype))
            elif not fits and self.blocks[-1].dtype != self.dtype:
                self.blocks[-1] = self.blocks[-1].astype(self.dtype)
            take = min(self.BLOCK - at, len(values) - done)
            self.blocks[-1][at:at + take] = values[done:done + take]
            done += take
            self.n += take

    def release(self) -> np.ndarray:
        """The whole column as one array; the blocks are gone."""
        out = np.empty(self.n, self.dtype)
        for i in range(len(self.blocks)):
            start = i * self.BLOCK
            out[start:start + self.BLOCK] = self.blocks[i][:min(self.BLOCK, self.n - start)]
            self.blocks[i] = None
        self.blocks, self.n = [], 0
        return out


class _IdTable:
    """Distinct ids by code — their UTF-8 bytes and offsets — and an open-addressing hash table
    (linear probing, at most half full) from 64-bit hash to code, probed a batch at a time.
    Memory: the ids' bytes, 8 bytes of offset and 8 of hash per id, 8 to 16 of table."""

    def __init__(self) -> None:
        self.offsets = _Appendable(np.int64)
        self.offsets.extend([0])
        self.bytes = _Appendable(np.uint8)
        self.hashes = _Appendable(np.uint64)    # by code (an id added without a hash: 0, never looked up)
        self.slots = np.full(1 << 12, -1, np.int32)
        self.n_placed = 0
        self.frozen = None

    def __len__(self) -> int:
        return len(self.offsets) - 1 if self.frozen is None else len(self.frozen)

    def _home(self, hashes: np.ndarray) -> np.ndarray:
        bits = len(self.slots).bit_length() - 1
        return (hashes >> np.uint64(64 - bits)).astype(np.int64)

    def find(self, hashes: np.ndarray) -> np.ndarray:
        """The code of each hash (int64), -1 where none is stored."""
        out = np.full(len(hashes), -1, np.int64)
        slot, mask = self._home(hashes), len(self.slots) - 1
        stored = self.hashes.values
        active = np.arange(len(hashes))
        while len(active):
            code = self.slots[slot[active]]
            filled = code >= 0
            hit = np.zeros(len(active), bool)
            hit[filled] = stored[code[filled]] == hashes[active[filled]]
            out[active[hit]] = code[hit]
            active = active[filled & ~hit]
            slot[active] = (slot[active] + 1) & mask
        return out

    def _place(self, hashes: np.ndarray, codes: np.ndarray) -> None:
        """Put each (hash, code) in the first free slot from the hash's home (one per slot a round)."""
        slot, mask = self._home(hashes), len(self.slots) - 1
        active = np.arange(len(hashes))
        while len(active):
            free = active[self.slots[slot[active]] < 0]
            _, first = np.unique(slot[free], return_index=True)
            won = free[first]
            self.slots[slot[won]] = codes[won]
            placed = np.zeros(len(hashes), bool)
            placed[won] = True
            active = active[~placed[active]]
            slot[active] = (slot[active] + 1) & mask

    def add(self, strings, hashes: np.ndarray | None = None) -> np.ndarray:
        """Store new ids (an Arrow string array) and their codes; with ``hashes``, ``find`` finds them."""
        start, n = len(self), len(strings)
        offsets, data = _string_buffers(strings)
        self.bytes.extend(data[offsets[0]:offsets[-1]])
        self.offsets.extend(offsets[1:].astype(np.int64) + (self.offsets.values[-1] - offsets[0]))
        codes = np.arange(start, start + n, dtype=np.int64)
        self.hashes.extend(np.zeros(n, np.uint64) if hashes is None else hashes)
        if hashes is not None:
            if 2 * (self.n_placed + n) > len(self.slots):
                size = len(self.slots)
                while 2 * (self.n_placed + n) > size:
                    size *= 2
                old, self.slots = self.slots, np.full(size, -1, np.int32)
                kept = old[old >= 0]
                del old
                self._place(self.hashes.values[kept], kept)
            self._place(hashes, codes)
            self.n_placed += n
        return codes

    def texts(self, codes: np.ndarray):
        """The ids of ``codes`` as an Arrow string array."""
        import pyarrow as pa
        import pyarrow.compute as pc

        view = pa.LargeStringArray.from_buffers(len(self), pa.py_buffer(self.offsets.values),
                                                pa.py_buffer(self.bytes.values))
        return pc.cast(view.take(pa.array(codes)), pa.string())

    def as_arrow(self):
        """All ids as an Arrow string array; the table takes no more ids after this."""
        import pyarrow as pa

        if self.frozen is None:
            n, offsets, data = len(self), self.offsets.release(), self.bytes.release()
            if offsets[-1] < 2 ** 31:
                self.frozen = pa.StringArray.from_buffers(n, pa.py_buffer(offsets.astype(np.int32)),
                                                          pa.py_buffer(data))
            else:
                self.frozen = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
            self.slots = self.hashes = None
        return self.frozen


FNV_OFFSET, FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)


def _string_buffers(strings) -> tuple[np.ndarray, np.ndarray]:
    """The int32 offsets (n + 1) and the bytes of an Arrow string array, as numpy views."""
    n = len(strings)
    buffers = strings.buffers()
    offsets = np.frombuffer(buffers[1], np.int32, count=n + 1, offset=strings.offset * 4)
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    return offsets, data


def _fnv1a(strings) -> np.ndarray:
    """64-bit FNV-1a of each string of an Arrow string array (no nulls), its length mixed in last."""
    offsets, data = _string_buffers(strings)
    n = len(strings)
    starts, lengths = offsets[:-1].astype(np.int64), np.diff(offsets).astype(np.int64)
    out = np.full(n, FNV_OFFSET, np.uint64)
    active = np.arange(n)
    j = 0
    with np.errstate(over="ignore"):
        while len(active):
            active = active[lengths[active] > j]
            out[active] = (out[active] ^ data[starts[active] + j].astype(np.uint64)) * FNV_PRIME
            j += 1
        return (out ^ lengths.astype(np.uint64)) * FNV_PRIME


def _ints(column, fill, dtype) -> np.ndarray:
    """An Arrow integer column as numpy, nulls as ``fill`` (without pyarrow's pandas shim)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from evaltool.io import columnar

    return columnar.numpy_column(pc.cast(pc.fill_null(column, fill), pa.from_numpy_dtype(np.dtype(dtype))), dtype)


def _bools(column) -> np.ndarray:
    """An Arrow boolean column as numpy, nulls as False."""
    import pyarrow.compute as pc

    from evaltool.io import columnar

    return columnar.bool_column(pc.fill_null(column, False))


def _floats(column) -> np.ndarray:
    """An Arrow numeric column as float64 numpy, nulls as nan (integers beyond 2**53 rounded)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from evaltool.io import columnar

    rounded = pa.types.is_integer(column.type)
    return columnar.numpy_column(pc.fill_null(pc.cast(column, pa.float64(), safe=not rounded), math.nan), np.float64)


class _Growing:
    """A numpy array that grows in place (per-impression facts, filled by index; new room holds ``fill``)."""

    def __init__(self, dtype, fill) -> None:
        self.data = np.full(1024, fill, dtype=dtype)
        self.fill = fill

    def ensure(self, size: int) -> np.ndarray:
        if size > len(self.data):
            old = len(self.data)
            self.data.resize(max(size, 2 * old), refcheck=False)
            self.data[old:] = self.fill
        return self.data


class _Builder:
    """Collects shown documents and clicks, then resolves clicks to ranks in one vectorised pass."""

    def __init__(self, path: str, fmt: str, fields: tuple[str, ...]) -> None:
        self.path, self.format, self.field_names = path, fmt, fields
        self.queries, self.docs, self.impression_keys = _Vocab(), _Vocab(), _Vocab()
        self.n_imp = 0
        self.imp_query = _Growing(np.int32, -1)
        self.imp_time = _Growing(np.float64, np.nan)
        self.field_vocab = {name: _Vocab() for name in fields}
        self.field_code = {name: _Growing(np.int32, -1) for name in fields}
        self.shown = (_Blocks(np.int32), _Blocks(np.int32), _Blocks(np.int32, narrow=np.uint8))   # imp, doc, pos
        self.clicks = (_Blocks(np.int32), _Blocks(np.int32), _Blocks(np.int32, narrow=np.uint8),
                       _Blocks(np.float64))                                                          # + time
        self.counts = {"events": 0, "clicks_read": 0, "clicks_not_shown": 0,
                       "repeated_clicks": 0, "duplicate_positions": 0}

    def new_impressions(self, n: int) -> np.ndarray:
        start = self.n_imp
        self.impressions_up_to(start + n)
        return np.arange(start, self.n_imp, dtype=np.int32)

    def impressions_up_to(self, n: int) -> None:
        self.n_imp = max(self.n_imp, n)
        self.imp_query.ensure(self.n_imp)
        self.imp_time.ensure(self.n_imp)
        for grow in self.field_code.values():
            grow.ensure(self.n_imp)

    def add_shown(self, imp, doc, pos) -> None:
        for column, values in zip(self.shown, (imp, doc, pos)):
            column.extend(values)

    def add_clicks(self, imp, doc, pos, time) -> None:
        """``doc`` -1: the click names a position only; ``pos`` 0: a document only."""
        for column, values in zip(self.clicks, (imp, doc, pos, time)):
            column.extend(values)

    def _shown_rows(self):
        """Shown rows in (impression, position) order; a second row for a filled position is dropped."""
        imp, doc, pos = (column.release() for column in self.shown)
        if len(imp) > 1:
            same = imp[1:] == imp[:-1]
            if not (np.all(imp[1:] >= imp[:-1]) and np.all(pos[1:][same] > pos[:-1][same])):
                order = np.lexsort((pos, imp))             # stable: log order among rows of one position
                imp, doc, pos = imp[order], doc[order], pos[order]
                del order
                same = imp[1:] == imp[:-1]
            repeat = np.zeros(len(imp), bool)
            repeat[1:] = same & (pos[1:] == pos[:-1])
            if repeat.any():
                self.counts["duplicate_positions"] += int(repeat.sum())
                keep = ~repeat
                imp, doc, pos = imp[keep], doc[keep], pos[keep]
        return imp, doc, pos

    @staticmethod
    def _resolve(c_imp, c_doc, c_pos, starts, n_shown, doc, pos) -> np.ndarray:
        """Rank of each click: its document's top-most shown position (or, without a document, the
        position it names when something was shown there); 0 when the impression did not show it.

        Walks the shown lists in step: the j-th row of every impression still searched, so the
        memory is a few arrays the size of the clicks, whatever the size of the log.
        """
        rank = np.zeros(len(c_imp), np.int32)
        active = np.arange(len(c_imp))
        j = 0
        while len(active):
            where = c_imp[active]
            active = active[j < n_shown[where]]
            rows = starts[c_imp[active]] + j
            wanted = c_doc[active]
            match = np.where(wanted >= 0, doc[rows] == wanted, pos[rows] == c_pos[active])
            hit = active[match]
            rank[hit] = pos[rows[match]]
            c_doc[hit] = doc[rows[match]]
            active = active[~match]
            j += 1
        return rank

    def finish(self) -> ClickLog:
        n = self.n_imp
        self.impression_keys = None                 # the hash tables are done with before the rows are joined
        doc_ids = self.docs.as_arrow()
        imp, doc, pos = self._shown_rows()
        n_shown = np.bincount(imp, minlength=n)
        shown_offsets = np.zeros(n + 1, np.int64)
        np.cumsum(n_shown, out=shown_offsets[1:])
        del imp
        c_imp, c_doc, c_pos, c_time = (column.release() for column in self.clicks)
        c_rank = self._resolve(c_imp, c_doc, c_pos, shown_offsets[:-1], n_shown, doc, pos)
        del c_pos
        valid = c_rank > 0
        self.counts["clicks_not_shown"] += int(len(valid) - valid.sum())
        c_imp, c_doc, c_rank, c_time = c_imp[valid], c_doc[valid], c_rank[valid], c_time[valid]
        # each document once per impression (its first click), clicks grouped by impression in log order
        pair = c_imp.astype(np.int64) * max(len(doc_ids), 1) + c_doc
        _, first_seen = np.unique(pair, return_index=True)
        self.counts["repeated_clicks"] += int(len(pair) - len(first_seen))
        keep = np.sort(first_seen)
        del pair, first_seen
        order = keep[np.argsort(c_imp[keep], kind="stable")]
        c_imp, c_doc, c_rank, c_time = c_imp[order], c_doc[order], c_rank[order], c_time[order]
        click_offsets = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(c_imp, minlength=n), out=click_offsets[1:])

        self.counts["impressions"] = int(np.count_nonzero(n_shown))
        # an events table cannot show an empty list: an impression key without shown rows came from clicks alone
        self.counts["empty_impressions"] = 0 if self.format.startswith("events") else n - self.counts["impressions"]
        self.counts["clicks"] = len(c_imp)
        self.counts["queries"] = len(self.queries)
        fields = {}
        for name in self.field_names:
            vocab, codes = self.field_vocab[name].ids, self.field_code[name].data[:n]
            fields[name] = [vocab[c] if c >= 0 else None for c in codes.tolist()]
        return ClickLog(self.path, self.format, self.queries.ids, doc_ids, self.imp_query.data[:n].copy(),
                        self.imp_time.data[:n].copy(), shown_offsets, doc, pos, click_offsets, c_doc, c_rank,
                        c_time, self.counts, fields)


# ---------------------------------------------------------------- values


def _id_text(value) -> str | None:
    """A document or query id as text: strings as they are, integers written out; else None."""
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _seconds(value) -> float | None:
    """A timestamp as seconds: a number, or an ISO 8601 text (naive times are UTC); None if neither."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=timezone.utc)
        return stamp.timestamp()
    return None


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


POSITION_MAX = 2**31 - 1   # positions are stored as int32


def _position(value) -> int | None:
    """A 1-based position: a positive integer (or its text) up to POSITION_MAX; None when it is not one.

    >>> _position(3), _position("+3"), _position(3.0), _position("9" * 5000), _position(2**40), _position(0)
    (3, 3, 3, None, None, None)
    """
    if isinstance(value, str):
        digits = value.strip().lstrip("+")
        value = int(digits) if digits.isascii() and digits.isdigit() and len(digits) <= 10 else None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= POSITION_MAX:
        return value
    return None


POSITION_EXPECTED = "a position that is a whole number of 1 or more (1 = the top result)"
CLICK_ID_EXPECTED = ("a click that names its impression (an impression_id, or a session_id with query_id or "
                     "query)")


# ---------------------------------------------------------------- impression objects


class _ObjectReader:
    """Seed-style impression objects, one at a time, into the builder (buffered in arrays)."""

    def __init__(self, builder: _Builder) -> None:
        self.b = builder
        self._reset()

    def _reset(self) -> None:
        self.imp_query, self.imp_time = array("i"), array("d")
        self.fields = {name: array("i") for name in self.b.field_names}
        self.s_imp, self.s_doc, self.s_pos = array("i"), array("i"), array("i")
        self.c_imp, self.c_doc, self.c_time = array("i"), array("i"), array("d")

    def flush(self) -> None:
        b = self.b
        codes = b.new_impressions(len(self.imp_query))
        b.imp_query.data[codes] = np.frombuffer(self.imp_query, np.int32)
        b.imp_time.data[codes] = np.frombuffer(self.imp_time, np.float64)
        for name, values in self.fields.items():
            b.field_code[name].data[codes] = np.frombuffer(values, np.int32)
        offset = int(codes[0]) if len(codes) else 0
        b.add_shown(np.frombuffer(self.s_imp, np.int32) + offset, np.frombuffer(self.s_doc, np.int32),
                    np.frombuffer(self.s_pos, np.int32))
        c_imp = np.frombuffer(self.c_imp, np.int32) + offset
        b.add_clicks(c_imp, np.frombuffer(self.c_doc, np.int32), np.zeros(len(c_imp), np.int32),
                     np.frombuffer(self.c_time, np.float64))
        self._reset()

    def add(self, obj, line) -> None:
        path, b = self.b.path, self.b
        text = lambda: _short(json.dumps(obj, ensure_ascii=False))  # noqa: E731
        if not isinstance(obj, dict):
            raise ParseError(path, line, text(), "an impression object with 'consulta' or 'query', "
                                                 "'resultados' or 'results', and 'clicks'")
        qid = next((_id_text(obj[k]) for k in QUERY_ID_KEYS if k in obj), None) or next(
            (_id_text(obj[k]) for k in QUERY_KEYS if k in obj), None)
        if qid is None:
            raise ParseError(path, line, text(), "a query: 'query_id', 'consulta' or 'query' (a non-empty text)")
        results = next((obj[k] for k in RESULT_KEYS if k in obj), None)
        if not isinstance(results, list):
            raise ParseError(path, line, text(), "'resultados' or 'results': the list of document ids shown")
        clicks = obj.get("clicks", [])
        if not isinstance(clicks, list):
            raise ParseError(path, line, text(), "'clicks': a list of clicked document ids")
        stamp = obj.get("timestamp")
        when = _seconds(stamp) if stamp is not None else math.nan
        if when is None:
            raise ParseError(path, line, text(), "'timestamp': seconds or an ISO 8601 time")
        local = len(self.imp_query)
        self.imp_query.append(b.queries.code(qid))
        self.imp_time.append(when)
        for name in b.field_names:
            value = obj.get(name)
            self.fields[name].append(-1 if value is None else b.field_vocab[name].code(
                value if isinstance(value, str) else json.dumps(value)))
        for position, doc in enumerate(results, 1):
            doc_id = _id_text(doc)
            if doc_id is None:
                raise ParseError(path, line, _short(json.dumps(doc)), "document ids in the result list: texts or "
                                                                      "whole numbers")
            self.s_imp.append(local)
            self.s_doc.append(b.docs.code(doc_id))
            self.s_pos.append(position)
        for click in clicks:
            when = math.nan
            if isinstance(click, dict):
                doc_id = _id_text(click.get("doc_id"))
                if "timestamp" in click:
                    when = _seconds(click["timestamp"])
                    if when is None:
                        raise ParseError(path, line, _short(json.dumps(click)),
                                         "a click timestamp: seconds or an ISO 8601 time")
            else:
                doc_id = _id_text(click)
            if doc_id is None:
                raise ParseError(path, line, _short(json.dumps(click)), "a clicked document id (a text or whole "
                                                                        "number, or {\"doc_id\": ...})")
            self.c_imp.append(local)
            self.c_doc.append(b.docs.code(doc_id))
            self.c_time.append(when)
        b.counts["clicks_read"] += len(clicks)
        b.counts["events"] += 1 + len(clicks)
        if len(self.imp_query) >= BATCH_ROWS:
            self.flush()


def _json_array(path: str, text: str, reader: _ObjectReader) -> None:
    """Walk a JSON array element by element, so an error can name the element's line."""
    decoder = json.JSONDecoder()
    at = text.index("[") + 1
    line, counted = 1, 0

    def line_at(offset: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, offset)
        counted = offset
        return line

    def skip(offset: int) -> int:
        while offset < len(text) and text[offset] in " \t\r\n":
            offset += 1
        return offset

    at = skip(at)
    escapes = _SURROGATE_ESCAPE.search(text) is not None
    if at < len(text) and text[at] == "]":
        at += 1
    else:
        while True:
            try:
                obj, end = jsontext.raw_decode(decoder, text, at)
            except json.JSONDecodeError as exc:
                raise ParseError(path, line_at(exc.pos), _short(text[exc.pos: exc.pos + 40]),
                                 f"a JSON value ({exc.msg})") from None
            if escapes:
                _check_surrogates(path, line_at(at), text[at:end], obj)
            reader.add(obj, line_at(at))
            at = skip(end)
            if at < len(text) and text[at] == ",":
                at = skip(at + 1)
                continue
            if at < len(text) and text[at] == "]":
                at += 1
                break
            if at >= len(text):
                raise ParseError(path, line_at(at), None, "',' or ']' in the JSON array (the file ends before the "
                                                          "array is closed)")
            raise ParseError(path, line_at(at), _short(text[at: at + 40]), "',' or ']' in the JSON array")
    at = skip(at)
    if at < len(text):
        raise ParseError(path, line_at(at), _short(text[at: at + 40]), "nothing after the JSON array")


# ---------------------------------------------------------------- events tables


class _EventBatches:
    """Rows of an events table, a record batch at a time, validated and encoded with vectorised code."""

    def __init__(self, builder: _Builder, columns: list[str], line_of) -> None:
        self.b = builder
        self.line_of = line_of                 # (row number from 0) -> line text for messages
        missing = [c for c in ("action",) if c not in columns]
        if not any(c in columns for c in ("query_id", "query")):
            missing.append("query_id or query")
        if not any(c in columns for c in EVENT_ID_COLUMNS):
            missing.append("impression_id or session_id")
        if "doc_id" not in columns and "position" not in columns:
            missing.append("doc_id or position")
        if missing:
            raise ParseError(builder.path, line_of(None)[0], ", ".join(columns),
                             f"the events table's columns; missing: {'; '.join(missing)}")
        self.columns = columns

    def _fail(self, row: int, text, expected: str):
        where, found = self.line_of(row)
        if found is None and text is not None:
            found = str(text)
        raise ParseError(self.b.path, where, found, expected)

    def add(self, batch) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        b = self.b
        n = batch.num_rows
        if n == 0:
            return
        cols = {name: batch.column(name) for name in batch.schema.names if name in self.columns}

        def text_column(name):
            column = cols.get(name)
            if column is None or pa.types.is_null(column.type):
                return pa.nulls(n, pa.string())
            if pa.types.is_large_string(column.type) or pa.types.is_dictionary(column.type):
                column = pc.cast(column, pa.string())
            if pa.types.is_string(column.type):
                blank = _bools(pc.equal(pc.utf8_trim_whitespace(column), ""))
                return pc.if_else(pa.array(blank), pa.scalar(None, pa.string()), column) if blank.any() else column
            if pa.types.is_integer(column.type):
                return pc.cast(column, pa.string())
            self._fail(int(np.argmax(~_bools(pc.is_null(column)))), None, f"{name}: a text or a whole number")

        def first(mask: np.ndarray, text, expected: str) -> None:
            if mask.any():
                row = int(np.argmax(mask))
                self._fail(row, text(row) if callable(text) else text, expected)

        action = text_column("action")
        is_imp = _bools(pc.equal(action, "impression"))
        is_click = _bools(pc.equal(action, "click"))
        first(~(is_imp | is_click), None, "action 'impression' or 'click'")

        query = text_column("query_id") if "query_id" in cols else text_column("query")
        if "query_id" in cols and "query" in cols:
            query = pc.coalesce(query, text_column("query"))
        if "impression_id" in cols:
            key = text_column("impression_id")
        else:
            key = pc.binary_join_element_wise(text_column("session_id"), query, "\x1f")
        no_key = _bools(pc.is_null(key))
        if no_key.any():
            row = int(np.argmax(no_key))
            self._fail(row, None, CLICK_ID_EXPECTED if is_click[row] else CLICK_ID_EXPECTED.replace(
                "a click", "an impression row"))
        first(_bools(pc.is_null(query)) & is_imp, None, "an impression row with its query_id or query")

        doc = text_column("doc_id")
        doc_null = _bools(pc.is_null(doc))
        position = self._positions(cols.get("position"), n)
        no_pos = position == 0
        first(is_imp & (doc_null | no_pos), None, "an impression row with doc_id and position")
        first(is_click & doc_null & no_pos, None, "a click row with doc_id or position")
        stamps = self._timestamps(cols.get("timestamp"), n)

        imp = b.impression_keys.codes(key)
        b.impressions_up_to(len(b.impression_keys))
        q_codes = b.queries.codes(query)
        unset = (q_codes >= 0) & (b.imp_query.data[imp] < 0)
        b.imp_query.data[imp[unset]] = q_codes[unset]
        for name in b.field_names:
            if name in cols:
                values = b.field_vocab[name].codes(text_column(name))
                store = b.field_code[name].data
                open_ = (values >= 0) & (store[imp] < 0)
                store[imp[open_]] = values[open_]
        np.fmin.at(b.imp_time.data, imp[is_imp], stamps[is_imp])
        d_codes = b.docs.codes(doc)
        b.add_shown(imp[is_imp], d_codes[is_imp], position[is_imp])
        b.add_clicks(imp[is_click], d_codes[is_click], position[is_click], stamps[is_click])
        b.counts["events"] += n
        b.counts["clicks_read"] += int(is_click.sum())

    def _positions(self, column, n: int) -> np.ndarray:
        """1-based positions as int32, 0 where none is given; a bad one stops with its row."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if column is None or pa.types.is_null(column.type):
            return np.zeros(n, np.int32)
        if pa.types.is_large_string(column.type):
            column = pc.cast(column, pa.string())
        if pa.types.is_string(column.type):
            texts = pc.utf8_trim_whitespace(column)
            blank = _bools(pc.equal(texts, "")) | _bools(pc.is_null(texts))
            ok = _bools(pc.match_substring_regex(texts, r"^\+?[0-9]{1,9}$"))
            bad = ~(ok | blank)
            if bad.any():
                row = int(np.argmax(bad))
                self._fail(row, column[row].as_py(), POSITION_EXPECTED)
            column = pc.cast(pc.if_else(pa.array(ok), texts, pa.scalar(None, pa.string())), pa.int64())
        elif pa.types.is_floating(column.type):
            values = _floats(column)
            bad = ~np.isnan(values) & ((values != np.floor(values)) | np.isinf(values))
            if bad.any():
                row = int(np.argmax(bad))
                self._fail(row, column[row].as_py(), POSITION_EXPECTED)
            column = pc.cast(column, pa.int64(), safe=False)
        elif not pa.types.is_integer(column.type):
            self._fail(int(np.argmax(~_bools(pc.is_null(column)))), None, POSITION_EXPECTED)
        given = ~_bools(pc.is_null(column))
        values = _ints(column, 0, np.int64)
        bad = given & ((values < 1) | (values > np.iinfo(np.int32).max))
        if bad.any():
            row = int(np.argmax(bad))
            self._fail(row, int(values[row]), POSITION_EXPECTED)
        return values.astype(np.int32)

    def _timestamps(self, column, n: int) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        if column is None or pa.types.is_null(column.type):
            return np.full(n, np.nan)
        if pa.types.is_timestamp(column.type):
            micros = _ints(pc.cast(pc.cast(column, pa.timestamp("us", column.type.tz)), pa.int64()), 0, np.int64)
            return np.where(_bools(pc.is_null(column)), np.nan, micros / 1e6)
        if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
            return _floats(column)
        if pa.types.is_large_string(column.type):
            column = pc.cast(column, pa.string())
        if pa.types.is_string(column.type):
            try:
                return _floats(column)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
            out = np.full(n, np.nan)
            for row, value in enumerate(column.to_pylist()):
                if value is None or not value.strip():
                    continue
                try:
                    out[row] = float(value)
                    continue
                except ValueError:
                    pass
                seconds = _seconds(value)
                if seconds is None:
                    self._fail(row, value, "a timestamp: seconds or an ISO 8601 time")
                out[row] = seconds
            return out
        self._fail(0, None, "a timestamp: seconds or an ISO 8601 time")


def _csv_line_of(path: str, opener):
    """Line number (and text) of a CSV data row, found again by a plain reader only when a row is bad."""

    def line_of(row):
        if row is None:
            return 1, None
        with opener() as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="")
            reader = csv.reader(text)
            seen = -1
            try:
                next(reader, None)
                for cells in reader:
                    if not any(cells):
                        continue
                    seen += 1
                    if seen == row:
                        return reader.line_num, _short(",".join(cells))
            except csv.Error:   # Python's csv module reads less than Arrow's (fields up to 128 KB)
                return None, None
            return reader.line_num, None

    return line_of


def _read_events_csv(path: str, opener, builder: _Builder) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    line_of = _csv_line_of(path, opener)
    with opener() as raw:
        try:
            header_line = _utf8(path, 1, raw.readline()).strip()
        except OSError as exc:
            raise EvaltoolError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        columns = [c.strip() for c in next(csv.reader([header_line]), [])]
    except csv.Error as exc:
        raise ParseError(path, 1, _short(header_line), f"a header line of column names ({exc})") from None
    if len(set(columns)) != len(columns) or not all(columns):
        raise ParseError(path, 1, _short(header_line), "a header line of distinct column names")
    events = _EventBatches(builder, columns, line_of)
    types = {c: pa.string() for c in columns}
    with opener() as raw:
        try:
            reader = pacsv.open_csv(raw, read_options=pacsv.ReadOptions(block_size=CSV_BLOCK_BYTES, use_threads=False),
                                    convert_options=pacsv.ConvertOptions(column_types=types,
                                                                         strings_can_be_null=True))
            start = 0
            for batch in reader:
                events.line_of = lambda row, base=start: line_of(None if row is None else base + row)
                events.add(batch)
                start += batch.num_rows
        except pa.ArrowInvalid as exc:
            raise ParseError(path, _first_bad_csv_line(opener, len(columns)), None,
                             f"{len(columns)} comma-separated fields as in the header ({exc})") from None


def _first_bad_csv_line(opener, width: int):
    """The first line with another number of fields than ``width``, or that Python's csv module
    cannot read either (a field over its 128 KB limit, a newline in an unquoted field)."""
    with opener() as raw:
        reader = csv.reader(io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline=""))
        try:
            for cells in reader:
                if any(cells) and len(cells) != width:
                    return reader.line_num
        except csv.Error:
            return reader.line_num + 1
    return None


def _first_line(exc: Exception) -> str:
    """What a library said, on one line (Arrow's messages may end in a newline or go on for several)."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _read_events_parquet(path: str, builder: _Builder) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise ParseError(path, None, None, f"a readable Parquet file ({_first_line(exc)})") from None
    columns = handle.schema_arrow.names
    start = 0

    def line_of(row):
        return (None, None) if row is None else (f"row {start + row + 1}", None)

    events = _EventBatches(builder, columns, line_of)
    wanted = [c for c in columns if c in RESERVED or c in ("session_id", "query_id") or c in builder.field_names]
    # a reader per row group: one reader over the whole file keeps decoded pages of the row
    # groups it has passed (~100 MB more at 10M events)
    try:
        for group in range(handle.num_row_groups):
            for batch in handle.iter_batches(batch_size=TABLE_BATCH_ROWS, row_groups=[group], columns=wanted,
                                             use_threads=False):
                events.add(batch)
                start += batch.num_rows
    except (pa.ArrowException, OSError) as exc:   # a damaged page, a column chunk that cannot be decoded
        raise ParseError(path, f"row {start + 1}", None, f"a readable Parquet file ({_first_line(exc)})") from None


class _JsonlEvents:
    """Events as JSON lines, gathered into record batches for the vectorised checks."""

    def __init__(self, builder: _Builder) -> None:
        self.b = builder
        self.events: _EventBatches | None = None
        self.rows: list[dict] = []
        self.lines: list[int] = []
        self.texts: list[str] = []

    def add(self, obj: dict, number: int, text: str) -> None:
        if self.events is None:
            self.events = _EventBatches(self.b, list(obj), lambda row: (number, _short(text)))
        self.rows.append(obj)
        self.lines.append(number)
        self.texts.append(text)
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if not self.rows:
            return
        names = list(dict.fromkeys(k for row in self.rows for k in row))
        events = self.events
        lines, texts = self.lines, self.texts
        events.line_of = lambda row: (None, None) if row is None else (lines[row], _short(texts[row]))
        events.columns = list(dict.fromkeys([*events.columns, *names]))
        data = {}
        for name in names:
            values = [row.get(name) for row in self.rows]
            data[name] = self._column(name, values, lines, texts)
        events.add(pa.RecordBatch.from_pydict(data))
        self.rows, self.lines, self.texts = [], [], []

    def _column(self, name, values, lines, texts):
        import pyarrow as pa

        if name == "timestamp":
            out = []
            for i, v in enumerate(values):
                seconds = None if v is None else _seconds(v)
                if v is not None and seconds is None:
                    raise ParseError(self.b.path, lines[i], _short(texts[i]), "a timestamp: seconds or an ISO 8601 time")
                out.append(seconds)
            return pa.array(out, pa.float64())
        if name == "position":
            out = []
            for i, v in enumerate(values):
                pos = None if v is None else _position(v)
                if v is not None and pos is None:
                    raise ParseError(self.b.path, lines[i], _short(texts[i]), POSITION_EXPECTED)
                out.append(pos)
            return pa.array(out, pa.int64())
        out = []
        for i, v in enumerate(values):
            if v is None or isinstance(v, str):
                out.append(v)
            elif isinstance(v, int) and not isinstance(v, bool):
                out.append(str(v))
            elif name in RESERVED or name == "session_id":
                raise ParseError(self.b.path, lines[i], _short(texts[i]), f"{name}: a text or a whole number")
            else:
                out.append(json.dumps(v))
        return pa.array(out, pa.string())


# ---------------------------------------------------------------- the entry point


def _opener(path: str):
    """The file's magic bytes, and a function returning a fresh binary stream of its content
    (decompressed as every reader does, :func:`evaltool.io.common.reading`: a broken compressed
    stream is a ParseError wherever it is read; Parquet as stored)."""
    from evaltool.io.common import read_head, reading

    magic = read_head(path, 4)
    if magic == PARQUET_MAGIC:
        return magic, lambda: open(path, "rb")
    return magic, lambda: reading(path)


def _lines(path: str, opener):
    """(line number, text) of each non-blank line; a line that is not UTF-8 is a ParseError (Arrow,
    which holds the ids, takes nothing else)."""
    with opener() as raw:
        try:
            for number, data in enumerate(raw, 1):
                text = _utf8(path, number, data).rstrip("\r\n")
                if text.strip():
                    yield number, text
        except (OSError, EOFError) as exc:
            raise ParseError(path, None, None, f"a readable file ({exc})") from None


def _utf8(path: str, line: int, data: bytes) -> str:
    """``data`` (line ``line`` on, of ``path``) as text; invalid UTF-8 is a ParseError naming its line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line += data.count(b"\n", 0, exc.start)
        start = data.rfind(b"\n", 0, exc.start) + 1
        raise ParseError(path, line, _short(data[start:exc.start + 40].decode("utf-8", "replace").split("\n")[0]),
                         f"UTF-8 text ({exc.reason} at byte {exc.start - start + 1} of the line)") from None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")   # \ud800 to \udfff: half of a UTF-16 pair


def _check_surrogates(path: str, line, text: str, obj) -> None:
    """Refuse a string with half a surrogate pair ("\\ud800" alone): it has no UTF-8 spelling."""
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ParseError(path, line, _short(text), "text with whole characters (a \\ud800-\\udfff escape "
                                                   "is half of a surrogate pair, and its other half is missing)") from None


def layout_of_first_line(text: str) -> str:
    """The layout a log's first non-blank line announces (Parquet is told by its magic bytes)."""
    head = text.lstrip()
    if head.startswith("["):
        return "json"
    if head.startswith("{"):
        try:
            obj = jsontext.loads(text)
        except json.JSONDecodeError:
            return "jsonl"              # the reader names the line
        return "events-jsonl" if isinstance(obj, dict) and "action" in obj else "jsonl"
    return "events-csv"


def sniff_layout(path: str) -> str:
    """``json``, ``jsonl`` (impression objects), ``events-jsonl``, ``events-csv`` or ``events-parquet``."""
    magic, opener = _opener(path)
    if magic == PARQUET_MAGIC or path.endswith((".parquet", ".pq")):
        return "events-parquet"
    for _, text in _lines(path, opener):
        return layout_of_first_line(text)
    raise ParseError(path, None, None, "a click log: impression objects (JSON or JSONL) or an events table "
                                       "(CSV, JSONL, Parquet); the file is empty")


def release_freed_memory() -> None:
    """Make freed memory go back to the operating system while a big log is read.

    Reading a 10M-event table allocates and frees buffers of growing size batch after
    batch. Arrow's default allocator (mimalloc) keeps freed memory for reuse, and glibc's
    malloc raises its mmap threshold after each large free, so both hold on to hundreds
    of megabytes that are no longer used. For the command line (one log per process) the
    system allocator for Arrow and a fixed mmap threshold keep the peak near what is
    live. Arrow's C++ code (the Parquet and JSON readers, compute kernels) takes its
    allocator from ``ARROW_DEFAULT_MEMORY_POOL``, read once when pyarrow is first loaded,
    so the variable is set for that moment (and restored) when pyarrow is not loaded yet;
    ``pyarrow.set_memory_pool`` alone reaches only what Python allocates. Process-wide: a
    library caller decides for itself whether to call this.
    """
    import ctypes
    import ctypes.util
    import sys

    if "pyarrow" not in sys.modules:
        before = os.environ.get(ARROW_POOL_VARIABLE)
        os.environ[ARROW_POOL_VARIABLE] = "system"
        try:
            import pyarrow as pa

            pa.default_memory_pool()
        finally:
            if before is None:
                del os.environ[ARROW_POOL_VARIABLE]
            else:
                os.environ[ARROW_POOL_VARIABLE] = before
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    name = ctypes.util.find_library("c")
    if name:
        try:
            libc = ctypes.CDLL(name)
            libc.mallopt(-3, 128 * 1024)      # M_MMAP_THRESHOLD: fixed, no longer raised by each large free
        except (OSError, AttributeError):     # not glibc: nothing to tune
            pass


def read_click_log(log, fields: tuple[str, ...] | list[str] = ()) -> ClickLog:
    """Read a click log file (any layout of the module docstring), or a list of impression dicts.

    ``fields`` names impression fields to keep (for grouping). See the module docstring
    for the layouts and the edge-case rules.
    """
    fields = tuple(fields)
    if isinstance(log, ClickLog):
        return log
    if isinstance(log, (list, tuple)):
        builder = _Builder("<list>", "records", fields)
        reader = _ObjectReader(builder)
        for i, obj in enumerate(log):
            reader.add(obj, f"item {i}")
        reader.flush()
        return builder.finish()
    if not isinstance(log, (str, os.PathLike)):
        raise EvaltoolError(f"a click log is a path or a list of impression dicts, not {type(log).__name__}")
    path = os.fspath(log)
    layout = sniff_layout(path)
    _, opener = _opener(path)
    builder = _Builder(path, layout, fields)
    if layout == "events-parquet":
        try:
            _read_events_parquet(path, builder)
        except NotUtf8 as exc:
            raise ParseError(path, None, None, str(exc)) from None
    elif layout == "events-csv":
        _read_events_csv(path, opener, builder)
    elif layout == "json":
        with opener() as raw:
            text = _utf8(path, 1, raw.read())
        reader = _ObjectReader(builder)
        _json_array(path, text, reader)
        del text
        reader.flush()
    elif layout == "events-jsonl":
        import pyarrow as pa

        try:
            _read_events_jsonl_arrow(opener, builder)
        except (EvaltoolError, pa.ArrowException, UnicodeError):   # the line reader decides, and names the line
            builder = _Builder(path, layout, fields)
            _read_jsonl(path, opener, builder, layout)
    else:
        _read_jsonl(path, opener, builder, layout)
    return builder.finish()


def _read_events_jsonl_arrow(opener, builder: _Builder) -> None:
    """JSONL events through Arrow's block reader (fast); any failure is left to the line reader.

    The reader's memory grows with its block (several dozen blocks' worth in flight: ~200 MB
    at 4 MB blocks), so blocks are small and their batches are gathered into bigger ones for
    the per-batch work."""
    import pyarrow.json as pajson

    with opener() as raw:
        options = pajson.ReadOptions(block_size=JSON_BLOCK_BYTES, use_threads=False)
        events = None
        for batch in _gathered(pajson.open_json(_ShallowLines(raw), read_options=options), TABLE_BATCH_ROWS):
            if events is None:
                events = _EventBatches(builder, batch.schema.names, lambda row: (None, None))
            events.add(batch)


class _TooDeepForArrow(EvaltoolError):
    """A line that might nest deeper than Arrow's JSON reader goes (the line reader takes the log)."""


class _ShallowLines(io.RawIOBase):
    """A binary stream passed through unchanged, refusing (:class:`_TooDeepForArrow`) a line
    with :data:`ARROW_NESTING_LIMIT` or more ``[`` and ``{``: Arrow's JSON reader (RapidJSON)
    recurses once per level on the C stack and crashes the process (a segmentation fault)
    on a line nested about 20,000 deep. A line that deep has at least as many bytes, so
    only long lines are counted; event lines are a hundred bytes or so, and the cost is one
    pass of numpy over the bytes looking for a newline in every 500. The count bounds the depth from above
    (brackets inside strings count too): a refused line goes to the line reader, which
    parses it with Python's ``json`` and names it when it really is too deep.
    """

    def __init__(self, raw) -> None:
        super().__init__()
        self.raw = raw
        self.line_bytes = 0       # of the line not ended yet, read so far
        self.line_openers = 0     # its '[' and '{' so far
        self.scratch = np.empty(0, dtype=bool)

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        if data:
            self._check(data)
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def _check(self, data: bytes) -> None:
        first = data.find(b"\n")
        if first >= 0 and self.line_bytes + first < ARROW_NESTING_LIMIT and not self._long_line_inside(data):
            last = data.rfind(b"\n") + 1          # the common case: no line is long, only the last goes on
            self.line_bytes = len(data) - last
            self.line_openers = data.count(b"[", last) + data.count(b"{", last)
            return
        self._check_each_line(data)

    def _long_line_inside(self, data: bytes) -> bool:
        """Might ``data`` hold a line of ARROW_NESTING_LIMIT bytes or more? Such a line covers a whole
        aligned block of half that many bytes, so it is enough that every block has a newline.
        The comparison goes into a buffer kept from read to read: a new one for each block of
        bytes would be fresh pages from the system each time, and cost more than the comparison."""
        size = ARROW_NESTING_LIMIT // 2
        whole = len(data) // size * size
        if len(self.scratch) < whole:
            self.scratch = np.empty(whole, dtype=bool)
        blocks = np.frombuffer(data, dtype=np.uint8, count=whole).reshape(-1, size)
        newlines = np.equal(blocks, 10, out=self.scratch[:whole].reshape(-1, size))
        return not newlines.any(axis=1).all()

    def _check_each_line(self, data: bytes) -> None:
        ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        starts = np.concatenate(([0], ends + 1))
        stops = np.concatenate((ends, [len(data)]))
        lengths = stops - starts
        lengths[0] += self.line_bytes
        for i in np.flatnonzero(lengths >= ARROW_NESTING_LIMIT):
            if self._openers(data, int(starts[i]), int(stops[i]), i == 0) >= ARROW_NESTING_LIMIT:
                raise _TooDeepForArrow("a line with many '[' or '{'")
        last = len(starts) - 1
        self.line_openers = self._openers(data, int(starts[last]), len(data), last == 0)
        self.line_bytes = int(lengths[last])

    def _openers(self, data: bytes, start: int, stop: int, continued: bool) -> int:
        return data.count(b"[", start, stop) + data.count(b"{", start, stop) + (self.line_openers if continued else 0)


def _gathered(batches, rows: int):
    """Record batches joined into batches of at least ``rows`` rows (the last may have fewer)."""
    import pyarrow as pa

    pending, count = [], 0
    for batch in batches:
        pending.append(batch)
        count += batch.num_rows
        if count >= rows:
            yield _joined_batches(pa, pending)
            pending, count = [], 0
    if count:
        yield _joined_batches(pa, pending)


def _joined_batches(pa, batches):
    if len(batches) == 1:
        return batches[0]
    table = pa.Table.from_batches(batches).combine_chunks()
    batches.clear()
    return table.to_batches()[0]


def _read_jsonl(path: str, opener, builder: _Builder, layout: str) -> None:
    """JSONL, a line at a time: impression objects, or event rows gathered into batches."""
    objects = _ObjectReader(builder) if layout == "jsonl" else None
    events = _JsonlEvents(builder) if layout == "events-jsonl" else None
    for number, text in _lines(path, opener):
        try:
            obj = jsontext.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(path, number, _short(text), f"a JSON object on each line ({exc.msg})") from None
        if "\\u" in text and _SURROGATE_ESCAPE.search(text):
            _check_surrogates(path, number, text, obj)
        if events is not None:
            if not isinstance(obj, dict):
                raise ParseError(path, number, _short(text), "an event object with 'action'")
            events.add(obj, number, text)
        else:
            objects.add(obj, number)
    if events is not None:
        events.flush()
    else:
        objects.flush()
