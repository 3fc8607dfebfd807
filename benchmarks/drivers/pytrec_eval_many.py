"""What a pytrec_eval user writes for many runs in one process: the evaluator built once,
every run parsed and evaluated, means printed per run.

usage: python pytrec_eval_many.py QRELS RUN [RUN ...]   (prints 'measure<TAB>RUN<TAB>value')
"""
import sys

import pytrec_eval

MEASURES = {"map", "ndcg_cut.10", "P.10", "recall.1000", "recip_rank"}
KEYS = ["map", "ndcg_cut_10", "P_10", "recall_1000", "recip_rank"]


def main(qrels_path, run_paths):
    with open(qrels_path) as f:
        evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(f), MEASURES)
    for path in run_paths:
        with open(path) as f:
            per_query = evaluator.evaluate(pytrec_eval.parse_run(f))
        for key in KEYS:
            value = pytrec_eval.compute_aggregated_measure(key, [q[key] for q in per_query.values()])
            print(f"{key}\t{path}\t{value!r}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
