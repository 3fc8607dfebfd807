"""Fusion of runs: several rankings of the same queries combined into one.

Each input run is read as :func:`evaltool.evaluate` reads it (a path, a ``{qid: {docid:
score}}`` dict, a DataFrame) and ranked in trec_eval's order (score descending, then
document id descending in byte order); ``depth`` keeps each run's top ``depth`` documents.
A document's fused score is built from what each run gives it, then the fused ranking is
ordered by the same rule and cut at ``depth``.

What a run gives a document (``r`` its 1-based rank, ``s`` its score after ``norm``):

* score methods (``combsum`` ... ``mixed``) use ``s``; ``norm`` rescales each run's scores
  per query over the documents kept: ``minmax`` ``(s - min) / (max - min)``, ``max``
  ``s / max``, ``sum`` ``(s - min) / (sum - n*min)``, ``zmuv`` ``(s - mean) / std``
  (population std), ``rank`` ``1 - (r - 1) / n``, ``none``. A denominator below 1e-9 is
  taken as 1e-9 (a query whose scores are all equal gets 0 under ``minmax``), as ranx does.
* rank methods use ``r`` only (``norm`` does not change a ranking):
  ``rrf`` ``1 / (k + r)`` (Cormack, Clarke and Buettcher, SIGIR 2009), ``isr``,
  ``log_isr``, ``logn_isr`` ``1 / r^2`` (Mourão, Martins and Magalhães, 2015), ``rbc``
  ``(1 - phi) phi^(r - 1)`` (Bailey, Moffat, Scholer and Thomas, SIGIR 2017), ``borda``
  ``C - r + 1`` where ``C`` counts the query's candidates (every document some run
  retrieved) and a run that did not retrieve a document gives it ``(C - n + 1) / 2``, the
  mean of the places it left (Aslam and Montague, SIGIR 2001).

How the parts are combined (``S`` their sum over the runs that retrieved the document,
``m`` how many runs did, ``w`` the runs' weights, ``WS`` the weighted sum, ``W`` the sum
of the weights of the runs that retrieved it) — Fox and Shaw (TREC-2, 1994) for the comb
family, Lee (SIGIR 1997) for the normalisations:

==========  ==========================  ==========  =============================
method      fused score                 method      fused score
==========  ==========================  ==========  =============================
combsum     S                           rrf, rbc    S
combmnz     S * m                       isr         S * m
combanz     S / m                       log_isr     S * ln(m)
combmax     max                         logn_isr    S * ln(m + sigma)
combmin     min                         borda       S (+ the places of the others)
combmed     median                      wborda      WS (+ the same, weighted)
combgmnz    S * m^gamma                 wsum        WS
wmnz        S * W                       mixed       WS * sqrt(m)
==========  ==========================  ==========  =============================

These are ranx's formulas (``ranx.fuse``, checked in ``tests/crosscheck/test_fusion.py`` for every
method here). The difference: ranx breaks ties in an input run by its sort (not a named
rule), evaltool by trec_eval's; a rank method's fused scores differ only where a run has
tied scores. ranx's condorcet and the trained methods (probfuse, segfuse, ...) are not here.

>>> runs = {"a": {"q": {"d1": 3.0, "d2": 2.0}}, "b": {"q": {"d2": 9.0, "d3": 1.0}}}
>>> fused = fuse(runs, method="rrf", k=0)
>>> fused.to_dict()
{'q': {'d2': 1.5, 'd1': 1.0, 'd3': 0.5}}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from evaltool.errors import EvaltoolError, InputError

NORMS = ("minmax", "max", "sum", "zmuv", "rank", "none")
FLOOR = 1e-9  # the smallest denominator of a normalisation


@dataclass(frozen=True)
class Method:
    """One fusion method: what each run gives a document and how the parts combine."""

    name: str
    part: str  # "score" (the normalised score), "rrf", "isr" (1/r^2), "rbc", "borda"
    combine: str  # "sum", "mnz", "anz", "max", "min", "med", "gmnz", "log", "logn", "wsum", "wmnz", "mixed"
    weighted: bool = False
    parameter: str | None = None  # the one number the method takes (k, phi, gamma, sigma)
    grid: tuple[float, ...] = ()  # the values --optimize tries for it
    ranx: str = ""  # ranx's name of the method (the tests' oracle)
    description: str = ""


PARAMETERS = {"k": 60.0, "phi": 0.8, "gamma": 0.5, "sigma": 0.01}
METHODS = {
    m.name: m
    for m in (
        Method(
            "rrf",
            "rrf",
            "sum",
            parameter="k",
            grid=(0, 1, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100),
            ranx="rrf",
            description="reciprocal rank fusion: sum of 1/(k + rank)",
        ),
        Method("combsum", "score", "sum", ranx="sum", description="sum of the normalised scores"),
        Method("combmnz", "score", "mnz", ranx="mnz", description="sum times the number of runs that retrieved it"),
        Method(
            "combanz", "score", "anz", ranx="anz", description="sum divided by the number of runs that retrieved it"
        ),
        Method("combmax", "score", "max", ranx="max", description="largest normalised score"),
        Method(
            "combmin", "score", "min", ranx="min", description="smallest normalised score of the runs that retrieved it"
        ),
        Method(
            "combmed", "score", "med", ranx="med", description="median normalised score of the runs that retrieved it"
        ),
        Method(
            "combgmnz",
            "score",
            "gmnz",
            parameter="gamma",
            grid=tuple(np.round(np.arange(0, 1.01, 0.1), 2)),
            ranx="gmnz",
            description="sum times (runs that retrieved it)^gamma",
        ),
        Method(
            "wsum", "score", "wsum", weighted=True, ranx="wsum", description="weighted sum of the normalised scores"
        ),
        Method(
            "wmnz",
            "score",
            "wmnz",
            weighted=True,
            ranx="wmnz",
            description="sum times the summed weights of the runs that retrieved it",
        ),
        Method(
            "mixed",
            "score",
            "mixed",
            weighted=True,
            ranx="mixed",
            description="weighted sum times the square root of the runs that retrieved it",
        ),
        Method("borda", "borda", "sum", ranx="bordafuse", description="Borda count over the query's candidates"),
        Method("wborda", "borda", "wsum", weighted=True, ranx="w_bordafuse", description="weighted Borda count"),
        Method("isr", "isr", "mnz", ranx="isr", description="sum of 1/rank^2 times the runs that retrieved it"),
        Method("log_isr", "isr", "log", ranx="log_isr", description="sum of 1/rank^2 times ln(runs that retrieved it)"),
        Method(
            "logn_isr",
            "isr",
            "logn",
            parameter="sigma",
            grid=(0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0),
            ranx="logn_isr",
            description="sum of 1/rank^2 times ln(runs that retrieved it + sigma)",
        ),
        Method(
            "rbc",
            "rbc",
            "sum",
            parameter="phi",
            grid=(0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99),
            ranx="rbc",
            description="rank-biased centroid: sum of (1 - phi) phi^(rank - 1)",
        ),
    )
}


def _check_choice(what: str, value: str, choices) -> None:
    if value not in choices:
        raise EvaltoolError(f"unknown {what} {value!r}; expected one of {', '.join(choices)}")


# ---------------------------------------------------------------- the runs, aligned once


@dataclass
class Pool:
    """Every run's kept rows on one vocabulary of queries and documents.

    Rows of all runs are concatenated (run by run, each in trec_eval's order); ``slot`` is
    each row's fused document (an index into ``keys``), ``rank`` its 1-based rank in its run,
    ``score`` its raw score, ``run`` the run it came from. ``first``/``count`` bound each
    (run, query) block of rows; ``block_query`` its query.
    """

    names: list[str]
    qids: list[str]
    docids: list[str]
    doc_position: np.ndarray  # each document's place in byte order (the tie rule)
    keys: np.ndarray  # fused documents: query * len(docids) + document, ascending
    slot: np.ndarray
    rank: np.ndarray
    score: np.ndarray
    run: np.ndarray
    block_start: np.ndarray
    block_query: np.ndarray
    block_run: np.ndarray
    candidates: np.ndarray  # per query, the documents some run retrieved
    depth: int | None = None

    @property
    def key_query(self) -> np.ndarray:
        return self.keys // max(len(self.docids), 1)

    @property
    def key_doc(self) -> np.ndarray:
        return self.keys % max(len(self.docids), 1)


def _names(runs, names) -> tuple[list, list[str]]:
    if isinstance(runs, Mapping):
        if names is not None:
            raise InputError("runs given as a {name: run} mapping take their names from it; leave names out")
        return list(runs.values()), [str(n) for n in runs]
    runs = list(runs)
    if names is None:
        from evaltool.run_names import run_names

        names = run_names(runs)
    names = list(names)
    if len(names) != len(runs):
        raise InputError(f"{len(names)} names for {len(runs)} runs")
    return runs, names


def pool_runs(runs, names=None, *, depth: int | None = None, on_duplicate: str = "error") -> Pool:
    """Read the runs and put their rows on one vocabulary, each run ranked by trec_eval's rule.

    >>> pool = pool_runs([{"q": {"a": 1.0, "b": 1.0}}, {"q": {"b": 2.0}}])
    >>> pool.docids, pool.rank.tolist()
    (['a', 'b'], [1, 2, 1])
    """
    from evaltool.io.load import load_run
    from evaltool.ranking import byte_order

    runs, names = _names(runs, names)
    if len(runs) < 2:
        raise InputError(f"fusion needs at least 2 runs, got {len(runs)}")
    if depth is not None and depth < 1:
        raise EvaltoolError(f"depth must be at least 1, not {depth}")
    loaded = [load_run(run, on_duplicate, runid=name) for run, name in zip(runs, names)]
    qid_index: dict[str, int] = {}
    query_codes = []
    for run in loaded:
        q_map = np.fromiter(
            (qid_index.setdefault(q, len(qid_index)) for q in run.qid_vocab), np.int64, count=len(run.qid_vocab)
        )
        query_codes.append(q_map[run.qid_codes])
    doc_codes, docids = _encode([run.doc_text(np.arange(len(run))) for run in loaded])
    bounds = np.cumsum([0] + [len(run) for run in loaded])
    parts = [
        (q, doc_codes[bounds[i] : bounds[i + 1]], np.asarray(run.scores, dtype=np.float64))
        for i, (q, run) in enumerate(zip(query_codes, loaded))
    ]
    qids = list(qid_index)
    position = byte_order(docids)
    n_docs = max(len(docids), 1)
    slots, ranks, scores, run_of, starts, block_q, block_r = [], [], [], [], [], [], []
    offset = 0
    for i, (q, d, s) in enumerate(parts):
        order = np.lexsort((-position[d], -s, q))
        q, d, s = q[order], d[order], s[order]
        bounds = np.flatnonzero(np.diff(q)) + 1
        begin = np.concatenate(([0], bounds)) if len(q) else np.zeros(0, dtype=np.int64)
        rank = np.arange(len(q)) - np.repeat(begin, np.diff(np.append(begin, len(q)))) + 1
        if depth is not None:
            kept = rank <= depth
            q, d, s, rank = q[kept], d[kept], s[kept], rank[kept]
            bounds = np.flatnonzero(np.diff(q)) + 1
            begin = np.concatenate(([0], bounds)) if len(q) else np.zeros(0, dtype=np.int64)
        slots.append(q * n_docs + d)
        ranks.append(rank)
        scores.append(s)
        run_of.append(np.full(len(q), i, dtype=np.int64))
        starts.append(begin + offset)
        block_q.append(q[begin])
        block_r.append(np.full(len(begin), i, dtype=np.int64))
        offset += len(q)
    all_keys = np.concatenate(slots)
    keys, slot = np.unique(all_keys, return_inverse=True)
    candidates = np.bincount(keys // n_docs, minlength=len(qids))
    return Pool(
        names,
        qids,
        docids,
        position,
        keys,
        slot.reshape(-1),
        np.concatenate(ranks),
        np.concatenate(scores),
        np.concatenate(run_of),
        np.concatenate(starts),
        np.concatenate(block_q),
        np.concatenate(block_r),
        candidates,
        depth,
    )


def _encode(texts: list[list[str]]) -> tuple[np.ndarray, list[str]]:
    """One code per id over all the lists (in first-seen order) and the ids: Arrow's hash
    encoding, or a dict for ids Arrow cannot hold (undecodable bytes kept as surrogates)."""
    import pyarrow as pa

    try:
        encoded = pa.concat_arrays([pa.array(t, pa.string()) for t in texts]).dictionary_encode()
    except (pa.ArrowInvalid, UnicodeEncodeError):
        index: dict[str, int] = {}
        codes = np.fromiter(
            (index.setdefault(d, len(index)) for t in texts for d in t), np.int64, count=sum(map(len, texts))
        )
        return codes, list(index)
    return encoded.indices.to_numpy().astype(np.int64), encoded.dictionary.to_pylist()


# ---------------------------------------------------------------- per-run parts, then the combination


def _block_stats(pool: Pool, values: np.ndarray, reduce) -> np.ndarray:
    """One number per (run, query) block, spread back onto its rows."""
    per_block = reduce(values, pool.block_start) if len(values) else np.zeros(0)
    lengths = np.diff(np.append(pool.block_start, len(values)))
    return np.repeat(per_block, lengths)


def normalise(pool: Pool, norm: str) -> np.ndarray:
    """Each row's score rescaled within its (run, query) block (see the module's doc)."""
    _check_choice("normalisation", norm, NORMS)
    s = pool.score
    if norm == "none":
        return s.copy()
    lengths = np.diff(np.append(pool.block_start, len(s)))
    n = np.repeat(lengths, lengths).astype(np.float64)
    if norm == "rank":
        return 1 - (pool.rank - 1) / n
    low = _block_stats(pool, s, np.minimum.reduceat)
    if norm == "minmax":
        return (s - low) / np.maximum(_block_stats(pool, s, np.maximum.reduceat) - low, FLOOR)
    if norm == "max":
        return s / np.maximum(_block_stats(pool, s, np.maximum.reduceat), FLOOR)
    if norm == "sum":
        return (s - low) / np.maximum(_block_stats(pool, s, np.add.reduceat) - n * low, FLOOR)
    mean = _block_stats(pool, s, np.add.reduceat) / n
    spread = np.sqrt(_block_stats(pool, (s - mean) ** 2, np.add.reduceat) / n)
    return (s - mean) / np.maximum(spread, FLOOR)


def _parts(pool: Pool, method: Method, norm: str, value: float) -> np.ndarray:
    r = pool.rank.astype(np.float64)
    if method.part == "score":
        return normalise(pool, norm)
    if method.part == "rrf":
        return 1.0 / (value + r)
    if method.part == "isr":
        return 1.0 / (r * r)
    if method.part == "rbc":
        return (1 - value) * value ** (r - 1)
    return pool.candidates[pool.key_query[pool.slot]] - r + 1  # borda's points


def _borda_absent(pool: Pool, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Borda's points of the documents a run did not retrieve: per row what its run would have
    given it absent, and per fused document what every run gives it absent."""
    n_runs = len(pool.names)
    lengths = np.zeros((n_runs, len(pool.qids)))
    np.add.at(lengths, (pool.block_run, pool.block_query), np.diff(np.append(pool.block_start, len(pool.rank))))
    absent = (pool.candidates[None, :] - lengths + 1) / 2  # runs x queries
    row_absent = absent[pool.run, pool.key_query[pool.slot]]
    return row_absent, (weights[:, None] * absent).sum(axis=0)[pool.key_query]


