"""Relevance resolution: explicit qrels, then packs, then token F1 (issue 6).

Every expected value is computed here by hand (the arithmetic is written out) or by the
code-chunk formula quoted in the specification (``../shared/seeds/002_*.txt``), never
taken from evaltool's own output.
"""

from __future__ import annotations

import json
import math
import random

import pytest

from evaltool import evaluate
from evaltool.errors import EvaltoolError
from evaltool.relevance.packs import LoCoMoPack, LongMemEvalPack, installed, load_pack
from evaltool.relevance.token_f1 import token_f1, tokens
from tests.support.helpers import invoke


def jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def item(qid, docid, rank, text=None, **extra) -> dict:
    row = {"qid": qid, "docid": docid, "rank": rank}
    if text is not None:
        row["text"] = text
    return {**row, **extra}


def ok(*args):
    result = invoke(*args)
    assert result.exit_code == 0, (result.stderr, result.exception)
    return result


def json_out(*args) -> dict:
    return json.loads(ok(*args, "-o", "json").stdout)


def dcg(gains) -> float:
    """sum of gain_i / log2(i + 1) over ranks i = 1, 2, ... (Järvelin & Kekäläinen)."""
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


# ---------------------------------------------------------------- A: explicit qrels

TREC_QRELS = """\
q1 0 a 2
q1 0 b 0
q1 0 c 1
q1 0 z 1
q2 0 d 1
q2 0 e -1
q3 0 f 1
q10 0 g 3
q10 0 h 1
"""
# ties on purpose (q1: x and c at 2.5, q10: h and g at 2): the tie rule must hold on both paths
TREC_RUN = """\
q1 Q0 a 1 3.0 myrun
q1 Q0 x 2 2.5 myrun
q1 Q0 c 3 2.5 myrun
q1 Q0 b 4 1.0 myrun
q2 Q0 e 1 5 myrun
q2 Q0 d 2 4 myrun
q10 Q0 h 1 2 myrun
q10 Q0 g 2 2 myrun
q10 Q0 y 3 1 myrun
q9 Q0 w 1 1 myrun
"""
QUERIES = [
    {"qid": "q1", "query": "first", "qrels": {"a": 2, "b": 0, "c": 1, "z": 1}},
    {"qid": "q2", "qrels": {"d": 1, "e": -1}, "answer": "ignored: qrels come first"},
    {"qid": "q3", "relevant_ids": ["f"]},
    {"qid": "q10", "qrels": {"g": 3, "h": 1}, "category": "long"},
]


@pytest.fixture
def twins(tmp_path):
    """The same judgments and run as TREC files and as a queries file + JSONL results."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(TREC_QRELS)
    run = tmp_path / "run.txt"
    run.write_text(TREC_RUN)
    rows = []
    for line in TREC_RUN.splitlines():
        qid, _, docid, rank, score, _ = line.split()
        rows.append({"qid": qid, "docid": docid, "rank": int(rank), "score": float(score), "text": f"text of {docid}"})
    queries = jsonl(tmp_path / "queries.jsonl", QUERIES)
    results = jsonl(tmp_path / "myrun.jsonl", rows)
    return str(qrels), str(run), queries, results


def without_relevance_rows(stdout: str) -> str:
    return "".join(line for line in stdout.splitlines(True) if not line.startswith("relevance "))


@pytest.mark.parametrize("extra", [[], ["-c"], ["-M", "2"], ["-J"], ["-l", "2"]])
def test_qrels_only_is_identical_to_the_equivalent_trec_files(twins, extra):
    qrels, run, queries, results = twins
    trec = ok(qrels, run, "-m", "all_trec", "-q", *extra)
    ours = ok(queries, results, "-m", "all_trec", "-q", *extra)
    assert without_relevance_rows(ours.stdout) == trec.stdout  # byte for byte, runid included ("myrun")
    relevance_rows = [line.split() for line in ours.stdout.splitlines() if line.startswith("relevance ")]
    evaluated = ["q1", "q10", "q2"] + (["q3"] if "-c" in extra else [])
    assert relevance_rows == [["relevance", qid, "qrels"] for qid in evaluated]


def test_qrels_only_gives_the_same_result_objects(twins):
    qrels, run, queries, results = twins
    trec = evaluate(qrels, run, ["all_trec"], per_query=True, complete=True)
    ours = evaluate(queries, results, ["all_trec"], per_query=True, complete=True)
    assert ours.per_query == trec.per_query
    assert ours.summary == trec.summary
    assert ours.strategies == {"q1": "qrels", "q10": "qrels", "q2": "qrels", "q3": "qrels"}
    assert ours.meta["relevance"]["inputs"] == {"qrels": "jsonl", "run": "jsonl"}


@pytest.mark.parametrize("layout", ["array", "wrapped", "gzip"])
def test_json_queries_files_read_as_jsonl_does(twins, tmp_path, layout):
    import gzip

    qrels, run, _, results = twins
    if layout == "array":
        path = tmp_path / "queries.json"
        path.write_text(json.dumps(QUERIES, indent=2))
    elif layout == "wrapped":
        path = tmp_path / "benchmark.json"
        path.write_text(json.dumps({"name": "twins", "queries": QUERIES, "version": 1}, indent=1))
    else:
        path = tmp_path / "queries.jsonl.gz"
        path.write_bytes(gzip.compress("".join(json.dumps(q) + "\n" for q in QUERIES).encode()))
    trec = ok(qrels, run, "-m", "map", "-m", "ndcg_cut.3", "-c")
    assert ok(path, results, "-m", "map", "-m", "ndcg_cut.3", "-c").stdout == trec.stdout


def code_chunk_ndcg(retrieved_ids: list[str], relevant_set: set[str], k: int) -> float:
    """``computeMetrics`` of code-chunk's ``packages/eval/src/metrics.ts``, as the specification quotes it."""
    top_k = retrieved_ids[:k]
    dcg_value = sum((1 if d in relevant_set else 0) / math.log2(i + 2) for i, d in enumerate(top_k))
    ideal_k = min(k, len(relevant_set))
    idcg = sum(1 / math.log2(i + 2) for i in range(ideal_k))
    return dcg_value / idcg if idcg > 0 else 0


