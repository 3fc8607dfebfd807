"""``--group-by FIELD --topics FILE`` and ``--labels`` on eval and compare.

Hand-made data (one relevant document per query, 5 documents retrieved per query):
run A ranks it 1, 2, 4, 1 for q1..q4 -> recip_rank 1, 0.5, 0.25, 1, P_5 0.2 everywhere;
run B ranks it 1, 1, 2, 2 -> 1, 1, 0.5, 0.5.
Topics: q1, q4 easy; q2, q3 hard. easy mean RR for A = 1, hard = 0.375; for B 0.75 and 0.75.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from evaltool.io.topics import read_topics
from evaltool.results import field_order, field_values, group_queries, label, parse_thresholds
from tests.support.helpers import RANKS, assert_fails, invoke, write, write_run

TOPICS_TSV = "# topics\nqid\tdifficulty\tcategory\nq1\teasy\tnews\nq2\thard\tnews\nq3\thard\tweb\nq4\teasy\tweb\n"
TOPICS = {"q1": ("easy", "news"), "q2": ("hard", "news"), "q3": ("hard", "web"), "q4": ("easy", "web")}


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text("".join(f"q{i} 0 dq{i} 1\n" for i in range(1, 5)))
    return SimpleNamespace(qrels=tmp_path / "qrels.txt", folder=tmp_path,
                           a=write_run(tmp_path / "A.run", "A", RANKS["A"]),
                           b=write_run(tmp_path / "B.run", "B", RANKS["B"]),
                           topics=write(tmp_path / "topics.tsv", TOPICS_TSV),
                           make=lambda name, content: write(tmp_path / name, content))


@pytest.mark.parametrize("layout", ["tsv", "json", "json-list", "jsonl"])
def test_topics_layouts_read_alike(files, layout):
    content = {
        "tsv": TOPICS_TSV,
        "json": json.dumps({q: {"difficulty": d, "category": c} for q, (d, c) in TOPICS.items()}),
        "json-list": json.dumps([{"query_id": q, "difficulty": d, "category": c} for q, (d, c) in TOPICS.items()]),
        "jsonl": "\n".join(json.dumps({"qid": q, "difficulty": d, "category": c}) for q, (d, c) in TOPICS.items()),
    }[layout]
    topics = read_topics(files.make(f"topics.{layout}", content))
    assert topics.fields == ["difficulty", "category"]
    assert {q: (row["difficulty"], row["category"]) for q, row in topics.rows.items()} == TOPICS
    groups = group_queries(["q1", "q2", "q3", "q4", "q9"], field_values(topics, "difficulty"),
                           field_order(topics, "difficulty"))
    assert groups == {"easy": [0, 3], "hard": [1, 2], "(none)": [4]}


def test_eval_group_summaries_by_hand(files):
    result = invoke(files.qrels, files.a, "-m", "recip_rank", "-m", "num_ret", "--group-by", "difficulty",
                    "--group-by", "category", "--topics", files.topics, "-o", "json")
    assert result.exit_code == 0, result.stderr
    groups = json.loads(result.stdout)["groups"]
    assert groups["difficulty"] == {"easy": {"count": 2, "num_ret": 10, "recip_rank": 1.0},
                                    "hard": {"count": 2, "num_ret": 10, "recip_rank": 0.375}}
    # news: q1, q2 -> (1 + 0.5) / 2; web: q3, q4 -> (0.25 + 1) / 2
    assert groups["category"]["news"]["recip_rank"] == 0.75 and groups["category"]["web"]["recip_rank"] == 0.625


def test_eval_group_rows_in_the_table_and_trec_formats(files):
    table = invoke(files.qrels, files.a, "-m", "recip_rank", "--group-by", "difficulty", "--topics", files.topics,
                   "-o", "table").stdout.splitlines()
    assert [line.split() for line in table] == [["query", "queries", "recip_rank"], ["all", "4", "0.6875"],
                                                ["difficulty=easy", "2", "1.0000"], ["difficulty=hard", "2", "0.3750"]]
    trec = invoke(files.qrels, files.a, "-m", "recip_rank", "--group-by", "difficulty", "--topics", files.topics)
    assert trec.stdout.splitlines()[1:3] == ["queries               \tdifficulty=easy\t2",
                                             "recip_rank            \tdifficulty=easy\t1.0000"]


def test_queries_missing_from_topics_form_their_own_group(files):
    topics = files.make("few.tsv", "qid\tdifficulty\nq1\teasy\nq2\t\n")  # q2 without a difficulty
    result = invoke(files.qrels, files.a, "-m", "recip_rank", "--group-by", "difficulty", "--topics", topics,
                    "-o", "json")
    groups = json.loads(result.stdout)["groups"]["difficulty"]
    assert groups == {"easy": {"count": 1, "recip_rank": 1.0}, "(none)": {"count": 3, "recip_rank": 1.75 / 3}}
    assert "3 of 4 queries have no difficulty" in result.stderr


def test_compare_group_means(files):
    result = invoke("compare", files.qrels, files.a, files.b, "-m", "recip_rank", "--group-by", "difficulty",
                    "--topics", files.topics, "-o", "json")
    out = json.loads(result.stdout)
    assert out["groups"]["difficulty"] == {
        "easy": {"count": 2, "runs": {"A.run": {"recip_rank": 1.0}, "B.run": {"recip_rank": 0.75}}},
        "hard": {"count": 2, "runs": {"A.run": {"recip_rank": 0.375}, "B.run": {"recip_rank": 0.75}}},
    }
    text = invoke("compare", files.qrels, files.a, files.b, "-m", "recip_rank", "--group-by", "difficulty",
                  "--topics", files.topics).stdout
    assert "means by difficulty" in text and ["hard", "2", "B.run", "0.7500"] in [l.split() for l in text.splitlines()]


# ---------------------------------------------------------------- labels


def test_label_rule_on_the_seed_rows():
    # the comparative report's rows: all three good -> good; none -> poor; its summary, 2 of 3 -> middle band
    assert label({"recip_rank": 1.0, "ndcg_cut_10": 0.85, "P_5": 0.80}) == "good"
    assert label({"recip_rank": 0.25, "ndcg_cut_10": 0.41, "P_5": 0.20}) == "poor"
    assert label({"recip_rank": 0.69, "ndcg_cut_10": 0.66, "P_5": 0.53}) == "fair"
    assert label({"recip_rank": 0.7}) == "good"  # the threshold itself holds
    assert label({"map": 0.9}) is None


def test_thresholds_are_configurable():
    assert parse_thresholds(["P_5=0.3"])["P_5"] == 0.3
    assert "recip_rank" not in parse_thresholds(["recip_rank=off"])
    assert label({"P_5": 0.4}, parse_thresholds(["P_5=0.3"])) == "good"


def test_eval_labels_per_query_and_overall(files):
    # A: recip_rank 1, .5, .25, 1 (>= 0.7 for q1, q4); P_5 0.2 everywhere (< 0.5)
    out = json.loads(invoke(files.qrels, files.a, "-q", "-m", "recip_rank", "-m", "P.5", "--labels",
                            "-o", "json").stdout)
    assert out["labels"] == {"all": "poor", "q1": "fair", "q2": "poor", "q3": "poor", "q4": "fair"}
    out = json.loads(invoke(files.qrels, files.a, "-m", "recip_rank", "-m", "P.5", "--threshold", "P_5=0.2",
                            "-o", "json").stdout)
    assert out["labels"] == {"all": "fair"}  # mean RR 0.6875 < 0.7, P_5 0.2 >= 0.2


def test_compare_labels_per_run(files):
    result = invoke("compare", files.qrels, files.a, files.b, "-m", "recip_rank", "--labels")
    rows = [line.split() for line in result.stdout.splitlines()[:3]]
    assert rows[0] == ["run", "recip_rank", "label"]
    assert rows[1] == ["A.run", "0.6875", "poor"] and rows[2][-1] == "good"  # B: 0.75 >= 0.7


# ---------------------------------------------------------------- bad input


def test_unknown_group_field(files):
    assert_fails(invoke(files.qrels, files.a, "--group-by", "level", "--topics", files.topics),
                 f"{files.topics}: no field 'level' to group by; the file has 'difficulty', 'category'")
    assert_fails(invoke("compare", files.qrels, files.a, files.b, "--group-by", "level", "--topics", files.topics),
                 "no field 'level'")


def test_group_by_and_topics_go_together(files):
    assert_fails(invoke(files.qrels, files.a, "--group-by", "difficulty"), "--group-by needs --topics")
    assert_fails(invoke(files.qrels, files.a, "--topics", files.topics), "--topics needs --group-by")


@pytest.mark.parametrize("name,content,where,expected", [
    ("t.tsv", "qid\tdifficulty\nq1\teasy\textra\n", ":2:", "2 tab-separated fields as in the header"),
    ("t.tsv", "qid\tdifficulty\nq1\teasy\nq1\thard\n", ":3:", "each query id once"),
    ("t.tsv", "# only a comment\n", "", "a header line"),
    ("t.jsonl", '{"qid": "q1", "d": 1}\n{"qid": "q2", "d": \n', ":2:", "a JSON object"),
    ("t.jsonl", '{"qid": "q1", "d": 1}\n{"d": 2}\n', ":2:", "a query id field"),
    ("t.json", '{"q1": 3}', "", "an object of fields for each query id"),
])
def test_bad_topics_file(files, name, content, where, expected):
    path = files.make(name, content)
    assert_fails(invoke(files.qrels, files.a, "--group-by", "d", "--topics", path), f"{path}{where}", expected)


def test_missing_topics_file(files):
    missing = files.folder / "none.tsv"
    assert_fails(invoke(files.qrels, files.a, "--group-by", "d", "--topics", missing), f"cannot read {missing}")


def test_bad_thresholds(files):
    assert_fails(invoke(files.qrels, files.a, "-m", "P.5", "--threshold", "P_5=high"), "'high' is not a number")
    assert_fails(invoke(files.qrels, files.a, "-m", "P.5", "--threshold", "map=0.3"),
                 "map is not among the measures evaluated")
    assert_fails(invoke(files.qrels, files.a, "-m", "map", "--labels"), "has a threshold")
