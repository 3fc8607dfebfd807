"""An alert for CI and cron: did the latest execution get worse than what came before?

The latest execution (of ``name``, else the newest of all, whose name then applies) is
compared, measure by measure, with a reference: ``previous`` (the execution of that
name just before it), ``best`` (per measure the best value among the executions of
that name before it) or an execution id. A measure is paired with the reference's
under any spelling (``ndcg_cut.10`` then ``nDCG@10`` is one series:
:mod:`evaltool.history.series`). It dropped when it is worse than the reference by
more than ``tolerance``, worse being lower for most measures and higher for ranks such
as FirstRelPos and ARP (as each measure declares). Counts (``num_ret``,
``num_rel_ret``...) are not quality and are left out, as are values that are not
numbers; a count named with ``measures`` is held to its reference both ways (any
change beyond ``tolerance`` fails).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evaltool.errors import HistoryError

AGAINST = ("previous", "best")


@dataclass
class Verdict:
    """The outcome of :func:`check`; ``ok`` is False when any measure dropped."""

    latest: dict
    against: str
    tolerance: float
    rows: list[dict] = field(default_factory=list)  # measure, latest, reference, reference_id, delta, better, dropped
    note: str | None = None

    @property
    def ok(self) -> bool:
        return not any(row["dropped"] for row in self.rows)

    @property
    def dropped(self) -> list[dict]:
        return [row for row in self.rows if row["dropped"]]

    def _repr_html_(self) -> str:
        """The table of ``history check`` as a notebook shows it: each measure holds or dropped."""
        from evaltool.report.history import check_report
        from evaltool.report.html import notebook_html

        return notebook_html(check_report(self))

    def to_frame(self):
        """A row per measure: measure, latest, reference, reference_id, delta, better, dropped."""
        from evaltool.evaluation.result import require_pandas

        columns = ["measure", "latest", "reference", "reference_id", "delta", "better", "dropped"]
        return require_pandas("to_frame()").DataFrame([[r[c] for c in columns] for r in self.rows], columns=columns)

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "latest": self.latest,
            "against": self.against,
            "tolerance": self.tolerance,
            "measures": self.rows,
            "note": self.note,
        }


def _judged(execution) -> list[str]:
    """The measures of ``execution`` a change in is a gain or a loss (not counts), with a value."""
    from evaltool.history.series import better
    from evaltool.measures.base import Better

    return [
        m
        for m, v in execution.summary.items()
        if v is not None and better(m, execution.aggregates.get(m)) is not Better.NEITHER
    ]


def check(
    db=None, name: str | None = None, against: str = "previous", tolerance: float = 1e-4, measures=None
) -> Verdict:
    """Compare the latest execution with ``against`` (``previous``, ``best`` or an id); see the module."""
    from evaltool.history.queries import get_execution, list_executions
    from evaltool.history.series import better, identity, resolve_measures, series, value
    from evaltool.measures.base import Better

    if tolerance < 0:
        raise HistoryError(f"--tolerance {tolerance}: expected 0 or more")
    if against not in AGAINST:
        try:
            int(against)
        except (TypeError, ValueError):
            raise HistoryError(f"--against {against!r}: expected previous, best or an execution id") from None
    newest = list_executions(db, name=name, limit=1, newest_first=True)
    if not newest:
        raise HistoryError(
            "no execution to check" + (f" named {name!r}" if name else "") + " (see 'evaltool history list')"
        )
    latest = newest[0]
    summary = {"id": latest.id, "name": latest.name, "recorded_at": latest.recorded_at}
    if against in AGAINST:
        earlier = [
            e
            for e in list_executions(db, name=latest.name, newest_first=True)
            if (e.recorded_at, e.id) < (latest.recorded_at, latest.id)
        ]
        if not earlier:
            return Verdict(
                summary,
                against,
                tolerance,
                note=f"execution {latest.id} is the first named {latest.name!r}: nothing to compare against",
            )
        candidates = earlier[:1] if against == "previous" else earlier
    else:
        candidates = [get_execution(db, against, per_query=False)]
        if candidates[0].id == latest.id:
            raise HistoryError(f"--against {against}: that is the latest execution itself")
    groups = {identity(m): [m] for m in latest.summary}  # the latest's spellings, each with the others'
    for shown, spellings in series([*reversed(candidates), latest]).items():
        key = identity(shown)
        if key in groups:
            groups[key] += [s for s in spellings if s not in groups[key]]
    by_name = {spellings[0]: spellings for spellings in groups.values()}
    shown = resolve_measures(measures, by_name) if measures else _judged(latest)
    verdict = Verdict(summary, against, tolerance)
    for m in shown:
        direction = better(m, latest.aggregates.get(m))
        known = [(v, c.id) for c in candidates if (v := value(c, by_name[m])) is not None]
        current = latest.summary.get(m)
        if not known or current is None:
            continue
        if against == "best" and direction is not Better.NEITHER:
            reference, reference_id = max(known, key=lambda pair: direction.gain(pair[0], 0.0))
        else:
            reference, reference_id = known[0]
        gain = direction.gain(current, reference)
        dropped = abs(current - reference) > tolerance if gain is None else gain < -tolerance
        verdict.rows.append(
            {
                "measure": m,
                "latest": current,
                "reference": reference,
                "reference_id": reference_id,
                "delta": current - reference,
                "better": direction.value,
                "dropped": dropped,
            }
        )
    if not verdict.rows:
        verdict.note = f"execution {latest.id} shares no measure with what it is checked against"
    return verdict