def test_ndcg_matches_the_code_chunk_formula(tmp_path):
    rng = random.Random(20240601)
    pool = [f"chunk-{n:02d}" for n in range(20)]
    queries, rows, expected = [], [], {}
    for n in range(60):
        qid = f"q{n:02d}"
        relevant = set(rng.sample(pool, rng.randint(0, 6)))
        retrieved = rng.sample(pool, rng.randint(0, 12))
        queries.append({"qid": qid, "relevant_ids": sorted(relevant)})
        rows += [item(qid, d, r) for r, d in enumerate(retrieved, 1)]  # rank only: the file's order
        expected[qid] = {k: code_chunk_ndcg(retrieved, relevant, k) for k in (1, 3, 5, 10)}
    result = evaluate(jsonl(tmp_path / "q.jsonl", queries), jsonl(tmp_path / "r.jsonl", rows),
                      ["ndcg_cut.1,3,5,10"], complete=True)
    assert sorted(result.qids) == sorted(expected)
    for qid, values in expected.items():
        for k, value in values.items():
            assert math.isclose(result.per_query[qid][f"ndcg_cut_{k}"], value, abs_tol=1e-12), (qid, k)


def test_ideal_dcg_counts_every_relevant_item_not_only_those_found(tmp_path):
    # the specification's example: 3 relevant items, K = 5, IDCG@5 = 1 + 1/log2(3) + 1/2 = 2.1309;
    # the ranking r, n, r, n, n finds two of them: DCG@5 = 1 + 1/log2(4) = 1.5
    queries = jsonl(tmp_path / "q.jsonl", [{"qid": "q", "relevant_ids": ["r1", "r2", "r3"]}])
    results = jsonl(tmp_path / "r.jsonl", [item("q", d, i) for i, d in enumerate(["r1", "n1", "r2", "n2", "n3"], 1)])
    value = evaluate(queries, results, ["ndcg_cut.5", "recall.5"]).summary
    assert math.isclose(value["ndcg_cut_5"], 1.5 / (1 + 1 / math.log2(3) + 0.5), abs_tol=1e-12)
    assert math.isclose(value["recall_5"], 2 / 3, abs_tol=1e-12)


# ---------------------------------------------------------------- the specification's edge cases


def test_no_relevant_items_scores_zero(tmp_path):
    queries = jsonl(tmp_path / "q.jsonl", [
        {"qid": "ids", "relevant_ids": []},                   # explicit: nothing is relevant
        {"qid": "f1", "answer": "completely different words"},  # token F1 finds nothing
    ])
    results = jsonl(tmp_path / "r.jsonl", [item("ids", "d1", 1, "some text"), item("f1", "d1", 1, "some text")])
    out = json_out(queries, results, "-m", "ndcg_cut.5", "-m", "recall.5", "-m", "map", "-q")
    for qid in ("ids", "f1"):
        assert out["per_query"][qid] == {"ndcg_cut_5": 0.0, "recall_5": 0.0, "map": 0.0}
    assert out["meta"]["relevance"]["queries_with_relevant"] == 0


def test_nothing_retrieved_scores_zero(tmp_path):
    queries = jsonl(tmp_path / "q.jsonl", [
        {"qid": "answered", "relevant_ids": ["d1"]},
        {"qid": "silent-ids", "relevant_ids": ["d1"]},
        {"qid": "silent-f1", "answer": "anything"},
    ])
    results = jsonl(tmp_path / "r.jsonl", [item("answered", "d1", 1)])
    out = json_out(queries, results, "-m", "ndcg_cut.5", "-q", "-c")
    assert out["per_query"]["silent-ids"]["ndcg_cut_5"] == 0.0
    assert out["per_query"]["silent-f1"]["ndcg_cut_5"] == 0.0
    assert out["per_query"]["answered"]["ndcg_cut_5"] == 1.0
    assert out["summary"]["ndcg_cut_5"] == pytest.approx(1 / 3, abs=1e-12)
    # without -c, as for TREC files, queries without results are left out, with a warning
    plain = ok(queries, results, "-m", "ndcg_cut.5")
    assert "2 of the 3 qrels queries have no results" in plain.stderr
    assert plain.stdout == "ndcg_cut_5            \tall\t1.0000\n"


