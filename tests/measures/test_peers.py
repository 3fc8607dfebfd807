"""The measures evaltool adds from its peers, checked per query against the peer that defines them.

* C/W/L user models (BPM, INST, INSQ, SDCG, NERR8-11) against cwl_eval, as ir_measures calls it;
* Compat and Accuracy against ir_measures' own providers.

The collections have tied scores, negative grades (judged "unjudged"), queries with
nothing relevant, queries only in the qrels and queries only in the run. Ties are
evaltool's to break (trec_eval's rule: score descending, then document id descending);
the peers break them otherwise, so each peer gets the same ranking with untied scores
(the position in evaltool's order). Every reading mode of the core is checked (see
``conftest.reading_mode``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaltool import evaluate, parse_measures
from evaltool.errors import MeasureError
from tests.support.helpers import invoke, require_shared, rows

ir_measures = pytest.importorskip("ir_measures")

TOLERANCE = 1e-9
GRADES = [-2, -1, 0, 1, 2, 3, 4]

# (evaltool spelling, ir_measures provider); each is also ir_measures' spelling
CWL = ["BPM(max_rel=4)@10", "BPM(T=2.5,min_rel=1,max_rel=3)@20", "INST(max_rel=4)", "INST(T=3,max_rel=2)",
       "INSQ(max_rel=4)", "INSQ(T=2,min_rel=1,max_rel=4)", "SDCG(max_rel=4)@10", "SDCG(max_rel=2)@5",
       "NERR8(max_rel=4)@10", "NERR9(max_rel=3)@5", "NERR10(max_rel=4)", "NERR10(p=0.7,max_rel=4)",
       "NERR11(max_rel=4)", "NERR11(T=2,min_rel=1,max_rel=4)"]
CASES = [*((spec, "cwl_eval") for spec in CWL),
         *((spec, "compat") for spec in ["Compat", "Compat(p=0.8)", "Compat(normalize=False)",
                                         "Compat(p=0.5,normalize=False)"]),
         *((spec, "accuracy") for spec in ["Accuracy", "Accuracy@10", "Accuracy(rel=2)@20", "Accuracy(rel=3)"])]
SPECS = [spec for spec, _ in CASES]


def collection(seed: int):
    """({qid: {doc: grade}}, {qid: {doc: score}}) with ties, negative grades and one-sided queries."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(24):
        docs = [f"d{i}" for i in rng.choice(300, 80, replace=False)]
        n_judged, n_ret = int(rng.integers(1, 40)), int(rng.integers(1, 60))
        judged = rng.choice(docs, n_judged, replace=False)
        qrels[f"q{q}"] = {d: int(rng.choice(GRADES)) for d in judged}
        retrieved = rng.choice(docs, n_ret, replace=False)
        run[f"q{q}"] = {d: float(rng.integers(0, 8)) for d in retrieved}   # integer scores: ties everywhere
    qrels["q0"] = {d: min(g, 0) for d, g in qrels["q0"].items()}          # nothing relevant
    qrels["q1"] = {d: 3 for d in run["q1"]}                                # everything retrieved is relevant
    qrels["qrels_only"] = {"d1": 2, "d2": 0}
    run["run_only"] = {"d1": 1.0, "d3": 2.0}
    del run["q3"]                                                           # judged, not answered
    return qrels, run


def evaltool_order(docs: dict) -> dict:
    """The same ranking with untied scores: trec_eval's order (score descending, document id descending)."""
    ranked = sorted(docs.items(), key=lambda item: item[0], reverse=True)
    ranked.sort(key=lambda item: -item[1])
    return {doc: float(len(ranked) - i) for i, (doc, _) in enumerate(ranked)}


