"""The Python API: the same data as files, dicts or DataFrames gives the same result, and
the result's summary, per-query values, JSON and DataFrame views; the CLI's JSON output.

Hand calculation for the data below (trec_eval rules: score descending, ties by docid
descending in byte order; relevant = grade >= 1):

q1 ranking: d3 (0.9, grade 1), d9 (0.8, unjudged), d1 (0.8, grade 2), d2 (0.1, grade 0)
    -- d9 and d1 tie and 'd9' > 'd1'. relstring '1-20'; num_ret 4, num_rel 2 (d1, d3;
    d4 has grade -1), num_rel_ret 2; P_5 = 2/5; recip_rank = 1; AP = (1/1 + 2/3) / 2 = 5/6.
q2 ranking: d8 (5, unjudged), d6 (4, grade 1), d5 (3, grade 1). relstring '-11';
    num_ret 3, num_rel 2, num_rel_ret 2; P_5 = 2/5; recip_rank = 1/2; AP = (1/2 + 2/3) / 2 = 7/12.
q3 has a judgment but no results.
Without -c (q3 skipped): map = (5/6 + 7/12) / 2 = 17/24; recip_rank 3/4; P_5 2/5; num_q 2.
With -c (q3 scores 0): map = 17/36; recip_rank 1/2; P_5 = 0.8 / 3; num_q 3; num_rel 5.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaltool import evaluate, read_qrels, read_run
from tests.support.helpers import invoke


QRELS_ROWS = [("q1", "d1", 2), ("q1", "d2", 0), ("q1", "d3", 1), ("q1", "d4", -1),
              ("q2", "d5", 1), ("q2", "d6", 1), ("q3", "d7", 1)]
RUN_ROWS = [("q1", "d3", 0.9), ("q1", "d1", 0.8), ("q1", "d9", 0.8), ("q1", "d2", 0.1),
            ("q2", "d5", 3.0), ("q2", "d8", 5.0), ("q2", "d6", 4.0)]
MEASURES = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "recip_rank", "P.5", "relstring"]

SUMMARY = {"runid": "run", "num_q": 2, "num_ret": 7, "num_rel": 4, "num_rel_ret": 4,
           "map": pytest.approx(17 / 24), "recip_rank": 0.75, "P_5": pytest.approx(0.4)}
PER_QUERY = {
    "q1": {"num_ret": 4, "num_rel": 2, "num_rel_ret": 2, "map": pytest.approx(5 / 6),
           "recip_rank": 1.0, "P_5": pytest.approx(0.4), "relstring": "1-20"},
    "q2": {"num_ret": 3, "num_rel": 2, "num_rel_ret": 2, "map": pytest.approx(7 / 12),
           "recip_rank": 0.5, "P_5": pytest.approx(0.4), "relstring": "-11"},
}
INTEGER_MEASURES = ("num_q", "num_ret", "num_rel", "num_rel_ret")


def nested(rows):
    out: dict = {}
    for qid, doc, value in rows:
        out.setdefault(qid, {})[doc] = value
    return out


@pytest.fixture
def paths(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS_ROWS))
    run = tmp_path / "run.txt"
    # the rank column is deliberately wrong; the tag is 'run', the dict/DataFrame default
    run.write_text("".join(f"{q} Q0 {d} {i} {s} run\n" for i, (q, d, s) in enumerate(RUN_ROWS)))
    return str(qrels), str(run)


def sources(paths):
    pd = pytest.importorskip("pandas")
    qrels_path, run_path = paths
    frames = (pd.DataFrame(QRELS_ROWS, columns=["query_id", "doc_id", "relevance"]),
              pd.DataFrame(RUN_ROWS, columns=["query_id", "doc_id", "score"]))
    return {
        "paths": (qrels_path, run_path),
        "pathlib": (Path(qrels_path), Path(run_path)),
        "dicts": (nested(QRELS_ROWS), nested(RUN_ROWS)),
        "frames": frames,
        "path+dict": (qrels_path, nested(RUN_ROWS)),
        "frame+path": (frames[0], run_path),
        "readers": (read_qrels(qrels_path), read_run(run_path)),
    }


def test_hand_computed_values(paths):
    result = evaluate(*paths, MEASURES, per_query=True)
    assert result.summary == SUMMARY
    assert result.per_query == PER_QUERY
    assert result.qids == ["q1", "q2"]


@pytest.mark.parametrize("kind", ["paths", "pathlib", "dicts", "frames", "path+dict", "frame+path", "readers"])
def test_every_input_form_gives_the_same_result(paths, kind):
    qrels, run = sources(paths)[kind]
    reference = evaluate(*paths, "all_trec", per_query=True)
    result = evaluate(qrels, run, "all_trec", per_query=True)
    assert result.measures == reference.measures
    assert result.summary == reference.summary  # exactly, not approximately
    assert result.per_query == reference.per_query
    assert evaluate(qrels, run, MEASURES).summary == SUMMARY


def test_frame_column_aliases_and_numeric_ids():
    # 'grade' and 'rel' are accepted for the relevance column; ids are compared as text
    pd = pytest.importorskip("pandas")
    expected = evaluate({"1": {"10": 1, "9": 0}}, {"1": {"10": 1.0, "9": 1.0}}, ["recip_rank", "relstring"],
                        per_query=True)
    # tie: '9' > '10' in byte order, so 9 (grade 0) comes first -> recip_rank 1/2, relstring '01'
    assert expected.per_query == {"1": {"recip_rank": 0.5, "relstring": "01"}}
    for column in ("relevance", "grade", "rel"):
        qrels = pd.DataFrame({"query_id": [1, 1], "doc_id": [10, 9], column: [1, 0]})
        run = pd.DataFrame({"query_id": [1, 1], "doc_id": [10, 9], "score": [1.0, 1.0]})
        result = evaluate(qrels, run, ["recip_rank", "relstring"], per_query=True)
        assert result.per_query == expected.per_query
    assert evaluate({1: {10: 1, 9: 0}}, {1: {10: 1.0, 9: 1.0}}, ["recip_rank"]).summary == {"recip_rank": 0.5}


def test_runid_of_dicts_and_frames(paths):
    qrels, run = nested(QRELS_ROWS), nested(RUN_ROWS)
    assert evaluate(qrels, run, "runid").summary == {"runid": "run"}
    assert evaluate(qrels, run, "runid", runid="bm25").summary == {"runid": "bm25"}
    assert evaluate(qrels, paths[1], "runid", runid="bm25").meta["runid"] == "bm25"


def test_integer_measures_are_ints(paths):
    result = evaluate(*paths, MEASURES, per_query=True)
    for name in INTEGER_MEASURES:
        assert type(result.summary[name]) is int, name
    for values in result.per_query.values():
        for name in ("num_ret", "num_rel", "num_rel_ret"):
            assert type(values[name]) is int, name
    for name in ("map", "recip_rank", "P_5"):
        assert type(result.summary[name]) is float
    text = result.to_json()
    assert '"num_ret": 7,' in text and '"num_q": 2,' in text
    parsed = json.loads(text)
    assert all(type(parsed["summary"][name]) is int for name in INTEGER_MEASURES)
    assert type(parsed["per_query"]["q1"]["num_ret"]) is int


# ---------------------------------------------------------------- views of the result


def test_to_json_layout(paths):
    qrels, run = paths
    result = evaluate(qrels, run, MEASURES, per_query=True)
    parsed = json.loads(result.to_json())
    assert list(parsed) == ["measures", "summary", "per_query", "meta"]
    assert parsed["measures"] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map",
                                  "recip_rank", "P_5", "relstring"]
    assert parsed["summary"] == SUMMARY
    assert parsed["per_query"] == PER_QUERY
    meta = parsed["meta"]
    assert {"qrels", "run", "runid", "options", "counts", "skipped_queries"} <= set(meta)
    assert (meta["qrels"], meta["run"], meta["runid"]) == (qrels, run, "run")
    assert meta["skipped_queries"] == ["q3"]
    assert meta["options"] == {"relevance_level": 1, "complete": False, "max_ret": None, "judged_only": False,
                               "num_docs_in_coll": 0, "zscores": None, "on_duplicate": "error"}
    assert meta["counts"] == {"queries_evaluated": 2, "queries_missing_from_run": 1, "queries_skipped": 1,
                              "qrels_rows": 7, "run_rows": 7, "qrels_duplicates_resolved": 0,
                              "run_duplicates_resolved": 0}


def test_per_query_in_json_only_when_requested(paths):
    assert "per_query" not in json.loads(evaluate(*paths, MEASURES).to_json())
    assert list(json.loads(evaluate(*paths, MEASURES).to_json(per_query=True))["per_query"]) == ["q1", "q2"]
    assert "per_query" not in json.loads(evaluate(*paths, MEASURES, per_query=True).to_json(per_query=False))
    # the per_query property is there either way
    assert evaluate(*paths, MEASURES).per_query == PER_QUERY


def test_meta_of_dict_inputs():
    result = evaluate(nested(QRELS_ROWS), nested(RUN_ROWS), "P.5", complete=True, relevance_level=2)
    meta = json.loads(result.to_json())["meta"]
    assert (meta["qrels"], meta["run"]) == ("<qrels dict>", "<run dict>")
    assert meta["options"]["complete"] is True and meta["options"]["relevance_level"] == 2
    assert meta["skipped_queries"] == []
    assert meta["counts"]["queries_evaluated"] == 3 and meta["counts"]["queries_missing_from_run"] == 1


def test_to_frame_is_long(paths):
    result = evaluate(*paths, MEASURES, per_query=True)
    frame = result.to_frame()
    assert list(frame.columns) == ["query_id", "measure", "value"]
    per_query_names = ["num_ret", "num_rel", "num_rel_ret", "map", "recip_rank", "P_5", "relstring"]
    assert len(frame) == 2 * len(per_query_names)
    assert frame["query_id"].tolist() == ["q1"] * 7 + ["q2"] * 7
    assert frame["measure"].tolist() == per_query_names * 2
    lookup = {(q, m): v for q, m, v in frame.itertuples(index=False)}
    for qid, values in PER_QUERY.items():
        for name, value in values.items():
            assert lookup[(qid, name)] == value


# ---------------------------------------------------------------- queries without results


def test_missing_query_is_skipped_without_complete(paths):
    result = evaluate(*paths, MEASURES)
    assert result.summary == SUMMARY
    assert result.meta["skipped_queries"] == ["q3"]


def test_missing_query_scores_zero_with_complete(paths):
    result = evaluate(*paths, MEASURES, per_query=True, complete=True)
    assert result.qids == ["q1", "q2", "q3"]
    assert result.summary == {"runid": "run", "num_q": 3, "num_ret": 7, "num_rel": 5, "num_rel_ret": 4,
                              "map": pytest.approx(17 / 36), "recip_rank": 0.5, "P_5": pytest.approx(0.8 / 3)}
    assert result.per_query["q3"] == {"num_ret": 0, "num_rel": 1, "num_rel_ret": 0, "map": 0.0,
                                      "recip_rank": 0.0, "P_5": 0.0, "relstring": ""}
    assert result.meta["skipped_queries"] == []


def test_cli_warns_once_about_skipped_queries(paths):
    qrels, run = paths
    result = invoke(qrels, run, "-m", "P.5", "-m", "num_q", "-m", "recip_rank")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ("num_q                 \tall\t2\n"
                             "recip_rank            \tall\t0.7500\n"
                             "P_5                   \tall\t0.4000\n")
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("evaltool: warning: 1 of the 3 qrels queries have no results")
    assert f"in {run}" in result.stderr and "(q3)" in result.stderr and "-c" in result.stderr


def test_cli_complete_scores_missing_queries_as_zero(paths):
    result = invoke(*paths, "-c", "-q", "-m", "P.5", "-m", "num_q", "-m", "recip_rank")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    # P_5: 0.4, 0.4, 0 -> 0.2667; recip_rank: 1, 0.5, 0 -> 0.5
    assert result.stdout == ("recip_rank            \tq1\t1.0000\n"
                             "P_5                   \tq1\t0.4000\n"
                             "recip_rank            \tq2\t0.5000\n"
                             "P_5                   \tq2\t0.4000\n"
                             "recip_rank            \tq3\t0.0000\n"
                             "P_5                   \tq3\t0.0000\n"
                             "num_q                 \tall\t3\n"
                             "recip_rank            \tall\t0.5000\n"
                             "P_5                   \tall\t0.2667\n")


def test_cli_warning_lists_at_most_five_queries(tmp_path):
    qrels = tmp_path / "q"
    qrels.write_text("".join(f"q{i} 0 d 1\n" for i in range(1, 9)))
    run = tmp_path / "r"
    run.write_text("q1 Q0 d 1 1 r\n")
    result = invoke(qrels, run, "-m", "num_q")
    assert result.exit_code == 0
    assert result.stdout == "num_q                 \tall\t1\n"
    assert result.stderr.count("\n") == 1
    assert "7 of the 8 qrels queries" in result.stderr and "(q2, q3, q4, q5, q6, ...)" in result.stderr


# ---------------------------------------------------------------- CLI JSON


@pytest.mark.parametrize("option", [["-o", "json"], ["--format", "json"], ["--format=json"]])
def test_cli_json_has_the_api_layout(paths, option):
    qrels, run = paths
    args = [qrels, run, *[x for m in MEASURES for x in ("-m", m)], *option]
    summary_only = invoke(*args)
    assert summary_only.exit_code == 0, summary_only.stderr
    parsed = json.loads(summary_only.stdout)  # the skip warning goes to stderr, stdout stays JSON
    assert list(parsed) == ["measures", "summary", "meta"]
    assert parsed == json.loads(evaluate(qrels, run, MEASURES).to_json())
    assert parsed["summary"] == SUMMARY

    with_queries = invoke(*args, "-q")
    assert with_queries.exit_code == 0, with_queries.stderr
    parsed = json.loads(with_queries.stdout)
    assert list(parsed) == ["measures", "summary", "per_query", "meta"]
    assert parsed["per_query"] == PER_QUERY
    assert parsed == json.loads(evaluate(qrels, run, MEASURES, per_query=True).to_json())
    assert type(parsed["summary"]["num_ret"]) is int


def test_cli_json_reports_duplicates_and_options(tmp_path):
    qrels = tmp_path / "q"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "r"
    run.write_text("q1 Q0 d1 1 1.0 r\nq1 Q0 d1 2 2.0 r\n")
    result = invoke(qrels, run, "-o", "json", "-m", "num_ret", "--on-duplicate", "max", "-l", "1")
    assert result.exit_code == 0, result.stderr
    meta = json.loads(result.stdout)["meta"]
    assert meta["options"]["on_duplicate"] == "max"
    assert meta["counts"]["run_duplicates_resolved"] == 1 and meta["counts"]["run_rows"] == 1
    assert json.loads(result.stdout)["summary"] == {"num_ret": 1}


# ---------------------------------------------------------------- Evaluator and the one-pass dict conversion

EVALUATOR_MEASURES = ["map", "ndcg_cut.10", "P.5", "recall.100", "recip_rank", "bpref", "relstring.20"]


@pytest.mark.parametrize("options", [{}, {"complete": True}, {"relevance_level": 2, "max_ret": 7},
                                     {"judged_only": True}])
def test_evaluator_scores_run_after_run_like_evaluate(options):
    """Prepared once, several runs: every value equals a fresh evaluate() of the same inputs."""
    from evaltool import Evaluator
    from tests.support.helpers import generate

    import numpy as np

    qrels, base = generate("graded", 1)
    evaluator = Evaluator(qrels, EVALUATOR_MEASURES, **options)
    rng = np.random.default_rng(7)
    for _ in range(3):  # the same documents, scores shuffled within each query
        run = {q: dict(zip(docs, rng.permutation(list(docs.values())).tolist())) for q, docs in base.items()}
        fresh = evaluate(qrels, run, EVALUATOR_MEASURES, per_query=True, **options)
        prepared = evaluator.evaluate(run, per_query=True)
        assert prepared.per_query == fresh.per_query
        assert prepared.summary == fresh.summary
        assert prepared.meta == fresh.meta


MEMO_MEASURES = ["map", "AP(rel=2)", "ndcg_cut.5,10", "P(rel=2)@5", "nDCG(gains={1:3})@10", "nDCG(ideal='ranking')@10",
                 "nDCG(ties='average')@10", "nDCG@10", "recip_rank", "bpref", "recall.100", "relstring.10"]


def _in_tie_rule_order(docs: dict) -> dict:
    from evaltool.ranking import byte_key

    return dict(sorted(docs.items(), key=lambda item: (item[1], byte_key(item[0])), reverse=True))


def _reranked_runs(seed: int):
    """Judgments outnumbering each query's retrieved documents (so the retrieved are looked up
    among them), ids with accents and an undecodable byte, scores on a coarse grid (ties), and
    the runs an Evaluator meets in turn: candidates in the tie rule's order; the same candidates
    rescored and sorted again; rescored in place, their order kept (the same ids as the run
    before, in the same order); the same ids split otherwise between the queries; a query left
    out; the first run again."""
    import numpy as np

    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(12):
        qid = f"q{q}"
        docs = [f"d{int(rng.integers(0, 50))}é_{i}" for i in range(int(rng.integers(3, 30)))] + ["d\udcff"] * (q == 4)
        qrels[qid] = {d: int(rng.integers(-1, 3)) for d in docs + [f"u{q}_{i}" for i in range(40)]}
        run[qid] = _in_tie_rule_order({d: float(rng.integers(0, 5)) for d in docs})
    rescored = {q: _in_tie_rule_order({d: float(rng.integers(0, 5)) for d in docs}) for q, docs in run.items()}
    in_place = {q: dict(zip(docs, sorted(rng.integers(0, 5, len(docs)).tolist(), reverse=True)))
                for q, docs in rescored.items()}
    moved = dict(in_place)
    (first, score), *rest = moved["q1"].items()
    moved["q0"], moved["q1"] = {**moved["q0"], first: score}, dict(rest)
    fewer = {q: docs for q, docs in in_place.items() if q != "q3"}
    return qrels, [run, rescored, in_place, moved, fewer, run]


@pytest.mark.parametrize("options", [{}, {"complete": True}, {"relevance_level": 2}, {"judged_only": True}])
@pytest.mark.parametrize("seed", [1, 2])
def test_an_evaluator_keeps_only_what_the_next_run_cannot_change(options, seed):
    """An Evaluator keeps, from run to run, what the judgments alone give (numbers of relevant
    documents at each level, ideal DCG for each gain and cutoff) and which rows of the last dict
    run are judged: every run of the sequence scores exactly as fresh evaluate() calls of it,
    one per measure (which share nothing)."""
    from evaltool import Evaluator

    qrels, runs = _reranked_runs(seed)
    evaluator = Evaluator(qrels, MEMO_MEASURES, **options)
    for run in runs:
        alone = [evaluate(qrels, run, [name], per_query=True, **options) for name in MEMO_MEASURES]
        prepared = evaluator.evaluate(run, per_query=True)
        assert prepared.summary == {k: v for result in alone for k, v in result.summary.items()}
        assert prepared.per_query == {
            qid: {k: v for result in alone for k, v in result.per_query[qid].items()} for qid in prepared.per_query
        }


@pytest.mark.parametrize("options", [{}, {"complete": True}, {"max_ret": 5}, {"judged_only": True}])
def test_an_evaluator_scores_files_and_frames_after_one_another_as_fresh_calls(tmp_path, options):
    """What ranking derives from the run's queries alone is kept for the next run with the same
    queries and as many rows each: files, a file lacking queries, a DataFrame and the first file
    again each score exactly as a fresh evaluate() of them."""
    import pandas as pd

    from evaltool import Evaluator
    from tests.support.helpers import generate, write_trec

    qrels, run = generate("ties", 4)
    qpath, rpath = write_trec(tmp_path, qrels, run)
    (tmp_path / "fewer").mkdir()
    _, fewer = write_trec(tmp_path / "fewer", qrels, {q: docs for i, (q, docs) in enumerate(run.items()) if i % 3})
    frame = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                         columns=["query_id", "doc_id", "score"])
    evaluator = Evaluator(str(qpath), MEMO_MEASURES, **options)
    for given in [str(rpath), str(rpath), str(fewer), frame, str(rpath), str(fewer)]:
        fresh = evaluate(str(qpath), given, MEMO_MEASURES, per_query=True, **options)
        prepared = evaluator.evaluate(given, per_query=True)
        assert (prepared.per_query, prepared.summary, prepared.meta) == (fresh.per_query, fresh.summary, fresh.meta)


def test_an_evaluator_refuses_a_run_without_judged_queries_between_runs_it_scores():
    from evaltool import Evaluator
    from evaltool.errors import InputError

    evaluator = Evaluator({"q1": {"a": 1}}, ["map"])
    run = {"q1": {"a": 1.0, "b": 2.0}}
    assert evaluator.evaluate(run).summary == {"map": 0.5}
    with pytest.raises(InputError, match="no query of <run dict> has judgments in <qrels dict>"):
        evaluator.evaluate({"q2": {"a": 1.0}})
    assert evaluator.evaluate(run).summary == {"map": 0.5}
    with pytest.raises(InputError, match="no query of <run dict> has judgments in <qrels dict>"):
        evaluator.evaluate({"q2": {"a": 1.0}})


def test_evaluator_refuses_unknown_options_and_measures_when_built():
    from evaltool import Evaluator, MeasureError

    with pytest.raises(TypeError, match="relevance_levle"):
        Evaluator({"q": {"d": 1}}, ["map"], relevance_levle=2)
    with pytest.raises(MeasureError):
        Evaluator({"q": {"d": 1}}, ["no_such_measure"])


def test_evaluator_values_are_pytrec_evals():
    """A peer computes the expectation: pytrec_eval on the same dicts (continuous scores, no ties)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from evaltool import Evaluator
    from tests.support.helpers import generate

    qrels, run = generate("graded", 2)
    run = {q: docs for q, docs in run.items() if q in qrels}
    names = {"map": "map", "ndcg_cut.10": "ndcg_cut_10", "P.5": "P_5", "recip_rank": "recip_rank", "bpref": "bpref"}
    want = pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(run)
    got = Evaluator(qrels, list(names)).evaluate(run).per_query
    for qid, values in want.items():
        for name in names.values():
            assert got[qid][name] == pytest.approx(values[name], abs=1e-12), (qid, name)


