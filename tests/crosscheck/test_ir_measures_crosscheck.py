"""Every ir_measures measure evaltool reads, against ir_measures' own results (``iter_calc`` per
query, ``calc_aggregate`` for the summary) on seeded random collections, to 1e-9.

evaltool computes these with its own kernels; ir_measures dispatches to its providers
(pytrec_eval, gdeval, msmarco, judged, cwl_eval), so each comparison is against an
independent implementation. The data avoid what the providers do not agree on, and the
documented differences are handled here:

* No score ties: ir_measures' providers break ties differently (pytrec_eval and gdeval by
  document id descending, as evaltool; the judged and msmarco providers ascending).
* Numeric query ids and grades <= 4: gdeval (ERR, nDCG(dcg='exp-log2')) refuses anything
  else. evaltool takes any id and any grade (ERR then uses the query's highest grade as
  g_max when it exceeds ``max_grade``).
* gdeval prints 5 decimals, so ERR and nDCG(dcg='exp-log2') are compared to 5e-6.
* Every qrels query is in the run: ir_measures averages a qrels query missing from the run
  as 0; evaltool skips it (trec_eval 9, pytrec_eval) or with ``-c`` scores it as trec_eval 10.
* ``SetF(beta=1)``: ir_measures 0.4 has no ``beta`` parameter (its SetF is beta = 1).
* ``RBP`` without ``rel`` (graded): ir_measures has no provider for it; evaltool follows
  trec_eval 10's ``rbp``, checked against the trec_eval binary below (the ``trec_eval`` fixture).
* cwl_eval (RBP with ``rel``) reads at most 1000 documents per query; rankings here are shorter.
* ``NumQ`` has no per-query value in evaltool (as trec_eval's ``num_q``): summary only.
* ``NumRel``: ir_measures supports only rel=1 (pytrec_eval ignores the level for num_rel).
* ``IPrec``: pytrec_eval embeds trec_eval 9, which turns recall level r into
  (long)(r * R + 0.9) relevant documents; evaltool's ``IPrec`` does the same (trec_eval 10's
  ``iprec_at_recall`` uses lround; ``IPrec@0.3`` below is where the two differ).
"""

from __future__ import annotations

import math
import subprocess

import numpy as np
import pytest

from evaltool import evaluate
from tests.support.helpers import ISSUE_IR_MEASURES


TOLERANCE = 1e-9
GDEVAL_TOLERANCE = 5e-6 + 1e-12  # half a unit of the 5th decimal, plus the binary rounding of it

# ir_measures' spelling where evaltool's differs; the graded RBP has no ir_measures provider (see above)
IR_MEASURES_SPELLING = {"SetF(beta=1)": "SetF"}
NO_PROVIDER = {"RBP(p=0.8)"}

# (evaltool spelling, ir_measures spelling): every ir_measures spelling of the issue, then more settings
CASES = [(spec, IR_MEASURES_SPELLING.get(spec, spec)) for spec, _ in ISSUE_IR_MEASURES if spec not in NO_PROVIDER] + [
    # the same measures with other settings, and their aliases
    ("nDCG", "nDCG"),
    ("ndcg@3", "nDCG@3"),
    ("NDCG(gains={1:0,3:10})", "nDCG(gains={1:0,3:10})"),
    ("P@10", "P@10"),
    ("precision_at_1", "P@1"),
    ("P(judged_only=True)@20", "P(judged_only=True)@20"),
    ("AP(rel=2)@20", "AP(rel=2)@20"),
    ("MAP(judged_only=True)", "AP(judged_only=True)"),
    ("mrr@5", "RR@5"),
    ("RR(rel=3)@20", "RR(rel=3)@20"),
    ("R(rel=2)@50", "R(rel=2)@50"),
    ("recall_at_10", "R@10"),
    ("Rprec(rel=2)", "Rprec(rel=2)"),
    ("Bpref(rel=3)", "Bpref(rel=3)"),
    ("infAP(rel=2)", "infAP(rel=2)"),
    ("Success(rel=3)@10", "Success(rel=3)@10"),
    ("hit_rate@1", "Success@1"),
    ("SetP(relative=True)", "SetP(relative=True)"),
    ("SetP(rel=2)", "SetP(rel=2)"),
    ("SetAP", "SetAP"),
    ("IPrec@0.3", "IPrec@0.3"),
    ("IPrec@1.0", "IPrec@1.0"),
    ("NumRet(rel=3)", "NumRet(rel=3)"),
    ("Judged", "Judged"),
    ("Judged@3", "Judged@3"),
    ("ERR@5", "ERR@5"),
    ("nDCG(dcg='exp-log2')@3", "nDCG(dcg='exp-log2')@3"),
    ("RBP(rel=1)", "RBP(rel=1)"),
    ("RBP(p=0.95,rel=3)", "RBP(p=0.95,rel=3)"),
]
GDEVAL = {"ERR", "nDCG(dcg='exp-log2')"}
SUMMARY_ONLY = {"NumQ"}


