"""The judging pages: the tasks and sets, a rater's page of a task, a set's agreement and disagreements.

Each draws the dict of its view (:mod:`evaltool.server.judging`, whose JSON is at the same
address under ``/api``) in the dashboard's frame, in the request's language. The rater's page
works with and without script: every document has a form with a button per grade (posted with
the session's CSRF token, answered by a redirect back); the page's script
(``evaltool.js``, ``[data-judging]``) adds the keys: a digit grades the current document and moves
to the next one not graded, ``j`` / ``↓`` and ``k`` / ``↑`` move, ``s`` skips, and the grade is
saved at once through the JSON address. Every user string is escaped by
:mod:`evaltool.report.html`'s builders; the script gets its texts and addresses from attributes.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from evaltool.report.html import Markup, escape, join, table, tag
from evaltool.report.i18n import t, t_or
from evaltool.server.links import link


def task_link(task_id: int, lang: str, query: str | None = None) -> str:
    return link(f"/judging/{task_id}", lang, **({"query": query} if query else {}))


def set_link(name: str, lang: str) -> str:
    return link(f"/judging/sets/{quote(name, safe='')}", lang)


def _hidden(name: str, value) -> Markup:
    return Markup(f'<input type="hidden" name="{escape(name)}" value="{escape(value)}">')


def _scale_words(scale: list[dict], lang: str) -> dict:
    """Each label's words: the catalogue's for the binary and graded scales, the label itself otherwise."""
    from evaltool.report.i18n import CATALOGUE

    return {
        s["label"]: (t(f"grade.{s['label']}", lang) if f"grade.{s['label']}" in CATALOGUE else s["label"])
        for s in scale
    }


def overview_page(data: dict, frame) -> Markup:
    lang = frame.lang
    body = [tag("h1", t("judge.title", lang))]
    if frame.writable and frame.who is None:
        body.append(
            tag(
                "p",
                tag("a", t("nav.login", lang), href=link("/login", lang, next="/judging")),
                " ",
                t("judge.login_to_judge", lang),
                class_="note",
            )
        )
    if data["tasks"]:
        columns = [
            t(k, lang)
            for k in (
                "judge.task",
                "judge.set",
                "judge.pairs",
                "judge.done",
                "judge.ratings",
                "judge.raters",
                "judge.created",
            )
        ]
        rows = [
            [
                f"#{task['id']} {task['name']}",
                task["set"],
                task["pairs"],
                task["done"],
                task["ratings"],
                ", ".join(f"{name} {count}" for name, count in task["raters"].items()),
                task["created_at"],
            ]
            for task in data["tasks"]
        ]
        body.append(
            table(
                columns,
                rows,
                name="tasks",
                links={i: link(f"/judging/{task['id']}", lang) for i, task in enumerate(data["tasks"])},
            )
        )
    else:
        body.append(tag("p", t("judge.no_tasks", lang), class_="note"))
    if data["tasks"]:
        from evaltool.server.model_runs import model_form

        body.append(model_form(data, frame))
    body.append(tag("h2", t("judge.sets", lang)))
    if data["sets"]:
        rows = [[s["name"], t_or("scale", s["scale"], lang), s["version"], s["created_at"]] for s in data["sets"]]
        body.append(
            table(
                [t(k, lang) for k in ("judge.set", "judge.scale", "wb.version", "judge.created")],
                rows,
                name="sets",
                links={i: set_link(s["name"], lang) for i, s in enumerate(data["sets"])},
            )
        )
    else:
        body.append(tag("p", t("judge.no_sets", lang), class_="note"))
    body.append(tag("p", tag("a", t("page.json", lang), href="/api/judging"), class_="meta"))
    return join(body)


def _grade_form(task_id: int, query_id: str, doc: dict, scale: list[dict], words: dict, frame) -> Markup:
    buttons = [
        tag(
            "button",
            tag("kbd", s["key"]),
            " ",
            words[s["label"]],
            type="submit",
            name_="grade",
            value=s["label"],
            data_key=s["key"],
            data_grade=s["grade"],
            aria_pressed="true" if doc["grade"] is not None and doc["grade"] == s["grade"] else "false",
        )
        for s in scale
    ]
    return tag(
        "form",
        _hidden("csrf_token", frame.csrf or ""),
        _hidden("lang", frame.lang),
        _hidden("query_id", query_id),
        _hidden("doc_id", doc["doc_id"]),
        buttons,
        method="post",
        action=f"/api/judging/{task_id}/judge",
        class_="grades",
    )


def task_page(data: dict, frame) -> Markup:
    """The rater's page: progress, the queries, the query shown and its documents to grade."""
    lang = frame.lang
    task, query = data["task"], data["query"]
    words = _scale_words(data["scale"], lang)
    label_of = {s["grade"]: words[s["label"]] for s in reversed(data["scale"])}
    progress = data["progress"]
    head = [
        tag("h1", t("judge.task_title", lang, id=task["id"], name=task["name"])),
        tag(
            "p",
            t("judge.mine", lang),
            " ",
            tag("span", data["mine"], class_="mine-count"),
            " / ",
            tag("span", data["pairs"], class_="pair-count"),
            " · ",
            t(
                "judge.task_done",
                lang,
                done=progress["done"],
                pairs=progress["pairs"],
                wanted=progress["ratings_wanted"],
            ),
            class_="progress",
            data_mine=data["mine"],
            data_pairs=data["pairs"],
        ),
    ]
    nav = [
        tag(
            "li",
            tag(
                "a",
                tag("code", q["query_id"]),
                " ",
                q["text"] or "",
                href=link(f"/judging/{task['id']}", lang, query=q["query_id"]),
                aria_current="page" if q["query_id"] == query["query_id"] else None,
            ),
            " ",
            tag("span", t("judge.query_progress", lang, mine=q["mine"], pairs=q["pairs"]), class_="meta"),
            data_query=q["query_id"],
        )
        for q in data["queries"]
    ]
    about = [tag("h2", tag("code", query["query_id"]), " ", tag("span", query["text"], class_="text"))]
    for key in ("description", "narrative"):
        if query.get(key):
            about.append(tag("p", tag("strong", t(f"judge.{key}", lang)), " ", query[key], class_=key))
    docs = []
    first = next((d["doc_id"] for d in query["documents"] if d["grade"] is None), None)
    for doc in query["documents"]:
        mine = (
            t("judge.your_grade", lang, label=label_of[doc["grade"]])
            if doc["grade"] is not None
            else t("judge.not_yet", lang)
        )
        docs.append(
            tag(
                "article",
                tag("h3", doc["title"] or doc["doc_id"]),
                tag("p", tag("code", doc["doc_id"]), class_="meta"),
                tag("p", doc["text"], class_="text") if doc.get("text") else None,
                _grade_form(task["id"], query["query_id"], doc, data["scale"], words, frame),
                tag("p", mine, class_="mine", role="status"),
                class_="doc" + (" current" if doc["doc_id"] == first else ""),
                tabindex="0",
                data_doc=doc["doc_id"],
                data_grade="" if doc["grade"] is None else doc["grade"],
            )
        )
    keys = ", ".join(f"{s['key']} = {words[s['label']]}" for s in data["scale"])
    texts = {
        "your_grade": t("judge.your_grade", lang, label="{label}"),
        "saved_error": t("judge.save_failed", lang),
        "all_done": t("judge.all_done", lang),
        "labels": {str(s["grade"]): label_of[s["grade"]] for s in data["scale"]},
    }
    next_query = link(f"/judging/{task['id']}", lang, query=data["next_query"]) if data["next_query"] else ""
    body = [
        head,
        tag("nav", tag("ul", nav), class_="task-queries", aria_label=t("judge.queries", lang)),
        tag(
            "section",
            about,
            tag("p", t("judge.keys", lang, grades=keys), class_="note keys"),
            tag(
                "div",
                docs,
                class_="documents",
                data_judging=f"/api/judging/{task['id']}/judge",
                data_csrf=frame.csrf or "",
                data_next=next_query,
                data_texts=json.dumps(texts),
            ),
            tag("p", "", class_="judging-status", role="status"),
            class_="judging",
            data_query=query["query_id"],
        ),
        tag(
            "p",
            tag("a", t("page.json", lang), href=f"/api/judging/{task['id']}?query={query['query_id']}"),
            class_="meta",
        ),
    ]
    return join(body)


