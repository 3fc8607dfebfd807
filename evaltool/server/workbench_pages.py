"""The workbench's pages: the suites editor, the job queue and its live progress, what an execution's
search returned (alone and beside another's).

Each page draws the dict of its view (:mod:`evaltool.server.workbench_views`, whose JSON is at the
same address under ``/api``) in the dashboard's frame (:func:`evaltool.server.pages.page`), in the
request's language. Forms post to the API addresses (:mod:`evaltool.server.workbench`) with the
session's CSRF token and the language, and are shown only to someone signed in on a dashboard that
takes writes. Every user string (suite names, query texts, ids, titles) is escaped by
:mod:`evaltool.report.html`'s builders; scripts get their data from attributes.
"""

from __future__ import annotations

from urllib.parse import quote

from evaltool.report.i18n import t, t_or
from evaltool.report.html import Markup, escape, facts, join, table, tag
from evaltool.server.links import execution_link, link

DEFAULT_MEASURES = "recip_rank ndcg_cut.10 P.5"


def suite_link(name: str, lang: str, **params) -> str:
    return link(f"/suites/{quote(name, safe='')}", lang, **params)


def _api(path: str) -> str:
    return path


def _hidden(name: str, value) -> Markup:
    return Markup(f'<input type="hidden" name="{escape(name)}" value="{escape(value)}">')


def can_write(frame) -> bool:
    return bool(frame.writable and frame.who is not None and frame.who.may("operator"))


def _post(frame, action: str, *fields, button: str, class_: str = "inline", name: str | None = None) -> Markup:
    """A POST form to ``action`` with the CSRF token and the page's language."""
    return tag(
        "form",
        _hidden("csrf_token", frame.csrf or ""),
        _hidden("lang", frame.lang),
        fields,
        tag("button", button, type="submit"),
        method="post",
        action=action,
        class_=class_,
        data_form=name,
    )


def _sign_in_note(frame) -> Markup | None:
    if not frame.writable:
        return None
    if frame.who is None:
        here = frame.path + (f"?{frame.query}" if frame.query else "")
        return tag(
            "p",
            tag("a", t("nav.login", frame.lang), href=link("/login", frame.lang, next=here)),
            " ",
            t("wb.login_to_edit", frame.lang),
            class_="note",
        )
    if not frame.who.may("operator"):
        return tag("p", t("wb.operator_only", frame.lang), class_="note")
    return None


def _field(label: str, html: str) -> Markup:
    return tag("label", label, Markup(html))


def _input(
    name: str,
    value="",
    *,
    kind: str = "text",
    required: bool = False,
    size: int | None = None,
    placeholder: str | None = None,
    extra: str = "",
) -> str:
    attrs = " required" if required else ""
    attrs += f' size="{size}"' if size else ""
    attrs += f' placeholder="{escape(placeholder)}"' if placeholder else ""
    return f'<input type="{kind}" name="{escape(name)}" value="{escape(value)}"{attrs}{extra}>'


def _relevant_text(query: dict) -> str:
    """A query's ground truth as the form's text: ``doc doc`` or ``doc:grade doc:grade``."""
    judgments = query["judgments"]
    if query["expected_field"] == "qrels":
        return " ".join(f"{doc}:{grade}" for doc, grade in judgments.items())
    return " ".join(judgments)


def _state(state: str, lang: str) -> Markup:
    return tag("span", t(f"wb.state.{state}", lang), class_=f"state state-{state}", data_state=state)


def _progress(job: dict, lang: str) -> Markup:
    elapsed = job.get("elapsed")
    return tag(
        "span",
        t(
            "wb.progress",
            lang,
            done=job["done"],
            total=job["total"],
            failures=job["failures"],
            elapsed="" if elapsed is None else f"{elapsed:.1f}",
        ),
        class_="progress",
    )


# ---------------------------------------------------------------- the suites list


