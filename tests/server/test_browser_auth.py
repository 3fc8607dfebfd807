"""Logging in, CSRF and Spanish in a real browser (headless Chromium through selenium), against
``evaltool serve`` with named tokens over HTTP. Screenshots: tests/artifacts/dashboard-login*.png,
dashboard-es-*.png."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.browser import console_errors, screenshot, wait_for_charts
from tests.support.dashboard_data import english_only_words

OPERATOR = "s3cret-operator"
RESULT = {"summary": {"recip_rank": 0.5}, "per_query": {"a": {"recip_rank": 0.5}}}


@pytest.fixture(scope="module")
def served(serve_dashboard):
    return serve_dashboard("--token", f"ci={OPERATOR}", "--rater-token", "ana=r4ter")


@pytest.fixture(scope="module")
def attacker(served):
    """Another origin (same host, another port) whose page posts a form to the dashboard."""
    page = (f'<!DOCTYPE html><html><body><form method="post" enctype="text/plain" '
            f'action="{served.url}/api/executions?name=forged">'
            f'<input name=\'{{"summary": {{"map": 1.0}}, "x": "\' value=\'"}}\'>'
            '<button id="go" type="submit">win a prize</button></form></body></html>').encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def _css(driver, selector):
    return driver.find_elements("css selector", selector)


def _wait_for(driver, url: str, timeout: float = 30) -> None:
    """Until the browser is at ``url`` (a click's POST, redirects and the new page take a moment)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(lambda d: d.current_url == url and d.execute_script(
        "return document.readyState") == "complete")


def _names(served) -> list[str]:
    status, _, body = served.get("/api/executions", {"Authorization": f"Bearer {OPERATOR}"})
    assert status == 200
    return [e["name"] for e in json.loads(body)["executions"]]


def _post_from_the_page(driver, csrf: str | None) -> int:
    """A fetch from the dashboard's own page, with or without the CSRF header; its status."""
    return driver.execute_async_script("""
        const [body, csrf, done] = arguments;
        const headers = {"content-type": "application/json"};
        if (csrf) { headers["x-csrf-token"] = csrf; }
        fetch("/api/executions?name=" + (csrf ? "with-csrf" : "without-csrf"),
              {method: "POST", body: JSON.stringify(body), headers: headers})
          .then(r => done(r.status), e => done(String(e)));
    """, RESULT, csrf)


def test_log_in_post_with_csrf_and_log_out(browser, served, attacker):
    browser.delete_all_cookies()
    browser.get(f"{served.url}/trends")
    assert browser.current_url == f"{served.url}/login?next=%2Ftrends"  # reading needs a token too
    screenshot(browser, "dashboard-login")
    _css(browser, "input[name=token]")[0].send_keys("not the token")
    _css(browser, "form.login button")[0].click()
    _wait_for(browser, f"{served.url}/login")
    assert "That token is not valid." in browser.find_element("css selector", "main").text
    _css(browser, "input[name=token]")[0].send_keys(OPERATOR)
    _css(browser, "form.login button")[0].click()
    _wait_for(browser, f"{served.url}/trends")
    wait_for_charts(browser)
    assert "ci (operator)" in _css(browser, "header .account")[0].text
    (cookie,) = [c for c in browser.get_cookies() if c["name"] == "evaltool_session"]
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict" and cookie["secure"] is False
    assert browser.execute_script("return document.cookie").find("evaltool_session") == -1  # no script sees it
    screenshot(browser, "dashboard-logged-in")

    assert _post_from_the_page(browser, None) == 403  # the cookie alone is not enough
    csrf = _css(browser, "form.logout input[name=csrf_token]")[0].get_attribute("value")
    assert _post_from_the_page(browser, csrf) == 201
    assert "with-csrf" in _names(served) and "without-csrf" not in _names(served)

    browser.get(attacker)  # another site's page posts a form to the dashboard, the session cookie goes along
    _css(browser, "#go")[0].click()
    _wait_for(browser, f"{served.url}/api/executions?name=forged")
    assert "a request from another site is refused" in browser.find_element("tag name", "body").text
    assert "forged" not in _names(served)

    browser.get(f"{served.url}/")
    _css(browser, "form.logout button")[0].click()
    _wait_for(browser, f"{served.url}/login?next=%2F")  # logged out, and reading needs a token
    assert not [c for c in browser.get_cookies() if c["name"] == "evaltool_session"]
    assert console_errors(browser) == [] or all("401" in m or "403" in m for m in console_errors(browser))


def _page_words(driver) -> set[str]:
    """Words of the page's own text: the body's text without the English link of the language switch."""
    text = driver.execute_script("""
        const copy = document.body.cloneNode(true);
        copy.querySelectorAll('[lang="en"], code').forEach(e => e.remove());
        return copy.innerText;""")
    return {w.lower() for w in re.findall(r"[A-Za-z]{3,}", text)}


def test_spanish_pages_have_no_english_word(browser, served):
    browser.delete_all_cookies()
    browser.get(f"{served.url}/login?lang=es")
    _css(browser, "input[name=token]")[0].send_keys(OPERATOR)
    _css(browser, "form.login button")[0].click()
    _wait_for(browser, f"{served.url}/?lang=es")
    english = english_only_words()
    ids = served.ids
    pages = {"report": "/?date_from=2025-01-01&date_to=2025-01-31", "trends": "/trends",
             "execution": f"/executions/{ids['rm3']}", "compare": f"/compare?ids={ids['bm25']},{ids['rm3']}",
             "diff": f"/diff?a={ids['bm25']}&b={ids['rm3']}", "suites": "/suites"}
    for name, path in pages.items():
        browser.get(f"{served.url}{path}{'&' if '?' in path else '?'}lang=es")
        wait_for_charts(browser)
        assert browser.find_element("tag name", "html").get_attribute("lang") == "es"
        api = {"report": "/api/report?date_from=2025-01-01&date_to=2025-01-31", "trends": "/api/executions"}.get(
            name, "/api" + path)
        data = served.get(api, {"Authorization": f"Bearer {OPERATOR}"})[2].decode()
        typed = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", data)}  # names and backends, shown as typed
        assert not (_page_words(browser) & english) - typed, (name, sorted((_page_words(browser) & english) - typed))
        screenshot(browser, f"dashboard-es-{name}")
    browser.get(f"{served.url}/?date_from=2025-01-01&date_to=2025-01-31&lang=es")
    summary = [td.text for td in _css(browser, "table[data-table=report] tfoot td")]
    assert summary[2] == "3 evaluaciones" and summary[-1] == "Aceptable"
    _css(browser, "a[hreflang=en]")[0].click()  # the switch keeps the address
    _wait_for(browser, f"{served.url}/?date_from=2025-01-01&date_to=2025-01-31")
    assert _css(browser, "table[data-table=report] tfoot td")[2].text == "3 executions"
