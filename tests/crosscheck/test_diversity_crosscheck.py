"""The diversity measures against ndeval (pyndeval, the TREC Web track's tool as a C
extension) and against ir_measures (which calls pyndeval), per query, to 1e-9, in every
reading mode, on seeded random subtopic qrels.

The data stress: documents judged for several subtopics, grades -1..3 (a negative grade
is never relevant, here or in ndeval), queries without any relevant subtopic, a query with
one retrieved document, queries only in the qrels (skipped, as ndeval skips them) and only
in the run, text query ids. Differences from ndeval handled here, each documented in
:mod:`evaltool.measures.diversity`:

* No score ties in the random runs: pyndeval breaks them by document id ascending,
  evaltool by trec_eval's rule (descending); ``test_ties_follow_trec_eval`` pins that.
* Cutoffs up to 20 only: pyndeval refuses deeper ones (evaltool has no limit).
* At k = 1 ndeval leaves alpha-DCG and ERR-IA undivided by the ideal ideal (A times
  evaltool's); ``test_rank_one`` pins the relation.
* nNRBP of a query without relevant subtopics: ndeval nan, evaltool 0.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaltool import evaluate
from tests.support.helpers import invoke

pyndeval = pytest.importorskip("pyndeval", reason="pyndeval (the ndeval oracle) is not installed")

TOLERANCE = 1e-9
CUTOFFS = (2, 5, 10, 20)
# evaltool spelling (without cutoff) -> ndeval's name; "@" marks the measures with a cutoff
MEASURES = {"alpha_nDCG@": "alpha-nDCG@", "alpha_DCG@": "alpha-DCG@", "ERR_IA@": "ERR-IA@",
            "nERR_IA@": "nERR-IA@", "P_IA@": "P-IA@", "StRecall@": "strec@",
            "NRBP": "NRBP", "nNRBP": "nNRBP", "AP_IA": "MAP-IA"}


def _pairs() -> list[tuple[str, str]]:
    out = []
    for ours, theirs in MEASURES.items():
        if ours.endswith("@"):
            out += [(f"{ours}{k}", f"{theirs}{k}") for k in CUTOFFS]
        else:
            out.append((ours, theirs))
    return out


PAIRS = _pairs()


def collection(seed: int, n_queries: int = 24):
    """(qrels lines (qid, subtopic, doc, grade), {qid: {doc: score}}) with distinct scores per query."""
    rng = np.random.default_rng(seed)
    qids = [str(int(q)) for q in rng.choice(1000, size=n_queries + 2, replace=False)]
    qids[3] = f"topic-{qids[3]}"
    qrels, run = [], {}
    for i, qid in enumerate(qids):
        n_sub = int(rng.integers(1, 7))
        pool = [f"d{int(d)}" for d in rng.choice(10 ** 5, size=int(rng.integers(3, 50)), replace=False)]
        grades = [-1, 0, 1, 2, 3]
        probs = [0.1, 0.4, 0.3, 0.15, 0.05] if i != 0 else [0.3, 0.7, 0, 0, 0]   # query 0: nothing relevant
        if i < n_queries:
            for s in rng.choice(np.arange(1, 10), size=n_sub, replace=False):
                judged = rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False)
                qrels += [(qid, str(s), d, int(g)) for d, g in zip(judged, rng.choice(grades, len(judged), p=probs))]
        if i in (n_queries - 1, n_queries - 2):
            continue   # only in the qrels
        unjudged = [f"u{int(d)}" for d in rng.choice(10 ** 5, size=30, replace=False)]
        candidates = pool + unjudged
        n_ret = 1 if i == 1 else int(rng.integers(2, len(candidates)))
        docs = rng.choice(candidates, size=n_ret, replace=False)
        scores = rng.permutation(10 * n_ret)[:n_ret]
        run[qid] = {d: float(s) for d, s in zip(docs, scores)}
    return qrels, run


def write(folder, qrels, run):
    qpath, rpath = folder / "qrels.div", folder / "run"
    qpath.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in qrels))
    rpath.write_text("".join(f"{q} Q0 {d} 0 {s:g} tag\n" for q, docs in run.items() for d, s in docs.items()))
    return qpath, rpath


def ndeval(qrels, run, names, **options):
    flat = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return pyndeval.RelevanceEvaluator(qrels, names, **options).evaluate(flat)


CONFIGS = {
    "default": ({}, {}),
    "rel2": ({"rel": 2}, {"relevance_level": 2}),
    "alpha0.3_beta0.8": ({"alpha": 0.3, "beta": 0.8}, {"alpha": 0.3, "beta": 0.8}),
}


def spelled(spec: str, params: dict) -> str:
    """``alpha_nDCG@10`` with parameters: ``alpha_nDCG(rel=2)@10``; alpha and beta only where the measure has them."""
    name, at, cutoff = spec.partition("@")
    takes = {"rel"} | ({"alpha"} if name in ("alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP") else set())
    takes |= {"beta"} if name in ("NRBP", "nNRBP") else set()
    given = ",".join(f"{k}={v!r}" for k, v in params.items() if k in takes)
    return name + (f"({given})" if given else "") + at + cutoff


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("seed", [1, 2])
def test_every_diversity_measure_matches_ndeval(tmp_path, seed, config, reading_mode):
    params, oracle_options = CONFIGS[config]
    qrels, run = collection(seed)
    qpath, rpath = write(tmp_path, qrels, run)
    specs = [spelled(ours, params) for ours, _ in PAIRS]
    expected = ndeval(qrels, run, [theirs for _, theirs in PAIRS], **oracle_options)
    result = evaluate(qpath, rpath, specs, per_query=True, stream="--stream" in reading_mode)
    assert sorted(result.qids) == sorted(expected), "the same queries: in both the qrels and the run"
    checked = 0
    for spec, (_, theirs) in zip(specs, PAIRS):
        for qid in result.qids:
            mine, want = result.per_query[qid][spec], expected[qid][theirs]
            if math.isnan(want):
                assert theirs == "nNRBP" and mine == 0.0, (spec, qid, mine)
                continue
            assert math.isclose(mine, want, rel_tol=0, abs_tol=TOLERANCE), (spec, qid, mine, want)
            checked += 1
        assert math.isclose(result.summary[spec], float(np.mean([result.per_query[q][spec] for q in result.qids])),
                            rel_tol=0, abs_tol=1e-12)
    assert checked > len(PAIRS) * 15
    nothing_relevant = [q for q in result.qids if math.isnan(expected[q]["nNRBP"])]
    assert nothing_relevant, "the data have a query without relevant subtopics"


def test_ir_measures_spellings_give_ir_measures_numbers(tmp_path):
    """ir_measures (its pyndeval provider) reading the same files: the spellings mean the same measures."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = collection(5)
    qpath, rpath = write(tmp_path, qrels, run)
    specs = ["alpha_nDCG(alpha=0.5)@20", "alpha_nDCG@10", "ERR_IA@20", "NRBP", "nNRBP", "P_IA@10", "AP_IA",
             "StRecall@10", "alpha_DCG@20", "nERR_IA@20", "NRBP(alpha=0.7,beta=0.9)", "P_IA(rel=2)@5"]
    measures = [ir_measures.parse_measure(s) for s in specs]
    qrels_in, run_in = list(ir_measures.read_trec_qrels(str(qpath))), list(ir_measures.read_trec_run(str(rpath)))
    # one call per measure: ir_measures 0.4 hands its run iterator to the first of several pyndeval
    # invocations (one per rel, alpha, beta), so the others see an empty run and report 0
    theirs = {(str(m.measure), m.query_id): m.value
              for measure in measures for m in ir_measures.iter_calc([measure], qrels_in, run_in)}
    result = evaluate(qpath, rpath, specs, per_query=True)
    for spec, measure in zip(specs, measures):
        for qid in result.qids:
            want = theirs[str(measure), qid]
            mine = result.per_query[qid][spec]
            assert (mine == 0.0 and math.isnan(want)) or math.isclose(mine, want, rel_tol=0, abs_tol=TOLERANCE), (
                spec, qid, mine, want)


