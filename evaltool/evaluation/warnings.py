"""Warnings: what the user should know about the query set of an evaluation.

Queries skipped, queries no source could judge, duplicates resolved, queries outside
every group: each is text on the result (``result.warnings``, which the command line
prints and the history keeps) and an :class:`~evaltool.errors.EvaltoolWarning` through
:mod:`warnings`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evaltool.errors import EvaltoolWarning, QueriesSkippedWarning, clip

if TYPE_CHECKING:
    from evaltool.evaluation.result import EvalResult


def warn(messages: list[str], message: str, category: type[Warning] = EvaltoolWarning) -> None:
    """Record ``message`` on a result (its ``warnings`` list) and issue it through :mod:`warnings`.

    Every warning of an evaluation goes through here, so the command line (which prints a
    result's ``warnings``), the history and Python callers (``warnings.catch_warnings``)
    see the same messages; ``category`` is an :class:`~evaltool.errors.EvaltoolWarning`
    subclass where callers may want to filter one kind.
    """
    messages.append(message)
    warnings.warn(message, category, stacklevel=4)


def shown(qids: Sequence[str], most: int = 5) -> str:
    """The first ``most`` ids of a list, each cut as messages cut offending text (:func:`clip`)."""
    return ", ".join(map(clip, qids[:most])) + (", ..." if len(qids) > most else "")


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
        add(
            f"warning: {n} {'query' if n == 1 else 'queries'} of {meta['qrels']} could not be judged "
            f"with --relevance {rel['mode']} ({lacking(rel['mode'])}) and {'is' if n == 1 else 'are'} "
            f"not scored: {shown(unjudged)}"
        )
    without_text = rel.get("items_without_text")
    if without_text:
        add(
            f"warning: {without_text} retrieved {'item has' if without_text == 1 else 'items have'} no text, "
            "so token F1 could not judge them; they count as unjudged"
        )
    skipped = meta.get("skipped_queries") or []
    if skipped:
        add(
            f"warning: {len(skipped)} of the {len(skipped) + len(result.qids)} qrels queries have no results "
            f"in {meta['run']} and were skipped ({shown(skipped)}); use -c to score them as trec_eval does",
            QueriesSkippedWarning,
        )
    absent = meta.get("counts", {}).get("queries_missing_from_run", 0)
    if meta.get("options", {}).get("complete") and 2 * absent > len(result.qids):
        # judgments of another collection score zeros under -c: no number should hide that
        add(
            f"warning: only {len(result.qids) - absent} of the {len(result.qids)} queries judged in "
            f"{meta['qrels']} have results in {meta['run']}; the other {absent} score as queries without "
            "results under -c (are these judgments for this run?)"
        )
    for side in ("qrels", "run"):
        dropped = meta.get("counts", {}).get(f"{side}_duplicates_resolved")
        if dropped:
            add(
                f"note: {dropped} duplicate (query, document) rows in {meta[side]} resolved by "
                f"--on-duplicate {meta['options']['on_duplicate']}"
            )
    return out
