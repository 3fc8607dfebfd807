"""Scoring: rank batches of whole queries, run the measure kernels on them, merge the pieces.

Every engine scores through this module and nothing else of :mod:`evaltool.evaluation`:
the local engine scores a whole run as one batch (or a streamed run chunk by chunk), the
Dask engine one partition of queries per task. Because a query's values depend on that
query alone, scoring pieces of whole queries and merging them in trec_eval's query order
(:func:`merge`) gives exactly the values of scoring the run at once.

What a piece needs is one :class:`Scoring` (the measure requests, the ranking options
``-l -M -J -c``, ``-N`` and the ``-Z`` table); :class:`ChunkedScores` gathers the pieces
of a run read in chunks and adds, under ``-c``, the judged queries no piece held.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaltool.errors import InputError
from evaltool.evaluation.result import Column
from evaltool.evaluation.zscores import to_zscores
from evaltool.inputs import Run
from evaltool.measures.base import Agg, Request
from evaltool.names import parse_measures
from evaltool.ranking import RankOptions, byte_key, rank

Piece = tuple[list[str], list[Column]]  # the queries of a piece (in its own order) and their columns


@dataclass(frozen=True)
class Scoring:
    """What scoring a batch of queries needs, parsed and checked once.

    ``specs`` are the measure names as given (None: the default set), ``requests`` what
    they parse to; ``ranking`` holds ``-l -M -J -c``, ``num_docs_in_coll`` is ``-N`` and
    ``ztable`` the ``-Z`` reference ``{(qid, output name): (mean, stddev)}`` or None.

    A Scoring pickles as its specs (a Dask worker parses them again), so a measure's
    kernel is never sent over the wire.

    >>> scoring = Scoring.of(["P.5", "map"])
    >>> [name for r in scoring.requests for name in r.names], scoring.ranking.relevance_level
    (['map', 'P_5'], 1)
    """

    specs: tuple | None
    requests: tuple[Request, ...]
    ranking: RankOptions = RankOptions()
    num_docs_in_coll: int = 0
    ztable: Mapping | None = None

    @classmethod
    def of(
        cls, specs=None, ranking: RankOptions = RankOptions(), num_docs_in_coll: int = 0, ztable: Mapping | None = None
    ) -> Scoring:
        """Parse ``specs`` (``"P.5"``, ``["map", "nDCG@10"]`` or None) into a Scoring."""
        if isinstance(specs, str):
            specs = [specs]
        specs = None if specs is None else tuple(specs)
        return cls(specs, tuple(parse_measures(specs)), ranking, num_docs_in_coll, ztable)

    def __reduce__(self):
        return (Scoring.of, (self.specs, self.ranking, self.num_docs_in_coll, self.ztable))

    def __dask_tokenize__(self):
        return (self.specs, tuple(self.ranking), self.num_docs_in_coll, self.ztable)

    @property
    def output_names(self) -> list[str]:
        return [name for request in self.requests for name in request.names]


@dataclass
class Scored:
    """What an engine returns: the scored pieces and what the run held.

    ``run`` holds ``runid``, ``path``, ``rows``, ``duplicates``, ``skipped`` (judged
    queries without results, left out), ``unjudged`` (run queries without judgments) and
    ``missing`` (queries scored under ``-c`` without results); ``qrels`` the judgments
    scored against (after relevance resolution); ``resolution`` how each query was
    judged (None when every query has qrels); ``timings`` seconds per stage.
    """

    pieces: list[Piece]
    run: dict
    qrels: Any  # Qrels
    run_kind: str = "trec"
    resolution: Any = None  # evaltool.relevance.resolve.Resolution
    timings: dict = field(default_factory=dict)


def batch_columns(requests: Sequence[Request], batch, ztable: Mapping | None) -> list[Column]:
    """Every output of every request for one batch of queries (``-c`` and ``-Z`` applied)."""
    columns = []
    for request in requests:
        m = request.measure
        values = request.compute(batch)
        for j, name in enumerate(request.names):
            col: list | np.ndarray
            if isinstance(values, list):
                col = list(values)
                if m.on_missing is not None:
                    col = [m.on_missing if batch.missing[i] else v for i, v in enumerate(col)]
            else:
                array = values[:, j].copy()
                if m.on_missing is not None:
                    array[batch.missing] = m.on_missing
                if ztable is not None and m.agg is not Agg.RUNID:
                    array = to_zscores(array, batch.qids, name, ztable)
                col = array
            columns.append(Column(name, request, col))
    return columns


def columns_of(requests: Sequence[Request], values: Sequence) -> list[Column]:
    """Columns rebuilt from their values alone, in the order :func:`batch_columns` made them
    (what comes back from a Dask worker)."""
    each = iter(values)
    return [Column(name, request, next(each)) for request in requests for name in request.names]


def merge(pieces: list[Piece]) -> Piece:
    """Columns of several pieces as one, queries in trec_eval's order (byte order of the ids)."""
    if len(pieces) == 1:
        return pieces[0]
    qids = [q for piece_qids, _ in pieces for q in piece_qids]
    order = sorted(range(len(qids)), key=lambda i: byte_key(qids[i]))
    merged = []
    for j, column in enumerate(pieces[0][1]):
        parts = [cols[j].values for _, cols in pieces]
        values: list | np.ndarray
        if isinstance(column.values, list):
            flat = [v for part in parts for v in part]
            values = [flat[i] for i in order]
        else:
            values = np.concatenate(parts)[order]
        merged.append(Column(column.name, column.request, values))
    return [qids[i] for i in order], merged


