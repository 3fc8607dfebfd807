"""Two executions side by side: per measure the means, ``compare``'s paired test and interval
over the queries both have, and the queries that moved most.

The statistics are :func:`evaltool.compare.paired_cell` (the cells of ``evaltool compare``)
with A as the baseline, corrected over the measures with ``correction``; wins are the
queries where B does better, as the measure declares (lower for FirstRelPos and ARP). A
measure is paired across spellings (``ndcg_cut_10`` in A, ``nDCG@10`` in B) and shown
under B's. A warning is
added when the executions were scored against different qrels (their fingerprints
differ): their values may then not be comparable at all.
"""

from __future__ import annotations

from evaltool.errors import HistoryError

MOVED = 5  # queries listed per measure


class HistoryDiff(dict):
    """The dict of :func:`diff` (JSON-ready as it is), which a notebook shows as the tables of
    ``history diff`` and :meth:`to_frame` turns into a DataFrame."""

    def _repr_html_(self) -> str:
        from evaltool.report.history import diff_report
        from evaltool.report.html import notebook_html

        return notebook_html(diff_report(self))

    def to_frame(self):
        """A row per measure: mean_a, mean_b, delta, p_value, p_adjusted, ci_low, ci_high, wins, ties, losses."""
        from evaltool.evaluation.result import require_pandas

        pd = require_pandas("to_frame()")
        fields = ["mean_a", "mean_b", "delta", "p_value", "p_adjusted"]
        rows = [
            [m, *[cell[f] for f in fields], *cell["ci"], cell["wins"], cell["ties"], cell["losses"]]
            for m, cell in self["measures"].items()
        ]
        return pd.DataFrame(rows, columns=["measure", *fields, "ci_low", "ci_high", "wins", "ties", "losses"])


def _summary(execution) -> dict:
    return {"id": execution.id, "name": execution.name, "recorded_at": execution.recorded_at}


def diff(
    db,
    a,
    b,
    measures=None,
    *,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    trials: int = 10000,
    seed: int = 0,
    moved: int = MOVED,
) -> dict:
    """``{"a", "b", "test", "correction", "queries", "only_in_a", "only_in_b", "measures": {measure:
    {"mean_a", "mean_b", "delta", "better", "p_value", "p_adjusted", "ci", "wins", "ties", "losses",
    "moved": [{"query_id", "a", "b", "delta"}], "spellings"}}, "warnings": [...]}``.

    ``measures``: default every measure both executions have per-query values of; ``better`` is
    ``higher``, ``lower`` or ``neither``; ``spellings`` the measure's name in A and in B.
    """
    import numpy as np

    from evaltool.aggregate import summarize
    from evaltool.compare import CORRECTIONS, TESTS, adjust_cells, paired_cell
    from evaltool.history.queries import get_executions
    from evaltool.history.series import better, identity, resolve_measures
    from evaltool.measures.base import Agg

    if test not in TESTS:
        raise HistoryError(f"--test {test!r}: expected one of {', '.join(TESTS)}")
    if correction not in CORRECTIONS:
        raise HistoryError(f"--correction {correction!r}: expected one of {', '.join(CORRECTIONS)}")
    first, second = get_executions(db, [a, b])
    for execution in (first, second):
        if not execution.per_query:
            raise HistoryError(
                f"execution {execution.id} ({execution.name}) has no per-query values; "
                "diff pairs queries, so it needs them"
            )

    def with_values(execution) -> dict[str, str]:  # identity -> the spelling it has per-query values under
        per_query = {m for values in execution.per_query.values() for m in values}
        return {identity(m): m for m in execution.summary if m in per_query}

    in_a, in_b = with_values(first), with_values(second)
    spelling_in_a = {in_b[key]: in_a[key] for key in in_b if key in in_a}
    common = list(spelling_in_a)
    shown = resolve_measures(measures, {m: [m, spelling_in_a[m]] for m in common}) if measures else common
    if not shown:
        raise HistoryError(f"executions {first.id} and {second.id} share no measure with per-query values")
    shared = sorted(set(first.per_query) & set(second.per_query))
    if len(shared) < 2:
        raise HistoryError(
            f"executions {first.id} and {second.id} share {len(shared)} quer"
            f"{'y' if len(shared) == 1 else 'ies'}; a paired comparison needs at least 2"
        )
    warnings = []
    qa, qb = first.fingerprints.get("qrels"), second.fingerprints.get("qrels")
    if qa != qb:
        warnings.append(
            f"executions {first.id} and {second.id} were scored against different qrels "
            f"({(qa or 'unknown')[:12]} vs {(qb or 'unknown')[:12]}); their values may not be comparable"
        )

    def column(execution, m):
        return np.array([np.nan if (v := execution.per_query[q].get(m)) is None else v for q in shared], dtype=float)

    cells, out = {}, {}
    for m in shown:
        base, other = column(first, spelling_in_a[m]), column(second, m)
        cells[m] = paired_cell(
            base, other, test, trials=trials, seed=seed, level=1 - alpha, better=better(m, second.aggregates.get(m))
        )
        change = other - base
        order = [i for i in np.argsort(-np.abs(np.nan_to_num(change)), kind="stable") if change[i] != 0][:moved]
        out[m] = {
            "moved": [
                {"query_id": shared[i], "a": float(base[i]), "b": float(other[i]), "delta": float(change[i])}
                for i in order
            ]
        }
    adjust_cells(list(cells.values()), correction)
    for m, cell in cells.items():
        out[m] = {
            "mean_a": summarize(Agg.MEAN, column(first, spelling_in_a[m]), len(shared)),
            "mean_b": cell.mean,
            "delta": cell.delta,
            "better": better(m, second.aggregates.get(m)).value,
            "p_value": cell.p_value,
            "p_adjusted": cell.p_adjusted,
            "ci": list(cell.ci),
            "wins": cell.wins,
            "ties": cell.ties,
            "losses": cell.losses,
            **out[m],
            "spellings": [spelling_in_a[m], m],
        }
    return HistoryDiff(
        {
            "a": _summary(first),
            "b": _summary(second),
            "test": test,
            "correction": correction,
            "queries": len(shared),
            "only_in_a": sorted(set(first.per_query) - set(second.per_query)),
            "only_in_b": sorted(set(second.per_query) - set(first.per_query)),
            "measures": out,
            "warnings": warnings,
        }
    )
