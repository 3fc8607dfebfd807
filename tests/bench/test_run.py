"""`evaltool bench` with fake Python backends: failures, timeouts, duplicates, retries,
concurrency, the report's layout, and its numbers against evaltool run on the TREC files
the report wrote.

Expected values are by hand. Rankings (tests/support/helpers.py), relevant ids rel1, rel2:

  ok / transient  rel1 x1 rel2 x2             (rel1, rel2)  P@3 2/3  P@5 2/5  R@10 1  RR 1
  slow            x1 rel1                     (rel1)        P@3 1/3  P@5 1/5  R@10 1  RR 1/2
  dupes           x1 rel1 [x1] rel2 [rel1] x2 (rel1, rel2)  P@3 2/3  P@5 2/5  R@10 1  RR 1/2
  empty           -                           (rel1)        all 0, no first relevant position
  scored          x1 rel1 rel2 (3.5, 2, 2)    (rel1)        P@3 1/3  P@5 1/5  R@10 1  RR 1/2
  boom, hang      error, timeout: no metrics

'scored' ties rel1 and rel2 at 2.0 with rel1 first: the backend's order must win (by
score and trec_eval's tie rule rel2 would come first and RR would be 1/3).
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path

import pytest

from tests.support import helpers
from tests.support.helpers import bench, only_report, query, rescore, write_queries

FAKE = "tests.support.helpers:fake_search"
KEYS = ("precision@3", "precision@5", "recall@10", "mrr")


def mixed_queries():
    return [
        query(1, "q ok", ("rel1", "rel2"), "A", "easy", behaviour="ok"),
        query(2, "q slow", ("rel1",), "A", "medium", behaviour="slow"),
        query(3, "q boom", ("rel1",), "B", "hard", behaviour="boom"),
        query(4, "q hang", ("rel1",), "B", "hard", behaviour="hang"),
        query(5, "q dupes", ("rel1", "rel2"), "A", "medium", behaviour="dupes"),
        query("t6", "q transient", ("rel1", "rel2"), "C", "easy", behaviour="transient", version="2.0"),
        query(7, "q empty", ("rel1",), "C", "hard", behaviour="empty"),
        query(8, "q scored", ("rel1",), "C", "medium", behaviour="scored"),
    ]


BY_HAND = {  # P@3, P@5, R@10, RR, hits in top 3, hits in top 5, first relevant position
    "1": (F(2, 3), F(2, 5), 1, 1, 2, 2, 1),
    "2": (F(1, 3), F(1, 5), 1, F(1, 2), 1, 1, 2),
    "5": (F(2, 3), F(2, 5), 1, F(1, 2), 2, 2, 2),
    "t6": (F(2, 3), F(2, 5), 1, 1, 2, 2, 1),
    "7": (0, 0, 0, 0, 0, 0, None),
    "8": (F(1, 3), F(1, 5), 1, F(1, 2), 1, 1, 2),
}


def mean(qids, column):
    return sum(F(BY_HAND[q][column]) for q in qids) / len(qids)


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mixed")
    path = write_queries(folder / "queries.json", mixed_queries())
    helpers.CALLS.clear()
    result = bench(path, FAKE, folder / "out", "--timeout", "0.5", "--concurrency", "3", "--retries", "2")
    report, report_path = only_report(folder / "out")
    return result, report, report_path, dict(helpers.CALLS)


def test_run_completes_despite_failing_queries_and_exits_1(mixed_run):
    result, report, report_path, calls = mixed_run
    assert result.exit_code == 1, result.stderr  # some queries failed (issue 10 B4)
    assert [e["query_id"] for e in report["detailed_results"]] == [1, 2, 3, 4, 5, "t6", 7, 8]
    meta = report["metadata"]
    assert (meta["total_queries"], meta["evaluated_queries"], meta["failed_queries"], meta["timeouts"]) == (8, 6, 2, 1)
    # every query sent once, except the transient one: one retry
    assert calls == {"q ok": 1, "q slow": 1, "q boom": 1, "q hang": 1, "q dupes": 1, "q transient": 2,
                     "q empty": 1, "q scored": 1}
    assert not list(report_path.parent.glob("*.checkpoint.jsonl")), "checkpoint left after a finished run"


def test_failed_queries_are_recorded_with_their_error_and_null_metrics(mixed_run):
    _, report, _, _ = mixed_run
    by_id = {str(e["query_id"]): e for e in report["detailed_results"]}
    assert by_id["3"]["error"] == "ValueError: boom" and by_id["3"]["attempts"] == 1
    assert by_id["4"]["error"] == "timeout"
    assert 450 <= by_id["4"]["execution_time_ms"] < 2900, "the timeout (0.5 s) ends the query, not the backend"
    for qid in ("3", "4"):
        assert by_id[qid]["metrics"] is None and by_id[qid]["returned_ids"] == []
    assert by_id["t6"]["error"] is None and by_id["t6"]["attempts"] == 2


def test_duplicates_are_dropped_and_the_backend_order_is_kept(mixed_run):
    _, report, _, _ = mixed_run
    by_id = {str(e["query_id"]): e for e in report["detailed_results"]}
    assert by_id["5"]["returned_ids"] == ["x1", "rel1", "rel2", "x2"]
    assert by_id["5"]["duplicates_removed"] == 2
    assert by_id["8"]["returned_ids"] == ["x1", "rel1", "rel2"]
    assert by_id["8"]["returned_scores"] == [3.5, 2.0, 2.0]
    assert "returned_scores" not in by_id["1"]


def test_per_query_metrics_match_the_hand_values(mixed_run):
    _, report, _, _ = mixed_run
    by_id = {str(e["query_id"]): e for e in report["detailed_results"]}
    for qid, expected in BY_HAND.items():
        metrics = by_id[qid]["metrics"]
        got = tuple(metrics[k] for k in KEYS) + (
            metrics["hits_in_top_3"], metrics["hits_in_top_5"], metrics["first_relevant_position"])
        assert got == pytest.approx(tuple(float(v) if v is not None else None for v in expected), abs=1e-12), qid


def test_aggregates_and_groups_match_the_hand_values(mixed_run):
    _, report, _, _ = mixed_run
    evaluated = list(BY_HAND)
    assert report["aggregate_metrics"] == pytest.approx(
        {key: float(mean(evaluated, i)) for i, key in enumerate(KEYS)}, abs=1e-12)
    assert report["aggregate_metrics"]["precision@3"] == pytest.approx(4 / 9)
    assert report["aggregate_metrics"]["mrr"] == pytest.approx(7 / 12)
    groups = {"per_category": {"A": ["1", "2", "5"], "B": [], "C": ["t6", "7", "8"]},
              "per_difficulty": {"easy": ["1", "t6"], "medium": ["2", "5", "8"], "hard": ["7"]}}
    failed = {"per_category": {"A": 0, "B": 2, "C": 0}, "per_difficulty": {"easy": 0, "medium": 0, "hard": 2}}
    for section, table in groups.items():
        assert list(report[section]) == list(table), "groups in the order of the queries file"
        for value, qids in table.items():
            entry = report[section][value]
            assert (entry["count"], entry["failed"]) == (len(qids), failed[section][value]), (section, value)
            for i, key in enumerate(KEYS):
                want = float(mean(qids, i)) if qids else None
                assert entry[key] == pytest.approx(want, abs=1e-12) if qids else entry[key] is None, (section, key)


def test_metrics_match_evaltool_on_the_written_trec_files(mixed_run):
    _, report, _, _ = mixed_run
    scored = rescore(report)
    names = report["metadata"]["measures"]
    assert names == list(KEYS)
    assert scored["summary"] == report["aggregate_metrics"]
    evaluated = [e for e in report["detailed_results"] if e["metrics"] is not None]
    assert sorted(scored["per_query"]) == sorted(str(e["query_id"]) for e in evaluated)
    for entry in evaluated:
        assert scored["per_query"][str(entry["query_id"])] == {k: entry["metrics"][k] for k in names}


def test_written_trec_run_keeps_the_returned_order(mixed_run):
    _, report, _, _ = mixed_run
    lines = Path(report["metadata"]["run_file"]).read_text().splitlines()
    scored = [line.split() for line in lines if line.startswith("8 ")]
    assert scored == [["8", "Q0", "x1", "1", "3", "fake_search"], ["8", "Q0", "rel1", "2", "2", "fake_search"],
                      ["8", "Q0", "rel2", "3", "1", "fake_search"]]
    assert not any(line.split()[0] in ("3", "4", "7") for line in lines), "failed and empty queries have no lines"
    qrels = Path(report["metadata"]["qrels_file"]).read_text().splitlines()
    assert "t6 0 rel2 1" in qrels and not any(line.split()[0] in ("3", "4") for line in qrels)


def test_report_layout_follows_the_seed(mixed_run):
    _, report, report_path, _ = mixed_run
    assert list(report) == ["metadata", "aggregate_metrics", "per_category", "per_difficulty", "detailed_results"]
    import re

    assert re.fullmatch(r"baseline_\d{8}_\d{6}\.json", report_path.name)
    meta = report["metadata"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["timestamp"])
    assert meta["timestamp"].replace("-", "").replace(":", "").replace("T", "_")[:15] == report_path.stem[9:24]
    assert meta["limit"] == 10 and meta["execution_time_seconds"] > 0
    latency = meta["latency_ms"]
    assert 0 <= latency["p50"] <= latency["p95"] <= latency["max"]
    assert latency["max"] >= 200, "the slow query (0.2 s) is among the answered ones"
    entry = next(e for e in report["detailed_results"] if e["query_id"] == "t6")
    assert list(entry)[:8] == ["query_id", "query", "version", "category", "difficulty", "relevant_ids",
                               "returned_ids", "metrics"]
    assert entry["version"] == "2.0" and entry["fields"] == {"behaviour": "transient"}
    assert meta["rescore"].startswith("evaltool -c -m precision@3 -m precision@5 -m recall@10 -m mrr ")


def test_console_summary_counts_failures_and_names_the_files(mixed_run):
    result, report, report_path, _ = mixed_run
    out = result.stdout
    assert "BENCHMARK COMPLETED" in out
    assert "Total Queries: 8 (6 evaluated, 2 failed)" in out
    assert "  Precision@3:  44.4%  " + "█" * 11 + "░" * 13 in out
    assert "  Mean MRR:     0.583" in out
    assert "FAILURES: 2 of 8 queries (1 timed out)\n  3: ValueError: boom\n  4: timeout\n" in out
    assert "BY DIFFICULTY:\n  Easy   (2):  P@3=66.7% | P@5=40.0% | R@10=100.0% | MRR=1.000\n" in out
    assert "  B (0):  no answers | 2 failed" in out
    assert f"Results saved to: {report_path}" in out
    assert "LATENCY: p50 " in out


def test_verbose_prints_a_block_per_query(tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "q ok", ("rel1", "rel2"), behaviour="ok", version="16.0"),
                                               query(2, "q boom", behaviour="boom")])
    result = bench(path, FAKE, tmp_path / "out", "-v", "--concurrency", "1")
    assert result.exit_code == 1, result.stderr
    out = result.stdout
    assert ('[1/2] Query: "q ok"\n      Version: 16.0 | Category: A | Difficulty: easy\n'
            "      Expected: 2 ids\n      ✓ Executed in ") in out
    assert "      Metrics: P@3=0.667 | P@5=0.400 | R@10=1.000 | MRR=1.000\n" in out
    assert '[2/2] Query: "q boom"\n' in out and "      ✗ Failed: ValueError: boom\n" in out


def test_an_empty_answer_is_scored_in_the_verbose_blocks_and_the_report(tmp_path):
    """An empty list is the backend's answer "nothing": the query scores 0, it does not stop the run."""
    path = write_queries(tmp_path / "q.json", [query(1, "q ok", ("rel1", "rel2"), behaviour="ok"),
                                               query(2, "q empty", behaviour="empty")])
    result = bench(path, FAKE, tmp_path / "out", "-v", "--concurrency", "1")
    assert result.exit_code == 0, result.stderr
    assert '[2/2] Query: "q empty"\n' in result.stdout
    assert "      ✓ Executed in " in result.stdout and ": 0 results\n" in result.stdout
    assert "      Metrics: P@3=0.000 | P@5=0.000 | R@10=0.000 | MRR=0.000\n" in result.stdout
    assert "are these judgments" not in result.stderr and "has judgments" not in result.stderr
    report, _ = only_report(tmp_path / "out")
    empty = report["detailed_results"][1]
    assert empty["error"] is None and empty["returned_ids"] == []
    assert empty["metrics"] == {"precision@3": 0.0, "precision@5": 0.0, "recall@10": 0.0, "mrr": 0.0,
                                "hits_in_top_3": 0, "hits_in_top_5": 0, "first_relevant_position": None}
    # q ok: rel1 x1 rel2 x2 against {rel1, rel2}: P@3 = 2/3, MRR 1; q empty: 0
    assert report["aggregate_metrics"]["precision@3"] == pytest.approx(1 / 3)
    assert report["aggregate_metrics"]["mrr"] == 0.5 and report["metadata"]["evaluated_queries"] == 2