def test_canonical_spellings_round_trip():
    """Each spelling parses to ir_measures' repr, and that repr parses to the same request."""
    from evaltool import parse_measures

    ir_measures = pytest.importorskip("ir_measures")
    for spec in ["alpha_nDCG(alpha=0.5)@20", "ERR_IA@20", "NRBP", "nNRBP", "P_IA@10", "AP_IA", "StRecall@10",
                 "alpha_DCG@20", "nERR_IA@20", "alpha_nDCG(alpha=0.3,rel=2)@5", "NRBP(beta=0.9)"]:
        [request] = parse_measures([spec])
        assert request.canonical == repr(ir_measures.parse_measure(spec)), spec
        [again] = parse_measures([request.canonical])
        assert again.values == request.values, spec
    assert parse_measures(["MAP_IA"])[0].canonical == "AP_IA"
    assert parse_measures(["alpha_ndcg_at_10"])[0].canonical == "alpha_nDCG@10"
    assert parse_measures(["strec@5"])[0].canonical == "StRecall@5"


def test_ties_follow_trec_eval(tmp_path):
    """Tied scores: evaltool ranks c, b, a (document id descending); pyndeval a, b, c.

    Subtopic 1: a, b; subtopic 2: c (A = 2, alpha = 0.5). evaltool's gains c 1, b 1, a 0.5:
    alpha-DCG@3 = (1 + 1/log2 3 + 0.5/2) / (2 (1 + 0.5/log2 3 + 0.25/2)).
    pyndeval's a 1, b 0.5, c 1 equal evaltool on the run with the ties broken ascending.
    """
    qrels = [("q", "1", "a", 1), ("q", "1", "b", 1), ("q", "2", "c", 1)]
    tied = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    ascending = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    qpath, rpath = write(tmp_path, qrels, tied)
    mine = evaluate(qpath, rpath, ["alpha_DCG@3"]).summary["alpha_DCG@3"]
    by_hand = (1 + 1 / math.log2(3) + 0.5 / 2) / (2 * (1 + 0.5 / math.log2(3) + 0.25 / 2))
    assert mine == pytest.approx(by_hand, abs=1e-15)
    theirs = ndeval(qrels, tied, ["alpha-DCG@3"])["q"]["alpha-DCG@3"]
    (tmp_path / "asc").mkdir()
    _, apath = write(tmp_path / "asc", qrels, ascending)
    assert evaluate(qpath, apath, ["alpha_DCG@3"]).summary["alpha_DCG@3"] == pytest.approx(theirs, abs=1e-15)
    assert not math.isclose(mine, theirs)