def oracle(qrels, run, spec: str, provider: str) -> dict:
    """Per-query values of ``spec`` from the peer; nan where it reports none (or fails: Accuracy's 0/0)."""
    measure = ir_measures.parse_measure(spec)
    calc = ir_measures.providers.registry[provider]
    out = {}
    for qid in run:
        if qid not in qrels:
            continue
        try:
            metrics = list(calc.iter_calc([measure], {qid: qrels[qid]}, {qid: evaltool_order(run[qid])}))
        except ZeroDivisionError:
            metrics = []
        out[qid] = metrics[0].value if metrics else math.nan
    return out


@pytest.fixture(scope="module")
def collections(tmp_path_factory):
    out = {}
    for seed in (1, 2):
        qrels, run = collection(seed)
        folder = tmp_path_factory.mktemp(f"peers{seed}")
        qpath, rpath = folder / "qrels", folder / "run"
        qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
        rpath.write_text("".join(f"{q} Q0 {d} 0 {s} run\n" for q, docs in run.items() for d, s in docs.items()))
        expected = {spec: oracle(qrels, run, spec, provider) for spec, provider in CASES}
        out[seed] = (qpath, rpath, expected)
    return out


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOLERANCE


@pytest.mark.parametrize("seed", [1, 2])
def test_every_measure_matches_its_peer_per_query(collections, seed, reading_mode):
    qpath, rpath, expected = collections[seed]
    result = evaluate(qpath, rpath, SPECS, per_query=True, stream="--stream" in reading_mode)
    checked = 0
    for spec in SPECS:
        for qid, want in expected[spec].items():
            have = result.per_query[qid][spec]
            assert same(have, want), (spec, qid, have, want)
            checked += 1
    assert checked == len(SPECS) * 23
    # the collection has what it claims: no value where Accuracy has no pair, on both sides
    assert math.isnan(expected["Accuracy"]["q0"]) and math.isnan(expected["Accuracy"]["q1"])


def test_queries_missing_from_the_run_score_zero_with_c(collections):
    """With -c a qrels query without results is an empty ranking: 0 for every measure, no value for Accuracy."""
    qpath, rpath, _ = collections[1]
    result = evaluate(qpath, rpath, SPECS, per_query=True, complete=True)
    for spec in SPECS:
        for qid in ("qrels_only", "q3"):
            value = result.per_query[qid][spec]
            assert (math.isnan(value) if spec.startswith("Accuracy") else value == 0.0), (spec, qid, value)


@pytest.mark.parametrize("spec", SPECS)
def test_ir_measures_spellings_round_trip(spec):
    [request] = parse_measures([spec])
    assert request.names == [spec]
    [again] = parse_measures([request.canonical])
    assert again.values == request.values
    theirs = ir_measures.parse_measure(spec)
    assert dict(ir_measures.parse_measure(request.canonical).params) == dict(theirs.params)


@pytest.mark.parametrize("spec,message", [
    ("BPM@10", "BPM needs its max_rel"),
    ("INST", "INST needs its max_rel"),
    ("INST(min_rel=2,max_rel=2)", "min_rel (2) must be below max_rel (2)"),
    ("INSQ(T=0,max_rel=3)", "T of INSQ must be above 0, not 0.0"),
    ("NERR10(p=1.5,max_rel=3)", "p of NERR10 must be at most 1, not 1.5"),
    ("SDCG(max_rel=3)", "SDCG needs its cutoff"),
    ("SDCG(dcg='exp-log2',max_rel=3)@5", "dcg of SDCG must be one of 'log2'"),
    ("Compat(p=-0.1)", "p of Compat must be at least 0"),
    ("Compat(normalize=1)", "normalize of Compat must be True or False"),
])
def test_bad_parameters_are_refused(spec, message):
    with pytest.raises(MeasureError, match=None) as caught:
        parse_measures([spec])
    assert message in str(caught.value)


# ---------------------------------------------------------------- scikit-learn's DCG and nDCG

SKLEARN = ["DCG(log_base=10)@5", "DCG(log_base=2.5)", "DCG@3", "nDCG(ideal='ranking')@5", "nDCG(ideal='ranking')"]


