"""-o html on eval and compare: the numbers of the JSON output, charts of the per-query values,
every user string escaped, one file with nothing to fetch.

Expected values come from the same command's ``-o json`` (a separate formatter over the
same result) and from per-query differences computed here from each run's own JSON.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import sys

import pytest

from tests.support.html_pages import Page
from tests.support.helpers import assert_fails, invoke

XSS = "<img src=x onerror=alert(1)>"
QIDS = ["q<1>", "q&2", '"q3"', "q'4", "5"]  # characters HTML treats specially; an id that reads as a number
NAMES = ["base & co", "<i>new</i>"]
FIRST_RELEVANT = {"base": [1, 2, 3, 1, 2], "new": [2, 1, 1, 1, 4]}  # rank of the relevant document per query


@pytest.fixture
def files(tmp_path):
    """A qrels file (one relevant document per query) and two runs that find it at the ranks above."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 rel 1\n" for q in QIDS))
    runs = []
    for name, ranks in FIRST_RELEVANT.items():
        run = tmp_path / f"{name}.txt"
        run.write_text("".join(f"{q} Q0 {'rel' if r == rank else f'd{r}'} {r} {10 - r} t\n"
                               for q, rank in zip(QIDS, ranks) for r in range(1, 6)))
        runs.append(str(run))
    return str(qrels), runs


def _run(*args) -> str:
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _per_query(qrels, run) -> dict:
    return json.loads(_run(qrels, run, "-q", "-m", "recip_rank", "-m", "P.1", "-o", "json"))["per_query"]


def test_eval_html_has_the_json_values_and_a_bar_per_query(files):
    qrels, runs = files
    expected = json.loads(_run(qrels, runs[0], "-q", "-m", "recip_rank", "-m", "P.1", "-o", "json"))
    page = Page(_run(qrels, runs[0], "-q", "-m", "recip_rank", "-m", "P.1", "-o", "html"))

    (rows,) = page.tables
    assert rows[0] == ["query", "recip_rank", "P_1"]
    shown = {row[0]: row[1:] for row in rows[1:]}
    assert set(shown) == {*expected["per_query"], "all"}
    for qid, values in expected["per_query"].items():
        assert shown[qid] == [f"{values['recip_rank']:.4f}", f"{values['P_1']:.4f}"]
    assert shown["all"] == [f"{expected['summary']['recip_rank']:.4f}", f"{expected['summary']['P_1']:.4f}"]

    (bars,) = page.figures_named("per-query")
    first, second = bars["data"]
    qids = list(expected["per_query"])
    assert [html.unescape(x) for x in first["x"]] == qids  # chart text is entity-escaped, shown as itself
    assert first["y"] == [expected["per_query"][q]["recip_rank"] for q in qids]
    assert second["y"] == [expected["per_query"][q]["P_1"] for q in qids]
    assert first["visible"] is True and second["visible"] is False  # the menu switches measure
    assert [b["label"] for b in bars["layout"]["updatemenus"][0]["buttons"]] == ["recip_rank", "P_1"]


def test_compare_html_scatter_and_differences_with_the_interval(files):
    qrels, runs = files
    names = ["--name", NAMES[0], "--name", NAMES[1]]
    expected = json.loads(_run("compare", qrels, *runs, "-m", "recip_rank", *names, "-o", "json"))
    page = Page(_run("compare", qrels, *runs, "-m", "recip_rank", *names, "-o", "html"))

    a, b = _per_query(qrels, runs[0]), _per_query(qrels, runs[1])
    (scatter,) = page.figures_named("scatter")
    points = scatter["data"][1]
    qids = [html.unescape(q) for q in points["text"]]
    assert sorted(qids) == sorted(a)
    assert points["x"] == [a[q]["recip_rank"] for q in qids]
    assert points["y"] == [b[q]["recip_rank"] for q in qids]
    assert html.unescape(scatter["layout"]["xaxis"]["title"]["text"]) == NAMES[0]

    (histogram,) = page.figures_named("differences")
    assert histogram["data"][0]["x"] == [b[q]["recip_rank"] - a[q]["recip_rank"] for q in qids]
    cell = expected["runs"][NAMES[1]]["recip_rank"]
    band = [s for s in histogram["layout"]["shapes"] if s["type"] == "rect"][0]
    assert [band["x0"], band["x1"]] == pytest.approx(cell["ci"], abs=1e-12)
    mean_line = histogram["layout"]["shapes"][-1]
    assert mean_line["x0"] == pytest.approx(cell["delta"], abs=1e-12)

    # the tables are those of -o table: the run names as they are, the paired statistics
    tables = page.tables
    assert [row[0] for row in tables[0][1:]] == NAMES[:2]
    assert tables[1][1][:3] == [NAMES[1], "recip_rank", f"{cell['delta']:.4f}"]


