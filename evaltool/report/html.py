"""HTML: tables and plotly charts, as one self-contained file or as a dashboard page. Formatting only.

Every page is built from :class:`Markup` pieces: :func:`tag` escapes every text and
attribute value it is given unless it is already :class:`Markup`, so a run named
``<img src=x onerror=alert(1)>`` is shown as those characters, never parsed.

A chart is a plotly.js figure (``{"data": [...], "layout": {...}}``) carried as JSON in
the ``data-figure`` attribute of its element; ``assets/evaltool.js`` reads it with
``JSON.parse`` and draws it. So data never becomes script, and a page needs only two
scripts, both fixed: plotly.js (from the installed ``plotly`` package, whose wheel
ships it) and ``evaltool.js``. They are either

* inlined (``assets="inline"``): one file that opens offline, for ``-o html``; its
  Content-Security-Policy allows exactly those two scripts (by hash) and no network; or
* linked (``assets="linked"``): ``/static/...`` URLs, served by ``evaltool serve``.

Strings shown inside a chart (plotly reads a few HTML tags in them) are escaped too.

>>> str(tag("td", "<img src=x onerror=alert(1)>", class_="name"))
'<td class="name">&lt;img src=x onerror=alert(1)&gt;</td>'
>>> chart_text("a<b&c")
'a&lt;b&amp;c'
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
import os
import re
from functools import cache
from importlib.resources import files

from evaltool.errors import EvaltoolError
from evaltool.report.i18n import t
from evaltool.report.json import dump_json
from evaltool.report.table import Report, Table, cell_text

ASSETS = ("evaltool.css", "evaltool.js")
PLOTLY_HINT = "HTML output and the dashboard draw charts with plotly: pip install 'evaltool[dashboard]'"
CHART_FONT = {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12}
COLORS = ["#2458a6", "#c2410c", "#15803d", "#7e22ce", "#b45309", "#0e7490", "#be123c", "#4d7c0f"]


class Markup(str):
    """Text that is already HTML (built by :func:`tag`); never escaped again."""


def escape(value) -> Markup:
    """``value`` as HTML text: Markup as it is, None as nothing, anything else escaped."""
    if isinstance(value, Markup):
        return value
    return Markup("" if value is None else html.escape(str(value), quote=True))


def _attribute(name: str) -> str:
    return name.rstrip("_").replace("_", "-")


def tag(name: str, *children, **attributes) -> Markup:
    """An element: ``class_`` gives ``class``, ``data_value`` gives ``data-value``; an attribute
    that is None or False is left out, True is written bare. Lists among the children are joined."""
    attrs = "".join(
        f" {_attribute(k)}" if v is True else f' {_attribute(k)}="{escape(v)}"'
        for k, v in attributes.items()
        if v is not None and v is not False
    )
    return Markup(f"<{name}{attrs}>{join(children)}</{name}>")


def join(children) -> Markup:
    out = []
    for child in children:
        if isinstance(child, (list, tuple)):
            out.append(join(child))
        elif child is not None:
            out.append(escape(child))
    return Markup("".join(out))


def chart_text(value) -> str:
    """A string for a chart label or hover text: plotly reads ``<br>``, ``<b>``, ``<a>`` and
    entities in those, so ``< > &`` are written as entities and come out as themselves."""
    return html.escape(str(value), quote=False)


def chart(figure: dict, *, wide: bool = False, follow: bool = False, name: str | None = None) -> Markup:
    """The element that draws ``figure``; ``follow``: clicking a point opens the path in its customdata."""
    layout = {
        "font": CHART_FONT,
        "colorway": COLORS,
        "margin": {"l": 60, "r": 20, "t": 50, "b": 60},
        "paper_bgcolor": "#fff",
        "plot_bgcolor": "#fff",
        **figure.get("layout", {}),
    }
    data = dump_json({"data": figure["data"], "layout": layout}, indent=None)  # nan as null, as every JSON here
    return tag("div", class_="chart wide" if wide else "chart", data_figure=data, data_follow=follow, data_chart=name)


# ---------------------------------------------------------------- tables


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


NUMBER_TEXT = re.compile(r"^[\[(]?[-+]?(\d+(\.\d*)?([eE][-+]?\d+)?|nan|inf)([\s,)\]]|$)")


def _numeric_column(rows: list[list], j: int) -> bool:
    """Right-aligned: every filled cell a number, or text that starts as one ("0.34 (+0.04)*", "[0.1, 0.2]")."""
    filled = [r[j] for r in rows if r[j] is not None]
    return bool(filled) and all(_number(v) or (isinstance(v, str) and NUMBER_TEXT.match(v)) for v in filled)


def cell(value, digits: int = 4, *, link: str | None = None, right: bool = False) -> Markup:
    """A table cell: numbers right-aligned with their exact value kept for sorting; None empty."""
    shown = escape(cell_text(value, digits))
    if link is not None:
        shown = tag("a", shown, href=link)
    if _number(value):
        exact = "" if isinstance(value, float) and not math.isfinite(value) else repr(value)
        return tag("td", shown, class_="num", data_value=exact)
    if value is None:
        return tag("td", shown, data_value="")
    return tag("td", shown, class_="num" if right else None)


def facts(pairs: list[tuple[str, object]]) -> Markup:
    """A two-column table of what something is (name, date, options...): a header cell and a value per row."""
    rows = [
        tag("tr", tag("th", key, scope="row"), tag("td", cell_text(value)))
        for key, value in pairs
        if value not in (None, "")
    ]
    return tag("table", tag("tbody", rows), class_="facts", data_table="facts")


def table(
    header: list[str],
    rows: list[list],
    *,
    title: str | None = None,
    digits: int = 4,
    sortable: bool = False,
    links: dict[int, str] | None = None,
    row_classes: dict[int, str | None] | None = None,
    numeric: list[bool] | None = None,
    name: str | None = None,
) -> Markup:
    """An HTML table; ``links`` maps a row index to the URL of its first cell, ``row_classes`` a
    row index to a class (``summary``); ``numeric`` right-aligns header cells."""
    numeric = numeric or [j > 0 and _numeric_column(rows, j) for j in range(len(header))]
    head = tag(
        "thead",
        tag("tr", [tag("th", h, class_="num" if right else None, scope="col") for h, right in zip(header, numeric)]),
    )
    body, foot = [], []
    for i, row in enumerate(rows):
        link = (links or {}).get(i)
        cells = [cell(v, digits, link=link if j == 0 else None, right=numeric[j]) for j, v in enumerate(row)]
        kind = (row_classes or {}).get(i)
        (foot if kind == "summary" else body).append(tag("tr", cells, class_=kind))
    # summary rows stay below the rows they summarise when the table is sorted
    return tag(
        "table",
        tag("caption", title) if title else None,
        head,
        tag("tbody", body),
        tag("tfoot", foot) if foot else None,
        class_="sortable" if sortable else None,
        data_table=name,
    )


def report_tables(
    report: Report, *, sortable: bool = False, summary_key: str | None = None, summary_column: int = 0
) -> Markup:
    """A :class:`~evaltool.report.table.Report` (the layouts every text format shares) as tables and notes;
    rows whose cell in ``summary_column`` is ``summary_key`` are set apart as summaries."""
    parts = [
        table(
            t.header,
            t.rows,
            title=t.title,
            digits=t.digits,
            sortable=sortable,
            row_classes={
                i: "summary" for i, r in enumerate(t.rows) if summary_key and r[summary_column] == summary_key
            },
        )
        for t in report.tables
        if isinstance(t, Table) and t.rows
    ]
    parts += [tag("p", note, class_="note") for note in report.notes]
    return join(parts)


def notebook_html(report: Report, *, summary_key: str | None = None) -> str:
    """A report as a notebook shows a result (``_repr_html_``): the tables and notes of the text
    formats, every run name, query id and note escaped, without a script or a stylesheet (the
    notebook's own table style applies); rows whose first cell is ``summary_key`` end the table.

    >>> notebook_html(Report([Table(["run", "map"], [["<b>", 0.25]])], ["* adjusted p < 0.05"]))  # doctest: +ELLIPSIS
    '<div class="evaltool"><table>...<td>&lt;b&gt;</td><td class="num" data-value="0.25">0.2500</td>...&lt; 0.05</p></div>'
    """
    return str(tag("div", report_tables(report, summary_key=summary_key), class_="evaltool"))


# ---------------------------------------------------------------- charts


def _title(text: str) -> dict:
    return {"text": text, "x": 0.01, "xanchor": "left"}


def _axis(title: str, **more) -> dict:
    return {"title": {"text": chart_text(title)}, "automargin": True, "gridcolor": "#e5e7eb", "zeroline": False, **more}


def per_query_bars(
    qids: list[str], series: dict[str, dict[str, list]], measures: list[str], title: str | None = None, lang: str = "en"
) -> dict:
    """Bars of every query's value, one group of bars per series (a run, an execution), with a
    menu to switch measure. ``series``: {name: {measure: [value per query in qids]}}; words in ``lang``."""
    title = t("chart.per_query_values", lang) if title is None else title
    x = [chart_text(q) for q in qids]
    data, buttons = [], []
    for i, m in enumerate(measures):
        for name, values in series.items():
            data.append(
                {
                    "type": "bar",
                    "x": x,
                    "y": values[m],
                    "name": chart_text(name),
                    "visible": i == 0,
                    "legendgroup": chart_text(name),
                    "hovertemplate": f"%{{x}}<br>{chart_text(m)} %{{y:.4f}}<extra>{chart_text(name)}</extra>",
                }
            )
    per = len(series)
    for i, m in enumerate(measures):
        visible = [j // per == i for j in range(len(data))]
        buttons.append(
            {
                "label": chart_text(m),
                "method": "update",
                "args": [{"visible": visible}, {"yaxis.title.text": chart_text(m)}],
            }
        )
    layout = {
        "title": {"text": chart_text(title)},
        "barmode": "group",
        "showlegend": per > 1,
        "xaxis": _axis(t("chart.query", lang), type="category", tickangle=-45),
        "yaxis": _axis(measures[0] if measures else ""),
    }
    if len(measures) > 1:
        layout["updatemenus"] = [{"buttons": buttons, "x": 0, "xanchor": "left", "y": 1.2, "yanchor": "top"}]
    return {"data": data, "layout": layout}


def paired_scatter(qids: list[str], a: list, b: list, name_a: str, name_b: str, measure: str, lang: str = "en") -> dict:
    """Each query a point at (value in A, value in B); above the diagonal, B scores higher."""
    present = [v for v in [*a, *b] if v is not None and not (isinstance(v, float) and math.isnan(v))]
    low, high = (min([*present, 0.0]), max([*present, 1.0])) if present else (0.0, 1.0)
    pad = (high - low) * 0.04
    span = [low - pad, high + pad]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines",
                "x": [low, high],
                "y": [low, high],
                "name": "=",
                "line": {"color": "#9ca3af", "dash": "dot"},
                "hoverinfo": "skip",
                "showlegend": False,
            },
            {
                "type": "scatter",
                "mode": "markers",
                "x": a,
                "y": b,
                "text": [chart_text(q) for q in qids],
                "name": t("chart.queries", lang),
                "marker": {"size": 8, "opacity": 0.75},
                "showlegend": False,
                "hovertemplate": t("chart.query", lang) + " %{text}<br>" + f"{chart_text(name_a)} %{{x:.4f}}<br>"
                f"{chart_text(name_b)} %{{y:.4f}}<extra></extra>",
            },
        ],
        "layout": {
            "title": _title(t("chart.per_query", lang, measure=chart_text(measure))),
            "xaxis": _axis(name_a, range=span),
            "yaxis": _axis(name_b, range=span),
        },
    }


def difference_histogram(
    differences: list, ci, delta, name_a: str, name_b: str, measure: str, level: float, lang: str = "en"
) -> dict:
    """The distribution of per-query differences B - A, the mean difference and its interval (shaded)."""
    shapes = [
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": 0,
            "x1": 0,
            "y0": 0,
            "y1": 1,
            "line": {"color": "#6b7280", "dash": "dot"},
        }
    ]
    annotations = []
    if ci is not None and all(v is not None and math.isfinite(v) for v in ci):
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": ci[0],
                "x1": ci[1],
                "y0": 0,
                "y1": 1,
                "fillcolor": "rgba(36,88,166,0.15)",
                "line": {"width": 0},
                "layer": "below",
            }
        )
        annotations.append(
            {
                "xref": "x",
                "yref": "paper",
                "x": (ci[0] + ci[1]) / 2,
                "y": 1.02,
                "showarrow": False,
                "text": t("chart.interval", lang, level=f"{level:.0%}") + f" [{ci[0]:.4f}, {ci[1]:.4f}]",
                "yanchor": "bottom",
            }
        )
    if delta is not None and math.isfinite(delta):
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": delta,
                "x1": delta,
                "y0": 0,
                "y1": 1,
                "line": {"color": "#2458a6", "width": 2},
            }
        )
    return {
        "data": [
            {
                "type": "histogram",
                "x": differences,
                "name": t("chart.queries", lang),
                "marker": {"color": "#94a3b8"},
                "nbinsx": 30,
                "hovertemplate": t("chart.difference", lang)
                + " %{x}<br>%{y} "
                + t("chart.queries", lang)
                + "<extra></extra>",
            }
        ],
        "layout": {
            "title": _title(t("chart.difference_title", lang, measure=chart_text(measure))),
            "xaxis": _axis(f"{name_b} − {name_a}"),
            "yaxis": _axis(t("chart.queries", lang)),
            "shapes": shapes,
            "annotations": annotations,
            "bargap": 0.05,
            "showlegend": False,
        },
    }


def pair_intervals(pairs: list, measure: str, level: float, simultaneous: bool) -> dict:
    """Every pair's mean difference b - a with its interval (the Tukey HSD intervals when
    ``simultaneous``); an interval that misses 0 is a significant difference."""
    labels = [f"{chart_text(p.b)} − {chart_text(p.a)}" for p in pairs]
    deltas = [p.delta for p in pairs]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "markers",
                "x": deltas,
                "y": labels,
                "marker": {"color": "#2458a6"},
                "error_x": {
                    "type": "data",
                    "symmetric": False,
                    "array": [p.ci[1] - p.delta for p in pairs],
                    "arrayminus": [p.delta - p.ci[0] for p in pairs],
                },
                "hovertemplate": "%{y}: %{x:.4f}<extra></extra>",
            }
        ],
        "layout": {
            "title": _title(
                f"{chart_text(measure)}: {level:.0%} "
                + ("simultaneous Tukey HSD intervals" if simultaneous else "intervals")
                + " of the differences"
            ),
            "xaxis": _axis("difference"),
            "yaxis": {"automargin": True, "autorange": "reversed"},
            "shapes": [
                {
                    "type": "line",
                    "xref": "x",
                    "yref": "paper",
                    "x0": 0,
                    "x1": 0,
                    "y0": 0,
                    "y1": 1,
                    "line": {"color": "#6b7280", "dash": "dot"},
                }
            ],
            "height": 120 + 28 * len(pairs),
            "showlegend": False,
        },
    }


def search_chart(labels: list[str], scores: list[float], chosen: int, measure: str, title: str) -> dict:
    """The mean of every setting a search tried (a weight vector, a parameter value), the chosen one marked."""
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "x": list(range(len(labels))),
                "y": scores,
                "text": [chart_text(label) for label in labels],
                "marker": {"color": "#2458a6"},
                "hovertemplate": "%{text}<br>" + chart_text(measure) + " %{y:.4f}<extra></extra>",
            },
            {
                "type": "scatter",
                "mode": "markers",
                "x": [chosen],
                "y": [scores[chosen]],
                "text": [chart_text(labels[chosen])],
                "marker": {"color": "#c2410c", "size": 12},
                "hovertemplate": "chosen: %{text}<br>%{y:.4f}<extra></extra>",
            },
        ],
        "layout": {
            "title": _title(title),
            "showlegend": False,
            "xaxis": {
                "tickvals": list(range(len(labels))),
                "ticktext": [chart_text(x) for x in labels],
                "tickangle": -45,
                "automargin": True,
            }
            if len(labels) <= 40
            else _axis("setting"),
            "yaxis": _axis(measure),
        },
    }


def fusion_search_html(search, report: Report) -> str:
    """``evaltool fuse --optimize ... -o html``: the search's tables and every setting's mean."""
    labels = [row["setting"] for row in search.rows()]
    body = [
        _title_header(
            f"evaltool fuse: {search.method}",
            f"{len(search.names)} runs · {len(search.qids)} queries · {search.folds} folds",
        ),
        chart(
            search_chart(
                labels,
                list(search.scores),
                search.candidates.index(search.chosen),
                search.measure,
                f"mean {search.measure} of each setting",
            ),
            wide=True,
            name="search",
        ),
        report_tables(report),
    ]
    return document(f"evaltool fuse: {search.method}", body)


def trend(points: list[dict], measure: str, lang: str = "en") -> dict:
    """One measure over time: a line per execution name, a point per execution (hover: name,
    date, value, note); each point's customdata starts with its page's path.
    ``points``: [{"name", "recorded_at", "value", "note", "link"}], oldest first."""
    by_name: dict[str, list[dict]] = {}
    for point in points:
        by_name.setdefault(point["name"], []).append(point)
    data = []
    for name, mine in by_name.items():
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": chart_text(name),
                "x": [p["recorded_at"] for p in mine],
                "y": [p["value"] for p in mine],
                "customdata": [[p.get("link"), chart_text(p["name"]), chart_text(p.get("note") or "")] for p in mine],
                "marker": {"size": 9},
                "hovertemplate": "%{customdata[1]}<br>%{x}<br>"
                + chart_text(measure)
                + " %{y:.4f}<br>%{customdata[2]}<extra></extra>",
            }
        )
    return {
        "data": data,
        "layout": {
            "title": _title(chart_text(measure)),
            # plotly names months in English: other languages get numeric dates
            "xaxis": _axis(
                t("chart.recorded_at", lang), type="date", **({} if lang == "en" else {"tickformat": "%Y-%m-%d"})
            ),
            "yaxis": _axis(measure),
            "hovermode": "closest",
            "legend": {"orientation": "h", "y": -0.25},
        },
    }


# ---------------------------------------------------------------- pages


@cache
def asset(name: str) -> str:
    """The text of a page asset: ``plotly.min.js`` (from the plotly package) or one of :data:`ASSETS`."""
    if name == "plotly.min.js":
        try:
            from plotly.offline import get_plotlyjs
        except ImportError:
            raise EvaltoolError(PLOTLY_HINT) from None
        return get_plotlyjs()
    if name not in ASSETS:
        raise KeyError(name)
    return files("evaltool.report").joinpath("assets", name).read_text("utf-8")


def _script_text(source: str) -> str:
    # a script's text ends at the first "</script"; a source with one cannot be inlined as it is
    return re.sub(r"</(script)", r"<\\/\1", source, flags=re.IGNORECASE)


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def content_security_policy(script_sources: str, style_sources: str, header: bool = False) -> str:
    """No network but what is named; scripts only as named; no plugins or form posts elsewhere.
    ``header``: for an HTTP header, which may also forbid framing (a ``<meta>`` policy may not)."""
    return (
        f"default-src 'none'; script-src {script_sources}; style-src {style_sources}; img-src 'self' data:; "
        "font-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'"
        + ("; frame-ancestors 'none'" if header else "")
    )


def document(
    title: str, body, *, assets: str = "inline", static: str = "/static/", header=None, lang: str = "en"
) -> str:
    """A whole HTML page in the language ``lang``. ``assets``: ``inline`` (a self-contained file) or
    ``linked`` (``static`` URLs)."""
    if assets == "inline":
        scripts = [_script_text(asset("plotly.min.js")), _script_text(asset("evaltool.js"))]
        policy = content_security_policy(" ".join(f"'{_sha256(s)}'" for s in scripts), "'unsafe-inline'")
        head = [
            Markup(f'<meta http-equiv="Content-Security-Policy" content="{escape(policy)}">'),
            Markup(f"<style>{asset('evaltool.css')}</style>"),
        ]
        tail = [Markup(f"<script>{s}</script>") for s in scripts]
    elif assets == "linked":
        head = [Markup(f'<link rel="stylesheet" href="{escape(static)}evaltool.css">')]
        tail = [Markup(f'<script src="{escape(static)}{name}"></script>') for name in ("plotly.min.js", "evaltool.js")]
    else:
        raise ValueError(f"assets must be 'inline' or 'linked', not {assets!r}")
    page = join(
        [
            Markup("<!DOCTYPE html>\n"),
            Markup(f'<html lang="{escape(lang)}"><head><meta charset="utf-8">'),
            Markup('<meta name="viewport" content="width=device-width, initial-scale=1">'),
            Markup('<link rel="icon" href="data:,">'),  # no icon to fetch
            tag("title", title),
            head,
            Markup("</head><body>"),
            header,
            tag("main", body),
            tail,
            Markup("</body></html>\n"),
        ]
    )
    return str(page)


# ---------------------------------------------------------------- the report files (-o html)


def _numeric_measures(per_query: dict[str, dict], measures: list[str]) -> list[str]:
    return [m for m in measures if any(isinstance(v.get(m), (int, float)) for v in per_query.values())]


def _title_header(title: str, subtitle: str | None = None) -> Markup:
    return join([tag("h1", title), tag("p", subtitle, class_="meta") if subtitle else None])


def eval_html(result, *, per_query: bool = False, report: Report | None = None, name: str | None = None) -> str:
    """``evaltool QRELS RUN -o html``: the table of the other formats and a bar chart of every
    query's value (a menu switches measure); ``report`` is that table (layouts.eval_report);
    ``name`` the run's name (default: its file name)."""
    from evaltool.report.layouts import eval_report

    report = report or eval_report(result, per_query=per_query)
    meta = result.meta
    run = name or os.path.basename(str(meta.get("run") or meta.get("runid") or "run"))
    values = result.per_query
    qids = list(values)
    shown = _numeric_measures(values, result.measures)
    body = [
        _title_header(
            f"evaltool: {run}", f"qrels {meta.get('qrels')} · run {meta.get('run')} · {len(qids)} queries evaluated"
        ),
        tag("h2", "Summary" if not per_query else "Values"),
        report_tables(report, sortable=per_query, summary_key="all"),
    ]
    if shown and qids:
        series = {run: {m: [values[q].get(m) for q in qids] for m in shown}}
        body += [tag("h2", "Per query"), chart(per_query_bars(qids, series, shown), wide=True, name="per-query")]
    return document(f"evaltool: {run}", body)