def test_perfect_ranking_scores_one_for_every_strategy(tmp_path):
    queries = jsonl(tmp_path / "q.jsonl", [
        {"qid": "ids", "relevant_ids": ["a", "b"]},
        {"qid": "locomo", "metadata": {"evidence": ["D1:1", "D1:2"]}},
        {"qid": "f1", "answer": "The capital of France is Paris."},
    ])
    results = jsonl(tmp_path / "r.jsonl", [
        item("ids", "a", 1), item("ids", "b", 2), item("ids", "c", 3),
        item("locomo", "D1:1", 1), item("locomo", "conv_D1:2", 2), item("locomo", "D2:5", 3),
        item("f1", "p1", 1, "capital of France is Paris"), item("f1", "p2", 2, "Berlin is in Germany"),
    ])
    out = json_out(queries, results, "-m", "ndcg_cut.10", "-m", "ndcg", "-m", "recall.10", "-q")
    for qid in ("ids", "locomo", "f1"):
        assert out["per_query"][qid] == {"ndcg": 1.0, "recall_10": 1.0, "ndcg_cut_10": 1.0}, qid
    assert out["meta"]["relevance"]["per_query"] == {"f1": "token-f1", "ids": "qrels", "locomo": "pack"}


# ---------------------------------------------------------------- B: packs


def test_locomo_pack_counts_evidence_that_was_not_retrieved(tmp_path):
    # evidence D1:3 and D2:8; only D1:3 is retrieved (rank 1): num_rel 2 (one unretrieved),
    # nDCG@5 = 1 / (1 + 1/log2(3)), recall@5 = 1/2
    queries = jsonl(tmp_path / "q.jsonl", [{"qid": "q1", "metadata": {"evidence": ["D1:3", "D2:8"]},
                                            "answer": "pack first"}])
    results = jsonl(tmp_path / "r.jsonl", [
        item("q1", "chat-D1:3", 1, "pack first"), item("q1", "chat-x", 2, metadata={"dia_id": "D1:4"}),
    ])
    out = json_out(queries, results, "-m", "ndcg_cut.5", "-m", "recall.5", "-m", "num_rel", "-q", "--pack", "locomo")
    assert out["per_query"]["q1"]["ndcg_cut_5"] == pytest.approx(1 / (1 + 1 / math.log2(3)), abs=1e-12)
    assert out["per_query"]["q1"]["recall_5"] == 0.5 and out["per_query"]["q1"]["num_rel"] == 2
    assert out["meta"]["relevance"]["packs"] == {"locomo": 1}
    assert out["meta"]["relevance"]["relevant_found_only"] == 0


def test_longmemeval_pack_judges_turns_of_answer_sessions(tmp_path):
    # answer session answer_a; answer_a_2 is one of its turns (rank 2): nDCG = (1/log2(3)) / 1
    queries = jsonl(tmp_path / "q.jsonl", [{"qid": "q1", "metadata": {"answer_corpus_ids": ["answer_a"]}}])
    results = jsonl(tmp_path / "r.jsonl", [item("q1", "sharegpt_1", 1), item("q1", "answer_a_2", 2),
                                          item("q1", "x", 3, metadata={"corpus_id": "answer_b"})])
    out = json_out(queries, results, "-m", "ndcg_cut.5", "-m", "recall.5", "-q")
    assert out["per_query"]["q1"]["ndcg_cut_5"] == pytest.approx(1 / math.log2(3), abs=1e-12)
    assert out["per_query"]["q1"]["recall_5"] == 1.0
    assert out["meta"]["relevance"]["strategy_used"] == "pack"
    assert out["meta"]["relevance"]["packs"] == {"longmemeval": 1}


def test_the_shipped_packs_are_entry_points():
    found = installed()
    assert found["locomo"].value == "evaltool.relevance.packs:LoCoMoPack"
    assert found["longmemeval"].value == "evaltool.relevance.packs:LongMemEvalPack"
    assert isinstance(load_pack("locomo").pack, LoCoMoPack)
    assert isinstance(load_pack("longmemeval").pack, LongMemEvalPack)


PACKS_MODULE = '''
class Graded:
    """Grades come from the item's metadata; no total_relevant: only what was found counts."""

    def is_relevant(self, query, item):
        return item.metadata.get("grade", 0)


class GradedWithTotal(Graded):
    def total_relevant(self, query):
        return query.metadata["total"]


class Exploding:
    def is_relevant(self, query, item):
        if query.qid == "q2":
            raise ValueError("no evidence index for this conversation")
        return 1


class SaysYes:
    def is_relevant(self, query, item):
        return "yes"


class NegativeTotal(Graded):
    def total_relevant(self, query):
        return -1


graded = Graded()
'''


