"""The dashboard's pages: each renders the dict its view returned, and nothing else, so that a page and its
JSON twin can never disagree.

Every page links to its JSON twin and is drawn in the language of its ``lang`` parameter
(``en``, or ``es``); every word comes from :mod:`evaltool.report.i18n`. Tables and charts come
from :mod:`evaltool.report.html` (the same pieces as the ``-o html`` files), so every
user string is escaped there.

Other pages of the dashboard (the suites editor, the runner, judging) draw their frame
with :func:`page`: ``page(Frame.of(request), title, body, current="suites")`` gives the
whole document with the navigation, the language switch (kept in every link through
:func:`link`), who is signed in with the log-out button, and the read-only notice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

from evaltool.report.i18n import LANGUAGE_NAMES, LANGUAGES, t, t_or
from evaltool.report.html import (
    Markup,
    chart,
    difference_histogram,
    document,
    escape,
    facts,
    join,
    paired_scatter,
    per_query_bars,
    table,
    tag,
    trend,
)
from evaltool.report.table import p_text
from evaltool.server.links import execution_link, link
from evaltool.server.views import query_string

NAVIGATION = (
    ("report", "/", "nav.report"),
    ("executions", "/trends", "nav.trends"),
    ("suites", "/suites", "nav.suites"),
    ("judging", "/judging", "nav.judging"),
)


@dataclass(frozen=True)
class Frame:
    """What a page's frame shows besides its data: the language, the address (for the language
    switch), who is signed in (None: nobody), the CSRF token of their session, and whether the
    dashboard can be written at all."""

    lang: str = "en"
    path: str = "/"
    query: str = ""
    who: Any = None  # an evaltool.server.auth.Identity
    csrf: str | None = None
    writable: bool = False

    @classmethod
    def of(cls, request) -> Frame:
        from evaltool.server import auth

        lang = request.query_params.get("lang", "en")
        access = request.app.state.settings.access
        return cls(
            lang if lang in LANGUAGES else "en",
            request.url.path,
            request.url.query,
            auth.identity(request),
            auth.csrf_token(request),
            access.writable,
        )

    def identity_key(self) -> tuple:
        """What of the frame changes the page (for its ETag)."""
        return self.lang, self.who, self.csrf, self.writable, self.path, self.query


def _language_switch(frame: Frame) -> Markup:
    """A link per language to this very address in that language (each name in its own language)."""
    kept = [(k, v) for k, v in parse_qsl(frame.query, keep_blank_values=True) if k != "lang"]
    links = []
    for lang in LANGUAGES:
        query = urlencode(kept + ([("lang", lang)] if lang != "en" else []))
        links.append(
            tag(
                "a",
                LANGUAGE_NAMES[lang],
                href=frame.path + (f"?{query}" if query else ""),
                lang=lang,
                hreflang=lang,
                aria_current="true" if lang == frame.lang else None,
            )
        )
    return tag("nav", links, class_="languages", aria_label=t("nav.language", frame.lang))


def _account(frame: Frame) -> Markup | None:
    if not frame.writable:
        return None
    lang = frame.lang
    if frame.who is None:
        here = frame.path + (f"?{frame.query}" if frame.query else "")
        return tag("span", tag("a", t("nav.login", lang), href=link("/login", lang, next=here)), class_="account")
    role = t_or("role", frame.who.role, lang)
    logout = tag(
        "form",
        Markup(f'<input type="hidden" name="csrf_token" value="{escape(frame.csrf or "")}">'),
        tag("button", t("logout.submit", lang), type="submit"),
        method="post",
        action=link("/logout", lang),
        class_="logout",
    )
    return tag(
        "span",
        tag("span", t("nav.signed_in", lang, name=frame.who.name, role=role)),
        logout if frame.who.via == "session" else None,
        class_="account",
    )


def header(current: str, frame: Frame) -> Markup:
    """The top bar: evaltool, the navigation, the language switch, who is signed in; then the
    read-only notice when the dashboard has no token."""
    links = [
        tag("a", t(key, frame.lang), href=link(href, frame.lang), aria_current="page" if name == current else None)
        for name, href, key in NAVIGATION
    ]
    bar = tag("header", tag("strong", "evaltool"), links, _language_switch(frame), _account(frame), class_="top")
    if frame.writable:
        return bar
    return join([bar, tag("p", t("page.read_only", frame.lang), class_="notice read-only", role="status")])


def page(frame: Frame, title: str, body, current: str = "") -> str:
    """The whole document of a dashboard page: ``title`` and ``body`` in the frame of :func:`header`."""
    return document(f"evaltool: {title}", body, assets="linked", header=header(current, frame), lang=frame.lang)


def _json_link(view, args: dict, query: str) -> Markup:
    address = view.api.replace("{id}", str(args.get("id", "")))
    return tag(
        "p",
        tag("a", t("page.json", args.get("lang", "en")), href=f"{address}{'?' + query if query else ''}"),
        class_="meta",
    )


def _filters(args: dict, *, measures: bool = False) -> Markup:
    """The date range and name (and tag) form, filled with the request's values; GET to the same page
    (its language kept in a hidden field)."""
    lang = args.get("lang", "en")
    fields = [
        tag(
            "label",
            t("filter.from", lang),
            Markup(f'<input type="date" name="date_from" value="{_attr(args["date_from"])}">'),
        ),
        tag(
            "label",
            t("filter.to", lang),
            Markup(f'<input type="date" name="date_to" value="{_attr(args["date_to"])}">'),
        ),
        tag(
            "label",
            t("filter.name", lang),
            Markup(
                f'<input type="text" name="name" value="{_attr(args["name"])}" '
                f'placeholder="{_attr(t("filter.all_names", lang))}">'
            ),
        ),
        tag(
            "label",
            t("filter.tag", lang),
            Markup(
                f'<input type="text" name="tag" value="{_attr((args.get("tag") or [""])[0])}" '
                f'placeholder="{_attr(t("filter.key_value", lang))}">'
            ),
        ),
    ]
    if measures:
        fields.append(
            tag(
                "label",
                t("filter.measures", lang),
                Markup(
                    f'<input type="text" name="measure" value="{_attr(" ".join(args["measure"]))}" '
                    f'placeholder="{_attr(t("filter.all_measures", lang))}">'
                ),
            )
        )
    if lang != "en":
        fields.append(Markup(f'<input type="hidden" name="lang" value="{_attr(lang)}">'))
    return tag("form", fields, tag("button", t("filter.show", lang), type="submit"), method="get", class_="filters")


def _attr(value) -> str:
    return escape("" if value is None else value)


def _range_text(data: dict, lang: str) -> str:
    low, high = data.get("from"), data.get("to")
    return t("range.text", lang, low=low or t("range.first", lang), high=high or t("range.last", lang))


def _count(n: int, lang: str) -> str:
    return t("report.count_one" if n == 1 else "report.count", lang, count=n)


def _label_cell(value) -> Markup:
    if value is None:
        return tag("td", "")
    return tag("td", value, class_="label-" + "-".join(str(value).lower().split()))


# ---------------------------------------------------------------- pages


def report_page(data: dict, args: dict, view) -> Markup:
    """The comparative table: a row per execution (linked to its page, with a box to pick it for the
    side-by-side view), a column per measure, the label; the summary row below; a CSV download."""
    lang = args["lang"]
    measures = list(data["summary"]["values"])
    head = tag(
        "thead",
        tag(
            "tr",
            tag("th", t("report.compare", lang)),
            tag("th", t("column.id", lang), class_="num"),
            tag("th", t("column.name", lang)),
            tag("th", t("column.date", lang)),
            [tag("th", m, class_="num") for m in measures],
            tag("th", t("column.label", lang)),
        ),
    )
    rows = []
    for row in data["rows"]:
        values = [_value_cell(row["values"].get(m)) for m in measures]
        pick = Markup(
            f'<input type="checkbox" name="ids" value="{int(row["id"])}" '
            f'aria-label="{_attr(t("report.pick", lang, id=int(row["id"])))}">'
        )
        rows.append(
            tag(
                "tr",
                tag("td", pick),
                tag("td", tag("a", row["id"], href=execution_link(row["id"], lang)), class_="num"),
                tag("td", tag("a", row["name"], href=execution_link(row["id"], lang)), class_="name"),
                tag("td", row["recorded_at"]),
                values,
                _label_cell(row["label"]),
                data_execution=row["id"],
            )
        )
    summary = data["summary"]
    foot = tag(
        "tfoot",
        tag(
            "tr",
            tag("td", ""),
            tag("td", ""),
            tag("td", _count(summary["count"], lang)),
            tag("td", t("report.mean", lang)),
            [_value_cell(summary["values"][m]) for m in measures],
            _label_cell(summary["label"]),
            class_="summary",
        ),
    )
    query = query_string(args)
    body = [
        tag("h1", t("report.title", lang)),
        _filters(args, measures=True),
        tag(
            "p",
            t("report.range_count", lang, range=_range_text(data, lang), count=_count(summary["count"], lang)),
            class_="meta",
        ),
    ]
    if data["rows"]:
        hidden = Markup(f'<input type="hidden" name="lang" value="{_attr(lang)}">') if lang != "en" else None
        form = tag(
            "form",
            tag("table", head, tag("tbody", rows), foot, class_="sortable", data_table="report"),
            hidden,
            tag("button", t("report.compare_picked", lang), type="submit"),
            method="get",
            action="/compare",
        )
        body.append(form)
    else:
        body.append(tag("p", t("report.none", lang), class_="note"))
    body.append(
        tag(
            "p",
            tag(
                "a",
                t("report.csv", lang),
                href="/report.csv" + (f"?{query}" if query else ""),
                download="report.csv",
                class_="download",
            ),
            " · ",
            tag("a", t("page.json", lang), href=f"{view.api}{'?' + query if query else ''}"),
            class_="meta",
        )
    )
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
    lang = args["lang"]
    found = data["executions"]
    charts = []
    for m, spellings in data["series"].items():  # a measure recorded under several spellings is one trend
        points = [
            {
                "name": e["name"],
                "recorded_at": e["recorded_at"],
                "value": value,
                "note": e["note"],
                "link": execution_link(e["id"], lang),
            }
            for e in found
            if (value := _value_of(e, spellings)) is not None
        ]
        charts.append(chart(trend(points, m, lang), follow=True, name=f"trend-{m}"))
    rows = [
        [e["id"], e["name"], e["recorded_at"], e["note"], ", ".join(f"{k}={v}" for k, v in e["tags"].items())]
        for e in found
    ]
    pager = [
        tag("a", t("trends.previous", lang), href=data["previous"]) if data["previous"] else None,
        tag("a", t("trends.next", lang), href=data["next"]) if data["next"] else None,
    ]
    columns = [t(k, lang) for k in ("column.id", "column.name", "column.date", "column.note", "column.tags")]
    return join(
        [
            tag("h1", t("trends.title", lang)),
            _filters(args),
            tag(
                "p",
                t("trends.shown", lang, count=len(found), first=data["offset"] + 1)
                + (t("trends.more", lang) if data["next"] else ""),
                class_="meta",
            ),
            tag("div", charts, class_="charts") if charts else tag("p", t("report.none", lang), class_="note"),
            tag("h2", t("trends.executions", lang)),
            table(
                columns,
                rows,
                sortable=True,
                name="executions",
                links={i: execution_link(e["id"], lang) for i, e in enumerate(found)},
            ),
            tag("nav", pager, class_="pages"),
            _json_link(view, args, query_string(args)),
        ]
    )


def execution_page(data: dict, args: dict, view, frame: Frame | None = None) -> Markup:
    """One execution: what it is, its summary, every query's value (sortable) and a bar chart of them."""
    lang = args["lang"]
    per_query = data.get("per_query") or {}
    measures = list(data["summary"])
    shown = [m for m in measures if any(m in v for v in per_query.values())]
    qids = list(per_query)
    about = [
        (t("column.name", lang), data["name"]),
        (t("execution.recorded_at", lang), data["recorded_at"]),
        (t("execution.kind", lang), t_or("kind", data["kind"], lang)),
        (t("column.note", lang), data["note"]),
        (t("column.tags", lang), ", ".join(f"{k}={v}" for k, v in data["tags"].items())),
        (t("execution.queries", lang), data["query_count"]),
        (t("wb.version", lang), data.get("suite_version")),
        ("evaltool", data["evaltool_version"]),
        (t("execution.options", lang), ", ".join(f"{k}={v}" for k, v in data["options"].items())),
        *[
            (t("execution.fingerprint", lang, source=t_or("source", k, lang)), v)
            for k, v in data["fingerprints"].items()
        ],
        (t("execution.commit", lang), data["git_commit"]),
        *[(t("execution.source", lang, source=t_or("source", k, lang)), v) for k, v in data["sources"].items()],
    ]
    body = [
        tag("h1", t("execution.title", lang, id=data["id"]), tag("span", data["name"], class_="name")),
        facts(about),
        tag("h2", t("execution.summary", lang)),
        table(
            [t("column.measure", lang), t("column.value", lang)],
            [[m, v] for m, v in data["summary"].items()],
            name="summary",
        ),
    ]
    if qids and shown:
        series = {data["name"]: {m: [per_query[q].get(m) for q in qids] for m in shown}}
        body += [
            tag("h2", t("execution.per_query", lang)),
            chart(per_query_bars(qids, series, shown, lang=lang), wide=True, name="per-query"),
            table(
                [t("column.query", lang), *shown],
                [[q, *[per_query[q].get(m) for m in shown]] for q in qids],
                sortable=True,
                name="per-query",
            ),
        ]
    from evaltool.server.judging_pages import unjudged_form
    from evaltool.server.workbench_pages import results_section

    form = unjudged_form(data, frame) if frame is not None else None
    if form is not None:
        body.append(form)
    body.append(results_section(data, lang))
    body.append(_json_link(view, args, query_string(args)))
    return join(body)


