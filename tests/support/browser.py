"""A real browser for the tests: the system's headless Chromium driven by the system chromedriver.

Nothing is downloaded: selenium is pointed at ``/usr/bin/chromedriver`` and ``/usr/bin/chromium``
(Debian's ``chromium-driver`` and ``chromium``; ``.ci/run`` installs them). Without them the
browser tests skip locally with the reason and fail under CI=true (tests/support/helpers.py).
Screenshots go to ``tests/artifacts/`` (git-ignored) for a reviewer to look at.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.support.helpers import missing

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CANDIDATES = {"chromium": ["/usr/bin/chromium", "/usr/bin/chromium-browser"], "chromedriver": ["/usr/bin/chromedriver"]}


def _find(name: str) -> str | None:
    for path in CANDIDATES[name]:
        if os.access(path, os.X_OK):
            return path
    return shutil.which(name)


def headless_chromium():
    """A headless Chromium that records console messages and network requests (the ``browser``
    fixture of tests/conftest.py yields it)."""
    chromium, driver_path = _find("chromium"), _find("chromedriver")
    if not chromium or not driver_path:
        missing("the browser tests need Debian's chromium and chromium-driver (apt-get install chromium "
                "chromium-driver); not found")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing("the browser tests need selenium: pip install 'evaltool[test]'")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1000", "--hide-scrollbars", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def console_errors(driver) -> list[str]:
    """Console messages of level SEVERE since the last call (the log empties as it is read)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def requested_urls(driver) -> list[str]:
    """Every URL the page asked for since the last call (Chrome's performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def wait_for_charts(driver, count: int | None = None, timeout: float = 60) -> None:
    """Until every chart on the page is drawn (evaltool.js marks each one ``data-drawn``)."""
    from selenium.webdriver.support.ui import WebDriverWait

    def drawn(d):
        charts = d.find_elements("css selector", "[data-figure]")
        done = d.find_elements("css selector", "[data-figure][data-drawn='true']")
        return len(done) == len(charts) and (count is None or len(charts) == count)

    WebDriverWait(driver, timeout).until(drawn)


def screenshot(driver, name: str) -> Path:
    """The whole page as ``tests/artifacts/NAME.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, max(800, min(int(height) + 40, 8000)))
    driver.execute_script("window.scrollTo(0, 0)")
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(1400, 1000)
    return path
