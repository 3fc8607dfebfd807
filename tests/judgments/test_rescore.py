"""history rescore: a recorded suite execution scored under a judgment set equals evaltool run on its
stored lists and the set's exported qrels."""

from __future__ import annotations

import json

from evaltool.history import get_execution, list_executions
from tests.support.helpers import ROOT, assert_fails, invoke, rows, write


def _suite_execution(tmp_path, db) -> int:
    added = invoke("suite", "add", "helpdesk", ROOT / "data" / "bench_queries.json", "--backend",
                   "evaltool.bench.examples:bm25_search", "-m", "recip_rank", "-m", "ndcg_cut.10", "-m", "P.5",
                   "--db", db)
    assert added.exit_code == 0, added.stderr
    ran = invoke("suite", "run", "helpdesk", "--db", db, "--out", tmp_path / "out")
    assert ran.exit_code == 0, ran.stderr
    return list_executions(db, newest_first=True)[0].id


def test_rescore_equals_evaltool_on_the_stored_lists_and_the_new_qrels(tmp_path):
    db = str(tmp_path / "h.sqlite")
    original = get_execution(db, _suite_execution(tmp_path, db), results=True)
    # a rater judges the top 3 of every query: the first returned relevant (graded 2), the others not
    lines = []
    for result in original.results:
        for doc in result["documents"][:3]:
            lines.append(f"{result['query_id']} 0 {doc['doc_id']} {2 if doc['rank'] == 1 else 0}")
    invoke("judgments", "import", write(tmp_path / "new.qrels", "\n".join(lines) + "\n"), "--set", "new",
           "--rater", "ana", "--db", db)
    made = invoke("history", "rescore", "1", "--judgments", "new", "--db", db)
    assert made.exit_code == 0, made.stderr
    new_id = int(made.stdout)
    rescored = get_execution(db, new_id, results=True)
    assert rescored.tags["rescored_from"] == "1" and rescored.tags["judgments"] == "new@1"
    assert rescored.name == "helpdesk" and rescored.kind == "suite" and rescored.suite_version == 1
    assert "re-scored from execution 1 under judgments new@1" in rescored.note
    # the oracle: the stored lists as a run file, the exported qrels, evaltool's command line
    run = "".join(f"{r['query_id']} Q0 {d['doc_id']} {d['rank']} {len(r['documents']) - i} stored\n"
                  for r in original.results if not r.get("error") for i, d in enumerate(r["documents"]))
    qrels = tmp_path / "qrels.txt"
    invoke("judgments", "export", "new", "--db", db, "--output", qrels)
    oracle = invoke("-c", "-m", "recip_rank", "-m", "ndcg_cut.10", "-m", "P.5", qrels, write(tmp_path / "run", run))
    expected = {m: float(v) for m, q, v in rows(oracle.stdout) if q == "all"}
    assert set(expected) == set(rescored.summary) == {"recip_rank", "ndcg_cut_10", "P_5"}
    for measure, value in expected.items():
        assert round(rescored.summary[measure], 4) == value, measure
    # by hand: every query has its first result graded relevant, so RR is 1 everywhere
    assert rescored.summary["recip_rank"] == 1.0
    assert rescored.results[0]["judgments"] == {d["doc_id"]: (2 if d["rank"] == 1 else 0)
                                                for d in original.results[0]["documents"][:3]}
    per_query = json.loads(invoke("history", "show", str(new_id), "-q", "--db", db, "-o", "json").stdout)
    assert per_query["id"] == new_id


def test_rescore_refuses_what_it_cannot_do(tmp_path):
    db = str(tmp_path / "h.sqlite")
    qrels = write(tmp_path / "q", "q1 0 d1 1\n")
    invoke(qrels, write(tmp_path / "r", "q1 Q0 d1 1 1 r\n"), "--record", "--db", db)
    invoke("judgments", "import", qrels, "--set", "s", "--rater", "ana", "--db", db)
    assert_fails(invoke("history", "rescore", "1", "--judgments", "s", "--db", db), "has no stored result lists")
    assert_fails(invoke("history", "rescore", "7", "--judgments", "s", "--db", db), "7")
    _suite_execution(tmp_path, db)
    assert_fails(invoke("history", "rescore", "2", "--judgments", "nope", "--db", db), "no judgment set named 'nope'")
    assert_fails(invoke("history", "rescore", "2", "--judgments", "s", "--db", db), "judges none of the queries")


def test_a_judgment_set_becomes_a_suites_ground_truth(tmp_path):
    from evaltool.history import get_suite, suite_versions

    db = str(tmp_path / "h.sqlite")
    invoke("suite", "add", "helpdesk", ROOT / "data" / "bench_queries.json", "--backend",
           "evaltool.bench.examples:bm25_search", "--db", db)
    before = {q.query_id: q.judgments for q in get_suite(db, "helpdesk").queries}
    invoke("judgments", "import", write(tmp_path / "a", "1 0 cook-rice 2\n1 0 cook-sourdough-starter 0\n9 0 x 3\n"),
           "--set", "s", "--rater", "ana", "--db", db)
    done = invoke("judgments", "apply", "s", "--suite", "helpdesk", "--db", db)
    assert done.exit_code == 0, done.stderr
    after = get_suite(db, "helpdesk")
    assert after.version == 2
    changed = {q.query_id: (q.expected_field, q.judgments) for q in after.queries if q.judgments != before[q.query_id]}
    assert changed == {"1": ("qrels", {"cook-rice": 2, "cook-sourdough-starter": 0}), "9": ("qrels", {"x": 3})}
    assert suite_versions(db, "helpdesk")[-1]["change"] == "ground truth from judgment set s (version 1)"
    again = invoke("judgments", "apply", "s", "--suite", "helpdesk", "--db", db)
    assert "version 2" in again.stderr  # nothing changed, no new version
    invoke("judgments", "import", write(tmp_path / "b", "zz 0 x 1\n"), "--set", "other", "--rater", "ana", "--db", db)
    assert_fails(invoke("judgments", "apply", "other", "--suite", "helpdesk", "--db", db), "judges none of suite")