def runs_html(names: list[str], results: list, *, per_query: bool = False, report: Report | None = None) -> str:
    """``evaltool QRELS RUN RUN... -o html``: a row per run with its summary values; with
    ``per_query``, the bars of every query's value, a colour per run (a menu switches
    measure), then the table of the other formats (layouts.runs_report: a row per run and
    query, each run's ``all`` row among the summaries at the foot)."""
    from evaltool.report.layouts import runs_report

    summary = runs_report(names, results)
    first = results[0]
    qids = list(dict.fromkeys(q for result in results for q in result.per_query))
    shown = [m for m in first.measures if any(m in _numeric_measures(r.per_query, first.measures) for r in results)]
    title = f"evaltool: {len(names)} runs"
    body = [
        _title_header(title, f"qrels {first.meta.get('qrels')} · runs {', '.join(names)}"),
        tag("h2", "Summary"),
        report_tables(summary, sortable=True),
    ]
    if per_query:
        if shown and qids:
            series = {
                name: {m: [result.per_query.get(q, {}).get(m) for q in qids] for m in shown}
                for name, result in zip(names, results)
            }
            body += [
                tag("h2", "Per query"),
                chart(per_query_bars(qids, series, shown, "per-query values by run"), wide=True, name="per-query"),
            ]
        report = report or runs_report(names, results, per_query=True)
        body += [tag("h2", "Values"), report_tables(report, sortable=True, summary_key="all", summary_column=1)]
    return document(title, body)