def test_a_run_where_every_answer_is_empty_scores_zero(tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "q a", behaviour="empty"), query(2, "q b", behaviour="empty")])
    result = bench(path, FAKE, tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    assert "are these judgments" not in result.stderr
    report, _ = only_report(tmp_path / "out")
    assert report["aggregate_metrics"] == {"precision@3": 0.0, "precision@5": 0.0, "recall@10": 0.0, "mrr": 0.0}
    assert report["metadata"]["failed_queries"] == 0 and report["metadata"]["rescore"] is None
    assert not (tmp_path / "out" / "q.checkpoint.jsonl").exists()


def test_retries_end_and_the_last_error_is_recorded(tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "q always", behaviour="always_transient")])
    result = bench(path, FAKE, tmp_path / "out", "--retries", "2")
    report, _ = only_report(tmp_path / "out")
    entry = report["detailed_results"][0]
    assert (entry["error"], entry["attempts"]) == ("ConnectionError: connection reset", 3)
    assert report["aggregate_metrics"] == {key: None for key in KEYS}
    assert report["metadata"]["rescore"] is None and result.exit_code == 2  # every query failed
    assert "--response-path" not in result.stderr  # a connection failure is no shape error


@pytest.mark.parametrize("behaviour, message", [
    ("not_a_list", "the backend returned {'ids': ['rel1']}; expected a list of ids or (id, score[, text]) items"),
    ("mixed", "result 2: the results mix bare ids and (id, score) items"),
    ("bad_score", "result 1: score nan is not a finite number"),
    ("spaced_id", "result 1: id 'rel 1' must be non-empty without whitespace"),
])
def test_an_answer_that_is_not_a_ranking_fails_only_its_query(tmp_path, behaviour, message):
    path = write_queries(tmp_path / "q.json", [query(1, "q bad", behaviour=behaviour), query(2, "q fine")])
    result = bench(path, FAKE, tmp_path / "out")
    assert result.exit_code == 1, result.stderr
    assert ("--response-path" in result.stderr) == (behaviour == "not_a_list")
    report, _ = only_report(tmp_path / "out")
    bad, fine = report["detailed_results"]
    assert bad["error"].startswith("BackendResultError: " + message) and bad["attempts"] == 1
    assert fine["metrics"]["mrr"] == 1.0 and report["metadata"]["failed_queries"] == 1


