"""`evaltool judge` against a fake OpenAI-compatible service on 127.0.0.1 (tests/support/fake_llm.py).

Nothing here reaches the network. The fake model's grade of every pair is known in advance
(``grade_of``), its faults are injected per pair, and it counts the requests and the grades
it sent whole, so "no pair judged twice" is a count, not a belief.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from evaltool.judgments import read_judgments
from evaltool.judgments.prompting import DEFAULT_PROMPT, prompt_sha256, read_grade, render
from evaltool.judgments.scales import Scale
from tests.support.fake_llm import TOKENS, FakeChatServer, grade_of
from tests.support.helpers import ROOT, assert_fails, invoke

QUERIES, DOCS = 20, 10  # 200 pairs
KEY = "sk-test-not-a-real-key-5b1e"


def pairs():
    return [(f"q{q}", f"d{q}_{k}") for q in range(QUERIES) for k in range(DOCS)]


def faults(*, hang=True) -> dict:
    """Per pair index: 429, 500, a broken body, a grade off the scale, prose, a slow drip, a hang."""
    kinds = {1: "429", 2: "500", 3: "malformed", 4: "outside", 5: "drip", 6: "prose"}
    out = {pair: kinds[i % 20] for i, pair in enumerate(pairs()) if i % 20 in kinds}
    if hang:
        out.update({pair: "hang" for i, pair in enumerate(pairs()) if i % 50 == 7})
    return out


@pytest.fixture
def files(tmp_path):
    pool = tmp_path / "pool.txt"
    pool.write_text("".join(f"{q} {d}\n" for q, d in pairs()))
    topics = tmp_path / "topics.tsv"
    topics.write_text("qid\ttext\tdescription\n" + "".join(
        f"q{q}\t[q:q{q}] how to fix thing {q}\twhat a user asking about thing {q} wants\n" for q in range(QUERIES)))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "title": f"Title of {d}", "text": f"[d:{d}] body of {d}."}) + "\n"
                              for _, d in pairs()))
    return {"pool": str(pool), "topics": str(topics), "corpus": str(corpus), "db": str(tmp_path / "h.sqlite"),
            "dir": tmp_path}


def judge(server, files, *args, set_name="llm", env=None):
    return invoke("judge", files["pool"], "--llm", server.url, "--model", "fake-model", "--set", set_name,
                  "--db", files["db"], "--topics", files["topics"], "--corpus", files["corpus"],
                  "--checkpoint", files["dir"] / f"{set_name}.ckpt", "-o", "json", *args,
                  env={"EVALTOOL_LLM_API_KEY": KEY, **(env or {})})


def test_200_pairs_with_faults_each_end_judged_unparsed_or_failed(files):
    injected = faults()
    with FakeChatServer(injected) as server:
        result = judge(server, files, "--concurrency", "4", "--timeout", "5", "--retries", "3")
    assert result.exit_code == 1, result.stderr
    summary = json.loads(result.stdout)
    kinds = list(injected.values())
    unparsed = kinds.count("outside") + kinds.count("prose")
    assert summary["pairs"] == 200
    assert (summary["judged"], summary["unparsed"], summary["failed"], summary["pending"]) == \
           (200 - unparsed - kinds.count("hang"), unparsed, kinds.count("hang"), 0)
    reasons = {(e["query_id"], e["doc_id"]): e for e in summary["not_judged"]}
    for pair, kind in injected.items():
        if kind == "outside":
            assert reasons[pair]["reason"] == "grade 7 is not on the scale (0, 1, 2, 3)"
            assert reasons[pair]["answer"] == '{"grade": 7}'
        elif kind == "prose":
            assert reasons[pair]["reason"] == 'no {"grade": ...} object in the answer'
        elif kind == "hang":
            assert reasons[pair]["status"] == "failed" and reasons[pair]["reason"] == "timeout"
        else:
            assert pair not in reasons
    # retried faults cost one more request each; nothing was graded twice
    for pair in pairs():
        expected = 2 if injected.get(pair) in ("429", "500", "malformed") else 1
        assert server.calls[pair] == expected, (pair, injected.get(pair))
        assert server.answered[pair] == (0 if injected.get(pair) == "hang" else 1)
    assert summary["calls"] == sum(server.calls.values())
    assert summary["tokens"] == TOKENS * sum(server.answered.values())
    # the grades are the model's, as judgments of rater llm:fake-model with the prompt's hash
    stored = read_judgments(files["db"], "llm")
    assert {(j.query_id, j.doc_id): j.grade for j in stored} == \
           {p: grade_of(*p) for p in pairs() if injected.get(p) not in ("outside", "prose", "hang")}
    assert {j.rater for j in stored} == {"llm:fake-model"}
    assert {j.note for j in stored} == {f"prompt sha256:{prompt_sha256(DEFAULT_PROMPT)[:16]}"}
    assert summary["prompt_sha256"] == prompt_sha256(DEFAULT_PROMPT)
    # the key went to the endpoint and nowhere else
    assert server.authorizations == {f"Bearer {KEY}"} and server.models == {"fake-model"}
    assert KEY not in result.stdout + result.stderr
    assert not os.path.exists(files["dir"] / "llm.ckpt")  # every pair settled
    assert KEY.encode() not in open(files["db"], "rb").read()


def test_interrupted_then_resumed_judges_no_pair_twice(files):
    """Ctrl-C while the server holds the requests in flight; --resume sends only the pairs not settled."""
    injected = faults(hang=False)
    with FakeChatServer(injected, hold_after=60) as server:
        command = [sys.executable, "-m", "evaltool", "judge", files["pool"], "--llm", server.url, "--model",
                   "fake-model", "--set", "llm", "--db", files["db"], "--topics", files["topics"], "--corpus",
                   files["corpus"], "--checkpoint", str(files["dir"] / "llm.ckpt"), "--concurrency", "4",
                   "--timeout", "20", "-o", "json"]
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env={**os.environ, "EVALTOOL_LLM_API_KEY": KEY})
        try:
            assert server.holding.wait(60), process.stderr.read() if process.poll() is not None else ""
            deadline = time.monotonic() + 30
            while server.held < 4 and time.monotonic() < deadline:  # every request in flight is held
                time.sleep(0.02)
            assert server.held == 4
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 130, stderr
        assert b"--resume" in stderr and b"Traceback" not in stderr
        settled = (files["dir"] / "llm.ckpt").read_text().splitlines()[1:]
        assert len(settled) == sum(server.answered.values()) >= 60
        server.hold_after = None
        result = judge(server, files, "--resume", "--concurrency", "4")
    assert result.exit_code == 1, result.stderr  # outside / prose pairs stay unparsed
    summary = json.loads(result.stdout)
    assert summary["pending"] == 0 and summary["judged"] + summary["unparsed"] == 200
    assert all(server.answered[pair] == 1 for pair in pairs()), \
        [p for p in pairs() if server.answered[p] != 1]
    assert len(read_judgments(files["db"], "llm")) == summary["judged"]


def test_the_cache_makes_a_second_run_send_nothing(files):
    injected = faults(hang=False)
    cache = files["dir"] / "cache"
    with FakeChatServer(injected) as server:
        first = judge(server, files, "--cache", cache)
        calls = sum(server.calls.values())
        second = judge(server, files, "--cache", cache, set_name="again")
        assert sum(server.calls.values()) == calls
    one, two = json.loads(first.stdout), json.loads(second.stdout)
    assert (two["calls"], two["tokens"], two["cached"]) == (0, 0, 200)
    assert (one["judged"], one["unparsed"]) == (two["judged"], two["unparsed"])
    grades = {(j.query_id, j.doc_id): j.grade for j in read_judgments(files["db"], "llm")}
    assert grades == {(j.query_id, j.doc_id): j.grade for j in read_judgments(files["db"], "again")}


def test_another_prompt_is_another_cache_key(files):
    cache = files["dir"] / "cache"
    prompt = files["dir"] / "prompt.txt"
    prompt.write_text('Query: {query}\nDocument: {text}\nAnswer {"grade": G} with G in 0..3.\n')
    with FakeChatServer() as server:
        judge(server, files, "--cache", cache)
        result = judge(server, files, "--cache", cache, "--prompt", prompt, set_name="other")
    summary = json.loads(result.stdout)
    assert (summary["calls"], summary["cached"], summary["judged"]) == (200, 0, 200)
    assert summary["prompt_sha256"] == prompt_sha256(prompt.read_text())
    assert {j.note for j in read_judgments(files["db"], "other")} == \
           {f"prompt sha256:{prompt_sha256(prompt.read_text())[:16]}"}


def test_a_spent_budget_stops_sending_and_resume_finishes(files):
    with FakeChatServer() as server:
        result = judge(server, files, "--max-calls", "50", "--concurrency", "4")
        assert result.exit_code == 1
        summary = json.loads(result.stdout)
        assert (summary["calls"], summary["judged"], summary["pending"]) == (50, 50, 150)
        assert sum(server.calls.values()) == 50 and "--resume" in result.stderr
        assert len(read_judgments(files["db"], "llm")) == 50  # what was judged is saved already
        tokens = judge(server, files, "--resume", "--max-tokens", str(TOKENS * 10), "--concurrency", "1")
        assert json.loads(tokens.stdout)["calls"] == 10
        final = judge(server, files, "--resume")
    assert final.exit_code == 0, final.stderr
    assert json.loads(final.stdout)["judged"] == 200
    assert all(server.answered[pair] == 1 for pair in pairs())
    assert not os.path.exists(files["dir"] / "llm.ckpt")


def test_only_unjudged_leaves_out_what_people_graded(files):
    people = files["dir"] / "people.qrels"
    people.write_text("".join(f"{q} 0 {d} 1\n" for q, d in pairs()[:30]))
    assert invoke("judgments", "import", people, "--set", "mixed", "--rater", "ana", "--db",
                  files["db"]).exit_code == 0
    with FakeChatServer() as server:
        result = judge(server, files, "--only-unjudged", set_name="mixed")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["pairs"] == 170 and sum(server.calls.values()) == 170
    assert "30 pairs" in result.stderr
    raters = {}
    for j in read_judgments(files["db"], "mixed"):
        raters.setdefault(j.rater, 0)
        raters[j.rater] += 1
    assert raters == {"ana": 30, "llm:fake-model": 170}


def test_a_second_run_without_resume_is_refused_while_a_checkpoint_waits(files):
    with FakeChatServer() as server:
        judge(server, files, "--max-calls", "5")
        assert_fails(judge(server, files), "holds an unfinished run (5 pairs done", "--resume")
        assert_fails(judge(server, files, "--resume", "--model", "other"), "--resume", "model")


@pytest.mark.parametrize("content, problem", [
    ("a b c\n", "pool.txt:1: ", ),
    ("q0 d0_0\n", "no text"),
])
def test_bad_input_is_one_message_and_exit_2(files, content, problem):
    with open(files["pool"], "w") as handle:
        handle.write(content)
    if problem == "no text":
        open(files["corpus"], "w").write('{"id": "other", "text": "x"}\n')
    with FakeChatServer() as server:
        result = judge(server, files)
        assert_fails(result, problem)
        assert sum(server.calls.values()) == 0


def test_an_endpoint_that_is_not_a_url_is_refused(files):
    result = invoke("judge", files["pool"], "--llm", "localhost:11434", "--model", "m", "--set", "s",
                    "--db", files["db"], "--topics", files["topics"], "--corpus", files["corpus"])
    assert_fails(result, "--llm", "http(s)://")


@pytest.mark.parametrize("answer, expected", [
    ('{"grade": 3}', (3, None)),
    ('<think>maybe {"grade": 1}?</think>\n{"grade": 2}', (2, None)),
    ('```json\n{"grade": 0, "reason": "off topic"}\n```', (0, None)),
    ('{"grade": 2} ... so {"grade": 2}', (2, None)),
    ('{"grade": 1} or rather {"grade": 2}', (None, "the answer gives several grades: 1, 2")),
    ('{"grade": 2.5}', (None, "grade 2.5 is not a whole number of the scale (0, 1, 2, 3)")),
    ('{"grade": "2"}', (2, None)),  # the graded scale's labels are "0" to "3"
    ('{"grade": "high"}', (None, 'grade "high" is not a whole number of the scale (0, 1, 2, 3)')),
    ('{"grade": -1}', (None, "grade -1 is not on the scale (0, 1, 2, 3)")),
    ('{"grade": true}', (None, "grade true is not a whole number of the scale (0, 1, 2, 3)")),
    ("", (None, 'no {"grade": ...} object in the answer')),
])
def test_an_answer_parses_to_one_grade_of_the_scale_or_not_at_all(answer, expected):
    assert read_grade(answer, Scale.graded()) == expected


def test_a_declared_scale_reads_its_labels_and_the_prompt_lists_them():
    scale = Scale.parse("labels:bad=0,fair=1,good=2")
    assert read_grade('{"grade": "good"}', scale) == (2, None)
    text = render(DEFAULT_PROMPT, query="q", title=None, text="t", scale=scale)
    assert "2 = good\n1 = fair\n0 = bad" in text and "{query}" not in text
