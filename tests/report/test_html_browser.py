"""The -o html files in a real browser (headless Chromium): charts drawn, no console error, no
network request, user strings shown as text. Screenshots: tests/artifacts/report-*.png."""

from __future__ import annotations

import pytest

from tests.support.browser import console_errors, requested_urls, screenshot, wait_for_charts
from tests.support.dashboard_data import build
from tests.support.helpers import require_shared
from tests.support.helpers import invoke

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """An eval report and a compare report of real TREC DL 2019 runs; a history report."""
    data = require_shared("realdata")
    qrels = data / "qrels" / "qrels.dl19-passage.txt"
    runs = [data / "runs" / f"{name}.trec_results_dl19.txt" for name in ("BM25", "BM25_RM3")]
    folder = tmp_path_factory.mktemp("reports")
    history = str(folder / "history.sqlite")
    build(history)
    made = {}
    for kind, args in {
        "eval": [qrels, runs[0], "-c", "-q", "-m", "ndcg_cut.10", "-m", "map", "--labels"],
        "compare": ["compare", qrels, *runs, "-c", "-m", "ndcg_cut.10", "-m", "map", "--name", "BM25",
                    "--name", XSS],
        "history": ["history", "report", "--db", history, "--labels"],
    }.items():
        target = folder / f"{kind}.html"
        result = invoke(*args, "-o", "html", "--output", target)
        assert result.exit_code == 0, result.stderr
        made[kind] = target
    return made


@pytest.mark.parametrize("kind, charts", [("eval", 1), ("compare", 5), ("history", 3)])
def test_report_file_opens_offline(browser, reports, kind, charts):
    requested_urls(browser), console_errors(browser)  # start both logs empty
    url = reports[kind].as_uri()
    browser.get(url)
    wait_for_charts(browser, charts)
    assert browser.find_elements("css selector", "[data-figure] svg.main-svg")  # plotly drew SVG
    screenshot(browser, f"report-{kind}")
    assert console_errors(browser) == []
    others = [u for u in requested_urls(browser) if u != url and not u.startswith("data:")]
    assert others == []  # nothing fetched: plotly.js and the data are in the file
    if kind == "compare":
        cells = browser.find_elements("css selector", "table tbody tr td:first-child")
        assert XSS in [c.text for c in cells]  # the run name is text, not an image
        assert browser.find_elements("css selector", "img") == []
        ticks = [t.text for t in browser.find_elements("css selector", ".xtitle")]
        assert "BM25" in ticks