@pytest.mark.parametrize("backend, concurrency", [("tests.support.helpers:async_search", 3),
                                                  ("tests.support.helpers:threaded_search", 2)])
def test_concurrency_is_bounded(tmp_path, backend, concurrency):
    helpers.IN_FLIGHT.update(now=0, max=0)
    path = write_queries(tmp_path / "q.json", [query(i, f"q{i}") for i in range(10)])
    result = bench(path, backend, tmp_path / "out", "--concurrency", concurrency, "--limit", "3")
    assert result.exit_code == 0, result.stderr
    assert helpers.IN_FLIGHT["max"] == concurrency
    report, _ = only_report(tmp_path / "out")
    first = report["detailed_results"][0]
    expected = ["rel1", "x1"] if "async" in backend else ["x1", "rel1", "x2"]  # --limit 3 cuts the threaded 6
    assert first["returned_ids"] == expected


def test_measures_option_and_hits_still_reported(tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "q slow", ("rel1",), behaviour="slow")])
    result = bench(path, FAKE, tmp_path / "out", "-m", "ndcg_cut.10", "-m", "map")
    assert result.exit_code == 0, result.stderr
    report, _ = only_report(tmp_path / "out")
    metrics = report["detailed_results"][0]["metrics"]
    # x1 rel1: nDCG@10 = (1/log2(3)) / 1, AP = 1/2
    assert metrics == pytest.approx({"ndcg_cut_10": 0.6309297535714575, "map": 0.5, "hits_in_top_3": 1,
                                     "hits_in_top_5": 1, "first_relevant_position": 2})
    assert list(report["aggregate_metrics"]) == ["ndcg_cut_10", "map"]
    assert rescore(report)["summary"] == {"ndcg_cut_10": metrics["ndcg_cut_10"], "map": 0.5}