@dataclass
class Prepared:
    """The parts of one method on one pool, ready to combine under any weights."""

    pool: Pool
    method: Method
    parts: np.ndarray
    count: np.ndarray
    value: float = 0.0
    sorted_parts: tuple | None = None

    def combine(self, weights: np.ndarray) -> np.ndarray:
        """The fused score of every document of ``pool.keys``."""
        pool, how, v = self.pool, self.method.combine, self.parts
        n_keys = len(pool.keys)
        w = weights[pool.run]
        if self.method.part == "borda":
            row_absent, absent_total = _borda_absent(pool, weights if self.method.weighted else np.ones(len(weights)))
            gains = (v - row_absent) * (w if self.method.weighted else 1.0)
            return np.bincount(pool.slot, gains, n_keys) + absent_total
        if how in ("max", "min", "med"):
            return self._order_statistic(how)
        total = np.bincount(pool.slot, v, n_keys)
        m = self.count
        if how == "sum":
            return total
        if how == "mnz":
            return total * m
        if how == "anz":
            return total / m
        if how == "gmnz":
            return total * m**self.value
        if how == "log":
            return total * np.log(m)
        if how == "logn":
            return total * np.log(m + self.value)
        weighted = np.bincount(pool.slot, w * v, n_keys)
        if how == "wsum":
            return weighted
        if how == "wmnz":
            return total * np.bincount(pool.slot, w, n_keys)
        return weighted * np.sqrt(m)  # mixed

    def _order_statistic(self, how: str) -> np.ndarray:
        if self.sorted_parts is None:
            order = np.lexsort((self.parts, self.pool.slot))
            count = self.count.astype(np.int64)
            ends = np.cumsum(count)
            self.sorted_parts = (self.parts[order], ends - count, ends, count)
        values, begin, end, count = self.sorted_parts
        if how == "max":
            return values[end - 1]
        if how == "min":
            return values[begin]
        low, high = begin + (count - 1) // 2, begin + count // 2
        return (values[low] + values[high]) / 2