@pytest.mark.parametrize("seed", [1, 2])
def test_scikit_learn_dcg_and_ndcg(collections, seed, reading_mode):
    """scikit-learn scores the retrieved documents only; ties are evaltool's to break, so it gets untied scores."""
    metrics = pytest.importorskip("sklearn.metrics")
    qpath, rpath, _ = collections[seed]
    qrels, run = collection(seed)
    result = evaluate(qpath, rpath, SKLEARN, per_query=True, stream="--stream" in reading_mode)
    for qid, docs in run.items():
        if qid not in qrels or len(docs) < 2:   # scikit-learn needs two documents
            continue
        ordered = evaltool_order(docs)
        truth = np.array([[max(qrels[qid].get(d, 0), 0) for d in ordered]])
        scores = np.array([list(ordered.values())])
        expected = {
            SKLEARN[0]: metrics.dcg_score(truth, scores, k=5, log_base=10),
            SKLEARN[1]: metrics.dcg_score(truth, scores, log_base=2.5),
            SKLEARN[2]: metrics.dcg_score(truth, scores, k=3),
            SKLEARN[3]: metrics.ndcg_score(truth, scores, k=5),
            SKLEARN[4]: metrics.ndcg_score(truth, scores),
        }
        for spec, want in expected.items():
            assert same(result.per_query[qid][spec], want), (spec, qid, result.per_query[qid][spec], want)


# ---------------------------------------------------------------- TF-Ranking's ARP and OPA (by their definitions)


def _by_definition(grades: list[int]) -> tuple[float, float]:
    """ARP and OPA of one ranking, pair by pair, as TF-Ranking defines them (grades below 0 count 0)."""
    g = [max(x, 0) for x in grades]
    arp = sum((i + 1) * x for i, x in enumerate(g)) / sum(g) if sum(g) else 0.0
    right = sum(1 for i in range(len(g)) for j in range(i + 1, len(g)) if g[i] > g[j])
    pairs = sum(1 for i in range(len(g)) for j in range(len(g)) if g[i] > g[j])
    return arp, (right / pairs if pairs else math.nan)


def test_arp_and_opa_by_hand():
    """Grades [0, 2, 1, 0]: ARP = (2*2 + 3*1) / 3 = 7/3; pairs with different grades: (2,0) (2,0) (1,0)
    (1,0) (2,1); ranked higher first: (2, 1), (2, last 0), (1, last 0): 3/5."""
    qrels = {"q": {"b": 2, "c": 1, "a": 0}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "x": 1.0}}
    assert evaluate(qrels, run, ["ARP", "OPA"]).summary == {"ARP": 7 / 3, "OPA": 0.6}
    # one grade everywhere: OPA has no value, ARP is 0 (TF-Ranking's divide-no-nan)
    flat = evaluate({"q": {"a": 0}}, {"q": {"a": 1.0, "x": 0.5}}, ["ARP", "OPA"], per_query=True).per_query["q"]
    assert flat["ARP"] == 0.0 and math.isnan(flat["OPA"])


@pytest.mark.parametrize("seed", [1, 2])
def test_arp_and_opa_match_their_definition(collections, seed, reading_mode):
    qpath, rpath, _ = collections[seed]
    qrels, run = collection(seed)
    result = evaluate(qpath, rpath, ["ARP", "OPA"], per_query=True, stream="--stream" in reading_mode)
    for qid, docs in run.items():
        if qid in qrels:
            arp, opa = _by_definition([qrels[qid].get(d, 0) for d in evaltool_order(docs)])
            assert same(result.per_query[qid]["ARP"], arp) and same(result.per_query[qid]["OPA"], opa), qid


# ---------------------------------------------------------------- published numbers

