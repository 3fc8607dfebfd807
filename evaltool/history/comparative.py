"""The comparative report: one row per execution in a date range, and a summary row.

A row holds the execution's id, name, date, its summary value of each measure shown
and, with labels, its label computed with the thresholds it was recorded with. The
summary holds the number of executions, the mean over them of each measure (over the
executions that have it; null when none does) and a global label from those means,
with the thresholds of the newest execution in the range. Row labels are good / fair
/ poor, the summary's efficient / acceptable / needs improvement (``lang="es"``: Bueno /
Regular / Mejorable and Eficiente / Aceptable / Mejorable).

>>> import os, tempfile
>>> from evaltool.history import record, report
>>> db = os.path.join(tempfile.mkdtemp(), "history.sqlite")
>>> for at, values in [("2025-01-28", (0.833, 0.72, 0.60)), ("2025-01-28", (1.0, 0.85, 0.80))]:
...     _ = record({"summary": dict(zip(["recip_rank", "ndcg_cut_10", "P_5"], values))}, db=db, name="panel", at=at)
>>> out = report(db, "2025-01-01", "2025-01-31", labels=True, lang="es")
>>> [row["label"] for row in out["rows"]], out["summary"]["count"], out["summary"]["label"]
(['Bueno', 'Bueno'], 2, 'Eficiente')
"""

from __future__ import annotations


class ComparativeReport(dict):
    """The dict of :func:`report` (JSON-ready as it is), which a notebook shows as the table of
    ``history report`` and :meth:`to_frame` turns into a DataFrame."""

    lang = "en"

    def _repr_html_(self) -> str:
        from evaltool.report.history import comparative_report
        from evaltool.report.html import notebook_html
        from evaltool.report.i18n import t

        return notebook_html(comparative_report(self, self.lang), summary_key=t("report.summary", self.lang))

    def to_frame(self):
        """A row per execution: id, name, recorded_at, each measure's value, label."""
        from evaltool.evaluation.result import require_pandas

        pd = require_pandas("to_frame()")
        measures = list(self["summary"]["values"])
        rows = [
            [row["id"], row["name"], row["recorded_at"], *[row["values"][m] for m in measures], row["label"]]
            for row in self["rows"]
        ]
        return pd.DataFrame(rows, columns=["id", "name", "recorded_at", *measures, "label"])


def _mean(values: list) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def report(
    db=None,
    date_from=None,
    date_to=None,
    name: str | None = None,
    tags=None,
    measures=None,
    labels: bool = False,
    lang: str = "en",
) -> dict:
    """The comparative report as the dict ``history report -o json`` prints (a :class:`ComparativeReport`,
    which a notebook shows as a table)::

        {"rows": [{"id", "name", "recorded_at", "values": {measure: value}, "label"}],
         "summary": {"count", "values": {measure: mean}, "label"}, "from", "to"}

    ``measures`` (``-m``, any spelling): the columns; default every measure of the executions in the
    range (of the whole history filtered by ``name`` and ``tags`` when the range is
    empty, so that an empty range still names its columns, with null means). Labels
    are null unless ``labels``; ``from`` and ``to`` are the bounds as stored (UTC). A measure
    recorded under several spellings is one column (:mod:`evaltool.history.series`).
    """
    from evaltool.history.dates import range_bounds
    from evaltool.history.queries import list_executions
    from evaltool.evaluation.labels import label, label_word
    from evaltool.history.series import resolve_measures, series, value

    label_word(None, lang)  # an unknown language fails before anything is read
    low, high = range_bounds(date_from, date_to)
    executions = list_executions(db, date_from, date_to, name, tags)
    groups = series(executions or list_executions(db, name=name, tags=tags))
    shown = resolve_measures(measures, groups) if measures else list(groups)
    rows = []
    for execution in executions:
        key = label(execution.summary, execution.thresholds) if labels else None
        rows.append(
            {
                "id": execution.id,
                "name": execution.name,
                "recorded_at": execution.recorded_at,
                "values": {m: value(execution, groups[m]) for m in shown},
                "label": label_word(key, lang),
            }
        )
    means = {m: _mean([value(e, spellings) for e in executions]) for m, spellings in groups.items()}
    summary_label = None
    if labels and executions:  # thresholds name measures in any spelling; label() pairs them by identity
        summary_label = label_word(
            label({m: v for m, v in means.items() if v is not None}, executions[-1].thresholds), lang, summary=True
        )
    summary = {"count": len(executions), "values": {m: means[m] for m in shown}, "label": summary_label}
    out = ComparativeReport(rows=rows, summary=summary, **{"from": low, "to": high})
    out.lang = lang
    return out