def suites_page(data: dict, frame, backends: list[str]) -> Markup:
    """Every suite with its state, version and last result; "Run all active"; the form that creates one."""
    lang = frame.lang
    rows, links = [], {}
    for i, s in enumerate(data["suites"]):
        last = s["last"]
        values = ", ".join(f"{m} {v:.4f}" for m, v in (last["summary"] if last else {}).items() if v is not None)
        rows.append(
            [
                s["name"],
                t("suites.active" if s["active"] else "suites.disabled", lang),
                s["backend"],
                s["version"],
                " ".join(s["measures"]),
                last["recorded_at"] if last else t("suites.never", lang),
                values,
            ]
        )
        links[i] = suite_link(s["name"], lang)
    columns = [
        t(k, lang)
        for k in (
            "suites.suite",
            "suites.state",
            "suites.backend",
            "wb.version",
            "suites.measures",
            "suites.last_run",
            "suites.last_result",
        )
    ]
    body = [tag("h1", t("suites.title", lang)), _sign_in_note(frame)]
    if rows:
        body.append(
            table(columns, rows, links=links, name="suites", numeric=[False, False, False, True, False, False, False])
        )
    else:
        body.append(tag("p", t("wb.no_suites", lang), class_="note"))
    if can_write(frame):
        if rows:
            body.append(_post(frame, "/api/run-all", button=t("wb.run_all", lang), name="run-all"))
        options = "".join(f'<option value="{escape(b)}">{escape(b)}</option>' for b in backends)
        if backends:
            body += [
                tag("h2", t("wb.create", lang)),
                _post(
                    frame,
                    "/api/suites",
                    _field(t("wb.name", lang), _input("name", required=True, size=24)),
                    _field(t("suites.backend", lang), f'<select name="backend" required>{options}</select>'),
                    _field(t("suites.measures", lang), _input("measures", DEFAULT_MEASURES, size=28)),
                    _field(t("wb.limit", lang), _input("limit", 10, kind="number", extra=' min="1" max="1000"')),
                    button=t("wb.create_button", lang),
                    class_="editor",
                    name="create",
                ),
            ]
        else:
            body.append(tag("p", t("wb.no_backends", lang), class_="note"))
    body.append(
        tag(
            "p",
            tag("a", t("wb.jobs", lang), href=link("/jobs", lang)),
            " · ",
            tag("a", t("page.json", lang), href="/api/suites"),
            class_="meta",
        )
    )
    return join(body)


# ---------------------------------------------------------------- one suite


def _query_form(frame, suite: dict, query: dict | None) -> Markup:
    lang = frame.lang
    action = f"/api/suites/{quote(suite['name'], safe='')}/queries" + (
        f"/{quote(query['query_id'], safe='')}" if query else ""
    )
    q = query or {
        "query_id": "",
        "text": "",
        "category": None,
        "difficulty": None,
        "judgments": {},
        "expected_field": "relevant_ids",
    }
    return _post(
        frame,
        action,
        _hidden("version", suite["version"]),
        _field(t("wb.query_id", lang), _input("id", q["query_id"], required=True, size=8)),
        _field(t("wb.query_text", lang), _input("query", q["text"], required=True, size=40)),
        _field(t("wb.category", lang), _input("category", q["category"] or "", size=12)),
        _field(t("wb.difficulty", lang), _input("difficulty", q["difficulty"] or "", size=8)),
        _field(
            t("wb.relevant", lang),
            _input(
                "relevant",
                _relevant_text(q) if query else "",
                size=36,
                required=True,
                placeholder=t("wb.relevant_hint", lang),
            ),
        ),
        button=t("wb.save" if query else "wb.add_query", lang),
        class_="editor",
        name="edit-query" if query else "add-query",
    )


