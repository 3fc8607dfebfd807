"""Per-group summaries: queries grouped by a field of a topics file (category, difficulty, ...).

A group's summary combines the group's per-query values exactly as the run's summary
combines all of them (mean, sum or geometric mean, :mod:`evaltool.aggregate`). Topics
files are read by :mod:`evaltool.io.topics`.
"""

from __future__ import annotations

import numpy as np

from evaltool.aggregate import summarize
from evaltool.io.topics import Topics
from evaltool.measures.base import Agg


def group_summaries(result, topics: Topics, field: str) -> dict[str, dict]:
    """``{value: {"count": n, measure: summary over the group's queries}}`` for one field."""
    out = {}
    for value, positions in topics.groups(result.qids, field).items():
        index = np.array(positions)
        entry = {"count": len(positions)}
        for column in result.columns:
            m = column.measure
            if m.agg in (Agg.NONE, Agg.RUNID) or isinstance(column.values, list):
                continue
            summary = summarize(m.agg, np.asarray(column.values)[index], len(positions))
            entry[column.name] = int(summary) if m.integer and not result.zscores else summary
        out[value] = entry
    return out


def group_means(qids: list[str], values: dict[str, dict[str, np.ndarray]], topics: Topics, field: str) -> dict:
    """``{value: {"count": n, "runs": {run: {measure: mean}}}}``: compared runs' means per group."""
    out = {}
    for value, positions in topics.groups(qids, field).items():
        index = np.array(positions)
        out[value] = {"count": len(positions), "runs": {
            run: {m: summarize(Agg.MEAN, column[index], len(positions)) for m, column in columns.items()}
            for run, columns in values.items()}}
    return out
