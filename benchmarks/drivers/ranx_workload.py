"""ranx's efficiency workload in one process, on one core: every tool on the same data.

usage: python ranx_workload.py QUERIES REPEAT [ROUTE]   (prints one JSON object)

The data (seeded, built before any timing): QUERIES queries x 100 retrieved documents with
distinct scores in no particular order (so every tool agrees whatever its tie rule), 1-9
judged relevant documents per query with grades 1-3, about half of them retrieved; ids are
text ("q_17", "d_123456"), as in ranx's examples.

Timed, interleaved, REPEAT times each, for MAP, MRR and nDCG (full depth, one measure per call):

* ``ranx``: ``ranx.evaluate(qrels, run, metric)`` warm: its ``Qrels`` / ``Run`` built and its
  numba kernels compiled before the timing (as ranx's published table times it); each call
  turns them into arrays of (hashed document id, score) again;
* ``ranx arrays``: ``ranx.evaluate`` on those arrays themselves, made beforehand by ranx's
  ``ranx.utils.python_dict_to_typed_list`` (the metric kernels alone);
* ``pytrec_eval``: ``RelevanceEvaluator(qrels, {measure}).evaluate(run)``, dicts, the
  evaluator built inside the timing;
* ``evaltool dicts``: ``Evaluator(qrels, [measure]).evaluate(run)``, built inside the timing;
* ``evaltool pandas`` / ``evaltool polars`` / ``evaltool pyarrow``: the same with DataFrames
  or pyarrow Tables (``query_id, doc_id, relevance`` and ``query_id, doc_id, score``; the
  Tables' ids ``string``, as pyarrow builds them from Python text and Parquet reads them)
  made beforehand from the same rows.
* ``evaltool Run``: the same with the judgments as a pyarrow Table and the run as
  ``evaltool.read_run`` returns it from a TREC file, read beforehand (:func:`read_beforehand`):
  reported beside ``ranx arrays``, the other route whose run is made before the timing.

The process is pinned to one CPU and numba to one thread. Times are medians of wall time
(``perf_counter``); values are each route's mean over queries, compared by the harness.
Then, on every CPU the process was given, evaltool's ``jobs``: the dicts and pandas routes
on MAP with ``jobs=1`` and ``jobs=`` the number of CPUs, interleaved (``"jobs"`` in the output).

From LARGE queries on (ranx's published 1,000,000 x 100) ROUTE names the one route this
process times (one of LARGE_ROUTES; the harness runs one process each, so each peak RSS is
the route's own). The data is built CHUNK queries at a time from arrays (:func:`large_chunks`),
document ids drawn from a collection of VOCABULARY ids:

* dicts (``evaltool dicts``, ``pytrec_eval``): one str object per collection id, shared by
  the queries that retrieve it (as a collection's ids repeat across queries), about 7 GB
  of dicts instead of 14; the first call of each measure is timed (no warm-up beyond a
  two-query call that imports everything), REPEAT calls;
* ``ranx arrays``: what ``python_dict_to_typed_list`` makes of those dicts, made from the
  arrays directly (the same hashes and scores, each query sorted by score; 1.7 GB):
  ranx's ``Qrels`` / ``Run`` of 100M rows would not fit in this machine's 23 GB (they hold
  ~3 GB at 100,000 x 100).

The ``evaltool dicts`` process also times reading the run's dicts and doing nothing else
(``floors``, :func:`dict_floors`): the least any tool taking those dicts must spend.

The output also gives the process's peak RSS (``ru_maxrss``), its RSS once the data was built
(``data_rss_kb``; what the route adds is their difference) and the seconds building it took.
"""
import os

os.environ["NUMBA_NUM_THREADS"] = "1"  # before ranx imports numba

