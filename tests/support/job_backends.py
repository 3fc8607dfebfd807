"""Search backends for the job runner's tests: BM25 over the example corpus, with each query's text
logged (to see what a resumed job sends again) and an optional gate the test opens query by query."""

from __future__ import annotations

import os
import threading
import time

from evaltool.bench.examples import bm25_documents

SENT: list[str] = []  # query texts, in the order the backend got them (in-process tests)
GATE = threading.Semaphore(0)  # a test releases one permit per query it lets through


def logged(query: str, limit: int = 10):
    SENT.append(query)
    return bm25_documents(query, limit)


def gated(query: str, limit: int = 10):
    if not GATE.acquire(timeout=60):
        raise RuntimeError("the test never opened the gate")
    SENT.append(query)
    return bm25_documents(query, limit)


def _held(query: str) -> bool:
    try:
        with open(os.environ["EVALTOOL_TEST_HOLD"], encoding="utf-8") as hold:
            return query in hold.read().splitlines()
    except FileNotFoundError:
        return False


def file_gated(query: str, limit: int = 10):
    """For a server in another process: appends the query to $EVALTOOL_TEST_SENT, then waits while the
    file $EVALTOOL_TEST_HOLD lists it (a line of its own)."""
    with open(os.environ["EVALTOOL_TEST_SENT"], "a", encoding="utf-8") as log:
        log.write(query + "\n")
    while _held(query):
        time.sleep(0.05)
    return bm25_documents(query, limit)
