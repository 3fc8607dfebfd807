"""The Dask engine gives byte-identical output to the local engine, also when a worker dies.

A LocalCluster of two worker processes (this machine's cores) is started once for the
module; the worker-loss test starts its own cluster so that killing a worker cannot
disturb the others.
"""

from __future__ import annotations

import gzip
import os

import pytest

distributed = pytest.importorskip("distributed", reason="the Dask engine needs the dask extra: pip install 'evaltool[dask]'")

from evaltool import evaluate  # noqa: E402
from evaltool.errors import EvaltoolError  # noqa: E402
from tests.support.helpers import invoke, require_shared  # noqa: E402

# (qrels, run, options): the published pairs of ../shared/realdata with their edge cases
PAIRS = [
    ("qrels.dl19-passage.txt", "BM25.trec_results_dl19.txt", ["-c", "-q"]),
    ("qrels.dl19-passage.txt", "REP_LLAMA.trec_results_dl19.txt", ["-c", "-m", "ndcg_cut.10", "-q"]),   # ties
    ("qrels.dl19-passage.txt", "REP_LLAMA.trec_results_dl19.txt",
     ["-m", "nDCG(ideal='ranking',ties='average')@10", "-m", "DCG(ties='average')", "-q"]),   # averaged
    ("qrels.dl21-passage.txt", "BM25.trec_results_dl21.txt", ["-c", "-M", "100", "-l", "2", "-m", "map"]),
    ("qrels.covid-round1.txt", "pyserini-covid-filter.txt", ["-m", "ndcg_cut.10", "-q"]),   # 4 of 30 queries
    ("qrels.covid-round1.txt", "pyserini-covid-filter.txt", ["-c", "-m", "ndcg_cut.10"]),
    ("qrels.web.201-250.txt", "BM25.trec_results_dl19.txt", ["-m", "map"]),  # no common query: an error
    ("qrels.cacm.txt", "cacm-bm25.txt", ["-m", "all_trec", "-q"]),            # run queries without judgments
    ("cwl.qrels", "cwl.run", ["-q", "-m", "official"]),                        # odd spacing, no final newline
]


@pytest.fixture(scope="module")
def realdata():
    return require_shared("realdata")


@pytest.mark.parametrize("qrels,run,options", PAIRS, ids=[f"{r}:{' '.join(o)}" for _, r, o in PAIRS])
@pytest.mark.parametrize("fmt", ["trec", "json"])
def test_realdata_output_is_byte_identical(realdata, qrels, run, options, fmt):
    paths = [realdata / "qrels" / qrels, realdata / "runs" / run]
    local = invoke(*options, "-o", fmt, *paths)
    dask = invoke(*options, "-o", fmt, "--engine", "dask", "--partitions", "3", *paths)
    assert dask.exit_code == local.exit_code, dask.output
    assert dask.stdout == local.stdout
    assert dask.stderr == local.stderr


def test_many_blocks_and_partitions_give_the_local_values(realdata):
    from evaltool.engines.dask import dask_parts  # noqa: F401  (the engine module imports without a cluster)

    qrels = realdata / "qrels" / "qrels.dl19-passage.txt"
    run = realdata / "runs" / "REP_LLAMA.trec_results_dl19.txt"  # 43,000 lines: about 16 blocks
    local = evaluate(qrels, run, ["official"], per_query=True, complete=True)
    for partitions in (1, 7):
        dask = _evaluate_in_blocks(qrels, run, 200_000, partitions=partitions)
        assert dask.to_json() == local.to_json()


def _evaluate_in_blocks(qrels, run, block_bytes, **options):
    import evaltool.engines.dask as engine

    saved = engine.BLOCK_BYTES
    engine.BLOCK_BYTES = block_bytes
    try:
        return evaluate(qrels, run, ["official"], per_query=True, complete=True, engine="dask", **options)
    finally:
        engine.BLOCK_BYTES = saved


def test_gzip_run(realdata, tmp_path):
    run = tmp_path / "run.gz"
    run.write_bytes(gzip.compress((realdata / "runs" / "BM25.trec_results_dl20.txt").read_bytes()))
    qrels = realdata / "qrels" / "qrels.dl20-passage.txt"
    local = evaluate(qrels, run, ["ndcg_cut.10", "map"], per_query=True)
    assert evaluate(qrels, run, ["ndcg_cut.10", "map"], per_query=True, engine="dask").to_json() == local.to_json()


