"""The library entry point: inputs in, :class:`EvalResult` out. No printing, no exit codes."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field

import numpy as np

from evaltool.aggregate import read_zscores, summarize, to_zscores
from evaltool.data import Qrels, Run
from evaltool.errors import EvaltoolError
from evaltool.measures.base import Agg, Request
from evaltool.names import parse_measures
from evaltool.ranking import RankOptions, rank


@dataclass
class Column:
    """One output name of one measure, with its value for every evaluated query."""

    name: str
    request: Request
    values: np.ndarray | list

    @property
    def measure(self):
        return self.request.measure


@dataclass
class EvalResult:
    """Per-query values, summary values and provenance of one evaluation.

    ``summary`` maps output names (``P_10``, ``map``...) to values; ``per_query`` maps
    query ids to such dicts (measures that trec_eval prints per query only).
    ``per_query_requested`` (``evaluate(per_query=...)``) decides whether ``to_dict`` and
    ``to_json`` include the per-query values when not told explicitly.
    """

    qids: list[str]
    columns: list[Column]
    summary: dict
    meta: dict = field(default_factory=dict)
    zscores: bool = False
    timings: dict = field(default_factory=dict, repr=False)
    per_query_requested: bool = True

    @property
    def measures(self) -> list[str]:
        return [c.name for c in self.columns]

    def _value(self, column: Column, i: int):
        value = column.values[i]
        if isinstance(value, str):
            return value
        if column.measure.integer and not self.zscores:
            return int(value)
        return float(value)

    @property
    def per_query(self) -> dict:
        shown = [c for c in self.columns if c.measure.per_query]
        return {qid: {c.name: self._value(c, i) for c in shown} for i, qid in enumerate(self.qids)}

    def to_dict(self, per_query: bool | None = None) -> dict:
        if per_query is None:
            per_query = self.per_query_requested
        out = {"measures": self.measures, "summary": self.summary}
        if per_query:
            out["per_query"] = self.per_query
        out["meta"] = self.meta
        return out

    def to_json(self, per_query: bool | None = None, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(per_query), indent=indent, ensure_ascii=False)

    def to_frame(self):
        """Per-query values as a long pandas DataFrame: query_id, measure, value."""
        try:
            import pandas as pd
        except ImportError:
            raise EvaltoolError("to_frame() needs pandas: pip install pandas") from None
        rows = [(qid, name, value) for qid, values in self.per_query.items() for name, value in values.items()]
        return pd.DataFrame(rows, columns=["query_id", "measure", "value"])


def _is_frame(obj) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "columns")


def load_qrels(qrels, on_duplicate: str = "error") -> Qrels:
    """Accept a path, a ``{qid: {docid: grade}}`` dict, a DataFrame or a Qrels."""
    from evaltool.io import frames, trec

    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, dict):
        return frames.qrels_from_dict(qrels, on_duplicate=on_duplicate)
    if _is_frame(qrels):
        return frames.qrels_from_frame(qrels, on_duplicate=on_duplicate)
    if isinstance(qrels, (str, os.PathLike)):
        return trec.read_qrels(qrels, on_duplicate=on_duplicate)
    raise EvaltoolError(f"qrels must be a path, dict or DataFrame, not {type(qrels).__name__}")


def load_run(run, on_duplicate: str = "error", runid: str | None = None) -> Run:
    """Accept a path (``-`` for stdin), a ``{qid: {docid: score}}`` dict, a DataFrame or a Run."""
    from evaltool.io import frames, trec

    if isinstance(run, Run):
        return run
    if isinstance(run, dict):
        return frames.run_from_dict(run, on_duplicate=on_duplicate, runid=runid or "run")
    if _is_frame(run):
        return frames.run_from_frame(run, on_duplicate=on_duplicate, runid=runid or "run")
    if isinstance(run, (str, os.PathLike)):
        return trec.read_run(run, on_duplicate=on_duplicate)
    raise EvaltoolError(f"run must be a path, dict or DataFrame, not {type(run).__name__}")


def evaluate(
    qrels,
    run,
    measures=None,
    per_query: bool = False,
    *,
    relevance_level: int = 1,
    complete: bool = False,
    max_ret: int | None = None,
    judged_only: bool = False,
    num_docs_in_coll: int = 0,
    zscores: str | None = None,
    on_duplicate: str = "error",
    runid: str | None = None,
) -> EvalResult:
    """Score ``run`` against ``qrels`` with trec_eval's semantics.

    ``measures`` takes trec_eval names (``"ndcg_cut.10"``, ``"P.5,10"``, ``"official"``);
    the keyword options mirror trec_eval's ``-l``, ``-c``, ``-M``, ``-J``, ``-N``, ``-Z``.
    ``per_query`` (trec_eval's ``-q``) puts the per-query values into ``to_json()``;
    ``result.per_query`` is available either way.

    >>> result = evaluate({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 2.0, "d2": 1.0}}, ["P.1", "map"])
    >>> result.summary
    {'map': 1.0, 'P_1': 1.0}
    """
    if isinstance(measures, str):
        measures = [measures]
    requests = parse_measures(measures)
    clock = time.perf_counter()
    qrels_t = load_qrels(qrels, on_duplicate)
    run_t = load_run(run, on_duplicate, runid)
    timings = {"parse": time.perf_counter() - clock}
    clock = time.perf_counter()
    if runid is not None:
        run_t.runid = runid
    options = RankOptions(relevance_level, max_ret, judged_only, complete)
    ranking = rank(qrels_t, run_t, options, num_docs_in_coll)
    batch = ranking.batch
    ztable = read_zscores(zscores) if zscores else None
    timings["rank"] = time.perf_counter() - clock
    clock = time.perf_counter()

    columns: list[Column] = []
    summary: dict = {}
    n = batch.n_queries
    for request in requests:
        m = request.measure
        values = request.compute(batch)
        for j, name in enumerate(request.names):
            if isinstance(values, list):
                col = list(values)
                if m.on_missing is not None:
                    col = [m.on_missing if batch.missing[i] else v for i, v in enumerate(col)]
                columns.append(Column(name, request, col))
                continue
            col = values[:, j].copy()
            if m.on_missing is not None:
                col[batch.missing] = m.on_missing
            if ztable is not None and m.agg is not Agg.RUNID:
                col = to_zscores(col, batch.qids, name, ztable)
            columns.append(Column(name, request, col))
            if m.agg is Agg.RUNID:
                summary[name] = ranking.runid
            elif m.agg is not Agg.NONE:
                value = summarize(m.agg, col, n)
                if m.name == "num_rel" and complete:
                    value = float(np.count_nonzero(batch.judged_grades > 0))
                summary[name] = int(value) if m.integer and ztable is None else value

    timings["measures"] = time.perf_counter() - clock
    meta = {
        "qrels": qrels_t.path,
        "run": run_t.path,
        "runid": ranking.runid,
        "options": {
            "relevance_level": relevance_level,
            "complete": complete,
            "max_ret": max_ret,
            "judged_only": judged_only,
            "num_docs_in_coll": num_docs_in_coll,
            "zscores": zscores,
            "on_duplicate": on_duplicate,
        },
        "counts": {
            "queries_evaluated": n,
            "queries_missing_from_run": int(batch.missing.sum()),
            "qrels_rows": len(qrels_t),
            "run_rows": len(run_t),
            "qrels_duplicates_resolved": qrels_t.duplicates_resolved,
            "run_duplicates_resolved": run_t.duplicates_resolved,
        },
        "skipped_queries": ranking.skipped_qrels_queries,
        "run_queries_without_judgments": ranking.unjudged_run_queries,
    }
    return EvalResult(batch.qids, columns, summary, meta, zscores=ztable is not None, timings=timings,
                      per_query_requested=per_query)
