"""Pools: which (query, document) pairs to judge, from the lists several runs returned.

* Depth@k (TREC's pooling, trectools' ``TrecPoolMaker.make_pool(runs, "topX", k)``): the
  union over the runs of each run's first ``k`` documents per query.
* RRF@N: per query, the ``N`` documents with the highest reciprocal-rank fusion score
  ``sum over runs of 1 / (60 + rank)`` (Cormack, Clarke and Büttcher 2009; rank from 1; a run
  that did not return the document adds nothing); equal scores are broken by document id. The N
are chosen among the pairs not judged yet, so that a pool is always N new pairs per query where
the runs returned that many.

A run file's lists are ranked as trec_eval ranks them (score descending, then document id
descending by bytes), not by its rank column; a history execution's lists are taken in the
order the search returned them. Pairs already judged (``judged``: query -> ids) are left out
(``left_out`` counts them).
The pool is sorted by query then document id.

>>> a = {"q1": ["d1", "d2", "d3"], "q2": ["d9"]}
>>> b = {"q1": ["d3", "d4", "d1"]}
>>> depth_pool([a, b], 2).pairs
{'q1': ['d1', 'd2', 'd3', 'd4'], 'q2': ['d9']}
>>> rrf_pool([a, b], 2, judged={"q2": {"d9"}}).pairs
{'q1': ['d1', 'd3']}
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from evaltool.errors import EvaltoolError

RRF_K = 60


@dataclass
class Pool:
    """The pairs to judge (query -> sorted document ids), how they were chosen, and how many
    pairs the pool would have held but were judged already (``left_out``)."""

    pairs: dict[str, list[str]]
    method: str  # depth | rrf
    size: int  # k of Depth@k, N of RRF@N
    left_out: int = 0
    sources: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return sum(len(docs) for docs in self.pairs.values())

    def text(self) -> str:
        """One ``query_id doc_id`` line per pair."""
        return "".join(f"{query} {doc}\n" for query, docs in self.pairs.items() for doc in docs)

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "size": self.size,
            "sources": self.sources,
            "pairs": len(self),
            "left_out": self.left_out,
            "queries": self.pairs,
        }


def run_lists(run) -> dict[str, list[str]]:
    """A :class:`~evaltool.inputs.Run`'s documents per query, in trec_eval's rank order."""
    import numpy as np

    from evaltool.ranking import rank_rows

    rows = np.arange(len(run))
    ranks = rank_rows(run, rows)
    order = np.lexsort((ranks, run.qid_codes))
    docs = run.doc_text(order)
    lists: dict[str, list[str]] = defaultdict(list)
    for code, doc in zip(run.qid_codes[order].tolist(), docs):
        lists[run.qid_vocab[code]].append(doc)
    return dict(lists)


def execution_lists(execution) -> dict[str, list[str]]:
    """What a history execution (read with ``results=True``) returned per query, in its order."""
    if not execution.results:
        raise EvaltoolError(
            f"execution {execution.id} has no stored result lists (only bench and suite "
            "executions keep what the search returned)"
        )
    return {
        r["query_id"]: [d["doc_id"] for d in sorted(r["documents"], key=lambda d: d["rank"])]
        for r in execution.results
        if r.get("documents")
    }


def _finish(chosen: dict[str, set[str]], judged, method: str, size: int, sources) -> Pool:
    judged = judged or {}
    pairs, left_out = {}, 0
    for query in sorted(chosen):
        seen = judged.get(query, ())
        docs = sorted(d for d in chosen[query] if d not in seen)
        left_out += len(chosen[query]) - len(docs)
        if docs:
            pairs[query] = docs
    return Pool(pairs, method, size, left_out, list(sources))


def _check(size: int, what: str) -> None:
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise EvaltoolError(f"{what} {size!r}: expected a whole number of 1 or more")


def depth_pool(lists, depth: int = 10, *, judged=None, sources=()) -> Pool:
    """Depth@``depth`` of ``lists`` (one {query: ids in rank order} per run), less ``judged``."""
    _check(depth, "--depth")
    chosen: dict[str, set[str]] = defaultdict(set)
    for ranked in lists:
        for query, docs in ranked.items():
            chosen[query].update(docs[:depth])
    return _finish(chosen, judged, "depth", depth, sources)


def rrf_pool(lists, size: int, *, k: int = RRF_K, judged=None, sources=()) -> Pool:
    """RRF@``size`` of ``lists`` (one {query: ids in rank order} per run), less ``judged``."""
    _check(size, "--size")
    fused: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for ranked in lists:
        for query, docs in ranked.items():
            for rank, doc in enumerate(docs, 1):
                fused[query][doc] += 1.0 / (k + rank)
    judged = judged or {}
    chosen, left_out = {}, 0
    for query, scores in fused.items():
        seen = judged.get(query, ())
        fresh = [(doc, score) for doc, score in scores.items() if doc not in seen]
        left_out += len(scores) - len(fresh)
        chosen[query] = {doc for doc, _ in sorted(fresh, key=lambda item: (-item[1], item[0]))[:size]}
    pool = _finish(chosen, None, "rrf", size, sources)
    pool.left_out = left_out
    return pool