def prepare(pool: Pool, method: str, norm: str = "minmax", value: float | None = None) -> Prepared:
    """The parts of ``method`` (with its parameter ``value``) on ``pool``."""
    _check_choice("fusion method", method, METHODS)
    _check_choice("normalisation", norm, NORMS)
    chosen = METHODS[method]
    if value is None:
        value = PARAMETERS.get(chosen.parameter or "", 0.0)
    _check_parameter(chosen, value)
    count = np.bincount(pool.slot, minlength=len(pool.keys)).astype(np.float64)
    return Prepared(pool, chosen, _parts(pool, chosen, norm, value).astype(np.float64), count, value=value)


def _check_parameter(method: Method, value: float) -> None:
    name = method.parameter
    if name == "k" and value < 0:
        raise EvaltoolError(f"rrf's k must be 0 or more, not {value:g}")
    if name == "phi" and not 0 < value < 1:
        raise EvaltoolError(f"rbc's phi must be between 0 and 1, not {value:g}")
    if name == "sigma" and not 0 <= value <= 1:
        raise EvaltoolError(f"logn_isr's sigma must be between 0 and 1, not {value:g}")


def parse_weights(text: str, n_runs: int) -> list[float]:
    """``--weights 0.7,0.3``: one number per run, in the runs' order.

    >>> parse_weights("0.7, 0.3", 2)
    [0.7, 0.3]
    """
    words = [w.strip() for w in text.split(",")]
    try:
        weights = [float(w) for w in words]
    except ValueError:
        bad = next(w for w in words if not _is_float(w))
        raise EvaltoolError(f"--weights: found {bad!r}; expected numbers separated by commas (0.7,0.3)") from None
    if len(weights) != n_runs:
        raise EvaltoolError(
            f"--weights: {len(weights)} weight{'s' if len(weights) != 1 else ''} for {n_runs} runs; "
            "give one per run, in order"
        )
    if any(not math.isfinite(w) for w in weights):
        raise EvaltoolError(f"--weights: found {text!r}; expected finite numbers")
    return weights


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _weights(method: Method, weights, n_runs: int) -> np.ndarray:
    if weights is None:
        return np.ones(n_runs)
    if not method.weighted:
        weighted = ", ".join(m.name for m in METHODS.values() if m.weighted)
        raise EvaltoolError(f"{method.name} takes no weights; the weighted methods are {weighted}")
    if isinstance(weights, str):
        weights = parse_weights(weights, n_runs)
    weights = np.asarray(list(weights), dtype=np.float64)
    if len(weights) != n_runs:
        raise EvaltoolError(f"{len(weights)} weights for {n_runs} runs; give one per run, in order")
    return weights