@pytest.mark.parametrize("scenario", ["ties", "docids", "extremes"])
def test_dicts_score_as_the_same_files_do(tmp_path, scenario):
    """Ties broken by document id in byte order (non-ASCII, '#', prefixes) whichever way the run comes in."""
    from tests.support.helpers import generate, write_trec

    qrels, run = generate(scenario, 3)
    qpath, rpath = write_trec(tmp_path, qrels, run)
    measures = ["relstring.50", "map", "ndcg_cut.10", "recip_rank", "num_ret"]
    from_files = evaluate(qpath, rpath, measures, per_query=True)
    from_dicts = evaluate(qrels, run, measures, per_query=True)
    assert from_dicts.per_query == from_files.per_query


def test_dict_ids_from_undecodable_bytes_tie_break_by_those_bytes(tmp_path):
    """'\\udcff' stands for the byte 0xFF (surrogate escape): above 'é' (0xC3 0xA9) in byte order,
    though below it as a code point. Tied, the 0xFF document ranks first."""
    run = {"q": {"\udcff": 1.0, "é": 1.0, "z": 1.0}}
    qrels = {"q": {"é": 1}}
    assert evaluate(qrels, run, ["recip_rank"]).summary["recip_rank"] == 0.5
    (tmp_path / "r").write_bytes(b"q Q0 \xff 1 1.0 t\nq Q0 \xc3\xa9 2 1.0 t\nq Q0 z 3 1.0 t\n")
    (tmp_path / "q").write_bytes(b"q 0 \xc3\xa9 1\n")
    assert evaluate(tmp_path / "q", tmp_path / "r", ["recip_rank"]).summary["recip_rank"] == 0.5