def agreement_page(data: dict, frame) -> Markup:
    """A set's agreement: the figures, Cohen's kappa per pair of raters, per query, the disagreements."""
    lang = frame.lang

    def value(x):
        return t("judge.undefined", lang) if x is None else x

    body = [
        tag("h1", t("judge.agreement_title", lang, name=data["set"])),
        tag(
            "p",
            t(
                "judge.agreement_about",
                lang,
                version=data["version"],
                scale=t_or("scale", data["scale"], lang),
                raters=", ".join(data["raters"]) or "-",
            ),
            class_="note",
        ),
    ]
    if data["only_mine"]:
        body.append(tag("p", t("judge.only_mine", lang), class_="note"))
    overall = [
        [t("judge.pairs", lang), data["pairs"]],
        [t("judge.rated_twice", lang), data["rated_twice"]],
        ["Fleiss' kappa", value(data["fleiss_kappa"])],
        [t("judge.alpha", lang), value(data["krippendorff_alpha"])],
        [t("judge.disagreements", lang), len(data["disagreements"])],
    ]
    body.append(table([t("judge.figure", lang), t("column.value", lang)], overall, name="agreement"))
    body.append(tag("h2", "Cohen's kappa"))
    weights = {
        None: t("judge.unweighted", lang),
        "linear": t("judge.linear", lang),
        "quadratic": t("judge.quadratic", lang),
    }
    body.append(
        table(
            [t(k, lang) for k in ("judge.rater_a", "judge.rater_b", "judge.weights", "judge.pairs", "judge.kappa")],
            [
                [k["raters"][0], k["raters"][1], weights[k["weights"]], k["pairs"], value(k["kappa"])]
                for k in data["cohen_kappa"]
            ],
            name="cohen",
        )
    )
    body.append(tag("h2", t("judge.disagreements", lang)))
    if data["disagreements"]:
        rows = [
            [d["query_id"], d["doc_id"], ", ".join(f"{r}: {g}" for r, g in d["grades"].items())]
            for d in data["disagreements"]
        ]
        body.append(
            table(
                [t("column.query", lang), t("judge.document", lang), t("judge.grades", lang)],
                rows,
                name="disagreements",
                numeric=[False, False, False],
            )
        )
    else:
        body.append(tag("p", t("judge.no_disagreements", lang), class_="note"))
    body.append(tag("h2", t("judge.per_query", lang)))
    body.append(
        table(
            [
                t("column.query", lang),
                t("judge.pairs", lang),
                "Fleiss' kappa",
                t("judge.alpha", lang),
                t("judge.disagreements", lang),
            ],
            [
                [
                    q["query_id"],
                    q["pairs"],
                    value(q["fleiss_kappa"]),
                    value(q["krippendorff_alpha"]),
                    q["disagreements"],
                ]
                for q in data["queries"]
            ],
            name="per-query",
        )
    )
    if frame.who is None or frame.who.may("operator"):
        downloads = [
            tag(
                "a",
                t("judge.qrels", lang, method=method),
                href=f"/judging/sets/{quote(data['set'], safe='')}/qrels.txt?consensus={method}",
            )
            for method in ("majority", "median")
        ]
        body.append(tag("p", join([downloads[0], " · ", downloads[1]]), class_="meta"))
    body.append(tag("p", tag("a", t("page.json", lang), href="/api" + set_link(data["set"], "en")), class_="meta"))
    return join(body)


def unjudged_form(data: dict, frame) -> Markup | None:
    """On an execution's page, for an operator: "Judge what nobody judged" (a task of the returned
    documents neither the ground truth nor the set judges), the set named after the execution."""
    if not (frame.writable and frame.who is not None and frame.who.may("operator")) or not data.get("results"):
        return None
    lang = frame.lang
    unjudged = sum(1 for r in data["results"] for d in r["documents"] if d.get("judgment") == "unjudged")
    return tag(
        "form",
        _hidden("csrf_token", frame.csrf or ""),
        _hidden("lang", lang),
        tag(
            "label",
            t("judge.set", lang),
            Markup(f' <input type="text" name="set" required size="24" value="{escape(data["name"])}">'),
        ),
        tag(
            "label",
            t("judge.ratings_wanted", lang),
            Markup(' <input type="number" name="ratings" value="1" min="1" max="20">'),
        ),
        tag("button", t("judge.unjudged_button", lang, count=unjudged), type="submit"),
        method="post",
        action=f"/api/executions/{int(data['id'])}/judging",
        class_="inline",
        data_form="judge-unjudged",
    )
