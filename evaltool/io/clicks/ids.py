"""Ids in first-seen order, coded without a Python object per id: a vocabulary over an
open-addressing hash table of 64-bit FNV-1a hashes, probed a batch at a time."""

from __future__ import annotations

import numpy as np

from evaltool.errors import EvaltoolError
from evaltool.io.clicks.buffers import Appendable
from evaltool.io.clicks.columns import arrow_array, bools, ints


class NotUtf8(EvaltoolError):
    """An id of an events table (as Arrow read it) that is not UTF-8 text."""


class Vocab:
    """Ids in first-seen order: ``code`` adds one (objects), ``codes`` a whole Arrow column (tables)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.list: list[str] = []
        self.table: IdTable | None = None  # the ids, when added by columns

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

        if pa.types.is_dictionary(column.type):
            return self._dictionary_codes(column)
        encoded = pc.dictionary_encode(column)
        distinct = encoded.dictionary
        try:
            distinct.validate(full=True)  # Arrow's JSON and Parquet readers let invalid UTF-8 through
        except pa.ArrowInvalid as exc:
            raise NotUtf8(f"ids that are UTF-8 text ({exc})") from None
        if self.table is None:
            self.table = IdTable()
        table = self.table
        hashes = fnv1a(distinct)
        codes = table.find(hashes)
        found = codes >= 0
        collided = np.zeros(len(distinct), bool)
        if found.any():
            same = bools(pc.equal(distinct.filter(arrow_array(found)), table.texts(codes[found])))
            collided[np.flatnonzero(found)[~same]] = True
        new = ~found
        if new.any():
            _, first = np.unique(hashes[new], return_index=True)
            fresh = np.zeros(len(distinct), bool)
            fresh[np.flatnonzero(new)[first]] = True
            collided |= new & ~fresh  # two new ids of this batch with one hash
            codes[fresh] = table.add(distinct.filter(arrow_array(fresh)), hashes[fresh])
        for i in np.flatnonzero(collided).tolist():
            text = distinct[i].as_py()
            code = self.index.get(text)
            if code is None:
                from evaltool.io.columnar import string_array

                code = self.index[text] = int(table.add(string_array([text]))[0])
            codes[i] = code
        lookup = np.append(codes, -1).astype(np.int32)
        return lookup[ints(encoded.indices, len(distinct), np.int64)]

    def _dictionary_codes(self, column) -> np.ndarray:
        """Codes of a dictionary-encoded column (as Parquet stores ids): only the dictionary
        entries the rows use are coded, in the order the rows first use them, so codes are
        those the column's texts would get."""
        import pyarrow as pa
        import pyarrow.compute as pc

        dictionary = column.dictionary
        if not pa.types.is_string(dictionary.type):
            dictionary = pc.cast(dictionary, pa.string())
        used = pc.unique(column.indices).drop_null()
        lookup = np.full(len(dictionary) + 1, -1, np.int32)
        if len(used):
            lookup[ints(used, 0, np.int64)] = self.codes(dictionary.take(used))
        return lookup[ints(column.indices, len(dictionary), np.int64)]

    @property
    def ids(self) -> list[str]:
        return self.list if self.table is None else self.table.as_arrow().to_pylist()

    def as_arrow(self):
        from evaltool.io.columnar import string_array

        return string_array(self.list) if self.table is None else self.table.as_arrow()


class IdTable:
    """Distinct ids by code — their UTF-8 bytes and offsets — and an open-addressing hash table
    (linear probing, at most half full) from 64-bit hash to code, probed a batch at a time.
    Memory: the ids' bytes, 8 bytes of offset and 8 of hash per id, 8 to 16 of table."""

    def __init__(self) -> None:
        self.offsets = Appendable(np.int64)
        self.offsets.extend([0])
        self.bytes = Appendable(np.uint8)
        self.hashes = Appendable(np.uint64)  # by code (an id added without a hash: 0, never looked up)
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
        offsets, data = string_buffers(strings)
        self.bytes.extend(data[offsets[0] : offsets[-1]])
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

        view = pa.LargeStringArray.from_buffers(
            len(self), pa.py_buffer(self.offsets.values), pa.py_buffer(self.bytes.values)
        )
        return pc.cast(view.take(arrow_array(codes)), pa.string())

    def as_arrow(self):
        """All ids as an Arrow string array; the table takes no more ids after this."""
        import pyarrow as pa

        if self.frozen is None:
            n, offsets, data = len(self), self.offsets.release(), self.bytes.release()
            if offsets[-1] < 2**31:
                self.frozen = pa.StringArray.from_buffers(n, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data))
            else:
                self.frozen = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
            self.slots = self.hashes = None
        return self.frozen


FNV_OFFSET, FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)