@pytest.fixture
def pack_module(tmp_path, monkeypatch):
    (tmp_path / "my_packs.py").write_text(PACKS_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_packs"


@pytest.fixture
def graded_files(tmp_path):
    queries = jsonl(tmp_path / "queries.jsonl", [{"qid": "q1", "metadata": {"total": 4}},
                                                 {"qid": "q2", "metadata": {"total": 1}}])
    results = jsonl(tmp_path / "results.jsonl", [
        item("q1", "d1", 1, metadata={"grade": 0}), item("q1", "d2", 2, metadata={"grade": 2}),
        item("q1", "d3", 3, metadata={"grade": 1}), item("q2", "d1", 1, metadata={"grade": 1}),
    ])
    return queries, results


def test_a_graded_pack_without_total_relevant_counts_what_it_found(graded_files, pack_module):
    # q1 grades by rank: 0, 2, 1. DCG@3 = 2/log2(3) + 1/log2(4); found relevant: d2 (2), d3 (1)
    # so the ideal is 2, 1: IDCG@3 = 2 + 1/log2(3)
    out = json_out(*graded_files, "--pack", f"{pack_module}:graded", "-m", "ndcg_cut.3", "-m", "recall.3", "-q")
    q1 = out["per_query"]["q1"]
    assert q1["ndcg_cut_3"] == pytest.approx((2 / math.log2(3) + 0.5) / (2 + 1 / math.log2(3)), abs=1e-12)
    assert q1["recall_3"] == 1.0
    assert out["meta"]["relevance"]["relevant_found_only"] == 2
    table = ok(*graded_files, "--pack", f"{pack_module}:graded", "-m", "ndcg_cut.3", "-o", "table").stdout
    assert "no known number of relevant items" in table and "may be overestimated" in table


def test_total_relevant_adds_the_relevant_items_not_found(graded_files, pack_module):
    # q1: total 4, found 2 (grades 2 and 1) -> two more relevant items of grade 1:
    # num_rel 4, recall@3 = 2/4, ideal gains 2, 1, 1, 1: IDCG@3 = 2 + 1/log2(3) + 1/2
    out = json_out(*graded_files, "--pack", f"{pack_module}:GradedWithTotal", "-m", "ndcg_cut.3", "-m", "recall.3",
                   "-m", "num_rel", "-q")
    q1 = out["per_query"]["q1"]
    assert q1["num_rel"] == 4 and q1["recall_3"] == 0.5
    assert q1["ndcg_cut_3"] == pytest.approx((2 / math.log2(3) + 0.5) / (2 + 1 / math.log2(3) + 0.5), abs=1e-12)
    # q2: total 1 and found 1: nothing added
    assert out["per_query"]["q2"]["num_rel"] == 1
    assert out["meta"]["relevance"]["relevant_found_only"] == 0


def test_a_pack_object_can_be_given_to_evaluate(graded_files, pack_module):
    import my_packs

    result = evaluate(*graded_files, ["num_rel_ret"], per_query=True, packs=[my_packs.Graded()])
    assert result.per_query == {"q1": {"num_rel_ret": 2}, "q2": {"num_rel_ret": 1}}
    assert result.meta["relevance"]["packs"] == {"Graded": 2}


def test_a_pack_that_raises_stops_with_its_name_and_the_query_and_writes_nothing(graded_files, pack_module, tmp_path):
    previous = tmp_path / "out.txt"
    previous.write_text("previous results\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    result = invoke(*graded_files, "--pack", f"{pack_module}:Exploding", "--output", previous,
                    "--save-reference", tmp_path / "ref.json")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"evaltool: pack '{pack_module}:Exploding' raised ValueError: no evidence index for this "
                             f"conversation in is_relevant() for query 'q2' ({graded_files[0]}:2), "
                             f"item 'd1' ({graded_files[1]}:4)\n")
    assert previous.read_text() == "previous results\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no reference, no temporary file
    with pytest.raises(EvaltoolError, match="raised ValueError"):
        evaluate(*graded_files, ["map"], packs=[f"{pack_module}:Exploding"])


@pytest.mark.parametrize("spec, message", [
    ("my_packs:SaysYes", "pack 'my_packs:SaysYes': is_relevant() returned 'yes' for query 'q1'"),
    ("my_packs:NegativeTotal", "pack 'my_packs:NegativeTotal': total_relevant() returned -1 for query 'q1'"),
    ("my_packs:Missing", "--pack my_packs:Missing: module 'my_packs' has no attribute 'Missing'"),
    ("no_such_module:Pack", "--pack no_such_module:Pack: cannot import module 'no_such_module'"),
    ("nope", "no pack named 'nope' (installed: locomo, longmemeval)"),
])
def test_unusable_packs_are_named(graded_files, pack_module, spec, message):
    result = invoke(*graded_files, "--pack", spec)
    assert result.exit_code == 2 and result.stdout == ""
    assert message in result.stderr and result.stderr.count("\n") == 1, result.stderr


# ---------------------------------------------------------------- C: token F1


def test_token_f1_normalises_like_squad_and_counts_repeated_tokens():
    assert tokens("The Eiffel-Tower, an icon of Paris!") == ["eiffeltower", "icon", "of", "paris"]
    assert tokens("“Quoted” — text…") == ["quoted", "text"]
    # shared tokens with multiplicity: x x y vs x y y share x and y once each: 2*2 / (3+3)
    assert token_f1(["x", "x", "y"], ["x", "y", "y"]) == 4 / 6
    assert token_f1([], ["x"]) == 0.0