# ---------------------------------------------------------------- the fused run


@dataclass
class FusedRun:
    """A fused ranking: ``qids``, ``docids`` and ``scores`` row by row, each query's rows in
    trec_eval's order (score descending, then document id descending in byte order).

    ``method``, ``norm``, ``parameter`` (``{"k": 60.0}`` or ``{}``), ``weights`` (per run, or
    None) and ``names`` (the fused runs) say how it was made.
    """

    qids: list[str]
    docids: list[str]
    scores: np.ndarray
    method: str
    norm: str
    names: list[str]
    parameter: dict = field(default_factory=dict)
    weights: list[float] | None = None
    depth: int | None = None
    tag: str = "fused"

    def __len__(self) -> int:
        return len(self.scores)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{qid: {docid: score}}`` in ranking order (what :func:`evaltool.evaluate` takes)."""
        out: dict[str, dict[str, float]] = {}
        for q, d, s in zip(self.qids, self.docids, self.scores.tolist()):
            out.setdefault(q, {})[d] = s
        return out

    def to_frame(self):
        """A DataFrame with columns ``query_id``, ``doc_id``, ``rank``, ``score`` (read back by ``evaluate``)."""
        from evaltool.evaluation.result import require_pandas

        pd = require_pandas("to_frame()")
        return pd.DataFrame({"query_id": self.qids, "doc_id": self.docids, "rank": self.ranks(), "score": self.scores})

    def ranks(self) -> np.ndarray:
        q = np.asarray([0] + [int(a != b) for a, b in zip(self.qids[1:], self.qids[:-1])]).cumsum()
        starts = np.concatenate(([0], np.flatnonzero(np.diff(q)) + 1)) if len(q) else np.zeros(0, dtype=np.int64)
        return np.arange(len(q)) - np.repeat(starts, np.diff(np.append(starts, len(q)))) + 1

    def to_trec(self) -> str:
        """The TREC run file: ``qid Q0 docid rank score tag``, scores written in full (``repr``)."""
        tag = self.tag
        return "".join(
            f"{q} Q0 {d} {r} {s!r} {tag}\n"
            for q, d, r, s in zip(self.qids, self.docids, self.ranks().tolist(), self.scores.tolist())
        )


def _ordered(pool: Pool, fused: np.ndarray, depth: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The fused documents in trec_eval's order per query (queries in first-seen order), cut at depth."""
    q, d = pool.key_query, pool.key_doc
    order = np.lexsort((-pool.doc_position[d], -fused, q))
    if depth is not None:
        sq = q[order]
        starts = np.concatenate(([0], np.flatnonzero(np.diff(sq)) + 1)) if len(sq) else np.zeros(0, dtype=np.int64)
        rank = np.arange(len(sq)) - np.repeat(starts, np.diff(np.append(starts, len(sq))))
        order = order[rank < depth]
    return order, q


