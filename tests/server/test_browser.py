"""The dashboard in a real browser (headless Chromium through selenium and the system chromedriver),
served by ``evaltool serve`` over HTTP. Screenshots of every page type: tests/artifacts/dashboard-*.png."""

from __future__ import annotations

import json

import pytest

from tests.support.browser import console_errors, screenshot, wait_for_charts
from tests.support.dashboard_data import PER_QUERY, XSS


@pytest.fixture(scope="module")
def served(serve_dashboard):
    return serve_dashboard()


def _css(driver, selector):
    return driver.find_elements("css selector", selector)


def _api(served, path):
    status, _, body = served.get(path)
    assert status == 200, body
    return json.loads(body)


def _open(driver, url, charts=None):
    console_errors(driver)  # empty the log
    driver.get(url)
    wait_for_charts(driver, charts)


def test_comparative_table_for_a_chosen_date_range(browser, served):
    _open(browser, f"{served.url}/")
    for field, value in (("date_from", "2025-01-01"), ("date_to", "2025-01-31")):
        browser.execute_script("arguments[0].value = arguments[1]", _css(browser, f"input[name={field}]")[0], value)
    _css(browser, "form.filters button[type=submit]")[0].click()
    wait_for_charts(browser)
    assert "date_from=2025-01-01" in browser.current_url
    expected = _api(served, "/api/report?date_from=2025-01-01&date_to=2025-01-31")
    rows = _css(browser, "table[data-table=report] tbody tr")
    assert [int(r.get_attribute("data-execution")) for r in rows] == [row["id"] for row in expected["rows"]]
    assert [r.find_element("css selector", "td.name").text for r in rows] == [row["name"] for row in expected["rows"]]
    summary = _css(browser, "table[data-table=report] tfoot td")
    assert summary[2].text == "3 executions" and summary[-1].text == "acceptable"
    assert summary[-1].text == expected["summary"]["label"]
    screenshot(browser, "dashboard-report")
    assert console_errors(browser) == []


def test_trend_chart_has_a_point_per_execution(browser, served):
    executions = _api(served, "/api/executions")["executions"]
    _open(browser, f"{served.url}/trends")
    for measure in ("recip_rank", "P_5", "ndcg_cut_10"):
        chart = _css(browser, f"[data-chart='trend-{measure}']")[0]
        points = chart.find_elements("css selector", "svg g.trace.scatter path.point")
        assert len(points) == sum(measure in e["summary"] for e in executions), measure
    legend = [t.text for t in _css(browser, "[data-chart='trend-recip_rank'] g.legend text.legendtext")]
    assert XSS in legend  # the run's name is text in the chart too
    screenshot(browser, "dashboard-trends")
    assert console_errors(browser) == []


def test_clicking_an_execution_opens_its_per_query_page(browser, served):
    _open(browser, f"{served.url}/")
    link = [a for a in _css(browser, "table[data-table=report] td.name a") if a.text == "rm3"][0]
    link.click()
    wait_for_charts(browser, 1)
    assert browser.current_url.endswith(f"/executions/{served.ids['rm3']}")
    assert "rm3" in _css(browser, "h1")[0].text
    bars = _css(browser, "[data-chart='per-query'] svg g.trace.bars path")
    assert len(bars) == len(PER_QUERY["rm3"])
    table = _css(browser, "table[data-table=per-query]")[0]
    table.find_elements("css selector", "thead th button")[1].click()  # sort by recip_rank, ascending
    shown = [float(td.text) for td in table.find_elements("css selector", "tbody tr td:nth-child(2)")]
    assert shown == sorted(rr for rr, _ in PER_QUERY["rm3"].values())
    screenshot(browser, "dashboard-execution")
    assert console_errors(browser) == []


def test_a_hostile_run_name_is_text(browser, served):
    from selenium.common.exceptions import NoAlertPresentException

    _open(browser, f"{served.url}/?date_from=2025-03-01&date_to=2025-03-01")
    names = [td.text for td in _css(browser, "table[data-table=report] td.name")]
    assert names == [XSS]
    assert _css(browser, "main img") == []
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text
    _open(browser, f"{served.url}/executions/{served.ids[XSS]}", 1)
    assert XSS in _css(browser, "h1")[0].text
    assert '<b>bold</b> & "q"' in [td.text for td in _css(browser, "table.facts td")]
    assert _css(browser, "main img") == [] and _css(browser, "main b") == []
    assert console_errors(browser) == []


@pytest.mark.parametrize("page, charts", [("compare", 4), ("diff", 0), ("suites", 0)])
def test_other_pages_draw_without_errors(browser, served, page, charts):
    ids = served.ids
    url = {"compare": f"/compare?ids={ids['bm25']},{ids['rm3']},{ids[XSS]}",
           "diff": f"/diff?a={ids['bm25']}&b={ids['rm3']}", "suites": "/suites"}[page]
    _open(browser, f"{served.url}{url}", 2 * charts)
    if page == "suites":
        assert [td.text for td in _css(browser, "table[data-table=suites] tbody td:first-child")] == [
            "never run", "panel"]
    screenshot(browser, f"dashboard-{page}")
    assert console_errors(browser) == []