import gc  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections import deque  # noqa: E402
from itertools import chain  # noqa: E402

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
LARGE_ROUTES = ("ranx arrays", "evaltool dicts", "pytrec_eval")
LARGE_MEASURES = {"pytrec_eval": ("MAP",)}  # ~30 s a call there: MAP, the measure ranx's table gives
CHUNK = 20_000
VOCABULARY = 10_000_000
JUDGED_MAX = 9  # judged documents per query: 1 to JUDGED_MAX


def collection(size: int = VOCABULARY) -> np.ndarray:
    """The collection's document ids, ``d_0`` to ``d_{size-1}``: one str object each."""
    return np.array([f"d_{n}" for n in range(size)], dtype=object)


def large_chunks(queries: int, seed: int = 42, vocabulary: int = VOCABULARY):
    """The large workload CHUNK queries at a time, as arrays: ``(first, docs, scores, judged,
    grades)`` for the queries ``first, first + 1, ...``; ``docs`` (queries x DEPTH) are indices
    into :func:`collection`, distinct in each query, with ``scores`` distinct in each query and in
    no order; ``judged`` (queries x JUDGED_MAX) are positions among twice DEPTH: below DEPTH a
    retrieved document (that column of ``docs``), from DEPTH on a document not retrieved, and
    -1 past the query's number of judged documents (1 to JUDGED_MAX); ``grades`` are 1-3."""
    rng = np.random.default_rng(seed)
    for first in range(0, queries, CHUNK):
        n = min(CHUNK, queries - first)
        docs = rng.integers(0, vocabulary // DEPTH, size=(n, DEPTH)) * DEPTH + np.arange(DEPTH)
        scores = rng.permuted(np.tile(np.arange(DEPTH, 0, -1) / DEPTH, (n, 1)), axis=1) + rng.random((n, 1))
        count = rng.integers(1, JUDGED_MAX + 1, size=n)
        judged = rng.permuted(np.tile(np.arange(2 * DEPTH), (n, 1)), axis=1)[:, :JUDGED_MAX]
        judged[np.arange(JUDGED_MAX) >= count[:, None]] = -1
        yield first, docs, scores, judged, rng.integers(1, 4, size=(n, JUDGED_MAX))


def _judged_ids(ids: np.ndarray, first: int, docs: np.ndarray, judged: np.ndarray) -> list[list[str]]:
    """Each query's judged document ids: a retrieved one's id, else ``j_{query}_{position}``."""
    out = ids[np.take_along_axis(docs, np.clip(judged, 0, DEPTH - 1), axis=1)]
    outside = np.nonzero(judged >= DEPTH)
    out[outside] = [f"j_{first + i}_{p}" for i, p in zip(outside[0].tolist(), judged[outside].tolist())]
    counts = (judged >= 0).sum(axis=1)
    return list(map(list.__getitem__, out.tolist(), map(slice, counts.tolist())))


def large_dicts(queries: int, seed: int = 42, vocabulary: int = VOCABULARY):
    """``(qrels, run)`` dicts of :func:`large_chunks`, built a chunk at a time in C loops."""
    ids = collection(vocabulary)
    qrels: dict = {}
    run: dict = {}
    for first, docs, scores, judged, grades in large_chunks(queries, seed, vocabulary):
        qids = [f"q_{i}" for i in range(first, first + len(docs))]
        run.update(zip(qids, map(dict, map(zip, ids[docs].tolist(), scores.tolist()))))
        qrels.update(zip(qids, map(dict, map(zip, _judged_ids(ids, first, docs, judged), grades.tolist()))))
    return qrels, run


def large_ranx_arrays(queries: int, seed: int = 42, vocabulary: int = VOCABULARY):
    """``(qrels, run)`` as ``ranx.utils.python_dict_to_typed_list`` makes them from
    :func:`large_dicts`, made from :func:`large_chunks` without the dicts: per query an array of
    ``(hash(document id), value)`` rows sorted by value, descending, equal values in reverse
    order (each id hashed once; every query has DEPTH rows, so the run is one queries x DEPTH
    x 2 array)."""
    from numba.typed import List

    ids = collection(vocabulary)
    hashes = np.fromiter(map(hash, ids), dtype=np.int64, count=len(ids)).astype(np.float64)
    del ids
    run = np.empty((queries, DEPTH, 2))
    qrels: list = []
    for first, docs, scores, judged, grades in large_chunks(queries, seed, vocabulary):
        order = np.argsort(scores, axis=1, kind="stable")[:, ::-1]  # python_dict_to_typed_list's order
        run[first:first + len(docs), :, 0] = np.take_along_axis(hashes[docs], order, axis=1)
        run[first:first + len(docs), :, 1] = np.take_along_axis(scores, order, axis=1)
        key = np.take_along_axis(hashes[docs], np.clip(judged, 0, DEPTH - 1), axis=1)
        outside = np.nonzero(judged >= DEPTH)
        key[outside] = [float(hash(f"j_{first + i}_{p}")) for i, p in zip(outside[0].tolist(),
                                                                           judged[outside].tolist())]
        # each query's judgments by grade, ascending and stable, then reversed (the judged ones first)
        counts = (judged >= 0).sum(axis=1)
        ascending = np.argsort(np.where(judged >= 0, grades, grades.max() + 1), axis=1, kind="stable")
        at = np.arange(JUDGED_MAX)
        order = np.take_along_axis(ascending, np.where(at < counts[:, None], counts[:, None] - 1 - at, at), axis=1)
        pairs = np.stack((np.take_along_axis(key, order, axis=1),
                          np.take_along_axis(grades, order, axis=1).astype(np.float64)), axis=2)
        qrels += map(np.ndarray.__getitem__, pairs, map(slice, counts.tolist()))
    return List(qrels), run


def read_beforehand(run_rows):
    """The run as ``evaltool.read_run`` returns it from a TREC run file, read before the timing:
    the counterpart of ranx's arrays, which are made beforehand too (the file is written to a
    temporary folder and removed once read)."""
    import tempfile

    import evaltool

    qids, docs, scores = run_rows
    ranks = np.tile(np.arange(1, DEPTH + 1), len(qids) // DEPTH).tolist()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "run.txt")
        with open(path, "w") as out:
            out.writelines(map("{} Q0 {} {} {!r} w\n".format, qids.tolist(), docs.tolist(), ranks, scores.tolist()))
        return evaltool.read_run(path)


def rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def as_dicts(rows):
    out: dict = {}
    for q, d, v in zip(*(column.tolist() for column in rows)):
        out.setdefault(q, {})[d] = v
    return out


def _pin() -> set:
    """Pin this process to one CPU; the CPUs it had."""
    try:
        cpus = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(cpus)})
    except (AttributeError, OSError):
        return {0}
    return cpus


