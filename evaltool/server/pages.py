"""The dashboard's pages: each renders the dict its view returned, and nothing else (style rule 13).

Every page links to its JSON twin. Tables and charts come from :mod:`evaltool.report.html`
(the same pieces as the ``-o html`` files), so every user string is escaped there.
"""

from __future__ import annotations

import math
from urllib.parse import quote

from evaltool.report.html import (
    Markup, chart, difference_histogram, document, escape, facts, join, paired_scatter, per_query_bars, table, tag,
    trend,
)
from evaltool.server.views import query_string

NAVIGATION = (("report", "/", "Comparative report"), ("executions", "/trends", "Trends"), ("suites", "/suites", "Suites"))


def _header(current: str) -> Markup:
    links = [tag("a", text, href=href, aria_current="page" if name == current else None)
             for name, href, text in NAVIGATION]
    return tag("header", tag("strong", "evaltool"), links, class_="top")


def execution_link(execution_id) -> str:
    return f"/executions/{int(execution_id)}"


def _json_link(view, args: dict, query: str) -> Markup:
    address = view.api.replace("{id}", str(args.get("id", "")))
    return tag("p", tag("a", "this page as JSON", href=f"{address}{'?' + query if query else ''}"), class_="meta")


def _filters(args: dict, *, measures: bool = False, labels: bool = False) -> Markup:
    """The date range and name (and tag) form, filled with the request's values; GET to the same page."""
    fields = [
        tag("label", "from", Markup(f'<input type="date" name="date_from" value="{_attr(args["date_from"])}">')),
        tag("label", "to", Markup(f'<input type="date" name="date_to" value="{_attr(args["date_to"])}">')),
        tag("label", "name", Markup(f'<input type="text" name="name" value="{_attr(args["name"])}" '
                                    'placeholder="all names">')),
        tag("label", "tag", Markup(f'<input type="text" name="tag" value="{_attr((args.get("tag") or [""])[0])}" '
                                   'placeholder="KEY=VALUE">')),
    ]
    if labels:
        fields.append(tag("label", "labels", Markup(
            f'<select name="lang"><option value="en"{_selected(args["lang"] == "en")}>English</option>'
            f'<option value="es"{_selected(args["lang"] == "es")}>Español</option></select>')))
    if measures:
        fields.append(tag("label", "measures", Markup(
            f'<input type="text" name="measure" value="{_attr(" ".join(args["measure"]))}" '
            'placeholder="all (map ndcg_cut.10 ...)">')))
    return tag("form", fields, tag("button", "Show", type="submit"), method="get", class_="filters")


def _attr(value) -> str:
    return escape("" if value is None else value)


def _selected(yes: bool) -> str:
    return " selected" if yes else ""


def _range_text(data: dict) -> str:
    low, high = data.get("from"), data.get("to")
    return f"{low or 'the first execution'} to {high or 'the last'} (UTC, both included)"


def _label_cell(value) -> Markup:
    if value is None:
        return tag("td", "")
    return tag("td", value, class_="label-" + "-".join(str(value).lower().split()))


# ---------------------------------------------------------------- pages


def report_page(data: dict, args: dict, view) -> Markup:
    """The comparative table: a row per execution (linked to its page, with a box to pick it for the
    side-by-side view), a column per measure, the label; the summary row below."""
    measures = list(data["summary"]["values"])
    head = tag("thead", tag("tr", tag("th", "compare"), tag("th", "id", class_="num"), tag("th", "name"),
                            tag("th", "date (UTC)"), [tag("th", m, class_="num") for m in measures], tag("th", "label")))
    rows = []
    for row in data["rows"]:
        values = [_value_cell(row["values"].get(m)) for m in measures]
        pick = Markup(f'<input type="checkbox" name="ids" value="{int(row["id"])}" '
                      f'aria-label="pick execution {int(row["id"])}">')
        rows.append(tag("tr", tag("td", pick), tag("td", tag("a", row["id"], href=execution_link(row["id"])),
                                                 class_="num"),
                        tag("td", tag("a", row["name"], href=execution_link(row["id"])), class_="name"),
                        tag("td", row["recorded_at"]), values, _label_cell(row["label"]), data_execution=row["id"]))
    summary = data["summary"]
    foot = tag("tfoot", tag("tr", tag("td", ""), tag("td", ""), tag("td", f"{summary['count']} executions"),
                            tag("td", "mean"), [_value_cell(summary["values"][m]) for m in measures],
                            _label_cell(summary["label"]), class_="summary"))
    body = [tag("h1", "Comparative report"), _filters(args, measures=True, labels=True),
            tag("p", f"{_range_text(data)}: {summary['count']} executions", class_="meta")]
    if data["rows"]:
        form = tag("form", tag("table", head, tag("tbody", rows), foot, class_="sortable", data_table="report"),
                   tag("button", "Compare the executions picked", type="submit"), method="get", action="/compare")
        body.append(form)
    else:
        body.append(tag("p", "No execution in this range.", class_="note"))
    body.append(_json_link(view, args, query_string(args)))
    return join(body)