def score_chunk(qrels_t, chunk: Run, scoring: Scoring):
    """Rank and score one chunk of whole queries (``-c`` off: absent queries are added at the end).

    Returns ``(qids, columns, missing, unjudged)``; ``qids`` is empty when no query of the
    chunk is judged, and ``unjudged`` names the chunk's run queries without judgments.
    """
    options = scoring.ranking
    chunk_options = RankOptions(options.relevance_level, options.max_ret, options.judged_only, False)
    if len(chunk) == 0:
        return [], [], np.zeros(0, dtype=bool), set()
    try:
        ranking = rank(qrels_t, chunk, chunk_options, scoring.num_docs_in_coll)
    except InputError:
        return [], [], np.zeros(0, dtype=bool), set(chunk.qid_vocab)
    batch = ranking.batch
    return (
        batch.qids,
        batch_columns(scoring.requests, batch, scoring.ztable),
        batch.missing,
        set(ranking.unjudged_run_queries),
    )


class ChunkedScores:
    """Scores of a run evaluated in pieces of whole queries (``--stream``, the Dask engine)."""

    def __init__(self) -> None:
        self.parts: list = []
        self.seen: set = set()
        self.unjudged: set = set()
        self.rows = self.duplicates = 0
        self.tag = ""

    def add(self, scored, rows: int, duplicates: int, tag: str) -> None:
        """One piece (what :func:`score_chunk` returned) and the counts of the rows it was read from."""
        qids, columns, missing, unjudged = scored
        self.tag = tag or self.tag
        self.rows += rows
        self.duplicates += duplicates
        self.unjudged.update(unjudged)
        if len(qids):
            self.seen.update(qids)
            self.parts.append((qids, columns, missing))

    def finish(self, qrels_t, scoring: Scoring, path: str, runid: str | None) -> tuple[list[Piece], dict]:
        """``-c``'s absent queries added: the pieces and the run's counts (see :class:`Scored`)."""
        options = scoring.ranking
        qrels_qids = set(qrels_t.queries_with())
        absent = sorted(qrels_qids - self.seen, key=byte_key)
        parts = list(self.parts)
        if options.complete and absent:
            empty = Run([], np.zeros(0, np.int64), [], np.zeros(0, np.int64), np.zeros(0), None, runid=self.tag)
            ranking = rank(qrels_t, empty, options, scoring.num_docs_in_coll, must_share=False)
            keep = np.array([q not in self.seen for q in ranking.batch.qids])
            columns = batch_columns(scoring.requests, ranking.batch, scoring.ztable)
            for column in columns:
                column.values = (
                    [v for v, k in zip(column.values, keep) if k]
                    if isinstance(column.values, list)
                    else column.values[keep]
                )
            parts.append(([q for q, k in zip(ranking.batch.qids, keep) if k], columns, ranking.batch.missing[keep]))
        if not self.seen:  # also under -c, where every judged query would score 0
            raise InputError(f"no query of {path} has judgments in {qrels_t.path}")
        missing = int(sum(p[2].sum() for p in parts))
        skipped = [] if options.complete else absent
        info = {
            "runid": runid if runid is not None else self.tag,
            "path": path,
            "rows": self.rows,
            "duplicates": self.duplicates,
            "skipped": skipped,
            "unjudged": sorted(self.unjudged - qrels_qids),
            "missing": missing,
        }
        return [(q, c) for q, c, _ in parts], info