# cwl_eval run by hand on ../shared/realdata's cwl.qrels and cwl.run, as ir_measures'
# tests/test_cwl_eval.py records them (4 decimals): T1, T2, T3
CWL_PUBLISHED = {
    "BPM(T=1.0,max_rel=1)@20": (1.0, 1.0, 0.1667), "BPM(T=2.0,max_rel=1)@10": (0.6667, 1.0, 0.2857),
    "INSQ(T=1.0,max_rel=1)": (0.5872, 0.6629, 0.0880), "INSQ(T=2.0,max_rel=1)": (0.4513, 0.5068, 0.1292),
    "INST(T=1.0,max_rel=1)": (0.7934, 0.9226, 0.0888), "INST(T=2.0,max_rel=1)": (0.5994, 0.6924, 0.1397),
    "SDCG(max_rel=1)@10": (0.5645, 0.6531, 0.2848), "NERR8(max_rel=1)@10": (1.0, 1.0, 0.1667),
    "NERR9(max_rel=1)@10": (1.0, 1.0, 0.0680), "NERR10(p=0.8,max_rel=1)": (1.0, 1.0, 0.0888),
    "NERR11(T=2.0,max_rel=1)": (1.0, 1.0, 0.0691),
}


def test_cwl_measures_give_the_published_numbers(reading_mode):
    qrels, run = require_shared("realdata", "qrels", "cwl.qrels"), require_shared("realdata", "runs", "cwl.run")
    args = [a for spec in CWL_PUBLISHED for a in ("-m", spec)]
    result = invoke(*reading_mode, "-q", *args, qrels, run)
    assert result.exit_code == 0, result.stderr
    got = {(name, qid): float(value) for name, qid, value in rows(result.stdout)}
    for spec, values in CWL_PUBLISHED.items():
        for qid, want in zip(("T1", "T2", "T3"), values):
            assert abs(got[spec, qid] - want) < 0.00005 + 1e-12, (spec, qid, got[spec, qid], want)


# ---------------------------------------------------------------- scikit-learn's tie-averaged DCG and nDCG

TIED = ["nDCG(ideal='ranking',ties='average')@5", "nDCG(ideal='ranking',ties='average')", "DCG(ties='average')@3",
        "DCG(log_base=10.0,ties='average')@10", "DCG(ties='average')",
        "nDCG(dcg='exp-log2',ideal='ranking',ties='average')@10",
        "nDCG(judged_only=True,ideal='ranking',ties='average')@5", "nDCG(ties='average')@10"]
CUTS = {"whole ranking": {}, "-M 9": {"max_ret": 9}, "-J": {"judged_only": True}}


def tie_averaged_by_scikit_learn(qrels, run, max_ret=None, judged_only=False) -> dict:
    """{spec: {qid: value}} for ``TIED`` from scikit-learn, given each query's retrieved documents
    with their own scores, ties included (``ignore_ties=False``, its default).

    The documents given are those ``-M`` keeps (trec_eval's first ``max_ret``) and, under ``-J``
    or ``judged_only``, those with a grade of 0 or more; ``y_true`` is the grade, 0 outside the
    qrels and below 0. A query left with fewer than two documents has no value (scikit-learn
    needs two)."""
    metrics = pytest.importorskip("sklearn.metrics")
    out = {spec: {} for spec in TIED}
    for qid, docs in run.items():
        if qid not in qrels:
            continue
        judged = qrels[qid]
        kept = list(evaltool_order(docs))[:max_ret]
        if judged_only:
            kept = [d for d in kept if judged.get(d, -1) >= 0]
        with_grade = [d for d in kept if judged.get(d, -1) >= 0]

        def vectors(given):
            return (np.array([[max(judged.get(d, 0), 0) for d in given]], dtype=float),
                    np.array([[docs[d] for d in given]]))

        if len(with_grade) >= 2:
            truth, scores = vectors(with_grade)
            out[TIED[6]][qid] = metrics.ndcg_score(truth, scores, k=5)
        if len(kept) < 2:
            continue
        truth, scores = vectors(kept)
        ideal = np.array([sorted((max(g, 0) for g in judged.values()), reverse=True) + [0]], dtype=float)
        ideal_dcg = metrics.dcg_score(ideal, ideal, k=10)
        out[TIED[0]][qid] = metrics.ndcg_score(truth, scores, k=5)
        out[TIED[1]][qid] = metrics.ndcg_score(truth, scores)
        out[TIED[2]][qid] = metrics.dcg_score(truth, scores, k=3)
        out[TIED[3]][qid] = metrics.dcg_score(truth, scores, k=10, log_base=10)
        out[TIED[4]][qid] = metrics.dcg_score(truth, scores)
        out[TIED[5]][qid] = metrics.ndcg_score(2 ** truth - 1, scores, k=10)
        out[TIED[7]][qid] = metrics.dcg_score(truth, scores, k=10) / ideal_dcg if ideal_dcg else 0.0
    return out