def string_buffers(strings) -> tuple[np.ndarray, np.ndarray]:
    """The int32 offsets (n + 1) and the bytes of an Arrow string array, as numpy views."""
    n = len(strings)
    buffers = strings.buffers()
    offsets = np.frombuffer(buffers[1], np.int32, count=n + 1, offset=strings.offset * 4)
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    return offsets, data


def fnv1a(strings) -> np.ndarray:
    """64-bit FNV-1a of each string of an Arrow string array (no nulls), its length mixed in last."""
    offsets, data = string_buffers(strings)
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


VOCAB_KEY = np.uint64(1 << 63)  # a document key holding a vocabulary code (the id did not fit in 8 bytes)
NULL_KEY = np.uint64(2**64 - 1)  # no document (a click row that names a position only)
_TOP = np.uint64(56)


def packed_keys(strings) -> tuple[np.ndarray, np.ndarray]:
    """Each id of an Arrow string array as an exact uint64 where its bytes fit: (keys, fits).

    An id of up to 7 bytes is its bytes (little-endian, zero-padded) with its length in the
    top byte; an id of 8 bytes is its bytes when the last is 8 to 127 (so no 8-byte id
    looks like a shorter one, and bit 63 stays clear). Two ids that fit have equal keys
    exactly when they are equal: no hashing and no comparison of texts. ``fits`` is False
    for nulls and for the ids that do not fit (their keys are meaningless).

    >>> import pyarrow as pa
    >>> keys, fits = packed_keys(pa.array(["d1", "d1", "d10", "a-long-document-id", None]))
    >>> bool(keys[0] == keys[1] != keys[2]), fits.tolist()
    (True, [True, True, True, False, False])
    >>> unpacked(keys[:3]).to_pylist()
    ['d1', 'd1', 'd10']
    """
    offsets, data = string_buffers(strings)
    base, end = int(offsets[0]), int(offsets[-1])
    starts = offsets[:-1].astype(np.int64) - base
    lengths = np.diff(offsets).astype(np.int64)
    padded = np.zeros(end - base + 8, np.uint8)
    padded[: end - base] = data[base:end]
    # 8 bytes from each id's first byte: one unaligned gather through a view with a stride of one byte
    words = np.ndarray((len(padded) - 7,), np.dtype("<u8"), padded, 0, (1,))[starts]
    short = lengths <= 7
    width = np.minimum(lengths, 7).astype(np.uint64)
    keys = np.where(short, (words & ((np.uint64(1) << (width * np.uint64(8))) - np.uint64(1))) | (width << _TOP), words)
    top = words >> _TOP
    fits = short | ((lengths == 8) & (top >= 8) & (top < 0x80))
    if strings.null_count:
        fits &= bools(strings.is_valid())
    return keys.astype(np.uint64, copy=False), fits


