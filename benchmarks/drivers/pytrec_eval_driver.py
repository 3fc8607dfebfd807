"""What a pytrec_eval user writes: parse both files, evaluate, average per measure.

usage: python pytrec_eval_driver.py QRELS RUN   (prints 'measure<TAB>all<TAB>value')
"""
import sys

import pytrec_eval

MEASURES = {"map", "ndcg_cut.10", "P.10", "recall.1000", "recip_rank"}
KEYS = ["map", "ndcg_cut_10", "P_10", "recall_1000", "recip_rank"]


def main(qrels_path, run_path):
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, MEASURES)
    per_query = evaluator.evaluate(run)
    for key in KEYS:
        value = pytrec_eval.compute_aggregated_measure(key, [q[key] for q in per_query.values()])
        print(f"{key}\tall\t{value!r}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