def _diff_tables(d: dict, lang: str) -> Markup:
    rows = [
        [
            m,
            s["mean_a"],
            s["mean_b"],
            s["delta"],
            p_text(s["p_value"]),
            p_text(s["p_adjusted"]),
            f"[{s['ci'][0]:.4f}, {s['ci'][1]:.4f}]" if s["ci"] and None not in s["ci"] else None,
            s["wins"],
            s["ties"],
            s["losses"],
        ]
        for m, s in d["measures"].items()
    ]
    a, b = d["a"], d["b"]
    title = t("diff.heading", lang, b=b["name"], b_id=b["id"], a=a["name"], a_id=a["id"], count=d["queries"])
    moved = [[m, x["query_id"], x["a"], x["b"], x["delta"]] for m, s in d["measures"].items() for x in s["moved"]]
    # B better or worse than A, as each measure declares (lower is better for FirstRelPos, ARP; counts neither)
    paired_classes = {i: _change(s["delta"], s["better"]) for i, s in enumerate(d["measures"].values())}
    moved_classes = dict(
        enumerate(_change(x["delta"], s["better"]) for s in d["measures"].values() for x in s["moved"])
    )
    notes = [tag("p", w, class_="warning") for w in d["warnings"]]
    only = [
        t("diff.only", lang, count=len(d[k]), side=side)
        for k, side in (("only_in_a", a["name"]), ("only_in_b", b["name"]))
        if d[k]
    ]
    method = t(
        "diff.method", lang, test=t_or("test", d["test"], lang), correction=t_or("correction", d["correction"], lang)
    )
    columns = [
        t(k, lang)
        for k in (
            "column.measure",
            "diff.mean_a",
            "diff.mean_b",
            "diff.delta",
            "diff.p",
            "diff.p_adjusted",
            "diff.ci",
            "diff.wins",
            "diff.ties",
            "diff.losses",
        )
    ]
    return join(
        [
            tag("h2", title),
            notes,
            table(columns, rows, name="paired", row_classes=paired_classes),
            tag("p", method + (f"; {', '.join(only)}" if only else ""), class_="note"),
            tag("h3", t("diff.moved", lang)),
            table(
                [t("column.measure", lang), t("column.query", lang), "A", "B", t("diff.delta", lang)],
                moved,
                name="moved",
                sortable=True,
                row_classes=moved_classes,
            ),
        ]
    )