def assert_same_per_query(per_query: dict, expected: dict) -> int:
    """Every expected value equals evaltool's for the same query; how many were compared."""
    checked = 0
    for spec, values in expected.items():
        assert values, f"no query to compare for {spec}"
        for qid, want in values.items():
            have = per_query[qid][spec]
            assert same(have, want), (spec, qid, have, want)
            checked += 1
    return checked


def sorted_run_file(run: dict, path) -> str:
    """The run written as systems write it: by query, scores descending (ranking's no-sort path)."""
    lines = [f"{q} Q0 {d} 0 {docs[d]} run\n" for q, docs in run.items() for d in evaltool_order(docs)]
    path.write_text("".join(lines))
    return str(path)


@pytest.mark.parametrize("cut", CUTS, ids=list(CUTS))
@pytest.mark.parametrize("layout", ["as generated", "sorted"])
@pytest.mark.parametrize("seed", [1, 2])
def test_scikit_learn_tie_averaged_dcg_and_ndcg(collections, seed, layout, cut, reading_mode, tmp_path):
    """Tied scores stay tied: scikit-learn gets each query's own scores, evaltool the same file."""
    qpath, rpath, _ = collections[seed]
    qrels, run = collection(seed)
    if layout == "sorted":
        rpath = sorted_run_file(run, tmp_path / "sorted.run")
    expected = tie_averaged_by_scikit_learn(qrels, run, **CUTS[cut])
    result = evaluate(qpath, rpath, TIED, per_query=True, stream="--stream" in reading_mode, **CUTS[cut])
    assert assert_same_per_query(result.per_query, expected) >= 10 * len(TIED)
    # the collection has ties that change the value: trec_eval's order gives other numbers
    untied = evaluate(qpath, rpath, [spec.replace(",ties='average'", "") for spec in TIED[:1]], per_query=True,
                      **CUTS[cut])
    assert any(not same(untied.per_query[q][TIED[0].replace(",ties='average'", "")], v)
               for q, v in expected[TIED[0]].items())


@pytest.mark.parametrize("seed", [1, 2])
def test_scikit_learn_tie_averaged_from_dicts_and_the_command_line(collections, seed, reading_mode):
    """The same numbers from Python dicts, and from ``evaltool -o json`` with ``-M`` in every reading mode."""
    import json

    qpath, rpath, _ = collections[seed]
    qrels, run = collection(seed)
    from_dicts = evaluate(qrels, run, TIED, per_query=True)
    assert assert_same_per_query(from_dicts.per_query, tie_averaged_by_scikit_learn(qrels, run)) >= 7 * 20
    cli = invoke(*reading_mode, "-q", "-o", "json", "-M", "9", *(a for spec in TIED for a in ("-m", spec)),
                 qpath, rpath)
    assert cli.exit_code == 0, cli.stderr
    per_query = json.loads(cli.stdout)["per_query"]
    assert assert_same_per_query(per_query, tie_averaged_by_scikit_learn(qrels, run, max_ret=9)) >= 7 * 20
    # -c: a judged query without results is an empty ranking, 0 however ties are treated
    complete = evaluate(qpath, rpath, TIED, per_query=True, complete=True, stream="--stream" in reading_mode)
    assert all(complete.per_query[qid][spec] == 0.0 for qid in ("q3", "qrels_only") for spec in TIED)