def suite_page(data: dict, frame, runnable_here: bool) -> Markup:
    """A suite: what it runs, its queries with their ground truth (editable), its versions, executions,
    each query's history, its jobs and who changed it."""
    lang = frame.lang
    s = data["suite"]
    name = s["name"]
    quoted = quote(name, safe="")
    writer = can_write(frame)
    current = s["shown_version"] == s["version"]
    about = [
        (t("suites.state", lang), t("suites.active" if s["active"] else "suites.disabled", lang)),
        (t("suites.backend", lang), s["backend"]),
        (t("suites.measures", lang), " ".join(s["measures"])),
        (t("wb.limit", lang), s["settings"].get("limit", 10)),
        (t("wb.version", lang), t("wb.version_of", lang, shown=s["shown_version"], current=s["version"])),
        (t("wb.source", lang), s["source"]),
        (t("wb.created", lang), s["created_at"]),
    ]
    body: list = [tag("h1", t("wb.suite_title", lang), " ", tag("span", name, class_="name")), facts(about)]
    if s["problem"]:
        body.append(tag("p", s["problem"], class_="warning"))
    body.append(_sign_in_note(frame))
    if writer and current:
        actions = []
        if s["active"] and runnable_here:
            actions.append(_post(frame, f"/api/suites/{quoted}/run", button=t("wb.run", lang), name="run"))
        elif s["active"]:
            actions.append(tag("span", t("wb.not_runnable_here", lang), class_="note"))
        actions.append(
            _post(
                frame,
                f"/api/suites/{quoted}/active",
                _hidden("active", "false" if s["active"] else "true"),
                button=t("wb.deactivate" if s["active"] else "wb.activate", lang),
                name="active",
            )
        )
        body.append(tag("div", actions, class_="actions"))
    # the queries
    body.append(tag("h2", t("wb.queries", lang), " ", tag("span", f"({len(s['queries'])})", class_="meta")))
    if not current:
        body.append(tag("p", tag("a", t("wb.show_current", lang), href=suite_link(name, lang)), class_="note"))
    history = data["query_history"]
    rows = []
    for q in s["queries"]:
        runs = history.get(q["query_id"], [])
        cells = [
            tag("td", q["query_id"], class_="qid"),
            tag("td", q["text"], class_="text"),
            tag("td", q["category"] or ""),
            tag("td", q["difficulty"] or ""),
            tag("td", _relevant_text(q), class_="relevant"),
            tag(
                "td",
                join(
                    [
                        tag("a", f"#{r['execution_id']}", href=execution_link(r["execution_id"], lang)),
                        " ",
                        ", ".join(f"{m} {v:.3f}" for m, v in r["values"].items() if v is not None),
                        Markup("<br>"),
                    ]
                    for r in runs[:5]
                ),
                class_="history",
            ),
        ]
        if writer and current:
            edit = tag("details", tag("summary", t("wb.edit", lang)), _query_form(frame, s, q))
            remove = _post(
                frame,
                f"/api/suites/{quoted}/queries/{quote(q['query_id'], safe='')}/delete",
                _hidden("version", s["version"]),
                button=t("wb.remove", lang),
                name="remove-query",
            )
            cells.append(tag("td", edit, remove))
        rows.append(tag("tr", cells, data_query=q["query_id"]))
    head = [
        t(k, lang)
        for k in ("wb.query_id", "wb.query_text", "wb.category", "wb.difficulty", "wb.relevant", "wb.query_history")
    ] + ([""] if writer and current else [])
    body.append(
        tag(
            "table",
            tag("thead", tag("tr", [tag("th", h, scope="col") for h in head])),
            tag("tbody", rows),
            data_table="queries",
            class_="queries",
        )
    )
    if writer and current:
        body += [
            tag("h3", t("wb.add_query", lang)),
            _query_form(frame, s, None),
            tag("h3", t("wb.upload", lang)),
            tag(
                "form",
                Markup('<input type="file" name="file" accept=".json,.jsonl,.csv,.gz">'),
                tag("button", t("wb.upload_button", lang), type="submit"),
                tag("pre", "", class_="upload-result", role="status", aria_live="polite"),
                class_="upload",
                data_upload=f"/api/suites/{quoted}/upload",
                data_csrf=frame.csrf or "",
                data_lang=lang,
                data_done=t("wb.upload_done", lang),
            ),
            tag("p", t("wb.upload_hint", lang), class_="note"),
        ]
    # versions, executions, jobs, audit
    body.append(tag("h2", t("wb.versions", lang)))
    body.append(
        table(
            [t(k, lang) for k in ("wb.version", "wb.created", "wb.by", "wb.queries", "wb.change")],
            [[v["version"], v["created_at"], v["author"], v["queries"], v["change"]] for v in data["versions"]],
            links={i: suite_link(name, lang, version=v["version"]) for i, v in enumerate(data["versions"])},
            name="versions",
        )
    )
    body.append(tag("h2", t("wb.executions", lang)))
    executions = data["executions"]
    if executions:
        measures = list(dict.fromkeys(m for e in executions for m in e["summary"]))
        values = [
            [e["id"], e["recorded_at"], e["suite_version"], *[e["summary"].get(m) for m in measures]]
            for e in executions
        ]
        body.append(
            table(
                [t("column.id", lang), t("column.date", lang), t("wb.version", lang), *measures],
                values,
                links={i: execution_link(e["id"], lang) for i, e in enumerate(executions)},
                name="suite-executions",
            )
        )
        if len(executions) > 1:
            body.append(
                tag(
                    "p",
                    tag(
                        "a",
                        t("wb.compare_last", lang),
                        href=link("/compare-results", lang, a=executions[1]["id"], b=executions[0]["id"]),
                    ),
                    class_="meta",
                )
            )
    else:
        body.append(tag("p", t("wb.never_run", lang), class_="note"))
    if data["jobs"]:
        body.append(tag("h2", t("wb.jobs", lang)))
        body.append(_jobs_table(data["jobs"], lang))
    if data["audit"]:
        body.append(tag("h2", t("wb.audit", lang)))
        body.append(
            table(
                [t(k, lang) for k in ("wb.when", "wb.by", "wb.action", "wb.detail")],
                [
                    [
                        a["at"],
                        a["actor"],
                        t_or("action", a["action"], lang),
                        ", ".join(str(v) for v in (a["detail"] or {}).values()),
                    ]
                    for a in data["audit"]
                ],
                name="audit",
            )
        )
    body.append(tag("p", tag("a", t("page.json", lang), href=f"/api/suites/{quoted}"), class_="meta"))
    return join(body)


