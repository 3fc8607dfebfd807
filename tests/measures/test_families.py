"""Families are imported on demand: the table of which module declares which measure
(:data:`evaltool.measures.sets.FAMILIES`) agrees with the declarations, and a measure of
every family, an ir_measures spelling and a nickname resolve and evaluate in a fresh
interpreter that imports only what they name, with the values of the fully loaded registry.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaltool import evaluate, parse_measures
from evaltool.measures import FAMILIES, MEASURES, NAMED_MEASURES, named_measure, trec_measure

ROOT = Path(__file__).resolve().parents[2]
QRELS = {"q1": {"a": 2, "b": 0, "c": 1, "d": 3, "e": -1}, "q2": {"g": 1, "h": 0, "i": 2}}
SUBTOPIC_QRELS = {"q1": {"1": {"a": 1, "b": 0}, "2": {"c": 1, "d": 1}}, "q2": {"1": {"g": 1}, "2": {"i": 1, "h": 0}}}
RUN = {"q1": {"a": 9.0, "x": 8.5, "b": 8.0, "c": 7.0, "e": 6.0, "d": 4.0}, "q2": {"h": 3.0, "z": 2.0, "g": 1.0}}
# one spelling per family, trec_eval's and ir_measures' (the diversity one on subtopic qrels)
ONE_PER_FAMILY = {
    "ap": "map", "counts": "num_rel_ret", "cwl": "SDCG(max_rel=3)@5", "dcg": "ndcg_cut.5", "diversity": "alpha_nDCG@5",
    "err": "ERR@5", "gain": "RBP", "iprec": "iprec_at_recall.0.5", "ordering": "Compat", "precision": "P.5",
    "rr": "recip_rank", "strings": "runid",
}
SPELLINGS = ["all_trec", "official", "NDCG@10", "ndcg_at_10", "mrr", "P(rel=2)@5", "MAP", "P_5", "iprec_at_recall.0.1"]
CHILD = """
import json, sys
from evaltool import evaluate, parse_measures
qrels, subtopic_qrels, run, one_per_family, spellings = json.loads(sys.argv[1])
families = lambda: sorted(m.rsplit(".", 1)[1] for m in sys.modules
                          if m.startswith("evaltool.measures.") and m.rsplit(".", 1)[1] not in ("base", "sets", "restrict"))
out = {"first": None, "values": {}, "loaded": {}}
for family, spec in one_per_family.items():
    result = evaluate(subtopic_qrels if family == "diversity" else qrels, run, [spec], per_query=True)
    out["values"][family] = [result.summary, {q: result.per_query[q] for q in result.per_query}]
    out["loaded"][family] = families()
    if out["first"] is None:
        out["first"] = families()
out["names"] = {spec: [[r.canonical, r.names] for r in parse_measures([spec])] for spec in spellings}
print(json.dumps(out))
"""


def test_the_family_table_agrees_with_the_declarations():
    declared = {m.name: m.family for m in (*MEASURES.values(), *NAMED_MEASURES.values())}
    table = {name: family for family, names in FAMILIES.items() for name in names}
    assert table == declared
    assert sum(len(names) for names in FAMILIES.values()) == len(table), "a name is listed twice"
    for name, measure in MEASURES.items():
        assert trec_measure(name) is measure
    for name, measure in NAMED_MEASURES.items():
        assert named_measure(name) is measure
    assert trec_measure("nDCG") is None and named_measure("ndcg_cut") is None and trec_measure("nonsense") is None


def test_each_family_loads_alone_and_scores_as_the_whole_registry():
    assert set(ONE_PER_FAMILY) == set(FAMILIES)
    environ = dict(os.environ, PYTHONPATH=str(ROOT))
    given = [QRELS, SUBTOPIC_QRELS, RUN, ONE_PER_FAMILY, SPELLINGS]
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(given)], env=environ, capture_output=True,
                          text=True, check=True)
    child = json.loads(done.stdout)
    assert child["first"] == ["ap", "precision"]  # map: its family, and the cutoffs it shares with P
    for family, spec in ONE_PER_FAMILY.items():
        assert family in child["loaded"][family]
        # the same values as this process, where MEASURES imported every family first
        result = evaluate(SUBTOPIC_QRELS if family == "diversity" else QRELS, RUN, [spec], per_query=True)
        summary, per_query = child["values"][family]
        assert summary == json.loads(json.dumps(result.summary)), spec
        assert per_query == json.loads(json.dumps({q: result.per_query[q] for q in result.per_query})), spec
    assert child["loaded"]["strings"] == sorted(FAMILIES)
    for spec in SPELLINGS:
        assert child["names"][spec] == [[r.canonical, r.names] for r in parse_measures([spec])], spec


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("options", [{}, {"max_ret": 4}, {"judged_only": True}, {"relevance_level": 2}])
def test_sums_on_relevant_rows_alone_equal_the_masked_sums_of_every_row(seed, options):
    """AP's sum of precision at relevant rows, taken on those rows alone, and the relevant count
    above a cutoff no ranking reaches, taken as every relevant retrieved row, are bit for bit what
    the sums over every stored row masked give (ties, unjudged rows, negative grades, a missing
    query and queries without relevant rows among them)."""
    import numpy as np

    from evaltool.io.frames import qrels_from_dict, run_from_dict
    from evaltool.measures.ap import precision_at_relevant, sum_of_precision_at_relevant
    from evaltool.measures.precision import rel_in_top
    from evaltool.ranking import RankOptions, rank

    rng = np.random.default_rng(seed)
    qrels, run = {"absent": {"z": 1}}, {}
    for q in range(12):  # scores on a coarse grid (ties); some judged documents not retrieved
        docs = [f"d{i}" for i in range(int(rng.integers(1, 30)))]
        run[f"q{q}"] = {d: float(rng.integers(0, 4)) for d in docs}
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 3)) for d in docs[::2] + [f"u{q}_{i}" for i in range(5)]}
    batch = rank(qrels_from_dict(qrels), run_from_dict(run), RankOptions(**options, complete=True)).batch
    masked = batch.total(precision_at_relevant(batch), batch.is_rel)
    assert sum_of_precision_at_relevant(batch).tolist() == masked.tolist()
    deepest = int(batch.num_ret.max())
    for k in (deepest, deepest + 1, 1000):
        assert rel_in_top(batch, k).tolist() == batch.count(batch.is_rel & (batch.rank < k)).tolist()