def _ranx_task(qrels, run, metric):
    import ranx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's note on a uint64 cast, once per call
        return float(ranx.evaluate(qrels, run, metric))


def _pytrec_task(qrels, run, measure):
    import pytrec_eval

    out = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    key = next(iter(next(iter(out.values()))))
    return statistics.fmean(q[key] for q in out.values())


def _evaltool_task(qrels, run, measure, **options):
    import evaltool

    return evaltool.Evaluator(qrels, [measure], **options).evaluate(run).summary[measure]


JOBS_MEASURE = "MAP"


def _jobs_rows(inputs: dict, repeat: int, cpus: set) -> dict:
    """evaltool's ``jobs`` (threads, default every core) on every CPU the process had:
    ``Evaluator(qrels, [MAP], jobs=J).evaluate(run)`` for J = 1 and J = the number of CPUs,
    on each of ``inputs`` (``{kind: (qrels, run)}``), interleaved."""
    try:
        os.sched_setaffinity(0, cpus)
    except (AttributeError, OSError):
        pass
    name = MEASURES[JOBS_MEASURE][2]
    tasks = {(JOBS_MEASURE, f"evaltool {kind} jobs={jobs}"): (lambda q=q, r=r, j=jobs: _evaltool_task(q, r, name, jobs=j))
             for kind, (q, r) in inputs.items() for jobs in sorted({1, len(cpus)})}
    values, walls = _time(tasks, repeat, warm=True)
    return {"cores": len(cpus), "rows": [{"measure": m, "route": r, "median_s": statistics.median(walls[m, r]),
                                          "calls": len(walls[m, r]), "value": values[m, r]} for m, r in tasks]}


