"""What users of the peers write is read: PyTerrier DataFrames, BEIR qrels, memorybench's
relevance fields; and one name per relevance source, from option to output."""

from __future__ import annotations

import json

import pytest

from evaltool import evaluate
from tests.support.helpers import ROOT, assert_fails, invoke


def test_pyterrier_dataframes():
    pd = pytest.importorskip("pandas")
    # PyTerrier: runs are qid, docno, score (its rank column is ignored), qrels qid, docno, label
    run = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "c"], "score": [2.0, 1.0, 1.0],
                        "rank": [1, 0, 0]})
    qrels = pd.DataFrame({"qid": ["q1", "q2"], "docno": ["b", "c"], "label": [1, 2]})
    result = evaluate(qrels, run, ["recip_rank", "P.1"], per_query=True)
    # by hand: q1 ranks a (not relevant) before b (relevant): RR 1/2; q2 ranks c first: RR 1
    assert result.per_query == {"q1": {"recip_rank": 0.5, "P_1": 0.0}, "q2": {"recip_rank": 1.0, "P_1": 1.0}}


def test_dataframe_without_known_columns_names_both_layouts():
    pd = pytest.importorskip("pandas")
    with pytest.raises(Exception, match=r"needs columns query_id, doc_id and score; it has qid, doc, score "
                                        r"\(PyTerrier's qid and docno are read too\)"):
        evaluate({"q1": {"a": 1}}, pd.DataFrame({"qid": ["q1"], "doc": ["a"], "score": [1.0]}))


def test_beir_qrels_tsv(tmp_path):
    beir = tmp_path / "test.tsv"
    beir.write_text("query-id\tcorpus-id\tscore\nq1\tdoc-apple\t1\nq1\tdoc-x\t0\nq2\td9\t2\n")
    trec = tmp_path / "qrels.txt"
    trec.write_text("q1 0 doc-apple 1\nq1 0 doc-x 0\nq2 0 d9 2\n")
    run = ROOT / "data" / "run.txt"
    from_beir = invoke("-q", "-m", "map", "-m", "P.5", beir, run)
    assert from_beir.exit_code == 0, from_beir.stderr
    assert from_beir.stdout == invoke("-q", "-m", "map", "-m", "P.5", trec, run).stdout
    assert "P_5                   \tq1\t0.2000\n" in from_beir.stdout  # doc-apple is in q1's top 5 of data/run.txt


def test_beir_qrels_line_with_wrong_field_count(tmp_path):
    beir = tmp_path / "test.tsv"
    beir.write_text("query-id\tcorpus-id\tscore\nq1\tdoc-apple\t1\nq1\tdoc-x\n")
    assert_fails(invoke(beir, ROOT / "data" / "run.txt"),
                 f"evaltool: {beir}:3: found 'q1\\tdoc-x'; expected 3 fields 'query-id corpus-id score' "
                 "(a BEIR qrels file, as its header says)")


@pytest.mark.parametrize("fields", [
    {"relevantIds": ["d1", "d3"]},
    {"relevantChunkIds": ["d1", "d3"]},
    {"metadata": {"relevantIds": ["d1", "d3"]}},
    {"metadata": {"relevantChunkIds": ["d1", "d3"]}},
    {"expected_modules": ["d1", "d3"]},
])
def test_memorybench_relevance_fields(tmp_path, fields):
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"qid": "q1", "query": "x", **fields}) + "\n")
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps({"qid": "q1", "docid": d, "rank": r}) + "\n"
                               for r, d in enumerate(["d1", "d2", "d3"], 1)))
    result = evaluate(str(queries), str(results), ["P.3", "recall.3", "recip_rank"])
    # by hand: d1 and d3 relevant, ranked 1st and 3rd of 3
    assert result.summary == {"recip_rank": 1.0, "P_3": pytest.approx(2 / 3), "recall_3": 1.0}
    assert result.meta["relevance"]["strategy_counts"]["qrels"] == 1


def test_two_relevance_lists_are_refused(tmp_path):
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"qid": "q1", "relevant_ids": ["a"], "metadata": {"relevantIds": ["b"]}}) + "\n")
    assert_fails(invoke(queries, ROOT / "data" / "rag" / "results.jsonl"), f"{queries}:1: found ",
                 "expected either 'relevant_ids' or 'metadata.relevantIds', not both")


def test_longmemeval_answer_corpus_ids_as_memorybench_spells_them(tmp_path):
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"qid": "q1", "metadata": {"answerCorpusIds": ["s1", "s2"]}}) + "\n")
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps({"qid": "q1", "docid": d, "rank": r}) + "\n"
                               for r, d in enumerate(["s1_3", "x", "s2"], 1)))
    result = evaluate(str(queries), str(results), ["P.3", "recall.3"], packs=["longmemeval"])
    # by hand: turn s1_3 of session s1 and session s2 relevant; two answer sessions in all
    assert result.summary == {"P_3": pytest.approx(2 / 3), "recall_3": 1.0}
    assert result.meta["relevance"]["strategy_counts"]["pack"] == 1


def test_token_f1_is_reported_by_the_name_that_selects_it():
    """--relevance token-f1 used to be reported as 'token-fallback'."""
    result = invoke(ROOT / "data/rag/queries.jsonl", ROOT / "data/rag/results.jsonl", "--relevance", "token-f1",
                 "-m", "P.1", "-q", "-o", "json")
    assert result.exit_code == 0, result.stderr
    relevance = json.loads(result.stdout)["meta"]["relevance"]
    assert relevance["strategy_used"] == "token-f1"
    assert set(relevance["strategy_counts"]) == {"qrels", "pack", "token-f1"}
    assert set(relevance["per_query"].values()) == {"token-f1"}
