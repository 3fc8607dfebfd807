"""Per-query cross-check of every measure against pytrec_eval on seeded random collections.

pytrec_eval (pytrec-eval-terrier) embeds trec_eval 9's measure code, so every value it
reports is an independent expectation. The generator (tests/support/helpers.py) is shared with
``test_trec_eval_oracle.py`` (which compares against the trec_eval 10 binary).

What the generator stresses, per scenario:

* ``ties``: scores rounded to one decimal, so most documents tie and the order
  comes from the document id (descending byte order);
* ``graded``: grades 0..4 plus -1/-2 ("in the pool, unjudged"), continuous scores;
* ``extremes``: 1-document and 1000-document queries, a query without any relevant
  document, queries only in the qrels, queries only in the run;
* ``docids``: ids containing '#', ids that are prefixes of one another, mixed case,
  punctuation and non-ASCII (UTF-8) bytes, integer scores (so ties everywhere);
* ``sparse``: few judgments, many unjudged (negative grade) pool documents, so bpref,
  infAP and -J see a lot of holes.

Known structural differences with pytrec_eval, handled explicitly below:

* trec_eval 10 changed the recall-level rounding of ``iprec_at_recall`` and
  ``11pt_avg`` from ``(long)(x * R + 0.9)`` (trec_eval 9, hence pytrec_eval) to
  ``lround(x * R)``; those names are skipped here and covered by the golden files in
  ``test_conformance.py`` and by ``test_trec_eval_oracle.py``.
* ``rbp``, ``rbp_resid`` and ``unj`` do not exist in trec_eval 9; same coverage.
* ``gm_map`` and ``gm_bpref``: trec_eval prints only the summary; pytrec_eval reports
  the per-query log value that trec_eval accumulates. Compared against evaltool's
  per-query column (which also holds logs) and its summary, exp(mean of logs).
* ``num_q``: pytrec_eval reports 1 per query; evaltool has only the summary (the
  number of evaluated queries).
* ``runid`` and ``relstring``: pytrec_eval cannot return strings and reports 0.0;
  they are compared byte-for-byte against trec_eval in the oracle test.
* pytrec_eval cannot parse ``name=value`` parameters (ndcg.1=3, rbp.p=0.8: its C
  extension aborts) nor several utility coefficients (it splits them into separate
  measures: "improper number of coefficients", every value 0); those are covered by the
  oracle test. It reports ``set_F`` under its bare name even with a parameter.
* pytrec_eval ignores qrels queries absent from the run, like evaltool without ``-c``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest


from evaltool import evaluate
from tests.support.helpers import CASES, generate, write_trec

TOLERANCE = 1e-9

# ---------------------------------------------------------------------------- comparison

# trec_eval 10 changed these (lround cutoffs) or added them after trec_eval 9.
NOT_IN_TREC_EVAL_9 = ("iprec_at_recall", "11pt_avg", "rbp", "rbp_resid", "unj")
# strings that pytrec_eval reports as 0.0 (compared in the oracle test)
STRING_MEASURES = ("runid", "relstring")
# trec_eval prints only a summary for these; handled separately
SUMMARY_ONLY = ("gm_map", "gm_bpref", "num_q")


def default_measures(pytrec_eval) -> list[str]:
    """Every measure pytrec_eval knows that trec_eval 9 and 10 compute alike, as numbers."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (pytrec-eval-terrier) is not installed")
    return sorted(set(pytrec_eval.supported_measures) - set(NOT_IN_TREC_EVAL_9) - set(STRING_MEASURES))

# parameterised measures pytrec_eval can parse; (pytrec spec, evaltool spec, rename)
PARAM_MEASURES = [
    ("P.1,3,7", "P.1,3,7", {}),
    ("recall.1,3,50", "recall.1,3,50", {}),
    ("relative_P.2,3", "relative_P.2,3", {}),
    ("success.2,3,50", "success.2,3,50", {}),
    ("ndcg_cut.1,3,7", "ndcg_cut.1,3,7", {}),
    ("map_cut.2,4,50", "map_cut.2,4,50", {}),
    ("Rprec_mult.0.3,1.7,3.5", "Rprec_mult.0.3,1.7,3.5", {}),
    ("set_F.0.5", "set_F.0.5", {"set_F": "set_F_0.5"}),
]


def _pytrec(qrels, run, measures, relevance_level, judged_only):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (pytrec-eval-terrier) is not installed")
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, set(measures), relevance_level=relevance_level, judged_docs_only_flag=judged_only
    )
    return evaluator.evaluate(run)


def _compare(expected: dict, got: dict, names_map: dict | None = None) -> list[str]:
    """Differences between pytrec_eval's and evaltool's per-query tables."""
    problems = []
    assert set(expected) == set(got), f"query sets differ: {sorted(set(expected) ^ set(got))}"
    for qid, values in expected.items():
        for name, want in values.items():
            if name.startswith(NOT_IN_TREC_EVAL_9) or name in STRING_MEASURES or name in SUMMARY_ONLY:
                continue
            ours = (names_map or {}).get(name, name)
            assert ours in got[qid], f"evaltool has no {ours} for query {qid}"
            have = got[qid][ours]
            if not (abs(have - want) <= TOLERANCE or (math.isnan(want) and math.isnan(have))):
                problems.append(f"{qid} {name}: pytrec_eval {want!r} evaltool {have!r}")
    return problems


