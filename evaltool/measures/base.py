"""How a measure is declared, and the vectorised helpers kernels share.

A measure is one decorated kernel. The decorator records every fact about it: its
trec_eval name, how its parameters are written, its defaults, how per-query values
are combined into the summary, and what it prints. The kernel takes the whole
:class:`~evaltool.ranking.RankedBatch` and returns one column per output name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Callable

import numpy as np

from evaltool.errors import MeasureError

MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001


class Params(Enum):
    """How a measure's parameters are written after the dot (``-m name.params``)."""

    NONE = "none"              # map
    CUTOFFS = "cutoffs"        # P.5,10: positive integers, sorted, one output each
    FRACTIONS = "fractions"    # iprec_at_recall.0.1,0.5: numbers, sorted, one output each
    NUMBERS = "numbers"        # utility.1,-1,0,0: an ordered list, one output
    PAIRS = "pairs"            # ndcg.1=3,2=9 or rbp.p=0.8: name=value list, one output


class Agg(Enum):
    """How per-query values become the summary value."""

    MEAN = "mean"
    SUM = "sum"
    GEOMETRIC = "geometric"    # kernel returns log values; summary is exp(mean)
    COUNT = "count"            # number of queries
    NONE = "none"              # no summary (relstring)
    RUNID = "runid"            # the run tag


@dataclass(frozen=True)
class Measure:
    name: str
    kernel: Callable
    params: Params = Params.NONE
    default: tuple = ()
    agg: Agg = Agg.MEAN
    integer: bool = False
    per_query: bool = True
    on_missing: float | str | None = None
    doc: str = ""
    family: str = ""
    arity: int | None = None   # exact number of parameters, where the measure needs one
    on_missing_bare: float | str | None = None

    def summary_line(self) -> str:
        return (self.doc.strip().splitlines() or [""])[0]


REGISTRY: dict[str, Measure] = {}


def measure(name: str, *, params: Params = Params.NONE, default: tuple = (), agg: Agg = Agg.MEAN,
            integer: bool = False, per_query: bool = True, on_missing=None, on_missing_bare=None,
            arity: int | None = None):
    """Declare a measure. ``on_missing`` overrides the value of a query absent from the run (``-c``).

    ``on_missing_bare`` does the same only when the output name is the bare measure name:
    trec_eval resets the stand-in ranking of a missing query by exact name (``utility``,
    ``rbp_resid``, ``relstring``), so ``utility_1,-1,0,0`` keeps the value computed on it.
    """

    def register(kernel):
        if name in REGISTRY:
            raise RuntimeError(f"measure {name} declared twice")
        REGISTRY[name] = Measure(
            name, kernel, params, tuple(default), agg, integer, per_query, on_missing,
            kernel.__doc__ or "", kernel.__module__.rsplit(".", 1)[-1],
            arity=arity, on_missing_bare=on_missing_bare,
        )
        return kernel

    return register


@dataclass(frozen=True)
class Request:
    """A measure with resolved parameters; knows its output names."""

    measure: Measure
    values: tuple = ()
    printable: str | None = None

    @property
    def names(self) -> list[str]:
        m = self.measure
        if m.params is Params.CUTOFFS:
            return [f"{m.name}_{c}" for c in self.values]
        if m.params is Params.FRACTIONS:
            return [f"{m.name}_{c:3.2f}" for c in self.values]
        if self.printable is not None:
            return [f"{m.name}_{self.printable}"]
        return [m.name]

    def compute(self, batch):
        out = self.measure.kernel(batch, self.values)
        reset = self.measure.on_missing_bare
        bare = reset is not None and self.names == [self.measure.name] and batch.missing.any()
        if isinstance(out, list):
            return [reset if bare and batch.missing[i] else v for i, v in enumerate(out)]
        out = np.asarray(out, dtype=np.float64).reshape(batch.n_queries, -1)
        if bare:
            out = out.copy()
            out[batch.missing] = reset
        return out


# ---------------------------------------------------------------- shared helpers

_LOG2 = np.zeros(0)


def log2_int(n) -> np.ndarray:
    """log2 of non-negative integers from the C library (bit-identical to trec_eval)."""
    global _LOG2
    n = np.asarray(n, dtype=np.int64)
    top = int(n.max()) + 1 if n.size else 1
    if top > len(_LOG2):
        size = max(top, 2 * len(_LOG2), 1024)
        _LOG2 = np.array([-math.inf] + [math.log2(i) for i in range(1, size)])
    return _LOG2[n]


def discount(rank) -> np.ndarray:
    """trec_eval's DCG discount of 0-based ``rank``: log2(rank + 2)."""
    return log2_int(np.asarray(rank, dtype=np.int64) + 2)


def powers(p: float, n: int) -> np.ndarray:
    """p**0 .. p**n by repeated multiplication, the way trec_eval accumulates them."""
    steps = np.full(n + 1, p, dtype=np.float64)
    steps[0] = 1.0
    return np.cumprod(steps)


def safe_div(num, den) -> np.ndarray:
    """num / den where den != 0, else 0 (trec_eval leaves such values at zero)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def segment_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Running sum within each CSR segment, added in order like a C loop."""
    values = np.asarray(values, dtype=np.float64)
    lengths = np.diff(offsets)
    n = len(values)
    if n == 0:
        return values.copy()
    width = int(lengths.max())
    seg = np.repeat(np.arange(len(lengths)), lengths)
    pos = np.arange(n) - offsets[seg]
    if len(lengths) * width <= 4 * n + 1_000_000:
        grid = np.zeros((len(lengths), width))
        grid[seg, pos] = values
        return np.cumsum(grid, axis=1)[seg, pos]
    cum = np.cumsum(values)
    before = np.concatenate(([0.0], cum))[offsets[:-1]]
    return cum - before[seg]


def segment_first(seg: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    """Index of the first row of each segment where ``mask`` holds, -1 if none."""
    rows = np.flatnonzero(mask)
    out = np.full(n, -1, dtype=np.int64)
    uniq, first = np.unique(seg[rows], return_index=True)
    out[uniq] = rows[first]
    return out


def pair_gains(pairs: tuple) -> dict[int, float]:
    """Gains given as ``level=gain`` pairs; names that are not integers are other parameters."""
    gains = {}
    for key, value in pairs:
        body = key[1:] if key[:1] in "+-" else key
        if body.isdigit():
            level = int(key)
            if level < 0:
                raise MeasureError(f"a gain for the negative relevance level {level} is not supported")
            gains[level] = value
    return gains


def gain_function(pairs: tuple):
    """Map grades to gains: the grade itself unless a pair overrides it; negative grades gain 0."""
    gains = pair_gains(pairs)

    def gain_of(grades: np.ndarray) -> np.ndarray:
        grades = np.asarray(grades)
        out = np.where(grades >= 0, grades, 0).astype(np.float64)
        for level, gain in gains.items():
            out[grades == level] = gain
        return out

    return gain_of


def pair_value(pairs: tuple, name: str, default: float) -> float:
    for key, value in pairs:
        if key == name:
            return value
    return default