def test_tie_averaging_by_hand_with_each_discount_and_gain():
    """One group {a, b, c} of equal scores at ranks 1-3, grades a 3, b 0, c unjudged: each gains
    3/3 = 1. trec_eval's order is c, b, a (id descending): a alone gains 3, at rank 3."""
    qrels, run = {"q": {"a": 3, "b": 0, "z": 1}}, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    got = evaluate(qrels, run, ["DCG(ties='average')", "DCG", "DCG(discount='jarvelin',ties='average')",
                                "DCG(dcg='exp-log2',ties='average')@2", "nDCG(ties='average')@2"]).summary
    third = 1 / math.log2(3)
    assert got["DCG(ties='average')"] == pytest.approx(1 + third + 1 / 2, abs=1e-12)
    assert got["DCG"] == pytest.approx(3 / 2, abs=1e-12)
    # Järvelin: ranks 1 and 2 undiscounted, rank 3 divides by log2(3)
    assert got["DCG(discount='jarvelin',ties='average')"] == pytest.approx(1 + 1 + third, abs=1e-12)
    # exponential gains average after the mapping: (2^3 - 1) / 3 at ranks 1 and 2 only
    assert got["DCG(dcg='exp-log2',ties='average')@2"] == pytest.approx(7 / 3 * (1 + third), abs=1e-12)
    # the ideal (from the qrels: 3, 1) is untouched by ties: 3 + 1/log2(3)
    assert got["nDCG(ties='average')@2"] == pytest.approx((1 + third) / (3 + third), abs=1e-12)


def test_the_tie_rule_is_a_listed_parameter_and_round_trips():
    listing = invoke("measures")
    assert "nDCG(dcg, gains, judged_only, discount, ideal, ties)[@cutoff]" in listing.stdout
    assert "DCG(dcg, gains, judged_only, discount, log_base, ties)[@cutoff]" in listing.stdout
    page = invoke("measures", "-m", "nDCG").stdout
    assert "ties='trec_eval' (one of 'trec_eval', 'average')" in page and "McSherry & Najork 2008" in page
    for spec in TIED:
        [request] = parse_measures([spec])
        assert request.canonical == spec and request.names == [spec]
        assert parse_measures([request.canonical])[0].values == request.values


def test_scikit_learn_tie_averaged_on_real_data():
    """A dense-retrieval run of TREC DL 2019 with tied scores, every query against scikit-learn."""
    metrics = pytest.importorskip("sklearn.metrics")
    qpath = require_shared("realdata", "qrels", "qrels.dl19-passage.txt")
    rpath = require_shared("realdata", "runs", "REP_LLAMA.trec_results_dl19.txt")
    qrels, run = {}, {}
    for line in open(qpath):
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    for line in open(rpath):
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    specs = ["nDCG(ideal='ranking',ties='average')@10", "DCG(ties='average')@100"]
    result = evaluate(str(qpath), str(rpath), specs, per_query=True)
    tied = 0
    for qid in result.per_query:
        docs = run[qid]
        truth = np.array([[max(qrels[qid].get(d, 0), 0) for d in docs]], dtype=float)
        scores = np.array([list(docs.values())])
        tied += len(set(docs.values())) < len(docs)
        assert same(result.per_query[qid][specs[0]], metrics.ndcg_score(truth, scores, k=10)), qid
        assert abs(result.per_query[qid][specs[1]] - metrics.dcg_score(truth, scores, k=100)) <= 1e-9, qid
    assert len(result.per_query) == 43 and tied > 0
