"""ranx's efficiency workload in one process, on one core: every tool on the same data.

usage: python ranx_workload.py QUERIES REPEAT [ROUTE]   (prints one JSON object)

The data (seeded, built before any timing): QUERIES queries x 100 retrieved documents with
distinct scores in no particular order (so every tool agrees whatever its tie rule), 1-9
judged relevant documents per query with grades 1-3, about half of them retrieved; ids are
text ("q_17", "d_123456"), as in ranx's examples.

Timed, interleaved, REPEAT times each, for MAP, MRR and nDCG (full depth, one measure per call):

* ``ranx``: ``ranx.evaluate(qrels, run, metric)`` warm: its ``Qrels`` / ``Run`` built and its
  numba kernels compiled before the timing (as ranx's published table times it);
* ``pytrec_eval``: ``RelevanceEvaluator(qrels, {measure}).evaluate(run)``, dicts, the
  evaluator built inside the timing;
* ``evaltool dicts``: ``Evaluator(qrels, [measure]).evaluate(run)``, built inside the timing;
* ``evaltool pandas`` / ``evaltool polars`` / ``evaltool pyarrow``: the same with DataFrames
  or pyarrow Tables (``query_id, doc_id, relevance`` and ``query_id, doc_id, score``; the
  Tables' ids ``string``, as pyarrow builds them from Python text and Parquet reads them)
  made beforehand from the same rows.

The process is pinned to one CPU and numba to one thread. Times are medians of wall time
(``perf_counter``); values are each route's mean over queries, compared by the harness.

From LARGE queries on (ranx's published 1,000,000 x 100), 100M rows of dicts do not fit
twice in memory: ROUTE names the one route this process times (``ranx``, ``evaltool dicts``
or ``pytrec_eval``; the harness runs one process each), and the data is built CHUNK queries
at a time with document ids drawn from a collection of VOCABULARY ids, each one str object
shared by the queries that retrieve it (as a collection's ids repeat across queries): about
6 GB of dicts instead of 14. The output also gives the process's peak RSS (``ru_maxrss``)
and its RSS once the data was built (``data_rss_kb``): what the route adds is their difference.
"""
import os

os.environ["NUMBA_NUM_THREADS"] = "1"  # before ranx imports numba

import gc  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

DEPTH = 100
# measure: (ranx, pytrec_eval, evaltool) names
MEASURES = {"MAP": ("map", "map", "map"), "MRR": ("mrr", "recip_rank", "recip_rank"),
            "nDCG": ("ndcg", "ndcg", "ndcg")}


def make(queries: int, seed: int = 42):
    """(qrels rows, run rows) as three columns each: query ids, document ids, values."""
    rng = np.random.default_rng(seed)
    qids = np.array([f"q_{i}" for i in range(queries)], dtype=object)
    # each query's documents: distinct numbers drawn from a wide range, written as text
    docs = rng.integers(0, 10 ** 8, size=(queries, DEPTH)) // DEPTH * DEPTH + np.arange(DEPTH)
    scores = rng.permuted(np.tile(np.arange(DEPTH, 0, -1) / DEPTH, (queries, 1)), axis=1) \
        + rng.random((queries, 1))  # distinct inside a query, in no order
    relevant = rng.integers(1, 10, size=queries)
    owner = np.repeat(np.arange(queries), relevant)
    slot = np.concatenate([rng.choice(2 * DEPTH, k, replace=False) for k in relevant.tolist()])
    retrieved = slot < DEPTH
    judged_docs = np.where(retrieved, docs[owner, np.minimum(slot, DEPTH - 1)], 10 ** 9 + owner * 1000 + slot)
    text = np.vectorize(lambda n: f"d_{n}", otypes=[object])
    run = (np.repeat(qids, DEPTH), text(docs.ravel()), scores.ravel())
    qrels = (qids[owner], text(judged_docs), rng.integers(1, 4, size=len(owner)))
    return qrels, run


LARGE = 1_000_000
CHUNK = 20_000
VOCABULARY = 10_000_000