def _change(delta, better: str) -> str | None:
    """``better`` or ``worse`` for a difference B - A of a measure better ``higher`` or ``lower``."""
    if delta is None or delta != delta or delta == 0 or better not in ("higher", "lower"):
        return None
    return "better" if (delta > 0) == (better == "higher") else "worse"


def diff_page(data: dict, args: dict, view) -> Markup:
    lang = args["lang"]
    ids = f"{data['a']['id']},{data['b']['id']}"
    return join(
        [
            tag("h1", t("diff.title", lang)),
            _diff_tables(data, lang),
            tag("p", tag("a", t("diff.plots", lang), href=link("/compare", lang, ids=ids)), class_="meta"),
            _json_link(view, args, query_string(args)),
        ]
    )


def side_by_side_page(data: dict, args: dict, view) -> Markup:
    """The executions' means side by side, then for each against the first: the paired statistics,
    the movers, the scatter of per-query values and the distribution of differences with the interval."""
    lang = args["lang"]
    found = data["executions"]
    columns = [t("column.measure", lang), *[f"#{e['id']} {e['name']}" for e in found]]
    rows = [[m, *[_value_of(e, spellings) for e in found]] for m, spellings in data["series"].items()]
    base = found[0]
    body = [
        tag("h1", t("compare.title", lang)),
        tag(
            "p", t("compare.baseline", lang, id=base["id"], name=base["name"], date=base["recorded_at"]), class_="meta"
        ),
        table(columns, rows, name="means"),
    ]
    for other, d in zip(found[1:], data["diffs"]):
        body.append(_diff_tables(d, lang))
        shared = sorted(set(base["per_query"] or {}) & set(other["per_query"] or {}))
        for m, stats in d["measures"].items():
            in_a, in_b = stats["spellings"]
            a = [_number(base["per_query"][q].get(in_a)) for q in shared]
            b = [_number(other["per_query"][q].get(in_b)) for q in shared]
            differences = [y - x for x, y in zip(a, b) if not (math.isnan(x) or math.isnan(y))]
            name_a, name_b = f"#{base['id']} {base['name']}", f"#{other['id']} {other['name']}"
            body.append(
                tag(
                    "div",
                    chart(paired_scatter(shared, a, b, name_a, name_b, m, lang), name="scatter"),
                    chart(
                        difference_histogram(differences, stats["ci"], stats["delta"], name_a, name_b, m, 0.95, lang),
                        name="differences",
                    ),
                    class_="charts",
                )
            )
    body.append(_json_link(view, args, query_string(args)))
    return join(body)


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def suites_page(data: dict, args: dict, view) -> Markup:
    lang = args["lang"]
    rows, links = [], {}
    for i, s in enumerate(data["suites"]):
        last = s["last"]
        values = ", ".join(f"{m} {v:.4f}" for m, v in (last["summary"] if last else {}).items() if v is not None)
        rows.append(
            [
                s["name"],
                t("suites.active" if s["active"] else "suites.disabled", lang),
                s["backend"],
                ", ".join(s["measures"]),
                last["recorded_at"] if last else t("suites.never", lang),
                last["id"] if last else None,
                values,
            ]
        )
        if last:
            links[i] = execution_link(last["id"], lang)
    columns = [
        t(f"suites.{k}", lang)
        for k in ("suite", "state", "backend", "measures", "last_run", "execution", "last_result")
    ]
    return join(
        [
            tag("h1", t("suites.title", lang)),
            table(columns, rows, links=links, name="suites", numeric=[False] * 7)
            if rows
            else tag(
                "p",
                t("suites.none", lang),
                " ",
                tag("code", "evaltool suite add NAME QUERIES --backend SPEC"),
                class_="note",
            ),
            _json_link(view, args, query_string(args)),
        ]
    )