# ---------------------------------------------------------------- jobs


def _jobs_table(jobs: list[dict], lang: str) -> Markup:
    rows = []
    for j in jobs:
        rows.append(
            tag(
                "tr",
                tag("td", tag("a", j["id"], href=link(f"/jobs/{j['id']}", lang)), class_="num"),
                tag("td", tag("a", j["suite"], href=suite_link(j["suite"], lang))),
                tag("td", j["suite_version"], class_="num"),
                tag("td", _state(j["state"], lang)),
                tag("td", _progress(j, lang)),
                tag("td", j["created_at"]),
                tag(
                    "td",
                    tag("a", f"#{j['execution_id']}", href=execution_link(j["execution_id"], lang))
                    if j["execution_id"]
                    else "",
                ),
                data_job=j["id"],
            )
        )
    head = [
        t(k, lang)
        for k in ("column.id", "wb.suite", "wb.version", "wb.state", "wb.progress_column", "wb.created", "wb.execution")
    ]
    return tag(
        "table",
        tag("thead", tag("tr", [tag("th", h, scope="col") for h in head])),
        tag("tbody", rows),
        data_table="jobs",
    )


def jobs_page(data: dict, frame) -> Markup:
    lang = frame.lang
    return join(
        [
            tag("h1", t("wb.jobs", lang)),
            _jobs_table(data["jobs"], lang) if data["jobs"] else tag("p", t("wb.no_jobs", lang), class_="note"),
            tag("p", tag("a", t("page.json", lang), href="/api/jobs"), class_="meta"),
        ]
    )