def test_every_user_string_is_escaped(files, tmp_path):
    qrels, runs = files
    hostile_qid = "</script><svg/onload=alert(2)>"
    (tmp_path / "qrels2.txt").write_text(open(qrels).read() + f"{hostile_qid} 0 rel 1\n")
    for i, run in enumerate(runs):
        with open(run, "a") as out:
            out.write(f"{hostile_qid} Q0 rel 1 2.0 t\n{hostile_qid} Q0 other 2 {1.0 + 2 * i} t\n")
    text = _run("compare", tmp_path / "qrels2.txt", *runs, "-m", "recip_rank", "--name", "base",
                "--name", XSS, "-o", "html")
    assert XSS not in text and hostile_qid not in text
    assert html.escape(XSS) in text
    page = Page(text)
    assert "img" not in page.elements and "svg" not in page.elements
    assert [row[0] for row in page.tables[0][1:]] == ["base", XSS]  # shown as the characters it is
    (bars,) = page.figures_named("per-query")
    assert html.escape(hostile_qid, quote=False) in bars["data"][0]["x"]


def test_the_file_is_self_contained(files):
    qrels, runs = files
    page = Page(_run("compare", qrels, *runs, "-m", "recip_rank", "-o", "html"))
    assert page.urls == ["data:,"]  # the empty icon; no other src, href or action: nothing to fetch
    assert len(page.scripts) == 2 and all("src" not in s["attrs"] for s in page.scripts)
    assert "plotly.js v" in page.scripts[0]["text"][:200]
    policy = page.meta["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'" and directives["connect-src"] == "'self'"
    hashes = {"'sha256-" + base64.b64encode(hashlib.sha256(s["text"].encode()).digest()).decode() + "'"
              for s in page.scripts}
    assert set(directives["script-src"].split()) == hashes  # exactly the two scripts of the page run


def test_output_file(files, tmp_path):
    qrels, runs = files
    target = tmp_path / "report.html"
    assert _run(qrels, runs[0], "-m", "recip_rank", "-o", "html", "--output", target) == ""
    page = Page(target.read_text())
    assert page.tables[0][-1][0] == "all"


def test_without_plotly_html_is_one_message_before_any_work(files, monkeypatch, tmp_path):
    from evaltool.report import html as html_report

    qrels, runs = files
    monkeypatch.setitem(sys.modules, "plotly.offline", None)  # import fails as if plotly were not installed
    html_report.asset.cache_clear()
    db = tmp_path / "history.sqlite"
    try:
        assert_fails(invoke(qrels, runs[0], "-o", "html", "--record", "--db", db), "pip install 'evaltool[dashboard]'")
        assert_fails(invoke("compare", qrels, *runs, "-o", "html", "--record", "--db", db), "evaltool[dashboard]")
    finally:
        html_report.asset.cache_clear()
    assert not db.exists()  # nothing recorded for an output that could not be written


def test_history_report_html_is_the_json_report_with_trends(tmp_path):
    from tests.support.dashboard_data import XSS, build

    db = str(tmp_path / "history.sqlite")
    build(db)
    expected = json.loads(_run("history", "report", "--db", db, "--labels", "-o", "json"))
    text = _run("history", "report", "--db", db, "--labels", "-o", "html")
    assert XSS not in text
    page = Page(text)
    (rows,) = page.tables
    measures = list(expected["summary"]["values"])
    assert rows[0] == ["id", "name", "recorded_at", *measures, "label"]
    assert rows[1:-1] == [[str(r["id"]), r["name"], r["recorded_at"],
                           *["" if r["values"][m] is None else f"{r['values'][m]:.4f}" for m in measures], r["label"]]
                          for r in expected["rows"]]
    assert rows[-1][0] == "summary" and rows[-1][-1] == expected["summary"]["label"]
    for m in measures:
        (figure,) = page.figures_named(f"trend-{m}")
        points = sorted((html.unescape(t["name"]), x, y) for t in figure["data"] for x, y in zip(t["x"], t["y"]))
        assert points == sorted((r["name"], r["recorded_at"], r["values"][m]) for r in expected["rows"]
                                if r["values"][m] is not None)
