"""Controlled tests in a real browser (headless Chromium through selenium), served by ``evaltool serve``
over HTTP: log in, create a suite through the form, run it, follow its progress, read what the search
returned; change the ground truth and run again; the seed's comparative table made the same way; the
same pages in Spanish; a server stopped mid-run. Screenshots: tests/artifacts/workbench-*.png."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.browser import console_errors, screenshot
from tests.support.dashboard_data import XSS
from tests.support.server_process import ROOT, Server

OPERATOR = "op-s3cret"
# the seed's three evaluations (seed 004, "Ejemplo de tabla comparativa"), each a suite whose queries are
# answered by a TREC run replayed as the declared backend 'seed'; the rankings and relevant ids are made so
# that MRR / nDCG@10 / P@5 come out as the seed prints them (hand-checked in test_the_seed_table_numbers)
SEED_SUITES = {
    "envíos a Quito": [("a1", "envíos a Quito", [1, 1, 1, 0, 0], 0), ("a2", "envíos a Quito esta semana", [1, 1, 1, 0, 0], 2),
                       ("a3", "envíos a Quito por courier", [0, 1, 0, 1, 1], 3)],
    "celulares del mes anterior": [("b1", "celulares del mes anterior", [2, 1, 1, 3, 0], 0)],
    "productos electrónicos": [("c1", "productos electrónicos", [0, 0, 0, 1, 0, 0, 1, 0, 0, 1], 1)],
}


def seed_files(folder: Path) -> tuple[Path, dict]:
    """The run file the 'seed' backend replays, and per query the relevant ids with grades (the ranked
    grades above, plus ``missed`` relevant documents the run never returns)."""
    lines, truth = [], {}
    for queries in SEED_SUITES.values():
        for qid, _, grades, missed in queries:
            ranked = [f"{qid}-d{i}" for i in range(1, 11)]
            for rank, doc in enumerate(ranked, 1):
                lines.append(f"{qid} Q0 {doc} {rank} {100 - rank} seed")
            truth[qid] = {doc: g for doc, g in zip(ranked, grades) if g}
            truth[qid].update({f"{qid}-m{i}": 1 for i in range(1, missed + 1)})
    run = folder / "seed.run"
    run.write_text("\n".join(lines) + "\n")
    return run, truth


def test_the_seed_table_numbers():
    """The made-up rankings give the seed's numbers: by hand, a1 is RR 1, P@5 3/5, nDCG@10 1; a2 the same
    RR and P@5 with two relevant documents missed, nDCG@10 = (1 + 1/log2 3 + 1/2) / (that + 1/log2 5 +
    1/log2 6) ...; checked here with evaluate() (trec_eval's kernels) against the seed's rounding."""
    import tempfile

    from evaltool import evaluate

    run_file, truth = seed_files(Path(tempfile.mkdtemp()))
    run = {}
    for line in run_file.read_text().splitlines():
        qid, _, doc, rank, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    rows = []
    for queries in SEED_SUITES.values():
        ids = [q[0] for q in queries]
        result = evaluate({q: truth[q] for q in ids}, {q: run[q] for q in ids}, ["recip_rank", "ndcg_cut.10", "P.5"])
        rows.append(tuple(round(result.summary[m], 3) for m in ("recip_rank", "ndcg_cut_10", "P_5")))
    assert [(r[0], round(r[1], 2), r[2]) for r in rows] == [(0.833, 0.72, 0.6), (1.0, 0.85, 0.8), (0.25, 0.41, 0.2)]
    means = [round(sum(r[i] for r in rows) / 3, 2) for i in range(3)]
    assert means == [0.69, 0.66, 0.53]


def _start(folder: Path, *extra: str, env=None) -> Server:
    run_file, _ = seed_files(folder)
    backends = folder / "backends.json"
    backends.write_text(json.dumps({"gated": {"backend": "tests.support.job_backends:file_gated", "concurrency": 1}}))
    server = Server("--db", str(folder / "history.sqlite"), "--token", f"ci={OPERATOR}", "--public-read",
                    "--backend", f"seed={run_file}", "--backends-file", str(backends),
                    "--jobs-dir", str(folder / "jobs"), *extra, env=env)
    return server.wait_ready()


def _css(driver, selector):
    return driver.find_elements("css selector", selector)


def _wait(driver, condition, timeout: float = 120):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def _state(driver):
    """The job page's state (None while the page is between two loads)."""
    found = _css(driver, ".job .state")
    try:
        return found[0].get_attribute("data-state") if found else None
    except Exception:  # the element went with the page it was on
        return None


def _log_in(driver, url: str, lang: str = "en"):
    driver.get(f"{url}/login" + ("?lang=es" if lang == "es" else ""))
    _css(driver, "input[name=token]")[0].send_keys(OPERATOR)
    _css(driver, "form.login button[type=submit]")[0].click()
    _wait(driver, lambda d: "/login" not in d.current_url)


def _fill(form, **fields):
    for name, value in fields.items():
        field = form.find_element("css selector", f"[name={name}]")
        if field.tag_name == "select":
            from selenium.webdriver.support.ui import Select

            Select(field).select_by_value(value)
        else:
            field.clear()
            field.send_keys(str(value))


def _create_suite(driver, url, name, queries, lang="en"):
    suffix = "?lang=es" if lang == "es" else ""
    driver.get(f"{url}/suites{suffix}")
    form = _css(driver, "form[data-form=create]")[0]
    _fill(form, name=name, backend="seed", measures="recip_rank ndcg_cut.10 P.5", limit="10")
    form.find_element("css selector", "button[type=submit]").click()
    _wait(driver, lambda d: _css(d, "form[data-form=add-query]"))
    for qid, text, relevant in queries:
        form = _css(driver, "form[data-form=add-query]")[0]
        _fill(form, id=qid, query=text, relevant=relevant)
        form.find_element("css selector", "button[type=submit]").click()
        _wait(driver, lambda d, qid=qid: _css(d, f"table[data-table=queries] tr[data-query='{qid}']"))


def _run_and_wait(driver):
    _css(driver, "form[data-form=run] button")[0].click()
    _wait(driver, lambda d: "/jobs/" in d.current_url)
    _wait(driver, lambda d: _state(d) in ("done", "failed"))
    return driver.current_url


def _relevant_text(truth: dict) -> str:
    return " ".join(f"{doc}:{grade}" for doc, grade in truth.items())


def test_create_run_read_change_and_run_again(browser, tmp_path):
    server = _start(tmp_path)
    try:
        url = server.url
        _log_in(browser, url)
        _, truth = seed_files(tmp_path)
        queries = [(qid, text, _relevant_text(truth[qid])) for qid, text, _, _ in SEED_SUITES["envíos a Quito"]]
        queries[1] = ("a2", XSS, queries[1][2])  # a query text that is markup shows as text
        _create_suite(browser, url, "envíos a Quito", queries)
        screenshot(browser, "workbench-suite")
        cell = _css(browser, "tr[data-query=a2] td.text")[0]
        assert cell.text == XSS and not cell.find_elements("css selector", "img")
        job_url = _run_and_wait(browser)
        progress = _css(browser, ".job")[0]
        assert progress.find_element("css selector", ".done").text == "3"
        assert progress.find_element("css selector", ".total").text == "3"
        screenshot(browser, "workbench-job")
        _css(browser, ".job-execution a")[0].click()
        _wait(browser, lambda d: _css(d, "section.query-result"))
        a3 = _css(browser, "section.query-result[data-query=a3]")[0]
        marks = [li.get_attribute("class").split()[-1] for li in a3.find_elements("css selector", "li.doc")]
        assert marks[:5] == ["unjudged", "relevant", "unjudged", "relevant", "relevant"]
        missed = [c.get_attribute("data-missed") for c in a3.find_elements("css selector", "code[data-missed]")]
        assert missed == ["a3-m1", "a3-m2", "a3-m3"]
        screenshot(browser, "workbench-execution")
        first_execution = int(browser.current_url.rsplit("/", 1)[-1].split("?")[0])
        # the ground truth changes: a3-d1 becomes relevant; the suite runs again
        browser.get(f"{url}/suites/{urllib.request.quote('envíos a Quito')}")
        row = _css(browser, "tr[data-query=a3]")[0]
        row.find_element("css selector", "details summary").click()
        form = row.find_element("css selector", "form[data-form=edit-query]")
        _fill(form, relevant=_relevant_text({"a3-d1": 1, **truth["a3"]}))
        form.find_element("css selector", "button[type=submit]").click()
        _wait(browser, lambda d: "version" in d.page_source)
        _run_and_wait(browser)
        second_execution = int(_css(browser, ".job-execution a")[0].get_attribute("href").rsplit("/", 1)[-1]
                               .split("?")[0])
        browser.get(f"{url}/")
        rows = _css(browser, "table[data-table=report] tbody tr")
        ids = [int(r.get_attribute("data-execution")) for r in rows]
        assert ids == [first_execution, second_execution]
        labels = [r.find_elements("css selector", "td")[-1].text for r in rows]
        assert all(label in ("good", "fair", "poor") for label in labels)
        screenshot(browser, "workbench-report")
        browser.get(f"{url}/compare-results?a={first_execution}&b={second_execution}")
        assert _css(browser, "section.query-compare[data-query=a3] .side.b li.relevant")
        screenshot(browser, "workbench-compare")
        assert console_errors(browser) == []
        # a POST from the signed-in browser without the CSRF token is refused
        status = browser.execute_async_script(
            "var done = arguments[arguments.length - 1];"
            "fetch('/api/suites/' + encodeURIComponent('envíos a Quito') + '/run', {method: 'POST', "
            "credentials: 'same-origin'}).then(function (r) { done(r.status); });")
        assert status == 403
        console_errors(browser)  # the refusal's own console line, read away
        assert job_url
    finally:
        server.kill()


def test_the_seed_table_through_the_browser_in_spanish(browser, tmp_path):
    server = _start(tmp_path)
    try:
        url = server.url
        _log_in(browser, url, "es")
        _, truth = seed_files(tmp_path)
        for name, queries in SEED_SUITES.items():
            _create_suite(browser, url, name, [(qid, text, _relevant_text(truth[qid])) for qid, text, _, _ in queries],
                          lang="es")
        browser.get(f"{url}/suites?lang=es")
        screenshot(browser, "workbench-suites-es")
        for name in SEED_SUITES:  # one after the other, in the seed's order
            browser.get(f"{url}/suites/{urllib.request.quote(name)}?lang=es")
            _run_and_wait(browser)
            assert _css(browser, ".job .state")[0].text == "terminada"
        screenshot(browser, "workbench-job-es")
        browser.get(f"{url}/?lang=es&measure=recip_rank&measure=ndcg_cut_10&measure=P_5")
        rows = _css(browser, "table[data-table=report] tbody tr")
        got = [[c.text for c in r.find_elements("css selector", "td")] for r in rows]
        values = [[float(v) for v in cells[4:7]] for cells in got]
        assert [[round(v, 2) for v in row] for row in values] == [[0.83, 0.72, 0.6], [1.0, 0.85, 0.8],
                                                                  [0.25, 0.41, 0.2]]
        assert [cells[2] for cells in got] == list(SEED_SUITES) and [cells[-1] for cells in got] == [
            "Bueno", "Bueno", "Mejorable"]
        summary = [c.text for c in _css(browser, "table[data-table=report] tfoot td")]
        assert summary[2] == "3 evaluaciones" and summary[-1] == "Aceptable"
        assert [round(float(v), 2) for v in summary[4:7]] == [0.69, 0.66, 0.53]
        screenshot(browser, "workbench-report-es")
        # the CSV download is the command line's report, byte for byte
        csv_link = _css(browser, "a.download")[0].get_attribute("href")
        with urllib.request.urlopen(csv_link, timeout=30) as answer:
            downloaded = answer.read()
        query = csv_link.split("?", 1)[1]
        args = ["history", "report", "--db", str(tmp_path / "history.sqlite"), "--lang", "es", "-o", "csv"]
        args += [a for m in re.findall(r"measure=([^&]+)", query) for a in ("-m", m)]
        cli = subprocess.run([sys.executable, "-m", "evaltool", *args], capture_output=True, env={
            **os.environ, "PYTHONPATH": str(ROOT)}, check=True)
        assert downloaded == cli.stdout
        # the pages of the flow, in Spanish: none shows an English word of its own text
        from tests.support.workbench_helpers import english_in, page_text

        users = [*SEED_SUITES, *(q[1] for qs in SEED_SUITES.values() for q in qs), "seed", "recip_rank", "P_5"]
        for address in ("/suites?lang=es", f"/suites/{urllib.request.quote('productos electrónicos')}?lang=es",
                        "/jobs?lang=es", "/jobs/1?lang=es", "/executions/1?lang=es", "/?lang=es"):
            browser.get(url + address)
            assert english_in(page_text(browser.page_source, *users)) == [], address
        assert console_errors(browser) == []
    finally:
        server.kill()


def test_reload_during_a_run_and_a_server_stopped_mid_run(browser, tmp_path):
    """The second query is held by the backend: the page, reloaded, shows the same job at 1/3; the server
    is killed; the next one marks the job interrupted, and resumed it sends only the queries the
    checkpoint lacks."""
    texts = ["flat tyre inner tube", "wifi slow because of neighbours", "sourdough starter feeding"]
    hold, sent = tmp_path / "hold", tmp_path / "sent.txt"
    hold.write_text(texts[1] + "\n")
    env = {"EVALTOOL_TEST_HOLD": str(hold), "EVALTOOL_TEST_SENT": str(sent)}
    server = _start(tmp_path, env=env)
    try:
        url = server.url
        _log_in(browser, url)
        browser.get(f"{url}/suites")
        form = _css(browser, "form[data-form=create]")[0]
        _fill(form, name="slow", backend="gated", limit="5")
        form.find_element("css selector", "button[type=submit]").click()
        _wait(browser, lambda d: _css(d, "form[data-form=add-query]"))
        for n, text in enumerate(texts, 1):
            form = _css(browser, "form[data-form=add-query]")[0]
            _fill(form, id=f"q{n}", query=text, relevant="bike-puncture")
            form.find_element("css selector", "button[type=submit]").click()
            _wait(browser, lambda d, n=n: _css(d, f"tr[data-query='q{n}']"))
        _css(browser, "form[data-form=run] button")[0].click()
        _wait(browser, lambda d: _state(d) == "running" and _css(d, ".job .done")[0].text == "1")
        job_url = browser.current_url
        browser.refresh()
        assert browser.current_url == job_url
        assert _css(browser, ".job .state")[0].get_attribute("data-state") == "running"
        assert (_css(browser, ".job .done")[0].text, _css(browser, ".job .total")[0].text) == ("1", "3")
        screenshot(browser, "workbench-job-running")
        server.stop(signal.SIGKILL)  # the server dies in the middle of the run
    finally:
        server.kill()
    assert sent.read_text().splitlines() == texts[:2]
    hold.unlink()
    sent.unlink()
    server = _start(tmp_path, env=env)
    try:
        job = json.loads(server.get("/api/jobs/1")[2])
        assert (job["state"], job["done"]) == ("interrupted", 1)
        assert json.loads(server.get("/api/report")[2])["rows"] == []  # nothing half-recorded
        _log_in(browser, server.url)
        browser.get(f"{server.url}/jobs/1")
        screenshot(browser, "workbench-interrupted")
        _css(browser, "form[data-form=resume] button")[0].click()
        _wait(browser, lambda d: _state(d) == "done")
        assert _css(browser, ".job .done")[0].text == "3"
        assert sent.read_text().splitlines() == texts[1:]  # the first was in the checkpoint
        assert len(json.loads(server.get("/api/report")[2])["rows"]) == 1
    finally:
        server.kill()
