"""Tables of the evaluation history (``evaltool history ...``): formatting only.

Each function turns what :mod:`evaltool.history` returns into a
:class:`~evaltool.report.table.Report`, which renders as text, CSV, Markdown or LaTeX;
the JSON of each command is the library's dict itself.
"""

from __future__ import annotations

from evaltool.report.i18n import t
from evaltool.report.table import Report, Table, p_text


def _count(n: int, lang: str) -> str:
    return t("report.count_one" if n == 1 else "report.count", lang, count=n)


def comparative_report(out: dict, lang: str = "en") -> Report:
    """The comparative table of ``history report``: a row per execution, then the summary row; every word
    in ``lang`` (the measures keep their recorded names)."""
    measures = list(out["summary"]["values"])
    labelled = out["summary"]["label"] is not None or any(r["label"] is not None for r in out["rows"])
    header = [t("column.id", lang), t("column.name", lang), t("column.recorded_at", lang), *measures] + (
        [t("column.label", lang)] if labelled else []
    )
    rows = []
    for row in out["rows"]:
        rows.append(
            [row["id"], row["name"], row["recorded_at"], *row["values"].values()] + ([row["label"]] if labelled else [])
        )
    summary = out["summary"]
    rows.append(
        [t("report.summary", lang), _count(summary["count"], lang), None, *summary["values"].values()]
        + ([summary["label"]] if labelled else [])
    )
    span = t("report.span", lang, low=out["from"] or t("range.first", lang), high=out["to"] or t("range.last", lang))
    return Report([Table(header, rows)], notes=[span])


def executions_table(executions: list) -> Report:
    """``history list``: one line per execution."""
    header = ["id", "name", "recorded_at", "kind", "queries", "tags", "note"]
    rows = [
        [
            e.id,
            e.name,
            e.recorded_at,
            e.kind,
            e.query_count,
            " ".join(f"{k}={v}" for k, v in e.tags.items()) or None,
            e.note,
        ]
        for e in executions
    ]
    return Report([Table(header, rows)], notes=[] if executions else ["no execution matches"])


def execution_report(execution, per_query: bool = False) -> Report:
    """``history show``: what was recorded, the summary values and (``-q``) every query's."""
    facts = [
        ["id", execution.id],
        ["name", execution.name],
        ["recorded_at", execution.recorded_at],
        ["kind", execution.kind],
        ["note", execution.note],
        ["queries", execution.query_count],
        ["tags", " ".join(f"{k}={v}" for k, v in execution.tags.items()) or None],
        ["suite version", execution.suite_version],
        ["evaltool", execution.evaltool_version],
        ["git commit", execution.git_commit],
        *[[f"{side} sha256", digest] for side, digest in execution.fingerprints.items() if digest],
        *[[side, path] for side, path in execution.sources.items()],
        ["options", " ".join(f"{k}={v}" for k, v in execution.options.items()) or None],
        ["thresholds", " ".join(f"{k}>={v:g}" for k, v in execution.thresholds.items()) or None],
    ]
    tables = [
        Table(["field", "value"], [[k, v] for k, v in facts if v is not None]),
        Table(["query", *execution.summary], [["all", *execution.summary.values()]]),
    ]
    if per_query and execution.per_query:
        measures = list(execution.summary)
        tables[1].rows = [
            [qid, *(values.get(m) for m in measures)] for qid, values in execution.per_query.items()
        ] + tables[1].rows
    if execution.results is not None:
        tables.append(returned_table(execution))
    return Report(tables)


MISSED_SHOWN = 10  # relevant ids the search missed, listed per query in a terminal (the JSON has them all)


def returned_table(execution) -> Table:
    """What the search returned, a row per document: query, rank, id, score, judgment (relevant with
    its grade / not relevant / unjudged), title; a query's error and the relevant ids it missed in rows
    of their own. ``execution.results`` come judged (:func:`evaltool.history.returned.judged`: each
    with its ``marks`` and ``missed``)."""
    rows = []
    for seen in execution.results:
        result = seen
        qid = result["query_id"]
        if result["error"]:
            rows.append([qid, None, "(error)", None, result["error"], None])
        for doc, (_, mark, grade) in zip(result["documents"], seen["marks"]):
            shown = f"relevant ({grade})" if mark == "relevant" else mark
            rows.append([qid, doc["rank"], doc["doc_id"], doc["score"], shown, doc["title"]])
        if seen["missed"]:
            shown = seen["missed"][:MISSED_SHOWN]
            more = len(seen["missed"]) - len(shown)
            rows.append([qid, None, "(missed)", None, " ".join(shown) + (f" (and {more} more)" if more else ""), None])
    return Table(["query", "rank", "document", "score", "judgment", "title"], rows, title="what the search returned")


def diff_report(out: dict) -> Report:
    """``history diff``: a row per measure, then the queries that moved most."""
    a, b = out["a"], out["b"]
    header = [
        "measure",
        f"mean {a['id']}",
        f"mean {b['id']}",
        "delta",
        "p",
        "p_adjusted",
        "ci",
        "wins",
        "ties",
        "losses",
    ]
    rows, moved = [], []
    for m, cell in out["measures"].items():
        ci = f"[{cell['ci'][0]:.4f}, {cell['ci'][1]:.4f}]"
        rows.append(
            [
                m,
                cell["mean_a"],
                cell["mean_b"],
                cell["delta"],
                p_text(cell["p_value"]),
                p_text(cell["p_adjusted"]),
                ci,
                cell["wins"],
                cell["ties"],
                cell["losses"],
            ]
        )
        moved += [[m, q["query_id"], q["a"], q["b"], q["delta"]] for q in cell["moved"]]
    notes = [
        f"A = execution {a['id']} ({a['name']}, {a['recorded_at']}); B = execution {b['id']} ({b['name']}, "
        f"{b['recorded_at']}); {out['queries']} shared queries; test: {out['test']}, correction: "
        f"{out['correction']}"
    ]
    for side, key in (("A", "only_in_a"), ("B", "only_in_b")):
        if out[key]:
            notes.append(
                f"{len(out[key])} quer{'y' if len(out[key]) == 1 else 'ies'} only in {side}, not compared: "
                + ", ".join(out[key][:5])
                + (", ..." if len(out[key]) > 5 else "")
            )
    return Report(
        [Table(header, rows), Table(["measure", "query", "A", "B", "delta"], moved, title="queries that moved most")],
        notes,
    )


def check_report(verdict) -> Report:
    """``history check``: every measure compared, the dropped ones marked (a count that moved: changed)."""
    latest = verdict.latest
    rows = [
        [
            r["measure"],
            r["latest"],
            r["reference"],
            r["reference_id"],
            r["delta"],
            ("changed" if r["better"] == "neither" else "dropped") if r["dropped"] else "holds",
        ]
        for r in verdict.rows
    ]
    head = (
        f"latest: execution {latest['id']} ({latest['name']}, {latest['recorded_at']}) against "
        f"{verdict.against} (tolerance {verdict.tolerance:g}): "
        + ("no drop" if verdict.ok else f"{len(verdict.dropped)} measure(s) dropped")
    )
    return Report(
        [Table(["measure", "latest", "reference", "reference_id", "delta", "status"], rows)],
        [head] + ([verdict.note] if verdict.note else []),
    )