def unpacked(keys: np.ndarray):
    """The ids of packed keys (:func:`packed_keys`) as an Arrow string array."""
    import pyarrow as pa

    top = (keys >> _TOP).astype(np.int64)
    lengths = np.where(top < 8, top, 8)
    raw = np.ascontiguousarray(keys.astype("<u8")).view(np.uint8).reshape(-1, 8)
    data = raw[np.arange(8) < lengths[:, None]]
    offsets = np.zeros(len(keys) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.StringArray.from_buffers(len(keys), pa.py_buffer(offsets), pa.py_buffer(data.tobytes()))


class DocKeys:
    """Document ids as exact uint64 keys, so the shown lists and clicks of a log are matched
    without coding every id of the log: an id of at most 8 bytes is its own key
    (:func:`packed_keys`), a longer one gets a vocabulary code (``VOCAB_KEY | code``), no
    id is ``NULL_KEY``. Equal keys mean equal ids. Codes in ``0..n_docs`` and the ids' texts
    are made only when asked for (:meth:`coded`: click models need them, click metrics do not)."""

    def __init__(self) -> None:
        self.vocab = Vocab()

    def key(self, text: str) -> int:
        """The key of one id (impression objects, read in Python: always a vocabulary code)."""
        return int(VOCAB_KEY) | self.vocab.code(text)

    def keys(self, column) -> np.ndarray:
        """The key of each id of an Arrow string column (``NULL_KEY`` for null)."""
        import pyarrow as pa

        try:
            column.validate(full=True)  # Arrow's JSON and Parquet readers let invalid UTF-8 through
        except pa.ArrowInvalid:
            self.vocab.codes(column)  # names the id as the vocabulary does (NotUtf8)
            raise
        keys, fits = packed_keys(column)
        valid = ~bools(column.is_null())
        longer = valid & ~fits
        if longer.any():
            keys[longer] = VOCAB_KEY | self.vocab.codes(column.filter(arrow_array(longer))).astype(np.uint64)
        keys[~valid] = NULL_KEY
        return keys

    def coded(self, shown_key: np.ndarray, *more: np.ndarray):
        """Codes for keys: (the ids as an Arrow string array, the codes of ``shown_key``, of each of ``more``).

        Codes number the distinct keys of ``shown_key`` in key order; every key of ``more``
        must be one of them (a kept click is on a shown document)."""
        import pyarrow as pa

        distinct, codes = np.unique(shown_key, return_inverse=True)
        packed = distinct < VOCAB_KEY  # sorted: the packed keys first, then the vocabulary's
        texts = unpacked(distinct[packed])
        if not packed.all():
            vocab = self.vocab.as_arrow().take(arrow_array((distinct[~packed] & ~VOCAB_KEY).astype(np.int64)))
            texts = pa.concat_arrays([texts, vocab.cast(pa.string())])
        others = [np.searchsorted(distinct, keys).astype(np.int32) for keys in more]
        return texts, codes.astype(np.int32).reshape(-1), *others


_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def _pair_hash(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """A 64-bit hash of (uint64, int32) pairs (splitmix64's finaliser over both)."""
    with np.errstate(over="ignore"):
        h = first ^ (second.astype(np.int64).astype(np.uint64) * _MIX[0])
        h = (h ^ (h >> np.uint64(30))) * _MIX[1]
        h = (h ^ (h >> np.uint64(27))) * _MIX[2]
        return h ^ (h >> np.uint64(31))


class PairCodes:
    """Exact (uint64, int32) pairs numbered 0, 1, 2... in first-seen order: the impressions of an
    events table, named by (session key, query code) or (impression id key, -2). An
    open-addressing hash table (linear probing, at most a quarter full, so probes are short)
    probed a batch at a time; a slot's pair is compared whole, so codes are exact. Memory:
    12 bytes per pair, 16 to 32 of table."""

    def __init__(self) -> None:
        self.first = Appendable(np.uint64)
        self.second = Appendable(np.int32)
        self.slots = np.full(1 << 12, -1, np.int32)

    def __len__(self) -> int:
        return len(self.first)

    def _home(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        bits = len(self.slots).bit_length() - 1
        return (_pair_hash(first, second) >> np.uint64(64 - bits)).astype(np.int64)

    def _find(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        out = np.full(len(first), -1, np.int64)
        slot, mask = self._home(first, second), len(self.slots) - 1
        stored_first, stored_second = self.first.values, self.second.values
        active = np.arange(len(first))
        while len(active):
            code = self.slots[slot[active]]
            filled = code >= 0
            hit = np.zeros(len(active), bool)
            at = active[filled]
            hit[filled] = (stored_first[code[filled]] == first[at]) & (stored_second[code[filled]] == second[at])
            out[active[hit]] = code[hit]
            active = active[filled & ~hit]
            slot[active] = (slot[active] + 1) & mask
        return out

    def _place(self, codes: np.ndarray) -> None:
        """Put each stored pair of ``codes`` in the first free slot from its home: a round writes
        every pair still unplaced into its free slot, one write per slot wins, the others move on."""
        slot = self._home(self.first.values[codes], self.second.values[codes])
        mask = len(self.slots) - 1
        active = np.arange(len(codes))
        while len(active):
            free = active[self.slots[slot[active]] < 0]
            self.slots[slot[free]] = codes[free]
            placed = np.zeros(len(codes), bool)
            placed[free[self.slots[slot[free]] == codes[free]]] = True
            active = active[~placed[active]]
            slot[active] = (slot[active] + 1) & mask

    def codes(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """The int32 code of each pair; pairs not seen before get the next codes, in the order given."""
        first = np.ascontiguousarray(first, np.uint64)
        second = np.ascontiguousarray(second, np.int32)
        out = self._find(first, second)
        new = np.flatnonzero(out < 0)
        if len(new):
            a, b = first[new], second[new]
            by_pair = np.lexsort((b, a))  # stable: a pair's first place comes first
            starts = np.ones(len(new), bool)
            starts[1:] = (a[by_pair][1:] != a[by_pair][:-1]) | (b[by_pair][1:] != b[by_pair][:-1])
            at = by_pair[starts]  # where each distinct new pair is first given
            inverse = np.empty(len(new), np.int64)
            inverse[by_pair] = np.cumsum(starts) - 1
            order = np.argsort(at, kind="stable")  # the distinct new pairs in the order given
            rank = np.empty(len(order), np.int64)
            rank[order] = np.arange(len(order))
            start = len(self)
            fresh = new[at[order]]
            self.first.extend(first[fresh])
            self.second.extend(second[fresh])
            codes = np.arange(start, start + len(fresh), dtype=np.int64)
            if 4 * len(self) > len(self.slots):
                size = len(self.slots)
                while 4 * len(self) > size:
                    size *= 2
                self.slots = np.full(size, -1, np.int32)
                self._place(np.arange(len(self), dtype=np.int64))
            else:
                self._place(codes)
            out[new] = start + rank[inverse.reshape(-1)]
        return out.astype(np.int32)