def fused_run(pool: Pool, prepared: Prepared, fused: np.ndarray, norm: str, weights, tag: str | None) -> FusedRun:
    order, q = _ordered(pool, fused, pool.depth)
    method = prepared.method
    return FusedRun(
        [pool.qids[i] for i in q[order].tolist()],
        [pool.docids[i] for i in pool.key_doc[order].tolist()],
        fused[order],
        method.name,
        norm if method.part == "score" else "none",
        list(pool.names),
        {method.parameter: prepared.value} if method.parameter else {},
        None if weights is None else [float(w) for w in weights],
        pool.depth,
        tag or method.name,
    )


def fuse(
    runs,
    method: str = "rrf",
    *,
    norm: str = "minmax",
    weights=None,
    k: float | None = None,
    phi: float | None = None,
    gamma: float | None = None,
    sigma: float | None = None,
    depth: int | None = None,
    names=None,
    tag: str | None = None,
    on_duplicate: str = "error",
) -> FusedRun:
    """Fuse ``runs`` (paths, dicts, DataFrames; a list or a ``{name: run}`` mapping) into one ranking.

    ``method`` is one of :data:`METHODS`, ``norm`` of :data:`NORMS` (score methods only);
    ``weights`` (one per run, or ``"0.7,0.3"``) for ``wsum``, ``wmnz``, ``mixed`` and
    ``wborda`` (default: all 1); ``k`` (rrf, default 60), ``phi`` (rbc, 0.8), ``gamma``
    (combgmnz, 0.5), ``sigma`` (logn_isr, 0.01). ``depth`` keeps each run's top ``depth``
    documents and cuts the fused ranking there. A query is fused from the runs that have it.

    Parameters
    ----------
    runs : list or mapping of runs
        Paths, dicts or DataFrames; a ``{name: run}`` mapping names them.
    method : str
        One of :data:`METHODS` (``rrf``, ``combsum``, ``combmnz``, ``wsum``, ``borda``...).
    norm : str
        The score normalisation of the score methods (:data:`NORMS`).
    weights : list of float or str, optional
        One weight per run, for the weighted methods.
    k, phi, gamma, sigma : float, optional
        The parameter of rrf, rbc, combgmnz and logn_isr.
    depth : int, optional
        Each run's top documents kept, and the fused ranking's length.
    names : list of str, optional
        The runs' names (default: file names).
    tag : str, optional
        The run tag of the fused run.
    on_duplicate : {"error", "first", "max"}
        What a document listed twice for a query means.

    Returns
    -------
    FusedRun
        The fused ranking (``to_dict()``, ``to_frame()``, ``to_trec()``).

    Raises
    ------
    EvaltoolError
        An unknown method or normalisation, weights that do not match the runs, or a run that cannot be read.

    Examples
    --------
    >>> runs = [{"q": {"a": 4.0, "b": 2.0, "c": 0.0}}, {"q": {"c": 1.0, "b": 0.5}}]
    >>> fuse(runs, "combsum").to_dict()   # minmax: a 1, b 0.5 + 0, c 0 + 1
    {'q': {'c': 1.0, 'a': 1.0, 'b': 0.5}}
    >>> fuse(runs, "wsum", weights=[1, 3], norm="none").to_dict()
    {'q': {'a': 4.0, 'b': 3.5, 'c': 3.0}}
    """
    pool = pool_runs(runs, names, depth=depth, on_duplicate=on_duplicate)
    _check_choice("fusion method", method, METHODS)
    chosen = METHODS[method]
    given = {"k": k, "phi": phi, "gamma": gamma, "sigma": sigma}
    stray = [name for name, v in given.items() if v is not None and name != chosen.parameter]
    if stray:
        raise EvaltoolError(
            f"{method} takes no {stray[0]}" + (f"; its parameter is {chosen.parameter}" if chosen.parameter else "")
        )
    w = _weights(chosen, weights, len(pool.names))
    prepared = prepare(pool, method, norm, given.get(chosen.parameter or ""))
    return fused_run(pool, prepared, prepared.combine(w), norm, None if weights is None else w, tag)


