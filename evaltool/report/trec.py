"""trec_eval's table: ``measure<pad 22>\\tquery\\tvalue``, per-query rows first (``-q``)."""

from __future__ import annotations

import math

from evaltool.evaluation import EvalResult
from evaltool.measures.base import Agg


def _number(value, integer: bool, zscores: bool) -> str:
    if integer and not zscores:
        return str(int(value))
    if math.isnan(value):
        return f"{'-nan':>6}"  # glibc prints the 0/0 NaN with its sign bit
    return f"{value:6.4f}"


def format_trec(result: EvalResult, per_query: bool = False, summary: bool = True) -> str:
    """Render exactly what trec_eval 10.0 prints for the same options."""
    z = "Z" if result.zscores else ""
    out: list[str] = []
    if per_query:
        shown = [c for c in result.columns if c.measure.per_query]
        for i, qid in enumerate(result.qids):
            for column in shown:
                value = column.values[i]
                if isinstance(value, str):
                    out.append(f"{column.name:<22}\t{qid}\t'{value}'\n")
                else:
                    out.append(f"{z}{column.name:<22}\t{qid}\t{_number(value, column.measure.integer, result.zscores)}\n")
    if summary:
        for column in result.columns:
            m = column.measure
            if m.agg is Agg.NONE:
                continue
            value = result.summary[column.name]
            if m.agg is Agg.RUNID:
                out.append(f"{column.name:<22}\tall\t{value}\n")
            else:
                out.append(f"{z}{column.name:<22}\tall\t{_number(value, m.integer, result.zscores)}\n")
    return "".join(out)