def _error(call) -> str:
    with pytest.raises(EvaltoolError) as caught:
        call()
    return str(caught.value)


def _broken_run(realdata, tmp_path, replace_line: int, text: bytes):
    lines = (realdata / "runs" / "REP_LLAMA.trec_results_dl19.txt").read_bytes().split(b"\n")
    lines[replace_line - 1] = text
    path = tmp_path / "broken.run"
    path.write_bytes(b"\n".join(lines))
    return path


@pytest.mark.parametrize("line,text", [
    (30_001, b"855410 Q0 7067032 1 not-a-score rank"),               # a malformed line deep in the file
    (30_002, b"855410 Q0 7067032 1 1.5"),                            # 5 fields
])
def test_parse_errors_name_the_line_of_the_whole_file(realdata, tmp_path, line, text):
    run = _broken_run(realdata, tmp_path, line, text)
    qrels = realdata / "qrels" / "qrels.dl19-passage.txt"
    local = _error(lambda: evaluate(qrels, run, ["map"]))
    assert f":{line}:" in local or f":{line};" in local
    assert _error(lambda: _evaluate_in_blocks(qrels, run, 100_000, partitions=5)) == local


def test_a_duplicate_names_both_lines(realdata, tmp_path):
    source = (realdata / "runs" / "REP_LLAMA.trec_results_dl19.txt").read_bytes().split(b"\n")
    run = tmp_path / "dup.run"
    run.write_bytes(b"\n".join(source + [source[5]]))  # line 6 again at the end, in another block
    qrels = realdata / "qrels" / "qrels.dl19-passage.txt"
    local = _error(lambda: evaluate(qrels, run, ["map"]))
    assert "already given at line 6" in local
    assert _error(lambda: _evaluate_in_blocks(qrels, run, 100_000, partitions=3)) == local
    kept = _evaluate_in_blocks(qrels, run, 100_000, on_duplicate="first")
    assert kept.to_json() == evaluate(qrels, run, ["official"], per_query=True, complete=True,
                                      on_duplicate="first").to_json()


def test_a_run_without_results_and_a_missing_file(realdata, tmp_path):
    qrels = realdata / "qrels" / "qrels.dl19-passage.txt"
    empty = tmp_path / "empty.run"
    empty.write_text("# nothing\n\n")
    assert _error(lambda: evaluate(qrels, empty, ["map"], engine="dask")) == _error(
        lambda: evaluate(qrels, empty, ["map"]))
    result = invoke("--engine", "dask", qrels, tmp_path / "absent.run")
    assert result.exit_code == 2
    assert "absent.run" in result.stderr and "Traceback" not in result.output


def test_what_the_engine_refuses(realdata):
    qrels = realdata / "qrels" / "qrels.dl19-passage.txt"
    run = realdata / "runs" / "BM25.trec_results_dl19.txt"
    assert "reads a run file" in _error(lambda: evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, engine="dask"))
    assert "--stream" in _error(lambda: evaluate(qrels, run, engine="dask", stream=True))
    assert "unknown engine 'spark'" in _error(lambda: evaluate(qrels, run, engine="spark"))
    result = invoke("--engine", "dask", "--partitions", "0", qrels, run)
    assert result.exit_code == 2 and "--partitions" in result.stderr


def test_an_unreachable_scheduler_is_one_message(realdata, monkeypatch):
    import evaltool.engines.dask as engine

    monkeypatch.setattr(engine, "CONNECT_TIMEOUT", "2s")
    result = invoke("--engine", "dask", "--scheduler", "tcp://127.0.0.1:9", realdata / "qrels" / "qrels.cacm.txt",
                     realdata / "runs" / "cacm-bm25.txt")
    assert result.exit_code == 2
    assert "cannot reach the Dask scheduler tcp://127.0.0.1:9" in result.stderr
    assert "Traceback" not in result.output


class _KillOnFirstScore(distributed.WorkerPlugin):
    """A worker plugin that ends its worker's process when the first partition starts scoring."""

    def __init__(self, marker: str):
        self.marker = marker

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and "score_partition" in str(key) and not os.path.exists(self.marker):
            with open(self.marker, "w") as handle:
                handle.write(str(key))
            os._exit(1)