def error_page(status: int, message: str, frame: Frame) -> str:
    lang = frame.lang
    heading = t(f"error.{status}", lang) if f"error.{status}" in _ERROR_KEYS else t("error.other", lang)
    return page(
        frame,
        f"{status}",
        join(
            [
                tag("h1", f"{status}: {heading}"),
                tag("p", message, class_="warning"),
                tag("p", tag("a", t("error.back", lang), href=link("/", lang))),
            ]
        ),
    )


_ERROR_KEYS = {f"error.{n}" for n in (400, 401, 403, 404, 405, 413, 500)}


def login_page(frame: Frame, nonce: str, next_path: str, message: str | None = None) -> str:
    """The log-in form: the token (a password field), the form's CSRF value, where to go after."""
    lang = frame.lang
    if not frame.writable:
        return page(
            frame,
            t("login.title", lang),
            join([tag("h1", t("login.title", lang)), tag("p", t("login.read_only", lang), class_="note")]),
        )
    if frame.who is not None:
        role = t_or("role", frame.who.role, lang)
        done = tag("p", t("login.done", lang, name=frame.who.name, role=role), class_="note")
    else:
        done = None
    form = tag(
        "form",
        Markup(f'<input type="hidden" name="csrf_token" value="{_attr(nonce)}">'),
        Markup(f'<input type="hidden" name="next" value="{_attr(next_path)}">'),
        tag(
            "label",
            t("login.token", lang),
            Markup('<input type="password" name="token" required autocomplete="current-password" autofocus>'),
        ),
        tag("button", t("login.submit", lang), type="submit"),
        method="post",
        action=link("/login", lang),
        class_="login",
    )
    return page(
        frame,
        t("login.title", lang),
        join(
            [
                tag("h1", t("login.title", lang)),
                done,
                tag("p", message, class_="warning", role="alert") if message else None,
                tag("p", t("login.explain", lang), class_="note"),
                form,
            ]
        ),
    )


PAGES = {
    "report": report_page,
    "executions": trends_page,
    "execution": execution_page,
    "diff": diff_page,
    "compare": side_by_side_page,
    "suites": suites_page,
}
FRAMED = {"execution"}  # pages drawn with the request's frame (a form of theirs posts)
TITLES = {
    "report": "nav.report",
    "executions": "nav.trends",
    "execution": "execution.page",
    "diff": "diff.title",
    "compare": "compare.title",
    "suites": "suites.title",
}


def render(view, data: dict, args: dict, frame: Frame | None = None) -> str:
    """The whole HTML page of ``view`` for its ``data``, in the frame of the request (:class:`Frame`)."""
    frame = frame or Frame(lang=args.get("lang", "en"))
    current = view.name if view.name in {name for name, _, _ in NAVIGATION} else ""
    framed = {"frame": frame} if view.name in FRAMED else {}  # pages with forms need the session's CSRF token
    return page(
        frame, t(TITLES[view.name], args.get("lang", "en")), PAGES[view.name](data, args, view, **framed), current
    )
