"""In-process timings: what a notebook or a training loop pays per evaluation.

usage: python inprocess.py QRELS RUN REPEAT [DEPTH]   (prints one JSON object)

Both files are read once into pytrec_eval-style dicts (``parse_qrel`` / ``parse_run``), the
run cut to its DEPTH best documents per query when DEPTH is given (a reranker's top 100),
and into pandas DataFrames with the same rows; then, interleaved, REPEAT times each:

* ``pytrec_eval build+evaluate``: ``RelevanceEvaluator(qrels, measures).evaluate(run)``
* ``pytrec_eval evaluate``: ``evaluate(run)`` on an evaluator built once
* ``evaltool.evaluate``: ``evaltool.evaluate(qrels, run, measures, per_query=True)``
* ``evaltool Evaluator.evaluate``: ``ev.evaluate(run, per_query=True)`` on ``Evaluator(qrels, measures)``
* ``evaltool Evaluator.evaluate (DataFrames)``: the same with the qrels and the run as DataFrames

Times are medians of wall time (``perf_counter``). Values: the mean of every measure from
each tool (pytrec_eval's per-query values averaged; evaltool's summary).
"""
import json
import statistics
import sys
import time

import pytrec_eval

import evaltool

PYTREC = {"map", "ndcg_cut.10", "P.10", "recall.1000", "recip_rank"}
MEASURES = ["map", "ndcg_cut.10", "P.10", "recall.1000", "recip_rank"]
KEYS = ["map", "ndcg_cut_10", "P_10", "recall_1000", "recip_rank"]


def main(qrels_path, run_path, repeat, depth=None):
    import pandas as pd

    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    if depth:  # trec_eval's order: score descending, then document id descending
        run = {q: dict(sorted(docs.items(), key=lambda item: (item[1], item[0].encode()), reverse=True)[:depth])
               for q, docs in run.items()}
    qrels_frame = pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                               columns=["query_id", "doc_id", "relevance"])
    run_frame = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                             columns=["query_id", "doc_id", "score"])
    built = pytrec_eval.RelevanceEvaluator(qrels, PYTREC)
    evaluator = evaltool.Evaluator(qrels, MEASURES)
    frame_evaluator = evaltool.Evaluator(qrels_frame, MEASURES)
    tasks = {
        "pytrec_eval build+evaluate": lambda: pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run),
        "pytrec_eval evaluate": lambda: built.evaluate(run),
        "evaltool.evaluate": lambda: evaltool.evaluate(qrels, run, MEASURES, per_query=True),
        "evaltool Evaluator.evaluate": lambda: evaluator.evaluate(run, per_query=True),
        "evaltool Evaluator.evaluate (DataFrames)": lambda: frame_evaluator.evaluate(run_frame, per_query=True),
    }
    outputs = {name: task() for name, task in tasks.items()}  # warm-up, and the values compared
    walls = {name: [] for name in tasks}
    for _ in range(repeat):
        for name, task in tasks.items():
            start = time.perf_counter()
            task()
            walls[name].append(time.perf_counter() - start)
    values = {}
    for name, out in outputs.items():
        if name.startswith("pytrec_eval"):
            values[name] = {k: statistics.fmean(q[k] for q in out.values()) for k in KEYS}
        else:
            values[name] = {k: out.summary[k] for k in KEYS}
    print(json.dumps({"median_s": {n: statistics.median(w) for n, w in walls.items()}, "values": values,
                      "queries": len(run), "run_rows": sum(map(len, run.values())), "depth": depth}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else None)