def compare_html(cmp, *, report: Report | None = None) -> str:
    """``evaltool compare ... -o html``: the tables of the other formats; per measure, the per-query
    bars of every run, and for each run against the baseline the scatter of per-query values and
    the distribution of per-query differences with the mean difference and its interval."""
    from evaltool.report.layouts import compare_report

    report = report or compare_report(cmp)
    qids = list(cmp.qids)
    series = {name: {m: [float(v) for v in cmp.values[name][m]] for m in cmp.measures} for name in cmp.names}
    compared = "every pair" if cmp.pairs is not None else f"baseline {cmp.baseline}"
    body = [
        _title_header(
            f"evaltool compare: {', '.join(cmp.names)}", f"qrels {cmp.qrels} · {compared} · {len(qids)} queries"
        ),
        report_tables(report),
        tag("h2", "Per query"),
        chart(per_query_bars(qids, series, list(cmp.measures), "per-query values by run"), wide=True, name="per-query"),
    ]
    if cmp.pairs is not None:
        analysis = cmp.pairs
        for m in cmp.measures:
            own = [p for p in analysis.pairs if p.measure == m]
            body += [
                tag("h2", m),
                chart(pair_intervals(own, m, 1 - cmp.alpha, analysis.family_wise), wide=True, name="intervals"),
            ]
        return document(f"evaltool compare: {', '.join(cmp.names)}", body)
    base = cmp.baseline
    for m in cmp.measures:
        body.append(tag("h2", m))
        for name in cmp.names[1:]:
            a, b = series[base][m], series[name][m]
            c = cmp.cells[name][m]
            differences = [y - x for x, y in zip(a, b) if not (math.isnan(x) or math.isnan(y))]
            body += [
                tag("h3", f"{name} against {base}"),
                tag(
                    "div",
                    chart(paired_scatter(qids, a, b, base, name, m), name="scatter"),
                    chart(
                        difference_histogram(differences, c.ci, c.delta, base, name, m, 1 - cmp.alpha),
                        name="differences",
                    ),
                    class_="charts",
                ),
            ]
    return document(f"evaltool compare: {', '.join(cmp.names)}", body)


def history_report_html(out: dict, report: Report, lang: str = "en") -> str:
    """``evaltool history report -o html``: the comparative table (``report``, as the other formats
    print it) and a trend chart per measure, a point per execution of the range; words in ``lang``."""
    measures = list(out["summary"]["values"])
    charts = []
    for m in measures:
        points = [
            {
                "name": row["name"],
                "recorded_at": row["recorded_at"],
                "value": row["values"][m],
                "note": t("report.execution_note", lang, id=row["id"]) + (f", {row['label']}" if row["label"] else ""),
            }
            for row in out["rows"]
            if row["values"].get(m) is not None
        ]
        if points:
            charts.append(chart(trend(points, m, lang), name=f"trend-{m}"))
    count = out["summary"]["count"]
    title = t("report.file_title", lang)
    body = [
        _title_header(title, t("report.count_one" if count == 1 else "report.count", lang, count=count)),
        report_tables(report, summary_key=t("report.summary", lang)),
    ]
    if charts:
        body += [tag("h2", t("trends.title", lang)), tag("div", charts, class_="charts")]
    return document(title, body, lang=lang)