def job_page(job: dict, frame) -> Markup:
    """One job with its live progress: the page's script reads ``/api/jobs/ID`` every second while the
    job is open and updates the numbers; the state and progress shown first are the history's, so a
    reload shows the same job where it is."""
    lang = frame.lang
    open_ = job["state"] in ("queued", "running", "cancelling")
    texts = {
        f"state-{s}": t(f"wb.state.{s}", lang)
        for s in ("queued", "running", "cancelling", "done", "failed", "cancelled", "interrupted")
    }
    from evaltool.report.json import dump_json

    live = tag(
        "div",
        tag("p", t("wb.state", lang), ": ", _state(job["state"], lang)),
        tag(
            "p",
            tag("span", job["done"], class_="done"),
            " / ",
            tag("span", job["total"], class_="total"),
            " ",
            t("wb.queries_done", lang),
            " · ",
            t("wb.failures", lang),
            ": ",
            tag("span", job["failures"], class_="failures"),
            " · ",
            t("wb.elapsed", lang),
            ": ",
            tag("span", "" if job["elapsed"] is None else f"{job['elapsed']:.1f}", class_="elapsed"),
            " s",
        ),
        tag("progress", value=job["done"], max=max(job["total"], 1)),
        tag("p", job["error"] or "", class_="job-error warning" if job["error"] else "job-error"),
        tag("p", t("wb.interrupted_note", lang), class_="warning") if job["state"] == "interrupted" else None,
        tag(
            "p",
            tag("a", t("wb.open_execution", lang), href=execution_link(job["execution_id"], lang))
            if job["execution_id"]
            else "",
            class_="job-execution",
        ),
        class_="job",
        data_job=job["id"],
        data_poll=f"/api/jobs/{job['id']}" if open_ else None,
        data_texts=dump_json(texts, indent=None),
        data_execution_text=t("wb.open_execution", lang),
        data_lang=lang,
    )
    body = [
        tag("h1", t("wb.job_title", lang, id=job["id"])),
        tag(
            "p",
            t("wb.suite", lang),
            ": ",
            tag("a", job["suite"], href=suite_link(job["suite"], lang)),
            " · ",
            t("wb.version", lang),
            " ",
            job["suite_version"],
            " · ",
            t("wb.created", lang),
            " ",
            job["created_at"],
            " ",
            (t("wb.by_name", lang, name=job["author"]) if job["author"] else ""),
            class_="meta",
        ),
        live,
    ]
    if can_write(frame):
        if open_:
            body.append(_post(frame, f"/api/jobs/{job['id']}/cancel", button=t("wb.cancel", lang), name="cancel"))
        if job["state"] == "interrupted":
            body.append(_post(frame, f"/api/jobs/{job['id']}/resume", button=t("wb.resume", lang), name="resume"))
    body.append(tag("p", tag("a", t("page.json", lang), href=f"/api/jobs/{job['id']}"), class_="meta"))
    return join(body)


# ---------------------------------------------------------------- what the search returned


def _judgment(doc: dict, lang: str) -> Markup:
    mark = doc["judgment"]
    text = {
        "relevant": t("wb.relevant_grade", lang, grade=doc["grade"]),
        "not relevant": t("wb.not_relevant", lang),
        "unjudged": t("wb.unjudged", lang),
    }[mark]
    return tag("span", text, class_="judgment " + mark.replace(" ", "-"), data_judgment=mark)


def _change(doc: dict, lang: str) -> Markup | None:
    change = doc.get("change")
    if change is None:
        return None
    if change == "new":
        text = t("wb.new", lang)
    elif change == "same":
        text = t("wb.same", lang)
    else:
        arrow = "\u2191" if doc["was"] > doc["rank"] else "\u2193"
        text = t("wb.moved", lang, was=doc["was"], arrow=arrow)
    return tag("span", text, class_=f"change {change}", data_change=change)