@pytest.mark.parametrize("value", [True, float("nan"), "1.5", None])
def test_dict_values_outside_the_fast_path_are_still_checked(value):
    """Anything but a plain number goes through the entry-by-entry check: same message as before."""
    run = {"q": {"a": 1.0, "b": value}}
    if value == "1.5":
        assert evaluate({"q": {"b": 1}}, run, ["recip_rank"]).summary["recip_rank"] == 1.0
        return
    with pytest.raises(evaltool_errors().ParseError, match="query q document b"):
        evaluate({"q": {"b": 1}}, run, ["recip_rank"])


def test_numpy_scalars_and_repeated_documents_across_queries():
    import numpy as np

    qrels = {"q1": {"d": np.int64(1)}, "q2": {"d": 1, "e": 2}}
    run = {"q1": {"x": np.float32(2.0), "d": np.float64(1.0)}, "q2": {"e": 1, "d": 3}}
    result = evaluate(qrels, run, ["recip_rank", "relstring"], per_query=True)
    # q1: x (unjudged) then d -> 1/2; q2: d (1) then e (2) -> 1
    assert result.per_query == {"q1": {"recip_rank": 0.5, "relstring": "-1"},
                                "q2": {"recip_rank": 1.0, "relstring": "12"}}


def evaltool_errors():
    import evaltool.errors

    return evaltool.errors


def test_the_python_api_and_the_command_line_share_their_defaults():
    """A default written twice (``evaluate()`` and ``evaltool``'s options, the F1 threshold a
    third time in the resolver) cannot drift: an option left out means the same in both."""
    import inspect

    import click

    from evaltool.cli.eval import eval_command
    from evaltool.relevance.resolve import DEFAULT_THRESHOLD, resolve

    api = inspect.signature(evaluate).parameters
    unset = getattr(click.core, "UNSET", None)  # click 8.3 and later; None before
    shared = [p for p in eval_command.params if p.name in api and p.default is not unset and not p.is_flag]
    assert {p.name for p in shared} >= {"relevance_level", "on_duplicate", "f1_threshold", "f1_total", "engine"}
    for option in shared:
        default = api[option.name].default
        assert default == option.default or (default is None and option.default == "auto"), option.name
    assert inspect.signature(resolve).parameters["f1_threshold"].default == DEFAULT_THRESHOLD == api["f1_threshold"].default