def test_an_f1_of_exactly_the_threshold_is_relevant(tmp_path):
    answer = "The alpha, beta and gamma!"  # tokens: alpha beta and gamma (4)
    high = "alpha beta and gamma " + " ".join(f"w{i}" for i in range(12))  # 16 tokens, shares 4: 2*4/(4+16) = 0.4
    exact = "alpha beta gamma " + " ".join(f"v{i}" for i in range(13))     # 16 tokens, shares 3: 2*3/(4+16) = 0.3
    under = "alpha beta gamma " + " ".join(f"u{i}" for i in range(14))     # 17 tokens, shares 3: 2*3/(4+17)
    assert [len(tokens(t)) for t in (high, exact, under)] == [16, 16, 17]
    assert token_f1(tokens(answer), tokens(exact)) == 0.3
    assert token_f1(tokens(answer), tokens(under)) == 6 / 21 < 0.3
    queries = jsonl(tmp_path / "q.jsonl", [{"qid": "q", "answer": answer}])
    results = jsonl(tmp_path / "r.jsonl", [item("q", "high", 1, high), item("q", "exact", 2, exact),
                                          item("q", "under", 3, under)])

    def judged(*threshold):
        out = json_out(queries, results, "-m", "relstring", "-q", *threshold)
        return out["per_query"]["q"]["relstring"], out["meta"]["relevance"]["f1_threshold"]

    assert judged() == ("110", 0.3)  # the default threshold, 0.3: exactly 0.3 is relevant
    assert judged("--f1-threshold", "0.30000000000000004") == ("100", 0.30000000000000004)  # the next float up
    assert judged("--f1-threshold", str(6 / 21)) == ("111", 6 / 21)
    assert judged("--f1-threshold", "0.4") == ("100", 0.4)
    assert invoke(queries, results, "--f1-threshold", "1.5").exit_code == 2


def test_items_without_text_stay_unjudged_with_a_warning(tmp_path):
    queries = jsonl(tmp_path / "q.jsonl", [{"qid": "q", "answer": "red apple"}])
    results = jsonl(tmp_path / "r.jsonl", [item("q", "no-text", 1), item("q", "apple", 2, "a red apple")])
    result = ok(queries, results, "-m", "num_ret", "-m", "num_rel_ret", "-m", "num_nonrel_judged_ret", "-J")
    # -J drops the unjudged item: one retrieved, relevant
    assert result.stdout.splitlines() == ["num_ret               \tall\t1", "num_rel_ret           \tall\t1",
                                          "num_nonrel_judged_ret \tall\t0"]
    assert "1 retrieved item has no text, so token F1 could not judge them" in result.stderr


# ---------------------------------------------------------------- priority and provenance


@pytest.fixture
def priority_files(tmp_path):
    queries = jsonl(tmp_path / "queries.jsonl", [
        {"qid": "q1", "relevant_ids": ["d2"], "metadata": {"evidence": ["D1:1"]}, "answer": "red apple"},
        {"qid": "q2", "metadata": {"evidence": ["D1:1"]}, "answer": "red apple"},
        {"qid": "q3", "answer": "red apple"},
        {"qid": "q4", "query": "nothing to judge it by"},
    ])
    rows = []
    for qid in ("q1", "q2", "q3", "q4"):
        rows += [item(qid, "chat-D1:1", 1, "A red apple."), item(qid, "d2", 2, "green pears")]
    return queries, jsonl(tmp_path / "results.jsonl", rows)


@pytest.mark.parametrize("packs", [[], ["--pack", "locomo"]])
def test_the_first_source_that_applies_wins(priority_files, packs):
    # q1 (qrels: d2 at rank 2) rr 1/2; q2 (locomo: D1:1 at rank 1) rr 1; q3 (F1 of "a red apple" with
    # "red apple" is 1, with "green pears" 0) rr 1; q4 has nothing: unjudged, not scored
    result = ok(*priority_files, "-m", "recip_rank", "-q", "-o", "json", *packs)
    out = json.loads(result.stdout)
    relevance = out["meta"]["relevance"]
    assert {q: v["recip_rank"] for q, v in out["per_query"].items()} == {"q1": 0.5, "q2": 1.0, "q3": 1.0}
    assert relevance["per_query"] == {"q1": "qrels", "q2": "pack", "q3": "token-f1"}
    assert relevance["strategy_counts"] == {"qrels": 1, "pack": 1, "token-f1": 1}
    assert relevance["strategy_used"] == "mixed" and relevance["total"] == 3
    assert relevance["unjudged_queries"] == ["q4"]
    assert out["meta"]["run_queries_without_judgments"] == ["q4"]
    assert "warning: 1 query of" in result.stderr and "could not be judged" in result.stderr


def test_a_query_with_qrels_and_a_pack_uses_qrels(priority_files, pack_module):
    # the graded pack applies to every query (no applies()) and grades these items 0
    out = json_out(*priority_files, "-m", "recip_rank", "-q", "--pack", f"{pack_module}:graded", "--pack", "locomo")
    assert out["meta"]["relevance"]["per_query"] == {"q1": "qrels", "q2": "pack", "q3": "pack", "q4": "pack"}
    assert out["meta"]["relevance"]["packs"] == {"my_packs:graded": 3}
    assert {q: v["recip_rank"] for q, v in out["per_query"].items()} == {"q1": 0.5, "q2": 0.0, "q3": 0.0, "q4": 0.0}


