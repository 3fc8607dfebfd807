"""An alert for CI and cron: did the latest execution drop below what came before?

The latest execution (of ``name``, else the newest of all, whose name then applies) is
compared, measure by measure, with a reference: ``previous`` (the execution of that
name just before it), ``best`` (per measure the highest value among the executions of
that name before it) or an execution id. A measure dropped when its value is below the
reference by more than ``tolerance``. Measures whose summary is a sum (``num_ret``,
``num_rel_ret``...) are counts, not quality, and are left out unless asked for with
``measures``; so are values that are not numbers.
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
    rows: list[dict] = field(default_factory=list)  # measure, latest, reference, reference_id, delta, dropped
    note: str | None = None

    @property
    def ok(self) -> bool:
        return not any(row["dropped"] for row in self.rows)

    @property
    def dropped(self) -> list[dict]:
        return [row for row in self.rows if row["dropped"]]

    def to_dict(self) -> dict:
        return {"ok": self.ok, "latest": self.latest, "against": self.against, "tolerance": self.tolerance,
                "measures": self.rows, "note": self.note}


def _quality_measures(execution) -> list[str]:
    return [m for m, v in execution.summary.items() if v is not None and execution.aggregates.get(m) != "sum"]


def check(db=None, name: str | None = None, against: str = "previous", tolerance: float = 1e-4,
          measures=None) -> Verdict:
    """Compare the latest execution with ``against`` (``previous``, ``best`` or an id); see the module."""
    from evaltool.history.comparative import resolve_measures
    from evaltool.history.queries import get_execution, list_executions

    if tolerance < 0:
        raise HistoryError(f"--tolerance {tolerance}: expected 0 or more")
    if against not in AGAINST:
        try:
            int(against)
        except (TypeError, ValueError):
            raise HistoryError(f"--against {against!r}: expected previous, best or an execution id") from None
    newest = list_executions(db, name=name, limit=1, newest_first=True)
    if not newest:
        raise HistoryError("no execution to check" + (f" named {name!r}" if name else "") +
                           " (see 'evaltool history list')")
    latest = newest[0]
    summary = {"id": latest.id, "name": latest.name, "recorded_at": latest.recorded_at}
    if against in AGAINST:
        earlier = [e for e in list_executions(db, name=latest.name, newest_first=True)
                   if (e.recorded_at, e.id) < (latest.recorded_at, latest.id)]
        if not earlier:
            return Verdict(summary, against, tolerance,
                           note=f"execution {latest.id} is the first named {latest.name!r}: nothing to compare against")
        candidates = earlier[:1] if against == "previous" else earlier
    else:
        candidates = [get_execution(db, against, per_query=False)]
        if candidates[0].id == latest.id:
            raise HistoryError(f"--against {against}: that is the latest execution itself")
    available = [m for m in _quality_measures(latest) if any(m in c.summary for c in candidates)]
    shown = resolve_measures(measures, list(latest.summary)) if measures else available
    verdict = Verdict(summary, against, tolerance)
    for m in shown:
        known = [(c.summary[m], c.id) for c in candidates if c.summary.get(m) is not None]
        value = latest.summary.get(m)
        if not known or value is None:
            continue
        reference, reference_id = max(known, key=lambda pair: pair[0]) if against == "best" else known[0]
        verdict.rows.append({"measure": m, "latest": value, "reference": reference, "reference_id": reference_id,
                             "delta": value - reference, "dropped": value < reference - tolerance})
    if not verdict.rows:
        verdict.note = f"execution {latest.id} shares no measure with what it is checked against"
    return verdict
