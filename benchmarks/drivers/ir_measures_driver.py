"""What an ir_measures user writes: read_trec_qrels/read_trec_run + calc_aggregate.

usage: python ir_measures_driver.py QRELS RUN   (prints trec_eval names: 'measure<TAB>all<TAB>value')
"""
import sys

import ir_measures
from ir_measures import AP, P, R, RR, nDCG

MEASURES = {"map": AP, "ndcg_cut_10": nDCG @ 10, "P_10": P @ 10, "recall_1000": R @ 1000, "recip_rank": RR}


def main(qrels_path, run_path):
    qrels = ir_measures.read_trec_qrels(qrels_path)
    run = ir_measures.read_trec_run(run_path)
    agg = ir_measures.calc_aggregate(list(MEASURES.values()), qrels, run)
    for key, measure in MEASURES.items():
        print(f"{key}\tall\t{agg[measure]!r}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
