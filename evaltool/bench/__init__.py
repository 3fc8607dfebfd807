"""Benchmark runner: run a queries file against a search backend, score it, report it.

``evaltool bench QUERIES.json --backend BACKEND`` sends every query of a benchmark file
(``id``, ``query``, the expected ids, optionally ``category`` and ``difficulty``)
to the user's search system, times each call, scores the rankings with evaltool's own
core (:func:`evaltool.evaluate`; no measure is implemented twice) and writes a
timestamped JSON report, the TREC run of what was retrieved and the qrels it was scored
against, so that ``evaltool`` or ``trec_eval`` can score it again.

(The performance harness behind ``make bench`` is the top-level ``benchmarks/`` folder.)

Stages, one module each:

* :mod:`~evaltool.bench.queries`: read and validate the queries file (all problems at once).
* :mod:`~evaltool.bench.backends`: a Python callable, an HTTP endpoint, a TREC run replay.
* :mod:`~evaltool.bench.answers`: an HTTP answer, parsed only as far as the ids a run keeps.
* :mod:`~evaltool.bench.checkpoint`: a JSONL file of finished queries, for ``--resume``.
* :mod:`~evaltool.bench.execute`: bounded concurrency, per-query timeout, retries.
* :mod:`~evaltool.bench.scoring`: qrels and run dicts → ``evaluate()`` → the report's numbers.
* :mod:`~evaltool.bench.session`: one run start to finish (:func:`run_benchmark`); writes the files.
* :mod:`~evaltool.bench.console`: progress line, per-query blocks, the final summary.
* :mod:`~evaltool.bench.examples`: a small BM25 over a corpus shipped with the package.
"""

from __future__ import annotations

import importlib

# the public names and their modules, imported on first use so that `evaltool` starts fast
_EXPORTS = {
    "BenchResult": "session",
    "BenchSettings": "session",
    "Listener": "session",
    "run_benchmark": "session",
    "Interrupted": "execute",
    "QueriesError": "queries",
    "load_queries": "queries",
    "TransientError": "backends",
    "make_backend": "backends",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