@pytest.mark.parametrize("mode, strategies, recip_rank", [
    ("qrels", {"q1": "qrels"}, {"q1": 0.5}),
    ("pack", {"q1": "pack", "q2": "pack"}, {"q1": 1.0, "q2": 1.0}),
    ("token-f1", {"q1": "token-f1", "q2": "token-f1", "q3": "token-f1"},
     {"q1": 1.0, "q2": 1.0, "q3": 1.0}),
])
def test_relevance_option_allows_one_source_only(priority_files, mode, strategies, recip_rank):
    out = json_out(*priority_files, "-m", "recip_rank", "-q", "--relevance", mode)
    assert {q: v["recip_rank"] for q, v in out["per_query"].items()} == recip_rank
    assert out["meta"]["relevance"]["per_query"] == strategies
    assert out["meta"]["relevance"]["mode"] == mode
    assert out["meta"]["relevance"]["unjudged_queries"] == [q for q in ("q1", "q2", "q3", "q4") if q not in strategies]
    warning = invoke(*priority_files, "-m", "recip_rank", "--relevance", mode).stderr
    lacks = {"qrels": "no relevant_ids or qrels", "pack": "no pack applies", "token-f1": "no expected answer"}[mode]
    assert f"could not be judged with --relevance {mode} ({lacks}) and " in warning


def test_a_mixed_benchmark_adds_up(tmp_path):
    queries = jsonl(tmp_path / "queries.jsonl", [
        {"qid": "a1", "relevant_ids": ["d1"]},                         # relevant
        {"qid": "a2", "qrels": {"d1": 0, "d9": 2}},                     # relevant (d9, not retrieved)
        {"qid": "a3", "relevant_ids": []},                             # nothing relevant
        {"qid": "b1", "metadata": {"answer_corpus_ids": ["answer_x"]}},  # relevant found
        {"qid": "b2", "metadata": {"answer_corpus_ids": ["answer_y"]}},  # relevant, not found (total 1)
        {"qid": "c1", "answer": "blue whale"},                         # "the blue whale" matches
        {"qid": "c2", "answer": "seven seas"},                         # nothing matches
        {"qid": "c3", "answer": "no results at all"},                  # judged, nothing retrieved
    ])
    rows = [item(qid, "d1", 1, "the blue whale") for qid in ("a1", "a2", "a3", "c1", "c2")]
    rows += [item("b1", "answer_x_1", 1), item("b2", "other_1", 1)]
    results = jsonl(tmp_path / "results.jsonl", rows)
    out = json_out(queries, results, "-m", "num_q", "-m", "recip_rank", "--f1-threshold", "0.5")
    relevance = out["meta"]["relevance"]
    assert relevance["strategy_counts"] == {"qrels": 3, "pack": 2, "token-f1": 2}  # c3 has no results
    assert sum(relevance["strategy_counts"].values()) == relevance["total"] == out["summary"]["num_q"] == 7
    assert relevance["queries_with_relevant"] == 5  # a1, a2, b1, b2, c1
    assert relevance["relevant_found_only"] == 2 and relevance["f1_threshold"] == 0.5
    assert relevance["k"] == [] and relevance["packs"] == {"longmemeval": 2}
    complete = json_out(queries, results, "-m", "num_q", "-c", "--f1-threshold", "0.5")["meta"]["relevance"]
    assert complete["strategy_counts"] == {"qrels": 3, "pack": 2, "token-f1": 3}
    assert complete["total"] == 8 and complete["queries_with_relevant"] == 5
    line = ok(queries, results, "-m", "P.5,10", "--f1-threshold", "0.5").stderr.splitlines()
    assert ("evaltool: relevance: mixed (qrels 3, pack 2, token-f1 2; packs: longmemeval 2) over 7 queries, "
            "5 with relevant items; k 5,10; F1 threshold 0.5") in line


def test_trec_files_alone_print_nothing_new(twins):
    qrels, run, _, _ = twins
    result = ok(qrels, run, "-m", "map", "-q")
    assert result.stderr.startswith("evaltool: warning: 1 of the 4 qrels queries have no results")
    assert "relevance" not in result.stdout + result.stderr
    meta = json_out(qrels, run, "-m", "map", "-m", "P.5")["meta"]["relevance"]
    assert meta["strategy_used"] == "qrels" and meta["strategy_counts"] == {"qrels": 3, "pack": 0, "token-f1": 0}
    assert meta["k"] == [5] and meta["inputs"] == {"qrels": "trec", "run": "trec"}
    assert json_out(qrels, run, "-m", "ndcg@10", "-m", "P.5,20")["meta"]["relevance"]["k"] == [5, 10, 20]
    assert meta["queries_with_relevant"] == 3


def test_table_output_names_each_querys_source(priority_files):
    text = ok(*priority_files, "-m", "recip_rank", "-q", "-o", "table").stdout
    rows = [line.split() for line in text.splitlines()]
    assert rows[0] == ["query", "recip_rank", "relevance"]
    assert rows[1:4] == [["q1", "0.5000", "qrels"], ["q2", "1.0000", "pack"], ["q3", "1.0000", "token-f1"]]
    assert "relevance: mixed (qrels 1, pack 1, token-f1 1; packs: locomo 1) over 3 queries" in text