def collection(seed: int, n_queries: int = 36):
    """({qid: {doc: grade}}, {qid: {doc: score}}): numeric query ids, grades -1..4, no score ties.

    Every qrels query has results and a grade >= 0; a few run queries have no judgments.
    Special queries: one document retrieved; nothing relevant; everything relevant.
    """
    rng = np.random.default_rng(seed)
    qids = [str(int(q)) for q in rng.choice(100000, size=n_queries + 3, replace=False)]
    qrels, run = {}, {}
    for i, qid in enumerate(qids):
        n_ret = 1 if i == 0 else int(rng.integers(2, 160))
        n_judged = int(rng.integers(1, 70))
        docs = [f"d{int(d)}" for d in rng.choice(10 ** 6, size=n_ret + n_judged, replace=False)]
        retrieved = docs[:n_ret]
        overlap = int(rng.integers(0, min(n_ret, n_judged) + 1))
        judged = docs[n_ret - overlap:n_ret - overlap + n_judged]
        probs = [0.05, 0.4, 0.22, 0.15, 0.1, 0.08]
        if i == 1:
            probs = [0.2, 0.8, 0, 0, 0, 0]          # nothing relevant
        if i == 2:
            probs = [0, 0, 0.25, 0.25, 0.25, 0.25]  # every judgment relevant
        grades = rng.choice([-1, 0, 1, 2, 3, 4], size=len(judged), p=probs)
        if not (grades >= 0).any():
            grades[0] = 0
        if i < n_queries:
            qrels[qid] = {d: int(g) for d, g in zip(judged, grades)}
        # distinct integer scores: no ties, exact in every provider's file format
        scores = rng.permutation(10 * n_ret)[:n_ret]
        run[qid] = {d: float(s) for d, s in zip(retrieved, scores)}
    return qrels, run


def ir_measures_values(qrels, run, spellings):
    """ir_measures' values, one measure per call: given several, its pytrec_eval provider runs
    one evaluator per parameter set, and which settings a later evaluator sees depends on the
    order of a set of measures (Python's hash seed), so nDCG@10 could come back computed with
    another measure's gains (reproduced with PYTHONHASHSEED=2 and 5)."""
    ir_measures = pytest.importorskip("ir_measures")
    per_query, aggregate = {}, {}
    for spelling in spellings:
        measure = ir_measures.parse_measure(spelling)
        for metric in ir_measures.iter_calc([measure], qrels, run):
            per_query[(str(metric.measure), metric.query_id)] = float(metric.value)
        aggregate.update({str(m): float(v) for m, v in ir_measures.calc_aggregate([measure], qrels, run).items()})
    return per_query, aggregate


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_listed_measure_matches_ir_measures(seed):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = collection(seed)
    ours = evaluate(qrels, run, [spec for spec, _ in CASES], per_query=True)
    theirs, aggregate = ir_measures_values(qrels, run, [spec for _, spec in CASES])
    assert len(ours.qids) == len(qrels)
    checked = 0
    for spec, ir_spec in CASES:
        name = "".join(spec.split())
        key = str(ir_measures.parse_measure(ir_spec))
        tolerance = GDEVAL_TOLERANCE if any(key.startswith(g) for g in GDEVAL) else TOLERANCE
        if name not in SUMMARY_ONLY:
            for qid in ours.qids:
                mine, want = ours.per_query[qid][name], theirs[(key, qid)]
                assert math.isclose(mine, want, rel_tol=0, abs_tol=tolerance), (spec, qid, mine, want)
                checked += 1
        assert math.isclose(ours.summary[name], aggregate[key], rel_tol=0, abs_tol=tolerance), (
            spec, ours.summary[name], aggregate[key])
    assert checked > len(CASES) * 30


def test_err_needs_no_numeric_ids_nor_grades_up_to_4():
    """What gdeval refuses, evaltool scores: text query ids; a grade of 6 makes g_max = 6 for its query."""
    qrels = {"topic-a": {"x": 6, "y": 2}, "topic-b": {"z": 4}}
    run = {"topic-a": {"y": 2.0, "x": 1.0}, "topic-b": {"z": 1.0}}
    values = evaluate(qrels, run, ["ERR@10", "ERR(max_grade=6)@10"], per_query=True).per_query
    # topic-a, g_max = 6: R = 3/64 then 63/64; ERR = 3/64 + (61/64) * (63/64) / 2
    assert values["topic-a"]["ERR@10"] == pytest.approx(3 / 64 + (61 / 64) * (63 / 64) / 2, abs=1e-15)
    assert values["topic-a"]["ERR(max_grade=6)@10"] == values["topic-a"]["ERR@10"]
    # topic-b keeps gdeval's g_max = 4 unless told otherwise
    assert values["topic-b"]["ERR@10"] == pytest.approx(15 / 16, abs=1e-15)
    assert values["topic-b"]["ERR(max_grade=6)@10"] == pytest.approx(15 / 64, abs=1e-15)


@pytest.mark.parametrize("spec,trec", [("RBP(p=0.8)", "rbp.p=0.8"), ("RBP(p=0.5,residual=True)", "rbp_resid.p=0.5"),
                                       ("RBP(p=0.9)@10", "rbp.p=0.9")])
def test_graded_rbp_is_trec_eval_10s(trec_eval, tmp_path, spec, trec):
    """Graded RBP (no ``rel``) and its residual are trec_eval 10's, per query, to 1e-4 (its 4 decimals)."""
    qrels, run = collection(7, 12)
    qpath, rpath = tmp_path / "qrels", tmp_path / "run"
    qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    run = {q: docs for q, docs in run.items() if q in qrels}
    rpath.write_text("".join(f"{q} Q0 {d} 0 {s} tag\n" for q, docs in run.items() for d, s in docs.items()))
    args = [trec_eval, "-q", "-m", trec, str(qpath), str(rpath)]
    if "@" in spec:
        args[1:1] = ["-M", spec.rpartition("@")[2]]
    output = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    want = {line.split()[1]: float(line.split()[2]) for line in output.splitlines() if line.split()[1] != "all"}
    ours = evaluate(qrels, run, [spec], per_query=True).per_query
    assert set(want) == set(ours)
    for qid, value in want.items():
        assert abs(ours[qid][spec] - value) <= 0.00005 + 1e-12, (qid, ours[qid][spec], value)
