"""Growable numpy buffers for columns read while they grow: appended in place, or in fixed blocks."""

from __future__ import annotations

import numpy as np


class Appendable:
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
        self.data[self.n : self.n + m] = values
        self.n += m

    @property
    def values(self) -> np.ndarray:
        return self.data[: self.n]

    def release(self) -> np.ndarray:
        """The filled part as an array of its own, spare room given back; the buffer starts again empty."""
        out, self.data = self.data, np.empty(0, self.data.dtype)
        out.resize(self.n, refcheck=False)
        self.n = 0
        return out


class Blocks:
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
            self.blocks[-1][at : at + take] = values[done : done + take]
            done += take
            self.n += take

    def release(self) -> np.ndarray:
        """The whole column as one array; the blocks are gone."""
        out = np.empty(self.n, self.dtype)
        for i in range(len(self.blocks)):
            start = i * self.BLOCK
            out[start : start + self.BLOCK] = self.blocks[i][: min(self.BLOCK, self.n - start)]
            self.blocks[i] = None
        self.blocks, self.n = [], 0
        return out


class Growing:
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