# ---------------------------------------------------------------- choosing the weights (or the parameter)


GRID_LIMIT = 20000  # weight vectors --optimize tries at most


def weight_grid(n_runs: int, step: float) -> np.ndarray:
    """Every weight vector on the simplex (non-negative, summing to 1) with entries that are multiples of ``step``.

    >>> weight_grid(2, 0.5).tolist()
    [[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]]
    """
    if not 0 < step <= 1:
        raise EvaltoolError(f"step must be in (0, 1], not {step:g}")
    parts = round(1 / step)
    if abs(parts * step - 1) > 1e-9:
        raise EvaltoolError(f"step {step:g} does not divide 1 into equal parts (0.1, 0.05, 0.25, ...)")
    size = math.comb(parts + n_runs - 1, n_runs - 1)
    if size > GRID_LIMIT:
        raise EvaltoolError(
            f"{size} weight vectors for {n_runs} runs at step {step:g}, more than {GRID_LIMIT}: "
            "give a larger step, or fewer runs"
        )
    rows = []
    for bars in combinations(range(parts + n_runs - 1), n_runs - 1):  # stars and bars
        edges = (-1, *bars, parts + n_runs - 1)
        rows.append([(edges[i + 1] - edges[i] - 1) / parts for i in range(n_runs)])
    return np.asarray(rows, dtype=np.float64)