def _returned_list(result: dict | None, lang: str, *, lost=()) -> Markup:
    if result is None:
        return tag("p", t("wb.not_in_execution", lang), class_="note")
    items = []
    for doc in result["documents"]:
        title = tag("span", doc["title"], class_="title") if doc.get("title") else None
        snippet = tag("span", doc["snippet"], class_="snippet") if doc.get("snippet") else None
        score = None if doc["score"] is None else f"{doc['score']:.4g}"
        items.append(
            tag(
                "li",
                tag("span", doc["rank"], class_="rank"),
                tag("code", doc["doc_id"], class_="doc"),
                _judgment(doc, lang),
                _change(doc, lang),
                tag("span", score, class_="score") if score else None,
                title,
                snippet,
                class_="doc " + doc["judgment"].replace(" ", "-"),
                data_doc=doc["doc_id"],
            )
        )
    parts = []
    if result["error"]:
        parts.append(tag("p", t("wb.error", lang), ": ", result["error"], class_="warning"))
    parts.append(
        tag("ol", items, class_="returned") if items else tag("p", t("wb.nothing_returned", lang), class_="note")
    )
    if result["missed"]:
        parts.append(
            tag(
                "p",
                t("wb.missed", lang),
                ": ",
                join([[tag("code", doc, class_="missed", data_missed=doc), " "] for doc in result["missed"]]),
                class_="missed",
            )
        )
    if lost:
        parts.append(
            tag(
                "p",
                t("wb.lost", lang),
                ": ",
                join([[tag("code", doc, class_="lost", data_lost=doc), " "] for doc in lost]),
                class_="lost",
            )
        )
    values = result.get("values") or {}
    if values:
        parts.append(tag("p", ", ".join(f"{m} {v:.4f}" for m, v in values.items() if v is not None), class_="values"))
    latency = result.get("latency_ms")
    if latency is not None:
        parts.append(tag("p", t("wb.latency", lang, ms=f"{latency:.1f}"), class_="meta"))
    return join(parts)


def results_section(data: dict, lang: str) -> Markup:
    """Per query of an execution: its text, the returned list with each document's judgment, the
    relevant ids missed and the query's values (nothing when no list was kept)."""
    results = data.get("results") or []
    if not results:
        return join([])
    blocks = [tag("h2", t("wb.returned", lang))]
    for r in results:
        blocks.append(
            tag(
                "section",
                tag("h3", tag("code", r["query_id"]), " ", tag("span", r["text"], class_="text")),
                _returned_list(r, lang),
                class_="query-result",
                data_query=r["query_id"],
            )
        )
    return join(blocks)


def compare_results_page(data: dict, frame) -> Markup:
    lang = frame.lang
    a, b = data["a"], data["b"]

    def head(e):
        return join(
            [
                tag("a", f"#{e['id']} {e['name']}", href=execution_link(e["id"], lang)),
                " ",
                tag("span", e["recorded_at"], class_="meta"),
                (" · " + t("wb.version", lang) + f" {e['suite_version']}") if e["suite_version"] else "",
            ]
        )

    blocks = [tag("h1", t("wb.compare_title", lang)), tag("p", t("wb.compare_note", lang), class_="note")]
    for q in data["queries"]:
        blocks.append(
            tag(
                "section",
                tag("h3", tag("code", q["query_id"]), " ", tag("span", q["text"], class_="text")),
                tag(
                    "div",
                    tag("div", tag("h4", head(a)), _returned_list(q["a"], lang), class_="side a"),
                    tag("div", tag("h4", head(b)), _returned_list(q["b"], lang, lost=q["lost"]), class_="side b"),
                    class_="sides",
                ),
                class_="query-compare",
                data_query=q["query_id"],
            )
        )
    blocks.append(
        tag("p", tag("a", t("page.json", lang), href=f"/api/compare-results?a={a['id']}&b={b['id']}"), class_="meta")
    )
    return join(blocks)
