"""Groups: a summary per group of queries sharing a value of a field (``category``...).

Each group's values are combined exactly as the run's summary (mean, sum, geometric
mean). :func:`group_summaries` is the one grouping used by ``evaluate``, ``compare``,
``bench`` and :mod:`evaltool.lists`; queries without the field form the group ``(none)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from evaltool.aggregate import summarize
from evaltool.measures.base import Agg

NO_GROUP = "(none)"


def group_queries(
    qids: Sequence[str], value_of: Mapping[str, object], order: Sequence[str] = ()
) -> dict[str, list[int]]:
    """Positions in ``qids`` of each group: the queries whose ``value_of[qid]`` is the same.

    Queries without a value form the group ``(none)``. Groups come in ``order`` (a topics
    file's order of values), then in order of first appearance.

    >>> group_queries(["q1", "q2", "q3", "q4"], {"q1": "hard", "q2": "easy", "q3": "hard"}, ["easy"])
    {'easy': [1], 'hard': [0, 2], '(none)': [3]}
    """
    found: dict[str, list[int]] = {}
    for i, qid in enumerate(qids):
        value = value_of.get(qid)
        found.setdefault(NO_GROUP if value is None else str(value), []).append(i)
    rank = {value: i for i, value in enumerate(order)}
    first = {value: i for i, value in enumerate(found)}
    return dict(sorted(found.items(), key=lambda item: (rank.get(item[0], len(rank)), first[item[0]])))


class Series:
    """Per-query values of one output name, and how they combine (:class:`~evaltool.measures.base.Agg`)."""

    __slots__ = ("name", "values", "agg", "integer")

    def __init__(self, name: str, values: np.ndarray, agg: Agg = Agg.MEAN, integer: bool = False):
        self.name, self.values, self.agg, self.integer = name, values, agg, integer


def group_summaries(series: Sequence[Series], groups: Mapping[str, Sequence[int]]) -> dict[str, dict]:
    """``{group: {"count": n, name: summary over the group's queries}}``: the one grouping.

    Each group's value is combined exactly as the whole run's summary (mean, sum,
    geometric mean), over the positions :func:`group_queries` gave.

    >>> group_summaries([Series("RR", np.array([1.0, 0.5, 0.25]))], {"a": [0, 2], "b": [1]})
    {'a': {'count': 2, 'RR': 0.625}, 'b': {'count': 1, 'RR': 0.5}}
    """
    out = {}
    for value, positions in groups.items():
        index = np.asarray(positions, dtype=np.int64)
        entry: dict = {"count": len(index)}
        for s in series:
            summary = summarize(s.agg, np.asarray(s.values)[index], len(index))
            entry[s.name] = int(summary) if s.integer else summary
        out[value] = entry
    return out


def summary_series(result) -> list[Series]:
    """The columns of ``result`` that have a numeric summary, as :class:`Series`."""
    return [
        Series(c.name, np.asarray(c.values), c.measure.agg, c.integer_summary and not result.zscores)
        for c in result.columns
        if c.measure.agg not in (Agg.NONE, Agg.RUNID) and not isinstance(c.values, list)
    ]


def field_values(topics, field: str) -> dict[str, str]:
    """``{qid: value}`` of one field of a :class:`~evaltool.io.topics.Topics` (queries without it left out)."""
    topics.check_field(field)
    return {qid: row[field] for qid, row in topics.rows.items() if field in row}


def field_order(topics, field: str) -> list[str]:
    """The values of ``field`` in the order the topics file first gives them."""
    return list(dict.fromkeys(row[field] for row in topics.rows.values() if field in row))


def ungrouped_note(topics, field: str, qids: Sequence[str], groups: Mapping[str, Sequence[int]]) -> str | None:
    left = groups.get(NO_GROUP)
    if not left:
        return None
    return f"note: {len(left)} of {len(qids)} queries have no {field} in {topics.path}; they form the group {NO_GROUP}"