def make_large_dicts(queries: int, seed: int = 42):
    """(qrels, run) dicts of the workload's shape built CHUNK queries at a time (see the module
    docstring): distinct documents and distinct scores in no order per query, 1-9 relevant
    documents with grades 1-3, about half of them retrieved."""
    rng = np.random.default_rng(seed)
    names = [f"d_{n}" for n in range(VOCABULARY)]
    qrels: dict = {}
    run: dict = {}
    for first in range(0, queries, CHUNK):
        n = min(CHUNK, queries - first)
        docs = rng.integers(0, VOCABULARY // DEPTH, size=(n, DEPTH)) * DEPTH + np.arange(DEPTH)
        scores = rng.permuted(np.tile(np.arange(DEPTH, 0, -1) / DEPTH, (n, 1)), axis=1) + rng.random((n, 1))
        relevant = rng.integers(1, 10, size=n)
        for i, (row, values, k) in enumerate(zip(docs.tolist(), scores.tolist(), relevant.tolist())):
            qid = f"q_{first + i}"
            run[qid] = dict(zip(map(names.__getitem__, row), values))
            slots = rng.choice(2 * DEPTH, k, replace=False).tolist()
            grades = rng.integers(1, 4, size=k).tolist()
            qrels[qid] = {(names[row[slot]] if slot < DEPTH else f"j_{first + i}_{slot}"): grade
                          for slot, grade in zip(slots, grades)}
    return qrels, run


def rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def as_dicts(rows):
    out: dict = {}
    for q, d, v in zip(*(column.tolist() for column in rows)):
        out.setdefault(q, {})[d] = v
    return out


def main(queries: int, repeat: int, only: str | None = None) -> None:
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    except (AttributeError, OSError):
        pass
    import resource

    import pandas as pd
    import pytrec_eval
    import ranx

    import evaltool

    if queries >= LARGE and only is None:
        sys.exit(f"from {LARGE:,} queries on, name the one route to time: ranx, 'evaltool dicts' or pytrec_eval")
    frames = {}
    if queries >= LARGE:
        qrels, run = make_large_dicts(queries)
    else:
        qrels_rows, run_rows = make(queries)
        qrels, run = as_dicts(qrels_rows), as_dicts(run_rows)
    if only is None:
        frames["pandas"] = (pd.DataFrame(dict(zip(("query_id", "doc_id", "relevance"), qrels_rows))),
                            pd.DataFrame(dict(zip(("query_id", "doc_id", "score"), run_rows))))
        try:
            import polars as pl

            frames["polars"] = tuple(pl.from_pandas(frame) for frame in frames["pandas"])
        except ImportError:
            pass
        import pyarrow as pa

        frames["pyarrow"] = tuple(pa.table(dict(zip(names, map(pa.array, rows))))
                                  for names, rows in ((("query_id", "doc_id", "relevance"), qrels_rows),
                                                      (("query_id", "doc_id", "score"), run_rows)))
    if only in (None, "ranx"):
        ranx_qrels, ranx_run = ranx.Qrels(qrels), ranx.Run(run)
    data_rss = rss_kb()

    def ranx_task(metric):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numba's note on a uint64 cast, once per call
            return float(ranx.evaluate(ranx_qrels, ranx_run, metric))

    def pytrec_task(measure):
        out = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
        key = next(iter(next(iter(out.values()))))
        return statistics.fmean(q[key] for q in out.values())

    def evaltool_task(measure, q, r):
        return evaltool.Evaluator(q, [measure]).evaluate(r).summary[measure]

    tasks = {}
    for label, (ranx_name, pytrec_name, evaltool_name) in MEASURES.items():
        tasks[label, "ranx"] = lambda m=ranx_name: ranx_task(m)
        tasks[label, "pytrec_eval"] = lambda m=pytrec_name: pytrec_task(m)
        tasks[label, "evaltool dicts"] = lambda m=evaltool_name: evaltool_task(m, qrels, run)
        for kind, (q, r) in frames.items():
            tasks[label, f"evaltool {kind}"] = lambda m=evaltool_name, q=q, r=r: evaltool_task(m, q, r)
    if only is not None:
        tasks = {key: task for key, task in tasks.items() if key[1] == only}
    values = {key: task() for key, task in tasks.items()}  # warm-up (ranx compiles), and the values
    walls: dict = {key: [] for key in tasks}
    for _ in range(repeat):
        for key, task in tasks.items():
            gc.collect()
            start = time.perf_counter()
            task()
            walls[key].append(time.perf_counter() - start)
    rows = [{"measure": m, "route": route, "median_s": statistics.median(walls[m, route]), "value": values[m, route]}
            for m, route in tasks]
    print(json.dumps({"queries": queries, "run_rows": queries * DEPTH, "qrels_rows": sum(map(len, qrels.values())),
                      "rows": rows, "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                      "data_rss_kb": data_rss, "route": only,
                      "versions": {"ranx": ranx.__version__ if hasattr(ranx, "__version__") else None,
                                   "pandas": pd.__version__}}))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None)