def _time(tasks: dict, repeat: int, warm: bool) -> tuple[dict, dict]:
    """Each task's value and wall times, interleaved: a first call for the value (``warm``: not
    timed, ranx compiles there), then ``repeat`` timed calls (without ``warm`` the first is one)."""
    values, walls = {}, {key: [] for key in tasks}
    for key, task in tasks.items():
        gc.collect()
        start = time.perf_counter()
        values[key] = task()
        if not warm:
            walls[key].append(time.perf_counter() - start)
    for _ in range(repeat - (0 if warm else 1)):
        for key, task in tasks.items():
            gc.collect()
            start = time.perf_counter()
            task()
            walls[key].append(time.perf_counter() - start)
    return values, walls


def _report(queries, tasks, values, walls, qrels_rows, data_rss, route, extra=None) -> None:
    import resource

    rows = [{"measure": m, "route": r, "median_s": statistics.median(walls[m, r]), "calls": len(walls[m, r]),
             "value": values[m, r]} for m, r in tasks]
    out = {"queries": queries, "run_rows": queries * DEPTH, "qrels_rows": qrels_rows, "rows": rows,
           "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "data_rss_kb": data_rss,
           "route": route}
    print(json.dumps(out | (extra or {})))


def main_large(queries: int, repeat: int, route: str) -> None:
    """One route of LARGE_ROUTES at ranx's published size, in this process alone."""
    if route not in LARGE_ROUTES:
        sys.exit(f"from {LARGE:,} queries on, name the one route to time: {', '.join(LARGE_ROUTES)}")
    _pin()
    import ranx  # noqa: F401  (numba's threads set before any data is built)

    clock = time.perf_counter()
    if route == "ranx arrays":
        qrels, run = large_ranx_arrays(queries)
        qrels_rows = sum(map(len, qrels))
    else:
        _time({"imports": lambda: _evaltool_task({"q": {"d": 1}}, {"q": {"d": 1.0}}, "map")
               if route == "evaltool dicts" else _pytrec_task({"q": {"d": 1}}, {"q": {"d": 1.0}}, "map")}, 1, False)
        qrels, run = large_dicts(queries)
        qrels_rows = sum(map(len, qrels.values()))
    built = time.perf_counter() - clock
    data_rss = rss_kb()
    task = {"ranx arrays": _ranx_task, "pytrec_eval": _pytrec_task, "evaltool dicts": _evaltool_task}[route]
    column = {"ranx arrays": 0, "pytrec_eval": 1, "evaltool dicts": 2}[route]
    tasks = {(label, route): (lambda name=names[column]: task(qrels, run, name))
             for label, names in MEASURES.items() if label in LARGE_MEASURES.get(route, MEASURES)}
    values, walls = _time(tasks, repeat, warm=route == "ranx arrays")
    extra = {"build_s": built}
    if route == "evaltool dicts":  # the same dicts as pytrec_eval's: read once
        extra["floors"] = dict_floors(run, max(repeat, 3))
    _report(queries, tasks, values, walls, qrels_rows, data_rss, route, extra)


# what any reader of a run held as dicts has to do, at least: every score read, and every
# (document id, score) pair, by CPython's own C loops (no Python bytecode per entry)
FLOORS = {
    "scores": lambda run: chain.from_iterable(map(dict.values, run.values())),
    "(id, score) pairs": lambda run: chain.from_iterable(map(dict.items, run.values())),
}