def test_a_worker_killed_mid_run_is_retried_and_the_result_is_identical(realdata, tmp_path):
    qrels = realdata / "qrels" / "qrels.dl19-passage.txt"
    run = realdata / "runs" / "SPLADE_P_P_ENSEMBLE_DISTIL.trec_results_dl19.txt"
    marker = tmp_path / "killed"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster, distributed.Client(cluster) as client:
        client.register_plugin(_KillOnFirstScore(str(marker)), name="kill-once")
        dask = evaluate(qrels, run, ["official"], per_query=True, complete=True, engine="dask",
                        scheduler=cluster.scheduler_address, partitions=4)
        from evaltool.engines.dask import close_client

        close_client(cluster.scheduler_address)
    assert marker.exists(), "no worker was killed: the test did not exercise a retry"
    assert dask.to_json() == evaluate(qrels, run, ["official"], per_query=True, complete=True).to_json()


def test_readme_documents_scaling_out():
    text = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md"), encoding="utf-8").read()
    section = text.split("## Scaling out", 1)[1].split("\n## ", 1)[0]
    for option in ("--engine dask", "--scheduler", "--partitions", "LocalCluster"):
        assert option in section, option


# ---------------------------------------------------------------- click logs


def _click_log(path, impressions=6000, seed=7):
    """A generated JSONL log of impression objects: repeated queries, empty result lists,
    clicks on documents not shown, repeated clicks, timestamps on half of the impressions."""
    import json
    import random

    rnd = random.Random(seed)
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(impressions):
            shown = [f"d{rnd.randrange(40)}" for _ in range(rnd.randrange(0, 9))]
            clicks = [d for d in shown if rnd.random() < 0.25] + ([f"gone{i}"] if rnd.random() < 0.05 else [])
            impression = {"query": f"consulta {rnd.randrange(200)}", "results": shown, "clicks": clicks + clicks[:1],
                          "device": rnd.choice(["mobile", "desktop"])}
            if i % 2:
                impression["timestamp"] = 1_700_000_000 + i
            handle.write(json.dumps(impression, ensure_ascii=False) + "\n")
    return path


@pytest.mark.parametrize("args", [["-q", "-o", "json", "--by", "device"], ["-m", "click_mrr", "-m", "ctr@3", "--average",
                                                                         "macro", "--first-click", "position"]])
def test_a_click_log_gives_byte_identical_output(tmp_path, monkeypatch, args):
    import evaltool.engines.dask as engine

    log = _click_log(tmp_path / "clicks.jsonl")
    monkeypatch.setattr(engine, "BLOCK_BYTES", 64_000)  # about ten blocks
    local = invoke("clicks", log, *args)
    dask = invoke("clicks", log, *args, "--engine", "dask")
    assert local.exit_code == 0, local.output
    assert dask.exit_code == 0, dask.output
    assert dask.stdout == local.stdout


def test_a_bad_click_line_is_named_by_its_line_in_the_whole_file(tmp_path, monkeypatch):
    import evaltool.engines.dask as engine

    log = _click_log(tmp_path / "clicks.jsonl")
    lines = log.read_text(encoding="utf-8").split("\n")
    lines[4999] = '{"query": "q", "results": ["a"], "clicks": "not a list"}'
    log.write_text("\n".join(lines), encoding="utf-8")
    monkeypatch.setattr(engine, "BLOCK_BYTES", 64_000)
    local = invoke("clicks", log)
    dask = invoke("clicks", log, "--engine", "dask")
    assert local.exit_code == dask.exit_code == 2
    assert f"{log}:5000" in local.stderr
    assert dask.stderr == local.stderr


def test_what_the_click_engine_refuses(tmp_path):
    events = tmp_path / "events.csv"
    events.write_text("action,query_id,doc_id,position,impression_id\nimpression,q,d,1,i1\n")
    result = invoke("clicks", events, "--engine", "dask")
    assert result.exit_code == 2 and "impression objects in JSONL" in result.stderr
    log = _click_log(tmp_path / "clicks.jsonl", impressions=10)
    result = invoke("clicks", log, "--engine", "dask", "--judgments", tmp_path / "out.qrels")
    assert result.exit_code == 2 and "--judgments" in result.stderr and not (tmp_path / "out.qrels").exists()
