"""The names this module held before the evaluation stage was split by concern, for code that
imports them from here.

The result type is in :mod:`evaltool.evaluation.result`, z-scores in
:mod:`evaltool.evaluation.zscores`, groups in :mod:`evaltool.evaluation.groups`, labels and
thresholds in :mod:`evaltool.evaluation.labels`, warnings in
:mod:`evaltool.evaluation.warnings`, the query set of a comparison in :mod:`evaltool.compare`
and the reading of a topics argument in :mod:`evaltool.io.topics`.

>>> from evaltool.results import EvalResult, label
>>> label({"recip_rank": 0.9})
'good'
"""

from __future__ import annotations

from evaltool.compare import compare_queries, comparison_warning, finish_comparison, run_warnings
from evaltool.evaluation.groups import (
    NO_GROUP,
    Series,
    field_order,
    field_values,
    group_queries,
    group_summaries,
    summary_series,
    ungrouped_note,
)
from evaltool.evaluation.labels import (
    DEFAULT_THRESHOLDS,
    LABELS,
    SUMMARY_LABELS,
    SUMMARY_ROW,
    VOCABULARY,
    check_thresholds,
    label,
    label_word,
    parse_thresholds,
    row_labels,
    threshold_request,
)
from evaltool.evaluation.orchestration import finish
from evaltool.evaluation.result import Column, EvalResult, require_pandas, summarize_columns
from evaltool.evaluation.warnings import evaluation_warnings, warn
from evaltool.evaluation.zscores import MISSING_ZSCORE, to_zscores
from evaltool.io.topics import resolve_topics

__all__ = [
    "DEFAULT_THRESHOLDS",
    "LABELS",
    "MISSING_ZSCORE",
    "NO_GROUP",
    "SUMMARY_LABELS",
    "SUMMARY_ROW",
    "VOCABULARY",
    "Column",
    "EvalResult",
    "Series",
    "check_thresholds",
    "compare_queries",
    "comparison_warning",
    "evaluation_warnings",
    "field_order",
    "field_values",
    "finish",
    "finish_comparison",
    "group_queries",
    "group_summaries",
    "label",
    "label_word",
    "parse_thresholds",
    "require_pandas",
    "resolve_topics",
    "row_labels",
    "run_warnings",
    "summarize_columns",
    "summary_series",
    "threshold_request",
    "to_zscores",
    "ungrouped_note",
    "warn",
]
