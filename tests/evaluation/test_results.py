"""The results stage (evaltool.results): groups, labels keyed on the measure, warnings, one JSON writer,
and compare taking every input eval takes.

Hand-made data: one relevant document per query, 5 retrieved; run A ranks it 1, 2, 4, 1 for
q1..q4 -> recip_rank 1, 0.5, 0.25, 1 (mean 0.6875), P_5 0.2 everywhere; run B ranks it
1, 1, 2, 2 -> 1, 1, 0.5, 0.5 (mean 0.75). nDCG@10 with one relevant document at rank r is
1 / log2(r + 1): A 1, 0.6309, 0.4307, 1 (mean 0.7654).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pytest

import evaltool
from evaltool.compare import compare_runs
from evaltool.errors import EvaltoolError, EvaltoolWarning
from evaltool.evaluation import evaluate
from tests.support.helpers import RANKS, assert_fails, invoke, write, write_run

PACKAGE = Path(evaltool.__file__).parent
QRELS = {f"q{i}": {f"dq{i}": 1} for i in range(1, 5)}


def run_dict(ranks: dict[str, int], depth: int = 5) -> dict:
    """The relevant document of each query at rank ``ranks[qid]`` among ``depth`` documents."""
    out = {}
    for qid, rank in ranks.items():
        docs = [f"x{qid}_{j}" for j in range(depth)]
        docs[rank - 1] = f"d{qid}"
        out[qid] = {doc: float(depth - j) for j, doc in enumerate(docs)}
    return out


@pytest.fixture
def files(tmp_path):
    write(tmp_path / "qrels.txt", "".join(f"q{i} 0 dq{i} 1\n" for i in range(1, 5)))
    return {"qrels": str(tmp_path / "qrels.txt"), "a": write_run(tmp_path / "A.run", "A", RANKS["A"]),
            "b": write_run(tmp_path / "B.run", "B", RANKS["B"]), "folder": tmp_path}


# ---------------------------------------------------------------- labels keyed on the measure


def test_labels_work_with_any_spelling_of_the_thresholded_measures(files):
    # before: "--labels: none of the measures evaluated (mrr, ndcg@10, precision@5) has a threshold"
    result = invoke(files["qrels"], files["a"], "-m", "mrr", "-m", "ndcg@10", "-m", "precision@5", "--labels",
                    "-o", "json")
    assert result.exit_code == 0, result.stderr
    # mrr 0.6875 < 0.7, ndcg@10 0.7654 >= 0.6, precision@5 0.2 < 0.5: one of three holds
    assert json.loads(result.stdout)["labels"] == {"all": "poor"}


def test_threshold_accepts_the_trec_eval_spelling_of_an_evaluated_measure(files):
    # before: "threshold for ndcg_cut.10: ndcg_cut.10 is not among the measures evaluated (ndcg_cut_10)"
    result = invoke(files["qrels"], files["a"], "-m", "ndcg_cut.10", "--threshold", "ndcg_cut.10=0.77",
                    "-o", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["labels"] == {"all": "poor"}  # 0.7654 < 0.77, the only thresholded measure evaluated
    assert out["thresholds"] == {"recip_rank": 0.7, "P_5": 0.5, "ndcg_cut.10": 0.77}  # the ones in force
    assert invoke(files["qrels"], files["a"], "-m", "ndcg@10", "--threshold", "ndcg_cut_10=0.76",
                  "-o", "json").stdout.count('"good"') == 1


def test_threshold_spellings_replace_and_drop_the_same_measure():
    from evaltool.results import label, parse_thresholds

    assert parse_thresholds(["nDCG@10=0.9", "mrr=off"]) == {"P_5": 0.5, "nDCG@10": 0.9}
    assert label({"RR": 0.7, "ndcg_cut_10": 0.6, "P@5": 0.5}) == "good"
    assert label({"P_5": 0.5, "precision@5": 0.5}, {"P@5": 0.6}) == "poor"  # one measure, counted once


def test_a_threshold_for_a_measure_not_evaluated_is_refused(files):
    assert_fails(invoke(files["qrels"], files["a"], "-m", "mrr", "--threshold", "map=0.3"),
                 "threshold for map: map is not among the measures evaluated (mrr)")


# ---------------------------------------------------------------- the library returns groups, labels, warnings


def test_evaluate_returns_groups_labels_and_warnings():
    topics = {"q1": {"difficulty": "easy"}, "q2": {"difficulty": "hard"}, "q3": {"difficulty": "hard"}}
    with pytest.warns(EvaltoolWarning, match="1 of 4 queries have no difficulty"):
        result = evaluate(QRELS, run_dict(RANKS["A"]), ["recip_rank", "P.5"], group_by="difficulty", topics=topics,
                          thresholds=["P_5=0.2"])
    assert result.groups == {"difficulty": {"easy": {"count": 1, "recip_rank": 1.0, "P_5": 0.2},
                                            "hard": {"count": 2, "recip_rank": 0.375, "P_5": 0.2},
                                            "(none)": {"count": 1, "recip_rank": 1.0, "P_5": 0.2}}}
    assert result.thresholds == {"recip_rank": 0.7, "ndcg_cut_10": 0.6, "P_5": 0.2}
    # rows: RR holds for q1, q4 and the easy group; P_5 >= 0.2 everywhere
    assert result.labels == {"all": "fair", "q1": "good", "q2": "fair", "q3": "fair", "q4": "good",
                             "difficulty=easy": "good", "difficulty=hard": "fair", "difficulty=(none)": "good"}
    assert result.warnings == ["note: 1 of 4 queries have no difficulty in <topics>; they form the group (none)"]
    assert result.to_dict(per_query=False)["labels"] == {
        "all": "fair", "difficulty=easy": "good", "difficulty=hard": "fair", "difficulty=(none)": "good"}


def test_evaluate_warns_about_skipped_queries_in_python_too():
    with pytest.warns(EvaltoolWarning, match=r"1 of the 4 qrels queries have no results .* \(q4\)"):
        result = evaluate(QRELS, run_dict({q: r for q, r in RANKS["A"].items() if q != "q4"}), ["recip_rank"])
    assert result.warnings[0].startswith("warning: 1 of the 4 qrels queries")


def test_group_by_on_a_queries_file_uses_the_file_as_topics():
    # before: "--group-by needs --topics FILE"
    result = invoke("data/rag/queries.jsonl", "data/rag/results.jsonl", "-m", "recip_rank", "--group-by",
                    "difficulty", "-o", "json")
    assert result.exit_code == 0, result.stderr
    queries = [json.loads(line) for line in Path("data/rag/queries.jsonl").read_text().splitlines()]
    per_query = evaluate("data/rag/queries.jsonl", "data/rag/results.jsonl", ["recip_rank"]).per_query
    groups = json.loads(result.stdout)["groups"]["difficulty"]
    for value, entry in groups.items():
        members = [q["qid"] for q in queries if q.get("difficulty") == value and q["qid"] in per_query]
        assert entry["count"] == len(members)
        assert math.isclose(entry["recip_rank"], sum(per_query[q]["recip_rank"] for q in members) / len(members))


def test_compare_groups_a_queries_file_by_its_own_fields():
    cmp = compare_runs("data/rag/queries.jsonl", {"a": "data/rag/results.jsonl", "b": "data/rag/results.jsonl"},
                       measures=["recip_rank"], group_by="difficulty", complete=True)
    single = evaluate("data/rag/queries.jsonl", "data/rag/results.jsonl", ["recip_rank"], complete=True,
                      group_by="difficulty")
    assert cmp.groups["difficulty"] == {value: {"count": entry["count"],
                                                "runs": {run: {"recip_rank": entry["recip_rank"]} for run in "ab"}}
                                        for value, entry in single.groups["difficulty"].items()}


def test_group_by_without_topics_on_a_trec_qrels_file_is_refused(files):
    assert_fails(invoke(files["qrels"], files["a"], "--group-by", "difficulty"), "--group-by needs --topics FILE")


def test_grouping_arguments_that_cannot_work_are_refused_before_scoring():
    assert_fails(invoke("data/rag/queries.jsonl", "data/rag/results.jsonl", "--group-by", "colour"),
                 "data/rag/queries.jsonl: no field 'colour' to group by; the file has 'qid', 'query', 'category'")
    with pytest.raises(EvaltoolError, match=r"--topics needs --group-by FIELD \(group_by=\)"):
        evaluate(QRELS, run_dict(RANKS["A"]), ["map"], topics={"q1": {"kind": "a"}})
    with pytest.raises(EvaltoolError, match="<topics>: the fields of query 'q1' must be a mapping, not str"):
        evaluate(QRELS, run_dict(RANKS["A"]), ["map"], group_by="kind", topics={"q1": "a"})
    with pytest.raises(EvaltoolError, match="runs given as a {name: run} mapping take their names from it"):
        compare_runs(QRELS, {"A": run_dict(RANKS["A"]), "B": run_dict(RANKS["B"])}, names=["x", "y"])


# ---------------------------------------------------------------- one JSON writer


def test_to_json_writes_null_for_nan_and_equals_the_cli(files):
    # q2's run retrieves nothing relevant: first_relevant_position has no value (nan) there
    write(files["folder"] / "nan.run", "q1 Q0 dq1 1 2 t\nq1 Q0 x 2 1 t\nq2 Q0 x 1 1 t\n")
    qrels, run = files["qrels"], str(files["folder"] / "nan.run")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaltoolWarning)
        text = evaluate(qrels, run, ["first_relevant_position"], per_query=True).to_json()

    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON")

    parsed = json.loads(text, parse_constant=refuse)  # before: NaN in the text
    assert parsed["per_query"]["q2"]["first_relevant_position"] is None
    assert parsed["per_query"]["q1"]["first_relevant_position"] == 1  # an integer rank: 1, not 1.0
    assert type(parsed["per_query"]["q1"]["first_relevant_position"]) is int
    assert invoke(qrels, run, "-m", "first_relevant_position", "-q", "-o", "json").stdout == text


# ---------------------------------------------------------------- compare takes what eval takes


def test_compare_takes_a_mapping_of_dict_runs_and_gives_json_and_a_frame(files):
    cmp = compare_runs(QRELS, {"A": run_dict(RANKS["A"]), "B": run_dict(RANKS["B"])}, measures=["recip_rank"],
                       group_by="difficulty", topics={"q1": {"difficulty": "easy"}, "q4": {"difficulty": "easy"},
                                                      "q2": {"difficulty": "hard"}, "q3": {"difficulty": "hard"}},
                       thresholds=True)
    assert cmp.names == ["A", "B"] and cmp.cells["B"]["recip_rank"].mean == 0.75
    assert cmp.groups["difficulty"]["hard"] == {"count": 2, "runs": {"A": {"recip_rank": 0.375},
                                                                     "B": {"recip_rank": 0.75}}}
    assert cmp.labels == {"A": "poor", "B": "good"}
    # the same comparison from the files, by the command line: the same JSON but for the run names
    cli = invoke("compare", files["qrels"], files["a"], files["b"], "-m", "recip_rank", "--name", "A", "--name", "B",
                 "--labels", "--group-by", "difficulty", "--topics",
                 write(files["folder"] / "t.tsv", "qid\tdifficulty\nq1\teasy\nq2\thard\nq3\thard\nq4\teasy\n"),
                 "-o", "json")
    assert cli.stdout == cmp.to_json()
    frame = cmp.to_frame()
    assert list(frame.columns[:5]) == ["group", "run", "measure", "queries", "mean"]
    row = frame[(frame.group == "difficulty=hard") & (frame.run == "B")].iloc[0]
    assert row["mean"] == 0.75 and row["delta"] == 0.375
    pandas = pytest.importorskip("pandas")
    frames = {name: pandas.DataFrame([(q, d, s) for q, docs in run_dict(RANKS[name]).items() for d, s in docs.items()],
                                     columns=["query_id", "doc_id", "score"]) for name in ("A", "B")}
    from_frames = compare_runs(QRELS, frames, measures=["recip_rank"])
    assert from_frames.cells["B"]["recip_rank"].delta == cmp.cells["B"]["recip_rank"].delta


def test_compare_takes_a_queries_file_and_jsonl_results(tmp_path):
    # before: compare read QRELS as TREC qrels only ("expected 4 fields")
    results = Path("data/rag/results.jsonl").read_text().splitlines()
    worse = write(tmp_path / "worse.jsonl", "".join(line + "\n" for line in results if '"rank": 1,' not in line))
    result = invoke("compare", "data/rag/queries.jsonl", "data/rag/results.jsonl", worse, "-m", "recip_rank",
                    "-c", "-o", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    base = evaluate("data/rag/queries.jsonl", "data/rag/results.jsonl", ["recip_rank"], complete=True)
    assert math.isclose(out["runs"]["results.jsonl"]["recip_rank"]["mean"], base.summary["recip_rank"])
    assert out["runs"]["worse.jsonl"]["recip_rank"]["delta"] < 0


def test_compare_says_each_run_warning_once(files):
    # the run B file holds one (query, document) pair twice; every run is scored against qrels with a duplicate
    folder = files["folder"]
    qrels = write(folder / "dup.qrels", Path(files["qrels"]).read_text() + "q1 0 dq1 1\n")
    b = write(folder / "B2.run", Path(files["b"]).read_text() + "q1 Q0 dq1 9 0.1 B\n")
    with pytest.warns(EvaltoolWarning) as caught:
        cmp = compare_runs(qrels, [files["a"], b], measures=["recip_rank"], on_duplicate="first")
    assert cmp.warnings == [
        f"note: 1 duplicate (query, document) rows in {qrels} resolved by --on-duplicate first",
        f"note: 1 duplicate (query, document) rows in {b} resolved by --on-duplicate first (run B2.run)"]
    assert [str(w.message) for w in caught] == cmp.warnings  # said once, not once per run
    result = invoke("compare", qrels, files["a"], b, "-m", "recip_rank", "--on-duplicate", "first")
    assert result.stderr.splitlines() == [f"evaltool: {line}" for line in cmp.warnings]


# ---------------------------------------------------------------- the layering rules


def test_thresholds_argument_is_checked():
    with pytest.raises(EvaltoolError, match="threshold for map: 'high' is not a number"):
        evaluate(QRELS, run_dict(RANKS["A"]), ["map"], thresholds={"map": "high"})