CONFIGS = {
    "default": dict(relevance_level=1, judged_only=False),
    "level2": dict(relevance_level=2, judged_only=False),
    "judged_only": dict(relevance_level=1, judged_only=True),
    "level2_judged_only": dict(relevance_level=2, judged_only=True),
}


@pytest.fixture(scope="module")
def collections(tmp_path_factory):
    """Every (scenario, seed) collection, generated and written once."""
    out = {}
    for name, seed in CASES:
        folder = tmp_path_factory.mktemp(f"{name}{seed}")
        qrels, run = generate(name, seed)
        out[name, seed] = (qrels, run, *write_trec(folder, qrels, run))
    return out


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("scenario,seed", CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_every_measure_per_query_matches_pytrec_eval(collections, scenario, seed, config, reading_mode):
    """In every reading mode: line reader, pyarrow reader, and --stream with tiny chunks."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (pytrec-eval-terrier) is not installed")
    qrels, run, qpath, rpath = collections[scenario, seed]
    options = CONFIGS[config]
    expected = _pytrec(qrels, run, default_measures(pytrec_eval) + list(SUMMARY_ONLY), **options)
    result = evaluate(qpath, rpath, default_measures(pytrec_eval) + list(SUMMARY_ONLY), per_query=True,
                      relevance_level=options["relevance_level"], judged_only=options["judged_only"],
                      stream="--stream" in reading_mode)
    problems = _compare(expected, result.per_query)
    assert not problems, f"{len(problems)} differences, first: " + "\n".join(problems[:20])

    # the summary-only measures: pytrec_eval's per-query values against ours
    assert result.summary["num_q"] == len(expected) == len(result.qids)
    for name in ("gm_map", "gm_bpref"):
        column = next(c for c in result.columns if c.name == name)
        logs = np.array([expected[q][name] for q in result.qids])
        np.testing.assert_allclose(np.asarray(column.values), logs, rtol=0, atol=TOLERANCE, err_msg=name)
        assert result.summary[name] == pytest.approx(math.exp(logs.mean()), abs=TOLERANCE)


@pytest.mark.parametrize("config", ["default", "level2_judged_only"])
@pytest.mark.parametrize("scenario,seed", CASES[::3], ids=[f"{n}-{s}" for n, s in CASES[::3]])
def test_parameterised_measures_match_pytrec_eval(collections, scenario, seed, config):
    qrels, run, qpath, rpath = collections[scenario, seed]
    options = CONFIGS[config]
    problems = []
    for theirs, ours, rename in PARAM_MEASURES:
        expected = _pytrec(qrels, run, [theirs], **options)
        result = evaluate(qpath, rpath, [ours], per_query=True,
                          relevance_level=options["relevance_level"], judged_only=options["judged_only"])
        problems += _compare(expected, result.per_query, rename)
    assert not problems, f"{len(problems)} differences, first: " + "\n".join(problems[:20])


def test_generator_covers_what_it_claims():
    """The scenarios really contain the awkward inputs the brief asks for."""
    qrels, run = generate("extremes", 1)
    assert any(len(docs) == 1 for docs in run.values())
    assert any(len(docs) == 1000 for docs in run.values())
    assert set(qrels) - set(run) and set(run) - set(qrels)
    qrels, run = generate("docids", 1)
    docs = {d for q in run.values() for d in q}
    assert any("#" in d for d in docs) and any(not d.isascii() for d in docs)
    assert any(a != b and b.startswith(a) for a in docs for b in docs)
    grades = {g for q in qrels.values() for g in q.values()}
    assert {-2, -1, 0, 4} <= grades
    scores = [s for q in generate("ties", 1)[1].values() for s in q.values()]
    assert len(set(scores)) < len(scores) / 5
    for name, seed in CASES:
        q, _ = generate(name, seed)
        assert all(any(g >= 0 for g in docs.values()) for docs in q.values())


# ---------------------------------------------------------------------------- hand-calculated
# trec_eval 10 behaviours found by test_trec_eval_oracle.py, pinned here by hand so that CI
# (pytrec_eval cannot take these parameters) keeps them without the binary.


def test_fractional_gains_follow_trec_eval_truncating_sort():
    """trec_eval sorts gain levels with ``(int)(a - b)``: gains less than 1 apart tie.

    Gains 1=0.5, 3=2.5 with grades {1, 3, 2, 0}: glibc's merge sort of
    [L1:0.5, L3:2.5, L0:0, L2:2] gives [L1:0.5, L0:0, L3:2.5, L2:2]; the ideal ranking walks
    it from the top: 2, 2.5, then stops at the occupied level 0 (gain 0), so level 1's
    0.5 is never in the ideal ranking.
    """
    qrels = {"q": {"a": 1, "b": 3, "c": 2, "d": 0}}
    run = {"q": {"b": 3.0, "a": 2.0, "c": 1.0}}
    got = evaluate(qrels, run, ["ndcg.1=0.5,3=2.5", "ideal_dcg.1=0.5,3=2.5"]).summary
    ideal = 2 / math.log2(2) + 2.5 / math.log2(3)
    dcg = 2.5 / math.log2(2) + 0.5 / math.log2(3) + 2 / math.log2(4)
    assert got["ideal_dcg_1=0.5,3=2.5"] == pytest.approx(ideal, abs=TOLERANCE)  # trec_eval: 3.5773
    assert got["ndcg_1=0.5,3=2.5"] == pytest.approx(dcg / ideal, abs=TOLERANCE)  # trec_eval: 1.0666


def test_11pt_avg_levels_in_the_order_given():
    """R = 4; relevant at ranks 1, 3, 6: interpolated precision 1 at 1 relevant, 2/3 at 2.

    ``0.2,0.5`` -> (1 + 2/3) / 2. ``0.5,0.2``: trec_eval fills the last level first
    (1 relevant) and never comes back to 2, which gets the final value 1 -> (1 + 1) / 2.
    """
    qrels = {"q": {"r1": 1, "r2": 1, "r3": 1, "r4": 1}}
    run = {"q": {"r1": 6.0, "x1": 5.0, "r2": 4.0, "x2": 3.0, "x3": 2.0, "r3": 1.0}}
    got = evaluate(qrels, run, ["11pt_avg.0.2,0.5"]).summary["11pt_avg_0.2,0.5"]
    assert got == pytest.approx((1 + 2 / 3) / 2, abs=TOLERANCE)  # trec_eval: 0.8333
    got = evaluate(qrels, run, ["11pt_avg.0.5,0.2"]).summary["11pt_avg_0.5,0.2"]
    assert got == pytest.approx(1.0, abs=TOLERANCE)  # trec_eval: 1.0000


def test_missing_query_reset_only_under_the_bare_name():
    """With -c, trec_eval zeroes utility, rbp_resid and relstring of a query without results by
    exact name; with parameters the value on its one-document stand-in ranking stays."""
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 3.0, "z": 2.0}}
    bare = evaluate(qrels, run, ["utility", "rbp_resid", "relstring"], per_query=True, complete=True)
    assert bare.per_query["q2"] == {"utility": 0.0, "rbp_resid": 0.0, "relstring": ""}
    named = evaluate(qrels, run, ["utility.1,-1,0,0", "rbp_resid.p=0.9", "relstring.10"],
                     per_query=True, complete=True)
    # stand-in: one retrieved document outside the pool; R = 1
    assert named.per_query["q2"] == {
        "utility_1,-1,0,0": -1.0,                    # 1*0 - 1*1
        "rbp_resid_p=0.9": pytest.approx(1.0),       # 0.9^1 + 0.1 * 0.9^0
        "relstring_10": "-",
    }


def test_set_F_negative_beta_zero_denominator_is_infinite():
    """P = 1/2, R = 1, beta = -2: (beta + 1) P R / (beta P + R) = -0.5 / 0 (trec_eval: -inf)."""
    got = evaluate({"q": {"a": 1}}, {"q": {"a": 2.0, "x": 1.0}}, ["set_F.-2"]).summary["set_F_-2"]
    assert got == -math.inf


def test_ties_and_query_order_use_bytes_even_for_invalid_utf8(tmp_path):
    """trec_eval compares ids with strcmp (unsigned bytes). Invalid UTF-8 bytes must not be
    ordered as their surrogate-escaped code points (U+DCxx sorts below U+E000 and U+1F600).

    All four documents tie; descending byte order is \\xff, \\xf5x, U+1F600 (\\xf0...),
    U+E000 (\\xee...), with grades 1, 0, 0, 1 -> relstring '1001' (trec_eval: '1001').
    Query ids \\xff and U+1F600: strcmp puts \\xf0... first.
    """
    docs = [(b"\xff", 1), (b"\xf0\x9f\x98\x80", 0), (b"\xf5x", 0), (b"\xee\x80\x80", 1)]
    qrels = b"".join(b"1 0 " + d + b" %d\n" % g for d, g in docs)
    qrels += b"\xff 0 a 1\n\xf0\x9f\x98\x80 0 a 1\n"
    run = b"".join(b"1 Q0 " + d + b" 1 1.5 r\n" for d, _ in docs)
    run += b"\xff Q0 a 1 1 r\n\xf0\x9f\x98\x80 Q0 a 1 1 r\n"
    (tmp_path / "q").write_bytes(qrels)
    (tmp_path / "r").write_bytes(run)
    result = evaluate(tmp_path / "q", tmp_path / "r", ["relstring"], per_query=True)
    assert result.per_query["1"]["relstring"] == "1001"
    assert result.qids == ["1", "\U0001F600", "\udcff"]