def test_graded_qrels_and_relevance_level(tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "q ok", {"rel1": 1, "rel2": 2, "x9": 0})])
    result = bench(path, FAKE, tmp_path / "out", "-l", "2", "--name", "graded run", "-v")
    assert result.exit_code == 0, result.stderr
    assert "Expected: 1 id\n" in result.stdout
    report, _ = only_report(tmp_path / "out")
    entry = report["detailed_results"][0]
    # rel1 x1 rel2 x2; only rel2 (grade 2) is relevant at -l 2: first at rank 3
    assert entry["qrels"] == {"rel1": 1, "rel2": 2, "x9": 0}
    assert entry["metrics"]["mrr"] == pytest.approx(1 / 3) and entry["metrics"]["first_relevant_position"] == 3
    assert Path(report["metadata"]["qrels_file"]).read_text() == "1 0 rel1 1\n1 0 rel2 2\n1 0 x9 0\n"
    assert " -l 2 " in report["metadata"]["rescore"] and report["metadata"]["run_name"] == "graded_run"
    assert Path(report["metadata"]["run_file"]).read_text().splitlines()[0] == "1 Q0 rel1 1 4 graded_run"
    assert rescore(report)["summary"]["mrr"] == entry["metrics"]["mrr"]


def test_corpus_check_reports_unknown_expected_ids_before_running(tmp_path):
    path = write_queries(tmp_path / "q.json", [query(1, "q ok", ("rel1", "rel2")), query(2, "q two", ("nope",))])
    corpus = tmp_path / "ids.txt"
    corpus.write_text("# ids\nrel1\nx1\nrel2\n")
    result = bench(path, FAKE, tmp_path / "out", "--corpus", corpus)
    assert result.exit_code == 0, result.stderr
    assert "warning: 1 expected id of 1 query not in the corpus (3 ids):\nevaltool:   query 2: nope" in result.stderr
    report, _ = only_report(tmp_path / "out")
    assert report["metadata"]["unknown_expected_ids"] == {"2": ["nope"]}

    hooked = bench(path, "tests.support.helpers:search_with_corpus", tmp_path / "out2")
    assert "warning: 2 expected ids of 2 queries not in the corpus (3 ids)" in hooked.stderr
    assert "query 1: rel2" in hooked.stderr
    assert only_report(tmp_path / "out2")[0]["metadata"]["unknown_expected_ids"] == {"1": ["rel2"], "2": ["nope"]}
    assert only_report(tmp_path / "out")[0]["metadata"]["unknown_expected_ids"] is not None