def test_rank_one(tmp_path):
    """At k = 1 ndeval's alpha-DCG and ERR-IA are A times evaltool's (ndeval does not divide at rank 1)."""
    qrels, run = collection(3)
    qpath, rpath = write(tmp_path, qrels, run)
    expected = ndeval(qrels, run, ["alpha-DCG@1", "ERR-IA@1", "alpha-nDCG@1", "nERR-IA@1"])
    result = evaluate(qpath, rpath, ["alpha_DCG@1", "ERR_IA@1", "alpha_nDCG@1", "nERR_IA@1"], per_query=True)
    actual = {}
    for q, s, _, g in qrels:
        if g >= 1:
            actual.setdefault(q, set()).add(s)
    for qid in result.qids:
        a = len(actual.get(qid, ()))
        mine = result.per_query[qid]
        assert mine["alpha_DCG@1"] * a == pytest.approx(expected[qid]["alpha-DCG@1"], abs=TOLERANCE)
        assert mine["ERR_IA@1"] * a == pytest.approx(expected[qid]["ERR-IA@1"], abs=TOLERANCE)
        assert mine["alpha_nDCG@1"] == pytest.approx(expected[qid]["alpha-nDCG@1"], abs=TOLERANCE)
        assert mine["nERR_IA@1"] == pytest.approx(expected[qid]["nERR-IA@1"], abs=TOLERANCE)
        assert 0 <= mine["ERR_IA@1"] <= 1


def test_ordinary_measures_read_a_document_relevant_to_any_subtopic(tmp_path):
    """On subtopic qrels an ordinary measure sees each document once, at its highest grade over the subtopics."""
    qrels = [("q", "1", "a", 0), ("q", "2", "a", 2), ("q", "1", "b", 1), ("q", "2", "c", -1), ("q", "3", "c", 0)]
    run = {"q": {"a": 3.0, "c": 2.0, "b": 1.0}}
    qpath, rpath = write(tmp_path, qrels, run)
    both = evaluate(qpath, rpath, ["P@3", "nDCG@3", "alpha_nDCG@3", "num_rel"]).summary
    plain = evaluate({"q": {"a": 2, "b": 1, "c": 0}}, run, ["P@3", "nDCG@3", "num_rel"]).summary
    assert {k: both[k] for k in plain} == plain
    forced = evaluate(qpath, rpath, ["P@3", "nDCG@3", "num_rel"], qrels_format="subtopics").summary
    assert forced == plain


