"""What a ranx user writes: Qrels/Run.from_file(kind='trec') + evaluate.

ranx breaks score ties its own way (not trec_eval's docid order), so its numbers may
differ from trec_eval's on runs with tied scores; the harness flags that but does not fail.

usage: python ranx_driver.py QRELS RUN   (prints trec_eval names: 'measure<TAB>all<TAB>value')
"""
import sys

from ranx import Qrels, Run, evaluate

MEASURES = {"map": "map", "ndcg_cut_10": "ndcg@10", "P_10": "precision@10",
            "recall_1000": "recall@1000", "recip_rank": "mrr"}


def main(qrels_path, run_path):
    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    scores = evaluate(qrels, run, list(MEASURES.values()))
    if not isinstance(scores, dict):          # a single metric comes back as a float
        scores = {list(MEASURES.values())[0]: scores}
    for key, metric in MEASURES.items():
        print(f"{key}\tall\t{float(scores[metric])!r}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