@dataclass
class FusionSearch:
    """What ``--optimize`` found: the chosen weights (or parameter value) and how well they do.

    ``candidates`` are the settings tried (weight vectors, or values of ``parameter``) and
    ``scores`` each one's mean ``measure`` over all ``qids``; ``chosen`` is the best of them on
    all queries (the first on a tie) and ``score`` its mean. ``folds`` splits the queries
    into ``len(folds)`` parts (``fold_of`` per query): for each part the best setting on the
    other parts is scored on it (``fold_choice``, ``fold_score``); ``cv_score`` is the mean
    over every query of its held-out value, an estimate of how the chosen setting does on
    new queries. ``fused`` is the run fused with ``chosen``.
    """

    method: str
    measure: str
    norm: str
    names: list[str]
    parameter: str | None
    candidates: list
    scores: list[float]
    chosen: object
    score: float
    cv_score: float
    folds: int
    qids: list[str]
    fold_of: list[int]
    fold_choice: list
    fold_score: list[float]
    fused: FusedRun | None = None

    def setting_text(self, setting) -> str:
        """A setting as people read it: ``k=60``, or ``bm25=0.3, splade=0.7``."""
        if self.parameter:
            return f"{self.parameter}={setting:g}"
        return ", ".join(f"{name}={w:g}" for name, w in zip(self.names, setting))

    def chosen_text(self) -> str:
        return self.setting_text(self.chosen)

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "norm": self.norm,
            "measure": self.measure,
            "searched": self.parameter or "weights",
            "runs": self.names,
            "chosen": self.chosen,
            "score": self.score,
            "cv_score": self.cv_score,
            "folds": [
                {
                    "fold": i + 1,
                    "queries": self.fold_of.count(i),
                    "chosen": self.fold_choice[i],
                    "held_out_score": self.fold_score[i],
                }
                for i in range(self.folds)
            ],
            "grid": [{"setting": c, "score": s} for c, s in zip(self.candidates, self.scores)],
        }

    def rows(self) -> list[dict]:
        """A row per setting tried: the setting, its mean on all queries, and whether it was chosen."""
        return [
            {"setting": self.setting_text(c), "score": s, "chosen": int(c == self.chosen)}
            for c, s in zip(self.candidates, self.scores)
        ]

    def to_frame(self):
        from evaltool.evaluation.result import require_pandas

        return require_pandas("to_frame()").DataFrame(self.rows(), columns=["setting", "score", "chosen"])


def assign_folds(n: int, folds: int, seed: int) -> np.ndarray:
    """A fold (0 .. folds-1) per query: a seeded shuffle cut into ``folds`` near-equal parts.

    >>> sorted(np.bincount(assign_folds(7, 3, 0)).tolist())
    [2, 2, 3]
    """
    order = np.random.default_rng(seed).permutation(n)
    fold = np.empty(n, dtype=np.int64)
    for i, part in enumerate(np.array_split(order, folds)):
        fold[part] = i
    return fold