def test_cli_error_paths(tmp_path):
    """One message naming the file and line, exit 2, for each way subtopic qrels can be wrong."""
    run = tmp_path / "run"
    run.write_text("q Q0 a 0 1 tag\n")
    cases = [
        ("q 1 a 1\nq 2 a\n", "alpha_nDCG@5", "qrels:2: found 'q 2 a'; expected 4 fields 'query_id subtopic doc_id grade'"),
        ("q 1 a 1\nq 2 a x\n", "alpha_nDCG@5", "qrels:2: found 'q 2 a x'; expected an integer grade in field 4, not 'x'"),
        ("# judged\nq 0 a 1\nq 0 b 0\n", "ERR_IA@5",
         ("qrels:2: found 'q 0 a 1'; expected subtopic judgments (4 fields 'query_id subtopic doc_id grade', "
          "ndeval's qrels) for a diversity measure; the subtopic (field 2) is '0' everywhere, so these are "
          "ordinary qrels without subtopics")),
        ("q 1 a 1\nq 2 a 1\nq 1 a 0\n", "AP_IA",
         ("qrels:3: found 'q 1 a 0'; expected each (query, subtopic, document) once; query 'q' subtopic '1' "
          "document 'a' was already given at line 1 (use --on-duplicate first|max to accept duplicates)")),
    ]
    for text, measure, message in cases:
        qrels = tmp_path / "qrels"
        qrels.write_text(text)
        result = invoke(*["-m", measure, str(qrels), str(run)])
        assert result.exit_code == 2, result.output
        assert result.output == f"evaltool: {tmp_path}/{message}\n"
    qrels.write_text("q 1 a 1\nq 2 a 0\n")
    plain = invoke(*["-m", "P@5", str(qrels), str(run)])
    assert plain.exit_code == 2
    assert plain.output == (f"evaltool: {qrels}:2: found 'q 2 a 0'; expected each (query, document) pair once; "
                            "query 'q' document 'a' was already given at line 1 (use --on-duplicate first|max to "
                            "accept duplicates; the second fields differ, as in subtopic qrels 'query_id subtopic "
                            "doc_id grade': read those with --qrels-format subtopics)\n")
    bad = invoke(*["-m", "NRBP(alpha=1.5)", str(qrels), str(run)])
    assert bad.exit_code == 2
    assert bad.output == "evaltool: measure 'NRBP(alpha=1.5)': alpha of NRBP must be at most 1, not 1.5\n"
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"qid": "q", "relevant_ids": ["a", "b"]}\n')
    no_subtopics = invoke(*["-m", "StRecall@5", str(queries), str(run)])
    assert no_subtopics.exit_code == 2
    assert no_subtopics.output == (f"evaltool: {queries}:1: found '{{\"qid\": \"q\", \"relevant_ids\": [\"a\", \"b\"]}}'; "
                                   "expected 4 fields 'query_id subtopic doc_id grade'\n")
    forced = invoke(*["-m", "StRecall@5", "--qrels-format", "jsonl", str(queries), str(run)])
    assert forced.exit_code == 2
    assert forced.output.startswith("evaltool: diversity measures and --qrels-format subtopics read judgments per "
                                    f"subtopic: a qrels file 'query_id subtopic doc_id grade' (ndeval's) or a dict "
                                    f"{{qid: {{subtopic: {{docid: grade}}}}}}, not {queries} read as jsonl")


def test_published_example():
    """The worked example of pyndeval's test suite, ndeval's values to its 4 decimals.

    Subtopic a: A; subtopic b: B and D; subtopic c: C. The run: A, D, E (not judged), B.
    (seanmacavaney/pyndeval, tests/test_pyndeval.py.)
    """
    qrels = {"0": {"a": {"A": 1}, "b": {"B": 1, "D": 1}, "c": {"C": 1}}}
    run = {"0": {"A": 9.3, "D": 8.4, "E": 8.1, "B": 7.6}}
    published = {"ERR_IA@5": 0.3933, "ERR_IA@10": 0.3907, "ERR_IA@20": 0.3907, "nERR_IA@5": 0.8297,
                 "nERR_IA@10": 0.8297, "nERR_IA@20": 0.8297, "alpha_DCG@5": 0.4052, "alpha_DCG@10": 0.3998,
                 "alpha_DCG@20": 0.3997, "alpha_nDCG@5": 0.7868, "alpha_nDCG@10": 0.7868, "alpha_nDCG@20": 0.7868,
                 "NRBP": 0.3906, "nNRBP": 0.8620, "AP_IA": 0.5000, "P_IA@5": 0.2000, "P_IA@10": 0.1000,
                 "P_IA@20": 0.0500, "StRecall@5": 0.6666, "StRecall@10": 0.6666, "StRecall@20": 0.6666}
    ours = evaluate(qrels, run, list(published)).summary
    for name, value in published.items():
        assert abs(ours[name] - value) <= 1e-4, (name, ours[name], value)