def dict_floors(run: dict, repeat: int) -> list[dict]:
    """The time it takes to read each of :data:`FLOORS` from ``run`` (a dict of dicts) and do
    nothing with it: a lower bound for any tool that takes the run as dicts (median of
    ``repeat`` calls, interleaved). A floor above a goal's limit means no reader of those
    dicts in CPython can meet it.

    >>> [f["read"] for f in dict_floors({"q1": {"d1": 1.0, "d2": 0.5}}, 1)]
    ['scores', '(id, score) pairs']
    """
    walls = {name: [] for name in FLOORS}
    for _ in range(repeat):
        for name, read in FLOORS.items():
            gc.collect()
            start = time.perf_counter()
            deque(read(run), maxlen=0)  # consumed in C, nothing kept
            walls[name].append(time.perf_counter() - start)
    return [{"read": name, "median_s": statistics.median(w), "calls": len(w),
             "entries": sum(map(len, run.values()))} for name, w in walls.items()]


def main(queries: int, repeat: int, only: str | None = None) -> None:
    if queries >= LARGE:
        return main_large(queries, repeat, only)
    cpus = _pin()
    import pandas as pd
    import ranx
    from ranx.utils import python_dict_to_typed_list

    qrels_rows, run_rows = make(queries)
    qrels, run = as_dicts(qrels_rows), as_dicts(run_rows)
    frames = {"pandas": (pd.DataFrame(dict(zip(("query_id", "doc_id", "relevance"), qrels_rows))),
                         pd.DataFrame(dict(zip(("query_id", "doc_id", "score"), run_rows))))}
    try:
        import polars as pl

        frames["polars"] = tuple(pl.from_pandas(frame) for frame in frames["pandas"])
    except ImportError:
        pass
    import pyarrow as pa

    frames["pyarrow"] = tuple(pa.table(dict(zip(names, map(pa.array, rows))))
                              for names, rows in ((("query_id", "doc_id", "relevance"), qrels_rows),
                                                  (("query_id", "doc_id", "score"), run_rows)))
    ranx_qrels, ranx_run = ranx.Qrels(qrels), ranx.Run(run)
    ranx_arrays = python_dict_to_typed_list(qrels), python_dict_to_typed_list(run)
    prepared = read_beforehand(run_rows) if only in (None, "evaltool Run") else None
    data_rss = rss_kb()

    tasks = {}
    for label, (ranx_name, pytrec_name, evaltool_name) in MEASURES.items():
        tasks[label, "ranx"] = lambda m=ranx_name: _ranx_task(ranx_qrels, ranx_run, m)
        tasks[label, "ranx arrays"] = lambda m=ranx_name: _ranx_task(*ranx_arrays, m)
        tasks[label, "pytrec_eval"] = lambda m=pytrec_name: _pytrec_task(qrels, run, m)
        tasks[label, "evaltool dicts"] = lambda m=evaltool_name: _evaltool_task(qrels, run, m)
        for kind, (q, r) in frames.items():
            tasks[label, f"evaltool {kind}"] = lambda m=evaltool_name, q=q, r=r: _evaltool_task(q, r, m)
        if prepared is not None:
            tasks[label, "evaltool Run"] = lambda m=evaltool_name: _evaltool_task(frames["pyarrow"][0], prepared, m)
    if only is not None:
        tasks = {key: task for key, task in tasks.items() if key[1] == only}
    values, walls = _time(tasks, repeat, warm=True)  # the warm-up: ranx compiles, and the values
    extra = {"versions": {"ranx": getattr(ranx, "__version__", None), "pandas": pd.__version__}}
    if only is None:
        extra["jobs"] = _jobs_rows({"dicts": (qrels, run), "pandas": frames["pandas"]}, repeat, cpus)
    _report(queries, tasks, values, walls, sum(map(len, qrels.values())), data_rss, only, extra)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None)
