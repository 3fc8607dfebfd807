"""trec_eval's table: ``measure<pad 22>\\tquery\\tvalue``, per-query rows first (``-q``)."""

from __future__ import annotations

import math


MISSING = "-nan"  # how trec_eval prints a value that does not exist (glibc prints the 0/0 NaN with its sign bit)


def number_text(value, integer: bool, zscores: bool) -> str:
    """One value as trec_eval prints it: counts and ranks as integers, else 4 decimals; nan (no value) as
    trec_eval prints its 0/0 cases (``11pt_avg`` of an empty ranking), whatever the kind.

    >>> number_text(3.0, True, False), number_text(1.5, False, False), number_text(float("nan"), True, False)
    ('3', '1.5000', '  -nan')
    """
    if math.isnan(value):
        return f"{MISSING:>6}"
    if integer and not zscores:
        return str(int(value))
    return f"{value:6.4f}"


def format_trec(result, per_query: bool = False, summary: bool = True) -> str:
    """Render exactly what trec_eval 10.0 prints for the same options (an :class:`~evaltool.evaluation.result.EvalResult`)."""
    z = "Z" if result.zscores else ""
    out: list[str] = []
    if per_query:
        shown = [c for c in result.columns if c.per_query]
        for i, qid in enumerate(result.qids):
            for column in shown:
                value = column.values[i]
                if isinstance(value, str):
                    out.append(f"{column.name:<22}\t{qid}\t'{value}'\n")
                else:
                    out.append(f"{z}{column.name:<22}\t{qid}\t{number_text(value, column.integer, result.zscores)}\n")
    if summary:
        for column in result.columns:
            if column.aggregation == "none":
                continue
            value = result.summary[column.name]
            if column.aggregation == "runid":
                out.append(f"{column.name:<22}\tall\t{value}\n")
            else:
                out.append(f"{z}{column.name:<22}\tall\t{number_text(value, column.integer_summary, result.zscores)}\n")
    return "".join(out)
