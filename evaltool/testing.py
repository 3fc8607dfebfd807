"""Helpers for your own test suite: keep a system's numbers where they were.

>>> import evaltool.testing
>>> qrels, run = {"q1": {"d1": 1}, "q2": {"d2": 1}}, {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 2.0, "d2": 1.0}}
>>> evaltool.testing.assert_matches({"recip_rank": 0.75}, qrels, run).checked
1
>>> evaltool.testing.assert_matches({"recip_rank": 0.8, ("recip_rank", "q2"): 0.5}, qrels, run, per_query=True)
Traceback (most recent call last):
...
AssertionError: 1 of 2 values drifted from <reference> (tolerance 0.0001):
measure     query  reference   current  difference  status
recip_rank  all     0.800000  0.750000   -0.050000  drift
"""

from __future__ import annotations

import os

from evaltool.check import CheckResult, check, read_reference, reference_from_mapping


def assert_matches(
    reference,
    qrels,
    run,
    tolerance: float = 1e-4,
    *,
    per_query: bool = False,
    allow_improvement: bool = False,
    **options,
) -> CheckResult:
    """Raise ``AssertionError`` with a table of drifts unless ``run`` reproduces ``reference``.

    ``reference`` is a reference file (the ``--format json`` output or ``measure qid value``
    lines) or a dict: ``{measure: value}`` for summary values, ``{(measure, qid): value}``
    for per-query ones, or the JSON layout. ``options`` are :func:`evaltool.evaluate`'s
    keywords (``complete=True``, ``relevance_level=2``, ...). Returns the check's result.
    """
    if isinstance(reference, (str, os.PathLike)):
        reference = read_reference(reference)
    elif isinstance(reference, dict):
        reference = reference_from_mapping(reference)
    result = check(
        reference, qrels, run, tolerance=tolerance, per_query=per_query, allow_improvement=allow_improvement, **options
    )
    if not result.ok:
        from evaltool.report.table import render
        from evaltool.report.layouts import check_report

        failed = len(result.failures)
        heading = (
            f"{failed} of {result.checked} values drifted from {result.reference} (tolerance {result.tolerance:g}):\n"
        )
        raise AssertionError(heading + render(check_report(result, notes=False), "table").rstrip("\n"))
    return result
