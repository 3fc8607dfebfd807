"""Array helpers shared by the readers, relevance resolution and ranking."""

from __future__ import annotations

import numpy as np

POW10 = 10 ** np.arange(19, dtype=np.int64)
"""10**0 .. 10**18 as int64: the powers the decimal readers (TREC text, Arrow columns) use."""


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of an integer array: what ``np.unique(values)`` returns.

    By a sort, because numpy 2.3's ``np.unique`` without ``return_*`` options first asks
    whether the array is masked, which imports ``numpy.ma``: ~13 ms, more than parsing and
    scoring a 43,000-line run takes.

    >>> distinct(np.array([3, 1, 3, 2])).tolist(), distinct(np.zeros(0, dtype=np.int64)).tolist()
    ([1, 2, 3], [])
    """
    ordered = np.sort(values, axis=None)
    first = np.ones(len(ordered), dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    return ordered[first]


def pair_order(major: np.ndarray, minor: np.ndarray) -> np.ndarray:
    """The order that sorts rows by (``major``, ``minor``, position), both non-negative integer
    arrays: ``np.lexsort((minor, major))``, as one sort of single integers where the three fit
    in 62 bits (about twice as fast as lexsort on 10^5 rows), else by lexsort.

    >>> pair_order(np.array([2, 0, 2, 0]), np.array([1, 5, 0, 5])).tolist()
    [1, 3, 2, 0]
    """
    count = len(major)
    if not count:
        return np.arange(0)
    span = int(minor.max()) + 1
    if (int(major.max()) + 1) * span * count >= 1 << 62:
        return np.lexsort((minor, major))
    return np.argsort((major.astype(np.int64) * span + minor) * count + np.arange(count))


COUNT_SLICE = 1 << 20  # values counted at a time by :func:`counts`


def counts(values: np.ndarray, length: int) -> np.ndarray:
    """``np.bincount(values, minlength=length)`` for non-negative integers, a slice at a time:
    bincount first converts its whole input to int64, a copy as large as the run (160 MB
    for 20M int32 query codes) and slower than counting slices.

    >>> counts(np.array([2, 0, 2], dtype=np.int32), 4).tolist()
    [1, 0, 2, 0]
    """
    total = np.zeros(max(length, int(values.max(initial=-1)) + 1), dtype=np.int64)
    for start in range(0, len(values), COUNT_SLICE):
        total += np.bincount(values[start : start + COUNT_SLICE], minlength=len(total))
    return total


class Membership:
    """``member(values, keys)``: ``np.isin(values, keys)`` for sorted distinct ``keys``, the lookup
    table of the last ``keys`` kept (the document keys of one qrels, met run after run).

    numpy's table method zeroes a boolean array as long as the largest key on every call
    (8.8 MB for MS MARCO passage ids, for a 43,000-line run); here it is built once. When
    the key range is large against ``values``, numpy's sort method answers, as before. The
    pair is read and replaced whole, so runs scored in threads never mix two key sets.

    >>> member = Membership()
    >>> member(np.array([5, 1, 9, 2]), np.array([1, 2, 3])).tolist()
    [False, True, False, True]
    >>> member(np.array([3, -1, 7]), np.array([1, 2, 3])).tolist()
    [True, False, False]
    """

    SLICE = 1 << 16  # values looked up at a time

    def __init__(self):
        self.last = (None, None)

    def __call__(self, values: np.ndarray, keys: np.ndarray) -> np.ndarray:
        if not (len(keys) and len(values) and keys[0] >= 0 and keys[-1] < max(8 * len(values), 1 << 24)):
            return np.isin(values, keys, kind="sort")
        last_keys, table = self.last
        if last_keys is None or len(last_keys) != len(keys) or not np.array_equal(last_keys, keys):
            table = np.zeros(int(keys[-1]) + 2, dtype=bool)  # the last entry, False, for every larger value
            table[keys] = True
            self.last = (keys, table)
        out = np.empty(len(values), dtype=bool)
        non_negative = values.min() >= 0
        for start in range(0, len(values), self.SLICE):  # no temporary as long as values
            part = values[start : start + self.SLICE]
            if non_negative:  # a larger value is clipped to the last entry
                np.take(table, part, mode="clip", out=out[start : start + len(part)])
            else:
                inside = (part >= 0) & (part < len(table))
                np.logical_and(table[np.where(inside, part, 0)], inside, out=out[start : start + len(part)])
        return out
