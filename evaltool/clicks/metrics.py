"""Click metrics, one declaration each: a kernel from impressions to one value per impression.

Every kernel sees :class:`Impressions` (all impressions of a log at once, as arrays) and
returns a float per impression, ``nan`` where the metric is undefined for it. Undefined
values are left out of every mean and every count: an impression with an empty result
list is undefined for all metrics; ``mean_click_rank`` and ``time_to_first_click`` are
undefined without a click. "Impressions but no click" is a defined 0 (``click_mrr``,
``ctr``), "no impressions" is null.

The rank of a click is the clicked document's top-most position in the list shown
(1 = top). A document clicked again in the same impression counts once; a click on a
document not shown is ignored (both counted by the reader, :mod:`evaltool.io.clicks`).

>>> from evaltool.io.clicks import read_click_log
>>> log = read_click_log([{"query": "a", "results": ["x", "y", "z"], "clicks": ["z", "y"]},
...                       {"query": "a", "results": ["x", "y"], "clicks": []}])
>>> view = Impressions(log)
>>> click_mrr(view, None).tolist(), click_mrr(view, None, first_click="position").tolist()
([0.3333333333333333, 0.0], [0.5, 0.0])
>>> ctr(view, None).tolist(), ctr(view, 1).tolist(), mean_click_rank(view, None).tolist()
([0.6666666666666666, 0.0], [0.0, 0.0], [2.5, nan])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Callable

import numpy as np

from evaltool.errors import MeasureError
from evaltool.measures.base import CUTOFF, Agg, Measure, Params, Request

FIRST_CLICK_RULES = ("log", "position")


class Impressions:
    """Per-impression facts every kernel shares, computed once from a :class:`~evaltool.io.clicks.ClickLog`."""

    def __init__(self, log) -> None:
        self.log = log
        self.n_shown = log.n_shown
        self.n_clicks = log.n_clicks
        self.shown = self.n_shown > 0
        self.clicked = self.n_clicks > 0
        self.click_imp = np.repeat(np.arange(log.n_impressions, dtype=np.int32), self.n_clicks)
        self._first: dict[str, np.ndarray] = {}

    def shown_up_to(self, k: int) -> np.ndarray:
        """Results each impression showed at positions 1..k (rows are in position order)."""
        running = np.zeros(len(self.log.shown_pos) + 1, np.int32)
        np.cumsum(self.log.shown_pos <= k, out=running[1:])
        offsets = self.log.shown_offsets
        return running[offsets[1:]] - running[offsets[:-1]]

    def defined(self, values: np.ndarray, where: np.ndarray) -> np.ndarray:
        """``values`` where ``where`` holds, nan elsewhere."""
        return np.where(where, values, np.nan)

    def first_rank(self, rule: str) -> np.ndarray:
        """Rank of each impression's first click (0 without one): in log order, or the top-most."""
        if rule not in self._first:
            log = self.log
            out = np.zeros(log.n_impressions, np.int64)
            starts = log.click_offsets[:-1][self.clicked]
            if rule == "log":
                out[self.clicked] = log.click_rank[starts]
            else:
                out[self.clicked] = np.minimum.reduceat(log.click_rank, starts) if len(starts) else []
            self._first[rule] = out
        return self._first[rule]

    def per_impression_sum(self, rows_imp: np.ndarray, values) -> np.ndarray:
        return np.bincount(rows_imp, weights=values, minlength=self.log.n_impressions)


@dataclass(frozen=True)
class ClickMeasure:
    """A click metric: its kernel, whether it takes ``@k``, whether it needs timestamps."""

    measure: Measure
    takes_cutoff: bool = False
    needs_timestamps: bool = False

    @property
    def name(self) -> str:
        return self.measure.name


CLICK_REGISTRY: dict[str, ClickMeasure] = {}


def click_measure(name: str, *, takes_cutoff: bool = False, needs_timestamps: bool = False):
    """Declare a click metric: its name, whether ``@k`` applies, whether it needs timestamps."""

    def register(kernel: Callable):
        if name in CLICK_REGISTRY:
            raise RuntimeError(f"click measure {name} declared twice")
        declared = Measure(
            name,
            kernel,
            Params.NAMED if takes_cutoff else Params.NONE,
            (),
            Agg.MEAN_DEFINED,
            doc=kernel.__doc__ or "",
            family="clicks",
            options=(CUTOFF,) if takes_cutoff else (),
        )
        CLICK_REGISTRY[name] = ClickMeasure(declared, takes_cutoff, needs_timestamps)
        return kernel

    return register