def test_stream_refuses_queries_files(priority_files):
    result = invoke(*priority_files, "--stream")
    assert result.exit_code == 2 and "--stream reads a TREC run scored against TREC qrels" in result.stderr


def test_pack_and_token_f1_need_a_queries_file(twins):
    qrels, _, _, results = twins
    result = invoke(qrels, results, "--relevance", "token-f1")
    assert result.exit_code == 2
    assert "--relevance token-f1 judges the queries of a queries file" in result.stderr
    assert f"{qrels} is a qrels file" in result.stderr


def test_groups_can_come_from_the_queries_file(priority_files, tmp_path):
    queries = jsonl(tmp_path / "grouped.jsonl", [
        {"qid": "q1", "relevant_ids": ["d2"], "category": "fruit"},
        {"qid": "q2", "relevant_ids": ["chat-D1:1"], "category": "fruit"},
        {"qid": "q3", "relevant_ids": ["d2", "chat-D1:1"], "category": "other"},
    ])
    out = json_out(queries, priority_files[1], "-m", "recip_rank", "--group-by", "category", "--topics", queries)
    # fruit: q1 1/2, q2 1 -> 0.75; other: q3 1
    assert out["groups"]["category"] == {"fruit": {"count": 2, "recip_rank": 0.75},
                                         "other": {"count": 1, "recip_rank": 1.0}}


def test_results_can_come_from_stdin(priority_files):
    queries, results = priority_files
    with open(results) as handle:
        piped = invoke(queries, "-", "-m", "recip_rank", "-q", input=handle.read())
    assert piped.exit_code == 0, piped.stderr
    assert piped.stdout == ok(queries, results, "-m", "recip_rank", "-q").stdout


def test_the_worked_example_in_data_runs(tmp_path):
    from tests.support.helpers import ROOT

    out = json_out(ROOT / "data/rag/queries.jsonl", ROOT / "data/rag/results.jsonl", "-m", "ndcg_cut.5", "-q")
    relevance = out["meta"]["relevance"]
    # q01-q12 carry ids, q27-q32 LoCoMo evidence, q33-q36 LongMemEval answer sessions, q13-q26 answers only
    assert relevance["strategy_counts"] == {"qrels": 12, "pack": 10, "token-f1": 14}
    assert relevance["packs"] == {"locomo": 6, "longmemeval": 4}
    # q01 has ids and an answer (qrels first), q27 evidence and an answer (the pack before token F1)
    assert relevance["per_query"]["q01"] == "qrels" and relevance["per_query"]["q27"] == "pack"


def test_the_readme_shows_the_worked_examples_real_output():
    from tests.support.helpers import ROOT

    readme = (ROOT / "README.md").read_text()
    command = "$ evaltool data/rag/queries.jsonl data/rag/results.jsonl"
    block = readme[readme.index(command):].split("```")[0].splitlines()
    args = block[0].split()[4:]
    result = invoke(*[str(ROOT / "data/rag/queries.jsonl"), str(ROOT / "data/rag/results.jsonl"),
                                       *args])
    assert result.exit_code == 0, result.stderr
    shown = [line for line in block[1:] if line and line != "..."]
    assert len(shown) == 8 and set(shown) <= set(result.stdout.splitlines())


def test_nothing_to_judge_by_is_an_error(tmp_path, monkeypatch):
    queries = jsonl(tmp_path / "q.jsonl", [{"qid": "q1", "query": "no ids, no answer"}])
    results = jsonl(tmp_path / "r.jsonl", [item("q1", "d1", 1, "text")])
    result = invoke(queries, results)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"evaltool: no query of {queries} can be judged with --relevance auto "
                             "(no relevant_ids or qrels, no pack applies, no expected answer)\n")
    import evaltool.relevance.packs as packs

    monkeypatch.setattr(packs, "installed", lambda: {})
    result = invoke(queries, results, "--relevance", "pack")
    assert result.exit_code == 2
    assert result.stderr == "evaltool: --relevance pack: no pack is installed; name one with --pack module:attr\n"


def test_a_shipped_pack_names_malformed_benchmark_data(tmp_path):
    queries = jsonl(tmp_path / "q.jsonl", [{"qid": "q1", "metadata": {"evidence": {"D1": 3}}}])
    results = jsonl(tmp_path / "r.jsonl", [item("q1", "D1:3", 1)])
    result = invoke(queries, results)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == ("evaltool: pack 'locomo' raised ValueError: 'evidence' should be an id or a list of ids, "
                             f"not {{'D1': 3}} in applies() for query 'q1' ({queries}:1)\n")


