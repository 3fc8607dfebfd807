"""Everything computed after the measure kernels: the result of an evaluation.

The kernels give one value per query and output name (a *column*). This module turns
columns into what users read and what the history store and the dashboard keep:

* **summaries**: the run's value of each measure, combined over the queries as trec_eval
  combines them (mean, sum, geometric mean, count; :mod:`evaltool.aggregate` sums in
  query order so the last bit agrees with trec_eval);
* **z-scores** (trec_eval's ``-Z``): each per-query value as standard deviations from a
  reference mean;
* **groups**: a summary per group of queries (the queries sharing a value of a field such
  as ``category``), combined exactly as the run's summary. :func:`group_summaries` is the
  one grouping used by ``evaluate``, ``compare``, ``bench`` and :mod:`evaltool.lists`;
* **labels**: ``good``, ``fair`` or ``poor`` per row, from thresholds on a few measures.
  A threshold names a *measure*, in any spelling: ``recip_rank``, ``RR`` and ``mrr`` are
  one measure; so are ``ndcg_cut_10``, ``ndcg_cut.10``, ``nDCG@10`` and ``ndcg@10``
  (:func:`evaltool.names.measure_identity`);
* **warnings**: what the user should know about the query set (queries skipped, queries
  no source could judge, queries outside every group), as text on the result and as
  :class:`~evaltool.errors.EvaltoolWarning` through :mod:`warnings`.

Labels: a measure holds when its value reaches its threshold; a row is ``good`` when
every thresholded measure it has holds, ``fair`` when at least half hold, ``poor``
otherwise. The defaults are the comparative report's (MRR >= 0.7, nDCG@10 >= 0.6,
Precision@5 >= 0.5): there, 0.69 / 0.66 / 0.53 (two of three hold) reads as the middle
band, 0.25 / 0.41 / 0.20 as the lowest.

>>> label({"recip_rank": 0.69, "ndcg_cut_10": 0.66, "P_5": 0.53})
'fair'
>>> label({"mrr": 0.833, "ndcg@10": 0.72, "precision@5": 0.60}), label({"RR": 0.25, "P@5": 0.2})
('good', 'poor')
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from evaltool.aggregate import summarize
from evaltool.errors import EvaltoolError, EvaltoolWarning, QueriesSkippedWarning
from evaltool.measures.base import Agg, Request

MISSING_ZSCORE = -1000000.0
NO_GROUP = "(none)"
SUMMARY_ROW = "all"
LABELS = ("good", "fair", "poor")
DEFAULT_THRESHOLDS = {"recip_rank": 0.7, "ndcg_cut_10": 0.6, "P_5": 0.5}


# ---------------------------------------------------------------- the result


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

    def to_dict(self, per_query: bool | None = None) -> dict:
        """``{"measures", "summary", "per_query" (when asked), "meta"}``, plus ``groups``, and ``labels``
        with the ``thresholds`` that gave them, when computed: the JSON output, as Python objects
        (nan stays a float here)."""
        if per_query is None:
            per_query = self.per_query_requested
        out = {"measures": self.measures, "summary": self.summary}
        meta = self.meta
        if per_query:
            out["per_query"] = self.per_query
            if "relevance" in meta:
                meta = dict(meta, relevance=dict(meta["relevance"], per_query=self.strategies))
        out["meta"] = meta
        if self.groups:
            out["groups"] = self.groups
        if self.thresholds is not None:
            queries = set(self.qids)
            out["labels"] = {row: value for row, value in self.labels.items()
                             if per_query or row not in queries or row == SUMMARY_ROW}
            out["thresholds"] = self.thresholds
        return out

    def to_json(self, per_query: bool | None = None) -> str:
        """The JSON of ``evaltool ... -o json`` exactly (nan is ``null``); see :func:`to_dict`."""
        from evaltool.report.json import dump_json

        return dump_json(self.to_dict(per_query))

    def to_frame(self):
        """Per-query values as a long pandas DataFrame: query_id, measure, value."""
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


# ---------------------------------------------------------------- summaries and z-scores


def to_zscores(values: np.ndarray, qids: list[str], name: str, table: dict) -> np.ndarray:
    """Deviation from the reference mean in standard deviations; -1000000 where unknown (trec_eval's ``-Z``).

    >>> to_zscores(np.array([0.5, 0.2, 0.3]), ["a", "b", "c"], "map", {("a", "map"): (0.3, 0.1), ("b", "map"): (0.2, 0)})
    array([ 2.e+00,  0.e+00, -1.e+06])
    """
    out = np.empty(len(values))
    for i, (qid, value) in enumerate(zip(qids, values)):
        ref = table.get((qid, name))
        if ref is None:
            out[i] = MISSING_ZSCORE
        elif ref[1]:
            out[i] = (value - ref[0]) / ref[1]
        else:
            out[i] = 0.0 if value == ref[0] else MISSING_ZSCORE
    return out


def summarize_columns(columns: Sequence[Column], n_queries: int, runid: str, *, zscores: bool = False,
                      qrels_if_complete=None) -> dict:
    """The summary row: each column combined over the queries as its measure declares.

    ``qrels_if_complete`` (the qrels, under ``-c``) is what a measure that declares a
    ``complete_summary`` takes its summary from: trec_eval's ``num_rel`` then counts every
    judgment with a grade above 0, judged query or not.
    """
    summary: dict = {}
    for column in columns:
        m = column.measure
        if m.agg is Agg.RUNID:
            summary[column.name] = runid
        elif m.agg is not Agg.NONE:
            value = summarize(m.agg, column.values, n_queries)
            if qrels_if_complete is not None and m.complete_summary is not None:
                value = m.complete_summary(qrels_if_complete)
            summary[column.name] = int(value) if m.integer_summary and not zscores else value
    return summary


# ---------------------------------------------------------------- groups


def group_queries(qids: Sequence[str], value_of: Mapping[str, object], order: Sequence[str] = ()) -> dict[str, list[int]]:
    """Positions in ``qids`` of each group: the queries whose ``value_of[qid]`` is the same.

    Queries without a value form the group ``(none)``. Groups come in ``order`` (a topics
    file's order of values), then in order of first appearance.

    >>> group_queries(["q1", "q2", "q3", "q4"], {"q1": "hard", "q2": "easy", "q3": "hard"}, ["easy"])
    {'easy': [1], 'hard': [0, 2], '(none)': [3]}
    """
    found: dict[str, list[int]] = {}
    for i, qid in enumerate(qids):
        value = value_of.get(qid)
        found.setdefault(NO_GROUP if value is None else value, []).append(i)
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


def summary_series(result: EvalResult) -> list[Series]:
    """The columns of ``result`` that have a numeric summary, as :class:`Series`."""
    return [Series(c.name, np.asarray(c.values), c.measure.agg, c.integer_summary and not result.zscores)
            for c in result.columns
            if c.measure.agg not in (Agg.NONE, Agg.RUNID) and not isinstance(c.values, list)]


def field_values(topics, field: str) -> dict[str, str]:
    """``{qid: value}`` of one field of a :class:`~evaltool.io.topics.Topics` (queries without it left out)."""
    topics.check_field(field)
    return {qid: row[field] for qid, row in topics.rows.items() if field in row}


def field_order(topics, field: str) -> list[str]:
    """The values of ``field`` in the order the topics file first gives them."""
    return list(dict.fromkeys(row[field] for row in topics.rows.values() if field in row))


def resolve_topics(group_by, topics, judgments=None):
    """``(fields, Topics)`` from ``evaluate``'s arguments; a queries file is its own topics.

    ``topics`` is a path, a :class:`~evaltool.io.topics.Topics` or ``{qid: {field: value}}``;
    None with a queries file as judgments uses the file's fields (``category``, ...).
    """
    fields = [group_by] if isinstance(group_by, str) else list(group_by or ())
    if not fields:
        if topics is not None:
            raise EvaltoolError("--topics needs --group-by FIELD (group_by=) to say which field groups the queries")
        return [], None
    from evaltool.io import topics as topics_io

    if topics is None:
        topics = topics_io.topics_of_queries(judgments)
        if topics is None:
            raise EvaltoolError("--group-by needs --topics FILE (a TSV, JSON or JSONL of query id -> fields), "
                                "unless QRELS is a queries file that has the field")
    elif isinstance(topics, Mapping):
        topics = topics_io.topics_from_mapping(topics)
    elif isinstance(topics, (str, os.PathLike)):
        topics = topics_io.read_topics(topics)
    for name in fields:
        topics.check_field(name)
    return fields, topics


def ungrouped_note(topics, field: str, qids: Sequence[str], groups: Mapping[str, Sequence[int]]) -> str | None:
    left = groups.get(NO_GROUP)
    if not left:
        return None
    return (f"note: {len(left)} of {len(qids)} queries have no {field} in {topics.path}; "
            f"they form the group {NO_GROUP}")


# ---------------------------------------------------------------- labels


@lru_cache(maxsize=4096)
def _identity(name: str) -> str:
    from evaltool.names import measure_identity

    return measure_identity(name) or name


def parse_thresholds(specs: Iterable[str], base: Mapping[str, float] = DEFAULT_THRESHOLDS) -> dict[str, float]:
    """``NAME=VALUE`` sets a threshold, ``NAME=off`` drops one; NAME is any spelling of the measure.

    A threshold for a measure already thresholded under another spelling replaces it.

    >>> parse_thresholds(["map=0.3", "P@5=off"])
    {'recip_rank': 0.7, 'ndcg_cut_10': 0.6, 'map': 0.3}
    >>> parse_thresholds(["ndcg_cut.10=0.65"])
    {'recip_rank': 0.7, 'P_5': 0.5, 'ndcg_cut.10': 0.65}
    """
    from evaltool.names import finite_float

    thresholds = dict(base)
    for spec in specs:
        name, sep, text = spec.partition("=")
        name = name.strip()
        if not sep or not name:
            raise EvaltoolError(f"threshold {spec!r}: expected NAME=VALUE such as ndcg_cut_10=0.6 (or NAME=off)")
        for known in [k for k in thresholds if _identity(k) == _identity(name)]:
            del thresholds[known]
        if text.strip().lower() == "off":
            continue
        value = finite_float(text)
        if value is None:
            raise EvaltoolError(f"threshold {spec!r}: {text!r} is not a number")
        thresholds[name] = value
    return thresholds


# the words of each label: a row (an evaluation, a query) and a summary over several rows,
# in the comparative report's own vocabulary (Spanish) and in English
SUMMARY_LABELS = {"good": "efficient", "fair": "acceptable", "poor": "needs improvement"}
VOCABULARY = {
    "en": {"row": {"good": "good", "fair": "fair", "poor": "poor"}, "summary": SUMMARY_LABELS},
    "es": {"row": {"good": "Bueno", "fair": "Regular", "poor": "Mejorable"},
           "summary": {"good": "Eficiente", "fair": "Aceptable", "poor": "Mejorable"}},
}


def label_word(key: str | None, lang: str = "en", summary: bool = False) -> str | None:
    """The word for a label in ``lang`` (``en``, ``es``), for a row or for a summary.

    >>> label_word("fair", "es", summary=True), label_word("good", "es"), label_word("poor", summary=True)
    ('Aceptable', 'Bueno', 'needs improvement')
    """
    if lang not in VOCABULARY:
        raise EvaltoolError(f"--lang {lang!r}: expected one of {', '.join(VOCABULARY)}")
    return None if key is None else VOCABULARY[lang]["summary" if summary else "row"][key]


def _thresholded(values: Mapping, thresholds: Mapping[str, float]) -> list[tuple[object, float]]:
    """(value, threshold) for each threshold whose measure is among ``values`` (by identity)."""
    by_identity = {}
    for name, value in values.items():
        by_identity.setdefault(_identity(name), value)
    return [(by_identity[_identity(name)], limit) for name, limit in thresholds.items()
            if _identity(name) in by_identity]


def label(values: Mapping[str, float], thresholds: Mapping[str, float] = DEFAULT_THRESHOLDS) -> str | None:
    """The label of one row of values; None when no thresholded measure is among them."""
    present = _thresholded(values, thresholds)
    if not present:
        return None
    held = sum(1 for value, limit in present
               if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= limit)
    if held == len(present):
        return "good"
    return "fair" if 2 * held >= len(present) else "poor"


def check_thresholds(thresholds: Mapping[str, float], measures: Sequence[str], given: Iterable[str] = ()) -> None:
    """Refuse labels that cannot be computed: no thresholded measure, or a given one not evaluated."""
    evaluated = {_identity(m) for m in measures}
    for name in given:
        if name in thresholds and _identity(name) not in evaluated:
            raise EvaltoolError(f"threshold for {name}: {name} is not among the measures evaluated "
                                f"({', '.join(measures)}); add it with -m")
    if not any(_identity(name) in evaluated for name in thresholds):
        wanted = ", ".join(f"{k} >= {v:g}" for k, v in thresholds.items()) or "none left"
        raise EvaltoolError(f"--labels: none of the measures evaluated ({', '.join(measures)}) has a threshold "
                            f"({wanted}); evaluate one of them or give --threshold NAME=VALUE")


def threshold_request(thresholds) -> tuple[dict[str, float] | None, list[str]]:
    """``(thresholds in force, names given explicitly)`` from a ``thresholds`` argument.

    None: no labels. True: the defaults. A mapping: exactly those. Strings ``NAME=VALUE``
    / ``NAME=off``: the defaults changed as the command line's ``--threshold`` does.
    """
    if thresholds is None or thresholds is False:
        return None, []
    if thresholds is True:
        return dict(DEFAULT_THRESHOLDS), []
    if isinstance(thresholds, Mapping):
        from evaltool.names import finite_float

        out = {}
        for name, value in thresholds.items():
            number = finite_float(str(value))
            if number is None or isinstance(value, bool):
                raise EvaltoolError(f"threshold for {name}: {value!r} is not a number")
            out[str(name)] = number
        return out, []
    specs = [thresholds] if isinstance(thresholds, str) else list(thresholds)
    given = [s.partition("=")[0].strip() for s in specs if s.partition("=")[2].strip().lower() != "off"]
    return parse_thresholds(specs), given


# ---------------------------------------------------------------- warnings


def warn(messages: list[str], message: str, category: type[Warning] = EvaltoolWarning) -> None:
    """Record ``message`` on a result (its ``warnings`` list) and issue it through :mod:`warnings`.

    Every warning of an evaluation goes through here, so the command line (which prints a
    result's ``warnings``), the history and Python callers (``warnings.catch_warnings``)
    see the same messages; ``category`` is an :class:`~evaltool.errors.EvaltoolWarning`
    subclass where callers may want to filter one kind.
    """
    messages.append(message)
    warnings.warn(message, category, stacklevel=4)


def _shown(qids: Sequence[str], most: int = 5) -> str:
    return ", ".join(qids[:most]) + (", ..." if len(qids) > most else "")


def evaluation_warnings(result: EvalResult) -> list[tuple[str, type[Warning]]]:
    """What an evaluation left out, each message with its warning category: unjudged queries, items
    without text, skipped queries (or, under ``-c``, results for fewer than half of the judged
    queries), duplicates."""
    from evaltool.relevance.resolve import lacking

    meta = result.meta
    out = []

    def add(message: str, category: type[Warning] = EvaltoolWarning) -> None:
        out.append((message, category))

    rel = meta.get("relevance") or {}
    unjudged = rel.get("unjudged_queries") or []
    if unjudged:
        n = len(unjudged)
        add(f"warning: {n} {'query' if n == 1 else 'queries'} of {meta['qrels']} could not be judged "
            f"with --relevance {rel['mode']} ({lacking(rel['mode'])}) and {'is' if n == 1 else 'are'} "
            f"not scored: {_shown(unjudged)}")
    without_text = rel.get("items_without_text")
    if without_text:
        add(f"warning: {without_text} retrieved {'item has' if without_text == 1 else 'items have'} no text, "
            "so token F1 could not judge them; they count as unjudged")
    skipped = meta.get("skipped_queries") or []
    if skipped:
        add(f"warning: {len(skipped)} of the {len(skipped) + len(result.qids)} qrels queries have no results "
            f"in {meta['run']} and were skipped ({_shown(skipped)}); use -c to score them as trec_eval does",
            QueriesSkippedWarning)
    absent = meta.get("counts", {}).get("queries_missing_from_run", 0)
    if meta.get("options", {}).get("complete") and 2 * absent > len(result.qids):
        # judgments of another collection score zeros under -c: no number should hide that
        add(f"warning: only {len(result.qids) - absent} of the {len(result.qids)} queries judged in "
            f"{meta['qrels']} have results in {meta['run']}; the other {absent} score as queries without "
            "results under -c (are these judgments for this run?)")
    for side in ("qrels", "run"):
        dropped = meta.get("counts", {}).get(f"{side}_duplicates_resolved")
        if dropped:
            add(f"note: {dropped} duplicate (query, document) rows in {meta[side]} resolved by "
                f"--on-duplicate {meta['options']['on_duplicate']}")
    return out


# ---------------------------------------------------------------- the stage


def finish(result: EvalResult, *, fields: Sequence[str] = (), topics=None,
           thresholds: Mapping[str, float] | None = None) -> EvalResult:
    """Add groups, labels and warnings to a freshly computed result (``evaluate``'s last step).

    ``fields`` and ``topics`` come from :func:`resolve_topics`, ``thresholds`` from
    :func:`threshold_request` (None: no labels).
    """
    for message, category in evaluation_warnings(result):
        warn(result.warnings, message, category)
    if topics is not None:
        series = summary_series(result)
        for name in fields:
            groups = group_queries(result.qids, field_values(topics, name), field_order(topics, name))
            result.groups[name] = group_summaries(series, groups)
            note = ungrouped_note(topics, name, result.qids, groups)
            if note:
                warn(result.warnings, note)
    if thresholds is not None:
        result.thresholds = dict(thresholds)
        result.labels = row_labels(result, thresholds)
    return result


def row_labels(result: EvalResult, thresholds: Mapping[str, float]) -> dict[str, str | None]:
    """``{row: label}``: the summary ``all``, every query, every group ``FIELD=VALUE``."""
    labels = {SUMMARY_ROW: label(result.summary, thresholds)}
    labels.update({qid: label(values, thresholds) for qid, values in result.per_query.items()})
    for name, entries in result.groups.items():
        labels.update({f"{name}={value}": label(entry, thresholds) for value, entry in entries.items()})
    return labels


# ---------------------------------------------------------------- comparisons


def compare_queries(names: Sequence[str], results: Sequence[EvalResult]) -> tuple[list[str], dict[str, list[str]]]:
    """The query-set policy of a comparison: the queries every run was evaluated on.

    With ``-c`` every run is scored on every qrels query, so that is all of them; without
    it, a qrels query some run has no results for is left out of every run. Returns the
    queries compared (in the first run's order) and, per run, its queries left out.
    """
    shared = set(results[0].qids)
    for result in results[1:]:
        shared &= set(result.qids)
    qids = [q for q in results[0].qids if q in shared]
    left_out = {name: [q for q in result.qids if q not in shared] for name, result in zip(names, results)}
    return qids, left_out


def comparison_warning(cmp) -> str | None:
    """Judged queries some run has no results for (without ``-c``): left out of the comparison."""
    left = {q for result in cmp.results for q in result.meta["skipped_queries"]}
    left.update(q for qids in cmp.left_out.values() for q in qids)
    if not left:
        return None
    n = len(left)
    return (f"warning: {n} judged quer{'y' if n == 1 else 'ies'} left out of the comparison, as not every run has "
            f"results for {'it' if n == 1 else 'them'} ({_shown(sorted(left))}); use -c to score them as "
            "trec_eval does")


def run_warnings(names: Sequence[str], caught: Sequence[Sequence[warnings.WarningMessage]]) -> list[str]:
    """The warnings the runs of a comparison raised, once each: a message every run raised as it
    is, another with the runs it concerns. Skipped queries are left out: the comparison words
    them for all runs at once (:func:`comparison_warning`)."""
    runs_of: dict[str, list[str]] = {}
    for name, records in zip(names, caught):
        for record in records:
            if issubclass(record.category, EvaltoolWarning) and not issubclass(record.category, QueriesSkippedWarning):
                runs_of.setdefault(str(record.message), []).append(name)
    return [message if len(runs) == len(names) else f"{message} (run {', '.join(dict.fromkeys(runs))})"
            for message, runs in runs_of.items()]


def finish_comparison(cmp, *, fields: Sequence[str] = (), topics=None, thresholds: Mapping[str, float] | None = None,
                      given: Sequence[str] = (), caught: Sequence[Sequence] = ()):
    """Add the groups (means per group and run), the run labels and the warnings to a comparison.

    ``caught`` holds the warnings each run's evaluation raised (``warnings.catch_warnings(record=True)``).
    """
    for message in run_warnings(cmp.names, caught):
        warn(cmp.warnings, message)
    message = comparison_warning(cmp)
    if message:
        warn(cmp.warnings, message, QueriesSkippedWarning)
    if topics is not None:
        for name in fields:
            groups = group_queries(cmp.qids, field_values(topics, name), field_order(topics, name))
            per_run = {run: group_summaries([Series(m, cmp.values[run][m]) for m in cmp.measures], groups)
                       for run in cmp.names}
            cmp.groups[name] = {value: {"count": len(positions),
                                        "runs": {run: {m: per_run[run][value][m] for m in cmp.measures}
                                                 for run in cmp.names}}
                                for value, positions in groups.items()}
            note = ungrouped_note(topics, name, cmp.qids, groups)
            if note:
                warn(cmp.warnings, note)
    if thresholds is not None:
        check_thresholds(thresholds, cmp.measures, given)
        cmp.thresholds = dict(thresholds)
        cmp.labels = {run: label({m: cmp.cells[run][m].mean for m in cmp.measures}, thresholds) for run in cmp.names}
    return cmp
