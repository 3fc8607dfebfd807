"""The result of an evaluation, and its one JSON contract.

The kernels give one value per query and output name (a :class:`Column`); the summary row
combines each column over the queries as trec_eval combines it (mean, sum, geometric
mean, count; :mod:`evaltool.aggregate` sums in query order so that the last bit agrees
with trec_eval). :class:`EvalResult` holds both, with groups, labels, warnings and
provenance, and :meth:`EvalResult.to_dict` is what every consumer reads: ``-o json``,
``--save-reference``, the history's ``record()`` and ``POST /api/executions``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from evaltool.aggregate import summarize
from evaltool.errors import EvaltoolError
from evaltool.evaluation.labels import LABELS, SUMMARY_ROW
from evaltool.measures.base import Agg, Request


class Column:
    """One output name of one measure, with its value for every evaluated query.

    ``values`` is aligned with the result's ``qids``; the properties state the facts a
    formatter needs without knowing the measure registry. (Column and Series are plain
    classes: a dataclass costs every evaluation's start-up about half a millisecond.)
    """

    __slots__ = ("name", "request", "values")

    def __init__(self, name: str, request: Request, values: np.ndarray | list):
        self.name, self.request, self.values = name, request, values

    @property
    def measure(self):
        return self.request.measure

    @property
    def integer(self) -> bool:
        """Counts (``num_ret``...) and ranks (``FirstRelPos``): per-query values printed and written as integers."""
        return self.measure.integer

    @property
    def integer_summary(self) -> bool:
        """Whether the summary is an integer too (a sum or count of integers; a mean of ranks is not)."""
        return self.measure.integer_summary

    @property
    def per_query(self) -> bool:
        """Whether trec_eval prints the measure per query (``-q``); ``gm_map`` and ``num_q`` it does not."""
        return self.measure.per_query

    @property
    def aggregation(self) -> str:
        """How the summary combines the queries: ``mean``, ``sum``, ``geometric``, ``count``, ``runid``
        (the run's tag), ``none`` (no summary: ``relstring``) or ``mean over queries with a value``."""
        return self.measure.agg.value


@dataclass
class EvalResult:
    """Per-query values, summary values, groups, labels and provenance of one evaluation.

    Every attribute is plain data (str, int, float, None, lists and dicts of them):

    * ``qids``: the evaluated queries, in trec_eval's order (byte order of the ids);
    * ``summary``: output name (``P_10``, ``map``, ``nDCG@10``...) -> value;
    * ``per_query``: query id -> {output name -> value} (measures trec_eval prints per
      query); ``per_query_requested`` (``evaluate(per_query=...)``) decides whether
      ``to_dict`` and ``to_json`` include them when not told;
    * ``groups``: {field: {value: {"count": n, output name: value}}} with ``group_by``;
      queries without the field form the group ``(none)``;
    * ``thresholds``: the label thresholds in force ({name: value}), None without labels;
      ``label_vocabulary`` the labels, best first;
    * ``labels``: row -> label, rows named as in the trec_eval table: ``all`` (the
      summary), each query id, each group as ``FIELD=VALUE``; a row without a
      thresholded measure has None;
    * ``warnings``: messages (``warning: ...``, ``note: ...``) about the query set, also
      issued as :class:`~evaltool.errors.EvaltoolWarning`;
    * ``meta``: inputs, options, counts, skipped queries and where judgments came from;
      ``strategies`` maps each query to the source of its judgments (``qrels``, ``pack``,
      ``token-f1``); ``zscores`` says the values are z-scores (``-Z``).

    >>> from evaltool import evaluate
    >>> result = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 2.0, "x": 1.0}, "q2": {"x": 2.0, "b": 1.0}},
    ...                   ["mrr"], group_by="kind", topics={"q1": {"kind": "faq"}, "q2": {"kind": "how-to"}},
    ...                   thresholds=True)
    >>> result.summary, result.groups["kind"]["how-to"]
    ({'mrr': 0.75}, {'count': 1, 'mrr': 0.5})
    >>> result.labels
    {'all': 'good', 'q1': 'good', 'q2': 'poor', 'kind=faq': 'good', 'kind=how-to': 'poor'}
    """

    qids: list[str]
    columns: list[Column]
    summary: dict
    meta: dict = field(default_factory=dict)
    zscores: bool = False
    timings: dict = field(default_factory=dict, repr=False)
    per_query_requested: bool = True
    strategies: dict = field(default_factory=dict)
    groups: dict = field(default_factory=dict)
    thresholds: dict | None = None
    labels: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    label_vocabulary: tuple = LABELS

    @property
    def measures(self) -> list[str]:
        return [c.name for c in self.columns]

    def _value(self, column: Column, i: int):
        value = column.values[i]
        if isinstance(value, str):
            return value
        if column.integer and not self.zscores and value == value:  # nan (no value) stays nan
            return int(value)
        return float(value)

    @property
    def per_query(self) -> dict:
        shown = [c for c in self.columns if c.per_query]
        return {qid: {c.name: self._value(c, i) for c in shown} for i, qid in enumerate(self.qids)}

    def measure_facts(self) -> dict[str, dict]:
        """``{output name: {"aggregate": how the summary combines the queries, "better": which way
        it improves}}``, for each output (see :attr:`Column.aggregation` and
        :class:`~evaltool.measures.base.Better`): what a reader of the JSON needs to judge a value
        without the measure registry (a count such as ``num_ret`` is summed, not averaged, and is
        neither better higher nor lower; ``FirstRelPos`` is better lower)."""
        return {c.name: {"aggregate": c.aggregation, "better": c.measure.better.value} for c in self.columns}

    def to_dict(self, per_query: bool | None = None) -> dict:
        """The one JSON contract of a result, as Python objects (nan stays a float here).

        ``{"measures", "summary", "per_query" (when asked), "meta"}``, plus ``groups``, and
        ``labels`` with the ``thresholds`` that gave them, when computed; ``meta["measures"]``
        holds :meth:`measure_facts`. ``-o json``, ``--save-reference``, the history's
        ``record()`` and ``POST /api/executions`` all read this, so a result recorded from
        its JSON is the result recorded from the object.

        >>> from evaltool import evaluate
        >>> evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["num_ret", "map"]).to_dict()["meta"]["measures"]
        {'num_ret': {'aggregate': 'sum', 'better': 'neither'}, 'map': {'aggregate': 'mean', 'better': 'higher'}}
        """
        if per_query is None:
            per_query = self.per_query_requested
        out = {"measures": self.measures, "summary": self.summary}
        meta = dict(self.meta, measures=self.measure_facts())
        if per_query:
            out["per_query"] = self.per_query
            if "relevance" in meta:
                meta["relevance"] = dict(meta["relevance"], per_query=self.strategies)
        out["meta"] = meta
        if self.groups:
            out["groups"] = self.groups
        if self.thresholds is not None:
            queries = set(self.qids)
            out["labels"] = {
                row: value
                for row, value in self.labels.items()
                if per_query or row not in queries or row == SUMMARY_ROW
            }
            out["thresholds"] = self.thresholds
        return out

    def to_json(self, per_query: bool | None = None) -> str:
        """The JSON of ``evaltool ... -o json`` exactly (nan is ``null``); see :func:`to_dict`."""
        from evaltool.report.json import dump_json

        return dump_json(self.to_dict(per_query))

    def _repr_html_(self) -> str:
        """The summary row (and a row per group, with labels when computed) as a notebook shows it;
        a note counts the queries (:meth:`to_frame` holds their values)."""
        from evaltool.report.html import notebook_html
        from evaltool.report.layouts import eval_report

        report = eval_report(self, per_query=False)
        count = len(self.qids)
        report.notes.append(f"{count} {'query' if count == 1 else 'queries'}; per-query values: .to_frame()")
        return notebook_html(report, summary_key=SUMMARY_ROW)

    def to_frame(self):
        """Per-query values as a long pandas DataFrame: query_id, measure, value.

        Raises :class:`~evaltool.errors.EvaltoolError` naming the package when pandas is not installed.
        """
        pd = require_pandas("to_frame()")
        rows = [(qid, name, value) for qid, values in self.per_query.items() for name, value in values.items()]
        return pd.DataFrame(rows, columns=["query_id", "measure", "value"])


def require_pandas(what: str):
    """The pandas module, or an EvaltoolError with the install hint."""
    try:
        import pandas as pd
    except ImportError:
        raise EvaltoolError(f"{what} needs pandas: pip install pandas") from None
    return pd


def summarize_columns(
    columns: Sequence[Column], n_queries: int, runid: str, *, zscores: bool = False, qrels_if_complete=None
) -> dict:
    """The summary row: each column combined over the queries as its measure declares.

    ``qrels_if_complete`` (the qrels, under ``-c``) is what a measure that declares a
    ``complete_summary`` takes its summary from: trec_eval's ``num_rel`` then counts every
    judgment with a grade above 0, judged query or not.
    """
    summary: dict = {}
    means = _column_means(columns, n_queries)
    for column in columns:
        m = column.measure
        if m.agg is Agg.RUNID:
            summary[column.name] = runid
        elif m.agg is not Agg.NONE:
            value = means[id(column)] if id(column) in means else summarize(m.agg, np.asarray(column.values), n_queries)
            if qrels_if_complete is not None and m.complete_summary is not None:
                value = m.complete_summary(qrels_if_complete)
            summary[column.name] = int(value) if m.integer_summary and not zscores else value
    return summary


def _column_means(columns: Sequence[Column], n_queries: int) -> dict[int, float]:
    """The summaries of the float columns averaged over the queries, by ``id`` of the column:
    summed in query order all at once (one running sum along each row of the stacked columns,
    its additions in the order, and so to the bit, of :func:`~evaltool.aggregate.sequential_sum`)."""
    means = [
        c
        for c in columns
        if c.measure.agg is Agg.MEAN and isinstance(c.values, np.ndarray) and c.values.dtype == np.float64
    ]
    if len(means) < 2 or not n_queries or any(len(c.values) != n_queries for c in means):
        return {}
    totals = np.cumsum(np.array([c.values for c in means]), axis=1)[:, -1]
    return {id(c): total / n_queries for c, total in zip(means, totals.tolist())}