def test_token_f1_total_relevant_rule_and_the_seeds_top_k_rule(tmp_path):
    """Five items, the answer matched at ranks 2 and 4 (hand computation).

    retrieved (default): 2 relevant in all: recall@3 = 1/2, nDCG@3 = (1/log2 3) / (1 + 1/log2 3).
    top-k (K = 3, the largest cutoff): only the top 3 are judged, 1 relevant: recall@3 = 1, nDCG@3 = 1/log2 3.
    """
    import math

    from evaltool.errors import EvaltoolError

    queries = tmp_path / "q.jsonl"
    queries.write_text('{"qid": "q1", "query": "capital of france", "answer": "paris is the capital of france"}\n')
    results = tmp_path / "r.jsonl"
    texts = ["berlin is in germany", "paris is the capital of france", "rome is in italy",
             "the capital of france is paris", "madrid is in spain"]
    results.write_text("".join(f'{{"qid": "q1", "docid": "{d}", "score": {5 - i}, "text": "{t}"}}\n'
                               for i, (d, t) in enumerate(zip("abcde", texts))))
    g = 1 / math.log2(3)
    found = evaluate(str(queries), str(results), ["recall.3", "ndcg_cut.3"])
    assert found.summary["recall_3"] == 0.5 and math.isclose(found.summary["ndcg_cut_3"], g / (1 + g))
    assert found.meta["relevance"]["f1_total"] == "retrieved"
    top = evaluate(str(queries), str(results), ["recall.3", "ndcg_cut.3"], f1_total="top-k")
    assert top.summary["recall_3"] == 1.0 and math.isclose(top.summary["ndcg_cut_3"], g)
    assert top.meta["relevance"]["f1_total"] == "top-k"
    with pytest.raises(EvaltoolError, match="give a measure with a cutoff"):
        evaluate(str(queries), str(results), ["map"], f1_total="top-k")
    with pytest.raises(EvaltoolError, match="f1_total 'all'"):
        evaluate(str(queries), str(results), ["map"], f1_total="all")


# ---------------------------------------------------------------- A: relevant ids on the result side


def test_relevant_ids_carried_by_the_results_are_the_ground_truth(tmp_path):
    """memorybench keeps a question's relevant ids on its result (metadata.relevantIds, or
    relevantChunkIds): strategy A, |REL| from the list, as code-chunk's computeMetrics."""
    queries = jsonl(tmp_path / "q.jsonl", [{"qid": "q1", "query": "parse json"}, {"qid": "q2", "answer": "x"}])
    carried = {"relevantIds": ["c1", "c3", "c9"]}  # c9 is never retrieved: it still counts in |REL|
    results = jsonl(tmp_path / "r.jsonl", [
        item("q1", "c1", 1, metadata=carried), item("q1", "c2", 2, metadata=carried),
        item("q1", "c3", 3, metadata=carried),
        item("q2", "a", 1, "x y", metadata={"relevantChunkIds": ["b"]}), item("q2", "b", 2, "nothing alike"),
    ])
    result = evaluate(queries, results, ["ndcg_cut.10", "recall.10", "P.3"], per_query=True)
    assert result.strategies == {"q1": "qrels", "q2": "qrels"}, "before the answer's token F1"
    # q1: hits at ranks 1 and 3 of 3 relevant: DCG = 1 + 1/log2(4); IDCG = 1 + 1/log2(3) + 1/log2(4)
    assert result.per_query["q1"]["ndcg_cut_10"] == pytest.approx(dcg([1, 0, 1]) / dcg([1, 1, 1]))
    assert result.per_query["q1"]["recall_10"] == pytest.approx(2 / 3)
    # q2: b (relevant) at rank 2 of 1 relevant: nDCG = (1/log2(3)) / 1
    assert result.per_query["q2"]["ndcg_cut_10"] == pytest.approx(1 / math.log2(3))
    assert result.per_query["q2"]["P_3"] == pytest.approx(1 / 3)


def test_result_side_ids_must_agree_within_a_query_and_with_the_queries_file(tmp_path):
    queries = jsonl(tmp_path / "q.jsonl", [{"qid": "q1"}])
    results = jsonl(tmp_path / "r.jsonl", [item("q1", "a", 1, metadata={"relevantIds": ["a"]}),
                                           item("q1", "b", 2, metadata={"relevantIds": ["b"]})])
    failed = invoke(queries, results, "-m", "P.2")
    assert failed.exit_code == 2
    assert failed.stderr == (f"evaltool: {results}:2: found '[\"b\"]'; expected the relevant ids of query 'q1' that "
                             "line 1 gives in its 'metadata.relevantIds' (1 ids): each result of a query carries the "
                             "same list\n")
    results = jsonl(tmp_path / "r2.jsonl", [item("q1", "a", 1, metadata={"relevantIds": "a"})])
    failed = invoke(queries, results, "-m", "P.2")
    assert failed.exit_code == 2 and failed.stderr == (
        f"evaltool: {results}:1: found '\"a\"'; expected 'metadata.relevantIds' as a list of document ids (strings "
        "or integers)\n")
    queries = jsonl(tmp_path / "q2.jsonl", [{"qid": "q1", "relevant_ids": ["a", "b"]}])
    results = jsonl(tmp_path / "r3.jsonl", [item("q1", "a", 1, metadata={"relevantIds": ["a"]})])
    failed = invoke(queries, results, "-m", "P.2")
    assert failed.exit_code == 2 and failed.stderr == (
        f"evaltool: {results}:1: the relevant ids of query 'q1' on its results (1 ids) differ from those in "
        f"{queries}:1 (2 ids); give them once, or the same in both\n")
    results = jsonl(tmp_path / "r4.jsonl", [item("q1", "a", 1, metadata={"relevantIds": ["b", "a"]})])
    assert json_out(queries, results, "-m", "P.1")["summary"]["P_1"] == 1.0, "the same ids, in any order"