def optimize_fusion(
    qrels,
    runs,
    measure: str,
    method: str = "wsum",
    *,
    norm: str = "minmax",
    folds: int = 5,
    step: float = 0.1,
    seed: int = 0,
    depth: int | None = None,
    names=None,
    tag: str | None = None,
    **options,
) -> FusionSearch:
    """Search ``method``'s weights (weighted methods: every vector of :func:`weight_grid`) or its
    parameter (rrf's k, rbc's phi, combgmnz's gamma, logn_isr's sigma over :data:`METHODS`' grid)
    for the best mean ``measure`` against ``qrels``, with ``folds``-fold cross-validation over the
    queries. ``options`` are :func:`evaluate`'s (``complete``, ``relevance_level``...); ``depth``
    also cuts the fused run as ``max_ret`` would.

    Parameters
    ----------
    qrels : path, dict or DataFrame
        The judgments, as :func:`evaluate` takes them.
    runs : list or mapping of runs
        The runs to fuse.
    measure : str
        The measure whose mean the search maximises.
    method : str
        A fusion method of :data:`METHODS` with weights or a parameter to search.
    norm : str
        The score normalisation (:data:`NORMS`).
    folds : int
        Cross-validation folds over the queries.
    step : float
        The step of the weight grid.
    seed : int
        The seed of the random split into folds.
    depth, names, tag : optional
        As :func:`fuse` takes them.
    **options
        :func:`evaluate`'s keyword options.

    Returns
    -------
    FusionSearch
        Every setting tried with its score, the setting chosen, and the cross-validated score.

    Raises
    ------
    EvaltoolError
        An unknown method or measure, or a method with nothing to search.

    Examples
    --------
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    >>> runs = [{"q1": {"a": 2.0, "b": 1.0}, "q2": {"a": 2.0, "b": 1.0}},
    ...         {"q1": {"b": 2.0, "a": 1.0}, "q2": {"b": 2.0, "a": 1.0}}]
    >>> search = optimize_fusion(qrels, runs, "recip_rank", "wsum", folds=2, step=0.5)
    >>> search.chosen, search.score, search.cv_score  # each fold picks the run that fails the other query
    ([0.0, 1.0], 0.75, 0.5)
    >>> search.fold_choice
    [[0.0, 1.0], [1.0, 0.0]]
    """
    from evaltool.evaluation import Evaluator
    from evaltool.inputs import Run
    from evaltool.measures.base import Better

    _check_choice("fusion method", method, METHODS)
    chosen_method = METHODS[method]
    if not chosen_method.weighted and not chosen_method.parameter:
        searchable = ", ".join(m.name for m in METHODS.values() if m.weighted or m.parameter)
        raise EvaltoolError(f"{method} has no weights or parameter to optimize; these have: {searchable}")
    if folds < 1:
        raise EvaltoolError(f"folds must be at least 1, not {folds}")
    pool = pool_runs(runs, names, depth=depth, on_duplicate=options.get("on_duplicate", "error"))
    if depth is not None:
        options["max_ret"] = min(depth, options.get("max_ret") or depth)
    evaluator = Evaluator(qrels, [measure], **options)
    n_runs = len(pool.names)
    candidates: list = []
    scored: list[np.ndarray] = []
    if chosen_method.weighted:
        candidates = weight_grid(n_runs, step).tolist()
        prepared = prepare(pool, method, norm)
        scored = [prepared.combine(np.asarray(w)) for w in candidates]
    else:
        candidates = [float(v) for v in chosen_method.grid]
        scored = [prepare(pool, method, norm, v).combine(np.ones(n_runs)) for v in candidates]
    values: list[np.ndarray] = []
    qids: list[str] = []
    better, measure_name = None, measure
    for fused_scores in scored:
        run = Run(pool.qids, pool.key_query, pool.docids, pool.key_doc, fused_scores, None, runid=tag or method)
        result = evaluator.evaluate(run)
        column = result.columns[0]
        qids, better, measure_name = result.qids, column.measure.better, column.name
        values.append(np.asarray(column.values, dtype=np.float64))
    if better is Better.NEITHER:
        raise EvaltoolError(
            f"{measure_name} is a count, neither better higher nor lower; optimize a measure "
            "that is (map, ndcg_cut.10, recip_rank, ...)"
        )
    table = np.vstack(values)  # settings x queries
    if better is Better.LOWER:
        table_for_choice = -table
    else:
        table_for_choice = table
    n_queries = table.shape[1]
    if folds > n_queries:
        raise EvaltoolError(f"{folds} folds for {n_queries} evaluated queries; give at most {n_queries}")
    best = int(np.argmax(table_for_choice.mean(axis=1)))
    fold_of = assign_folds(n_queries, folds, seed)
    held_out = np.empty(n_queries)
    fold_choice, fold_score = [], []
    for f in range(folds):
        test = fold_of == f
        train = ~test if folds > 1 else test
        pick = int(np.argmax(table_for_choice[:, train].mean(axis=1)))
        held_out[test] = table[pick, test]
        fold_choice.append(candidates[pick])
        fold_score.append(float(table[pick, test].mean()))
    weights = candidates[best] if chosen_method.weighted else None
    final = prepare(pool, method, norm, None if weights is not None else candidates[best])
    fused = fused_run(
        pool, final, final.combine(np.asarray(weights) if weights is not None else np.ones(n_runs)), norm, weights, tag
    )
    return FusionSearch(
        method,
        measure_name,
        fused.norm,
        list(pool.names),
        chosen_method.parameter,
        candidates,
        table.mean(axis=1).tolist(),
        candidates[best],
        float(table[best].mean()),
        float(held_out.mean()),
        folds,
        list(qids),
        fold_of.tolist(),
        fold_choice,
        fold_score,
        fused,
    )