def _value_cell(value) -> Markup:
    if value is None:
        return tag("td", "", class_="num", data_value="")
    return tag("td", f"{value:.4f}", class_="num", data_value=repr(value))


def _value_of(execution: dict, spellings: list[str]):
    """An execution's summary value of a measure recorded under any of ``spellings``."""
    return next((execution["summary"][s] for s in spellings if execution["summary"].get(s) is not None), None)


def trends_page(data: dict, args: dict, view) -> Markup:
    """A chart per measure over time (a point per execution; click one for its page) and the list."""
    found = data["executions"]
    charts = []
    for m, spellings in data["series"].items():  # a measure recorded under several spellings is one trend
        points = [{"name": e["name"], "recorded_at": e["recorded_at"], "value": value, "note": e["note"],
                   "link": execution_link(e["id"])} for e in found if (value := _value_of(e, spellings)) is not None]
        charts.append(chart(trend(points, m), follow=True, name=f"trend-{m}"))
    rows = [[e["id"], e["name"], e["recorded_at"], e["note"], ", ".join(f"{k}={v}" for k, v in e["tags"].items())]
            for e in found]
    pager = [tag("a", "previous page", href=data["previous"]) if data["previous"] else None,
             tag("a", "next page", href=data["next"]) if data["next"] else None]
    return join([
        tag("h1", "Trends"), _filters(args),
        tag("p", f"{len(found)} executions, from number {data['offset'] + 1}"
                 + (" (more on the next page)" if data["next"] else ""), class_="meta"),
        tag("div", charts, class_="charts") if charts else tag("p", "No execution in this range.", class_="note"),
        tag("h2", "Executions"),
        table(["id", "name", "date (UTC)", "note", "tags"], rows, sortable=True, name="executions",
              links={i: execution_link(e["id"]) for i, e in enumerate(found)}),
        tag("nav", pager, class_="pages"), _json_link(view, args, query_string(args)),
    ])


def execution_page(data: dict, args: dict, view) -> Markup:
    """One execution: what it is, its summary, every query's value (sortable) and a bar chart of them."""
    per_query = data.get("per_query") or {}
    measures = list(data["summary"])
    shown = [m for m in measures if any(m in v for v in per_query.values())]
    qids = list(per_query)
    about = [("name", data["name"]), ("recorded at (UTC)", data["recorded_at"]), ("kind", data["kind"]),
             ("note", data["note"]), ("tags", ", ".join(f"{k}={v}" for k, v in data["tags"].items())),
             ("queries", data["query_count"]), ("evaltool", data["evaltool_version"]),
             ("options", ", ".join(f"{k}={v}" for k, v in data["options"].items())),
             *[(f"{k} sha256", v) for k, v in data["fingerprints"].items()], ("git commit", data["git_commit"]),
             *[(f"source: {k}", v) for k, v in data["sources"].items()]]
    body = [tag("h1", f"Execution {data['id']}: ", tag("span", data["name"], class_="name")), facts(about),
            tag("h2", "Summary"),
            table(["measure", "value"], [[m, v] for m, v in data["summary"].items()], name="summary")]
    if qids and shown:
        series = {data["name"]: {m: [per_query[q].get(m) for q in qids] for m in shown}}
        body += [tag("h2", "Per query"), chart(per_query_bars(qids, series, shown), wide=True, name="per-query"),
                 table(["query", *shown], [[q, *[per_query[q].get(m) for m in shown]] for q in qids],
                       sortable=True, name="per-query")]
    body.append(_json_link(view, args, ""))
    return join(body)


def _diff_tables(d: dict) -> Markup:
    rows = [[m, s["mean_a"], s["mean_b"], s["delta"], s["p_value"], s["p_adjusted"],
             f"[{s['ci'][0]:.4f}, {s['ci'][1]:.4f}]" if s["ci"] and None not in s["ci"] else None,
             s["wins"], s["ties"], s["losses"]] for m, s in d["measures"].items()]
    a, b = d["a"], d["b"]
    title = f"{b['name']} (#{b['id']}) against {a['name']} (#{a['id']}): {d['queries']} shared queries"
    moved = [[m, x["query_id"], x["a"], x["b"], x["delta"]] for m, s in d["measures"].items() for x in s["moved"]]
    # B better or worse than A, as each measure declares (lower is better for FirstRelPos, ARP; counts neither)
    paired_classes = {i: _change(s["delta"], s["better"]) for i, s in enumerate(d["measures"].values())}
    moved_classes = dict(enumerate(_change(x["delta"], s["better"]) for s in d["measures"].values()
                                   for x in s["moved"]))
    notes = [tag("p", w, class_="warning") for w in d["warnings"]]
    only = [f"{len(d[k])} queries only in {side}" for k, side in (("only_in_a", a["name"]), ("only_in_b", b["name"]))
            if d[k]]
    return join([tag("h2", title), notes,
                 table(["measure", "mean A", "mean B", "delta", "p", "p adjusted", "ci", "wins", "ties", "losses"],
                       rows, name="paired", row_classes=paired_classes),
                 tag("p", f"test: {d['test']}; correction over the measures: {d['correction']}"
                          + (f"; {', '.join(only)}" if only else ""), class_="note"),
                 tag("h3", "Queries that moved most"),
                 table(["measure", "query", "A", "B", "delta"], moved, name="moved", sortable=True,
                       row_classes=moved_classes)])


