"""The history's command line: --record on eval, compare and bench; history and suite commands;
every bad input one message and exit 2."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from evaltool.cli import main
from evaltool.history import get_execution, list_executions, list_suites
from tests.support.helpers import invoke

ROOT = Path(__file__).resolve().parents[2]
QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq2 0 d 1\nq3 0 e 1\n"
RUN_A = "q1 Q0 a 1 3.0 A\nq1 Q0 b 2 2.0 A\nq2 Q0 x 1 5.0 A\nq2 Q0 c 2 4.0 A\nq3 Q0 e 1 1.0 A\n"
RUN_B = "q1 Q0 b 1 3.0 B\nq1 Q0 a 2 2.0 B\nq2 Q0 c 1 5.0 B\nq2 Q0 d 2 4.0 B\nq3 Q0 y 1 1.0 B\n"
BENCH_QUERIES = ROOT / "data" / "bench_queries.json"
BM25 = "evaltool.bench.examples:bm25_search"


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in (("qrels.txt", QRELS), ("a.txt", RUN_A), ("b.txt", RUN_B)):
        paths[name] = tmp_path / name
        paths[name].write_text(text)
    return paths


def one_error(result, pattern: str) -> None:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(pattern, lines[0]), result.stderr


def test_eval_record_keeps_output_unchanged(db, files):
    plain = invoke(files["qrels.txt"], files["a.txt"], "-m", "recip_rank", "-m", "P.2", "--threshold", "recip_rank=0.9")
    recorded = invoke(files["qrels.txt"], files["a.txt"], "-m", "recip_rank", "-m", "P.2", "--record", "--db", db,
                      "--note", "baseline", "--tag", "model=a", "--tag", "split=dev", "--at", "2025-03-01T12:00:00Z",
                      "--threshold", "recip_rank=0.9")
    assert recorded.exit_code == 0 and recorded.stdout == plain.stdout
    assert re.fullmatch(r"evaltool: recorded execution 1 in .*\n", recorded.stderr)
    execution = get_execution(db, 1)
    assert (execution.name, execution.note, execution.tags, execution.recorded_at) == (
        "a.txt", "baseline", {"model": "a", "split": "dev"}, "2025-03-01T12:00:00Z")
    # q1: a at 1 (RR 1, P@2 1/2); q2: c at 2 (RR 1/2, P@2 1/2); q3: e at 1 (RR 1, P@2 1/2)
    assert execution.summary == {"recip_rank": pytest.approx(2.5 / 3), "P_2": 0.5}
    assert execution.thresholds == {"recip_rank": 0.9, "ndcg_cut_10": 0.6, "P_5": 0.5}
    named = invoke(files["qrels.txt"], files["a.txt"], "-m", "map", "--record", "--db", db, "--name", "nightly")
    assert named.exit_code == 0 and list_executions(db)[-1].name == "nightly"


def test_compare_records_one_execution_per_run(db, files):
    done = invoke("compare", files["qrels.txt"], files["a.txt"], files["b.txt"], "-m", "recip_rank", "-m", "P.2",
                  "--record", "--db", db, "--tag", "exp=1")
    assert done.exit_code == 0, done.stderr
    assert [(e.name, e.kind, e.tags) for e in list_executions(db)] == [
        ("a.txt", "compare", {"exp": "1"}), ("b.txt", "compare", {"exp": "1"})]
    diff = invoke("history", "diff", "1", "2", "--db", db, "-o", "json")
    assert diff.exit_code == 0 and diff.stderr == ""  # same qrels file: no warning
    out = json.loads(diff.stdout)
    compared = json.loads(invoke("compare", files["qrels.txt"], files["a.txt"], files["b.txt"], "-m", "recip_rank",
                                 "-m", "P.2", "-o", "json", "--correction", "holm").stdout)
    for measure in ("recip_rank", "P_2"):
        cell = compared["runs"]["b.txt"][measure]
        assert out["measures"][measure]["p_value"] == pytest.approx(cell["p_value"])
        assert out["measures"][measure]["ci"] == pytest.approx(cell["ci"])
        assert out["measures"][measure]["wins"] == cell["wins"]


def test_diff_warns_when_the_qrels_differ(db, files, tmp_path):
    other = tmp_path / "other-qrels.txt"
    other.write_text(QRELS + "q3 0 y 1\n")
    invoke(files["qrels.txt"], files["a.txt"], "-m", "recip_rank", "--record", "--db", db)
    invoke(other, files["b.txt"], "-m", "recip_rank", "--record", "--db", db)
    done = invoke("history", "diff", "1", "2", "--db", db)
    assert done.exit_code == 0
    assert re.fullmatch(r"evaltool: warning: executions 1 and 2 were scored against different qrels .*\n", done.stderr)
    assert "queries that moved most" in done.stdout


@pytest.mark.parametrize("args, pattern", [
    (["--record", "--at", "last tuesday"], r"--at 'last tuesday': expected an ISO-8601 date"),
    (["--record", "--tag", "novalue"], r"--tag 'novalue': expected KEY=VALUE"),
    (["--note", "x"], r"--note applies to --record only"),
    (["--name", "x"], r"--name applies to --record only"),
    (["--record", "--db", "mysql://h/db"], r"unsupported database 'mysql'"),
])
def test_bad_record_options_stop_before_anything_runs(files, tmp_path, args, pattern, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = invoke(files["qrels.txt"], files["a.txt"], *args)
    one_error(done, pattern)
    assert done.stdout == "" and not (tmp_path / "evaltool-history.sqlite").exists()


def test_a_failed_evaluation_creates_no_history(files, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    broken = tmp_path / "broken.txt"
    broken.write_text("q1 Q0 a 1 two A\n")
    done = invoke(files["qrels.txt"], broken, "--record")
    one_error(done, r"broken.txt:1")
    assert not (tmp_path / "evaltool-history.sqlite").exists()
    notdb = tmp_path / "notes.sqlite"
    notdb.write_text("not a database\n" * 50)
    one_error(invoke(files["qrels.txt"], files["a.txt"], "--record", "--db", notdb), r"not an evaltool history")


def test_bad_input_to_history_commands(db, files, tmp_path):
    invoke(files["qrels.txt"], files["a.txt"], "-m", "recip_rank", "--record", "--db", db)
    notdb = tmp_path / "notes.sqlite"
    notdb.write_text("not a database\n" * 50)
    one_error(invoke("history", "list", "--db", notdb), r"notes.sqlite: not an evaltool history")
    one_error(invoke("history", "show", "7", "--db", db), r"no execution with id 7")
    one_error(invoke("history", "show", "seven", "--db", db), r"execution id 'seven': expected a number")
    one_error(invoke("history", "list", "--db", db, "--from", "2025-13-45"), r"--from '2025-13-45': expected")
    one_error(invoke("history", "report", "--db", db, "--from", "2025-02-01", "--to", "2025-01-01"),
              r"--from 2025-02-01 is after --to 2025-01-01")
    one_error(invoke("history", "report", "--db", db, "-m", "nope"), r"-m nope: no execution here has it")
    one_error(invoke("history", "diff", "1", "9", "--db", db), r"no execution with id 9")
    one_error(invoke("history", "list", "--db", tmp_path / "absent.sqlite"), r"no history there")
    assert not (tmp_path / "absent.sqlite").exists()


def test_list_show_export_prune(db, files, tmp_path):
    for day in ("01", "02", "03"):
        invoke(files["qrels.txt"], files["a.txt"], "-m", "recip_rank", "--record", "--db", db, "--at",
               f"2025-01-{day}")
    listed = json.loads(invoke("history", "list", "--db", db, "--from", "2025-01-02", "-o", "json").stdout)
    assert [e["id"] for e in listed] == [2, 3] and "per_query" not in listed[0]
    assert [e["id"] for e in json.loads(invoke("history", "list", "--db", db, "--limit", "1", "-o",
                                               "json").stdout)] == [3]
    shown = json.loads(invoke("history", "show", "2", "-q", "--db", db, "-o", "json").stdout)
    assert shown["per_query"]["q2"] == {"recip_rank": 0.5}
    table = invoke("history", "show", "2", "-q", "--db", db).stdout
    assert re.search(r"^q2\s+0\.5000$", table, re.M) and re.search(r"^name\s+a\.txt$", table, re.M)
    target = tmp_path / "all.jsonl"
    assert invoke("history", "export", "--db", db, "--format", "jsonl", "--output", target).exit_code == 0
    assert [json.loads(line)["id"] for line in target.read_text().splitlines()] == [1, 2, 3]
    pruned = invoke("history", "prune", "--db", db, "--keep", "1")
    assert pruned.exit_code == 0 and pruned.stderr == "evaltool: deleted 2 executions (1, 2)\n"
    assert [e.id for e in list_executions(db)] == [3]


def test_bench_record_and_suites(db, tmp_path):
    out = tmp_path / "results"
    done = invoke("bench", BENCH_QUERIES, "--backend", BM25, "--out", out, "--record", "--db", db, "--tag", "ci=1")
    assert done.exit_code == 0, done.stderr
    report = json.loads(next(out.glob("baseline_*.json")).read_text())
    execution = get_execution(db, 1)
    assert (execution.name, execution.kind, execution.tags) == ("bm25_search", "bench", {"ci": "1"})
    assert execution.summary == report["aggregate_metrics"]
    assert execution.query_count == report["metadata"]["evaluated_queries"]
    assert execution.fingerprints["queries"] is not None and execution.fingerprints["run"] is not None
    first = report["detailed_results"][0]
    assert execution.per_query[str(first["query_id"])]["mrr"] == first["metrics"]["mrr"]

    added = invoke("suite", "add", "helpdesk", BENCH_QUERIES, "--backend", BM25, "--limit", "5", "--db", db)
    assert added.exit_code == 0, added.stderr
    invoke("suite", "add", "other", BENCH_QUERIES, "--backend", BM25, "-m", "P.3", "--db", db)
    one_error(invoke("suite", "add", "helpdesk", BENCH_QUERIES, "--backend", BM25, "--db", db), "exists already")
    assert invoke("suite", "disable", "other", "--db", db).exit_code == 0
    suites = {s.name: s for s in list_suites(db)}
    assert suites["helpdesk"].measures == ["recip_rank", "ndcg_cut.10", "P.5"] and not suites["other"].active
    assert suites["helpdesk"].settings["limit"] == 5
    listed = invoke("suite", "list", "--db", db).stdout
    assert re.search(r"^helpdesk\s+active\s", listed, re.M) and re.search(r"^other\s+disabled\s", listed, re.M)

    ran = invoke("suite", "run", "--db", db, "--out", out)
    assert ran.exit_code == 0, ran.stderr
    executions = list_executions(db)
    assert [(e.name, e.kind) for e in executions] == [("bm25_search", "bench"), ("helpdesk", "suite")]
    assert list(executions[1].summary) == ["recip_rank", "ndcg_cut_10", "P_5"]
    labelled = json.loads(invoke("history", "report", "--db", db, "--name", "helpdesk", "--labels", "-o",
                                 "json").stdout)
    assert labelled["rows"][0]["label"] in ("good", "fair", "poor")
    one_error(invoke("suite", "run", "other", "--db", db), r"suite other is disabled")
    one_error(invoke("suite", "run", "nobody", "--db", db), r"no suite named 'nobody'")
    assert invoke("suite", "enable", "other", "--db", db).exit_code == 0
    assert invoke("suite", "run", "other", "--db", db, "--out", out).exit_code == 0
    assert list_executions(db)[-1].summary.keys() == {"P_3"}
    one_error(invoke("suite", "add", "broken", tmp_path / "missing.json", "--backend", BM25, "--db", db),
              r"missing.json: no such file")


def test_suite_run_resumes_or_restarts_an_unfinished_run_and_says_which(db, tmp_path):
    """A run stopped midway leaves its checkpoint; 'suite run' then refuses to write over it, and
    --resume finishes it (only the queries it lacks are sent) or --restart discards it."""
    import os

    from evaltool.bench.checkpoint import Checkpoint

    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"id": i, "query": f"query {i}", "relevant_ids": ["rel1"]} for i in range(4)]))
    calls = tmp_path / "calls.log"
    env = {"BENCH_CALL_LOG": str(calls), "BENCH_DELAY": "0"}
    backend = "tests.support.helpers:logged_search"
    assert invoke("suite", "add", "logged", queries, "--backend", backend, "--db", db).exit_code == 0
    assert invoke("suite", "add", "same-file", queries, "--backend", BM25, "--db", db).exit_code == 0
    out = tmp_path / "out"
    checkpoint = out / "suite-logged.checkpoint.jsonl"
    # what an interrupted 'suite run logged' leaves: queries 0 and 1 finished
    first = invoke("suite", "run", "logged", "--db", db, "--out", out, env=env)
    assert first.exit_code == 0, first.stderr
    assert not checkpoint.exists()
    report = json.loads(next(out.glob("baseline_*.json")).read_text())
    ran = Path(report["metadata"]["queries_file"])  # the suite's version, as the runner read it
    lines = [json.dumps({"evaltool_checkpoint": 1, "queries_file": str(ran),
                         "queries_sha256": hashlib.sha256(ran.read_bytes()).hexdigest(), "backend": backend,
                         "limit": 10, "started": "2026-01-02T03:04:05Z"})]
    lines += [json.dumps({"qid": str(e["query_id"]), "ids": e["returned_ids"], "scores": None, "error": None,
                          "execution_time_ms": 1.0, "attempts": 1}) for e in report["detailed_results"][:2]]
    checkpoint.write_text("\n".join(lines) + "\n")
    calls.unlink()

    refused = invoke("suite", "run", "--db", db, "--out", out, env=env)
    assert refused.exit_code == 2
    assert (f"evaltool: suite logged: {checkpoint} holds an unfinished run (2 queries done, started "
            "2026-01-02T03:04:05Z): add --resume to finish it, or --restart to discard it and start over"
            ) in refused.stderr
    assert not calls.exists() and Checkpoint.read(str(checkpoint)).done.keys() == {"0", "1"}
    # the other suite of the same queries file has its own checkpoint: it ran
    assert [e.name for e in list_executions(db)] == ["logged", "same-file"]

    resumed = invoke("suite", "run", "--db", db, "--out", out, "--resume", env=env)
    assert resumed.exit_code == 0, resumed.stderr
    assert f"Resuming: 2 of 4 queries are done ({checkpoint}); 2 to go" in resumed.stdout
    assert "suite same-file: no unfinished run to resume; running it from the start" in resumed.stderr
    assert sorted(calls.read_text().splitlines()) == ["query 2", "query 3"]
    assert not checkpoint.exists()
    execution = list_executions(db)[-2]
    assert (execution.name, execution.query_count) == ("logged", 4)

    checkpoint.write_text("\n".join(lines) + "\n")
    calls.unlink()
    restarted = invoke("suite", "run", "logged", "--db", db, "--out", out, "--restart", env=env)
    assert restarted.exit_code == 0, restarted.stderr
    assert f"Restarting: the unfinished run in {checkpoint} (2 queries done) is discarded" in restarted.stdout
    assert sorted(calls.read_text().splitlines()) == [f"query {i}" for i in range(4)]
    assert not os.path.exists(checkpoint)
    one_error(invoke("suite", "run", "--db", db, "--resume", "--restart"), r"--resume and --restart: choose one")


def test_every_history_and_suite_command_has_help_with_an_example():
    example = re.compile(r"^\s*evaltool( \S+)+", re.M)
    for group in ("history", "suite"):
        command = main.get_command(None, group)
        for name, sub in command.commands.items():
            assert sub.help and example.search(sub.help), f"{group} {name}"
            shown = invoke(group, name, "--help")
            assert shown.exit_code == 0 and shown.stdout.startswith(f"Usage: evaltool {group} {name} ")


def test_an_old_history_is_upgraded_only_when_asked(files, tmp_path):
    """Readers, recorders and serve refuse a history of an older schema, naming the command that
    brings it forward; 'history upgrade' does, once."""
    import shutil

    db = tmp_path / "old.sqlite"
    shutil.copy(Path(__file__).parent / "fixtures" / "history-v1.sqlite", db)
    hint = rf"{db}: a history of schema version 1; .*'evaltool history upgrade --db {db}'"
    one_error(invoke("history", "list", "--db", db), hint)
    one_error(invoke(files["qrels.txt"], files["a.txt"], "--record", "--db", db), hint)
    one_error(invoke("serve", "--db", db, "--port", "0"), hint)
    done = invoke("history", "upgrade", "--db", db)
    assert done.exit_code == 0 and re.fullmatch(rf"evaltool: {db}: upgraded from schema version 1 to \d+\n",
                                                done.stderr), done.stderr
    done = invoke("history", "upgrade", "--db", db)
    assert done.exit_code == 0 and "already at schema version" in done.stderr
    assert invoke(files["qrels.txt"], files["a.txt"], "--record", "--db", db).exit_code == 0
    assert [e.id for e in list_executions(str(db))] == [1, 2, 3]
    one_error(invoke("history", "upgrade", "--db", tmp_path / "absent.sqlite"), r"no history there")
