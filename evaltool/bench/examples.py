"""An example backend: BM25 over the small help-centre corpus shipped with the package.

``evaltool bench data/bench_queries.json --backend evaltool.bench.examples:bm25_search``
runs out of the box, from a clone or an installed wheel. The corpus (35 short articles
on cooking, gardening, cycling and home networks, written for this project) is read from
``EVALTOOL_BENCH_CORPUS`` if set, else from ``data/bench_corpus.jsonl`` beside this module
(package data). It is an example of the backend contract, not a search engine:
lower-cased word tokens, a few stop words, a plural ``s`` stripped.

BM25 (Robertson & Zaragoza 2009, Lucene's idf) with Anserini's defaults k1 = 0.9, b = 0.4:

    score(d, q) = sum over terms t of q:  idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

Documents are returned best first, ties by id; documents without a query term are not.

>>> [doc for doc, score in bm25_search("flat tyre inner tube", limit=2)]
['bike-puncture', 'bike-tyre-pressure']
>>> len(bm25_search.corpus_ids())
35

``bm25_documents`` is the same search returning each document's title and text too, which the
history keeps with the ranking (``evaltool history show ID -q --results``):

>>> bm25_documents("flat tyre inner tube", limit=1)[0][2]["title"]
'Fixing a flat tyre'
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections import Counter
from pathlib import Path

from evaltool.errors import EvaltoolError

K1, B = 0.9, 0.4
STOP_WORDS = frozenset(
    "a an and are as at be but by do does for from how i in is it its my of off on or so that the them then "
    "there they this to up until when where which while why with you your".split()
)


def corpus_path() -> Path:
    return Path(
        os.environ.get("EVALTOOL_BENCH_CORPUS") or Path(__file__).resolve().parent / "data" / "bench_corpus.jsonl"
    )


def tokens(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return [
        w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words if w not in STOP_WORDS
    ]


class BM25:
    """An in-memory BM25 index of ``{"id", "title", "text"}`` documents."""

    def __init__(self, documents: list[dict]):
        self.ids = [doc["id"] for doc in documents]
        self.texts = {doc["id"]: {"title": doc["title"], "snippet": doc["text"]} for doc in documents}
        self.tf = [Counter(tokens(f"{doc['title']} {doc['text']}")) for doc in documents]
        self.length = [sum(tf.values()) for tf in self.tf]
        self.avgdl = sum(self.length) / len(self.length)
        df = Counter(term for tf in self.tf for term in tf)
        n = len(documents)
        self.idf = {term: math.log(1 + (n - count + 0.5) / (count + 0.5)) for term, count in df.items()}

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        terms = tokens(query)
        scored = []
        for doc, tf, length in zip(self.ids, self.tf, self.length, strict=True):
            norm = K1 * (1 - B + B * length / self.avgdl)
            total = sum(self.idf[t] * tf[t] * (K1 + 1) / (tf[t] + norm) for t in terms if tf[t])
            if total > 0:
                scored.append((doc, total))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:limit]


@functools.cache
def _index(path: Path) -> BM25:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvaltoolError(f"example corpus {path}: {exc.strerror or exc} (set EVALTOOL_BENCH_CORPUS)") from None
    return BM25([json.loads(line) for line in lines if line.strip()])


def bm25_search(query: str, limit: int = 10) -> list[tuple[str, float]]:
    """The top ``limit`` (id, BM25 score) pairs for ``query``."""
    return _index(corpus_path()).search(query, limit)


def bm25_documents(query: str, limit: int = 10) -> list[tuple[str, float, dict]]:
    """The top ``limit`` (id, BM25 score, {"title", "snippet"}) items for ``query``."""
    index = _index(corpus_path())
    return [(doc, score, index.texts[doc]) for doc, score in index.search(query, limit)]


def _corpus_ids() -> list[str]:
    return list(_index(corpus_path()).ids)


bm25_search.corpus_ids = _corpus_ids
bm25_documents.corpus_ids = _corpus_ids
