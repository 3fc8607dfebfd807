"""Fake search backends for the `evaltool bench` tests (imported as tests.bench_backends:NAME).

``fake_search`` does what the query's ``behaviour`` field says (it asks for the field by
parameter name, as a backend may); every call is counted in ``CALLS`` by query text.
``logged_search`` appends each query text to the file named by ``BENCH_CALL_LOG`` and
sleeps ``BENCH_DELAY`` seconds: the subprocess tests read the log to count calls.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import Counter

from evaltool.bench import TransientError

CALLS: Counter = Counter()
_LOCK = threading.Lock()
IN_FLIGHT = {"now": 0, "max": 0}

# what each behaviour returns; expected ids in the tests' queries are "rel1", "rel2"
RANKINGS = {
    "ok": ["rel1", "x1", "rel2", "x2"],
    "slow": ["x1", "rel1"],
    "dupes": ["x1", "rel1", "x1", "rel2", "rel1", "x2"],
    "empty": [],
    "scored": [("x1", 3.5), ("rel1", 2.0, "some text"), ("rel2", 2.0)],
}


def _count(query: str) -> int:
    with _LOCK:
        CALLS[query] += 1
        return CALLS[query]


def fake_search(query, limit=10, behaviour="ok"):
    calls = _count(query)
    if behaviour == "boom":
        raise ValueError("boom")
    if behaviour == "hang":
        time.sleep(3)
    if behaviour == "slow":
        time.sleep(0.2)
    if behaviour == "transient" and calls == 1:
        raise TransientError("overloaded, try again")
    if behaviour == "always_transient":
        raise ConnectionError("connection reset")
    if behaviour == "not_a_list":
        return {"ids": ["rel1"]}
    if behaviour == "mixed":
        return ["rel1", ("x1", 1.0)]
    if behaviour == "bad_score":
        return [("rel1", float("nan"))]
    if behaviour == "spaced_id":
        return ["rel 1"]
    return list(RANKINGS.get(behaviour, RANKINGS["ok"]))


async def async_search(query, limit=10):
    """Counts how many calls are in flight at once."""
    _count(query)
    with _LOCK:
        IN_FLIGHT["now"] += 1
        IN_FLIGHT["max"] = max(IN_FLIGHT["max"], IN_FLIGHT["now"])
    try:
        await asyncio.sleep(0.05)
    finally:
        with _LOCK:
            IN_FLIGHT["now"] -= 1
    return ["rel1", "x1"][:limit]


def threaded_search(query):
    """A sync backend without a limit parameter; counts calls in flight (threads)."""
    _count(query)
    with _LOCK:
        IN_FLIGHT["now"] += 1
        IN_FLIGHT["max"] = max(IN_FLIGHT["max"], IN_FLIGHT["now"])
    try:
        time.sleep(0.05)
    finally:
        with _LOCK:
            IN_FLIGHT["now"] -= 1
    return ["x1", "rel1", "x2", "x3", "x4", "x5"]


def logged_search(query, limit=10):
    with open(os.environ["BENCH_CALL_LOG"], "a", encoding="utf-8") as log:
        log.write(query + "\n")
    time.sleep(float(os.environ.get("BENCH_DELAY", "0.15")))
    return ["rel1", "x1"] if query.endswith("0") else ["x1", "rel1"]


def search_with_corpus(query, limit=10):
    return fake_search(query, limit)


def _corpus_ids():
    """search_with_corpus's corpus: it lacks 'rel2'."""
    return ["rel1", "x1", "x2"]


search_with_corpus.corpus_ids = _corpus_ids


class AsyncSearcher:
    """A callable object whose __call__ is async (a client with state, say)."""

    def __init__(self):
        self.seen = []

    async def __call__(self, query, version=None):
        self.seen.append((query, version))
        await asyncio.sleep(0)
        return [("rel1", 1.0)] if version == "16.0" else [("x1", 1.0)]


async_object = AsyncSearcher()