@click_measure("click_mrr")
def click_mrr(view: Impressions, cutoff, first_click: str = "log") -> np.ndarray:
    """Reciprocal rank of the first click: 1 / rank, 0 when nothing was clicked (MRR from clicks).

    The first click is the first in log order (``clicks[0]`` of an impression), or the top-most
    clicked result with ``first_click='position'``. The mean over impressions, with 0 for an
    impression without a click, is the usual MRR of a click log: a log whose clicks all hit
    shown documents gives ``mean(1 / (results.index(clicks[0]) + 1))``, 0 where ``clicks`` is empty.

    >>> from evaltool.clicks import evaluate
    >>> log = [{"query": "a", "results": ["d1", "d2", "d3"], "clicks": ["d2", "d1"]},
    ...        {"query": "b", "results": ["d4", "d5"], "clicks": []}]
    >>> evaluate(log, ["click_mrr"]).summary["click_mrr"]
    0.25
    """
    rank = view.first_rank(first_click)
    rr = np.divide(1.0, rank, out=np.zeros(len(rank)), where=rank > 0)
    return view.defined(rr, view.shown)


@click_measure("ctr", takes_cutoff=True)
def ctr(view: Impressions, cutoff, first_click: str = "log") -> np.ndarray:
    """Click-through rate: clicked results / shown results; ``ctr@k`` counts only positions 1..k.

    Each document counts once per impression. ``ctr@k`` is undefined for an impression
    that showed nothing at positions 1..k.
    """
    log = view.log
    if cutoff is None:
        return view.defined(view.n_clicks / np.maximum(view.n_shown, 1), view.shown)
    clicks = np.bincount(view.click_imp[log.click_rank <= cutoff], minlength=log.n_impressions)
    shown = view.shown_up_to(cutoff)
    return view.defined(clicks / np.maximum(shown, 1), shown > 0)


@click_measure("abandonment")
def abandonment(view: Impressions, cutoff, first_click: str = "log") -> np.ndarray:
    """1 for an impression without a click, else 0: the mean is the share of abandoned impressions."""
    return view.defined((~view.clicked).astype(np.float64), view.shown)


@click_measure("clicks_per_query")
def clicks_per_query(view: Impressions, cutoff, first_click: str = "log") -> np.ndarray:
    """Clicked results per impression (each document once)."""
    return view.defined(view.n_clicks.astype(np.float64), view.shown)


@click_measure("mean_click_rank")
def mean_click_rank(view: Impressions, cutoff, first_click: str = "log") -> np.ndarray:
    """Mean rank of the clicked results of an impression; undefined without a click."""
    total = view.per_impression_sum(view.click_imp, view.log.click_rank)
    return view.defined(total / np.maximum(view.n_clicks, 1), view.shown & view.clicked)


@click_measure("time_to_first_click", needs_timestamps=True)
def time_to_first_click(view: Impressions, cutoff, first_click: str = "log") -> np.ndarray:
    """Seconds from the impression to its earliest click (by timestamp); undefined without a click or times.

    The impression's time is its own ``timestamp`` (events table: the earliest of its
    impression rows).
    """
    log = view.log
    earliest = np.full(log.n_impressions, np.inf)
    np.fmin.at(earliest, view.click_imp, np.where(np.isnan(log.click_time), np.inf, log.click_time))
    delay = earliest - log.imp_time
    return view.defined(delay, view.shown & np.isfinite(delay))


DEFAULT_MEASURES = ("click_mrr", "ctr", "ctr@10", "abandonment", "clicks_per_query", "mean_click_rank")
_SPELLING = re.compile(r"^\s*([A-Za-z_]+)\s*(?:@\s*([0-9]+))?\s*$")


def parse_click_measures(names) -> list[Request]:
    """Requests for click metric names (``click_mrr``, ``ctr@5``...), in the order given, each once.

    >>> [r.names[0] for r in parse_click_measures(["ctr@5", "click_mrr", "ctr", "ctr@5"])]
    ['ctr@5', 'click_mrr', 'ctr']
    """
    if isinstance(names, str):
        names = [names]
    requests, seen = [], set()
    for text in names:
        for part in text.split(","):
            match = _SPELLING.match(part)
            found = CLICK_REGISTRY.get(match.group(1)) if match else None
            if found is None or (match.group(2) is not None and not found.takes_cutoff):
                known = ", ".join(n + ("[@k]" if m.takes_cutoff else "") for n, m in CLICK_REGISTRY.items())
                raise MeasureError(f"unknown click measure {part.strip()!r}; click measures are {known}")
            cutoff = int(match.group(2)) if match.group(2) is not None else None
            if cutoff is not None and cutoff < 1:
                raise MeasureError(f"click measure {part.strip()!r}: k must be 1 or more")
            spelling = found.name + (f"@{cutoff}" if cutoff is not None else "")
            if spelling in seen:
                continue
            seen.add(spelling)
            values = (("cutoff", cutoff),) if found.takes_cutoff else ()
            requests.append(Request(found.measure, values, spelling=spelling if found.takes_cutoff else None))
    return requests


def request_cutoff(request: Request):
    return dict(request.values).get("cutoff")


def click_measure_of(request: Request) -> ClickMeasure:
    return CLICK_REGISTRY[request.measure.name]