def _change(delta, better: str) -> str | None:
    """``better`` or ``worse`` for a difference B - A of a measure better ``higher`` or ``lower``."""
    if delta is None or delta != delta or delta == 0 or better not in ("higher", "lower"):
        return None
    return "better" if (delta > 0) == (better == "higher") else "worse"


def diff_page(data: dict, args: dict, view) -> Markup:
    ids = f"{data['a']['id']},{data['b']['id']}"
    return join([tag("h1", "Difference"), _diff_tables(data),
                 tag("p", tag("a", "per-query plots of the two", href=f"/compare?ids={quote(ids)}"), class_="meta"),
                 _json_link(view, args, query_string(args))])


def side_by_side_page(data: dict, args: dict, view) -> Markup:
    """The executions' means side by side, then for each against the first: the paired statistics,
    the movers, the scatter of per-query values and the distribution of differences with the interval."""
    found = data["executions"]
    header = ["measure", *[f"#{e['id']} {e['name']}" for e in found]]
    rows = [[m, *[_value_of(e, spellings) for e in found]] for m, spellings in data["series"].items()]
    body = [tag("h1", "Side by side"),
            tag("p", f"baseline: #{found[0]['id']} {found[0]['name']} ({found[0]['recorded_at']})", class_="meta"),
            table(header, rows, name="means")]
    base = found[0]
    for other, d in zip(found[1:], data["diffs"]):
        body.append(_diff_tables(d))
        shared = sorted(set(base["per_query"] or {}) & set(other["per_query"] or {}))
        for m, stats in d["measures"].items():
            in_a, in_b = stats["spellings"]
            a = [_number(base["per_query"][q].get(in_a)) for q in shared]
            b = [_number(other["per_query"][q].get(in_b)) for q in shared]
            differences = [y - x for x, y in zip(a, b) if not (math.isnan(x) or math.isnan(y))]
            name_a, name_b = f"#{base['id']} {base['name']}", f"#{other['id']} {other['name']}"
            body.append(tag("div", chart(paired_scatter(shared, a, b, name_a, name_b, m), name="scatter"),
                            chart(difference_histogram(differences, stats["ci"], stats["delta"], name_a, name_b, m,
                                                       0.95), name="differences"), class_="charts"))
    body.append(_json_link(view, args, query_string(args)))
    return join(body)


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def suites_page(data: dict, args: dict, view) -> Markup:
    rows, links = [], {}
    for i, s in enumerate(data["suites"]):
        last = s["last"]
        values = ", ".join(f"{m} {v:.4f}" for m, v in (last["summary"] if last else {}).items() if v is not None)
        rows.append([s["name"], "active" if s["active"] else "disabled", s["backend"], ", ".join(s["measures"]),
                     last["recorded_at"] if last else "never run", last["id"] if last else None, values])
        if last:
            links[i] = execution_link(last["id"])
    return join([tag("h1", "Suites"),
                 table(["suite", "state", "backend", "measures", "last run (UTC)", "execution", "last result"],
                       rows, links=links, name="suites", numeric=[False] * 7) if rows
                 else tag("p", "No suite defined (evaltool suite add NAME QUERIES --backend SPEC).", class_="note"),
                 _json_link(view, args, "")])


def error_page(status: int, message: str) -> str:
    return document(f"evaltool: {status}", join([tag("h1", f"{status}"), tag("p", message, class_="warning"),
                                                 tag("p", tag("a", "back to the report", href="/"))]),
                    assets="linked", header=_header(""))


PAGES = {"report": report_page, "executions": trends_page, "execution": execution_page, "diff": diff_page,
         "compare": side_by_side_page, "suites": suites_page}


def render(view, data: dict, args: dict) -> str:
    """The whole HTML page of ``view`` for its ``data``."""
    current = view.name if view.name in {name for name, _, _ in NAVIGATION} else ""
    return document(f"evaltool: {view.title}", PAGES[view.name](data, args, view), assets="linked",
                    header=_header(current))