def test_run_file_replay_ranks_by_trec_eval_rule(tmp_path):
    run = tmp_path / "system.run"
    # q1: b and c tie at 2.0 -> c first (doc id descending), then b, a
    run.write_text("q1 Q0 a 1 1.0 sys\nq1 Q0 b 2 2.0 sys\nq1 Q0 c 3 2.0 sys\nq9 Q0 z 1 1.0 sys\n")
    path = write_queries(tmp_path / "q.json", [query("q1", "first", ("b",)), query("q2", "second", ("z",))])
    result = bench(path, str(run), tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    report, _ = only_report(tmp_path / "out")
    first, second = report["detailed_results"]
    assert first["returned_ids"] == ["c", "b", "a"] and first["returned_scores"] == [2.0, 2.0, 1.0]
    assert first["metrics"]["mrr"] == 0.5
    assert second["returned_ids"] == [] and second["metrics"]["mrr"] == 0.0
    assert report["metadata"]["backend_kind"] == "run" and report["metadata"]["run_name"] == "system.run"
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 b 1\n")
    from tests.support.helpers import invoke

    original = json.loads(invoke("-m", "recip_rank", "-o", "json", qrels, run).stdout)
    assert original["summary"]["recip_rank"] == first["metrics"]["mrr"]


def test_an_object_with_an_async_call_gets_the_fields_it_names(tmp_path):
    helpers.async_object.seen.clear()
    path = write_queries(tmp_path / "q.json", [query(1, "q a", version="16.0"), query(2, "q b")])
    result = bench(path, "tests.support.helpers:async_object", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    assert sorted(helpers.async_object.seen) == [("q a", "16.0"), ("q b", None)]
    report, _ = only_report(tmp_path / "out")
    assert [e["metrics"]["mrr"] for e in report["detailed_results"]] == [1.0, 0.0]
