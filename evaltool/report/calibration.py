"""Tables of ``evaltool judgments calibrate``: formatting only.

The JSON is :func:`evaltool.judgments.calibration.calibrate`'s dict itself; these turn it
into a :class:`~evaltool.report.table.Report` (text, Markdown, LaTeX: several tables; CSV: one
tidy table).
"""

from __future__ import annotations

from evaltool.report.table import Report, Table


def _overall(figures: dict) -> list[list]:
    rows = [
        ["pairs judged by both", figures["pairs"]],
        ["judged by people only", figures["human_only"]],
        ["judged by the model only", figures["model_only"]],
        [f"cohen_kappa ({figures['weights'] or 'unweighted'})", figures["cohen_kappa"]],
        ["exact agreement", figures["exact_agreement"]],
        ["mean grade difference (model - human)", figures["mean_difference"]],
    ]
    if "rankings" in figures:
        rows += [
            ["measure", figures["measure"]],
            ["ranked on", figures["ranked_on"]],
            ["queries", figures["queries"]],
            ["systems", figures["systems"]],
            ["kendall_tau", figures["kendall_tau"]],
            ["tau_ap", figures["tau_ap"]],
        ]
    return rows


def calibration_report(figures: dict) -> Report:
    """The figures, the confusion matrix (rows: human grade, columns: model grade), and with runs
    the two rankings side by side and the largest swaps."""
    grades = figures["grades"]
    tables = [
        Table(["figure", "value"], _overall(figures), title="calibration"),
        Table(
            ["human \\ model", *map(str, grades)],
            [[str(g), *row] for g, row in zip(grades, figures["confusion"])],
            title="confusion",
        ),
    ]
    if "rankings" in figures:
        human, model = figures["rankings"]["human"], figures["rankings"]["model"]
        tables.append(
            Table(
                ["rank", "system (human qrels)", figures["measure"], "system (model qrels)", figures["measure"]],
                [[h["rank"], h["system"], h["score"], m["system"], m["score"]] for h, m in zip(human, model)],
                title="rankings",
            )
        )
        tables.append(
            Table(
                ["system", "human rank", "model rank", "shift"],
                [[s["system"], s["human_rank"], s["model_rank"], s["shift"]] for s in figures["swaps"]],
                title="largest rank swaps",
            )
        )
    return Report(tables)


def calibration_rows(figures: dict) -> Report:
    """One tidy table (CSV): a row per figure, per confusion cell, per system:
    what, human, model, value."""
    rows = [["figure", name, None, value] for name, value in _overall(figures)]
    grades = figures["grades"]
    rows += [
        ["confusion", h, m, figures["confusion"][i][j]] for i, h in enumerate(grades) for j, m in enumerate(grades)
    ]
    if "rankings" in figures:
        model = {r["system"]: r for r in figures["rankings"]["model"]}
        rows += [
            ["system " + r["system"], r["rank"], model[r["system"]]["rank"], None] for r in figures["rankings"]["human"]
        ]
    return Report([Table(["what", "human", "model", "value"], rows)])
