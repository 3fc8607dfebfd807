"""The judging acceptance in a real browser (headless Chromium through selenium) against ``evaltool serve``:
two raters judge the same ten-document pool by keyboard, each with a reload in the middle (and one
skipping a document and coming back to it); the disagreements page lists exactly the pairs they
graded differently; the kappa shown is scikit-learn's on the same grades; the exported qrels, given
to ``evaltool QRELS RUN``, give the numbers a hand count gives. Screenshots: tests/artifacts/judging-*.png."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.browser import console_errors, screenshot
from tests.support.server_process import ROOT, Server

OPERATOR, RATERS = "op-s3cret", {"ana": "ana-s3cret", "ben": "ben-s3cret"}
QUERIES = {"q1": [f"d0{i}" for i in range(1, 6)], "q2": [f"e0{i}" for i in range(1, 6)]}
# each rater's grades in the pool's order (q1 d01..d05, then q2 e01..e05)
GRADES = {"ana": [3, 0, 1, 0, 2, 0, 0, 2, 1, 0], "ben": [3, 1, 1, 0, 0, 0, 2, 2, 1, 0]}
DIFFERENT = [("q1", "d02"), ("q1", "d05"), ("q2", "e02")]  # by hand from GRADES


def _files(folder):
    run = folder / "run.txt"
    run.write_text("".join(f"{q} Q0 {doc} {rank} {10 - rank} sys\n" for q, docs in QUERIES.items()
                           for rank, doc in enumerate(docs, 1)))
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": doc, "title": f"Document {doc}", "text": f"The text of {doc}."}) + "\n"
                              for docs in QUERIES.values() for doc in docs))
    topics = folder / "topics.jsonl"
    topics.write_text('{"qid": "q1", "query": "flat tyre", "description": "How to repair a puncture."}\n'
                      '{"qid": "q2", "query": "wifi slow", "narrative": "Channel advice is relevant."}\n')
    return run, corpus, topics


def _evaltool(*args) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "evaltool", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)


def _css(driver, selector):
    return driver.find_elements("css selector", selector)


def _wait(driver, condition, timeout: float = 60):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def _read(driver, read):
    """``read(driver)``, None while the page is between two loads."""
    try:
        return read(driver)
    except Exception:  # the element went with the page it was on
        return None


def _current(driver):
    return _read(driver, lambda d: (d.find_element("css selector", "section.judging").get_attribute("data-query"),
                                    d.find_element("css selector", "article.doc.current").get_attribute("data-doc")))


def _mine(driver):
    return _read(driver, lambda d: d.find_element("css selector", ".mine-count").text)


def _press(driver, key: str):
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(key).perform()


def _grade(driver, key: str, count: int, then: tuple | None):
    """Press a grade's key; wait until it is saved (the rater's count) and ``then`` is the current pair."""
    _press(driver, key)
    _wait(driver, lambda d: _mine(d) == str(count))
    if then is not None:
        _wait(driver, lambda d: _current(d) == then)


def _log_in(driver, url: str, secret: str):
    driver.delete_all_cookies()
    driver.get(f"{url}/login")
    _css(driver, "input[name=token]")[0].send_keys(secret)
    _css(driver, "form.login button[type=submit]")[0].click()
    _wait(driver, lambda d: "/login" not in d.current_url)


def test_two_raters_judge_a_ten_document_pool_by_keyboard(browser, tmp_path):
    from sklearn.metrics import cohen_kappa_score

    db = tmp_path / "history.sqlite"
    run, corpus, topics = _files(tmp_path)
    made = _evaltool("pool", run, "--depth", 5, "--task", "acceptance", "--set", "accept", "--ratings", 2,
                     "--topics", topics, "--db", db)
    assert "10 pairs of 2 queries" in made.stderr
    server = Server("--db", str(db), "--token", f"op={OPERATOR}", *[a for name, secret in RATERS.items()
                                                                     for a in ("--rater-token", f"{name}={secret}")],
                    "--corpus", str(corpus)).wait_ready()
    try:
        url = server.url
        # ana: q1 in order, on to q2 by herself, a reload after two documents of q2, the rest
        _log_in(browser, url, RATERS["ana"])
        browser.get(f"{url}/judging/1")
        assert _current(browser) == ("q1", "d01")
        assert "How to repair a puncture." in browser.page_source and "The text of d01." in browser.page_source
        screenshot(browser, "judging-task")
        keys = [str(g) for g in GRADES["ana"]]
        order = [(q, d) for q, docs in QUERIES.items() for d in docs]
        for i in range(7):
            _grade(browser, keys[i], i + 1, order[i + 1])
        browser.refresh()
        assert _current(browser) == ("q2", "e03") and _mine(browser) == "7"
        for i in range(7, 10):
            _grade(browser, keys[i], i + 1, order[i + 1] if i < 9 else None)
        _wait(browser, lambda d: _read(d, lambda x: x.find_element("css selector", ".judging-status").text) ==
              "You have judged every document of this task. Thank you.")
        screenshot(browser, "judging-done")
        # ben: skips d02 with s, grades the rest of q1, is brought back to d02, then q2 with a reload
        _log_in(browser, url, RATERS["ben"])
        browser.get(f"{url}/judging/1")
        assert _current(browser) == ("q1", "d01")
        assert {p.text for p in _css(browser, "article.doc p.mine")} == {"Not judged by you yet."}  # never ana's
        b = [str(g) for g in GRADES["ben"]]
        _grade(browser, b[0], 1, ("q1", "d02"))
        _press(browser, "s")
        _wait(browser, lambda d: _current(d) == ("q1", "d03"))
        _grade(browser, b[2], 2, ("q1", "d04"))
        _grade(browser, b[3], 3, ("q1", "d05"))
        _grade(browser, b[4], 4, ("q1", "d02"))  # the one skipped
        _press(browser, "k")  # moving does not grade
        _wait(browser, lambda d: _current(d) == ("q1", "d01"))
        _press(browser, "j")
        _wait(browser, lambda d: _current(d) == ("q1", "d02"))
        _grade(browser, b[1], 5, ("q2", "e01"))
        _grade(browser, b[5], 6, ("q2", "e02"))
        browser.refresh()
        assert _current(browser) == ("q2", "e02")
        for i in range(6, 10):
            _grade(browser, b[i], i + 1, order[i + 1] if i < 9 else None)
        assert console_errors(browser) == []
        # nothing lost: the set holds exactly what was pressed
        from evaltool.judgments import read_judgments

        stored = {(j.rater, j.query_id, j.doc_id): j.grade for j in read_judgments(str(db), "accept")}
        assert stored == {(r, q, d): g for r, grades in GRADES.items() for (q, d), g in zip(order, grades)}
        # the operator's view of the set: the disagreements and the kappa
        _log_in(browser, url, OPERATOR)
        browser.get(f"{url}/judging/sets/accept")
        rows = [[c.text for c in r.find_elements("css selector", "td")]
                for r in _css(browser, "table[data-table=disagreements] tbody tr")]
        assert [(r[0], r[1]) for r in rows] == DIFFERENT
        cohen = [[c.text for c in r.find_elements("css selector", "td")]
                 for r in _css(browser, "table[data-table=cohen] tbody tr")]
        expected = {w: cohen_kappa_score(GRADES["ana"], GRADES["ben"], labels=[0, 1, 2, 3], weights=w)
                    for w in (None, "linear", "quadratic")}
        assert [(r[0], r[1], r[3]) for r in cohen] == [("ana", "ben", "10")] * 3
        assert [float(r[4]) for r in cohen] == [round(expected[w], 4) for w in (None, "linear", "quadratic")]
        screenshot(browser, "judging-agreement")
        browser.get(f"{url}/judging/sets/accept?lang=es")
        screenshot(browser, "judging-agreement-es")
        browser.get(f"{url}/judging/1?lang=es")
        screenshot(browser, "judging-task-es")
        assert console_errors(browser) == []
    finally:
        server.kill()
    # the exported qrels scored by evaltool = a hand count. Majority (a tie to the lower grade): q1 d01 3,
    # d02 0, d03 1, d04 0, d05 0; q2 e01 0, e02 0, e03 2, e04 1, e05 0. The run ranks d01..d05 and e01..e05:
    # P@5 q1 = 2/5, q2 = 2/5; RR q1 = 1 (d01), q2 = 1/3 (e03 at rank 3): means 0.4 and 0.6667
    qrels = tmp_path / "qrels.txt"
    _evaltool("judgments", "export", "accept", "--db", db, "--output", qrels)
    assert qrels.read_text() == ("q1 0 d01 3\nq1 0 d02 0\nq1 0 d03 1\nq1 0 d04 0\nq1 0 d05 0\n"
                                 "q2 0 e01 0\nq2 0 e02 0\nq2 0 e03 2\nq2 0 e04 1\nq2 0 e05 0\n")
    scored = _evaltool(qrels, run, "-m", "P.5", "-m", "recip_rank").stdout
    assert [line.split() for line in scored.splitlines()] == [["recip_rank", "all", "0.6667"], ["P_5", "all", "0.4000"]]
